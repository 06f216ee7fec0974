/* block_plan.h: `block`'s launch plan (chunks per thread, grid per SM) from the shape, in plain
 * C so that tests/unit/test_block_plan.c can pin it on the CPU. kernels/softmax_block.cu holds
 * the kernel; this is the one place its configuration is chosen. */
#ifndef SML_KERNELS_BLOCK_PLAN_H
#define SML_KERNELS_BLOCK_PLAN_H

#include <stdint.h>

#include "kernels/sm_limits.h"

/* The default configuration: the smallest K (of those instantiated) that holds the row in
 * <= SML_BLOCK_PREF_THREADS threads, else the largest K with up to 1,024 threads. Fewer, fuller
 * threads are faster (more bytes in flight per thread); 16-bit backward stops at
 * K = 2 below SML_BLOCK_BWD_WIDE_COLS.
 *
 * Many rows (at least SML_BLOCK_MANY_ROWS_PER_SM per SM): the largest K with at least 32
 * threads, up to 4 chunks in fp32 and 2 in 16-bit. With more than a wave of rows the SM is
 * full of blocks either way, and what differs is the bytes each thread has in flight when
 * its block stalls in a reduction: 32 threads x 4 fp32 chunks beat 128 x 1; 16-bit K = 4
 * loses everywhere. At 4,096 rows (31 per SM) the default is still ahead, hence the
 * threshold. Forward rows below it have their own rule
 * (sml_block_fwd_one_wave_k).
 *
 * Backward rows of SML_BLOCK_BWD_WIDE_COLS columns and more: 32 elements of y and of dy per
 * thread (fp32 K = 8, 16-bit K = 4), so a block of 256 threads at 8,192 columns, 512 at
 * 16,384, 1,024 at 32,768 (16-bit only: see SML_BLOCK_MAX_THREADS). This is
 * the shape of a fused Triton backward (one program of 16 warps, 32 elements each), in a grid
 * of one block per row as the forward rows past 1,024 columns have (SML_BLOCK_ROW_GRID_BLOCKS_PER_SM).
 * Each thread then has as many bytes in flight as the forward's, and a finished block's SM
 * takes the next row at once; both parts gain, at every row length of the band
 * (docs/KERNELS.md, "Measurements behind the design notes"). */
#define SML_BLOCK_PREF_THREADS           256
#define SML_BLOCK_BWD_WIDE_COLS          8192
#define SML_BLOCK_MANY_ROWS_PER_SM       48
/* Forward rows longer than SML_BLOCK_SHORT_COLS (vector loads): a fixed K per row length, so the
 * threads grow with the row up to 256 (fp32: K = 4 to 2,048 columns, 8 to 8,192, 16 to
 * 16,384; 16-bit: 4 to 8,192, 8 to 16,384), and a grid of up to SML_BLOCK_ROW_GRID_BLOCKS_PER_SM
 * blocks per SM: one block per row for a few thousand rows, so the hardware gives a finished
 * block's place to the next row instead of each block walking a fixed share. This is the
 * shape of cuDNN's forward kernel on these rows (ncu: 256 threads x 64 fp32 in 128
 * registers, one block per row); it is faster than 1,024 threads x 4 with one block per SM
 * on every row of the band. The grid matters on its own: the same K with twice the resident
 * blocks is slower (docs/KERNELS.md, "Measurements behind the design notes"). */
#define SML_BLOCK_SHORT_COLS             1024
#define SML_BLOCK_ROW_GRID_BLOCKS_PER_SM 64
/* The most threads a block of the kernel built for V elements per chunk and K chunks per thread
 * may have (its launch bounds, kernels/softmax_block.cu), by direction and op: forward K = 8
 * at most 256 (three blocks per SM, 85 registers), forward K = 16 (fp32) 512 (128
 * registers); backward fp32 K = 8 512 (128 registers, 112 used); the rest 1,024. 16-bit
 * backward K = 4 takes 1,024 (64 registers: log_softmax none spilled, softmax 24 bytes, which
 * needs the product of y and dy), so a 32,768-column row is one block; 16-bit softmax
 * backward K = 4 is also built for at most SML_BLOCK_BWD16_LEAN_THREADS threads (96 registers,
 * no spill), which launches of that many threads or fewer (rows to 16,384 columns) take: the
 * 64-register build is slower on those rows (docs/KERNELS.md, "Measurements behind the design notes"). */
#define SML_BLOCK_MAX_THREADS(V, K, BWD, LOG)            \
    ((V) == 1    ? 1024                                  \
     : (BWD)     ? (((V) == 4 && (K) >= 8) ? 512 : 1024) \
     : (K) >= 16 ? 512                                   \
     : (K) >= 8  ? 256                                   \
                 : 1024)
#define SML_BLOCK_BWD16_LEAN_THREADS 512

