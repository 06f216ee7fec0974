/* reference.c: the double-precision row functions and the whole-problem driver.
 *
 * Special values are not tested for case by case: the formulas are evaluated in IEEE
 * arithmetic, which already yields the table of docs/NUMERICS.md (a NaN or +inf logit, or
 * a row of -inf, makes the max subtraction produce NaN and the NaN reaches every output
 * through the sum). The online variant needs two explicit guards, noted where they are. */
#include "reference/reference.h"

#include <math.h>
#include <stdlib.h>

#include "core/dtype.h"

/* Neumaier's compensated sum: s + c carries the exact running sum to about one double
 * rounding. With an infinite or NaN term the compensation itself turns NaN (inf - inf), so
 * `plain` keeps the ordinary sum, which gives the IEEE answer (NaN if any NaN or both
 * infinities, else the infinity) whatever the order. */
typedef struct csum {
    double s, c, plain;
} csum;

static void csum_add(csum *a, double v) {
    double t = a->s + v;
    a->c += fabs(a->s) >= fabs(v) ? (a->s - t) + v : (v - t) + a->s;
    a->s = t;
    a->plain += v;
}

static double csum_value(const csum *a) { return isfinite(a->plain) ? a->s + a->c : a->plain; }

double sml_ref_sum(const double *v, int64_t n) {
    csum a = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) csum_add(&a, v[i]);
    return csum_value(&a);
}

/* The row max as the kernels see it: comparisons skip NaN; the NaN still poisons the sum. */
static double row_max(const double *x, int64_t n) {
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}

void sml_ref_row_stats(const double *x, int64_t n, double *max_out, double *sum_out) {
    double m = row_max(x, n);
    csum a = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) csum_add(&a, exp(x[i] - m));
    if (max_out) *max_out = m;
    if (sum_out) *sum_out = csum_value(&a);
}

void sml_ref_exp_row(sml_op op, const double *x, int64_t n, double *ex) {
    if (op == SML_SOFTMAX || op == SML_LOG_SOFTMAX) {
        double m = row_max(x, n);
        for (int64_t i = 0; i < n; i++) ex[i] = exp(x[i] - m);
    } else if (op == SML_LOG_SOFTMAX_BWD) {
        for (int64_t i = 0; i < n; i++) ex[i] = exp(x[i]);
    }
}

/* The naive softmax's second half: e holds exp(x - max); y = e divided by its compensated sum
 * (y may be e). */
static void softmax_finish(const double *e, double *y, int64_t n) {
    double s = sml_ref_sum(e, n);
    for (int64_t i = 0; i < n; i++) y[i] = e[i] / s;
}

void sml_ref_softmax_naive(const double *x, double *y, int64_t n) {
    sml_ref_exp_row(SML_SOFTMAX, x, n, y);
    softmax_finish(y, y, n);
}

/* Running (max, compensated sum) over the row, one element at a time. */
void sml_ref_softmax_online(const double *x, double *y, int64_t n) {
    double m = -INFINITY;
    csum a = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        double v = x[i];
        /* A -inf logit adds exactly 0; skipping it keeps -inf - -inf (NaN) out of a row
         * that has not seen a finite value yet. NaN is not skipped: it must poison s. */
        if (v == -INFINITY) continue;
        double mn = v > m ? v : m;
        if (mn != m) {
            double scale = exp(m - mn);
            a.s *= scale;
            a.c *= scale;
            a.plain *= scale;
            m = mn;
        }
        csum_add(&a, exp(v - m)); /* +inf: inf - inf = NaN, as in the naive formula */
    }
    double d = csum_value(&a);
    /* An all -inf row never moved m: exp(-inf - -inf) = NaN, as the naive formula gives. */
    for (int64_t i = 0; i < n; i++) y[i] = exp(x[i] - m) / d;
}

/* log(sum) as log1p(sum without the first max element): the max element contributes
 * exactly 1, and log1p keeps log-softmax of the max element accurate when the rest is tiny.
 * ex: NULL, or exp(x - m) already computed (sml_ref_exp_row). */
