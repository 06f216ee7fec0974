/* check.c: compares a kernel's output with the reference, element by element, under the
 * bounds of contract.c, and writes the report (worst element, where, why). It holds no
 * tolerance of its own. */
#include "reference/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "reference/reference.h"

#define CHUNK 256 /* elements whose bounds are computed at once */

typedef struct row_ctx {
    sml_op op;
    sml_dtype dt;
    int64_t row, cols;
    const double *x, *dy, *want;
    const double *ex;           /* the row's sml_ref_exp_row, or NULL */
    const double *got;          /* the output's row, as doubles */
    const sml_row_facts *given; /* the row's facts, or NULL: computed here */
    sml_row_facts facts;
    sml_check_elem *top; /* the k worst elements outside their bound so far, worst first */
    int k, *ntop;
    sml_check_miss_fn miss; /* told of every element outside its bound, or NULL */
    void *miss_ctx;
} row_ctx;

static sml_check_elem make_elem(const row_ctx *c, int64_t j, double got, double want, double ratio,
                                double allowed) {
    sml_check_elem e;
    e.row = c->row;
    e.col = j;
    e.got = got;
    e.want = want;
    e.ratio = ratio;
    e.allowed = allowed;
    int finite = isfinite(got) && isfinite(want);
    e.ulps = finite ? fabs(got - want) / sml_ulp(c->dt, want) : INFINITY;
    e.allowed_ulps = finite ? allowed / sml_ulp(c->dt, want) : NAN;
    return e;
}

/* Keep element j among the k worst violations (ratio descending; ties keep the earlier
 * element first, so the list is the same whatever k). allowed is NAN for a special-value
 * mismatch. */
static void keep_bad(const row_ctx *c, int64_t j, double got, double want, double ratio,
                     double allowed) {
    if (!c->top || c->k <= 0) return;
    int n = *c->ntop, at = n;
    while (at > 0 && ratio > c->top[at - 1].ratio) at--;
    if (at >= c->k) return;
    if (n == c->k) n--; /* the last one drops out */
    for (int i = n; i > at; i--) c->top[i] = c->top[i - 1];
    c->top[at] = make_elem(c, j, got, want, ratio, allowed);
    *c->ntop = n + 1;
}

/* Element j is outside its bound: counted in the caller; listed and told here. */
static void missed(const row_ctx *c, int64_t j, double got, double want, double ratio,
                   double allowed) {
    keep_bad(c, j, got, want, ratio, allowed);
    if (c->miss) {
        sml_check_elem e = make_elem(c, j, got, want, ratio, allowed);
        c->miss(c->miss_ctx, &e);
    }
}

static void record_worst(sml_check_report *r, const row_ctx *c, int64_t j, double got, double want,
                         double ratio) {
    if (!(ratio > r->worst_ratio) && r->worst_row >= 0) return;
    double err = fabs(got - want);
    r->worst_ratio = ratio;
    r->worst_row = c->row;
    r->worst_col = j;
    r->got = got;
    r->want = want;
    if (isfinite(got) && isfinite(want)) {
        r->worst_abs = err;
        r->worst_rel = want != 0.0 ? err / fabs(want) : (err == 0.0 ? 0.0 : INFINITY);
        r->worst_ulps = err / sml_ulp(c->dt, want);
    } else if (ratio == 0.0) { /* the special value expected, exactly (inf for inf, NaN for NaN) */
        r->worst_abs = r->worst_rel = r->worst_ulps = 0.0;
    } else {
        r->worst_abs = r->worst_rel = r->worst_ulps = INFINITY;
    }
    r->row_max = c->facts.max;
    r->row_sum = c->facts.sum;
}

/* Element j missed with a NaN or an infinity on either side: counted as a NaN mismatch where
 * either value is NaN, else as an infinity mismatch. */
