/* test_reference.c: the double-precision oracle itself: hand-computed rows, the two softmax
 * algorithms agree, log-softmax is the log of softmax, the backward ops are the gradients
 * of the forward ones (central finite differences), compensated sums, sml_ref_run's
 * strides and argument checks, and rows of a million columns. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "reference/reference.h"
#include "unit_case.h"

static double max_rel_diff(const double *a, const double *b, int64_t n, int64_t *at) {
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]), scale = fmax(fabs(a[i]), fabs(b[i]));
        double r = d == 0.0 ? 0.0 : d / scale;
        if (!(r <= worst)) {
            worst = r;
            *at = i;
        }
    }
    return worst;
}

static void hand_rows(unit_run *u) {
    double y[4], dx[4];
    int ok = 1;
    /* softmax([0, log 3]) = [1/4, 3/4]; log_softmax = [log 1/4, log 3/4]. */
    double x1[2] = {0.0, log(3.0)};
    sml_ref_softmax_naive(x1, y, 2);
    ok &= fabs(y[0] - 0.25) < 1e-16 && fabs(y[1] - 0.75) < 1e-16;
    sml_ref_softmax_online(x1, y, 2);
    ok &= fabs(y[0] - 0.25) < 1e-16 && fabs(y[1] - 0.75) < 1e-16;
    sml_ref_log_softmax(x1, y, 2);
    ok &= fabs(y[0] - log(0.25)) < 1e-15 && fabs(y[1] - log(0.75)) < 1e-15;
    /* Equal logits, any size: 1/n each, -log n; shifting by a constant changes nothing. */
    double x2[4] = {1000.0, 1000.0, 1000.0, 1000.0};
    sml_ref_softmax_naive(x2, y, 4);
    ok &= y[0] == 0.25 && y[3] == 0.25;
    sml_ref_log_softmax(x2, y, 4);
    ok &= fabs(y[2] + log(4.0)) < 1e-15;
    /* One element: softmax 1, log-softmax 0, whatever the value. */
    double x3[1] = {-12345.5};
    sml_ref_softmax_naive(x3, y, 1);
    ok &= y[0] == 1.0;
    sml_ref_log_softmax(x3, y, 1);
    ok &= y[0] == 0.0;
    /* [1, 2, 3]: e^-2, e^-1, 1 over their sum. */
    double x4[3] = {1.0, 2.0, 3.0}, s = exp(-2.0) + exp(-1.0) + 1.0;
    sml_ref_softmax_naive(x4, y, 3);
    ok &= fabs(y[0] - exp(-2.0) / s) < 1e-16 && fabs(y[2] - 1.0 / s) < 1e-16;
    /* A peaked row: log-softmax of the max element is -log1p(tiny), not 0. */
    double x5[2] = {0.0, -60.0};
    sml_ref_log_softmax(x5, y, 2);
    ok &= y[0] != 0.0 && fabs(y[0] + exp(-60.0)) < 1e-40 && fabs(y[1] + 60.0) < 1e-13;
    /* Backward: y = [1/4, 3/4], dy = [1, 0]: dot = 1/4, dx = [3/16, -3/16]. */
    double yb[2] = {0.25, 0.75}, dyb[2] = {1.0, 0.0};
    sml_ref_softmax_backward(yb, dyb, dx, 2);
    ok &= dx[0] == 0.1875 && dx[1] == -0.1875;
    /* log-softmax backward: y = log [1/4, 3/4], dy = [1, 0]: S = 1, dx = [3/4, -3/4]. */
    double lyb[2] = {log(0.25), log(0.75)};
    sml_ref_log_softmax_backward(lyb, dyb, dx, 2);
    ok &= fabs(dx[0] - 0.75) < 1e-16 && fabs(dx[1] + 0.75) < 1e-16;
    /* Stats of [0, log 3]: max log 3, sum 1 + 1/3. */
    double m, sum;
    sml_ref_row_stats(x1, 2, &m, &sum);
    ok &= m == log(3.0) && fabs(sum - 4.0 / 3.0) < 1e-16;
    UNIT_EXPECT(u, ok, "a hand-computed row differs from the reference");
}

static void compensated_sum(unit_run *u) {
    double v1[3] = {1e16, 1.0, -1e16};        /* plain summation gives 0 */
    double v2[4] = {1.0, 1e100, 1.0, -1e100}; /* 2 */
    double v3[3] = {1.0, INFINITY, 2.0};
    double v4[3] = {INFINITY, 1.0, -INFINITY};
    double v5[2] = {NAN, 1.0};
    int ok = sml_ref_sum(v1, 3) == 1.0 && sml_ref_sum(v2, 4) == 2.0 &&
             sml_ref_sum(v3, 3) == INFINITY && isnan(sml_ref_sum(v4, 3)) &&
             isnan(sml_ref_sum(v5, 2)) && sml_ref_sum(v1, 0) == 0.0;
    /* A million terms of 0.1: error far below double's 1e-16 relative. */
    int64_t n = 1 << 20;
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = 0.1;
    double s = sml_ref_sum(v, n);
    ok &= fabs(s - 0.1 * (double)n) <= 2e-16 * 0.1 * (double)n;
    free(v);
    UNIT_EXPECT(u, ok, "compensated sum wrong (1e6 x 0.1 gave %.17g)", s);
}

