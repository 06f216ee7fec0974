/* test_block_plan: `block`'s launch plan (kernels/block_plan.h) on the CPU.
 *   - Every shape `auto` gives block (up to sml_auto_block_max_cols for the op, dtype and
 *     alignment) gets a K the kernel is built for and a block that holds the row within the
 *     launch bounds of that variant (SML_BLOCK_MAX_THREADS, by direction and op).
 *   - The plans measured best (docs/KERNELS.md, `block`; H100 and H200, 132 SMs) are pinned, so a
 *     change of a rule shows here before it shows in a ledger.
 * Planted checks: the forward one-wave rule switched off fails 6 of the 22 pinned
 * plans; its idle-lane guard dropped fails 1 (fp16 4096 x 768), its two-warp floor dropped 1
 * (fp32 5120 x 512); the wide backward rule dropped fails 5 and the launchable check (16-bit
 * log_softmax_bwd of 16,392 columns as 1,056 threads x 2), started at 4,096 columns 2, its
 * one-block-per-row grid dropped 5;
 * SML_BLOCK_MAX_THREADS giving 16-bit backward K = 4 512 threads (the bound of softmax's lean
 * build, SML_BLOCK_BWD16_LEAN_THREADS) fails the launchable check (16,392 columns as 544
 * threads x 4); the lean flag dropped fails 3 of the 10 lean plans. */
#include <stdio.h>

#include "kernels/auto_dispatch.h"
#include "kernels/block_plan.h"
#include "unit_case.h"

/* K values sml_block_kernel is instantiated for (kernels/softmax_block.cu, block_go). */
static int k_built(int V, int bwd, int K) {
    if (V == 1) return K == 4 || K == 16;
    if (K == 1 || K == 2 || K == 4) return 1;
    return bwd ? K == 8 && V == 4 : K == 8 || (K == 16 && V == 4);
}

static void plan_is_launchable(unit_run *u, int V, int bwd, int log) {
    const int sms_set[] = {1, 78, 132, 144};
    const int64_t rows_set[] = {1, 100, 2048, 4096, 6335, 6336, 65536};
    const sml_op op =
        bwd ? (log ? SML_LOG_SOFTMAX_BWD : SML_SOFTMAX_BWD) : (log ? SML_LOG_SOFTMAX : SML_SOFTMAX);
    /* V = 4 is fp32, V = 8 fp16 or bf16 (one rule), V = 1 any dtype, misaligned. */
    const int64_t max_cols = sml_auto_block_max_cols(op, V == 4 ? SML_F32 : SML_F16, V > 1);
    const int64_t max_chunks = max_cols / V;
    char why[200] = "";
    for (int64_t chunks = 1; chunks <= max_chunks && !why[0]; chunks++)
        for (int si = 0; si < 4 && !why[0]; si++)
            for (int ri = 0; ri < 7 && !why[0]; ri++) {
                const sml_block_cfg c = sml_block_plan(chunks, V, bwd, rows_set[ri], sms_set[si]);
                const int t = sml_block_threads(chunks, c.K);
                const char *bad = !k_built(V, bwd, c.K)       ? "K not built"
                                  : (int64_t)t * c.K < chunks ? "block does not hold the row"
                                  : t > SML_BLOCK_MAX_THREADS(V, c.K, bwd, log) ? "too many threads"
                                  : c.blocks_per_sm < 0                         ? "negative grid"
                                  : c.lean && (bwd || c.K * V != SML_BLOCK_LEAN_ELEMS ||
                                               t > SML_BLOCK_LEAN_THREADS)
                                      ? "lean build not built for this K or block"
                                      : NULL;
                if (bad)
                    snprintf(why, sizeof why,
                             "V %d %s chunks %lld rows %lld sms %d: K %d threads %d: %s", V,
                             sml_op_name(op), (long long)chunks, (long long)rows_set[ri],
                             sms_set[si], c.K, t, bad);
            }
    UNIT_EXPECT(u, !why[0], "%s", why);
}

