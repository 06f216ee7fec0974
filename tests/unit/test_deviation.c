/* test_deviation.c: a declared deviation (sml_deviation, src/prop/deviation.h) as the checker
 * applies it. Its words (what verdict lines print); which terms apply to which op and dtype
 * (each named exception only where it names a rule); each exception excusing exactly the
 * elements it describes and no others; the value bound excusing an element within it, failing
 * one past it with its place, and never excusing a NaN; chunks merged with their row offset;
 * and long rows whose every element is a special value judged in time linear in the row, by
 * the checker and by the properties. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dtype.h"
#include "prop/deviation.h"
#include "prop/props.h"
#include "reference/reference.h"
#include "test_support.h"

#define REPRO "build/tests/unit/test_deviation"

static sml_tally T = {"test_deviation", 0, 0, 0};

#define check(ok, ...) sml_test_check(&T, (ok), REPRO, __VA_ARGS__)

static void words(void) {
    char buf[512];
    sml_dev_describe(NULL, buf, sizeof buf);
    check(!strcmp(buf, "none"), "NULL described as '%s'", buf);
    static const sml_deviation one = {.ulps = {[SML_SOFTMAX] = {[SML_F16] = 1.5}}};
    sml_dev_describe(&one, buf, sizeof buf);
    check(!strcmp(buf, "softmax fp16 <= 1.5 ulp"), "one bound described as '%s'", buf);
    static const sml_deviation fw = {
        .bound_factor = {[SML_SOFTMAX_BWD] = {[SML_F16] = 2500, [SML_BF16] = 2500}},
        .exceptions = SML_DEV_BWD_16BIT_OVERFLOW};
    sml_dev_describe(&fw, buf, sizeof buf);
    check(!strcmp(buf, "softmax_bwd fp16,bf16 <= 2500x the bound; 16-bit backward overflows to "
                       "inf/NaN on huge dy"),
          "a factor and an exception described as '%s'", buf);
    static const sml_deviation every = {
        .ulps = {{0, 2, 2}, {0, 2, 2}, {0, 2, 2}, {0, 2, 2}},
        .bound_factor = {{0, 3, 3}, {0, 3, 3}, {0, 3, 3}, {0, 3, 3}},
        .exceptions = SML_DEV_ALL_NEG_INF_ROW | SML_DEV_LOG_SOFTMAX_SHIFT_BITS};
    sml_dev_describe(&every, buf, sizeof buf);
    check(!strcmp(buf, "every op fp16,bf16 <= 2 ulp or 3x the bound; all -inf rows give 0 / -inf; "
                       "log_softmax not bitwise shift-invariant"),
          "every op described as '%s'", buf);
    static const sml_deviation empty = {{{0}}, {{0}}, 0};
    check(!sml_dev_declared(&empty) && sml_dev_declared(&one) && !sml_dev_declared(NULL),
          "sml_dev_declared: an empty declaration is none");
}

/* Each exception applies only to the ops and dtypes it names (row bits by address: every
 * op and dtype, checked last). */
