/* exec.h: run one kernel on one case the way the whole suite does, on the CPU or the GPU
 * through the sml_buffer API. The tensors live in one allocation, each in its own region
 * behind a guard of SML_PROP_GUARD bytes, `offset` elements in and with row stride `ld`:
 *
 *   [guard | x | guard][guard | dy | guard][guard | out | guard]   (no out region in place)
 *
 * Everything of the output's region that is not output (guards, the offset, stride padding)
 * holds canary bytes and the output itself is poisoned with 0xFF (NaN in every dtype);
 * everything of an input's region that is not input holds 0xFF, so a kernel that reads
 * padding as data reads NaN. One upload before and one download after each launch (they
 * dominate a GPU case's cost), all on the exec's own stream; the main run of a case also checks that the canaries held and
 * the inputs did not change. The buffer is kept and grown across runs.
 *
 * On the GPU each region also sits between two guard zones of SML_PROP_DEVICE_GUARD (1 MiB)
 * in the device allocation, which the main run poisons before the launch and compares on the
 * device after it (devguard.h); a changed zone counts as changed canaries, named by buffer,
 * side and bytes. After each launch the exec waits for its stream and for the legacy default
 * stream, so a kernel that launched elsewhere has finished before its output is read (no
 * race), and sml_prop_exec_stream_check tells whether it did. On the CPU the regions sit in
 * the guarded arena instead (arena.h). */
#ifndef SML_PROP_EXEC_H
#define SML_PROP_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "prop/arena.h"
#include "prop/case.h"
#include "prop/devguard.h"
#include "softmax_lab.h"

#define SML_PROP_GUARD   256  /* bytes before and after each tensor; keeps 256-byte alignment */
#define SML_PROP_CANARY  0xA5 /* output-side canary byte (0xA5A5 is no plausible output) */
#define SML_PROP_POISON  0xFF /* output poison and input padding: NaN in every dtype */
#define SML_PROP_PIN_MAX ((size_t)256 << 20) /* the largest host buffer page-locked (GPU) */

/* A case's layout as a launch needs it: its values travel in the image. */
typedef struct sml_prop_shape {
    int32_t op, dtype, inplace, unused;
    int64_t rows, cols, ld, offset;
} sml_prop_shape;

/* RUN: the kernel on the image; HELD: the stream check's held run; PING (remote only, no
 * image): is the worker still there after the job's last launch. */
enum { SML_PROP_LAUNCH_RUN = 1, SML_PROP_LAUNCH_HELD = 2, SML_PROP_LAUNCH_PING = 3 };

/* One launch of the kernel on an image of the layout (exec.c builds it): what a worker
 * process is asked (src/worker), or what this process does itself. */
typedef struct sml_prop_launch_req {
    sml_prop_shape shape;
    int32_t kind;   /* RUN; HELD: the stream check's held run */
    int32_t verify; /* RUN: the whole layout comes back, and the GPU's guard zones are checked */
    int32_t phase;  /* what the engine is doing (SML_PROP_PHASE_*), the property, and the case's
                       index: the words of a death's cause ("during case 12") */
    int32_t prop;
    int64_t index;
    uint64_t image_bytes; /* the layout's bytes */
} sml_prop_launch_req;

/* What a launch gave back. A worker writes the first part; the supervisor's side of a worker
 * (src/worker) the second, from what it saw of the worker itself. */
typedef struct sml_prop_launch_res {
    int32_t status;   /* the kernel's status, or its stream's wait's */
    int32_t ran;      /* HELD: 1 the output changed while the stream was held, 0 it did not,
                         -1 no verdict */
    uint64_t from, n; /* the bytes of the layout that came back: [from, from + n) */
    int32_t nzones;   /* RUN on the GPU with verify: the guard zones' changes */
    int32_t unused;
    sml_prop_zone_hit hit[SML_PROP_GUARD_ZONES_MAX];
    char error[160]; /* the CUDA error's words where status is SML_ERR_CUDA */
    double seconds;  /* the launch's wall time */
    int32_t engine;  /* the launching side's own failure (no memory for the layout, a
                        transfer): SML_OK, or no verdict on the kernel */
    int32_t unused2;
    /* The supervisor's part: */
    int32_t ended;   /* SML_PROP_ENDED_*: the launch gave no answer to judge; cause[] says why */
    int32_t alone;   /* it was run again alone in a fresh worker, and that run is this answer */
    double deadline; /* the seconds it had, when it passed them (slow) */
    char cause[320];
} sml_prop_launch_res;