/* Forward one-wave plans (above) whose block has at most SML_BLOCK_LEAN_THREADS threads of 16
 * elements each (fp32 K = 4, 16-bit K = 2) take a build of the kernel capped at 32 registers, so
 * that an SM holds SML_SM_BLOCKS of those blocks as the rule counts: the default build takes 48
 * registers, 21 blocks of 64 threads per SM, and 4096 rows ran in 1.5 waves. */
#define SML_BLOCK_LEAN_THREADS 64
#define SML_BLOCK_LEAN_ELEMS   16

typedef struct sml_block_cfg {
    int K;             /* chunks (or elements when scalar) per thread */
    int blocks_per_sm; /* the grid's size per SM; 0: the launcher's default */
    int lean;          /* run the 32-register build (SML_BLOCK_LEAN_THREADS) */
} sml_block_cfg;

/* Threads of a block holding `chunks` at K per thread: whole warps, at least one. */
static inline int sml_block_threads(int64_t chunks, int K) {
    const int64_t t = ((chunks + K - 1) / K + 31) / 32 * 32;
    return (int)(t < 32 ? 32 : t);
}

/* Forward rows too few for SML_BLOCK_MANY_ROWS_PER_SM, yet more than the SMs hold at once:
 * double K (halving the block) while an SM's share of the rows exceeds the blocks of that size it
 * can hold together (2,048 threads, 32 blocks), so the whole grid is resident in one wave
 * instead of a second wave starting behind the first's reductions, as long as the halved
 * block idles no more lanes than before. Where one wave already holds the rows (2,048 x 512)
 * K = 1 stays. Added idle lanes cost more than the wave gains (fp16 4096 x 768 as 64 x 2
 * loses to 96 x 1). Backward keeps K = 1 (64 x 2 loses there). The block stays at two warps or
 * more: a block of 32 x 4 loses where rows outnumber even 32 resident blocks (fp32 5120 x
 * 512). The figures: (docs/KERNELS.md, "Measurements behind the design notes"). */
#define SML_BLOCK_WAVE_MIN_THREADS 64
static inline int sml_block_fwd_one_wave_k(int64_t chunks, int k, int kmax, int64_t rows, int sms) {
    const int64_t per_sm = (rows + sms - 1) / sms;
    for (; k < kmax; k *= 2) {
        const int t = sml_block_threads(chunks, k), t2 = sml_block_threads(chunks, 2 * k);
        const int by_threads = SML_SM_THREADS / t;
        const int resident = by_threads < SML_SM_BLOCKS ? by_threads : SML_SM_BLOCKS;
        const int more_idle = (int64_t)t2 * 2 * k > (int64_t)t * k;
        if (per_sm <= resident || more_idle || t2 < SML_BLOCK_WAVE_MIN_THREADS) break;
    }
    return k;
}

static inline sml_block_cfg sml_block_plan(int64_t chunks, int V, int bwd, int64_t rows, int sms) {
    sml_block_cfg c = {0, 0, 0};
    if (bwd && V > 1 && chunks * V >= SML_BLOCK_BWD_WIDE_COLS) {
        c.K = V == 4 ? 8 : 4;
        c.blocks_per_sm = SML_BLOCK_ROW_GRID_BLOCKS_PER_SM;
        return c;
    }
    if (!bwd && V > 1 && chunks * V > SML_BLOCK_SHORT_COLS) {
        if (V == 4)
            c.K = chunks <= 512 ? 4 : chunks <= 2048 ? 8 : 16;
        else
            c.K = chunks <= 1024 ? 4 : 8;
        c.blocks_per_sm = SML_BLOCK_ROW_GRID_BLOCKS_PER_SM;
        return c;
    }
    static const int KV[] = {1, 2, 4}, KS[] = {4, 16};
    const int *ks = V > 1 ? KV : KS;
    const int nk = V > 1 ? (V == 8 && bwd ? 2 : 3) : 2;
    int k = ks[nk - 1];
    for (int i = 0; i < nk; i++)
        if ((chunks + ks[i] - 1) / ks[i] <= SML_BLOCK_PREF_THREADS) {
            k = ks[i];
            break;
        }
    const int kmax = V == 8 ? 2 : 4;
    if (V > 1 && rows >= (int64_t)SML_BLOCK_MANY_ROWS_PER_SM * sms) {
        while (k < kmax && (chunks + 2 * k - 1) / (2 * k) >= 32) k *= 2;
    } else if (V > 1 && !bwd) {
        k = sml_block_fwd_one_wave_k(chunks, k, kmax, rows, sms);
        c.lean =
            k * V == SML_BLOCK_LEAN_ELEMS && sml_block_threads(chunks, k) <= SML_BLOCK_LEAN_THREADS;
    }
    c.K = k;
    return c;
}

#endif
