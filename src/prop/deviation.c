/* deviation.c: see deviation.h. */
#include "prop/deviation.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

/* The exceptions, in bit order: the ops and dtypes each can apply to, and its words. */
typedef struct exception_rule {
    unsigned bit, ops, dtypes;
    const char *words;
} exception_rule;

#define OPS_BWD ((1u << SML_SOFTMAX_BWD) | (1u << SML_LOG_SOFTMAX_BWD))
static const exception_rule EXCEPTIONS[] = {
    {SML_DEV_ALL_NEG_INF_ROW, SML_OPS_FWD, SML_DTYPES_ALL, "all -inf rows give 0 / -inf"},
    {SML_DEV_LOG_SOFTMAX_SHIFT_BITS, 1u << SML_LOG_SOFTMAX, SML_DTYPES_ALL,
     "log_softmax not bitwise shift-invariant"},
    {SML_DEV_BWD_16BIT_OVERFLOW, OPS_BWD, (1u << SML_F16) | (1u << SML_BF16),
     "16-bit backward overflows to inf/NaN on huge dy"},
    {SML_DEV_LOWEST_MAX_ROW, SML_OPS_FWD, SML_DTYPES_ALL,
     "rows whose max is the lowest finite value are not held"},
    {SML_DEV_LOG_SOFTMAX_LSE_ROUNDED, 1u << SML_LOG_SOFTMAX, SML_DTYPES_ALL,
     "log_softmax off by 1 fp32 ulp of |max| + log(cols)"},
    {SML_DEV_ROW_BITS_BY_ADDRESS, SML_OPS_ALL, SML_DTYPES_ALL,
     "a row's bits depend on its place in the batch"},
    {SML_DEV_BWD_SUM_CLASS, OPS_BWD, SML_DTYPES_ALL,
     "backward NaN for an infinity where a partial sum overflows first"},
};
/* The exceptions that widen a whole row's value bound (sml_dev_row_slack). */
#define ROW_EXCEPTIONS (SML_DEV_LOWEST_MAX_ROW | SML_DEV_LOG_SOFTMAX_LSE_ROUNDED)
#define N_EXCEPTIONS   (sizeof EXCEPTIONS / sizeof EXCEPTIONS[0])

static void cat(char *buf, size_t n, const char *s) {
    size_t at = strlen(buf);
    if (at + 1 < n) snprintf(buf + at, n - at, "%s", s);
}

/* " <= 1.5 ulp" / " <= 2500x the bound" / " <= 1.5 ulp or 3x the bound" */
static void figure(char *buf, size_t n, double ulps, double factor) {
    char f[96] = " <=";
    size_t at = strlen(f);
    if (ulps > 0)
        at += (size_t)snprintf(f + at, sizeof f - at, " %g ulp%s", ulps, factor > 0 ? " or" : "");
    if (factor > 0) snprintf(f + at, sizeof f - at, " %gx the bound", factor);
    cat(buf, n, f);
}

int sml_dev_terms_get(const sml_deviation *d, sml_op op, sml_dtype dt, sml_dev_terms *t) {
    memset(t, 0, sizeof *t);
    t->op = op;
    t->dt = dt;
    snprintf(t->text, sizeof t->text, "the contract");
    if (!d || (unsigned)op >= SML_OP_COUNT || (unsigned)dt >= SML_DTYPE_COUNT) return 0;
    t->ulps = d->ulps[op][dt];
    t->factor = d->bound_factor[op][dt];
    for (size_t i = 0; i < N_EXCEPTIONS; i++)
        if ((d->exceptions & EXCEPTIONS[i].bit) && (EXCEPTIONS[i].ops >> op & 1u) &&
            (EXCEPTIONS[i].dtypes >> dt & 1u))
            t->exceptions |= EXCEPTIONS[i].bit;
    if (!(t->ulps > 0) && !(t->factor > 0) && !t->exceptions) return 0;
    t->text[0] = 0;
    if (t->ulps > 0 || t->factor > 0) {
        snprintf(t->text, sizeof t->text, "%s %s", sml_op_name(op), sml_dtype_name(dt));
        figure(t->text, sizeof t->text, t->ulps, t->factor);
    }
    for (size_t i = 0; i < N_EXCEPTIONS; i++)
        if (t->exceptions & EXCEPTIONS[i].bit) {
            cat(t->text, sizeof t->text, t->text[0] ? "; " : "");
            cat(t->text, sizeof t->text, EXCEPTIONS[i].words);
        }
    return 1;
}

int sml_dev_declared(const sml_deviation *d) {
    if (!d) return 0;
    if (d->exceptions) return 1;
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
            if (d->ulps[op][dt] > 0 || d->bound_factor[op][dt] > 0) return 1;
    return 0;
}