/* How a launch ended without an answer to judge. */
enum {
    SML_PROP_ENDED_NONE = 0,
    SML_PROP_ENDED_DIED,   /* the worker ended (a signal, an exit) during it: a FAIL */
    SML_PROP_ENDED_HUNG,   /* past its deadline, and again alone past ten times it: a FAIL */
    SML_PROP_ENDED_FORGED, /* the worker's answer did not match the request: a FAIL */
    SML_PROP_ENDED_CAPPED, /* the run's cap (--seconds) stopped it: no verdict */
    SML_PROP_ENDED_NOT_RUN /* no worker could run it (it cannot start, or has no such kernel):
                              no verdict on the kernel */
};

/* Where the kernel runs when not in this process: launch(ctx, req, image, res, back) runs req
 * on `image` (req->image_bytes) and writes the bytes that come back into back at [res->from,
 * res->from + res->n). The return value is the launcher's own failure (no memory); the
 * kernel's, and a worker's end, are in res. */
typedef struct sml_prop_launcher {
    /* Where the image and what comes back are best laid out (memory the worker shares, so
     * nothing is copied on the way): *img and *back of at least `bytes` each, kept until the
     * next call; NULL function: the exec's own memory. */
    sml_status (*window)(void *ctx, size_t bytes, unsigned char **img, unsigned char **back);
    sml_status (*launch)(void *ctx, const sml_prop_launch_req *req, const unsigned char *image,
                         sml_prop_launch_res *res, unsigned char *back);
    /* The same launch in two halves, so that the caller computes while the worker runs: send
     * the request (the image must stay as it is until recv), then take its answer. */
    sml_status (*send)(void *ctx, const sml_prop_launch_req *req, const unsigned char *image);
    sml_status (*recv)(void *ctx, const sml_prop_launch_req *req, const unsigned char *image,
                       sml_prop_launch_res *res, unsigned char *back);
    void *ctx;
} sml_prop_launcher;

typedef struct sml_prop_exec {
    sml_device device;
    sml_prop_launcher remote; /* launch NULL: the kernel runs in this process */
    void *stream;             /* its own non-blocking stream (GPU): engine runs on several
                                 host threads must not wait for one another's copies */
    sml_buffer buf;
    unsigned char *img, *back; /* host image uploaded, and what came back */
    size_t cap_img, cap_back;
    int img_pinned, back_pinned; /* page-locked (GPU, up to SML_PROP_PIN_MAX), else malloc's */
    int external;      /* img and back are someone else's: the launcher's window, a worker's view */
    size_t host_bytes; /* the machine's physical memory, asked once (0: unknown) */
    sml_prop_arena arena; /* CPU kernels: the guarded slots they run in (arena.h) */
    sml_prop_gpu gpu;     /* GPU: guard zones and the stream check (devguard.h) */
    int held_off;         /* the stream check stopped: a held launch did not return in time */
    /* What the engine is doing, for a remote launch's request (the words of a death). */
    int phase, prop;
    int64_t index;
    /* Counted over the exec's life (a remote launch's ends that decide nothing): */
    int64_t slow;        /* launches past their deadline that finished when run alone */
    int64_t alone;       /* launches run again alone after their worker ended for another */
    int capped;          /* the run's cap stopped a launch: the exec judges no more */
    double copy_seconds; /* laying images out, reading outputs back and checking the bytes
                            around them (host time, over the exec's life) */
    int pending;         /* a main run begun (sml_prop_exec_run_begin), its answer not yet taken */
    sml_prop_launch_req pending_req;
    const sml_prop_case *pending_case; /* ... of this case */
} sml_prop_exec;

