/* block_plan.h: `block`'s launch plan (chunks per thread, grid per SM) from the shape, in plain
 * C so that tests/unit/test_block_plan.c can pin it on the CPU. kernels/softmax_block.cu holds
 * the kernel; this is the one place its configuration is chosen. */
#ifndef SML_KERNELS_BLOCK_PLAN_H
#define SML_KERNELS_BLOCK_PLAN_H

#include <stdint.h>

#include "kernels/sm_limits.h"

/* The default configuration: the smallest K (of those instantiated) that holds the row in
 * <= SML_BLOCK_PREF_THREADS threads, else the largest K with up to 1,024 threads. Fewer, fuller
 * threads measured faster (run 2: at 4,096 columns K = 2-4 beat K = 1 by 3-7%); 16-bit
 * backward stops at K = 2, where y and dy of K = 4 would need more than the 64 registers a
 * 1,024-thread block allows (ptxas spills 64 bytes).
 *
 * Many rows (at least SML_BLOCK_MANY_ROWS_PER_SM per SM): the largest K with at least 32
 * threads, up to 4 chunks in fp32 and 2 in 16-bit. With more than a wave of rows the SM is
 * full of blocks either way, and what differs is the bytes each thread has in flight when
 * its block stalls in a reduction. Run 5 (H100, kernels/tune/plan4.txt and plan5.txt, cold
 * L2): fp32 32768 x 512 forward 48.2-48.7 us with 32 threads x 4 against 50.6-51.2 us with
 * 128 x 1 (cuDNN 48.0-48.4), backward 69.0-69.7 against 70.2-71.3; fp32 65536 x 1024
 * 187-188 against 192-193 us forward, 273-275 against 279 backward; fp32 8192 x 1024 1.4-1.9%
 * ahead; 16-bit 32768 x 512 26.2-26.3 us with 32 x 2 against 26.7-26.8 forward, 36.8-37.0
 * against 37.1-37.2 backward; 16-bit 65536 x 1024 97.4-98.0 us with 64 x 2 against
 * 100.5-103.2 forward. 16-bit K = 4 lost everywhere (28.4-28.9 us at 32768 x 512 forward).
 * At 4,096 rows (31 per SM) the default stayed ahead (fp32 4096 x 1024 log_softmax 14.38 us
 * against 14.47-14.65, 4096 x 256 6.03-6.07 against 6.17-6.19), hence the threshold. Forward
 * rows below it have their own rule since v13 (sml_block_fwd_one_wave_k). */
#define SML_BLOCK_PREF_THREADS 256
#define SML_BLOCK_MANY_ROWS_PER_SM 48
/* Forward rows longer than SML_BLOCK_SHORT_COLS (vector loads): a fixed K per row length, so the
 * threads grow with the row up to 256 (fp32: K = 4 to 2,048 columns, 8 to 8,192, 16 to
 * 16,384; 16-bit: 4 to 8,192, 8 to 16,384), and a grid of up to SML_BLOCK_MID_FWD_BLOCKS_PER_SM
 * blocks per SM: one block per row for a few thousand rows, so the hardware gives a finished
 * block's place to the next row instead of each block walking a fixed share. This is the
 * shape of cuDNN's forward kernel on these rows (ncu, run 13: 256 threads x 64 fp32 in 128
 * registers, one block per row). Runs 15-16 (session 5, H100, cold L2, kernels/tune/plan12.txt
 * and plan13.txt; docs/KERNELS.md v8), us: fp32 4096 x 16384 182.7-184.1 (cuDNN 186.6, the
 * old plan 195.2-195.4: 1,024 threads x 4, one block per SM), 4096 x 8192 92.5-93.1 (cuDNN
 * 95.7, old 95.0), 4096 x 4096 48.4 (old 48.8-49.2), 4096 x 2048 25.9 (old 26.1); 16-bit
 * 4096 x 16384 93.5 (old 97.7), 4096 x 8192 48.5 (old 49.3), 4096 x 4096 26.0 (old 27.0),
 * 4096 x 2048 14.8 (old 15.1). The grid alone: with the same K and twice the resident
 * blocks, fp32 4096 x 16384 took 184.2 us against 182.7, 8192 x 6144 139.7 against 137.3,
 * fp16 4096 x 16384 95.0 against 93.5. */