void sml_dev_describe(const sml_deviation *d, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    if (!sml_dev_declared(d)) {
        snprintf(buf, n, "none");
        return;
    }
    /* One clause per group of ops with the same figures and per figure, its ops and dtypes
     * joined: "softmax fp16,bf16 <= 1.5 ulp", "every op fp16 <= 2 ulp". */
    unsigned ops_done = 0;
    for (int op = 0; op < SML_OP_COUNT; op++) {
        if (ops_done >> op & 1u) continue;
        unsigned same = 0;
        for (int o2 = op; o2 < SML_OP_COUNT; o2++)
            if (!memcmp(d->ulps[o2], d->ulps[op], sizeof d->ulps[op]) &&
                !memcmp(d->bound_factor[o2], d->bound_factor[op], sizeof d->bound_factor[op]))
                same |= 1u << o2;
        ops_done |= same;
        unsigned done = 0;
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            double u = d->ulps[op][dt], f = d->bound_factor[op][dt];
            if ((done >> dt & 1u) || !(u > 0 || f > 0)) continue;
            cat(buf, n, buf[0] ? "; " : "");
            if (same == SML_OPS_ALL)
                cat(buf, n, "every op");
            else
                for (int o2 = op; o2 < SML_OP_COUNT; o2++)
                    if (same >> o2 & 1u) {
                        if (o2 != op) cat(buf, n, ",");
                        cat(buf, n, sml_op_name((sml_op)o2));
                    }
            for (int d2 = dt; d2 < SML_DTYPE_COUNT; d2++)
                if (d->ulps[op][d2] == u && d->bound_factor[op][d2] == f) {
                    cat(buf, n, d2 == dt ? " " : ",");
                    cat(buf, n, sml_dtype_name((sml_dtype)d2));
                    done |= 1u << d2;
                }
            figure(buf, n, u, f);
        }
    }
    for (size_t i = 0; i < N_EXCEPTIONS; i++)
        if (d->exceptions & EXCEPTIONS[i].bit) {
            cat(buf, n, buf[0] ? "; " : "");
            cat(buf, n, EXCEPTIONS[i].words);
        }
}

const char *sml_dev_words_only_note(const char *label, char *buf, size_t n) {
    snprintf(buf, n,
             "its known_deviation text (\"%.160s\") declares nothing the checker can apply, so it "
             "excuses nothing: declare the deviation's bounds in sml_kernel.deviation "
             "(include/softmax_lab.h; plugin ABI 3), or deviation= in Python's register()",
             label ? label : "");
    return buf;
}

double sml_dev_row_slack(const sml_dev_terms *t, const double *x, int64_t cols) {
    if (!t || !(t->exceptions & ROW_EXCEPTIONS) || cols <= 0) return 0.0;
    double m = -INFINITY;
    for (int64_t j = 0; j < cols; j++) {
        if (isnan(x[j]) || x[j] == INFINITY) return 0.0; /* a NaN row, a +inf row: specials */
        m = fmax(m, x[j]);
    }
    if ((t->exceptions & SML_DEV_LOWEST_MAX_ROW) && m == -sml_dtype_max(t->dt)) return INFINITY;
    if ((t->exceptions & SML_DEV_LOG_SOFTMAX_LSE_ROUNDED) && isfinite(m))
        return sml_ulp(SML_F32, fabs(m) + log((double)cols));
    return 0.0;
}

double sml_dev_allowed(const sml_dev_terms *t, sml_dtype dt, double allowed, double want,
                       double slack) {
    double a = allowed;
    if (!t || !isfinite(want)) return a;
    if (t->ulps > 0) a = fmax(a, t->ulps * sml_ulp(dt, want));
    if (t->factor > 0) a = fmax(a, t->factor * allowed);
    if (slack > 0) a = fmax(a, allowed + slack);
    return a;
}

static int all_neg_inf(const double *x, int64_t cols) {
    for (int64_t j = 0; j < cols; j++)
        if (x[j] != -INFINITY) return 0;
    return cols > 0;
}

/* max|dy_j| + sum|dy_j y_j| (softmax_bwd) or + sum|dy_j| (log_softmax_bwd). */
static double bwd_magnitude(sml_op op, const double *y, const double *dy, int64_t cols) {
    double big = 0.0, sum = 0.0;
    for (int64_t j = 0; j < cols; j++) {
        big = fmax(big, fabs(dy[j]));
        sum += op == SML_SOFTMAX_BWD ? fabs(dy[j] * y[j]) : fabs(dy[j]);
    }
    return big + sum;
}

/* Whether a plain fp32 sum of the row's terms (dy_j y_j, or dy_j) can lose its class: the
 * infinite terms are of one sign only, and the finite terms of the other sign add up in
 * magnitude to FLT_MAX or more, so a partial sum of them can overflow to the other infinity
 * before it meets one, and -inf + inf is NaN. */
