/* test_generators: the engine's generators (src/prop/gen.c) do what docs/PROPERTIES.md
 * promises: a case is a pure function of its seed and level; every value is one the dtype
 * can represent; shapes stay inside the kernel's limits and the size caps; backward inputs
 * are real rounded forward outputs; and over a few thousand draws every edge the engine
 * claims to reach is reached (dispatch thresholds +-1, > 65,535 rows, rows past 2^20 columns,
 * primes, padding, misalignment, in place, every value family, every special value). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/auto_dispatch.h"
#include "prop/gen.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "test_support.h"

static sml_tally T = {"test_generators", 0, 0, 0};

static const char *const REPRO = "./build/tests/property/test_generators";

static int same_case(const sml_prop_case *a, const sml_prop_case *b) {
    if (a->rows != b->rows || a->cols != b->cols || a->ld != b->ld || a->offset != b->offset ||
        a->inplace != b->inplace || strcmp(a->family, b->family))
        return 0;
    size_t n = (size_t)(a->rows * a->cols) * sml_dtype_size(a->dtype);
    if (memcmp(a->x, b->x, n)) return 0;
    if (a->dy && memcmp(a->dy, b->dy, n)) return 0;
    return 1;
}

static int is_prime(int64_t n) {
    if (n < 2) return 0;
    for (int64_t d = 2; d * d <= n; d++)
        if (n % d == 0) return 0;
    return 1;
}

static int same_shape(const sml_prop_case *a, const sml_prop_case *b) {
    return a->rows == b->rows && a->cols == b->cols && a->ld == b->ld && a->offset == b->offset &&
           a->inplace == b->inplace && a->tall == b->tall;
}

/* Tall cases (gen.c): the GPU profile draws them at its rate, each inside its cap, with more
 * rows than split keeps resident and, often enough, rows long enough for split's whole steps in
 * each dtype, or a few dozen rows cut over clusters; the CI profile never draws one; the
 * shape-only draw matches the full one. */
