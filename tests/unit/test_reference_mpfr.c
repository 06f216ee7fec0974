/* test_reference_mpfr.c: the double-precision reference against MPFR at 200 bits, on random
 * and extreme rows up to 2^22 columns, for both softmax algorithms, log-softmax and both
 * backward ops. Reports the worst relative error and asserts it is far below an fp32 ulp
 * (below u / 1000, u = 2^-24), which is what lets the checker treat the reference as exact.
 *
 * Built without MPFR (optional dependency), it reports itself skipped. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit_case.h"

#ifndef SML_HAVE_MPFR
int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("SKIP test_reference_mpfr: built without MPFR (install libmpfr-dev and reconfigure)\n");
    return SML_TEST_SKIP;
}
#else
#include <mpfr.h>

#include "reference/reference.h"

#define PREC  200
#define LIMIT (0x1p-24 / 1000.0)

/* The worst error seen per (op, algorithm), for the summary. */
enum { A_NAIVE, A_ONLINE, A_LOG, A_BWD, A_LOG_BWD, A_COUNT };
static const char *const A_NAMES[A_COUNT] = {"softmax (naive)", "softmax (online)", "log_softmax",
                                             "softmax_bwd", "log_softmax_bwd"};
static double WORST[A_COUNT], CASE_WORST[A_COUNT];
static char WORST_AT[A_COUNT][96];

/* A row is K distinct float values, each column naming one of them (K = n for ordinary
 * rows). MPFR then needs exp only K times, while the reference still sums all n columns in
 * order, which is what its accuracy depends on. */
typedef struct row {
    int64_t n, k;
    double *v;      /* [k] distinct values (floats) */
    int64_t *idx;   /* [n] which value each column holds */
    int64_t *count; /* [k] */
    const char *name;
} row;

static void row_alloc(row *r, int64_t n, int64_t k, const char *name) {
    r->n = n;
    r->k = k;
    r->v = malloc((size_t)k * sizeof *r->v);
    r->idx = malloc((size_t)n * sizeof *r->idx);
    r->count = calloc((size_t)k, sizeof *r->count);
    r->name = name;
}

static void row_finish(row *r) {
    for (int64_t j = 0; j < r->n; j++) r->count[r->idx[j]]++;
}

static void row_free(row *r) {
    free(r->v);
    free(r->idx);
    free(r->count);
}

static void note(int a, double err, const row *r) {
    if (err > CASE_WORST[a]) CASE_WORST[a] = err;
    if (err > WORST[a]) {
        WORST[a] = err;
        snprintf(WORST_AT[a], sizeof WORST_AT[a], "%s, n = %lld", r->name, (long long)r->n);
    }
}

static double rel_err(double got, mpfr_t want) {
    static mpfr_t d; /* scratch, made once: this runs for millions of columns */
    static int ready = 0;
    if (!ready) {
        mpfr_init2(d, PREC);
        ready = 1;
    }
    double w = mpfr_get_d(want, MPFR_RNDN);
    if (w == 0.0 || fabs(w) < 1e-290) return got == 0.0 || fabs(got) < 1e-290 ? 0.0 : INFINITY;
    mpfr_set_d(d, got, MPFR_RNDN);
    mpfr_sub(d, d, want, MPFR_RNDN);
    mpfr_div(d, d, want, MPFR_RNDN);
    return fabs(mpfr_get_d(d, MPFR_RNDN));
}

/* Forward ops: exact-ish softmax and log-softmax of the distinct values, then compare
 * every column of the references. */
