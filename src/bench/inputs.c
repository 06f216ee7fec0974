/* inputs.c: see inputs.h. Each chunk of rows draws from its own derived seed, so inputs
 * depend on (seed, shape, dtype, op) only. */
#include "bench/inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/parallel.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "core/rng.h"

typedef struct gen_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t cols;
    uint64_t seed;
    char *x, *dy;
    size_t esz;
    sml_status status; /* a failure of any chunk (written racily; any failure is kept) */
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
    double *y = malloc((size_t)n * sizeof *y);
    sml_status s =
        y ? sml_ref_run(fwd, g->dt, r1 - r0, g->cols, g->cols, x, NULL, y) : SML_ERR_OUT_OF_MEMORY;
    if (s == SML_OK)
        for (int64_t i = 0; i < n; i++) sml_store(g->dt, x, i, y[i]);
    else
        g->status = s;
    free(y);
}

sml_status sml_bench_make_inputs(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, uint64_t seed,
                                 int threads, void *x, void *dy) {
    if (!x || (sml_op_is_backward(op) && !dy)) return SML_ERR_NULL_POINTER;
    gen_ctx g = {op, dt, cols, seed, x, dy, sml_dtype_size(dt), SML_OK};
    sml_parallel_rows(rows, sml_chunk_rows(cols), threads, gen_chunk, &g);
    return g.status;
}

void sml_rowset_make(int64_t rows, int64_t cols, int64_t max_elems, sml_rowset *s) {
    memset(s, 0, sizeof *s);
    s->rows = rows;
    if (rows <= 0) return;
    if (max_elems <= 0 || cols <= 0 || rows <= max_elems / cols || rows <= SML_ROWSET_MAX_BLOCKS) {
        s->nblocks = 1;
        s->nrows[0] = s->total_rows = rows;
        return;
    }
    int64_t want_rows = max_elems / cols;
    if (want_rows < SML_ROWSET_MAX_BLOCKS) want_rows = SML_ROWSET_MAX_BLOCKS;
    int64_t per = want_rows / SML_ROWSET_MAX_BLOCKS;
    /* Block b starts at b * (rows - per) / (nblocks - 1): the first block at row 0, the
     * last one ending at the last row, the others evenly between. */
    for (int b = 0; b < SML_ROWSET_MAX_BLOCKS; b++) {
        int64_t r0 = (int64_t)((double)b * (double)(rows - per) / (SML_ROWSET_MAX_BLOCKS - 1));
        if (s->nblocks && r0 < s->row0[s->nblocks - 1] + s->nrows[s->nblocks - 1])
            r0 = s->row0[s->nblocks - 1] + s->nrows[s->nblocks - 1];
        if (r0 + per > rows) break;
        s->row0[s->nblocks] = r0;
        s->nrows[s->nblocks] = per;
        s->total_rows += per;
        s->nblocks++;
    }
}

/* The rowset cut into chunks of at most sml_chunk_rows(cols) rows, as a flat list that the
 * parallel loop indexes: chunk i covers tensor rows [r0, r1) and starts at dense row w0. */
typedef struct chunk {
    int64_t r0, r1, w0;
} chunk;

typedef struct chunk_list {
    int64_t n;
    chunk *c;
} chunk_list;

static int chunks_make(const sml_rowset *s, int64_t cols, chunk_list *l) {
    int64_t cr = sml_chunk_rows(cols), n = 0;
    for (int b = 0; b < s->nblocks; b++) n += (s->nrows[b] + cr - 1) / cr;
    l->n = 0;
    l->c = malloc((size_t)(n ? n : 1) * sizeof *l->c);
    if (!l->c) return 0;
    int64_t w = 0;
    for (int b = 0; b < s->nblocks; b++)
        for (int64_t r = s->row0[b]; r < s->row0[b] + s->nrows[b]; r += cr) {
            int64_t e = r + cr < s->row0[b] + s->nrows[b] ? r + cr : s->row0[b] + s->nrows[b];
            l->c[l->n++] = (chunk){r, e, w};
            w += e - r;
        }
    return 1;
}

typedef struct ref_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t cols;
    const char *x, *dy;
    double *want;
    size_t esz;
    const chunk_list *l;
    sml_status status;
} ref_ctx;

static void ref_chunk(void *arg, int64_t i, int64_t unused0, int64_t unused1) {
    ref_ctx *c = arg;
    (void)unused0;
    (void)unused1;
    const chunk *k = &c->l->c[i];
    size_t off = (size_t)(k->r0 * c->cols) * c->esz;
    sml_status s = sml_ref_run(c->op, c->dt, k->r1 - k->r0, c->cols, c->cols, c->x + off,
                               c->dy ? c->dy + off : NULL, c->want + k->w0 * c->cols);
    if (s != SML_OK) c->status = s;
}