static void check_tall(const sml_kernel *naive, const sml_kernel *limited) {
    sml_prop_config gpu;
    sml_prop_config_init(&gpu, SML_PROP_PROFILE_GPU);
    sml_prop_sizes every = gpu.sizes;
    every.tall_prob = 1.0;
    const int N = 20000;
    int bad = 0, fp32_whole = 0, b16_whole = 0, long_rows = 0, lim_bad = 0;
    for (int i = 0; i < N; i++) {
        sml_prop_case c, l;
        uint64_t seed = sml_derive_seed(gpu.seed ^ 0x7a11, (uint64_t)i);
        sml_prop_gen_shape(naive, SML_SOFTMAX, SML_F32, seed, i % 101, &every, &c);
        sml_prop_gen_shape(limited, SML_SOFTMAX, SML_F32, seed, i % 101, &every, &l);
        const int short_tall = c.rows >= 1057 && c.cols >= 1536,
                  long_tall = c.rows >= 33 && c.rows <= 128 && c.cols >= 65536;
        if (!c.tall || !(short_tall || long_tall) || c.rows * c.cols > every.tall_max_elems) {
            if (!bad++)
                sml_test_check(&T, 0, REPRO,
                               "tall draw %d: %lldx%lld is neither more than 1,056 rows of at "
                               "least 1,536 columns "
                               "nor 33-128 rows of at least 65,536, within %lld elements",
                               i, (long long)c.rows, (long long)c.cols,
                               (long long)every.tall_max_elems);
        }
        if (l.cols > limited->max_cols || l.rows < 33) {
            if (!lim_bad++)
                sml_test_check(&T, 0, REPRO, "tall draw %d for a %lld-column kernel: %lldx%lld", i,
                               (long long)limited->max_cols, (long long)l.rows, (long long)l.cols);
        }
        fp32_whole += short_tall && c.rows > 2112;
        b16_whole += short_tall && c.rows > 2112 && c.cols >= 3072;
        long_rows += long_tall;
    }
    sml_test_check(&T, !bad && !lim_bad, REPRO,
                   "%d tall draws within their limits (%d bad, %d bad for a limited kernel)", N,
                   bad, lim_bad);
    sml_test_check(&T, fp32_whole > N * 7 / 20, REPRO,
                   "tall draws past 2,112 rows (split's fp32 whole steps): %d of %d", fp32_whole,
                   N);
    sml_test_check(
        &T, b16_whole > N * 2 / 25, REPRO,
        "tall draws past 2,112 rows of 3,072 columns or more (16-bit whole steps): %d of %d",
        b16_whole, N);
    sml_test_check(&T, long_rows > N * 3 / 20, REPRO,
                   "tall draws of 33-128 rows of 65,536 columns or more: %d of %d", long_rows, N);

    /* At the profiles' own rates, over one run's case count. */
    int tall_gpu = 0, tall_ci = 0;
    sml_prop_config ci;
    sml_prop_config_init(&ci, SML_PROP_PROFILE_CI);
    for (int i = 0; i < 10000; i++) {
        sml_prop_case c;
        sml_prop_gen_shape(naive, SML_LOG_SOFTMAX, SML_BF16, sml_derive_seed(gpu.seed, (uint64_t)i),
                           i / 100, &gpu.sizes, &c);
        tall_gpu += c.tall;
        sml_prop_gen_shape(naive, SML_LOG_SOFTMAX, SML_BF16, sml_derive_seed(ci.seed, (uint64_t)i),
                           i / 100, &ci.sizes, &c);
        tall_ci += c.tall;
    }
    sml_test_check(&T, tall_gpu >= 1 && tall_gpu <= 15, REPRO,
                   "GPU profile: %d tall cases in 10,000 (rate %.4f)", tall_gpu,
                   gpu.sizes.tall_prob);
    sml_test_check(&T, tall_ci == 0, REPRO, "CI profile: %d tall cases in 10,000", tall_ci);

    /* The CI profile's shapes are the ones it drew before tall cases existed: this hash of
     * 3,000 shapes (FNV-1a over rows, cols, ld, offset, in place) was computed with 9ebc264's
     * sml_prop_gen_case. A generator change that moves every CI case (one more random draw
     * per case, say) fails here; if it is meant, compute the new hash and say why. */
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < 3000; i++) {
        sml_prop_case c;
        sml_prop_gen_shape(i % 10 == 9 ? limited : naive, (sml_op)(i % 4), (sml_dtype)(i / 4 % 3),
                           sml_derive_seed(ci.seed, (uint64_t)i), i % 101, &ci.sizes, &c);
        const int64_t f[5] = {c.rows, c.cols, c.ld, c.offset, c.inplace};
        for (int j = 0; j < 5; j++)
            for (int b = 0; b < 8; b++) {
                h ^= (unsigned char)((uint64_t)f[j] >> (8 * b));
                h *= 1099511628211ull;
            }
    }
    sml_test_check(&T, h == 0x08acac88fe7239aaull, REPRO,
                   "CI profile: 3,000 shapes hash to 0x%016llx, not 9ebc264's 0x08acac88fe7239aa",
                   h);

    /* The shape-only draw is the full draw's shape: one tall case and a few ordinary ones. */
    int mismatch = 0;
    for (int i = 0; i < 40; i++) {
        sml_prop_case a, b;
        const sml_prop_sizes *sz = i == 0 ? &every : &gpu.sizes;
        uint64_t seed = sml_derive_seed(gpu.seed ^ 0x5a, (uint64_t)i);
        sml_prop_gen_shape(naive, SML_SOFTMAX_BWD, SML_F16, seed, 50, sz, &a);
        if (sml_prop_gen_case(naive, SML_SOFTMAX_BWD, SML_F16, seed, 50, sz, &b) != SML_OK) {
            sml_test_check(&T, 0, REPRO, "shape check %d: generation failed", i);
            continue;
        }
        if (!same_shape(&a, &b) && !mismatch++)
            sml_test_check(
                &T, 0, REPRO, "shape check %d: gen_shape drew %lldx%lld, gen_case %lldx%lld", i,
                (long long)a.rows, (long long)a.cols, (long long)b.rows, (long long)b.cols);
        if (i == 0 && !b.tall)
            sml_test_check(&T, 0, REPRO, "shape check 0 is not tall (%lldx%lld)", (long long)b.rows,
                           (long long)b.cols);
        sml_prop_case_free(&b);
    }
    sml_test_check(&T, !mismatch, REPRO, "sml_prop_gen_shape draws sml_prop_gen_case's shapes");
}