static void special_miss(sml_check_report *r, row_ctx *c, int64_t j, double got, double want) {
    if (isnan(want) || isnan(got))
        r->nan_mismatch++;
    else
        r->inf_mismatch++;
    r->bad++;
    record_worst(r, c, j, got, want, INFINITY);
    missed(c, j, got, want, INFINITY, NAN);
}

/* Element j outside the rules for finite values (a special value expected or given): the
 * contract's table (reference.h, NUMERICS.md), counted and recorded. */
static void check_special(sml_check_report *r, row_ctx *c, int64_t j, double got, double want) {
    if (isnan(want) || isinf(want)) {
        if (got == want || (isnan(want) && isnan(got))) {
            record_worst(r, c, j, got, want, 0.0);
            return;
        }
        if (isnan(got) && sml_check_nan_allowed(c->op, &c->facts, c->x[j])) {
            r->overflow_ok++;
            return;
        }
        special_miss(r, c, j, got, want);
        return;
    }
    double dy_j = c->dy ? c->dy[j] : 0.0;
    sml_bound b = sml_check_bound_parts(c->op, c->dt, &c->facts, c->x[j], dy_j, want);
    int ok =
        isnan(got) ? c->facts.may_overflow : sml_check_inf_allowed(c->dt, &c->facts, want, &b, got);
    if (ok) {
        r->overflow_ok++;
        return;
    }
    special_miss(r, c, j, got, want);
}

static void check_row(sml_check_report *r, row_ctx *c) {
    if (c->given)
        c->facts = *c->given;
    else
        sml_row_facts_compute_ex(c->op, c->dt, c->x, c->dy, c->ex, c->cols, &c->facts);
    r->checked += c->cols;    /* every element is compared */
    double allowed_at[CHUNK]; /* each element's bound, a chunk of the row at a time */
    for (int64_t j0 = 0; j0 < c->cols; j0 += CHUNK) {
        int64_t m = c->cols - j0 < CHUNK ? c->cols - j0 : CHUNK;
        sml_check_allowed_row(c->op, c->dt, &c->facts, c->x + j0, c->dy ? c->dy + j0 : NULL,
                              c->ex ? c->ex + j0 : NULL, c->want + j0, c->got + j0, m, allowed_at);
        /* record_worst replaces the worst element when its ratio is larger, or when there is
         * none yet: the same test here, on copies kept in registers. */
        double worst = r->worst_ratio;
        int have = r->worst_row >= 0;
        for (int64_t j = j0; j < j0 + m; j++) {
            double got = c->got[j], want = c->want[j];
            if (!isfinite(want) || !isfinite(got)) {
                check_special(r, c, j, got, want);
                worst = r->worst_ratio;
                have = r->worst_row >= 0;
                continue;
            }
            double err = fabs(got - want);
            double allowed = allowed_at[j - j0];
            double ratio = err == 0.0 ? 0.0 : err / allowed; /* allowed 0 and err > 0: inf */
            if (ratio > 1.0) {
                r->bad++;
                missed(c, j, got, want, ratio, allowed);
            }
            if (ratio > worst || !have) {
                record_worst(r, c, j, got, want, ratio);
                worst = r->worst_ratio;
                have = 1;
            }
        }
    }
}

static void write_message(sml_check_report *r, sml_op op, sml_dtype dt, int64_t rows,
                          int64_t cols) {
    const char *verdict = r->pass ? "PASS" : "FAIL";
    if (r->worst_row < 0) {
        snprintf(r->message, sizeof r->message, "%s %s %s %lldx%lld: nothing to compare", verdict,
                 sml_op_name(op), sml_dtype_name(dt), (long long)rows, (long long)cols);
        return;
    }
    snprintf(r->message, sizeof r->message,
             "%s %s %s %lldx%lld: %lld/%lld bad (%lld NaN, %lld inf mismatches); worst at "
             "row %lld col %lld: got %.9g want %.9g, %.3g ulp, rel %.3g, %.3g x bound; "
             "row max %.6g sum %.6g",
             verdict, sml_op_name(op), sml_dtype_name(dt), (long long)rows, (long long)cols,
             (long long)r->bad, (long long)r->checked, (long long)r->nan_mismatch,
             (long long)r->inf_mismatch, (long long)r->worst_row, (long long)r->worst_col, r->got,
             r->want, r->worst_ulps, r->worst_rel, r->worst_ratio, r->row_max, r->row_sum);
    /* Finite errors past the bound on a long row: the usual cause is a sum deeper than the
     * contract's model allows (one thread adding the row serially); say where the rule is. */
    if (!r->pass && cols >= SML_CHECK_LONG_ROW && r->nan_mismatch == 0 && r->inf_mismatch == 0) {
        size_t n = strlen(r->message);
        snprintf(r->message + n, sizeof r->message - n,
                 "; long rows: <= 32 + log2(cols) additions per term (docs/NUMERICS.md 4.1)");
    }
}