#define SML_BLOCK_SHORT_COLS 1024
#define SML_BLOCK_MID_FWD_BLOCKS_PER_SM 64
typedef struct sml_block_cfg {
    int K;             /* chunks (or elements when scalar) per thread */
    int blocks_per_sm; /* the grid's size per SM; 0: the launcher's default */
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
 * block idles no more lanes than before. Runs 53-56 (session 8, kernels/tune/plan33.txt to
 * plan35.txt, cold L2), us, this rule's choice against K = 1: H200 fp32 4096 x 512 64 x 2
 * 7.26 against 7.76-7.83 (cuDNN 7.24-7.30), 4096 x 1024 64 x 4 11.22-11.27 against
 * 12.51-12.54, 3072 x 1024 9.22 against 9.94-9.97, 2048 x 1024 128 x 2 7.20 against 7.99-8.05,
 * 5120 x 512 64 x 2 8.36-8.45 against 8.66-8.78; 16-bit 4096 x 1024 64 x 2 7.81-8.14 against
 * 8.22-8.48, 3072 x 1024 6.70 against 7.03-7.09. H100: level or ahead (fp32 4096 x 512
 * 8.96-8.97 against 8.97-8.98, 4096 x 1024 14.54-14.56 against 14.58-14.61, 6144 x 1024
 * 20.28 against 20.48; fp16 4096 x 1024 9.09-9.12 against 9.11-9.26). Where one wave already
 * holds the rows (2,048 x 512: 16 per SM in 16 blocks of 128) K = 1 stays (H200 6.17-6.21
 * against 6.13; 1024 x 512 4.04-4.17 against 4.26). Added idle lanes cost more than the wave
 * gains: fp16 4096 x 768 (96 chunks) as 64 x 2 took 7.61 us against 7.28-7.38 as 96 x 1.
 * Backward keeps K = 1: 64 x 2 at 4096 x 512 and 4096 x 1024 lost 1-2% on both GPUs. The
 * block stays at two warps or more: at fp32 5120 x 512 (39 rows per SM, more than even 32
 * blocks hold) 32 x 4 took 10.37-10.38 us on the H100 against 10.22 at K = 1 (run 56), where
 * the H200 had 32 x 4 8.39, 64 x 2 8.45, K = 1 8.66-8.72; 64 x 2 still lost there on the
 * H100, 10.40-10.43 against 10.27-10.32 (run 59), a shape outside the sweeps. */
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
    sml_block_cfg c = {0, 0};
    if (!bwd && V > 1 && chunks * V > SML_BLOCK_SHORT_COLS) {
        if (V == 4) c.K = chunks <= 512 ? 4 : chunks <= 2048 ? 8 : 16;
        else c.K = chunks <= 1024 ? 4 : 8;
        c.blocks_per_sm = SML_BLOCK_MID_FWD_BLOCKS_PER_SM;
        return c;
    }
    static const int KV[] = {1, 2, 4}, KS[] = {4, 16};
    const int *ks = V > 1 ? KV : KS;
    const int nk = V > 1 ? (V == 8 && bwd ? 2 : 3) : 2;
    int k = ks[nk - 1];
    for (int i = 0; i < nk; i++)
        if ((chunks + ks[i] - 1) / ks[i] <= SML_BLOCK_PREF_THREADS) { k = ks[i]; break; }
    const int kmax = V == 8 ? 2 : 4;
    if (V > 1 && rows >= (int64_t)SML_BLOCK_MANY_ROWS_PER_SM * sms) {
        while (k < kmax && (chunks + 2 * k - 1) / (2 * k) >= 32) k *= 2;
    } else if (V > 1 && !bwd) {
        k = sml_block_fwd_one_wave_k(chunks, k, kmax, rows, sms);
    }
    c.K = k;
    return c;
}

#endif
