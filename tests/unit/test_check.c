/* test_check.c: the contract's checker. It accepts the reference rounded to the dtype, it
 * rejects 16-bit outputs 2 ulps off (and 1 ulp off an exactly representable value) and fp32
 * outputs just past the bound, it counts NaN/inf mismatches and says where the worst element
 * is, it applies the overflow rules, it rejects the planted no-max CPU mutant, and a plain
 * serial fp32 sum fails a long row with a message that names the summation-depth rule. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_softmax.h"
#include "prop/gen.h"
#include "reference/check.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "unit_case.h"

/* A random problem: x (logits, or a valid forward output for backward ops) and dy, in dtype
 * dt with stride ld; the padding holds NaN, which the checker must never read. */
typedef struct prob {
    sml_op op;
    sml_dtype dt;
    int64_t rows, cols, ld;
    void *x, *dy, *out;
    double *want;
} prob;

static void prob_make(prob *p, sml_op op, sml_dtype dt, int64_t rows, int64_t cols, sml_rng *r) {
    p->op = op;
    p->dt = dt;
    p->rows = rows;
    p->cols = cols;
    p->ld = cols + (int64_t)sml_rng_below(r, 3);
    size_t bytes = (size_t)(rows * p->ld) * sml_dtype_size(dt);
    p->x = malloc(bytes);
    p->dy = malloc(bytes);
    p->out = malloc(bytes);
    p->want = malloc((size_t)(rows * cols) * sizeof *p->want);
    memset(p->x, 0xFF, bytes);
    memset(p->dy, 0xFF, bytes);
    memset(p->out, 0xFF, bytes);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            sml_store(dt, p->x, i * p->ld + j, 3.0 * sml_rng_normal(r));
            sml_store(dt, p->dy, i * p->ld + j, sml_rng_normal(r));
        }
    if (sml_op_is_backward(op)) { /* y = the rounded forward output of the logits */
        sml_op fwd = op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
        sml_ref_run(fwd, dt, rows, cols, p->ld, p->x, NULL, p->want);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                sml_store(dt, p->x, i * p->ld + j, p->want[i * cols + j]);
    }
    sml_ref_run(op, dt, rows, cols, p->ld, p->x, p->dy, p->want);
}

static void prob_free(prob *p) {
    free(p->x);
    free(p->dy);
    free(p->out);
    free(p->want);
}

/* out = the reference rounded to the dtype (the ideal kernel). */
static void write_rounded(prob *p) {
    for (int64_t i = 0; i < p->rows; i++)
        for (int64_t j = 0; j < p->cols; j++)
            sml_store(p->dt, p->out, i * p->ld + j, p->want[i * p->cols + j]);
}

static sml_check_report check(const prob *p) {
    sml_check_report r;
    sml_status s = sml_check(p->op, p->dt, p->rows, p->cols, p->ld, p->x, p->dy, p->out, &r);
    if (s != SML_OK) {
        memset(&r, 0, sizeof r);
        snprintf(r.message, sizeof r.message, "sml_check returned %s", sml_strerror(s));
    }
    return r;
}

static void accepts_reference(unit_run *u, sml_op op, sml_dtype dt, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    prob p;
    prob_make(&p, op, dt, 7, 1 + (int64_t)sml_rng_below(&r, 300), &r);
    write_rounded(&p);
    sml_check_report rep = check(&p);
    UNIT_EXPECT(u, rep.pass && rep.checked == p.rows * p.cols && rep.bad == 0,
                "%s %s: the rounded reference is rejected: %s", sml_op_name(op), sml_dtype_name(dt),
                rep.message);
    prob_free(&p);
}

/* The allowed error at element (i, j) for output value got, from the contract's functions. */
static double allowed_at(const prob *p, int64_t i, int64_t j, double got) {
    double *xr = malloc((size_t)p->cols * 2 * sizeof *xr), *dyr = xr + p->cols;
    for (int64_t c = 0; c < p->cols; c++) {
        xr[c] = sml_load(p->dt, p->x, i * p->ld + c);
        dyr[c] = sml_load(p->dt, p->dy, i * p->ld + c);
    }
    sml_row_facts f;
    sml_row_facts_compute(p->op, p->dt, xr, dyr, p->cols, &f);
    double a = sml_check_allowed(p->op, p->dt, &f, xr[j], dyr[j], p->want[i * p->cols + j], got);
    free(xr);
    return a;
}

/* The contract's compute part at element (i, j). */
static double compute_at(const prob *p, int64_t i, int64_t j) {
    double *xr = malloc((size_t)p->cols * 2 * sizeof *xr), *dyr = xr + p->cols;
    for (int64_t c = 0; c < p->cols; c++) {
        xr[c] = sml_load(p->dt, p->x, i * p->ld + c);
        dyr[c] = sml_load(p->dt, p->dy, i * p->ld + c);
    }
    sml_row_facts f;
    sml_row_facts_compute(p->op, p->dt, xr, dyr, p->cols, &f);
    sml_bound b = sml_check_bound_parts(p->op, p->dt, &f, xr[j], dyr[j], p->want[i * p->cols + j]);
    free(xr);
    return b.compute;
}

/* Rows whose softmax is exactly representable (equal logits: 1/n with n a power of two):
 * in fp16 and bf16 the only accepted output is that value; one ulp either way fails. (Not
 * log-softmax: its bound is absolute, and near 0 it spans several 16-bit ulps.) */