static void scope(void) {
    static const sml_deviation d = {.exceptions =
                                        SML_DEV_EXCEPTIONS_ALL &
                                        ~(SML_DEV_ROW_BITS_BY_ADDRESS | SML_DEV_BWD_SUM_CLASS)};
    static const sml_deviation rowbits = {.exceptions = SML_DEV_ROW_BITS_BY_ADDRESS},
                               cls = {.exceptions = SML_DEV_BWD_SUM_CLASS};
    sml_dev_terms t;
    int got = sml_dev_terms_get(&rowbits, SML_SOFTMAX_BWD, SML_F32, &t);
    check(got && t.exceptions == SML_DEV_ROW_BITS_BY_ADDRESS,
          "row bits by address applies to softmax_bwd fp32 (0x%x)", t.exceptions);
    got = sml_dev_terms_get(&cls, SML_LOG_SOFTMAX_BWD, SML_BF16, &t);
    check(got && t.exceptions == SML_DEV_BWD_SUM_CLASS,
          "the sum's class applies to log_softmax_bwd bf16 (0x%x)", t.exceptions);
    got = sml_dev_terms_get(&cls, SML_SOFTMAX, SML_F32, &t);
    check(!got && t.exceptions == 0, "the sum's class applies to softmax (0x%x)", t.exceptions);
    int any = sml_dev_terms_get(&d, SML_SOFTMAX, SML_F32, &t);
    check(any && t.exceptions == (SML_DEV_ALL_NEG_INF_ROW | SML_DEV_LOWEST_MAX_ROW) &&
              !strcmp(t.text, "all -inf rows give 0 / -inf; rows whose max is the lowest "
                              "finite value are not held"),
          "softmax fp32: exceptions 0x%x '%s'", t.exceptions, t.text);
    sml_dev_terms_get(&d, SML_LOG_SOFTMAX, SML_BF16, &t);
    check(t.exceptions == (SML_DEV_ALL_NEG_INF_ROW | SML_DEV_LOG_SOFTMAX_SHIFT_BITS |
                           SML_DEV_LOWEST_MAX_ROW | SML_DEV_LOG_SOFTMAX_LSE_ROUNDED),
          "log_softmax bf16: exceptions 0x%x", t.exceptions);
    any = sml_dev_terms_get(&d, SML_SOFTMAX_BWD, SML_F32, &t);
    check(!any && t.exceptions == 0 && !strcmp(t.text, "the contract"),
          "softmax_bwd fp32: no exception applies (0x%x, '%s')", t.exceptions, t.text);
    sml_dev_terms_get(&d, SML_LOG_SOFTMAX_BWD, SML_F16, &t);
    check(t.exceptions == SML_DEV_BWD_16BIT_OVERFLOW, "log_softmax_bwd fp16: exceptions 0x%x",
          t.exceptions);
    static const sml_deviation v = {.ulps = {[SML_SOFTMAX] = {[SML_F16] = 1.5}}};
    any = sml_dev_terms_get(&v, SML_SOFTMAX, SML_BF16, &t);
    check(!any && t.ulps == 0, "a bound for fp16 applies to bf16 (%g)", t.ulps);
    any = sml_dev_terms_get(&v, SML_SOFTMAX, SML_F16, &t);
    check(any && t.ulps == 1.5 && !strcmp(t.text, "softmax fp16 <= 1.5 ulp"), "softmax fp16: '%s'",
          t.text);
    double ulp = sml_ulp(SML_F16, 0.3);
    check(sml_dev_allowed(&t, SML_F16, 1e-9, 0.3, 0.0) == 1.5 * ulp &&
              sml_dev_allowed(&t, SML_F16, 1.0, 0.3, 0.0) == 1.0 &&
              sml_dev_allowed(NULL, SML_F16, 1e-9, 0.3, 0.0) == 1e-9 &&
              sml_dev_allowed(&t, SML_F16, 1e-9, 0.3, 1.0) == 1.0 + 1e-9,
          "sml_dev_allowed: the larger of the contract's, 1.5 ulp and the contract's + slack");
}

