/* auto_dispatch.h: the thresholds of the `auto` kernel and the one function that applies
 * them, in plain C so that the edge-shape harness (src/edge) can put a case on every threshold
 * and on each side of it (and print which path a failing case took).
 *
 *   cols <= 128 (fp16, bf16: 256)                 -> warp   (row in a warp's registers)
 *   forward, cols <= 256 (16-bit: 512), rows <= 64 x SMs -> warp (a warp for every row)
 *   cols <= 16,384                                -> block  (row in a block's registers)
 *   fp32 forward and 16-bit backward, cols <= 32,768, rows that take 16-byte vectors
 *                                                 -> block
 *   backward, y and dy rows of 2 MiB or more, sm_90 -> coop (row over any blocks of the GPU),
 *       except 16-bit rows on a GPU with 15 or more bytes of DRAM bandwidth per SM clock
 *   longer rows, cluster launch (sm_90)           -> split  (row over a cluster's shared memory)
 *   longer rows, no cluster launch                -> online
 *
 * Why each threshold sits where it does (docs/KERNELS.md, "Dispatch", has the figures; the
 * ledgers in docs/ledgers hold the latest measurement of every cell):
 * - warp up to 128 columns (16-bit: 256): a row in one warp's registers needs no barrier;
 *   past that a block per row wins on fp32 and the two tie on 16-bit at 512.
 * - the forward warp band (fp32 129-256, 16-bit 257-512 columns) goes to warp only while
 *   every row gets a resident warp of its own (64 per SM); with more rows a warp waits out
 *   one row's loads before the next, and block is ahead again. Backward stays with block.
 * - block up to 16,384 columns: a row in one block's registers, read once; it matches
 *   cuDNN's forward shape there, and beats online (whose second read falls out of L2 once
 *   64 KB rows are in flight) and split.
 * - block on to 32,768 columns where one block of 512 fp32 (forward) or 1,024 16-bit
 *   (backward) threads holds the row in registers: a row read once by one block beats
 *   split's cluster exchange, though 16-bit backward spills 24 bytes a thread there. 16-bit
 *   forward stays with split: a 1,024-thread block of 4 chunks has too few bytes in flight
 *   per thread. Misaligned rows (scalar loads) hold at most 16,384 elements in a block and
 *   stay with split. The figures: (docs/KERNELS.md, "Measurements behind the design notes").
 * - backward rows whose y and dy hold 2 MiB or more go to coop, whose slices spread over
 *   every SM where a cluster is confined to a GPC: with few rows per GPU a row's cluster
 *   cannot fill the SMs. Below 2 MiB split's cluster exchange is ahead. No sweep shape lies
 *   between 1 and 4 MiB; 2 MiB is the midpoint in the log.
 * - except 16-bit rows on a GPU whose DRAM delivers 15 or more bytes per SM clock (memory
 *   clock x bus width x 2 over SMs x SM clock, as the runtime reports them; H100 SXM 12.8,
 *   H200 18.4): there split's refilling backward keeps up with coop on 16-bit, while fp32
 *   stays with coop on both. 15 sits between the two GPUs measured, nearer the H100, so
 *   that a GPU like the H200 with a lower memory clock still counts as wide.
 * - forward rows past 16,384 columns go to split on sm_90 (coop's best forward plan trails
 *   it), to online where there is no cluster launch. */
#ifndef SML_KERNELS_AUTO_DISPATCH_H
#define SML_KERNELS_AUTO_DISPATCH_H

#include <stdint.h>

#include "softmax_lab.h"

#define SML_AUTO_WARP_MAX_COLS           128
#define SML_AUTO_WARP_MAX_COLS_16BIT     256
#define SML_AUTO_WARP_FWD_MAX_COLS       256
#define SML_AUTO_WARP_FWD_MAX_COLS_16BIT 512
#define SML_AUTO_WARP_FWD_ROWS_PER_SM    64 /* resident warps of `warp`'s grid per SM */
#define SML_AUTO_BLOCK_MAX_COLS          16384
#define SML_AUTO_BLOCK_WIDE_MAX_COLS     32768     /* fp32 forward, 16-bit backward */
#define SML_AUTO_COOP_MIN_BWD_ROW_BYTES  (2 << 20) /* y and dy of one row together */
#define SML_AUTO_COOP_16BIT_MAX_DRAM \
    15.0 /* DRAM bytes per SM clock from which 16-bit stays in split */

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
    return !sml_op_is_backward(op) &&
           cols > (f32 ? SML_AUTO_WARP_MAX_COLS : SML_AUTO_WARP_MAX_COLS_16BIT) &&
           cols <= (f32 ? SML_AUTO_WARP_FWD_MAX_COLS : SML_AUTO_WARP_FWD_MAX_COLS_16BIT);
}