static void exact_values_16bit(unit_run *u, sml_dtype dt) {
    char why[400] = "";
    static const int NS[] = {1, 2, 4, 8, 64, 1024};
    for (size_t ni = 0; ni < sizeof NS / sizeof NS[0] && !why[0]; ni++) {
        int n = NS[ni];
        uint16_t x[1024], out[1024];
        for (int i = 0; i < n; i++) sml_store(dt, x, i, 3.0);
        for (int k = -1; k <= 1 && !why[0]; k++) {
            for (int i = 0; i < n; i++) sml_store(dt, out, i, 1.0 / n);
            out[n - 1] = (uint16_t)(out[n - 1] + k);
            sml_check_report r;
            sml_check(SML_SOFTMAX, dt, 1, n, n, x, NULL, out, &r);
            if (r.pass != (k == 0))
                snprintf(why, sizeof why, "softmax of %d equal logits, last output %+d ulp: %.300s",
                         n, k, r.message);
        }
    }
    UNIT_EXPECT(u, !why[0], "%s: %s", sml_dtype_name(dt), why);
}

/* 16-bit outputs: moving one element k ulps from the correctly rounded value. Softmax:
 * accepted only for k in {-1, 0, 1}, never |k| = 2, and never k != 0 when the reference
 * value is exactly representable. Log-softmax and the backward ops: the verdict follows the
 * bound (absolute for log-softmax; under cancellation it may exceed an ulp), and most 2-ulp
 * moves are rejected. The report names the element. */
static void ulp_steps_16bit(unit_run *u, sml_op op, sml_dtype dt, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    prob p;
    prob_make(&p, op, dt, 4, 64, &r);
    write_rounded(&p);
    char why[400] = "";
    /* Log-softmax is judged like the backward ops: its bound is absolute (the sum's relative
     * error becomes an absolute error in log(sum)), so near 0 it spans a few 16-bit ulps
     * (seed 0x6b02767707f64: -0.00845 for -0.00844, 2 ulps, inside a 1.4e-5 bound). */
    int softmax_fwd = op == SML_SOFTMAX, rejected_2ulp = 0, tried_2ulp = 0;
    for (int trial = 0; trial < 40 && !why[0]; trial++) {
        int64_t i = (int64_t)sml_rng_below(&r, 4), j = (int64_t)sml_rng_below(&r, 64);
        int64_t at = i * p.ld + j;
        double want = p.want[i * p.cols + j], rounded = sml_round_to(dt, want);
        uint16_t base;
        memcpy(&base, (uint16_t *)p.out + at, 2);
        for (int k = -2; k <= 2 && !why[0]; k++) {
            /* k steps along the ordered bit patterns (sign-magnitude). */
            int64_t ord = (base & 0x8000) ? -(int64_t)(base & 0x7FFF) : (int64_t)base;
            ord += k;
            uint16_t bits = ord < 0 ? (uint16_t)(0x8000 | (uint16_t)(-ord)) : (uint16_t)ord;
            memcpy((uint16_t *)p.out + at, &bits, 2);
            double got = sml_load(dt, p.out, at);
            if (!isfinite(got)) continue;
            sml_check_report rep = check(&p);
            int within = fabs(got - want) <= allowed_at(&p, i, j, got);
            /* The rounding rule restated here, independently of contract.c: got is the
             * rounding of the values up to half-way to its neighbour on want's side. */
            int64_t nord = ord + (want > got ? 1 : -1);
            uint16_t nbits = nord < 0 ? (uint16_t)(0x8000 | (uint16_t)(-nord)) : (uint16_t)nord;
            double nb = dt == SML_F16 ? sml_half_to_double(nbits) : sml_bf16_to_double(nbits);
            double ruled = compute_at(&p, i, j) + (got == want ? 0.0 : 0.5 * fabs(nb - got));
            if (within != (fabs(got - want) <= ruled) && !why[0])
                snprintf(
                    why, sizeof why,
                    "%+d ulp at (%lld, %lld): allowed %.9g, but compute + half the gap is %.9g", k,
                    (long long)i, (long long)j, allowed_at(&p, i, j, got), ruled);
            int must_reject =
                softmax_fwd ? (k == 2 || k == -2 || (k != 0 && rounded == want)) : !within;
            if (k == 2 || k == -2) {
                tried_2ulp++;
                rejected_2ulp += !rep.pass;
            }
            if (k == 0 && !rep.pass)
                snprintf(why, sizeof why, "the rounded reference is rejected: %s", rep.message);
            else if (must_reject && rep.pass)
                snprintf(why, sizeof why, "%+d ulp at (%lld, %lld) accepted (want %.9g, got %.9g)",
                         k, (long long)i, (long long)j, want, got);
            else if (must_reject && (rep.worst_row != i || rep.worst_col != j || rep.bad != 1))
                snprintf(why, sizeof why,
                         "%+d ulp at (%lld, %lld) reported at (%lld, %lld), %lld bad", k,
                         (long long)i, (long long)j, (long long)rep.worst_row,
                         (long long)rep.worst_col, (long long)rep.bad);
            else if (rep.pass != within)
                snprintf(why, sizeof why,
                         "%+d ulp at (%lld, %lld): verdict %s disagrees with the bound", k,
                         (long long)i, (long long)j, rep.pass ? "PASS" : "FAIL");
        }
        memcpy((uint16_t *)p.out + at, &base, 2);
    }
    if (!why[0] && rejected_2ulp * 4 < tried_2ulp * 3)
        snprintf(why, sizeof why, "only %d of %d 2-ulp errors rejected", rejected_2ulp, tried_2ulp);
    UNIT_EXPECT(u, !why[0], "%s %s: %s", sml_op_name(op), sml_dtype_name(dt), why);
    prob_free(&p);
}

