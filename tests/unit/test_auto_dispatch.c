/* test_auto_dispatch: `auto`'s decision (kernels/auto_dispatch.h) on the CPU.
 *   - The launcher asks the device only for what sml_auto_needs_sms / _clusters say the shape
 *     needs; for every op, dtype, threshold column +-1 and row count around the forward warp
 *     rule, the pick with the facts it was not given zeroed must equal the pick with them.
 *   - The forward warp rule itself: a warp for every row up to 64 x SMs, block past it.
 *   - The coop rule: backward rows of 2 MiB and more to coop, except 16-bit ones on a GPU with
 *     15 or more DRAM bytes per SM clock (H200), which stay in split.
 *   - The block rule: block to 16,384 columns, to 32,768 for fp32 forward and 16-bit
 *     backward on rows that take 16-byte vectors.
 * Planted checks: with sml_auto_needs_sms returning 0, 6 of the 12 first cases fail; with
 * the DRAM figure left out of sml_auto_pick's coop test, coop_rule fails; with the alignment
 * left out of sml_auto_block_max_cols, block_rule fails (fp32 16385 scalar columns to block).
 * That the launcher passes the figure is test_api's check on a GPU (sml_auto_choice against
 * sml_auto_pick on the handle's facts at 16-bit 128 x 2^20 backward). */
#include <stdio.h>

#include "kernels/auto_dispatch.h"
#include "unit_case.h"

static void lazy_facts(unit_run *u, sml_op op, sml_dtype dt) {
    const int sms_set[] = {1, 132, 145}, clusters_set[] = {0, 1};
    const double dram_set[] = {12.8, 18.4};
    int64_t cols[3 * SML_AUTO_N_COL_THRESHOLDS + 3];
    int n = 0;
    for (int t = 0; t < SML_AUTO_N_COL_THRESHOLDS; t++)
        for (int d = -1; d <= 1; d++) cols[n++] = sml_auto_col_threshold(t) + d;
    cols[n++] = 1;
    cols[n++] = 1 << 20;
    cols[n++] = 1000;
    char why[200] = "";
    for (int ci = 0; ci < n && !why[0]; ci++)
        for (int si = 0; si < 3 && !why[0]; si++)
            for (int k = 0; k < 4 && !why[0]; k++) {
                const int sms = sms_set[si], cl = clusters_set[k & 1];
                const double dram = dram_set[k >> 1];
                const int64_t rows_set[] = {1, 7, 64LL * sms, 64LL * sms + 1, 65537};
                for (int ri = 0; ri < 5 && !why[0]; ri++) {
                    const int64_t rows = rows_set[ri];
                    for (int vec = 0; vec < 2 && !why[0]; vec++) {
                        const sml_auto_path want =
                            sml_auto_pick(op, dt, rows, cols[ci], vec, sms, cl, dram);
                        const int big = sml_auto_needs_clusters(op, dt, cols[ci], vec);
                        const sml_auto_path got =
                            sml_auto_pick(op, dt, rows, cols[ci], vec,
                                          sml_auto_needs_sms(op, dt, cols[ci]) ? sms : 0,
                                          big ? cl : 0, big ? dram : 0.0);
                        if (got != want)
                            snprintf(why, sizeof why,
                                     "rows %lld cols %lld %s sms %d clusters %d dram %.1f: %s with "
                                     "all facts, %s with "
                                     "the needed ones",
                                     (long long)rows, (long long)cols[ci],
                                     vec ? "vectors" : "scalar", sms, cl, dram,
                                     sml_auto_path_name(want), sml_auto_path_name(got));
                    }
                }
            }
    UNIT_EXPECT(u, !why[0], "%s %s: %s", sml_op_name(op), sml_dtype_name(dt), why);
}

