/* candidates.c: which plans the tuner times for a cell, and how long a run should take. */
#include <string.h>

#include "bench/bench.h"
#include "bench/parallel.h"
#include "bench/sweeps.h"
#include "kernels/auto_dispatch.h"
#include "tune/tune.h"

/* Rows longer than this get the split and coop grids: where `block` stops holding every
 * row in registers and clusters or a cooperative grid take over. */
#define TUNE_LONG_COLS 16384

static int add(sml_plan *out, int n, int cap, sml_plan p) {
    if (n < cap) out[n] = p;
    return n + 1;
}

static int family_max(const char *name, int64_t fallback) {
    const sml_kernel *k = sml_kernel_find(name);
    return (int)(k && k->max_cols > 0 ? k->max_cols : fallback);
}

int sml_tune_candidates(sml_op op, int64_t cols, int clusters, sml_plan *out, int cap) {
    (void)op;
    int n = 0;
    const sml_plan none = {SML_PLAN_WARP, 0, 0, 0, 0, 0, 0, 0};
    sml_plan p = none;
    if (cols <= family_max("warp", 1024)) {
        static const int K[] = {0, 1, 2, 4, 8};
        for (size_t k = 0; k < sizeof K / sizeof K[0]; k++)
            for (int R = 0; R <= 2; R += 2) {
                p = none;
                p.family = SML_PLAN_WARP;
                p.K = K[k];
                p.R = R;
                n = add(out, n, cap, p);
            }
        /* Grids past residency: the launcher's grid is what fits at once (16 blocks of 128
         * threads an SM), each warp walking its rows one after another; with 2 or 4 times
         * that, a short row is a warp's only row and the hardware starts a block as another
         * retires, as the copy kernel that the limit is measured with does (auto's fp32
         * backward at 16384 x 128: 96-97% of that limit, walking two rows a warp). */
        for (int b = 32; b <= 64; b *= 2) {
            p = none;
            p.family = SML_PLAN_WARP;
            p.blocks = b;
            n = add(out, n, cap, p);
        }
    }
    /* block's launcher holds rows past its registry line's 16,384 columns (auto sends it fp32
     * forward and 16-bit backward rows of up to 32,768); where it cannot, it refuses. */
    if (cols <= SML_AUTO_BLOCK_WIDE_MAX_COLS) {
        static const int K[] = {0, 1, 2, 4, 8, 16};
        for (size_t k = 0; k < sizeof K / sizeof K[0]; k++) {
            p = none;
            p.family = SML_PLAN_BLOCK;
            p.K = K[k];
            n = add(out, n, cap, p);
        }
    }
    p = none;
    p.family = SML_PLAN_ONLINE;
    n = add(out, n, cap, p);
    if (!clusters) return n < cap ? n : cap;
    if (cols > 1024) {
        p = none;
        p.family = SML_PLAN_SPLIT;
        n = add(out, n, cap, p);
    }
    if (cols > TUNE_LONG_COLS) {
        for (int C = 2; C <= 16; C *= 2) {
            p = none;
            p.family = SML_PLAN_SPLIT;
            p.C = C;
            n = add(out, n, cap, p);
        }
        static const int STAGES[] = {0, 2, 4};
        for (size_t st = 0; st < sizeof STAGES / sizeof STAGES[0]; st++) {
            p = none;
            p.family = SML_PLAN_COOP;
            p.stages = STAGES[st];
            n = add(out, n, cap, p);
        }
    }
    return n < cap ? n : cap;
}

void sml_tune_estimate(const sml_tune_opts *o, int clusters, size_t *cells, size_t *candidates,
                       double *seconds) {
    *cells = *candidates = 0;
    *seconds = 0;
    sml_sweep sw;
    if (sml_sweep_get(o->sweep, &sw) != SML_OK) return;
    sml_plan c[SML_TUNE_MAX_CANDIDATES];
    for (size_t s = 0; s < sw.n; s++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) {
            if (!(sw.shape[s].dtypes & o->dtypes & (1u << d))) continue;
            const double elems = (double)sw.shape[s].rows * (double)sw.shape[s].cols;
            *seconds += elems * 200e-9 / sml_host_threads() + 0.05; /* inputs, uploads */
            for (int op = 0; op < SML_OP_COUNT; op++) {
                if (!(o->ops & (1u << op))) continue;
                const int k = sml_tune_candidates((sml_op)op, sw.shape[s].cols, clusters, c,
                                                  SML_TUNE_MAX_CANDIDATES);
                ++*cells;
                *candidates += (size_t)k;
                /* Refused ones cost nothing; a timed one about 30 ms (warm-up, 10 samples), the
                 * re-timing of the best and the rules' plan 4 more. */
                *seconds += 0.6 * k * 0.03 + 4 * 0.03;
            }
        }
}