/* The longest row `block` takes in auto for an op and dtype; vectors: the rows move in 16-byte
 * vectors (sml_vec_elems > 1). */
static inline int64_t sml_auto_block_max_cols(sml_op op, sml_dtype dt, int vectors) {
    const int wide = sml_op_is_backward(op) ? dt != SML_F32 : dt == SML_F32;
    return wide && vectors ? SML_AUTO_BLOCK_WIDE_MAX_COLS : SML_AUTO_BLOCK_MAX_COLS;
}

/* The dispatch decision. vectors: the rows take 16-byte vectors (aligned pointers and row
 * stride, as an allocator's tensors are); sms: the device's SM count; has_clusters: it
 * supports cluster launch (sm_90+), which also stands for the cooperative launch coop needs
 * (every sm_90 device has both); dram: its peak DRAM bytes per SM clock (0 when unknown:
 * coop's side). */
static inline sml_auto_path sml_auto_pick(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                                          int vectors, int sms, int has_clusters, double dram) {
    if (cols <= (dt == SML_F32 ? SML_AUTO_WARP_MAX_COLS : SML_AUTO_WARP_MAX_COLS_16BIT))
        return SML_AUTO_WARP;
    if (sml_auto_fwd_warp_band(op, dt, cols) &&
        rows <= (int64_t)SML_AUTO_WARP_FWD_ROWS_PER_SM * sms)
        return SML_AUTO_WARP;
    if (cols <= sml_auto_block_max_cols(op, dt, vectors)) return SML_AUTO_BLOCK;
    if (sml_op_is_backward(op) && has_clusters && cols >= sml_auto_coop_min_cols(dt) &&
        (dt == SML_F32 || dram < SML_AUTO_COOP_16BIT_MAX_DRAM))
        return SML_AUTO_COOP;
    return has_clusters ? SML_AUTO_SPLIT : SML_AUTO_ONLINE;
}

/* What sml_auto_pick reads of the device for this shape: the SM count only inside the forward
 * warp band, cluster support and the DRAM figure only past `block`'s rows (all three are kept
 * in the handle after its first launch, src/core/devmem.c). The launcher asks the runtime for no
 * more than that: each query costs the host time on every launch, which short rows cannot hide
 * (tools/launch_cost.c; (docs/KERNELS.md, "Measurements behind the design notes")). */
static inline int sml_auto_needs_sms(sml_op op, sml_dtype dt, int64_t cols) {
    return sml_auto_fwd_warp_band(op, dt, cols);
}
static inline int sml_auto_needs_clusters(sml_op op, sml_dtype dt, int64_t cols, int vectors) {
    return cols > sml_auto_block_max_cols(op, dt, vectors);
}

/* sml_auto_pick with the device facts it reads, asked of the handle only where it reads them
 * (kernels/auto_choice.c): what the launcher runs and what sml_auto_choice reports. */
#ifdef __cplusplus
extern "C" {
#endif
sml_status sml_auto_decide(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                           int vectors, sml_auto_path *out);
/* The plan table's plan for the shape on the current device (kernels/auto_choice.c): 1 and
 * *plan where the device has a table (core/plan_cache.h) with an entry for it and the rows
 * take 16-byte vectors, else 0 (the rules decide). The launcher runs that plan and falls back
 * to the rules where the kernel answers SML_ERR_UNSUPPORTED. */
struct sml_plan;
int sml_auto_table_plan(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                        int vectors, struct sml_plan *plan);
#ifdef __cplusplus
}
#endif

/* Every column count where the decision changes for some op and dtype (the last column of a
 * range; tests add one either side): the i-th for i < SML_AUTO_N_COL_THRESHOLDS. */
#define SML_AUTO_N_COL_THRESHOLDS 7
static inline int64_t sml_auto_col_threshold(int i) {
    switch (i) {
    case 0: return SML_AUTO_WARP_MAX_COLS;
    case 1: return SML_AUTO_WARP_MAX_COLS_16BIT; /* also SML_AUTO_WARP_FWD_MAX_COLS */
    case 2: return SML_AUTO_WARP_FWD_MAX_COLS_16BIT;
    case 3: return SML_AUTO_BLOCK_MAX_COLS;
    case 4: return SML_AUTO_BLOCK_WIDE_MAX_COLS;
    case 5: return sml_auto_coop_min_cols(SML_F32) - 1; /* the last column before coop */
    default: return sml_auto_coop_min_cols(SML_F16) - 1;
    }
}

#endif
