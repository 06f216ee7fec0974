/* auto_dispatch.h: the thresholds of the `auto` kernel and the one function that applies
 * them, in plain C so that tests/unit/test_gpu_kernels.c can put a case on every threshold
 * and on each side of it (and print which path a failing case took).
 *
 *   cols <= SML_AUTO_WARP_MAX_COLS                             -> warp   (row in one warp's registers)
 *   bytes held per row <= SML_AUTO_BLOCK_MAX_ROW_BYTES         -> block  (row in one block's registers)
 *   longer rows, device with thread-block clusters             -> split  (row over a cluster, DSMEM)
 *   longer rows, no cluster launch (before sm_90)              -> online (two reads, any length)
 *
 * "Bytes held per row" is cols * dtype size, doubled for backward (y and dy are both kept):
 * the block path ends at 8,192 fp32 / 16,384 fp16-bf16 columns forward and 4,096 / 8,192
 * backward, a 32 KB row. What limits `block` is the register file: past 32 KB a block needs
 * 1,024 threads or more than 32 values per thread, which means one block per SM (barrier
 * stalls nothing hides) or spills (ptxas: the 16-bit backward variant at K = 4 spills at the
 * 64-register cap), while `split` keeps such a row in shared memory with two or more blocks
 * per SM. Rows and the SM count enter through `split`, which sizes its clusters so that
 * rows * cluster size fills the device (128 rows of 2^20 columns: clusters of 16). */
#ifndef SML_KERNELS_AUTO_DISPATCH_H
#define SML_KERNELS_AUTO_DISPATCH_H

#include <stdint.h>

#include "softmax_lab.h"

#define SML_AUTO_WARP_MAX_COLS 1024
#define SML_AUTO_BLOCK_MAX_ROW_BYTES 32768

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

/* The dispatch decision. has_clusters: the device supports cluster launch (sm_90+). */
static inline sml_auto_path sml_auto_pick(sml_op op, sml_dtype dt, int64_t cols, int has_clusters) {
    const int64_t held = cols * (int64_t)sml_dtype_size(dt) * (sml_op_is_backward(op) ? 2 : 1);
    if (cols <= SML_AUTO_WARP_MAX_COLS) return SML_AUTO_WARP;
    if (held <= SML_AUTO_BLOCK_MAX_ROW_BYTES) return SML_AUTO_BLOCK;
    return has_clusters ? SML_AUTO_SPLIT : SML_AUTO_ONLINE;
}

/* Every column count where the decision changes for some dtype (the last column of a
 * range; tests add one either side): the i-th for i < SML_AUTO_N_COL_THRESHOLDS. */
#define SML_AUTO_N_COL_THRESHOLDS 4
static inline int64_t sml_auto_col_threshold(int i) {
    switch (i) {
    case 0: return SML_AUTO_WARP_MAX_COLS;
    case 1: return SML_AUTO_BLOCK_MAX_ROW_BYTES / 8; /* fp32 backward */
    case 2: return SML_AUTO_BLOCK_MAX_ROW_BYTES / 4; /* fp32 forward, 16-bit backward */
    default: return SML_AUTO_BLOCK_MAX_ROW_BYTES / 2; /* 16-bit forward */
    }
}

#endif
