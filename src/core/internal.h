/* internal.h: what the library's parts share and users do not see: the handle's insides,
 * device-agnostic buffers (so tests, the property engine and the benchmark drive CPU and GPU
 * kernels alike) and the GPU description recorded with every measurement. */
#ifndef SML_INTERNAL_H
#define SML_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the GPU launchers size their grids by, for one device. */
typedef struct sml_gpu_facts {
    int dev;        /* the CUDA device these describe */
    int sms;        /* multiprocessors */
    int clusters;   /* cluster launch (sm_90+) */
    int coop;       /* cooperative launch */
    int smem_optin; /* shared memory a block may opt in to, bytes */
    float dram;     /* peak DRAM bytes per SM per SM clock (0: the runtime did not say) */
} sml_gpu_facts;

struct sml_handle {
    sml_gpu_facts gpu;             /* the facts of the last device launched on */
    int gpu_known;                 /* gpu holds them */
    void *cudnn;                   /* the cuDNN kernel's private state, made on its first call */
    void (*cudnn_release)(void *); /* set by the cuDNN kernel with the handle */
    void *coop;                    /* the coop kernel's partial slots, made on its first call */
    void (*coop_release)(void *);  /* set by the coop kernel with them */
    void *scratch;                 /* device workspace (the naive kernel's intermediates) */
    size_t scratch_bytes;
    struct sml_plan_cache *plans; /* `auto`'s plan table per device, found on first use
                                       (core/plan_cache.h) */
};

/* The current device's facts: asked of the runtime on a handle's first launch on a device,
 * then kept in the handle, so a launch costs the host one cudaGetDevice instead of an
 * attribute query per fact (a few hundred ns each, tools/launch_cost.c). h may be
 * NULL: asked every time. SML_ERR_NO_DEVICE without CUDA. */
sml_status sml_gpu_facts_get(sml_handle *h, sml_gpu_facts *out);

/* 1 for the shape classes a claim may name (sml_claim.shapes): "all", "short", "mid",
 * "long"; the core checks plugins' claims with it, the benchmark decides by it. */
int sml_shape_class_valid(const char *cls);

/* sml_validate's checks of the op, the dtype and the shape, in its order and with its
 * statuses, for calls that take no problem (sml_auto_choice). */
sml_status sml_validate_kind(sml_op op, sml_dtype dt, int64_t rows, int64_t cols);

/* The column counts where `auto`'s decision changes for some op and dtype (the last column of
 * a range), for the property engine's edge columns: writes up to cap into out, returns how
 * many there are. The thresholds themselves live in kernels/auto_dispatch.h. */
size_t sml_auto_col_thresholds(int64_t *out, size_t cap);

/* What `auto` runs for dense rows of the shape, in words: "warp K=2 (plans PATH, line 12)"
 * where the device's plan table has an entry, "block (rules)" where the rules decide. The
 * table's plan is what is tried first; a plan the kernel refuses (SML_ERR_UNSUPPORTED) at
 * launch falls back to the rules' kernel. h may be NULL (the table is then read for this call). */
sml_status sml_auto_explain(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                            char *buf, size_t n);

/* A device workspace of at least `bytes`, kept in the handle and grown on demand. */
sml_status sml_handle_scratch(sml_handle *h, size_t bytes, void **out);

/* A buffer on the CPU (malloc) or the GPU (cudaMalloc). */
typedef struct sml_buffer {
    sml_device device;
    void *ptr;
    size_t bytes;
} sml_buffer;

sml_status sml_buffer_alloc(sml_buffer *b, sml_device d, size_t bytes);
void sml_buffer_free(sml_buffer *b);
sml_status sml_buffer_upload(sml_buffer *b, size_t offset, const void *host, size_t n);
sml_status sml_buffer_download(const sml_buffer *b, size_t offset, void *host, size_t n);
/* The same on a stream (GPU; NULL: the legacy default stream), returning once the copy is
 * done. Several host threads that each copy and launch on their own non-blocking stream
 * do not wait for one another's work, as they would on the default stream. */
sml_status sml_buffer_upload_on(sml_buffer *b, size_t offset, const void *host, size_t n,
                                void *stream);
sml_status sml_buffer_download_on(const sml_buffer *b, size_t offset, void *host, size_t n,
                                  void *stream);
/* The calling thread's current CUDA device (-1 without one), and making `dev` current on
 * this thread: a new host thread starts on device 0, not on the one ctest assigned. */
int sml_gpu_current(void);
void sml_gpu_use(int dev);
/* How the calling process's threads wait for the GPU, before its CUDA context is made:
 * "spin", "yield" or "block" (cudaDeviceScheduleSpin/Yield/BlockingSync), "poll" (spin: the
 * engine's own waits then poll, src/prop/devguard.cu), or NULL or "" for CUDA's own choice
 * (spin while the process has fewer contexts than cores). A worker takes SML_GPU_WAIT, poll
 * when unset. SML_ERR_INVALID_ARG names nothing else. */