static void warp_rows_rule(unit_run *u) {
    const int sms = 132;
    const int64_t limit = (int64_t)SML_AUTO_WARP_FWD_ROWS_PER_SM * sms;
    const struct {
        sml_op op;
        sml_dtype dt;
        int64_t rows, cols;
        sml_auto_path want;
    } c[] = {
        {SML_SOFTMAX, SML_F32, limit, SML_AUTO_WARP_FWD_MAX_COLS, SML_AUTO_WARP},
        {SML_SOFTMAX, SML_F32, limit + 1, SML_AUTO_WARP_FWD_MAX_COLS, SML_AUTO_BLOCK},
        {SML_SOFTMAX, SML_F32, 1, SML_AUTO_WARP_FWD_MAX_COLS + 1, SML_AUTO_BLOCK},
        {SML_LOG_SOFTMAX, SML_F16, limit, SML_AUTO_WARP_FWD_MAX_COLS_16BIT, SML_AUTO_WARP},
        {SML_LOG_SOFTMAX, SML_BF16, limit + 1, SML_AUTO_WARP_FWD_MAX_COLS_16BIT, SML_AUTO_BLOCK},
        {SML_SOFTMAX_BWD, SML_F32, 1, SML_AUTO_WARP_FWD_MAX_COLS, SML_AUTO_BLOCK},
        {SML_SOFTMAX_BWD, SML_F16, 1, SML_AUTO_WARP_MAX_COLS_16BIT, SML_AUTO_WARP},
    };
    char why[200] = "";
    for (size_t i = 0; i < sizeof c / sizeof c[0] && !why[0]; i++) {
        const sml_auto_path got =
            sml_auto_pick(c[i].op, c[i].dt, c[i].rows, c[i].cols, 1, sms, 1, 0.0);
        if (got != c[i].want)
            snprintf(why, sizeof why, "%s %s %lldx%lld on %d SMs: %s, want %s",
                     sml_op_name(c[i].op), sml_dtype_name(c[i].dt), (long long)c[i].rows,
                     (long long)c[i].cols, sms, sml_auto_path_name(got),
                     sml_auto_path_name(c[i].want));
    }
    UNIT_EXPECT(u, !why[0], "%s", why);
}

/* Backward rows from coop's first column: 16-bit ones leave coop for split on a GPU of 15 or
 * more DRAM bytes per SM clock (the H200's 18.4; the H100's 12.8 keeps them), fp32 ones never
 * do, and a GPU that did not report the figure (0) keeps the older choice, coop. */
static void coop_rule(unit_run *u) {
    const struct {
        sml_op op;
        sml_dtype dt;
        double dram;
        sml_auto_path want;
    } c[] = {
        {SML_SOFTMAX_BWD, SML_F16, 12.8, SML_AUTO_COOP},
        {SML_SOFTMAX_BWD, SML_F16, 18.4, SML_AUTO_SPLIT},
        {SML_LOG_SOFTMAX_BWD, SML_BF16, SML_AUTO_COOP_16BIT_MAX_DRAM, SML_AUTO_SPLIT},
        {SML_LOG_SOFTMAX_BWD, SML_BF16, SML_AUTO_COOP_16BIT_MAX_DRAM - 0.1, SML_AUTO_COOP},
        {SML_SOFTMAX_BWD, SML_F16, 0.0, SML_AUTO_COOP},
        {SML_SOFTMAX_BWD, SML_F32, 18.4, SML_AUTO_COOP},
        {SML_LOG_SOFTMAX_BWD, SML_F32, 12.8, SML_AUTO_COOP},
        {SML_SOFTMAX, SML_F16, 12.8, SML_AUTO_SPLIT},
    };
    char why[200] = "";
    for (size_t i = 0; i < sizeof c / sizeof c[0] && !why[0]; i++) {
        const int64_t cols = sml_auto_coop_min_cols(c[i].dt);
        const sml_auto_path got = sml_auto_pick(c[i].op, c[i].dt, 128, cols, 1, 132, 1, c[i].dram);
        const sml_auto_path before =
            sml_auto_pick(c[i].op, c[i].dt, 128, cols - 1, 1, 132, 1, c[i].dram);
        if (got != c[i].want || before != SML_AUTO_SPLIT)
            snprintf(why, sizeof why,
                     "%s %s 128x%lld at %.1f DRAM bytes per SM clock: %s, want %s (%lld cols: %s)",
                     sml_op_name(c[i].op), sml_dtype_name(c[i].dt), (long long)cols, c[i].dram,
                     sml_auto_path_name(got), sml_auto_path_name(c[i].want), (long long)cols - 1,
                     sml_auto_path_name(before));
    }
    UNIT_EXPECT(u, !why[0], "%s", why);
}