/* The elements each exception covers, and the ones next to them it does not. */
static void exceptions(void) {
    static const sml_deviation d = {.exceptions = SML_DEV_EXCEPTIONS_ALL};
    sml_dev_terms sm, lsm, bwd16, bwd32, none;
    sml_dev_terms_get(&d, SML_SOFTMAX, SML_F32, &sm);
    sml_dev_terms_get(&d, SML_LOG_SOFTMAX, SML_F32, &lsm);
    sml_dev_terms_get(&d, SML_SOFTMAX_BWD, SML_F16, &bwd16);
    sml_dev_terms_get(&d, SML_SOFTMAX_BWD, SML_BF16, &bwd32);
    sml_dev_terms_get(NULL, SML_SOFTMAX, SML_F32, &none);
    const double all_ninf[3] = {-INFINITY, -INFINITY, -INFINITY},
                 one_finite[3] = {-INFINITY, 1, -INFINITY};
    check(sml_dev_special_excused(&sm, all_ninf, NULL, 3, 0.0, NAN),
          "softmax all -inf row: 0 for NaN");
    check(!sml_dev_special_excused(&sm, all_ninf, NULL, 3, 0.5, NAN),
          "softmax all -inf row: 0.5 excused");
    check(!sml_dev_special_excused(&sm, all_ninf, NULL, 3, -INFINITY, NAN),
          "softmax all -inf row: -inf excused (log_softmax's value)");
    check(!sml_dev_special_excused(&sm, one_finite, NULL, 3, 0.0, 1.0),
          "a row with a finite logit excused");
    check(!sml_dev_special_excused(&none, all_ninf, NULL, 3, 0.0, NAN),
          "no declaration: an all -inf row excused");
    check(sml_dev_special_excused(&lsm, all_ninf, NULL, 3, -INFINITY, NAN),
          "log_softmax all -inf row: -inf for NaN");
    check(!sml_dev_special_excused(&lsm, all_ninf, NULL, 3, 0.0, NAN),
          "log_softmax all -inf row: 0 excused");
    /* 16-bit backward: only where max|dy| + sum|dy y| reaches the dtype's largest value. */
    const double y[2] = {0.5, 0.5}, dy_huge[2] = {60000, 20000}, dy_small[2] = {1, 2};
    check(sml_dev_special_excused(&bwd16, y, dy_huge, 2, -INFINITY, -1000.0),
          "fp16 softmax_bwd, 60000 + 40000 >= 65504: -inf excused");
    check(sml_dev_special_excused(&bwd16, y, dy_huge, 2, NAN, -1000.0),
          "fp16 softmax_bwd, huge dy: NaN excused");
    check(!sml_dev_special_excused(&bwd16, y, dy_small, 2, -INFINITY, -0.25),
          "fp16 softmax_bwd, small dy: -inf excused");
    check(!sml_dev_special_excused(&bwd16, y, dy_huge, 2, 7.0, -1000.0),
          "fp16 softmax_bwd, huge dy: a finite value excused as a special one");
    check(!sml_dev_special_excused(&bwd32, y, dy_huge, 2, -INFINITY, -1000.0),
          "bf16 softmax_bwd, dy far below bf16's largest value: -inf excused");
    /* The backward sum's class: NaN for the infinity only where the finite terms of the other
     * sign reach FLT_MAX (a partial sum of them can overflow first), the infinities being of one
     * sign; never another special value, nor NaN where NaN is not wanted. */
    sml_dev_terms lbwd;
    sml_dev_terms_get(&d, SML_LOG_SOFTMAX_BWD, SML_F32, &lbwd);
    const double yl[3] = {-1, -1, -1}, lost[3] = {-3e38, -3e38, INFINITY},
                 small[3] = {-3e37, -3e37, INFINITY}, both[3] = {-3e38, -INFINITY, INFINITY},
                 same[3] = {3e38, 3e38, INFINITY};
    check(sml_dev_special_excused(&lbwd, yl, lost, 3, NAN, -INFINITY),
          "log_softmax_bwd, -6e38 of finite dy and +inf: NaN for -inf excused");
    check(!sml_dev_special_excused(&lbwd, yl, lost, 3, INFINITY, -INFINITY),
          "log_softmax_bwd, -6e38 and +inf: the other infinity excused");
    check(!sml_dev_special_excused(&lbwd, yl, small, 3, NAN, -INFINITY),
          "log_softmax_bwd, finite dy of -6e37 (no overflow) and +inf: NaN excused");
    check(!sml_dev_special_excused(&lbwd, yl, both, 3, NAN, -INFINITY),
          "log_softmax_bwd, both infinities: NaN is the class, no exception needed");
    check(!sml_dev_special_excused(&lbwd, yl, same, 3, NAN, -INFINITY),
          "log_softmax_bwd, huge dy of the infinity's own sign: NaN excused");
    check(!sml_dev_special_excused(&lbwd, yl, lost, 3, NAN, 1.0),
          "log_softmax_bwd, -6e38 and +inf: NaN for a finite value excused");
    check(!sml_dev_special_excused(&none, yl, lost, 3, NAN, -INFINITY),
          "no declaration: the lost class excused");
}