static sml_status check_args(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                             const void *x, const void *dy, const void *out, sml_check_report *r) {
    if (!r) return SML_ERR_NULL_POINTER;
    if ((unsigned)op >= SML_OP_COUNT) return SML_ERR_BAD_OP;
    if ((unsigned)dt >= SML_DTYPE_COUNT) return SML_ERR_BAD_DTYPE;
    if (rows < 0 || cols < 0) return SML_ERR_BAD_SHAPE;
    if (ld < cols) return SML_ERR_BAD_STRIDE;
    if (rows > 0 && cols > 0 && (!x || !out || (sml_op_is_backward(op) && !dy)))
        return SML_ERR_NULL_POINTER;
    return SML_OK;
}

static void report_init(sml_check_report *r) {
    memset(r, 0, sizeof *r);
    r->worst_row = r->worst_col = -1;
}

/* to[j] = from[perm[j]], j < n. */
static void gather(double *to, const double *from, const int64_t *perm, int64_t n) {
    for (int64_t j = 0; j < n; j++) to[j] = from[perm[j]];
}

/* Shared by every entry point: want_all is the dense reference, or NULL to compute it row by
 * row; d (NULL for the strided entry points) the problem already in doubles. */
static sml_status check_impl(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                             const void *x, const void *dy, const double *want_all, const void *out,
                             const sml_check_dense *d, sml_check_report *r, sml_check_elem *top,
                             int k, int *ntop, sml_check_miss_fn miss, void *miss_ctx) {
    sml_status s = check_args(op, dt, rows, cols, ld, d ? d->x : x, d ? d->dy : dy, out, r);
    if (s != SML_OK) return s;
    if (k > 0 && (!top || !ntop)) return SML_ERR_NULL_POINTER;
    report_init(r);
    if (ntop) *ntop = 0;
    if (rows > 0 && cols > 0) {
        int bwd = sml_op_is_backward(op);
        int with_ex = op != SML_SOFTMAX_BWD; /* sml_ref_exp_row writes nothing for it */
        const int64_t *perm = d ? d->perm : NULL;
        size_t n = (size_t)cols;
        /* Scratch, a row each: the inputs as doubles (strided inputs, or gathered through a
         * permutation), their exponentials, the reference (none given, or gathered), the
         * output as doubles (not given). */
        int need_x = !d || perm, need_ex = with_ex && (d ? perm && d->ex : 1);
        int need_w = !want_all || perm, need_got = !d || !d->got;
        size_t slots = (size_t)need_x * (1 + (size_t)bwd) + (size_t)need_ex + (size_t)need_w +
                       (size_t)need_got;
        double *buf = slots ? malloc(slots * n * sizeof *buf) : NULL;
        if (slots && !buf) return SML_ERR_OUT_OF_MEMORY;
        double *at = buf;
        double *xr = need_x ? at : NULL;
        at += need_x ? n : 0;
        double *dyr = need_x && bwd ? at : NULL;
        at += need_x && bwd ? n : 0;
        double *exr = need_ex ? at : NULL;
        at += need_ex ? n : 0;
        double *wr = need_w ? at : NULL;
        at += need_w ? n : 0;
        double *gr = need_got ? at : NULL;
        size_t esz = sml_dtype_size(dt);
        for (int64_t row = 0; row < rows; row++) {
            size_t dense = (size_t)row * n;
            const double *xrow, *dyrow, *exrow, *want;
            if (d && perm) {
                gather(xr, d->x + dense, perm, cols);
                if (bwd) gather(dyr, d->dy + dense, perm, cols);
                if (exr) gather(exr, d->ex + dense, perm, cols);
                gather(wr, want_all + dense, perm, cols);
                xrow = xr, dyrow = dyr, exrow = exr, want = wr;
            } else if (d) {
                xrow = d->x + dense;
                dyrow = bwd ? d->dy + dense : NULL;
                exrow = d->ex ? d->ex + dense : NULL;
                want = want_all + dense;
            } else {
                sml_load_n(dt, x, row * ld, cols, xr);
                if (bwd) sml_load_n(dt, dy, row * ld, cols, dyr);
                if (with_ex) sml_ref_exp_row(op, xr, cols, exr);
                xrow = xr, dyrow = dyr, exrow = exr;
                want = want_all ? want_all + dense : wr;
                if (!want_all) sml_ref_rows(op, 1, cols, xrow, dyrow, exrow, wr);
            }
            const void *orow = (const char *)out + (size_t)(row * ld) * esz;
            const double *got = d && d->got ? d->got + dense : gr;
            if (gr) sml_load_n(dt, orow, 0, cols, gr);
            row_ctx c = {op,      dt,   row,   cols, xrow,
                         dyrow,   want, exrow, got,  d && d->facts && !perm ? d->facts + row : NULL,
                         {0},     top,  k,     ntop, miss,
                         miss_ctx};
            check_row(r, &c);
        }
        free(buf);
    }
    r->pass = r->bad == 0;
    write_message(r, op, dt, rows, cols);
    return SML_OK;
}

