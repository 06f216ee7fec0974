/* inputs.c: see inputs.h. Each chunk of rows draws from its own derived seed, so inputs
 * depend on (seed, shape, dtype, op) only. */
#include "bench/inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/parallel.h"
#include "reference/dtype.h"
#include "reference/reference.h"
#include "rng.h"

typedef struct gen_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t cols;
    uint64_t seed;
    char *x, *dy;
    double *scratch;
    size_t esz;
    sml_status status; /* first failure of any chunk (written racily; any failure is kept) */
} gen_ctx;

static void fill_normal(sml_dtype dt, void *base, int64_t n, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) sml_store(dt, base, i, sml_rng_normal(&r));
}

static void gen_chunk(void *arg, int64_t chunk, int64_t r0, int64_t r1) {
    gen_ctx *g = arg;
    int64_t n = (r1 - r0) * g->cols;
    char *x = g->x + (size_t)(r0 * g->cols) * g->esz;
    fill_normal(g->dt, x, n, sml_derive_seed(g->seed, (uint64_t)chunk * 2));
    if (!sml_op_is_backward(g->op)) return;
    char *dy = g->dy + (size_t)(r0 * g->cols) * g->esz;
    fill_normal(g->dt, dy, n, sml_derive_seed(g->seed, (uint64_t)chunk * 2 + 1));
    /* x holds logits now; replace them by the forward output the backward op expects. */
    sml_op fwd = g->op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
    double *y = g->scratch + r0 * g->cols;
    sml_status s = sml_ref_run(fwd, g->dt, r1 - r0, g->cols, g->cols, x, NULL, y);
    if (s != SML_OK) {
        g->status = s;
        return;
    }
    for (int64_t i = 0; i < n; i++) sml_store(g->dt, x, i, y[i]);
}

sml_status sml_bench_make_inputs(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                                 uint64_t seed, int threads, void *x, void *dy, double *scratch) {
    if (!x || (sml_op_is_backward(op) && (!dy || !scratch))) return SML_ERR_NULL_POINTER;
    gen_ctx g = {op, dt, cols, seed, x, dy, scratch, sml_dtype_size(dt), SML_OK};
    sml_parallel_rows(rows, sml_chunk_rows(cols), threads, gen_chunk, &g);
    return g.status;
}

typedef struct ref_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t cols;
    const char *x, *dy;
    double *want;
    size_t esz;
    sml_status status;
} ref_ctx;

static void ref_chunk(void *arg, int64_t chunk, int64_t r0, int64_t r1) {
    ref_ctx *c = arg;
    (void)chunk;
    size_t off = (size_t)(r0 * c->cols) * c->esz;
    sml_status s = sml_ref_run(c->op, c->dt, r1 - r0, c->cols, c->cols, c->x + off,
                               c->dy ? c->dy + off : NULL, c->want + r0 * c->cols);
    if (s != SML_OK) c->status = s;
}

sml_status sml_bench_reference(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                               const void *x, const void *dy, double *want, int threads) {
    ref_ctx c = {op, dt, cols, x, sml_op_is_backward(op) ? dy : NULL, want, sml_dtype_size(dt), SML_OK};
    sml_parallel_rows(rows, sml_chunk_rows(cols), threads, ref_chunk, &c);
    return c.status;
}

typedef struct check_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t cols;
    const char *x, *dy, *out;
    const double *want;
    size_t esz;
    sml_check_report *reports;
    sml_status *status;
} check_ctx;

static void check_chunk(void *arg, int64_t chunk, int64_t r0, int64_t r1) {
    check_ctx *c = arg;
    size_t off = (size_t)(r0 * c->cols) * c->esz;
    memset(&c->reports[chunk], 0, sizeof c->reports[chunk]);
    c->status[chunk] = sml_check_against(c->op, c->dt, r1 - r0, c->cols, c->cols, c->x + off,
                                         c->dy ? c->dy + off : NULL, c->want + r0 * c->cols,
                                         c->out + off, &c->reports[chunk]);
    if (c->reports[chunk].worst_row >= 0) c->reports[chunk].worst_row += r0;
}

/* NaN ratios (a NaN where a number was due) rank as the worst. */
static double severity(const sml_check_report *r) {
    return isnan(r->worst_ratio) ? INFINITY : r->worst_ratio;
}

sml_status sml_bench_check(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, const void *x,
                           const void *dy, const double *want, const void *out, int threads,
                           sml_check_report *r) {
    memset(r, 0, sizeof *r);
    r->worst_row = r->worst_col = -1;
    int64_t chunk_rows = sml_chunk_rows(cols);
    int64_t nchunks = (rows + chunk_rows - 1) / chunk_rows;
    if (nchunks <= 0) {
        r->pass = 1;
        snprintf(r->message, sizeof r->message, "ok: nothing to check");
        return SML_OK;
    }
    sml_check_report *reports = calloc((size_t)nchunks, sizeof *reports);
    sml_status *status = calloc((size_t)nchunks, sizeof *status);
    if (!reports || !status) {
        free(reports);
        free(status);
        return SML_ERR_OUT_OF_MEMORY;
    }
    check_ctx c = {op, dt, cols, x, sml_op_is_backward(op) ? dy : NULL, out, want,
                   sml_dtype_size(dt), reports, status};
    sml_parallel_rows(rows, chunk_rows, threads, check_chunk, &c);
    sml_status result = SML_OK;
    int64_t worst = -1;
    r->pass = 1;
    for (int64_t i = 0; i < nchunks; i++) {
        if (status[i] != SML_OK) {
            result = status[i];
            continue;
        }
        const sml_check_report *q = &reports[i];
        r->pass &= q->pass ? 1 : 0;
        r->checked += q->checked;
        r->bad += q->bad;
        r->nan_mismatch += q->nan_mismatch;
        r->inf_mismatch += q->inf_mismatch;
        if (worst < 0 || severity(q) > severity(&reports[worst])) worst = i;
    }
    if (result == SML_OK && worst >= 0) {
        const sml_check_report *w = &reports[worst];
        r->worst_ratio = w->worst_ratio;
        r->worst_ulps = w->worst_ulps;
        r->worst_rel = w->worst_rel;
        r->worst_abs = w->worst_abs;
        r->worst_row = w->worst_row;
        r->worst_col = w->worst_col;
        r->got = w->got;
        r->want = w->want;
        r->row_max = w->row_max;
        r->row_sum = w->row_sum;
        if (r->pass)
            snprintf(r->message, sizeof r->message,
                     "ok: %lld elements, worst %.3g ulp (%.3g of the bound) at row %lld col %lld",
                     (long long)r->checked, r->worst_ulps, r->worst_ratio, (long long)r->worst_row,
                     (long long)r->worst_col);
        else
            snprintf(r->message, sizeof r->message,
                     "WRONG: %lld of %lld elements outside the bound (%lld NaN, %lld inf "
                     "mismatches); worst at row %lld col %lld: got %.9g want %.9g (%.3g ulp, "
                     "%.3g x the bound)",
                     (long long)r->bad, (long long)r->checked, (long long)r->nan_mismatch,
                     (long long)r->inf_mismatch, (long long)r->worst_row, (long long)r->worst_col,
                     r->got, r->want, r->worst_ulps, r->worst_ratio);
    } else if (result != SML_OK) {
        r->pass = 0;
        snprintf(r->message, sizeof r->message, "checker failed: %s", sml_strerror(result));
    }
    free(reports);
    free(status);
    return result;
}