/* A 1x4 fp16 softmax row, correctly rounded but one element moved by one ulp (1 to 1.5 ulp
 * from exact), judged under a 1.5 ulp and a 0.5 ulp declaration; then a NaN in it. */
static void values(void) {
    const double xv[4] = {0.25, -1.0, 2.0, 0.5};
    uint16_t x[4], out[4];
    double want[4];
    for (int i = 0; i < 4; i++) sml_store(SML_F16, x, i, xv[i]);
    sml_ref_run(SML_SOFTMAX, SML_F16, 1, 4, 4, x, NULL, want);
    for (int i = 0; i < 4; i++) sml_store(SML_F16, out, i, want[i]);
    /* element 2 one ulp away from the exact value's side: 1 to 1.5 ulp off */
    double r = sml_load(SML_F16, out, 2), u = sml_ulp(SML_F16, want[2]);
    sml_store(SML_F16, out, 2, r + (r >= want[2] ? u : -u));
    double off = fabs(sml_load(SML_F16, out, 2) - want[2]) / u;
    static const sml_deviation wide = {.ulps = {[SML_SOFTMAX] = {[SML_F16] = 1.5}}};
    static const sml_deviation tight = {.ulps = {[SML_SOFTMAX] = {[SML_F16] = 0.5}}};
    sml_dev_terms tw, tt;
    sml_dev_terms_get(&wide, SML_SOFTMAX, SML_F16, &tw);
    sml_dev_terms_get(&tight, SML_SOFTMAX, SML_F16, &tt);
    sml_check_report rep;
    sml_dev_report d;
    sml_status s =
        sml_dev_check_against(&tw, SML_SOFTMAX, SML_F16, 1, 4, 4, x, NULL, want, out, &rep, &d);
    check(s == SML_OK && !rep.pass && rep.bad == 1 && d.misses == 1 && d.excused == 1 &&
              sml_dev_report_pass(&d) && fabs(d.worst_ulps - off) < 1e-9 && off > 1.0 && off <= 1.5,
          "%.3g ulp off, 1.5 declared: contract pass %d, %lld of %lld excused, worst %.3g", off,
          rep.pass, (long long)d.excused, (long long)d.misses, d.worst_ulps);
    s = sml_dev_check_against(&tt, SML_SOFTMAX, SML_F16, 1, 4, 4, x, NULL, want, out, &rep, &d);
    char why[400];
    sml_dev_report_why(&d, &tt, why, sizeof why);
    check(s == SML_OK && !sml_dev_report_pass(&d) && d.row == 0 && d.col == 2 && !d.special &&
              strstr(why, "outside its declared deviation (softmax fp16 <= 0.5 ulp): row 0 col 2:"),
          "%.3g ulp off, 0.5 declared: want a miss at row 0 col 2, got '%s'", off, why);
    s = sml_dev_check_against(NULL, SML_SOFTMAX, SML_F16, 1, 4, 4, x, NULL, want, out, &rep, &d);
    check(s == SML_OK && !sml_dev_report_pass(&d) && d.col == 2,
          "no terms: the miss is not excused");
    sml_store(SML_F16, out, 1, NAN);
    s = sml_dev_check_against(&tw, SML_SOFTMAX, SML_F16, 1, 4, 4, x, NULL, want, out, &rep, &d);
    sml_dev_report_why(&d, &tw, why, sizeof why);
    check(s == SML_OK && d.misses == 2 && d.excused == 1 && d.special && d.col == 1 &&
              strstr(why, "a special value no declared exception covers"),
          "a NaN where a value is due is excused by a value bound: '%s'", why);
    /* merged chunks: the row offset applied, a special miss preferred to a value miss */
    sml_dev_report a = {1, 1, 1.2, 2.0, -1, -1, 0, 0, 0, 0, 0}, b = d;
    sml_dev_report_merge(&a, &b, 40);
    check(a.misses == 3 && a.excused == 2 && a.row == 40 && a.col == 1 && a.special,
          "merge: %lld misses, %lld excused, row %lld", (long long)a.misses, (long long)a.excused,
          (long long)a.row);
}