static void forward(row *r) {
    int64_t n = r->n, k = r->k;
    double *x = malloc((size_t)n * 2 * sizeof *x), *y = x + n;
    for (int64_t j = 0; j < n; j++) x[j] = r->v[r->idx[j]];
    double m = -INFINITY;
    for (int64_t i = 0; i < k; i++)
        if (r->v[i] > m) m = r->v[i];
    /* rest = s - 1, summed without the 1 so that log1p keeps log(s) accurate when the other
     * terms are below 2^-200 of it (a peaked row): 200 bits alone would round s to 1. */
    mpfr_t *e = malloc((size_t)k * sizeof *e), s, t, l, rest;
    mpfr_inits2(PREC, s, t, l, rest, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    /* rest starts at 0, not at -1: a -1 start rounds away every tiny term added before the
     * max value's own count cancels it (seed 0x6b026d0a03247 lost a 3.9e-286 that way). */
    mpfr_set_zero(rest, 1);
    int max_seen = 0; /* the max value may be held by several distinct entries: drop one 1 */
    for (int64_t i = 0; i < k; i++) {
        mpfr_init2(e[i], PREC);
        mpfr_set_d(e[i], r->v[i], MPFR_RNDN);
        mpfr_sub_d(e[i], e[i], m, MPFR_RNDN);
        mpfr_exp(e[i], e[i], MPFR_RNDN);
        mpfr_mul_si(t, e[i], (long)r->count[i], MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
        if (r->v[i] == m)
            mpfr_add_si(rest, rest, r->count[i] - (max_seen++ ? 0 : 1), MPFR_RNDN);
        else
            mpfr_add(rest, rest, t, MPFR_RNDN);
    }
    mpfr_log1p(l, rest, MPFR_RNDN);
    mpfr_t *want = malloc((size_t)k * sizeof *want), *lwant = malloc((size_t)k * sizeof *lwant);
    for (int64_t i = 0; i < k; i++) {
        mpfr_init2(want[i], PREC);
        mpfr_init2(lwant[i], PREC);
        mpfr_div(want[i], e[i], s, MPFR_RNDN);
        mpfr_set_d(lwant[i], r->v[i], MPFR_RNDN);
        mpfr_sub_d(lwant[i], lwant[i], m, MPFR_RNDN);
        mpfr_sub(lwant[i], lwant[i], l, MPFR_RNDN);
    }
    for (int a = A_NAIVE; a <= A_LOG; a++) {
        if (a == A_NAIVE)
            sml_ref_softmax_naive(x, y, n);
        else if (a == A_ONLINE)
            sml_ref_softmax_online(x, y, n);
        else
            sml_ref_log_softmax(x, y, n);
        double worst = 0.0;
        /* Columns holding the same logit mostly get the same output: judge each pair once. */
        double *seen = malloc((size_t)k * sizeof *seen);
        for (int64_t i = 0; i < k; i++) seen[i] = NAN;
        for (int64_t j = 0; j < n; j++) {
            if (y[j] == seen[r->idx[j]]) continue;
            seen[r->idx[j]] = y[j];
            double err = rel_err(y[j], a == A_LOG ? lwant[r->idx[j]] : want[r->idx[j]]);
            if (err > worst) worst = err;
        }
        free(seen);
        note(a, worst, r);
    }
    for (int64_t i = 0; i < k; i++) mpfr_clears(e[i], want[i], lwant[i], (mpfr_ptr)0);
    mpfr_clears(s, t, l, rest, (mpfr_ptr)0);
    free(e);
    free(want);
    free(lwant);
    free(x);
}

/* Backward ops on y = the fp32-rounded forward output and dy normal in fp32. The error is
 * measured against the natural scale of each element (|y_i| (|dy_i| + |dot|), or
 * |dy_i| + exp(y_i) |S|), since under cancellation dx_i is far smaller than its inputs and
 * any rounding of dy_i - dot is large relative to it; fp32 kernels are judged on that scale. */
static void backward(row *r, sml_rng *g) {
    int64_t n = r->n;
    double *x = malloc((size_t)n * 4 * sizeof *x), *y = x + n, *dy = x + 2 * n, *dx = x + 3 * n;
    for (int64_t j = 0; j < n; j++) x[j] = r->v[r->idx[j]];
    for (int log_form = 0; log_form < 2; log_form++) {
        if (log_form)
            sml_ref_log_softmax(x, y, n);
        else
            sml_ref_softmax_naive(x, y, n);
        for (int64_t j = 0; j < n; j++) {
            y[j] = (double)(float)y[j];
            dy[j] = (double)(float)((j & 1) ? sml_rng_normal(g) : 1.0 + 1e-3 * sml_rng_normal(g));
        }
        if (log_form)
            sml_ref_log_softmax_backward(y, dy, dx, n);
        else
            sml_ref_softmax_backward(y, dy, dx, n);
        mpfr_t acc, p, d;
        mpfr_inits2(PREC, acc, p, d, (mpfr_ptr)0);
        mpfr_set_zero(acc, 1);
        for (int64_t j = 0; j < n; j++) {
            if (log_form)
                mpfr_set_d(p, dy[j], MPFR_RNDN);
            else {
                mpfr_set_d(p, dy[j], MPFR_RNDN);
                mpfr_mul_d(p, p, y[j], MPFR_RNDN);
            }
            mpfr_add(acc, acc, p, MPFR_RNDN);
        }
        double accd = fabs(mpfr_get_d(acc, MPFR_RNDN)), worst = 0.0;
        /* exp(y) once per distinct logit (y_j depends on the logit only). */
        mpfr_t *ey = NULL;
        if (log_form) {
            ey = malloc((size_t)r->k * sizeof *ey);
            for (int64_t i = 0; i < r->k; i++) mpfr_init2(ey[i], PREC);
            char *done = calloc((size_t)r->k, 1);
            for (int64_t j = 0; j < n; j++)
                if (!done[r->idx[j]]) {
                    done[r->idx[j]] = 1;
                    mpfr_set_d(ey[r->idx[j]], y[j], MPFR_RNDN);
                    mpfr_exp(ey[r->idx[j]], ey[r->idx[j]], MPFR_RNDN);
                }
            free(done);
        }
        for (int64_t j = 0; j < n; j++) {
            double scale;
            if (log_form) { /* dy_j - exp(y_j) S */
                mpfr_set(p, ey[r->idx[j]], MPFR_RNDN);
                scale = fabs(dy[j]) + mpfr_get_d(p, MPFR_RNDN) * accd;
                mpfr_mul(p, p, acc, MPFR_RNDN);
                mpfr_d_sub(p, dy[j], p, MPFR_RNDN);
            } else { /* y_j (dy_j - dot) */
                mpfr_d_sub(p, dy[j], acc, MPFR_RNDN);
                mpfr_mul_d(p, p, y[j], MPFR_RNDN);
                scale = fabs(y[j]) * (fabs(dy[j]) + accd);
            }
            if (scale < 1e-290) continue;
            mpfr_set_d(d, dx[j], MPFR_RNDN);
            mpfr_sub(d, d, p, MPFR_RNDN);
            double err = fabs(mpfr_get_d(d, MPFR_RNDN)) / scale;
            if (err > worst) worst = err;
        }
        note(log_form ? A_LOG_BWD : A_BWD, worst, r);
        if (ey) {
            for (int64_t i = 0; i < r->k; i++) mpfr_clear(ey[i]);
            free(ey);
        }
        mpfr_clears(acc, p, d, (mpfr_ptr)0);
    }
    free(x);
}

/* The ascending ramp x_j = j d over 2^22 columns, where the online reference rescales its
 * sum at every column. exp(x_j - max) = R^(n-1-j) with R = exp(-d): MPFR gets every term
 * by multiplication, two passes, no per-column storage. */
static void forward_ramp(int64_t n, double d, row *r) {
    double *x = malloc((size_t)n * 3 * sizeof *x), *y = x + n, *z = x + 2 * n, *ly = x;
    for (int64_t j = 0; j < n; j++) x[j] = (double)j * d;
    sml_ref_softmax_naive(x, y, n);
    sml_ref_softmax_online(x, z, n);
    mpfr_t R, e, s, w, l;
    mpfr_inits2(PREC, R, e, s, w, l, (mpfr_ptr)0);
    mpfr_set_d(R, -d, MPFR_RNDN);
    mpfr_exp(R, R, MPFR_RNDN);
    mpfr_set_ui(e, 1, MPFR_RNDN);
    mpfr_set_zero(s, 1);
    for (int64_t j = n - 1; j >= 0; j--) {
        mpfr_add(s, s, e, MPFR_RNDN);
        mpfr_mul(e, e, R, MPFR_RNDN);
    }
    mpfr_log(l, s, MPFR_RNDN);
    sml_ref_log_softmax(x, ly, n); /* x is no longer needed: log-softmax in place over it */
    double wn = 0.0, wo = 0.0, wl = 0.0;
    mpfr_set_ui(e, 1, MPFR_RNDN);
    for (int64_t j = n - 1; j >= 0; j--) {
        mpfr_div(w, e, s, MPFR_RNDN);
        wn = fmax(wn, rel_err(y[j], w));
        wo = fmax(wo, rel_err(z[j], w));
        mpfr_set_d(w, (double)(j - (n - 1)) * d, MPFR_RNDN); /* exact: x_j - max */
        mpfr_sub(w, w, l, MPFR_RNDN);
        wl = fmax(wl, rel_err(ly[j], w));
        mpfr_mul(e, e, R, MPFR_RNDN);
    }
    note(A_NAIVE, wn, r);
    note(A_ONLINE, wo, r);
    note(A_LOG, wl, r);
    mpfr_clears(R, e, s, w, l, (mpfr_ptr)0);
    free(x);
}

static double f32(double v) { return (double)(float)v; }

/* The rows: kind 0..; each case builds one, runs every op, and frees it. */
enum {
    R_NORMAL_SHORT,
    R_NORMAL_64K,
    R_WIDE,
    R_OFFSET,
    R_MASKED,
    R_PEAKED,
    R_BIG_REPEAT,
    R_BIG_RAMP,
    R_BIG_EQUAL,
    R_COUNT
};

static void build(row *r, int kind, sml_rng *g) {
    int64_t n, k;
    switch (kind) {
    case R_NORMAL_SHORT:
        n = 1 + (int64_t)sml_rng_below(g, 1000);
        row_alloc(r, n, n, "normal(3), short");
        for (int64_t j = 0; j < n; j++) {
            r->v[j] = f32(3.0 * sml_rng_normal(g));
            r->idx[j] = j;
        }
        break;
    case R_NORMAL_64K:
        n = 65536;
        row_alloc(r, n, n, "normal(3)");
        for (int64_t j = 0; j < n; j++) {
            r->v[j] = f32(3.0 * sml_rng_normal(g));
            r->idx[j] = j;
        }
        break;
    case R_WIDE:
        n = 65536;
        row_alloc(r, n, n, "normal(1e4): almost everything underflows");
        for (int64_t j = 0; j < n; j++) {
            r->v[j] = f32(1e4 * sml_rng_normal(g));
            r->idx[j] = j;
        }
        break;
    case R_OFFSET:
        n = 65536;
        row_alloc(r, n, n, "1e4 + normal(1e-2): tiny spread, large offset");
        for (int64_t j = 0; j < n; j++) {
            r->v[j] = f32(1e4 + 1e-2 * sml_rng_normal(g));
            r->idx[j] = j;
        }
        break;
    case R_MASKED:
        n = 65536;
        row_alloc(r, n, n, "normal(3) with 90% -inf");
        for (int64_t j = 0; j < n; j++) {
            r->v[j] =
                j == 0 || sml_rng_below(g, 10) == 0 ? f32(3.0 * sml_rng_normal(g)) : -INFINITY;
            r->idx[j] = j;
        }
        break;
    case R_PEAKED:
        n = 65536;
        row_alloc(r, n, n, "one logit 40 above the rest");
        for (int64_t j = 0; j < n; j++) {
            r->v[j] = j == 77 ? 40.0 : f32(sml_rng_normal(g));
            r->idx[j] = j;
        }
        break;
    case R_BIG_REPEAT:
        n = (int64_t)1 << 22, k = 4096;
        row_alloc(r, n, k, "2^22 columns of 4096 distinct normal(3) values");
        for (int64_t i = 0; i < k; i++) r->v[i] = f32(3.0 * sml_rng_normal(g));
        for (int64_t j = 0; j < n; j++) r->idx[j] = (int64_t)sml_rng_below(g, (uint64_t)k);
        break;
    case R_BIG_RAMP: /* the columns are generated by forward_ramp; nothing stored */
        row_alloc(r, 0, 1, "2^22 columns, ascending ramp (a rescale per column)");
        return;
    default:
        n = (int64_t)1 << 22, k = 1;
        row_alloc(r, n, k, "2^22 equal columns");
        r->v[0] = 7.25;
        for (int64_t j = 0; j < n; j++) r->idx[j] = 0;
        break;
    }
    row_finish(r);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_reference_mpfr", argc, argv)) return 2;
    uint64_t s;
    for (int kind = 0; kind < R_COUNT; kind++) {
        if (!unit_case(&u, kind, &s)) continue;
        sml_rng g;
        sml_rng_seed(&g, s);
        row r;
        build(&r, kind, &g);
        memset(CASE_WORST, 0, sizeof CASE_WORST);
        if (kind == R_BIG_RAMP) {
            r.n = (int64_t)1 << 22;
            forward_ramp(r.n, 0x1p-20, &r);
        } else {
            forward(&r);
            if (r.n <= 65536 || kind == R_BIG_REPEAT) backward(&r, &g);
        }
        double case_worst = 0.0;
        int which = 0;
        for (int a = 0; a < A_COUNT; a++)
            if (CASE_WORST[a] > case_worst) {
                case_worst = CASE_WORST[a];
                which = a;
            }
        UNIT_EXPECT(&u, case_worst < LIMIT, "%s on %s (n = %lld): error %.3g, limit %.3g",
                    A_NAMES[which], r.name, (long long)r.n, case_worst, LIMIT);
        row_free(&r);
    }
    printf("worst error of the double reference against MPFR (%d bits), limit u/1000 = %.3g:\n",
           PREC, LIMIT);
    for (int a = 0; a < A_COUNT; a++)
        printf("  %-17s %.3g  (%s)\n", A_NAMES[a], WORST[a], WORST_AT[a][0] ? WORST_AT[a] : "-");
    printf("  (forward: relative; backward: relative to |y|(|dy| + |dot|) or |dy| + exp(y)|S|)\n");
    mpfr_free_cache();
    return sml_tally_finish(&u.tally);
}
#endif