static void measured_plans(unit_run *u) {
    /* cols, elements per chunk, bwd, rows, want K and threads (132 SMs) */
    const struct {
        int64_t cols;
        int V, bwd;
        int64_t rows;
        int K, threads;
    } c[] = {
        {512, 4, 0, 4096, 2, 64}, /* one wave: 31 rows per SM, 16 blocks of 128 */
        {1024, 4, 0, 4096, 4, 64},
        {1024, 4, 0, 2048, 2, 128},
        {512, 4, 0, 3072, 2, 64},
        {512, 4, 0, 5120, 2, 64}, /* not below two warps */
        {1024, 8, 0, 4096, 2, 64},
        {512, 4, 0, 2048, 1, 128}, /* 16 rows per SM: one wave at K = 1 */
        {512, 4, 0, 1024, 1, 128},
        {1024, 8, 0, 2048, 1, 128},
        {768, 8, 0, 4096, 1, 96},  /* 64 x 2 would idle a quarter of its lanes */
        {512, 4, 1, 4096, 1, 128}, /* backward keeps K = 1 */
        {1024, 8, 1, 4096, 1, 128},
        {512, 4, 0, 32768, 4, 32}, /* many rows */
        {512, 8, 1, 32768, 2, 32},
        {16384, 4, 0, 4096, 16, 256}, /* mid forward: fixed K */
        {32768, 4, 0, 4096, 16, 512},
        {4096, 4, 1, 4096, 4, 256}, /* backward below the wide rule */
        {4096, 8, 1, 4096, 2, 256},
        {8192, 4, 1, 4096, 8, 256}, /* backward: 32 elements of y and dy per thread */
        {16384, 4, 1, 4096, 8, 512},
        {8192, 8, 1, 4096, 4, 256},
        {16384, 8, 1, 4096, 4, 512},
        {32768, 8, 1, 4096, 4, 1024}, /* 16-bit backward only */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const int64_t chunks = c[i].cols / c[i].V;
        const sml_block_cfg p = sml_block_plan(chunks, c[i].V, c[i].bwd, c[i].rows, 132);
        const int t = sml_block_threads(chunks, p.K);
        UNIT_EXPECT(u, p.K == c[i].K && t == c[i].threads,
                    "%s %s %lldx%lld: %d threads x %d, want %d x %d",
                    c[i].V == 4 ? "fp32" : "16-bit", c[i].bwd ? "bwd" : "fwd", (long long)c[i].rows,
                    (long long)c[i].cols, t, p.K, c[i].threads, c[i].K);
        /* A grid of one block per row for forward rows past 1,024 columns and backward rows of
         * SML_BLOCK_BWD_WIDE_COLS and more; the launcher's default grid elsewhere. */
        const int row_grid =
            c[i].bwd ? c[i].cols >= SML_BLOCK_BWD_WIDE_COLS : c[i].cols > SML_BLOCK_SHORT_COLS;
        UNIT_EXPECT(u, p.blocks_per_sm == (row_grid ? SML_BLOCK_ROW_GRID_BLOCKS_PER_SM : 0),
                    "%s %s %lldx%lld: grid of %d blocks per SM, want %d",
                    c[i].V == 4 ? "fp32" : "16-bit", c[i].bwd ? "bwd" : "fwd", (long long)c[i].rows,
                    (long long)c[i].cols, p.blocks_per_sm,
                    row_grid ? SML_BLOCK_ROW_GRID_BLOCKS_PER_SM : 0);
    }
}

/* The lean (32-register) build: the forward one-wave plans of 64 threads x 16 elements, and
 * no other plan. */
static void lean_plans(unit_run *u) {
    const struct {
        int64_t cols;
        int V, bwd;
        int64_t rows;
        int lean;
    } c[] = {
        {1024, 4, 0, 4096, 1}, /* fp32 64 x 4: 21 blocks per SM at 48 registers, 32 at 32 */
        {1024, 8, 0, 4096, 1}, /* 16-bit 64 x 2 */
        {1000, 4, 0, 4099, 1}, {512, 4, 0, 4096, 0}, /* 64 x 2: 32 registers already */
        {768, 8, 0, 4096, 0},                        /* 96 x 1 */
        {1024, 4, 0, 2048, 0},                       /* one wave at 128 x 2 */
        {512, 4, 0, 32768, 0}, /* many rows: 32 x 4, the block count already caps the SM */
        {1024, 8, 0, 8192, 0}, /* many rows */
        {1024, 8, 1, 4096, 0}, /* backward */
        {2048, 4, 0, 4096, 0}, /* forward rows past 1,024 columns: fixed K */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const sml_block_cfg p =
            sml_block_plan(c[i].cols / c[i].V, c[i].V, c[i].bwd, c[i].rows, 132);
        UNIT_EXPECT(u, p.lean == c[i].lean, "%s %s %lldx%lld: lean %d, want %d",
                    c[i].V == 4 ? "fp32" : "16-bit", c[i].bwd ? "bwd" : "fwd", (long long)c[i].rows,
                    (long long)c[i].cols, p.lean, c[i].lean);
    }
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_block_plan", argc, argv)) return 2;
    const int vs[] = {1, 4, 8};
    int64_t c = 0;
    for (int v = 0; v < 3; v++)
        for (int bwd = 0; bwd < 2; bwd++)
            for (int log = 0; log < 2; log++, c++)
                if (unit_case(&u, c, NULL)) plan_is_launchable(&u, vs[v], bwd, log);
    if (unit_case(&u, c++, NULL)) measured_plans(&u);
    if (unit_case(&u, c++, NULL)) lean_plans(&u);
    return sml_tally_finish(&u.tally);
}