/* The row exceptions, on the rows cuDNN shrank to: three fp32 logits of -FLT_MAX (its idle
 * lanes hold -FLT_MAX as the max's identity and count: 0.25 each, not 1/3), and a
 * log_softmax row whose max is 9560, where fp32's m + log(s) drops log(s) = 0.000335. */
static void row_exceptions(void) {
    static const sml_deviation lowest = {.exceptions = SML_DEV_LOWEST_MAX_ROW};
    static const sml_deviation lse = {.exceptions = SML_DEV_LOG_SOFTMAX_LSE_ROUNDED};
    sml_dev_terms tl, te, tnone;
    sml_dev_terms_get(&lowest, SML_SOFTMAX, SML_F32, &tl);
    sml_dev_terms_get(&lse, SML_LOG_SOFTMAX, SML_F16, &te);
    sml_dev_terms_get(NULL, SML_SOFTMAX, SML_F32, &tnone);
    float x[3] = {-3.40282347e38f, -3.40282347e38f, -3.40282347e38f}, out[3] = {.25f, .25f, .25f};
    double want[3];
    sml_ref_run(SML_SOFTMAX, SML_F32, 1, 3, 3, x, NULL, want);
    sml_check_report rep;
    sml_dev_report d;
    sml_dev_check_against(&tl, SML_SOFTMAX, SML_F32, 1, 3, 3, x, NULL, want, out, &rep, &d);
    check(!rep.pass && d.misses == 3 && sml_dev_report_pass(&d),
          "a -FLT_MAX row's 0.25s under SML_DEV_LOWEST_MAX_ROW: %lld of %lld excused",
          (long long)d.excused, (long long)d.misses);
    sml_dev_check_against(&tnone, SML_SOFTMAX, SML_F32, 1, 3, 3, x, NULL, want, out, &rep, &d);
    check(!sml_dev_report_pass(&d), "a -FLT_MAX row's 0.25s excused with no declaration");
    x[1] = 0.0f; /* the max is 0 now: the row is an ordinary one */
    sml_ref_run(SML_SOFTMAX, SML_F32, 1, 3, 3, x, NULL, want);
    out[0] = out[2] = 0.0f;
    out[1] = 0.75f;
    sml_dev_check_against(&tl, SML_SOFTMAX, SML_F32, 1, 3, 3, x, NULL, want, out, &rep, &d);
    check(!sml_dev_report_pass(&d) && d.row == 0 && d.col == 1,
          "SML_DEV_LOWEST_MAX_ROW excused a row whose max is 0 (col %lld)", (long long)d.col);
    /* log_softmax fp16, 513 columns: 9560 once, the rest 9560 - 8 (each e^-8 of the max) */
    enum { N = 513 };
    uint16_t lx[N], lo[N];
    double lw[N], xd[N];
    for (int j = 0; j < N; j++) sml_store(SML_F16, lx, j, j == 0 ? 9560.0 : 9552.0);
    for (int j = 0; j < N; j++) xd[j] = sml_load(SML_F16, lx, j);
    sml_ref_run(SML_LOG_SOFTMAX, SML_F16, 1, N, N, lx, NULL, lw);
    double slack = sml_dev_row_slack(&te, xd, N);
    check(slack == sml_ulp(SML_F32, 9560.0 + log((double)N)),
          "the slack of a row whose max is 9560: %g", slack);
    /* what x - fl32(m + log s) gives: each output off by log s's part that fp32 drops */
    float lse32 = (float)(9560.0 + log(1.0 + 512.0 * exp(-8.0)));
    for (int j = 0; j < N; j++) sml_store(SML_F16, lo, j, (double)((float)xd[j] - lse32));
    sml_dev_check_against(&te, SML_LOG_SOFTMAX, SML_F16, 1, N, N, lx, NULL, lw, lo, &rep, &d);
    check(!rep.pass && sml_dev_report_pass(&d),
          "fp32-rounded m + log s under SML_DEV_LOG_SOFTMAX_LSE_ROUNDED: %lld of %lld excused",
          (long long)d.excused, (long long)d.misses);
    sml_store(SML_F16, lo, 0, sml_load(SML_F16, lo, 0) - 2.0 * slack - 0.01);
    sml_dev_check_against(&te, SML_LOG_SOFTMAX, SML_F16, 1, N, N, lx, NULL, lw, lo, &rep, &d);
    check(!sml_dev_report_pass(&d) && d.col == 0,
          "an output off by 2 slacks more excused under SML_DEV_LOG_SOFTMAX_LSE_ROUNDED");
}

