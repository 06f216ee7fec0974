/* reference.h: the double-precision oracle. Every GPU and CPU kernel is judged against it.
 *
 * Row functions take doubles (inputs converted exactly from their dtype). Special values
 * follow docs/NUMERICS.md, and this module is the one place that table is implemented:
 *   softmax: a -inf logit gives 0; a row of all -inf gives NaN everywhere; any NaN or +inf
 *   in a row gives a row of NaN. log-softmax likewise, with -inf where softmax gives 0.
 * Sums are compensated, so the reference's own relative error stays far below an fp32 ulp
 * at 2^22 columns (proved against MPFR in tests/unit/test_reference_mpfr.c). */
#ifndef SML_REFERENCE_H
#define SML_REFERENCE_H

#include <stdint.h>
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compensated sum of n doubles (Neumaier); exact to about one double rounding. */
double sml_ref_sum(const double *v, int64_t n);

/* Three passes: max, sum of exp(x - max), divide. */
void sml_ref_softmax_naive(const double *x, double *y, int64_t n);
/* One pass with the running max and rescaled running sum (Milakov & Gimelshein), then
 * the output pass. */
void sml_ref_softmax_online(const double *x, double *y, int64_t n);
/* log-softmax by log-sum-exp: y = x - (max + log(sum(exp(x - max)))). */
void sml_ref_log_softmax(const double *x, double *y, int64_t n);
/* dx = y * (dy - sum(dy * y)). */
void sml_ref_softmax_backward(const double *y, const double *dy, double *dx, int64_t n);
/* dx = dy - exp(y) * sum(dy). */
void sml_ref_log_softmax_backward(const double *y, const double *dy, double *dx, int64_t n);

/* The exponentials the reference and the contract's row facts (check.h) take of a row, for
 * callers that compute both on one input: softmax and log_softmax: exp(x_i - max) with the
 * row's max as the reference takes it (NaN skipped); log_softmax_bwd: exp(y_i); softmax_bwd:
 * none (ex is not written). */
void sml_ref_exp_row(sml_op op, const double *x, int64_t n, double *ex);

/* The reference of a dense problem already widened to doubles (rows x cols of x and, backward,
 * dy) into out, row by row with the functions above (the naive softmax); ex: NULL, or the
 * sml_ref_exp_row of every row, which it then takes instead of computing them again. The same
 * bits as sml_ref_run on the inputs in their dtype. */
void sml_ref_rows(sml_op op, int64_t rows, int64_t cols, const double *x, const double *dy,
                  const double *ex, double *out);

/* The row's max and the sum of exp(x - max) (special values: max may be +-inf or NaN). */
void sml_ref_row_stats(const double *x, int64_t n, double *max_out, double *sum_out);

/* Whole problem on host memory in any dtype, with stride ld; out is dense rows*cols
 * doubles. Uses the naive softmax. Returns SML_ERR_OUT_OF_MEMORY / bad-argument codes. */
sml_status sml_ref_run(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                       const void *x, const void *dy, double *out);

#ifdef __cplusplus
}
#endif
#endif
