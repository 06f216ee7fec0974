/* inputs.h: what a benchmark case computes on the host: fresh seeded inputs, the double
 * reference, and the correctness verdict of a kernel's output, all split over threads. */
#ifndef SML_BENCH_INPUTS_H
#define SML_BENCH_INPUTS_H

#include <stdint.h>

#include "reference/check.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dense [rows, cols] host tensors of dtype dt. Forward: x = N(0, 1) logits. Backward:
 * x = y, the (rounded) reference forward output of N(0, 1) logits, so the kernel sees a real
 * softmax / log-softmax output, and dy = N(0, 1). `scratch` holds rows*cols doubles. */
sml_status sml_bench_make_inputs(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                                 uint64_t seed, int threads, void *x, void *dy, double *scratch);

/* want = the double reference of the problem (dense, rows*cols doubles). */
sml_status sml_bench_reference(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                               const void *x, const void *dy, double *want, int threads);

/* Check `out` (dense, dtype dt) against want under the numerics contract. The per-chunk
 * reports are merged: counts add up, the worst element is the worst of all chunks and its
 * row is global. r->message is rewritten to say so. */
sml_status sml_bench_check(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, const void *x,
                           const void *dy, const double *want, const void *out, int threads,
                           sml_check_report *r);

#ifdef __cplusplus
}
#endif
#endif