static int bwd_class_can_be_lost(sml_op op, const double *y, const double *dy, int64_t cols) {
    int pinf = 0, ninf = 0;
    double pos = 0.0, neg = 0.0;
    for (int64_t j = 0; j < cols; j++) {
        const double t = op == SML_SOFTMAX_BWD ? dy[j] * y[j] : dy[j];
        if (isnan(t)) return 0;
        if (t == INFINITY)
            pinf = 1;
        else if (t == -INFINITY)
            ninf = 1;
        else if (t > 0)
            pos += t;
        else
            neg -= t;
    }
    if (pinf == ninf) return 0; /* no infinity, or both: the class is finite or NaN */
    return (pinf ? neg : pos) >= FLT_MAX;
}

void sml_dev_row_of(const sml_dev_terms *t, const double *x, const double *dy, int64_t cols,
                    sml_dev_row *r) {
    memset(r, 0, sizeof *r);
    if (!t) return;
    if (t->exceptions & SML_DEV_ALL_NEG_INF_ROW) r->all_neg_inf = all_neg_inf(x, cols);
    if ((t->exceptions & SML_DEV_BWD_16BIT_OVERFLOW) && dy)
        r->magnitude_too_big = !(bwd_magnitude(t->op, x, dy, cols) < sml_dtype_max(t->dt));
    if ((t->exceptions & SML_DEV_BWD_SUM_CLASS) && dy)
        r->class_can_be_lost = bwd_class_can_be_lost(t->op, x, dy, cols);
}

int sml_dev_special_excused_in(const sml_dev_terms *t, const sml_dev_row *r, int backward,
                               double got, double want) {
    if (!t) return 0;
    if ((t->exceptions & SML_DEV_ALL_NEG_INF_ROW) && isnan(want) && r->all_neg_inf)
        return t->op == SML_SOFTMAX ? got == 0.0 : got == -INFINITY;
    if ((t->exceptions & SML_DEV_BWD_16BIT_OVERFLOW) && backward && !isfinite(got) &&
        r->magnitude_too_big)
        return 1;
    if ((t->exceptions & SML_DEV_BWD_SUM_CLASS) && backward && isnan(got) && isinf(want))
        return r->class_can_be_lost;
    return 0;
}

int sml_dev_special_excused(const sml_dev_terms *t, const double *x, const double *dy, int64_t cols,
                            double got, double want) {
    sml_dev_row r;
    sml_dev_row_of(t, x, dy, cols, &r);
    return sml_dev_special_excused_in(t, &r, dy != NULL, got, want);
}

int sml_dev_report_pass(const sml_dev_report *d) { return d->excused == d->misses; }

typedef struct judge_ctx {
    const sml_dev_terms *t;
    sml_op op;
    sml_dtype dt;
    int64_t cols, ld;
    const void *x, *dy;
    double *xr, *dyr; /* room for the current row as doubles (strided inputs) */
    int64_t row;
    double slack;      /* the current row's sml_dev_row_slack */
    sml_dev_row facts; /* ... and its facts for special values, once `has_facts` */
    int has_facts;
    sml_dev_report *d;
    const double *xd, *dyd; /* the whole problem as doubles, dense (sml_dev_check_dense), or NULL */
    const double *cx, *cdy; /* the current row as doubles (found once per row with a miss) */
} judge_ctx;

static void load_row(judge_ctx *c, int64_t row) {
    if (c->row == row) return;
    c->row = row;
    if (c->xd) {
        c->cx = c->xd + row * c->cols;
        c->cdy = c->dyd ? c->dyd + row * c->cols : NULL;
    } else {
        sml_load_n(c->dt, c->x, row * c->ld, c->cols, c->xr);
        if (c->dyr) sml_load_n(c->dt, c->dy, row * c->ld, c->cols, c->dyr);
        c->cx = c->xr;
        c->cdy = c->dyr;
    }
    c->slack = sml_op_is_backward(c->op) ? 0.0 : sml_dev_row_slack(c->t, c->cx, c->cols);
    c->has_facts = 0;
}

static void not_covered(judge_ctx *c, const sml_check_elem *e, int special) {
    sml_dev_report *d = c->d;
    /* Keep the worst: a special-value mismatch first, then the largest error in ulps. */
    int worse = d->row < 0 || (special && !d->special) ||
                (special == d->special && !special && e->ulps > d->ulps);
    if (!worse) return;
    d->row = e->row;
    d->col = e->col;
    d->got = e->got;
    d->want = e->want;
    d->ulps = e->ulps;
    d->ratio = e->ratio;
    d->special = special;
}

