/* auto_dispatch.h: the thresholds of the `auto` kernel and the one function that applies
 * them, in plain C so that tests/unit/test_gpu_kernels.c can put a case on every threshold
 * and on each side of it (and print which path a failing case took).
 *
 *   cols <= 128 (fp16, bf16: 256)                 -> warp   (row in a warp's registers)
 *   forward, cols <= 256 (16-bit: 512), rows <= 64 x SMs -> warp (a warp for every row)
 *   cols <= 16,384                                -> block  (row in a block's registers)
 *   backward, y and dy rows of 2 MiB or more, sm_90 -> coop (row over any blocks of the GPU),
 *       except 16-bit rows on a GPU with 15 or more bytes of DRAM bandwidth per SM clock
 *   longer rows, cluster launch (sm_90)           -> split  (row over a cluster's shared memory)
 *   longer rows, no cluster launch                -> online
 *
 * From the H100 runs (docs/KERNELS.md, "Versions", run 3; % of a copy kernel moving the same
 * bytes, cold L2): rows of <= 128 columns: warp 88-97%, a block per row 63-98%; 256-1,024
 * columns: block 91-100%, warp 89-96%. Forward 2,048-16,384 columns: online 94-98% (its
 * second read hits L2), block 83-97%; fp32 forward at 16,384: split 94%, block 91%,
 * online 83% (the 64 KB rows in flight no longer stay in L2). Backward up to 16,384
 * columns: block 94-100%, online 92-100% (ahead only for log_softmax_bwd), split 95-97%.
 * Past 16,384 columns split: 93-98% at 32,768 and 131,072 columns, 69-85% at 2^20 (see
 * there). The old rule (rows holding more than 32 KB to split) is gone.
 *
 * Run 4 (the H100 standard ledger, docs/ledgers/2026-11-22-h100-standard-all-ops.json, every
 * kernel timed in one run) moved the 16-bit warp limit from 128 to 256 columns: at 4096 x 256
 * warp took 4.59-4.66 us on 16-bit forward where auto (then block, one 32-thread block per
 * row) took 5.47-5.63 us (1.19-1.23x), and 5.22-5.34 against 5.53-5.58 us backward
 * (1.04-1.06x). fp32 stays at 128: at 4096 x 256 block was 2-3% ahead of warp on all four
 * ops. 16-bit at 512 columns stays with block: warp 0.97-1.07x of it, no clear winner.
 * Run 6 (docs/ledgers/2026-11-22-h100-standard-all-ops-run6.json) confirmed it: at 4096 x 256
 * 16-bit, auto took 4.77-5.44 us where its converged measurements are (1.07-1.15x the copy
 * kernel, 1.02-1.18x cuDNN; docs/KERNELS.md, v5).
 *
 * Run 10 (session 4, kernels/tune, docs/KERNELS.md v7) moved long backward rows to `coop`,
 * whose slices spread over every SM where a cluster is confined to a GPC: at 128 x 2^20 it
 * reached 94-98% of memcpy against split's 70-79%; at 1024 x 131072 fp32 (y and dy rows of
 * 1 MiB) 96.6-97.0% against 94.9-96.0% (two runs); at 1024 x 131072 16-bit (512 KiB) it
 * trailed split (93.1-93.5 against 95.1-95.6%), and at 4096 x 32768 16-bit by 10%, hence the
 * 1 MiB threshold then (2 MiB since session 8, below). Forward stays with split: coop's best
 * forward plan measured 77-81% of memcpy at 128 x 2^20 against split's 84%.
 *
 * Runs 13-16 (session 5, kernels/tune, docs/KERNELS.md v8) moved forward rows of 1,025 to
 * 16,384 columns from `online` (and fp32 8,193-16,384 from `split`) to `block`, whose launcher
 * now gives those rows a fixed number of chunks per thread (up to 16 in fp32) and one block
 * per row, the shape of cuDNN's own forward kernel there: fp32 4096 x 16384 182.7-184.1 us
 * against split's 191.7-192.0 and cuDNN's 186.6; 4096 x 8192 92.5-93.1 against online's 96.0
 * and cuDNN's 95.7; fp16 4096 x 16384 93.5 against online's 97.4; 16384 x 4096 fp16 93.6
 * against 96.3; fp32 32768 x 2048 186.0 against 193.5.
 *
 * Session 7 (kernels/tune, `warp` after the shift-width change, docs/KERNELS.md v12) sends
 * forward rows of fp32 129-256 and 16-bit 257-512 columns to `warp` when there are no more rows
 * than resident warps (64 per SM: the grid of 16 blocks of 4 warps per SM then gives every row a
 * warp of its own, and no warp waits out one row's loads before starting the next). At 4096
 * rows, us, warp against block: H100 fp32 x 256 softmax 6.04-6.07 / 6.09-6.12, log_softmax
 * 5.99-6.06 / 6.05-6.11; fp16 x 512 6.14-6.16 / 6.33-6.38, bf16 6.15 / 6.26; H200 fp32 x 256
 * 4.97-5.19 / 5.64-5.77, fp16 x 512 5.34-5.36 / 6.06-6.07, bf16 5.11-5.30 / 5.86-5.90. With
 * many rows block stays ahead (32768 x 256 fp32: H100 27.1 / 26.4, H200 20.8 / 20.2; 32768 x
 * 512 fp16: H100 26.8-27.0 / 26.3, H200 20.9 / 21.4), and so does backward (4096 x 256 fp32:
 * H100 7.37 / 7.27, H200 5.88-5.93 / 5.80-5.85). fp32 x 512 stays with block (H100 9.04 / 8.80).
 *
 * Session 8 moved the coop threshold from 1 to 2 MiB of y and dy per row. With its exchange
 * of partials by st.async (v12) split overtook coop on fp32 1024 x 131072 backward (1 MiB
 * rows), % of memcpy in the standard ledgers: H100 run 47 split 98.0-98.3 / coop 94.4-95.0,
 * run 59 97.8-98.1 / 94.9-95.0; H200 run 48 90.0-91.1 / 74.4-75.2, run 60 89.7-90.5 /
 * 74.4-75.6. coop keeps the 2^20 rows (4 and 8 MiB) with few rows per GPU, where a row's
 * cluster cannot fill the SMs: H100 run 59 fp32 96.7 / split 69.9-70.1, 16-bit 91.5-95.2 /
 * 77.0-78.0; H200 run 60 fp32 78.0-78.7 / 62.5-63.2, 16-bit 68.3-72.0 / 65.0-68.6. No shape
 * of the sweeps lies between 1 and 4 MiB; 2 MiB is the midpoint in the log.
 *
 * Session 12 keeps 16-bit rows of 2 MiB and more in `split` where the GPU's DRAM delivers 15 or
 * more bytes per SM clock (peak: memory clock x bus width x 2 over SMs x SM clock, as the
 * runtime reports them; H100 SXM 12.8, H200 18.4). Since split's backward refills its slots as
 * it writes them (v16) the two
 * kernels trade places between the GPUs at 128 x 2^20 (`tune`, kernels/tune/plan55, % of
 * memcpy, coop / split): H100 run 102 16-bit 97.1-99.8 / 86.3-91.3, fp32 99.0-99.5 /
 * 67.7-77.6; H200 run 101 16-bit softmax_bwd 78.7-82.1 / 80.0-81.1, log_softmax_bwd
 * 75.3-77.5 / 79.5-82.3, fp32 87.8-90.9 / 64.8-75.2 (so fp32 stays with coop on both). The
 * two GPUs are the only evidence: 15 sits between them, nearer the H100 so that a GPU like the
 * H200 with a lower memory clock still counts as wide. */