/* fp32: an error of 0.98 B passes and 1.02 B fails, with the ratio reported. */
static void fp32_bound_edge(unit_run *u, sml_op op, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    prob p;
    prob_make(&p, op, SML_F32, 3, 200, &r);
    write_rounded(&p);
    int64_t i = (int64_t)sml_rng_below(&r, 3), j = (int64_t)sml_rng_below(&r, 200);
    double xr[200], dyr[200];
    for (int64_t c = 0; c < 200; c++) {
        xr[c] = sml_load(SML_F32, p.x, i * p.ld + c);
        dyr[c] = sml_load(SML_F32, p.dy, i * p.ld + c);
    }
    sml_row_facts f;
    sml_row_facts_compute(op, SML_F32, xr, dyr, 200, &f);
    double want = p.want[i * p.cols + j];
    double b = sml_check_bound(op, SML_F32, &f, xr[j], dyr[j], want);
    char why[400] = "";
    static const double FACTORS[] = {0.98, -0.98, 1.02, -1.02};
    for (int k = 0; k < 4 && !why[0]; k++) {
        /* The float nearest want + f b, moved outward until just past the bound (f > 1) or
         * inward until within it (f < 1): when b is about an ulp, rounding alone decides. */
        float g = (float)(want + FACTORS[k] * b);
        float outward = FACTORS[k] > 0 ? INFINITY : -INFINITY;
        if (fabs(FACTORS[k]) > 1.0)
            while (fabs((double)g - want) <= b) g = nextafterf(g, outward);
        else
            while (fabs((double)g - want) > b) g = nextafterf(g, (float)want);
        double got = (double)g;
        double ratio = fabs(got - want) / b;
        sml_store(SML_F32, p.out, i * p.ld + j, got);
        sml_check_report rep = check(&p);
        if ((ratio <= 1.0) != rep.pass)
            snprintf(why, sizeof why, "error %.4f x bound at (%lld, %lld): verdict %s: %s", ratio,
                     (long long)i, (long long)j, rep.pass ? "PASS" : "FAIL", rep.message);
        else if (ratio > 1.0 && (rep.worst_row != i || rep.worst_col != j || rep.bad != 1 ||
                                 fabs(rep.worst_ratio - ratio) > 1e-9))
            snprintf(why, sizeof why,
                     "worst reported at (%lld, %lld) ratio %.6f, planted (%lld, %lld) ratio %.6f",
                     (long long)rep.worst_row, (long long)rep.worst_col, rep.worst_ratio,
                     (long long)i, (long long)j, ratio);
    }
    UNIT_EXPECT(u, !why[0], "%s fp32: %s", sml_op_name(op), why);
    prob_free(&p);
}

static void mismatches(unit_run *u, sml_dtype dt, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    prob p;
    prob_make(&p, SML_LOG_SOFTMAX, dt, 5, 50, &r);
    write_rounded(&p);
    char why[400] = "";
    /* A NaN where a value belongs, then an infinity, then both. */
    sml_store(dt, p.out, 3 * p.ld + 17, NAN);
    sml_check_report a = check(&p);
    sml_store(dt, p.out, 1 * p.ld + 2, -INFINITY);
    sml_check_report b = check(&p);
    if (a.pass || a.nan_mismatch != 1 || a.inf_mismatch != 0 || a.bad != 1 || a.worst_row != 3 ||
        a.worst_col != 17 || !strstr(a.message, "FAIL") || !strstr(a.message, "row 3 col 17"))
        snprintf(why, sizeof why, "NaN planted at (3, 17): %s", a.message);
    else if (b.nan_mismatch != 1 || b.inf_mismatch != 1 || b.bad != 2 || b.worst_row != 1 ||
             b.worst_col != 2)
        snprintf(why, sizeof why, "then -inf at (1, 2): %s", b.message);
    /* The reverse: the reference has -inf (a -inf logit), the output a finite value. */
    prob_free(&p);
    prob_make(&p, SML_LOG_SOFTMAX, dt, 2, 8, &r);
    sml_store(dt, p.x, p.ld + 4, -INFINITY);
    sml_ref_run(p.op, dt, p.rows, p.cols, p.ld, p.x, NULL, p.want);
    write_rounded(&p);
    sml_check_report c = check(&p);
    sml_store(dt, p.out, p.ld + 4, -1e4);
    sml_check_report d = check(&p);
    sml_store(dt, p.out, p.ld + 4, INFINITY);
    sml_check_report e = check(&p);
    if (!why[0] && !c.pass)
        snprintf(why, sizeof why, "-inf reference, -inf output: %s", c.message);
    else if (!why[0] && (d.pass || d.inf_mismatch != 1))
        snprintf(why, sizeof why, "-inf reference, finite output: %s", d.message);
    else if (!why[0] && (e.pass || e.inf_mismatch != 1))
        snprintf(why, sizeof why, "-inf reference, +inf output: %s", e.message);
    UNIT_EXPECT(u, !why[0], "%s: %s", sml_dtype_name(dt), why);
    prob_free(&p);
}

static void arguments(unit_run *u) {
    float x[4] = {1, 2, 3, 4}, out[4] = {0};
    double want[4] = {0};
    sml_check_report r;
    int bad = 0;
    bad += sml_check(SML_SOFTMAX, SML_F32, 1, 4, 4, x, NULL, out, NULL) != SML_ERR_NULL_POINTER;
    bad += sml_check(SML_SOFTMAX, SML_F32, 1, 4, 4, NULL, NULL, out, &r) != SML_ERR_NULL_POINTER;
    bad += sml_check(SML_SOFTMAX_BWD, SML_F32, 1, 4, 4, x, NULL, out, &r) != SML_ERR_NULL_POINTER;
    bad += sml_check(SML_SOFTMAX, SML_F32, 1, 4, 3, x, NULL, out, &r) != SML_ERR_BAD_STRIDE;
    bad += sml_check(SML_SOFTMAX, SML_F32, -1, 4, 4, x, NULL, out, &r) != SML_ERR_BAD_SHAPE;
    bad += sml_check(SML_SOFTMAX, (sml_dtype)3, 1, 4, 4, x, NULL, out, &r) != SML_ERR_BAD_DTYPE;
    bad += sml_check((sml_op)4, SML_F32, 1, 4, 4, x, NULL, out, &r) != SML_ERR_BAD_OP;
    bad += sml_check_against(SML_SOFTMAX, SML_F32, 1, 4, 4, x, NULL, NULL, out, &r) !=
           SML_ERR_NULL_POINTER;
    if (sml_check(SML_SOFTMAX, SML_F32, 0, 4, 4, NULL, NULL, NULL, &r) != SML_OK || !r.pass ||
        r.checked != 0 || r.worst_row != -1)
        bad++;
    /* sml_check_against with the reference gives the same report as sml_check. */
    sml_ref_run(SML_SOFTMAX, SML_F32, 1, 4, 4, x, NULL, want);
    for (int i = 0; i < 4; i++) out[i] = (float)want[i];
    out[2] = nextafterf(nextafterf(out[2], 1.0f), 1.0f);
    sml_check_report a, b;
    sml_check(SML_SOFTMAX, SML_F32, 1, 4, 4, x, NULL, out, &a);
    sml_check_against(SML_SOFTMAX, SML_F32, 1, 4, 4, x, NULL, want, out, &b);
    if (a.worst_ratio != b.worst_ratio || a.worst_col != b.worst_col || a.pass != b.pass ||
        strcmp(a.message, b.message) != 0)
        bad++;
    UNIT_EXPECT(u, bad == 0, "argument checks or check/check_against agreement: %d wrong", bad);
}