sml_status sml_check(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld, const void *x,
                     const void *dy, const void *out, sml_check_report *r) {
    return check_impl(op, dt, rows, cols, ld, x, dy, NULL, out, NULL, r, NULL, 0, NULL, NULL, NULL);
}

sml_status sml_check_against(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                             const void *x, const void *dy, const double *want, const void *out,
                             sml_check_report *r) {
    if (rows > 0 && cols > 0 && !want) return SML_ERR_NULL_POINTER;
    return check_impl(op, dt, rows, cols, ld, x, dy, want, out, NULL, r, NULL, 0, NULL, NULL, NULL);
}

sml_status sml_check_against_worst(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                                   const void *x, const void *dy, const double *want,
                                   const void *out, sml_check_report *r, sml_check_elem *worst,
                                   int k, int *nworst) {
    if (rows > 0 && cols > 0 && !want) return SML_ERR_NULL_POINTER;
    if (k < 0) return SML_ERR_INVALID_ARG;
    return check_impl(op, dt, rows, cols, ld, x, dy, want, out, NULL, r, worst, k, nworst, NULL,
                      NULL);
}

sml_status sml_check_against_each(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                                  const void *x, const void *dy, const double *want,
                                  const void *out, sml_check_report *r, sml_check_miss_fn miss,
                                  void *ctx) {
    if (rows > 0 && cols > 0 && !want) return SML_ERR_NULL_POINTER;
    return check_impl(op, dt, rows, cols, ld, x, dy, want, out, NULL, r, NULL, 0, NULL, miss, ctx);
}

sml_status sml_check_dense_run(const sml_check_dense *p, sml_check_report *r,
                               sml_check_miss_fn miss, void *ctx) {
    if (!p) return SML_ERR_NULL_POINTER;
    if (p->rows > 0 && p->cols > 0 && !p->want) return SML_ERR_NULL_POINTER;
    return check_impl(p->op, p->dt, p->rows, p->cols, p->cols, NULL, NULL, p->want, p->out, p, r,
                      NULL, 0, NULL, miss, ctx);
}