int main(void) {
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_CI);
    const sml_kernel *naive = sml_kernel_find("cpu_naive");
    /* A kernel with limits, like warp: 1..1024 columns. */
    sml_kernel limited = *naive;
    limited.name = "limited";
    limited.max_cols = 1024;

    /* Pure function of (seed, level). */
    for (int i = 0; i < 200; i++) {
        sml_prop_case a, b;
        sml_op op = (sml_op)(i % SML_OP_COUNT);
        sml_dtype dt = (sml_dtype)(i / 4 % SML_DTYPE_COUNT);
        uint64_t seed = sml_derive_seed(cfg.seed, (uint64_t)i);
        sml_prop_gen_case(naive, op, dt, seed, i % 101, &cfg.sizes, &a);
        sml_prop_gen_case(naive, op, dt, seed, i % 101, &cfg.sizes, &b);
        if (!same_case(&a, &b))
            sml_test_check(&T, 0, REPRO, "case %d drew differently from the same seed and level",
                           i);
        sml_prop_case_free(&a);
        sml_prop_case_free(&b);
    }
    sml_tally_pass(&T);

    /* Coverage and invariants over many draws at the top of the ramp. */
    enum { NaN_, PINF, NINF, NZERO, SUBN, TOP, NEAR88, NEAR11, NCOV };
    static const char *const COV[NCOV] = {"NaN",       "+inf",      "-inf",   "-0",
                                          "subnormal", "dtype max", "~88.72", "~11.09"};
    int cov[SML_DTYPE_COUNT][NCOV] = {{0}};
    int fam_seen[16] = {0};
    int64_t max_rows = 0, max_cols = 0, prime_big = 0, padded = 0, offset = 0, inplace = 0,
            one_col = 0;
    int64_t edges[256];
    size_t ne = sml_prop_edge_cols(NULL, edges, 256);
    int *edge_hit = calloc(ne, sizeof *edge_hit);
    int bad_repr = 0, bad_shape = 0, bad_y = 0;
    const int N = 4000;
    for (int i = 0; i < N; i++) {
        sml_op op = (sml_op)(i % SML_OP_COUNT);
        sml_dtype dt = (sml_dtype)(i / 4 % SML_DTYPE_COUNT);
        const sml_kernel *k = i % 10 == 9 ? &limited : naive;
        sml_prop_case c;
        if (sml_prop_gen_case(k, op, dt, sml_derive_seed(cfg.seed ^ 0x77, (uint64_t)i), 100,
                              &cfg.sizes, &c) != SML_OK) {
            sml_test_check(&T, 0, REPRO, "case %d: generation failed", i);
            continue;
        }
        int64_t n = c.rows * c.cols;
        if (c.cols < 1 || c.rows < 1 || c.ld < c.cols || c.offset < 0 || c.offset > 15 ||
            (c.inplace && sml_op_is_backward(op)) || n > cfg.sizes.big_max_elems ||
            (k->max_cols && c.cols > k->max_cols) || c.cols > cfg.sizes.max_cols) {
            if (!bad_shape++)
                sml_test_check(
                    &T, 0, REPRO,
                    "case %d: shape %lldx%lld ld %lld offset %lld in place %d breaks the limits", i,
                    (long long)c.rows, (long long)c.cols, (long long)c.ld, (long long)c.offset,
                    c.inplace);
        }
        if (c.rows > max_rows) max_rows = c.rows;
        if (c.cols > max_cols) max_cols = c.cols;
        if (c.cols > 1000 && is_prime(c.cols)) prime_big++;
        padded += c.ld > c.cols;
        offset += c.offset > 0;
        inplace += c.inplace;
        one_col += c.cols == 1;
        for (size_t e = 0; e < ne; e++) edge_hit[e] += c.cols == edges[e];
        for (int f = 0; f < sml_prop_family_count(); f++)
            if (strstr(c.family, sml_prop_family_name(f))) fam_seen[f]++;
        const void *src = sml_prop_case_source(&c);
        double top = sml_dtype_max(dt), tiny = sml_dtype_min_normal(dt);
        for (int64_t j = 0; j < n; j++) {
            double v = sml_load(dt, src, j);
            double r = sml_round_to(dt, v);
            if (!(r == v || (isnan(r) && isnan(v))) && !bad_repr++)
                sml_test_check(&T, 0, REPRO, "case %d: value %.17g is not representable in %s", i,
                               v, sml_dtype_name(dt));
            int *cv = cov[dt];
            if (isnan(v))
                cv[NaN_]++;
            else if (v == INFINITY)
                cv[PINF]++;
            else if (v == -INFINITY)
                cv[NINF]++;
            else if (v == 0.0 && signbit(v))
                cv[NZERO]++;
            else if (v != 0.0 && fabs(v) < tiny)
                cv[SUBN]++;
            else if (fabs(v) == top)
                cv[TOP]++;
            else if (fabs(v - 88.72) < 0.5)
                cv[NEAR88]++;
            else if (fabs(v - 11.09) < 0.2)
                cv[NEAR11]++;
        }
        if (sml_op_is_backward(op)) {
            double *y = malloc((size_t)n * sizeof *y);
            sml_ref_run(op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX, dt, c.rows, c.cols,
                        c.cols, c.logits, NULL, y);
            for (int64_t j = 0; j < n; j++) {
                double want = sml_round_to(dt, y[j]), got = sml_load(dt, c.x, j);
                if (!(want == got || (isnan(want) && isnan(got))) && !bad_y++)
                    sml_test_check(&T, 0, REPRO,
                                   "case %d: y[%lld] = %.9g is not the rounded forward output %.9g",
                                   i, (long long)j, got, want);
            }
            free(y);
        }
        sml_prop_case_free(&c);
    }
    sml_test_check(&T, !bad_shape, REPRO,
                   "every shape inside the kernel's limits and the size caps (%d bad)", bad_shape);
    sml_test_check(&T, !bad_repr, REPRO, "every value representable in its dtype (%d bad)",
                   bad_repr);
    sml_test_check(&T, !bad_y, REPRO,
                   "every backward y a rounded reference forward output (%d bad)", bad_y);
    sml_test_check(&T, max_rows > 65535, REPRO, "more than 65,535 rows drawn (max %lld)",
                   (long long)max_rows);
    sml_test_check(&T, max_cols > (1 << 20), REPRO, "rows longer than 2^20 drawn (max %lld)",
                   (long long)max_cols);
    sml_test_check(&T, prime_big > 0, REPRO, "prime column counts above 1000 drawn");
    sml_test_check(&T, padded > N / 10 && offset > N / 10 && inplace > N / 50 && one_col > 0, REPRO,
                   "padding (%lld), misaligned bases (%lld), in place (%lld), one column (%lld)",
                   (long long)padded, (long long)offset, (long long)inplace, (long long)one_col);
    for (int f = 0; f < sml_prop_family_count(); f++)
        sml_test_check(&T, fam_seen[f] > 0, REPRO, "value family %s drawn",
                       sml_prop_family_name(f));
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
        for (int v = 0; v < NCOV; v++)
            sml_test_check(&T, cov[dt][v] > 0, REPRO, "%s: %s values drawn",
                           sml_dtype_name((sml_dtype)dt), COV[v]);
    /* The thresholds the edge list must hold: every registry max_cols and auto's, +-1. */
    int64_t must[64];
    int nm = 0;
    for (int i = 0; i < SML_AUTO_N_COL_THRESHOLDS; i++)
        for (int d = -1; d <= 1; d++) must[nm++] = sml_auto_col_threshold(i) + d;
    for (size_t i = 0; i < sml_kernel_count() && nm < 60; i++)
        if (sml_kernel_at(i)->max_cols > 0)
            for (int d = -1; d <= 1; d++) must[nm++] = sml_kernel_at(i)->max_cols + d;
    for (int i = 0; i < nm; i++) {
        int in = 0;
        for (size_t e = 0; e < ne; e++) in |= edges[e] == must[i];
        sml_test_check(&T, in, REPRO, "edge list holds %lld", (long long)must[i]);
    }
    int hit = 0, reachable = 0;
    for (size_t e = 0; e < ne; e++) {
        if (edges[e] > cfg.sizes.small_max_elems) continue;
        reachable++;
        hit += edge_hit[e] > 0;
    }
    sml_test_check(&T, hit == reachable, REPRO,
                   "every edge column count up to %lld drawn (%d of %d)",
                   (long long)cfg.sizes.small_max_elems, hit, reachable);
    {
        int64_t lim[256];
        size_t nl = sml_prop_edge_cols(&limited, lim, 256);
        sml_test_check(&T, nl > 0 && lim[nl - 1] == 1024, REPRO,
                       "edges for a 1024-column kernel stop at 1024 (got %lld)",
                       (long long)(nl ? lim[nl - 1] : -1));
    }
    free(edge_hit);
    check_tall(naive, &limited);
    return sml_tally_finish(&T);
}