/* sml_check_against_worst lists the violations worst first (equal ratios in row-major order),
 * at most k of them, and reports exactly what sml_check_against reports. */
static void worst_list(unit_run *u) {
    enum { R = 3, C = 40 };
    float x[R * C], out[R * C];
    double want[R * C];
    for (int i = 0; i < R * C; i++) x[i] = (float)sin(i * 0.37) * 4.0f;
    sml_ref_run(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want);
    for (int i = 0; i < R * C; i++) out[i] = (float)want[i];
    /* Planted: NaN at (2, 7) and at (0, 30) (equal ratios: (0, 30) first); x1.5 at (1, 3);
     * x1.1 at (0, 0); x1.01 at (2, 39). */
    out[2 * C + 7] = NAN;
    out[30] = NAN;
    out[C + 3] *= 1.5f;
    out[0] *= 1.1f;
    out[2 * C + 39] *= 1.01f;
    static const int64_t order[5][2] = {{0, 30}, {2, 7}, {1, 3}, {0, 0}, {2, 39}};
    sml_check_report a, b;
    sml_check_elem w[5];
    int n = -1, bad = 0;
    sml_check_against(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want, out, &a);
    bad += sml_check_against_worst(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want, out, &b, w, 5,
                                   &n) != SML_OK;
    bad += n != 5 || a.bad != 5 || b.bad != 5 || strcmp(a.message, b.message) != 0;
    for (int i = 0; i < 5 && n == 5; i++) bad += w[i].row != order[i][0] || w[i].col != order[i][1];
    bad += n == 5 && (!isinf(w[0].ratio) || !isnan(w[0].allowed) || !(w[2].ratio > w[3].ratio) ||
                      !(w[3].ratio > w[4].ratio) || !(w[4].ratio > 1.0) || w[2].got != out[C + 3]);
    /* k smaller than the violations: the first k of the same list. */
    sml_check_elem w2[2];
    bad += sml_check_against_worst(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want, out, &b, w2, 2,
                                   &n) != SML_OK;
    bad += n != 2 || w2[0].col != 30 || w2[1].row != 2 || w2[1].col != 7;
    /* k = 0 lists nothing; a bad k or a missing list is refused. */
    bad += sml_check_against_worst(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want, out, &b, NULL, 0,
                                   NULL) != SML_OK;
    bad += sml_check_against_worst(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want, out, &b, w, -1,
                                   &n) != SML_ERR_INVALID_ARG;
    bad += sml_check_against_worst(SML_SOFTMAX, SML_F32, R, C, C, x, NULL, want, out, &b, NULL, 5,
                                   &n) != SML_ERR_NULL_POINTER;
    UNIT_EXPECT(u, bad == 0, "the worst-violations list: %d wrong (n %d)", bad, n);
}

/* Overflow: log-softmax of fp16 logits 65504 apart rounds to -inf; a backward row whose fp32
 * intermediates overflow accepts non-finite outputs but still checks finite ones. */
static void overflow_rules(unit_run *u) {
    char why[400] = "";
    uint16_t x[2] = {sml_double_to_half(65504.0), sml_double_to_half(-65504.0)}, out[2];
    double want[2];
    sml_ref_run(SML_LOG_SOFTMAX, SML_F16, 1, 2, 2, x, NULL, want);
    out[0] = sml_double_to_half(0.0);
    out[1] = sml_double_to_half(-INFINITY);
    sml_check_report r;
    sml_check(SML_LOG_SOFTMAX, SML_F16, 1, 2, 2, x, NULL, out, &r);
    if (!r.pass || r.overflow_ok != 1)
        snprintf(why, sizeof why, "fp16 log-softmax -inf: %s", r.message);
    out[1] = sml_double_to_half(-65504.0);
    sml_check(SML_LOG_SOFTMAX, SML_F16, 1, 2, 2, x, NULL, out, &r);
    if (!why[0] && r.pass)
        snprintf(why, sizeof why, "fp16 log-softmax -65504 for -131008 accepted");
    /* softmax_bwd in fp32 with dy near FLT_MAX: dy - dot overflows fp32. */
    float y[2] = {0.5f, 0.5f}, dy[2] = {3e38f, -3e38f}, dx[2] = {NAN, 1.0f};
    double wd[2];
    sml_ref_run(SML_SOFTMAX_BWD, SML_F32, 1, 2, 2, y, dy, wd);
    dx[1] = (float)wd[1];
    sml_check(SML_SOFTMAX_BWD, SML_F32, 1, 2, 2, y, dy, dx, &r);
    if (!why[0] && (!r.pass || r.overflow_ok != 1))
        snprintf(why, sizeof why, "fp32 softmax_bwd overflow row: %s", r.message);
    dx[0] =
        wd[0] > 0 ? -INFINITY : INFINITY; /* even the wrong infinity: intermediates overflowed */
    sml_check(SML_SOFTMAX_BWD, SML_F32, 1, 2, 2, y, dy, dx, &r);
    if (!why[0] && (!r.pass || r.overflow_ok != 1))
        snprintf(why, sizeof why, "fp32 softmax_bwd overflow row, infinite output: %s", r.message);
    dx[1] = (float)(wd[1] * 1.01);
    sml_check(SML_SOFTMAX_BWD, SML_F32, 1, 2, 2, y, dy, dx, &r);
    if (!why[0] && r.pass)
        snprintf(why, sizeof why, "a finite output 1%% off accepted in an overflow row");
    /* The same NaN in an ordinary row is a mismatch. */
    float dy2[2] = {3.0f, -3.0f}, dx2[2] = {NAN, 0.0f};
    sml_check(SML_SOFTMAX_BWD, SML_F32, 1, 2, 2, y, dy2, dx2, &r);
    if (!why[0] && (r.pass || r.nan_mismatch != 1))
        snprintf(why, sizeof why, "NaN accepted in an ordinary backward row: %s", r.message);
    UNIT_EXPECT(u, !why[0], "%s", why);
}

