/* inputs.h: what a benchmark case computes on the host: fresh seeded inputs, the double
 * reference, and the correctness verdict of a kernel's output, all split over threads. */
#ifndef SML_BENCH_INPUTS_H
#define SML_BENCH_INPUTS_H

#include <stdint.h>

#include "prop/deviation.h"
#include "reference/check.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dense [rows, cols] host tensors of dtype dt. Forward: x = N(0, 1) logits. Backward:
 * x = y, the (rounded) reference forward output of N(0, 1) logits, so the kernel sees a real
 * softmax / log-softmax output, and dy = N(0, 1). */
sml_status sml_bench_make_inputs(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, uint64_t seed,
                                 int threads, void *x, void *dy);

/* The rows a case is checked on: all of them, or, when rows * cols exceeds a budget, 64
 * evenly spaced blocks of whole rows that include the first and the last row. */
#define SML_ROWSET_MAX_BLOCKS 64
typedef struct sml_rowset {
    int nblocks;
    int64_t row0[SML_ROWSET_MAX_BLOCKS], nrows[SML_ROWSET_MAX_BLOCKS];
    int64_t total_rows; /* rows in all blocks */
    int64_t rows;       /* rows of the whole tensor */
} sml_rowset;

/* max_elems <= 0 or rows * cols <= max_elems: every row. */
void sml_rowset_make(int64_t rows, int64_t cols, int64_t max_elems, sml_rowset *s);

/* want = the double reference on the rows of s (dense, s->total_rows * cols doubles, the
 * blocks one after the other). */
sml_status sml_bench_reference(sml_op op, sml_dtype dt, int64_t cols, const void *x, const void *dy,
                               const sml_rowset *s, double *want, int threads);

/* Check `out` (dense, dtype dt) on the rows of s against want under the numerics contract,
 * and each miss against the kernel's declared terms (NULL: none) into dev
 * (src/prop/deviation.h). The per-chunk reports are merged: counts add up, the worst element
 * is the worst of all chunks and its row is the tensor's. r->message is rewritten to say so,
 * and says how many rows were checked when s is a sample. */
sml_status sml_bench_check(sml_op op, sml_dtype dt, int64_t cols, const void *x, const void *dy,
                           const sml_rowset *s, const double *want, const void *out, int threads,
                           const sml_dev_terms *terms, sml_check_report *r, sml_dev_report *dev);

#ifdef __cplusplus
}
#endif
#endif