/* A long backward row whose every output is a special value the declaration excuses costs a
 * pass over the row per row, not per element: the row's facts (sml_dev_row_of) are found
 * once. 262,144 columns of log_softmax_bwd fp32 whose finite dy add up past -FLT_MAX before
 * a +inf (SML_DEV_BWD_SUM_CLASS: NaN for every -inf), and the same row in bf16
 * (SML_DEV_BWD_16BIT_OVERFLOW). Judged in at most 5 s of CPU each: a pass over the row per
 * element is 6.9e10 steps. */
static void long_special_rows(void) {
    enum { N = 1 << 18 };
    static float y[N], dy[N], out[N];
    static uint16_t yb[N], dyb[N], outb[N];
    static double want[N];
    static const sml_deviation lost = {.exceptions = SML_DEV_BWD_SUM_CLASS};
    static const sml_deviation over = {.exceptions = SML_DEV_BWD_16BIT_OVERFLOW};
    for (int j = 0; j < N; j++) {
        y[j] = (float)-log((double)N); /* log(1/N): a valid row of log-probabilities */
        dy[j] = j < N - 1 ? -3e38f : INFINITY;
        out[j] = NAN;
        sml_store(SML_BF16, yb, j, y[j]);
        sml_store(SML_BF16, dyb, j, dy[j]);
        sml_store(SML_BF16, outb, j, NAN);
    }
    const struct {
        const char *what;
        const sml_deviation *d;
        sml_dtype dt;
        const void *y, *dy, *out;
    } rows[2] = {{"fp32, the sum's class", &lost, SML_F32, y, dy, out},
                 {"bf16, 16-bit overflow", &over, SML_BF16, yb, dyb, outb}};
    for (int i = 0; i < 2; i++) {
        sml_dev_terms t;
        sml_dev_terms_get(rows[i].d, SML_LOG_SOFTMAX_BWD, rows[i].dt, &t);
        sml_ref_run(SML_LOG_SOFTMAX_BWD, rows[i].dt, 1, N, N, rows[i].y, rows[i].dy, want);
        sml_check_report rep;
        sml_dev_report d;
        clock_t c0 = clock();
        sml_status s = sml_dev_check_against(&t, SML_LOG_SOFTMAX_BWD, rows[i].dt, 1, N, N,
                                             rows[i].y, rows[i].dy, want, rows[i].out, &rep, &d);
        double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
        check(s == SML_OK && d.misses >= N - 1 && sml_dev_report_pass(&d) && cpu <= 5.0,
              "1x%d log_softmax_bwd %s, every output NaN: %lld of %lld misses excused in %.2f s "
              "of CPU (at most 5 s)",
              N, rows[i].what, (long long)d.excused, (long long)d.misses, cpu);
    }
}