/* The bound's shape: summation depth, growth with |x - max| and with cols. */
static void bound_shape(unit_run *u) {
    int ok = sml_check_sum_depth(1) == 0 && sml_check_sum_depth(2) == 1 &&
             sml_check_sum_depth(32) == 31 && sml_check_sum_depth(33) == 32 &&
             sml_check_sum_depth(1024) == 42 && sml_check_sum_depth(1 << 22) == 54;
    /* min(n - 1, 32 + ceil(log2 n)), from the definition, on every n to 2^17 and around
     * every power of two after. */
    for (int64_t i = 1; i < (1 << 17) + 3 * 45 && ok; i++) {
        int64_t m = i;
        if (i >= (1 << 17)) {
            int64_t k = (i - (1 << 17)) / 3, r = (i - (1 << 17)) % 3;
            m = ((int64_t)1 << (17 + k)) - 1 + r;
        }
        int lg = 0;
        while (((int64_t)1 << lg) < m) lg++;
        int64_t want = m <= 1 ? 0 : m - 1 < 32 + lg ? m - 1 : 32 + lg;
        ok = sml_check_sum_depth(m) == want;
        if (!ok)
            UNIT_EXPECT(u, 0, "summation depth of %lld columns: %d, the definition gives %lld",
                        (long long)m, sml_check_sum_depth(m), (long long)want);
    }
    sml_row_facts f = {1024, 0.0, 10.0, 1.0, 0, 0, 0};
    double b0 = sml_check_bound(SML_SOFTMAX, SML_F32, &f, 0.0, 0, 0.1);
    double b1 = sml_check_bound(SML_SOFTMAX, SML_F32, &f, -10.0, 0, 0.1);
    f.cols = 2;
    double b2 = sml_check_bound(SML_SOFTMAX, SML_F32, &f, 0.0, 0, 0.1);
    /* Relative size at t = 0, 1024 columns, A = 1: (2.25 + 8 + 4 + 6 * 42) u. */
    double expect0 = 0.1 * 0x1p-24 * (2.25 + 12.0 + 252.0);
    ok = ok && b1 > b0 && b2 < b0 && fabs(b0 / (expect0 * (1 + 0x1p-10)) - 1.0) < 1e-3;
    double bh = sml_check_bound(SML_SOFTMAX, SML_F16, &f, 0.0, 0, 0.1);
    ok = ok && bh > 0.5 * sml_ulp(SML_F16, 0.1) && bh < 0.51 * sml_ulp(SML_F16, 0.1) + b0;
    ok = ok && sml_check_bound(SML_SOFTMAX, SML_F16, &f, -INFINITY, 0, 0.0) == 0.0;
    UNIT_EXPECT(u, ok, "bound shape: b(t=0) %.3g (expected %.3g), b(t=-10) %.3g, b(cols=2) %.3g",
                b0, expect0, b1, b2);
}

/* The planted CPU mutant (no max subtraction) overflows on a large logit; the checker
 * rejects it; on small logits it is as good as the real thing (and is accepted). */
static void rejects_mutant(unit_run *u, sml_dtype dt) {
    unsigned char x[4 * 3], out[4 * 3];
    double big[3] = {100.0, 0.0, -5.0}, small[3] = {1.0, 0.0, -2.0};
    char why[400] = "";
    for (int op = 0; op < 2 && !why[0]; op++) {
        for (int which = 0; which < 2; which++) {
            for (int i = 0; i < 3; i++) sml_store(dt, x, i, which ? small[i] : big[i]);
            sml_problem p = {(sml_op)op, dt, 1, 3, 3, x, NULL, out, NULL};
            sml_launch_cpu_mutant_no_max(NULL, &p);
            sml_check_report r;
            sml_check((sml_op)op, dt, 1, 3, 3, x, NULL, out, &r);
            if (which == 0 && r.pass)
                snprintf(why, sizeof why, "mutant accepted on [100, 0, -5]: %s", r.message);
            if (which == 1 && !r.pass)
                snprintf(why, sizeof why, "mutant rejected on harmless [1, 0, -2]: %s", r.message);
        }
    }
    UNIT_EXPECT(u, !why[0], "%s: %s", sml_dtype_name(dt), why);
}

/* A softmax whose sum is one fp32 register added left to right (the plain serial sum the
 * contract's summation-depth rule excludes): it fails a long row, and the message names the
 * rule; on a short row it passes. */