/* Rows of several kinds and lengths, drawn from the case's seed. */
static void random_row(sml_rng *r, double *x, int64_t n, int kind) {
    for (int64_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: x[i] = sml_rng_normal(r); break;
        case 1: x[i] = 1e3 * sml_rng_normal(r); break;        /* huge spread */
        case 2: x[i] = 1e4 + 1e-3 * sml_rng_normal(r); break; /* tiny spread, large offset */
        case 3: x[i] = (double)(float)(30.0 * sml_rng_unit(r)); break;
        default: x[i] = (double)i * 1e-3; break; /* ascending: online rescales every step */
        }
    }
    if (kind == 0 && n > 2) x[sml_rng_below(r, (uint64_t)n)] = -INFINITY;
}

static void naive_vs_online(unit_run *u, uint64_t seed) {
    static const int64_t LENS[] = {1, 2, 3, 7, 32, 33, 1000, 4099, 65536};
    sml_rng r;
    sml_rng_seed(&r, seed);
    double worst = 0.0;
    int64_t at = -1, worst_n = 0;
    int worst_kind = 0;
    for (size_t li = 0; li < sizeof LENS / sizeof LENS[0]; li++) {
        int64_t n = LENS[li];
        double *x = malloc((size_t)n * 3 * sizeof *x), *a = x + n, *b = x + 2 * n;
        for (int kind = 0; kind < 5; kind++) {
            random_row(&r, x, n, kind);
            sml_ref_softmax_naive(x, a, n);
            sml_ref_softmax_online(x, b, n);
            int64_t where = -1;
            double d = max_rel_diff(a, b, n, &where);
            if (!(d <= worst)) {
                worst = d;
                at = where;
                worst_n = n;
                worst_kind = kind;
            }
        }
        free(x);
    }
    printf("  naive vs online: worst relative difference %.3g\n", worst);
    /* Both are double computations of the same value: they agree to many digits. */
    UNIT_EXPECT(u, worst < 1e-11,
                "naive and online softmax differ by %.3g relative (n %lld, kind %d, col %lld)",
                worst, (long long)worst_n, worst_kind, (long long)at);
}

static void log_of_softmax(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    double worst = 0.0;
    for (int rep = 0; rep < 40; rep++) {
        int64_t n = 1 + (int64_t)sml_rng_below(&r, 3000);
        double *x = malloc((size_t)n * 3 * sizeof *x), *y = x + n, *ly = x + 2 * n;
        random_row(&r, x, n, rep % 5);
        sml_ref_softmax_naive(x, y, n);
        sml_ref_log_softmax(x, ly, n);
        for (int64_t i = 0; i < n; i++) {
            if (!(y[i] > DBL_MIN) || !isfinite(ly[i])) continue;
            /* log(y) amplifies y's relative error by 1 absolute: compare absolutely, scaled. */
            double d = fabs(log(y[i]) - ly[i]) / (1.0 + fabs(ly[i]));
            if (d > worst) worst = d;
        }
        free(x);
    }
    printf("  log_softmax vs log(softmax): worst %.3g\n", worst);
    UNIT_EXPECT(u, worst < 1e-13, "log_softmax differs from log(softmax) by %.3g", worst);
}

/* dx from the backward reference equals J^T dy of the forward reference, by central finite
 * differences with step h (truncation ~ h^2, rounding ~ 1e-16 / h). */
static void finite_differences(unit_run *u, uint64_t seed, int log_form) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    double worst = 0.0;
    for (int rep = 0; rep < 30; rep++) {
        int64_t n = 1 + (int64_t)sml_rng_below(&r, 12);
        double x[12], y[12], dy[12], dx[12], yp[12], ym[12];
        for (int64_t i = 0; i < n; i++) {
            x[i] = 2.0 * sml_rng_normal(&r);
            dy[i] = sml_rng_normal(&r);
        }
        if (log_form)
            sml_ref_log_softmax(x, y, n);
        else
            sml_ref_softmax_naive(x, y, n);
        if (log_form)
            sml_ref_log_softmax_backward(y, dy, dx, n);
        else
            sml_ref_softmax_backward(y, dy, dx, n);
        const double h = 1e-5;
        double scale = 0.0;
        for (int64_t j = 0; j < n; j++) scale += fabs(dy[j]);
        for (int64_t j = 0; j < n; j++) {
            double save = x[j];
            x[j] = save + h;
            if (log_form)
                sml_ref_log_softmax(x, yp, n);
            else
                sml_ref_softmax_naive(x, yp, n);
            x[j] = save - h;
            if (log_form)
                sml_ref_log_softmax(x, ym, n);
            else
                sml_ref_softmax_naive(x, ym, n);
            x[j] = save;
            double g = 0.0;
            for (int64_t i = 0; i < n; i++) g += dy[i] * (yp[i] - ym[i]) / (2.0 * h);
            double d = fabs(g - dx[j]) / (scale + 1e-300);
            if (d > worst) worst = d;
        }
    }
    printf("  %s backward vs finite differences: worst %.3g\n",
           log_form ? "log_softmax" : "softmax", worst);
    UNIT_EXPECT(u, worst < 1e-8,
                "%s backward differs from finite differences by %.3g (relative to sum |dy|)",
                log_form ? "log_softmax" : "softmax", worst);
}