#ifndef SML_KERNELS_AUTO_DISPATCH_H
#define SML_KERNELS_AUTO_DISPATCH_H

#include <stdint.h>

#include "softmax_lab.h"

#define SML_AUTO_WARP_MAX_COLS 128
#define SML_AUTO_WARP_MAX_COLS_16BIT 256
#define SML_AUTO_WARP_FWD_MAX_COLS 256
#define SML_AUTO_WARP_FWD_MAX_COLS_16BIT 512
#define SML_AUTO_WARP_FWD_ROWS_PER_SM 64 /* resident warps of `warp`'s grid per SM */
#define SML_AUTO_BLOCK_MAX_COLS 16384
#define SML_AUTO_COOP_MIN_BWD_ROW_BYTES (2 << 20) /* y and dy of one row together */
#define SML_AUTO_COOP_16BIT_MAX_DRAM 15.0 /* DRAM bytes per SM clock from which 16-bit stays in split */

typedef enum sml_auto_path {
    SML_AUTO_WARP = 0,
    SML_AUTO_BLOCK,
    SML_AUTO_SPLIT,
    SML_AUTO_ONLINE,
    SML_AUTO_COOP,
} sml_auto_path;

static inline const char *sml_auto_path_name(sml_auto_path a) {
    switch (a) {
    case SML_AUTO_WARP: return "warp";
    case SML_AUTO_BLOCK: return "block";
    case SML_AUTO_SPLIT: return "split";
    case SML_AUTO_ONLINE: return "online";
    case SML_AUTO_COOP: return "coop";
    }
    return "?";
}