static void serial_sum(unit_run *u, int64_t cols, int want_fail) {
    sml_rng r;
    sml_rng_seed(&r, 0x5e71a1);
    float *x = malloc((size_t)cols * sizeof *x), *out = malloc((size_t)cols * sizeof *out);
    float m = -INFINITY, sum = 0.0f;
    for (int64_t j = 0; j < cols; j++) {
        x[j] = (float)sml_rng_normal(&r);
        m = fmaxf(m, x[j]);
    }
    for (int64_t j = 0; j < cols; j++) sum += expf(x[j] - m);
    for (int64_t j = 0; j < cols; j++) out[j] = expf(x[j] - m) / sum;
    sml_check_report rep;
    sml_status s = sml_check(SML_SOFTMAX, SML_F32, 1, cols, cols, x, NULL, out, &rep);
    int names_rule = strstr(rep.message, "docs/NUMERICS.md 4.1") != NULL;
    UNIT_EXPECT(u, s == SML_OK && rep.pass == !want_fail && names_rule == want_fail,
                "serial fp32 sum over %lld columns: %s", (long long)cols, rep.message);
    free(x);
    free(out);
}

/* A row whose worst element is a special value matched exactly (NaN where NaN is wanted)
 * reports 0 ulps, not inf: a PASS row never shows "worst ulp inf". */
static void exact_special_worst(unit_run *u) {
    float x[3] = {NAN, 1.0f, 2.0f}, out[3] = {NAN, NAN, NAN};
    sml_check_report r;
    sml_status s = sml_check(SML_SOFTMAX, SML_F32, 1, 3, 3, x, NULL, out, &r);
    UNIT_EXPECT(u, s == SML_OK && r.pass && r.worst_ulps == 0.0 && r.worst_rel == 0.0,
                "a NaN row output as NaN passes with worst ulps 0 (got pass %d, ulps %g, rel %g)",
                r.pass, r.worst_ulps, r.worst_rel);
}

/* The bound a 16-bit output is allowed, against the rule it implements: compute bound plus half
 * the gap from got to its neighbour on want's side, the neighbour found from got's bits (the
 * next or previous pattern in value order; past the largest finite value, infinity, which
 * rounding treats as 2^(emax+1): the top binade's ulp). Every finite value of fp16 and bf16,
 * each direction, a softmax row whose bound is tiny so the gap decides. */
static void gap_every_value(unit_run *u, sml_dtype dt) {
    sml_row_facts f;
    double xs[2] = {0.0, 0.0};
    sml_row_facts_compute(SML_SOFTMAX, dt, xs, NULL, 2, &f);
    int64_t bad = 0;
    char first[128] = "";
    for (uint32_t bits = 0; bits < 0x10000; bits++) {
        double got =
            dt == SML_F16 ? sml_half_to_double((uint16_t)bits) : sml_bf16_to_double((uint16_t)bits);
        if (!isfinite(got)) continue;
        for (int dir = -1; dir <= 1; dir += 2) {
            int32_t ord = (bits & 0x8000) ? -(int32_t)(bits & 0x7FFF) : (int32_t)bits;
            ord += dir;
            uint16_t nb = ord < 0 ? (uint16_t)(0x8000 | (uint16_t)(-ord)) : (uint16_t)ord;
            double next = dt == SML_F16 ? sml_half_to_double(nb) : sml_bf16_to_double(nb);
            double gap = isinf(next) ? sml_ulp(dt, sml_dtype_max(dt)) : fabs(next - got);
            /* want a little past got on that side (never got itself) */
            double want = got + dir * (gap > 0 ? gap * 0.25 : 0x1p-1074);
            if (want == got) continue;
            sml_bound b = sml_check_bound_parts(SML_SOFTMAX, dt, &f, 0.0, 0.0, want);
            double allowed = sml_check_allowed(SML_SOFTMAX, dt, &f, 0.0, 0.0, want, got);
            double expect = b.compute + 0.5 * gap;
            if (memcmp(&allowed, &expect, sizeof allowed) != 0 && bad++ == 0)
                snprintf(first, sizeof first, "0x%04x toward %s: allowed %a, want %a", bits,
                         dir > 0 ? "+" : "-", allowed, expect);
        }
    }
    UNIT_EXPECT(u, bad == 0, "%s: %lld outputs allowed other than the neighbour rule (first: %s)",
                sml_dtype_name(dt), (long long)bad, first);
}

/* Two doubles the same bits, or both NaN (which NaN an operation on two NaNs gives is the
 * compiler's choice of operand order, nothing the contract says). */
static int same_or_nan(double a, double b) {
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static int same_facts(const sml_row_facts *a, const sml_row_facts *b) {
    return a->cols == b->cols && same_or_nan(a->max, b->max) && same_or_nan(a->sum, b->sum) &&
           same_or_nan(a->mean_abs_t, b->mean_abs_t) && same_or_nan(a->dot, b->dot) &&
           same_or_nan(a->dot_abs, b->dot_abs) && a->may_overflow == b->may_overflow;
}

/* A report's message with every "-nan" as "nan". */
static void nan_free(const char *in, char *out, size_t n) {
    size_t k = 0;
    for (size_t i = 0; in[i] && k + 1 < n; i++) {
        if (!strncmp(in + i, "-nan", 4)) continue;
        out[k++] = in[i];
    }
    out[k] = 0;
}

static int same_report(const sml_check_report *a, const sml_check_report *b) {
    char ma[sizeof a->message], mb[sizeof b->message];
    nan_free(a->message, ma, sizeof ma);
    nan_free(b->message, mb, sizeof mb);
    return a->pass == b->pass && a->checked == b->checked && a->bad == b->bad &&
           a->nan_mismatch == b->nan_mismatch && a->inf_mismatch == b->inf_mismatch &&
           same_or_nan(a->worst_ratio, b->worst_ratio) &&
           same_or_nan(a->worst_ulps, b->worst_ulps) && same_or_nan(a->worst_rel, b->worst_rel) &&
           same_or_nan(a->worst_abs, b->worst_abs) && a->worst_row == b->worst_row &&
           a->worst_col == b->worst_col && same_or_nan(a->got, b->got) &&
           same_or_nan(a->want, b->want) && same_or_nan(a->row_max, b->row_max) &&
           same_or_nan(a->row_sum, b->row_sum) && a->overflow_ok == b->overflow_ok &&
           !strcmp(ma, mb);
}

/* The misses a checker run reports, in order (up to 64). */
typedef struct miss_log {
    int n;
    sml_check_elem e[64];
} miss_log;

static void log_miss(void *ctx, const sml_check_elem *e) {
    miss_log *l = ctx;
    if (l->n < 64) l->e[l->n] = *e;
    l->n++;
}

static int same_misses(const miss_log *a, const miss_log *b) {
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n && i < 64; i++) {
        const sml_check_elem *p = &a->e[i], *q = &b->e[i];
        if (p->row != q->row || p->col != q->col || !same_or_nan(p->got, q->got) ||
            !same_or_nan(p->want, q->want) || !same_or_nan(p->ratio, q->ratio) ||
            !same_or_nan(p->ulps, q->ulps) || !same_or_nan(p->allowed, q->allowed))
            return 0;
    }
    return 1;
}