sml_status sml_gpu_wait_mode(const char *mode);
/* The wait the engine and its workers use: SML_GPU_WAIT, or "poll" where it is unset or empty
 * (the one place that default is decided). */
const char *sml_gpu_wait_env(void);
/* The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applied); 0 without CUDA. */
int sml_gpu_count(void);
/* The GPUs this process sees, for a message: "0 NVIDIA H100 80GB HBM3, 1 ..." or "none". */
void sml_gpu_list(char *buf, size_t n);
/* A non-blocking stream for one host thread's work (GPU); *out = NULL on the CPU. */
sml_status sml_stream_create(sml_device d, void **out);
void sml_stream_destroy(sml_device d, void *stream);
/* Fill every byte (poison before a launch; 0xFF makes NaN in every dtype). */
sml_status sml_buffer_fill(sml_buffer *b, unsigned char byte);
/* The same on one stream, returning once it is done (no device-wide synchronisation). */
sml_status sml_buffer_fill_on(sml_buffer *b, unsigned char byte, void *stream);
/* Fill n bytes from offset; fill `height` rows of `width` bytes, `pitch` bytes apart; copy n
 * bytes between two buffers of one device (ranges may overlap). Each returns once it is done,
 * and SML_ERR_INVALID_ARG, touching nothing, when a range falls outside its buffer. */
sml_status sml_buffer_fill_range(sml_buffer *b, size_t offset, unsigned char byte, size_t n);
sml_status sml_buffer_fill_2d(sml_buffer *b, size_t pitch, unsigned char byte, size_t width,
                              size_t height);
sml_status sml_buffer_copy(sml_buffer *dst, size_t dst_offset, const sml_buffer *src,
                           size_t src_offset, size_t n);
/* Wait for the stream (GPU) and report any asynchronous error; no-op on the CPU. */
sml_status sml_device_sync(sml_device d, void *stream);

typedef struct sml_gpu_info {
    int present;
    char name[128];
    int sm_count;
    int cc_major, cc_minor;
    int sm_clock_mhz, mem_clock_mhz; /* as the runtime reports them (maximum clocks) */
    int driver_version, runtime_version;
    size_t l2_bytes, global_mem_bytes;
    int max_smem_per_block_optin;
} sml_gpu_info;
/* Describe device 0; present = 0 when none (or no CUDA in this build). */
sml_status sml_gpu_query(sml_gpu_info *out);

/* Write a message into err[n] (when err is not NULL) and return s: the one way file readers
 * and writers report what went wrong. */
sml_status sml_errorf(sml_status s, char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The reason string of the last CUDA error seen by the library's host code, for messages. */
const char *sml_last_cuda_error(void);
/* Clear this thread's last CUDA error if it is not sticky. sml_run calls it before a GPU
 * launch: a CUDA call that returned an error (and was reported then) also leaves it as the
 * thread's last error, and the next launch's check would otherwise blame itself for it
 * (the threaded property run showed one such error failing every later run of a thread). */
void sml_gpu_forget_error(void);

/* Plugins (registry.c). Register a kernel table checked by sml_plugin_check_table, under the
 * registry's lock: library and dl name the shared library it came from (NULL for a table
 * registered directly); a library already registered (same path or handle) registers nothing
 * and sets *already. */
sml_status sml_registry_add(const sml_kernel *table, size_t count, unsigned abi_version,
                            const char *origin, const char *library, void *dl, int *already,
                            char *msg, size_t msglen);
/* How sml_load_plugin loads a library in this process: NULL (the default) dlopens it here; a
 * process that judges kernels without loading their code sets a loader that reads the table in
 * a child and registers it with sml_registry_add (cli/describe.c). */
typedef sml_status (*sml_plugin_loader_fn)(const char *path, char *msg, size_t msglen);
void sml_registry_set_plugin_loader(sml_plugin_loader_fn fn);
/* The path of the shared library a registered kernel was loaded from (sml_load_plugin), which
 * `--load` takes back; NULL for built-in kernels and tables registered directly. */
const char *sml_kernel_library(const sml_kernel *k);
/* 1 when a library path or origin names a Python module (SML_PYTHON_SOURCE_PREFIX). */
int sml_source_is_python(const char *source);

/* A kernel call about to happen, told to the one watcher a process may set (a command's
 * worker process announces it to its supervisor: src/worker/command.c). sml_run tells it;
 * the bench tells it before it times a kernel. Set once before any thread starts. */
typedef void (*sml_call_watch_fn)(const sml_kernel *k, const sml_problem *p);
void sml_call_watch_set(sml_call_watch_fn fn);
void sml_call_watch(const sml_kernel *k, const sml_problem *p);

#ifdef __cplusplus
}
#endif
#endif