/* The same kind of rows through the properties that judge special values against a
 * declaration, on a CPU kernel that gives NaN everywhere, each judged in at most 5 s of CPU:
 * fp32 rows whose class is lost, under SML_DEV_BWD_SUM_CLASS, pass agreement and
 * special_values within it; bf16 rows of small dy under SML_DEV_BWD_16BIT_OVERFLOW, which does
 * not cover them, fail agreement, special_values and bwd_sum (which asks, per row, whether a
 * special value is excused before it adds the row up). */
static const sml_deviation LOST = {.exceptions = SML_DEV_BWD_SUM_CLASS};
static const sml_deviation OVER = {.exceptions = SML_DEV_BWD_16BIT_OVERFLOW};

static sml_status all_nan(sml_handle *h, const sml_problem *p) {
    (void)h;
    for (int64_t r = 0; r < p->rows; r++)
        for (int64_t j = 0; j < p->cols; j++) sml_store(p->dtype, p->out, r * p->ld + j, NAN);
    return SML_OK;
}

static void judged_row(sml_dtype dt, const sml_deviation *d, double dy_body, double dy_last,
                       const sml_prop_id *props, int nprops, sml_prop_outcome want,
                       const char *what) {
    enum { N = 1 << 18 };
    const sml_kernel k = {"nan_bwd",
                          "tests/unit/test_deviation.c",
                          SML_DEVICE_CPU,
                          1u << SML_LOG_SOFTMAX_BWD,
                          1u << dt,
                          1,
                          0,
                          all_nan,
                          "NaN for every element",
                          {NULL, 0.0, NULL},
                          "NaN rows",
                          0,
                          d};
    size_t esz = sml_dtype_size(dt);
    sml_prop_case c = {.op = SML_LOG_SOFTMAX_BWD,
                       .dtype = dt,
                       .rows = 1,
                       .cols = N,
                       .ld = N,
                       .seed = 1,
                       .x = malloc(N * esz),
                       .dy = malloc(N * esz)};
    snprintf(c.family, sizeof c.family, "%s", what);
    sml_prop_env env;
    if (!c.x || !c.dy || sml_prop_env_init(&env, &k, NULL) != SML_OK) {
        check(0, "no memory for the 1x%d case", N);
        sml_prop_case_free(&c);
        return;
    }
    for (int j = 0; j < N; j++) {
        sml_store(dt, c.x, j, -log((double)N));
        sml_store(dt, c.dy, j, j < N - 1 ? dy_body : dy_last);
    }
    sml_prop_eval e;
    sml_prop_eval_begin(&e, &env, &c);
    for (int i = 0; i < nprops; i++) {
        sml_prop_verdict v;
        clock_t c0 = clock();
        sml_prop_eval_check(&e, props[i], &v);
        double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
        check(v.outcome == want && cpu <= 5.0,
              "1x%d log_softmax_bwd %s, every output NaN, %s: %s %s in %.2f s of CPU (want %s in "
              "at most 5 s): %.200s",
              N, sml_dtype_name(dt), what, sml_prop_name(props[i]),
              sml_prop_outcome_name(v.outcome), cpu, sml_prop_outcome_name(want), v.msg);
    }
    sml_prop_eval_end(&e);
    sml_prop_env_free(&env);
    sml_prop_case_free(&c);
}

static void long_special_rows_judged(void) {
    const sml_prop_id excused[2] = {SML_PROP_AGREEMENT, SML_PROP_SPECIAL_VALUES};
    judged_row(SML_F32, &LOST, -3e38, INFINITY, excused, 2, SML_PROP_PASS,
               "the class lost, declared");
    const sml_prop_id failed[3] = {SML_PROP_AGREEMENT, SML_PROP_SPECIAL_VALUES, SML_PROP_BWD_SUM};
    judged_row(SML_BF16, &OVER, 0.5, 0.5, failed, 3, SML_PROP_FAIL,
               "small dy, a 16-bit overflow declared");
}

int main(void) {
    words();
    scope();
    exceptions();
    values();
    row_exceptions();
    long_special_rows();
    long_special_rows_judged();
    return sml_tally_finish(&T);
}