/* What the property engine shares between its checks gives what the strided entry points give:
 * the reference from widened inputs and their exponentials (sml_ref_rows, sml_ref_exp_row), the
 * row facts from those exponentials, a row's bounds at once (sml_check_allowed_row,
 * sml_check_bound_row) and the checker on a dense problem (sml_check_dense_run, with what it
 * may be given given or not), on the property engine's own cases (the GPU profile's shapes and
 * values: special values, masks, huge and tiny logits) with outputs off by a few ulps here and
 * there and some special values planted. */
static void dense_vs_strided(unit_run *u, sml_op op, sml_dtype dt, uint64_t seed) {
    const sml_kernel *k = sml_kernel_find("cpu_naive");
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_GPU);
    cfg.sizes.big_prob = 0.0; /* small cases: hundreds of them in a unit test's time */
    cfg.sizes.tall_prob = 0.0;
    sml_rng r;
    sml_rng_seed(&r, seed);
    int64_t bad = 0;
    char first[256] = "";
    for (int i = 0; i < 300 && k; i++) {
        sml_prop_case c;
        if (sml_prop_gen_case(k, op, dt, sml_rng_u64(&r), (int)sml_rng_below(&r, 101), &cfg.sizes,
                              &c) != SML_OK)
            break;
        int64_t n = c.rows * c.cols, cols = c.cols;
        size_t esz = sml_dtype_size(dt);
        double *d = malloc((size_t)(7 * n + 2 * cols) * sizeof *d);
        sml_row_facts *facts = malloc((size_t)c.rows * sizeof *facts);
        void *out = malloc((size_t)n * esz);
        if (!d || !facts || !out) {
            free(d), free(facts), free(out), sml_prop_case_free(&c);
            UNIT_EXPECT(u, 0, "out of memory");
            return;
        }
        double *x = d, *dy = d + n, *ex = d + 2 * n, *want = d + 3 * n, *want2 = d + 4 * n;
        double *got = d + 5 * n, *ref = d + 6 * n, *row1 = d + 7 * n, *row2 = row1 + cols;
        int bwd = sml_op_is_backward(op);
        sml_load_n(dt, c.x, 0, n, x);
        if (bwd) sml_load_n(dt, c.dy, 0, n, dy);
        sml_ref_run(op, dt, c.rows, cols, cols, c.x, bwd ? c.dy : NULL, ref);
        for (int64_t row = 0; row < c.rows; row++)
            sml_ref_exp_row(op, x + row * cols, cols, ex + row * cols);
        const double *exs = op == SML_SOFTMAX_BWD ? NULL : ex;
        sml_ref_rows(op, c.rows, cols, x, bwd ? dy : NULL, exs, want);
        sml_ref_rows(op, c.rows, cols, x, bwd ? dy : NULL, NULL, want2);
        for (int64_t j = 0; j < n; j++)
            if ((!same_or_nan(want[j], ref[j]) || !same_or_nan(want2[j], ref[j])) && bad++ == 0)
                snprintf(first, sizeof first,
                         "case %d: sml_ref_rows at %lld: %.17g, %.17g, not %.17g", i, (long long)j,
                         want[j], want2[j], ref[j]);
        /* The output: the reference rounded, some elements a few ulps off, a few special. */
        for (int64_t j = 0; j < n; j++) {
            double v = ref[j];
            if (isfinite(v) && sml_rng_below(&r, 4) == 0)
                v += (double)((int64_t)sml_rng_below(&r, 7) - 3) * sml_ulp(dt, v);
            if (sml_rng_below(&r, 200) == 0) v = sml_rng_below(&r, 2) ? NAN : -INFINITY;
            sml_store(dt, out, j, v);
        }
        sml_load_n(dt, out, 0, n, got);
        for (int64_t row = 0; row < c.rows; row++) {
            size_t at = (size_t)(row * cols);
            const double *dyr = bwd ? dy + at : NULL, *exr = exs ? exs + at : NULL;
            sml_row_facts f;
            sml_row_facts_compute(op, dt, x + at, dyr, cols, &f);
            sml_row_facts_compute_ex(op, dt, x + at, dyr, exr, cols, &facts[row]);
            if (!same_facts(&f, &facts[row]) && bad++ == 0)
                snprintf(first, sizeof first, "case %d row %lld: facts from ex differ", i,
                         (long long)row);
            sml_check_allowed_row(op, dt, &f, x + at, dyr, exr, want + at, got + at, cols, row1);
            sml_check_bound_row(op, dt, &f, x + at, dyr, exr, want + at, cols, row2);
            for (int64_t j = 0; j < cols; j++) {
                double w = want[at + j], g = got[at + j], dyj = dyr ? dyr[j] : 0.0;
                if (!isfinite(w)) continue;
                double b = sml_check_bound(op, dt, &f, x[at + j], dyj, w);
                double a = isfinite(g) ? sml_check_allowed(op, dt, &f, x[at + j], dyj, w, g) : 0.0;
                if ((!same_or_nan(row2[j], b) || (isfinite(g) && !same_or_nan(row1[j], a))) &&
                    bad++ == 0)
                    snprintf(
                        first, sizeof first,
                        "case %d row %lld col %lld: bound %.17g / %.17g, allowed %.17g / %.17g", i,
                        (long long)row, (long long)j, row2[j], b, row1[j], a);
            }
        }
        sml_check_report r0, r1, r2;
        miss_log l0 = {0}, l1 = {0}, l2 = {0};
        sml_check_against_each(op, dt, c.rows, cols, cols, c.x, bwd ? c.dy : NULL, want, out, &r0,
                               log_miss, &l0);
        sml_check_dense all = {op,  dt,    c.rows, cols, x,   bwd ? dy : NULL,
                               exs, facts, want,   out,  got, NULL};
        sml_check_dense none = {op,   dt,   c.rows, cols, x,    bwd ? dy : NULL,
                                NULL, NULL, want,   out,  NULL, NULL};
        sml_check_dense_run(&all, &r1, log_miss, &l1);
        sml_check_dense_run(&none, &r2, log_miss, &l2);
        if ((!same_report(&r0, &r1) || !same_report(&r0, &r2) || !same_misses(&l0, &l1) ||
             !same_misses(&l0, &l2)) &&
            bad++ == 0)
            snprintf(first, sizeof first, "case %d: dense check differs: %.60s / %.60s", i,
                     r0.message, r1.message);
        /* The columns permuted (reversed, or shuffled): laid out whole in the dtype against the
         * checker gathering them through perm. The output is taken as the permuted problem's. */
        int64_t *perm = malloc((size_t)cols * sizeof *perm);
        void *px = malloc((size_t)n * esz), *pdy = malloc((size_t)n * esz);
        double *pwant = malloc((size_t)n * sizeof *pwant);
        if (perm && px && pdy && pwant) {
            int rev = sml_rng_below(&r, 3) == 0;
            for (int64_t j = 0; j < cols; j++) perm[j] = rev ? cols - 1 - j : j;
            for (int64_t j = cols - 1; j > 0 && !rev; j--) {
                int64_t q = (int64_t)sml_rng_below(&r, (uint64_t)j + 1), t = perm[j];
                perm[j] = perm[q];
                perm[q] = t;
            }
            for (int64_t row = 0; row < c.rows; row++)
                for (int64_t j = 0; j < cols; j++) {
                    int64_t to = row * cols + j, from = row * cols + perm[j];
                    memcpy((char *)px + to * esz, (const char *)c.x + from * esz, esz);
                    if (bwd) memcpy((char *)pdy + to * esz, (const char *)c.dy + from * esz, esz);
                    pwant[to] = want[from];
                }
            miss_log l3 = {0}, l4 = {0}, l5 = {0};
            sml_check_report r3, r4, r5;
            sml_check_against_each(op, dt, c.rows, cols, cols, px, bwd ? pdy : NULL, pwant, out,
                                   &r3, log_miss, &l3);
            sml_check_dense pa = all, pn = none;
            pa.perm = pn.perm = perm;
            pa.got = NULL; /* the permuted problem's output is out itself */
            sml_check_dense_run(&pa, &r4, log_miss, &l4);
            sml_check_dense_run(&pn, &r5, log_miss, &l5);
            if ((!same_report(&r3, &r4) || !same_report(&r3, &r5) || !same_misses(&l3, &l4) ||
                 !same_misses(&l3, &l5)) &&
                bad++ == 0)
                snprintf(first, sizeof first, "case %d: permuted check differs: %.60s / %.60s", i,
                         r3.message, r4.message);
        } else if (bad++ == 0) {
            snprintf(first, sizeof first, "out of memory");
        }
        free(perm), free(px), free(pdy), free(pwant);
        free(d), free(facts), free(out);
        sml_prop_case_free(&c);
    }
    UNIT_EXPECT(u, bad == 0 && k,
                "%s %s: %lld differences between the shared and the strided "
                "paths (first: %s)",
                sml_op_name(op), sml_dtype_name(dt), (long long)bad, first);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_check", argc, argv)) return 2;
    uint64_t s;
    int64_t c = 0;
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
            if (unit_case(&u, c, &s)) accepts_reference(&u, (sml_op)op, (sml_dtype)dt, s);
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = SML_F16; dt <= SML_BF16; dt++, c++)
            if (unit_case(&u, c, &s)) ulp_steps_16bit(&u, (sml_op)op, (sml_dtype)dt, s);
    for (int op = 0; op < SML_OP_COUNT; op++, c++)
        if (unit_case(&u, c, &s)) fp32_bound_edge(&u, (sml_op)op, s);
    for (int dt = SML_F16; dt <= SML_BF16; dt++, c++)
        if (unit_case(&u, c, NULL)) exact_values_16bit(&u, (sml_dtype)dt);
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
        if (unit_case(&u, c, &s)) mismatches(&u, (sml_dtype)dt, s);
    if (unit_case(&u, c++, NULL)) arguments(&u);
    if (unit_case(&u, c++, NULL)) overflow_rules(&u);
    if (unit_case(&u, c++, NULL)) bound_shape(&u);
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
        if (unit_case(&u, c, NULL)) rejects_mutant(&u, (sml_dtype)dt);
    if (unit_case(&u, c++, NULL)) worst_list(&u);
    if (unit_case(&u, c++, NULL)) serial_sum(&u, 1 << 21, 1);
    if (unit_case(&u, c++, NULL)) serial_sum(&u, 1000, 0);
    if (unit_case(&u, c++, NULL)) exact_special_worst(&u);
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
            if (unit_case(&u, c, &s)) dense_vs_strided(&u, (sml_op)op, (sml_dtype)dt, s);
    for (int dt = SML_F16; dt <= SML_BF16; dt++, c++)
        if (unit_case(&u, c, NULL)) gap_every_value(&u, (sml_dtype)dt);
    return sml_tally_finish(&u.tally);
}
