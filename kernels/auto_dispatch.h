/* auto_dispatch.h: the thresholds of the `auto` kernel and the one function that applies
 * them, in plain C so that tests/unit/test_gpu_kernels.c can put a case on every threshold
 * and on each side of it (and print which path a failing case took).
 *
 *   cols <= SML_AUTO_WARP_MAX_COLS      -> warp   (row in one warp's registers)
 *   cols <= SML_AUTO_BLOCK_MAX_COLS     -> block  (row in one block's registers)
 *   longer rows, cluster launch (sm_90) -> split  (row over a cluster's shared memory)
 *   longer rows, no cluster launch      -> online (two reads, any length)
 *
 * Measured on an H100 (docs/KERNELS.md, "Versions", run 1): at 1,024 columns one block of
 * 128-256 threads per row beat a warp per row by 2-5% (fp32, fp16) and by 20% (bf16), at 512
 * columns the warp path was level or ahead; from 513 to 16,384 columns the block path with
 * up to 1,024 threads was the fastest or within 1-3% of the fastest in every op and dtype
 * (fp32 backward at 8,192-16,384 columns: 98-99% of the copy kernel), so the old rule that
 * sent rows holding more than 32 KB (backward: y and dy) to `split` is gone. Rows and the SM
 * count enter through `split`, which sizes its clusters so that rows * cluster size fills
 * the device. */
#ifndef SML_KERNELS_AUTO_DISPATCH_H
#define SML_KERNELS_AUTO_DISPATCH_H

#include <stdint.h>

#include "softmax_lab.h"

#define SML_AUTO_WARP_MAX_COLS 512
#define SML_AUTO_BLOCK_MAX_COLS 16384

typedef enum sml_auto_path {
    SML_AUTO_WARP = 0,
    SML_AUTO_BLOCK,
    SML_AUTO_SPLIT,
    SML_AUTO_ONLINE,
} sml_auto_path;

static inline const char *sml_auto_path_name(sml_auto_path a) {
    switch (a) {
    case SML_AUTO_WARP: return "warp";
    case SML_AUTO_BLOCK: return "block";
    case SML_AUTO_SPLIT: return "split";
    case SML_AUTO_ONLINE: return "online";
    }
    return "?";
}

/* The dispatch decision. has_clusters: the device supports cluster launch (sm_90+). op and
 * dt do not change it today; they stay in the signature because they did and may again. */
static inline sml_auto_path sml_auto_pick(sml_op op, sml_dtype dt, int64_t cols, int has_clusters) {
    (void)op;
    (void)dt;
    if (cols <= SML_AUTO_WARP_MAX_COLS) return SML_AUTO_WARP;
    if (cols <= SML_AUTO_BLOCK_MAX_COLS) return SML_AUTO_BLOCK;
    return has_clusters ? SML_AUTO_SPLIT : SML_AUTO_ONLINE;
}

/* Every column count where the decision changes (the last column of a range; tests add one
 * either side): the i-th for i < SML_AUTO_N_COL_THRESHOLDS. */
#define SML_AUTO_N_COL_THRESHOLDS 2
static inline int64_t sml_auto_col_threshold(int i) {
    return i == 0 ? SML_AUTO_WARP_MAX_COLS : SML_AUTO_BLOCK_MAX_COLS;
}

#endif