/* Where `block` ends: 16,384 columns, except fp32 forward and 16-bit backward on rows that
 * take 16-byte vectors, which stay in block to 32,768 (a misaligned row is scalar
 * there, and a block holds 16,384 scalars). */
static void block_rule(unit_run *u) {
    const struct {
        sml_op op;
        sml_dtype dt;
        int64_t cols;
        int vec;
        sml_auto_path want;
    } c[] = {
        {SML_SOFTMAX, SML_F32, 32768, 1, SML_AUTO_BLOCK},
        {SML_LOG_SOFTMAX, SML_F32, 32768, 1, SML_AUTO_BLOCK},
        {SML_SOFTMAX, SML_F32, 32769, 1, SML_AUTO_SPLIT},
        {SML_SOFTMAX, SML_F32, 16385, 0, SML_AUTO_SPLIT},
        {SML_SOFTMAX, SML_F16, 16385, 1, SML_AUTO_SPLIT},
        {SML_LOG_SOFTMAX_BWD, SML_F16, 32768, 1, SML_AUTO_BLOCK},
        {SML_LOG_SOFTMAX_BWD, SML_BF16, 32768, 1, SML_AUTO_BLOCK},
        {SML_LOG_SOFTMAX_BWD, SML_BF16, 32769, 1, SML_AUTO_SPLIT},
        {SML_LOG_SOFTMAX_BWD, SML_BF16, 16385, 0, SML_AUTO_SPLIT},
        {SML_LOG_SOFTMAX_BWD, SML_F32, 16385, 1, SML_AUTO_SPLIT},
        {SML_SOFTMAX_BWD, SML_F16, 32768, 1, SML_AUTO_BLOCK},
        {SML_SOFTMAX_BWD, SML_BF16, 32769, 1, SML_AUTO_SPLIT},
        {SML_SOFTMAX_BWD, SML_BF16, 16385, 0, SML_AUTO_SPLIT},
        {SML_SOFTMAX_BWD, SML_F32, 16385, 1, SML_AUTO_SPLIT},
        {SML_SOFTMAX_BWD, SML_F32, 16384, 0, SML_AUTO_BLOCK},
    };
    char why[200] = "";
    for (size_t i = 0; i < sizeof c / sizeof c[0] && !why[0]; i++) {
        const sml_auto_path got =
            sml_auto_pick(c[i].op, c[i].dt, 4096, c[i].cols, c[i].vec, 132, 1, 12.8);
        if (got != c[i].want)
            snprintf(why, sizeof why, "%s %s 4096x%lld (%s): %s, want %s", sml_op_name(c[i].op),
                     sml_dtype_name(c[i].dt), (long long)c[i].cols, c[i].vec ? "vectors" : "scalar",
                     sml_auto_path_name(got), sml_auto_path_name(c[i].want));
    }
    UNIT_EXPECT(u, !why[0], "%s", why);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_auto_dispatch", argc, argv)) return 2;
    int64_t c = 0;
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
            if (unit_case(&u, c, NULL)) lazy_facts(&u, (sml_op)op, (sml_dtype)dt);
    if (unit_case(&u, c++, NULL)) warp_rows_rule(&u);
    if (unit_case(&u, c++, NULL)) coop_rule(&u);
    if (unit_case(&u, c++, NULL)) block_rule(&u);
    return sml_tally_finish(&u.tally);
}