static double log_sum_exp_shifted(const double *x, const double *ex, int64_t n, double m) {
    csum a = {0, 0, 0};
    int seen_max = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!seen_max && x[i] == m) {
            seen_max = 1;
            continue;
        }
        csum_add(&a, ex ? ex[i] : exp(x[i] - m));
    }
    return log1p(csum_value(&a));
}

static void log_softmax(const double *x, const double *ex, double *y, int64_t n) {
    double m = row_max(x, n);
    double l = isfinite(m) ? log_sum_exp_shifted(x, ex, n, m) : NAN;
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - l;
}

void sml_ref_log_softmax(const double *x, double *y, int64_t n) { log_softmax(x, NULL, y, n); }

void sml_ref_softmax_backward(const double *y, const double *dy, double *dx, int64_t n) {
    /* dy * y is exact in double for fp32, fp16 and bf16 inputs (24 + 24 bits <= 53). */
    csum a = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) csum_add(&a, dy[i] * y[i]);
    double dot = csum_value(&a);
    for (int64_t i = 0; i < n; i++) dx[i] = y[i] * (dy[i] - dot);
}

static void log_softmax_backward(const double *y, const double *ey, const double *dy, double *dx,
                                 int64_t n) {
    double s = sml_ref_sum(dy, n);
    for (int64_t i = 0; i < n; i++) dx[i] = dy[i] - (ey ? ey[i] : exp(y[i])) * s;
}

void sml_ref_log_softmax_backward(const double *y, const double *dy, double *dx, int64_t n) {
    log_softmax_backward(y, NULL, dy, dx, n);
}

void sml_ref_rows(sml_op op, int64_t rows, int64_t cols, const double *x, const double *dy,
                  const double *ex, double *out) {
    for (int64_t r = 0; r < rows; r++) {
        size_t at = (size_t)(r * cols);
        const double *xr = x + at, *dyr = dy ? dy + at : NULL, *er = ex ? ex + at : NULL;
        double *o = out + at;
        switch (op) {
        case SML_SOFTMAX:
            if (er) {
                softmax_finish(er, o, cols);
            } else {
                sml_ref_softmax_naive(xr, o, cols);
            }
            break;
        case SML_LOG_SOFTMAX: log_softmax(xr, er, o, cols); break;
        case SML_SOFTMAX_BWD: sml_ref_softmax_backward(xr, dyr, o, cols); break;
        case SML_LOG_SOFTMAX_BWD: log_softmax_backward(xr, er, dyr, o, cols); break;
        default: break;
        }
    }
}

sml_status sml_ref_run(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                       const void *x, const void *dy, double *out) {
    if ((unsigned)op >= SML_OP_COUNT) return SML_ERR_BAD_OP;
    if ((unsigned)dt >= SML_DTYPE_COUNT) return SML_ERR_BAD_DTYPE;
    if (rows < 0 || cols < 0) return SML_ERR_BAD_SHAPE;
    if (ld < cols) return SML_ERR_BAD_STRIDE;
    if (rows == 0 || cols == 0) return SML_OK;
    int bwd = sml_op_is_backward(op);
    if (!x || !out || (bwd && !dy)) return SML_ERR_NULL_POINTER;
    double *xr = malloc((size_t)cols * sizeof *xr);
    double *dyr = bwd ? malloc((size_t)cols * sizeof *dyr) : NULL;
    if (!xr || (bwd && !dyr)) {
        free(xr);
        free(dyr);
        return SML_ERR_OUT_OF_MEMORY;
    }
    for (int64_t r = 0; r < rows; r++) {
        sml_load_n(dt, x, r * ld, cols, xr);
        if (bwd) sml_load_n(dt, dy, r * ld, cols, dyr);
        sml_ref_rows(op, 1, cols, xr, dyr, NULL, out + r * cols);
    }
    free(xr);
    free(dyr);
    return SML_OK;
}