typedef struct sml_prop_run_report {
    sml_status status;  /* what the kernel (or the device sync after it) returned */
    int64_t canary_bad; /* bytes of the output allocation changed outside the output */
    int input_modified; /* an input allocation changed (out-of-place runs) */
    int off_stream;     /* the stream check saw the kernel run outside its stream */
    int ended;          /* SML_PROP_ENDED_*: no answer to judge (remote); `where` says why */
    char where[384];    /* the first such change, or the end, in words */
} sml_prop_run_report;

/* A local exec (sml_prop_exec_init) makes its stream and guard state on the device; a remote
 * one (sml_prop_exec_init_remote) makes nothing on the device: its launches go to l. */
sml_status sml_prop_exec_init(sml_prop_exec *e, sml_device d);
/* The machine's physical memory in bytes; 0 when the system does not say. */
size_t sml_prop_host_phys_bytes(void);
void sml_prop_exec_init_remote(sml_prop_exec *e, sml_device d, sml_prop_launcher l);
void sml_prop_exec_free(sml_prop_exec *e);

/* Run k on case c (its x and dy, its layout) and read the output back dense into `out`
 * (rows * cols elements of c->dtype). With `verify`, read the whole allocation back and
 * report changed canaries and inputs; without, only the output comes back. A failure of the
 * engine itself (allocation, a transfer) is the return value; the kernel's own status is
 * rep->status, and where it ran in a worker that gave no answer, rep->ended. */
sml_status sml_prop_exec_run(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                             const sml_prop_case *c, int verify, void *out,
                             sml_prop_run_report *rep);

/* sml_prop_exec_run in two halves: begin sends the run of case c to the worker (where the
 * launcher can split a launch; else it does nothing and end runs it all), end takes the answer
 * as sml_prop_exec_run would (for another case, end runs that case whole). Between them the
 * caller may compute (the case's reference); any other use of the exec first takes the begun
 * run's answer and drops it. */
sml_status sml_prop_exec_run_begin(sml_prop_exec *e, const sml_prop_case *c, int verify);
sml_status sml_prop_exec_run_end(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                 const sml_prop_case *c, int verify, void *out,
                                 sml_prop_run_report *rep);

/* The stream check (GPU; devguard.h): run k on case c again with the exec's stream held.
 * *ran: 1 the output changed while the stream was held (the kernel ran outside the stream it
 * was given), 0 it did not, -1 no verdict (a CPU kernel, the launch failed, or the check
 * could not finish inside the hold: a launch that waits for its own stream returns only when
 * the hold gives up, after which this exec checks no more). rep->ended when a worker gave no
 * answer. The return value is the engine's own failure. */
sml_status sml_prop_exec_stream_check(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                      const sml_prop_case *c, int *ran, sml_prop_run_report *rep);

/* After a job's last launch: is its worker still there (remote)? rep->ended when it is not
 * (it ended on its own after the last case: the kernel's FAIL). Nothing to do in-process. */
sml_status sml_prop_exec_ping(sml_prop_exec *e, sml_prop_run_report *rep);

/* The bytes of the layout a worker's answer to req with kernel status `status` must carry
 * back: [*from, *from + *n). */
void sml_prop_exec_expect(const sml_prop_launch_req *req, int32_t status, uint64_t *from,
                          uint64_t *n);

/* A worker's side of a launch (src/worker): run req on the image already in e->img (at least
 * req->image_bytes) and leave what comes back in e->back at [res->from, res->from + res->n).
 * sml_prop_exec_use lends the exec an image and an answer buffer of `cap` bytes each (a
 * worker's window), or with NULL takes them back (the exec has none until its next use);
 * sml_prop_exec_image gives it buffers of its own of at least `bytes` instead. */
sml_status sml_prop_exec_image(sml_prop_exec *e, size_t bytes);
void sml_prop_exec_use(sml_prop_exec *e, const unsigned char *img, unsigned char *back, size_t cap);
sml_status sml_prop_exec_launch(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                const sml_prop_launch_req *req, sml_prop_launch_res *res);
/* 1 when req's shape is inside the engine's bounds and req->image_bytes is its layout's size
 * (what a worker checks of a request before it lays anything out). */
int sml_prop_exec_req_valid(const sml_prop_launch_req *req);

#endif