sml_status sml_bench_reference(sml_op op, sml_dtype dt, int64_t cols, const void *x, const void *dy,
                               const sml_rowset *s, double *want, int threads) {
    chunk_list l;
    if (!chunks_make(s, cols, &l)) return SML_ERR_OUT_OF_MEMORY;
    ref_ctx c = {op, dt,    cols, x, sml_op_is_backward(op) ? dy : NULL, want, sml_dtype_size(dt),
                 &l, SML_OK};
    sml_parallel_rows(l.n, 1, threads, ref_chunk, &c);
    free(l.c);
    return c.status;
}

typedef struct check_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t cols;
    const char *x, *dy, *out;
    const double *want;
    size_t esz;
    const chunk_list *l;
    sml_check_report *reports;
    sml_status *status;
    const sml_dev_terms *terms; /* the kernel's declared terms, or NULL */
    sml_dev_report *devs;       /* per chunk: each miss judged against them */
} check_ctx;

static void check_chunk(void *arg, int64_t i, int64_t unused0, int64_t unused1) {
    check_ctx *c = arg;
    (void)unused0;
    (void)unused1;
    const chunk *k = &c->l->c[i];
    size_t off = (size_t)(k->r0 * c->cols) * c->esz;
    memset(&c->reports[i], 0, sizeof c->reports[i]);
    c->status[i] =
        sml_dev_check_against(c->terms, c->op, c->dt, k->r1 - k->r0, c->cols, c->cols, c->x + off,
                              c->dy ? c->dy + off : NULL, c->want + k->w0 * c->cols, c->out + off,
                              &c->reports[i], &c->devs[i]);
    if (c->reports[i].worst_row >= 0) c->reports[i].worst_row += k->r0;
}

/* NaN ratios (a NaN where a number was due) rank as the worst. */
static double severity(const sml_check_report *r) {
    return isnan(r->worst_ratio) ? INFINITY : r->worst_ratio;
}

sml_status sml_bench_check(sml_op op, sml_dtype dt, int64_t cols, const void *x, const void *dy,
                           const sml_rowset *s, const double *want, const void *out, int threads,
                           const sml_dev_terms *terms, sml_check_report *r, sml_dev_report *dev) {
    memset(r, 0, sizeof *r);
    r->worst_row = r->worst_col = -1;
    memset(dev, 0, sizeof *dev);
    dev->row = dev->col = -1;
    chunk_list l;
    if (!chunks_make(s, cols, &l)) return SML_ERR_OUT_OF_MEMORY;
    int64_t nchunks = l.n;
    if (nchunks <= 0) {
        free(l.c);
        r->pass = 1;
        snprintf(r->message, sizeof r->message, "ok: nothing to check");
        return SML_OK;
    }
    sml_check_report *reports = calloc((size_t)nchunks, sizeof *reports);
    sml_status *status = calloc((size_t)nchunks, sizeof *status);
    sml_dev_report *devs = calloc((size_t)nchunks, sizeof *devs);
    if (!reports || !status || !devs) {
        free(reports);
        free(status);
        free(devs);
        free(l.c);
        return SML_ERR_OUT_OF_MEMORY;
    }
    check_ctx c = {op,
                   dt,
                   cols,
                   x,
                   sml_op_is_backward(op) ? dy : NULL,
                   out,
                   want,
                   sml_dtype_size(dt),
                   &l,
                   reports,
                   status,
                   terms,
                   devs};
    sml_parallel_rows(nchunks, 1, threads, check_chunk, &c);
    for (int64_t i = 0; i < nchunks; i++)
        if (status[i] == SML_OK) sml_dev_report_merge(dev, &devs[i], l.c[i].r0);
    free(devs);
    free(l.c);
    char scope[128] = "";
    if (s->total_rows < s->rows)
        snprintf(scope, sizeof scope,
                 " (rows sampled: %lld of %lld in %d blocks, first and last included)",
                 (long long)s->total_rows, (long long)s->rows, s->nblocks);
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
                     "ok: %lld elements%s, worst %.3g ulp (%.3g of the bound) at row %lld col %lld",
                     (long long)r->checked, scope, r->worst_ulps, r->worst_ratio,
                     (long long)r->worst_row, (long long)r->worst_col);
        else
            snprintf(r->message, sizeof r->message,
                     "WRONG: %lld of %lld elements%s outside the bound (%lld NaN, %lld inf "
                     "mismatches); worst at row %lld col %lld: got %.9g want %.9g (%.3g ulp, "
                     "%.3g x the bound)",
                     (long long)r->bad, (long long)r->checked, scope, (long long)r->nan_mismatch,
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