static void judge_miss(void *ctx, const sml_check_elem *e) {
    judge_ctx *c = ctx;
    sml_dev_report *d = c->d;
    const sml_dev_terms *t = c->t;
    int special = !(isfinite(e->got) && isfinite(e->want));
    int ok = 0;
    if (t && special) {
        load_row(c, e->row);
        if (!c->has_facts) sml_dev_row_of(t, c->cx, c->cdy, c->cols, &c->facts);
        c->has_facts = 1;
        ok = sml_dev_special_excused_in(t, &c->facts, c->cdy != NULL, e->got, e->want);
    } else if (t) {
        ok = (t->ulps > 0 && e->ulps <= t->ulps) || (t->factor > 0 && e->ratio <= t->factor);
        if (!ok && (t->exceptions & ROW_EXCEPTIONS)) {
            load_row(c, e->row);
            ok = c->slack > 0 && fabs(e->got - e->want) <= e->allowed + c->slack;
        }
    }
    if (!ok) {
        not_covered(c, e, special);
        return;
    }
    d->excused++;
    if (!special) {
        d->worst_ulps = fmax(d->worst_ulps, e->ulps);
        d->worst_ratio = fmax(d->worst_ratio, e->ratio);
    }
}

static void report_init(sml_dev_report *d) {
    memset(d, 0, sizeof *d);
    d->row = d->col = -1;
}

sml_status sml_dev_check_against(const sml_dev_terms *t, sml_op op, sml_dtype dt, int64_t rows,
                                 int64_t cols, int64_t ld, const void *x, const void *dy,
                                 const double *want, const void *out, sml_check_report *r,
                                 sml_dev_report *d) {
    report_init(d);
    int bwd = sml_op_is_backward(op);
    size_t n = (size_t)(cols > 0 ? cols : 1);
    judge_ctx c = {.t = t,
                   .op = op,
                   .dt = dt,
                   .cols = cols,
                   .ld = ld,
                   .x = x,
                   .dy = bwd ? dy : NULL,
                   .xr = malloc(n * sizeof(double)),
                   .dyr = bwd ? malloc(n * sizeof(double)) : NULL,
                   .row = -1,
                   .d = d};
    if (!c.xr || (bwd && !c.dyr)) {
        free(c.xr);
        free(c.dyr);
        return SML_ERR_OUT_OF_MEMORY;
    }
    sml_status s =
        sml_check_against_each(op, dt, rows, cols, ld, x, dy, want, out, r, judge_miss, &c);
    free(c.xr);
    free(c.dyr);
    d->misses = s == SML_OK ? r->bad : 0;
    return s;
}

sml_status sml_dev_check_dense(const sml_dev_terms *t, const sml_check_dense *p,
                               sml_check_report *r, sml_dev_report *d) {
    report_init(d);
    int bwd = sml_op_is_backward(p->op);
    judge_ctx c = {.t = t,
                   .op = p->op,
                   .dt = p->dt,
                   .cols = p->cols,
                   .ld = p->cols,
                   .row = -1,
                   .d = d,
                   .xd = p->x,
                   .dyd = bwd ? p->dy : NULL};
    sml_status s = sml_check_dense_run(p, r, judge_miss, &c);
    d->misses = s == SML_OK ? r->bad : 0;
    return s;
}

void sml_dev_report_merge(sml_dev_report *a, const sml_dev_report *b, int64_t row_offset) {
    a->misses += b->misses;
    a->excused += b->excused;
    a->worst_ulps = fmax(a->worst_ulps, b->worst_ulps);
    a->worst_ratio = fmax(a->worst_ratio, b->worst_ratio);
    if (b->row < 0) return;
    int worse = a->row < 0 || (b->special && !a->special) ||
                (b->special == a->special && !b->special && b->ulps > a->ulps);
    if (!worse) return;
    int64_t row = a->row;
    *a = (sml_dev_report){a->misses, a->excused, a->worst_ulps, a->worst_ratio, row,       b->col,
                          b->got,    b->want,    b->ulps,       b->ratio,       b->special};
    a->row = b->row + row_offset;
}

void sml_dev_report_why(const sml_dev_report *d, const sml_dev_terms *t, char *buf, size_t n) {
    const char *terms = t ? t->text : "the contract";
    if (d->row < 0)
        snprintf(buf, n, "within its declared deviation (%s): %lld of %lld misses excused", terms,
                 (long long)d->excused, (long long)d->misses);
    else if (d->special)
        snprintf(buf, n,
                 "outside its declared deviation (%s): row %lld col %lld: got %.9g want %.9g, a "
                 "special value no declared exception covers",
                 terms, (long long)d->row, (long long)d->col, d->got, d->want);
    else
        snprintf(buf, n,
                 "outside its declared deviation (%s): row %lld col %lld: got %.9g want %.9g, %.3g "
                 "ulp, %.3g x the contract's bound",
                 terms, (long long)d->row, (long long)d->col, d->got, d->want, d->ulps, d->ratio);
}