/* sml_ref_run on a strided fp16 buffer matches the row functions on the loaded rows, and
 * rejects bad arguments. */
static void run_strided(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    const int64_t rows = 5, cols = 37, ld = 41;
    uint16_t x[5 * 41], dy[5 * 41];
    for (int64_t i = 0; i < rows * ld; i++) {
        x[i] = sml_double_to_half(sml_rng_normal(&r));
        dy[i] = sml_double_to_half(sml_rng_normal(&r));
    }
    double out[5 * 37], row[37], xr[37], dyr[37];
    int bad = 0;
    for (int op = 0; op < SML_OP_COUNT; op++) {
        if (sml_ref_run((sml_op)op, SML_F16, rows, cols, ld, x, dy, out) != SML_OK) {
            bad++;
            continue;
        }
        for (int64_t rr = 0; rr < rows; rr++) {
            for (int64_t j = 0; j < cols; j++) {
                xr[j] = sml_half_to_double(x[rr * ld + j]);
                dyr[j] = sml_half_to_double(dy[rr * ld + j]);
            }
            switch (op) {
            case SML_SOFTMAX: sml_ref_softmax_naive(xr, row, cols); break;
            case SML_LOG_SOFTMAX: sml_ref_log_softmax(xr, row, cols); break;
            case SML_SOFTMAX_BWD: sml_ref_softmax_backward(xr, dyr, row, cols); break;
            default: sml_ref_log_softmax_backward(xr, dyr, row, cols); break;
            }
            for (int64_t j = 0; j < cols; j++)
                if (row[j] != out[rr * cols + j]) bad++;
        }
    }
    bad += sml_ref_run(SML_SOFTMAX, SML_F16, 2, 5, 4, x, NULL, out) != SML_ERR_BAD_STRIDE;
    bad += sml_ref_run(SML_SOFTMAX, SML_F16, -1, 5, 5, x, NULL, out) != SML_ERR_BAD_SHAPE;
    bad += sml_ref_run(SML_SOFTMAX, (sml_dtype)9, 1, 5, 5, x, NULL, out) != SML_ERR_BAD_DTYPE;
    bad += sml_ref_run((sml_op)9, SML_F16, 1, 5, 5, x, NULL, out) != SML_ERR_BAD_OP;
    bad += sml_ref_run(SML_SOFTMAX_BWD, SML_F16, 1, 5, 5, x, NULL, out) != SML_ERR_NULL_POINTER;
    bad += sml_ref_run(SML_SOFTMAX, SML_F16, 1, 5, 5, NULL, NULL, out) != SML_ERR_NULL_POINTER;
    out[0] = 123.0;
    bad += sml_ref_run(SML_SOFTMAX, SML_F16, 0, 5, 5, NULL, NULL, NULL) != SML_OK;
    bad += sml_ref_run(SML_SOFTMAX, SML_F16, 3, 0, 0, x, NULL, out) != SML_OK || out[0] != 123.0;
    UNIT_EXPECT(u, bad == 0, "sml_ref_run: %d mismatches or wrong statuses", bad);
}

/* A row of 2^20 columns: the outputs sum to 1 and exp(log-softmax) sums to 1. */
static void long_row(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    int64_t n = 1 << 20;
    double *x = malloc((size_t)n * 2 * sizeof *x), *y = x + n;
    for (int64_t i = 0; i < n; i++) x[i] = 5.0 * sml_rng_normal(&r);
    sml_ref_softmax_online(x, y, n);
    double s1 = sml_ref_sum(y, n);
    sml_ref_log_softmax(x, y, n);
    for (int64_t i = 0; i < n; i++) y[i] = exp(y[i]);
    double s2 = sml_ref_sum(y, n);
    free(x);
    UNIT_EXPECT(u, fabs(s1 - 1.0) < 1e-13 && fabs(s2 - 1.0) < 1e-13,
                "2^20 columns: softmax sums to 1%+.3g, exp(log_softmax) to 1%+.3g", s1 - 1.0,
                s2 - 1.0);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_reference", argc, argv)) return 2;
    uint64_t s;
    if (unit_case(&u, 0, NULL)) hand_rows(&u);
    if (unit_case(&u, 1, NULL)) compensated_sum(&u);
    if (unit_case(&u, 2, &s)) naive_vs_online(&u, s);
    if (unit_case(&u, 3, &s)) log_of_softmax(&u, s);
    if (unit_case(&u, 4, &s)) finite_differences(&u, s, 0);
    if (unit_case(&u, 5, &s)) finite_differences(&u, s, 1);
    if (unit_case(&u, 6, &s)) run_strided(&u, s);
    if (unit_case(&u, 7, &s)) long_row(&u, s);
    return sml_tally_finish(&u.tally);
}
