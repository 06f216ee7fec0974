/* devguard.h: the property engine's own GPU work around a judged kernel (exec.c), kept off
 * the host's copy path so that it costs a few microseconds of device time per case:
 *
 * Guard zones. On the GPU each region of a case (exec.h) sits between two zones of
 * SML_PROP_DEVICE_GUARD bytes in the device allocation. Before a case's main run one kernel
 * poisons every zone with SML_PROP_GUARD_PATTERN; after it another compares them on the
 * device and writes, per zone, how many bytes changed and the first and last, which come
 * back in one small copy queued before the output's own download (no MiBs cross PCIe).
 *
 * Stream check. A held run (exec.c, sml_prop_exec_stream_check): the output region is copied
 * aside on the device, a kernel that spins on a word of mapped host memory holds the given
 * stream, the kernel is launched, and then, through a second non-blocking stream, the output
 * region is compared with its copy. A kernel that launched on its stream cannot have run
 * yet; one that changed the output ran somewhere else. Every wait is bounded: the hold
 * kernel gives up after SML_PROP_HOLD_NS by itself, and the host waits at most
 * SML_PROP_HOLD_WAIT_S for each step; a check that could not finish inside the hold is no
 * verdict. */
#ifndef SML_PROP_DEVGUARD_H
#define SML_PROP_DEVGUARD_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SML_PROP_DEVICE_GUARD \
    ((size_t)1 << 20)              /* bytes of guard zone before and after each region */
#define SML_PROP_GUARD_ZONES_MAX 6 /* before and after each of 3 regions */
/* The guard zones' 16-bit pattern, little-endian bytes A5 FF: NaN as fp32 (0xFFA5FFA5), fp16
 * and bf16 (0xFFA5), so a kernel that reads a zone as data makes NaN, and no NaN a kernel
 * computes (0x7FC00000, 0xFFC00000, 0x7E00, 0x7FC0, all ones), so a kernel that writes one
 * there is seen. */
#define SML_PROP_GUARD_PATTERN   0xFFA5FFA5u
#define SML_PROP_HOLD_NS         2000000000ull /* the hold kernel releases its stream by itself after 2 s */
#define SML_PROP_HOLD_WAIT_S     0.5 /* the host's longest wait for each step of the stream check */

/* One zone's changed bytes: count, and the first and last changed byte's offset in the zone. */
typedef struct sml_prop_zone_hit {
    uint64_t count, first, last;
} sml_prop_zone_hit;

typedef struct sml_prop_gpu {
    uint64_t *res_dev;       /* per zone {count, first, last}, then the stream check's flag */
    uint64_t *res_host;      /* their pinned host copy */
    volatile unsigned *hold; /* mapped host words: [0] release generation, [1] hold timeouts */
    unsigned *hold_dev;      /* the device's view of the same words */
    unsigned gen;
    double held_at; /* monotonic seconds just before the hold was queued */
    void *side;     /* the second non-blocking stream (stream check) */
    void *ev_snap, *ev_legacy, *ev_side;
    sml_buffer snap; /* the output region's copy (stream check) */
    int poll;        /* waits ask the stream and sleep between asks (SML_GPU_WAIT unset or
                        poll); else cudaStreamSynchronize */
} sml_prop_gpu;

/* Set up (on the current device) and tear down; free is safe on a zeroed struct. */
sml_status sml_prop_gpu_init(sml_prop_gpu *g);
void sml_prop_gpu_free(sml_prop_gpu *g);

/* Copy n bytes between host and device on `stream` without waiting (to_device: 1 upload). */
sml_status sml_prop_gpu_copy(void *dst, const void *src, size_t n, int to_device, void *stream);
/* The same for `rows` blocks of `width` bytes, `spitch` apart at src and `dpitch` apart at
 * dst (one DMA operation; pitches up to SML_PROP_PITCH_MAX). */
sml_status sml_prop_gpu_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t rows, int to_device, void *stream);
#define SML_PROP_PITCH_MAX ((size_t)2147483647) /* cudaMemcpy2D's pitch limit */
/* Wait for `stream`. */
sml_status sml_prop_gpu_wait(sml_prop_gpu *g, void *stream);

/* Page-locked host memory (the exec's image and read-back on the GPU, so their copies are
 * truly asynchronous and need no staging), and its release; NULL after a failure. */
sml_status sml_prop_gpu_host_alloc(void **p, size_t n);
void sml_prop_gpu_host_free(void *p);
/* Page-lock n bytes that are already mapped (a worker's window; `readonly`: mapped so), and
 * undo it; a failure leaves them as they were. */
sml_status sml_prop_gpu_host_register(void *p, size_t n, int readonly);
void sml_prop_gpu_host_unregister(void *p);

/* Poison zone[0..n) (each `len` bytes, 16-byte aligned, len a multiple of 16) and clear the
 * results, on `stream`. */
sml_status sml_prop_gpu_guard_fill(sml_prop_gpu *g, unsigned char *const *zone, int n, size_t len,
                                   void *stream);
/* Compare the zones with the pattern and queue the results' copy to the host on `stream`;
 * read them with sml_prop_gpu_guard_hits once the stream has been waited for. */
sml_status sml_prop_gpu_guard_check(sml_prop_gpu *g, unsigned char *const *zone, int n, size_t len,
                                    void *stream);
void sml_prop_gpu_guard_hits(const sml_prop_gpu *g, int n, sml_prop_zone_hit *hit);

/* The stream check's steps (exec.c runs the kernel between hold and judge). hold: copy
 * `bytes` at `region` (16-byte aligned, a multiple of 16) aside, then hold `stream`. judge:
 * *ran = 1 when the region changed while the stream was held, 0 when it did not, -1 when the
 * check could not finish inside the hold (no verdict). release: let the stream go (always
 * call it after hold succeeded). */
sml_status sml_prop_gpu_hold(sml_prop_gpu *g, const void *region, size_t bytes, void *stream);
sml_status sml_prop_gpu_judge(sml_prop_gpu *g, const void *region, size_t bytes, int *ran);
void sml_prop_gpu_release(sml_prop_gpu *g);

#ifdef __cplusplus
}
#endif
#endif