/* The first backward column count that goes to coop. */
static inline int64_t sml_auto_coop_min_cols(sml_dtype dt) {
    return SML_AUTO_COOP_MIN_BWD_ROW_BYTES / (2 * (int64_t)sml_dtype_size(dt));
}

/* Forward rows past warp's own limit that still go to warp when every row gets a warp: the
 * only place where the decision reads the row and SM counts. */
static inline int sml_auto_fwd_warp_band(sml_op op, sml_dtype dt, int64_t cols) {
    const int f32 = dt == SML_F32;
    return !sml_op_is_backward(op) && cols > (f32 ? SML_AUTO_WARP_MAX_COLS : SML_AUTO_WARP_MAX_COLS_16BIT) &&
           cols <= (f32 ? SML_AUTO_WARP_FWD_MAX_COLS : SML_AUTO_WARP_FWD_MAX_COLS_16BIT);
}

/* The dispatch decision. sms: the device's SM count; has_clusters: it supports cluster launch
 * (sm_90+), which also stands for the cooperative launch coop needs (every sm_90 device has
 * both); dram: its peak DRAM bytes per SM clock (0 when unknown: coop's side). */
static inline sml_auto_path sml_auto_pick(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int sms,
                                          int has_clusters, double dram) {
    if (cols <= (dt == SML_F32 ? SML_AUTO_WARP_MAX_COLS : SML_AUTO_WARP_MAX_COLS_16BIT)) return SML_AUTO_WARP;
    if (sml_auto_fwd_warp_band(op, dt, cols) && rows <= (int64_t)SML_AUTO_WARP_FWD_ROWS_PER_SM * sms)
        return SML_AUTO_WARP;
    if (cols <= SML_AUTO_BLOCK_MAX_COLS) return SML_AUTO_BLOCK;
    if (sml_op_is_backward(op) && has_clusters && cols >= sml_auto_coop_min_cols(dt) &&
        (dt == SML_F32 || dram < SML_AUTO_COOP_16BIT_MAX_DRAM))
        return SML_AUTO_COOP;
    return has_clusters ? SML_AUTO_SPLIT : SML_AUTO_ONLINE;
}

/* What sml_auto_pick reads of the device for this shape: the SM count only inside the forward
 * warp band, cluster support and the DRAM figure only past `block`'s rows (all three are kept
 * in the handle after its first launch, src/devmem.c). The launcher asks the runtime for no
 * more than that: each query costs the host a few hundred ns per launch (3 queries took
 * `auto` from warp's 3.9 us per launch call to 4.8 us, kernels/tune/launch_cost.c, H100). */
static inline int sml_auto_needs_sms(sml_op op, sml_dtype dt, int64_t cols) {
    return sml_auto_fwd_warp_band(op, dt, cols);
}
static inline int sml_auto_needs_clusters(int64_t cols) { return cols > SML_AUTO_BLOCK_MAX_COLS; }

/* sml_auto_pick with the device facts it reads, asked of the handle only where it reads them
 * (src/auto_choice.c): what the launcher runs and what sml_auto_choice reports. */
#ifdef __cplusplus
extern "C" {
#endif
sml_status sml_auto_decide(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                           sml_auto_path *out);
#ifdef __cplusplus
}
#endif

/* Every column count where the decision changes for some op and dtype (the last column of a
 * range; tests add one either side): the i-th for i < SML_AUTO_N_COL_THRESHOLDS. */
#define SML_AUTO_N_COL_THRESHOLDS 6
static inline int64_t sml_auto_col_threshold(int i) {
    switch (i) {
    case 0: return SML_AUTO_WARP_MAX_COLS;
    case 1: return SML_AUTO_WARP_MAX_COLS_16BIT; /* also SML_AUTO_WARP_FWD_MAX_COLS */
    case 2: return SML_AUTO_WARP_FWD_MAX_COLS_16BIT;
    case 3: return SML_AUTO_BLOCK_MAX_COLS;
    case 4: return sml_auto_coop_min_cols(SML_F32) - 1;  /* the last column before coop */
    default: return sml_auto_coop_min_cols(SML_F16) - 1;
    }
}

#endif
