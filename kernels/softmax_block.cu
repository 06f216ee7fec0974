/* softmax_block.cu: `block`, rows of 129 (16-bit: 257) to 16,384 columns, forward and backward,
 * in `auto`. One block per row, the row held in registers: each thread keeps K
 * chunks of one 16-byte vector (all K loads issued back to back before the first use), so x
 * (or y and dy) crosses the memory bus once and the output is written once. Differs from
 * `warp` in that a row's reductions span the block (warp butterfly, one shared slot per warp,
 * every warp re-reducing the slots so all threads agree without a second barrier) and from
 * `split` in that a row stays on one SM.
 *
 * What makes it fast is bytes in flight per SM: a block idles in its reductions, so an SM
 * needs several resident blocks, each with a whole row of loads outstanding. Blocks of up to
 * 1,024 threads hold up to 4 chunks per thread in at most 64 registers; the wide variants
 * (K = 8, 16: forward only) are compiled for at most 256 threads and two or three blocks per
 * SM, up to 128 registers, which puts two or three rows of 32-64 KB in flight on an SM where
 * 1,024 threads of 4 chunks held one. 16-bit rows stay packed two to a register (elements are
 * unpacked at each use). The launcher (block_plan) takes, for forward rows past 1,024
 * columns, a fixed K per row length and one block per row; otherwise the smallest K in
 * {1, 2, 4} that holds the row in 256 threads (more with many rows). The op is a template
 * argument. The grid walks the rows, so any row count works. */
#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/tuning.h"

#define BLOCK_MAX_THREADS 1024
#define BLOCK_MAX_COLS 16384
/* Wide variants (forward): K >= BLOCK_WIDE_K chunks per thread in blocks of at most
 * BLOCK_WIDE_THREADS, compiled for three (K = 8: at most 85 registers; 75-80 used) or two
 * (K = 16, fp32 only: 128; 124-127 used, no spills) resident blocks per SM. 16-bit K = 16
 * spills 108-372 bytes at 128 registers and is not built. */
#define BLOCK_WIDE_K 8
#define BLOCK_WIDE_THREADS 256
#define BLOCK_IS_WIDE(V, K) ((V) > 1 && (K) >= BLOCK_WIDE_K)

template <typename T, int V, int K, bool BWD, bool LOG>
__global__ void __launch_bounds__(BLOCK_IS_WIDE(V, K) ? BLOCK_WIDE_THREADS : BLOCK_MAX_THREADS,
                                  BLOCK_IS_WIDE(V, K) ? (K >= 16 ? 2 : 3) : 1)
    sml_block_kernel(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld) {
    __shared__ float red[2][32];
    const int nt = blockDim.x, tid = threadIdx.x;
    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t off = row * ld;
        if (!BWD) {
            sml_chunk<T, V> r[K];
            /* 32-bit columns (a row is at most 16,384): with 64-bit ones the K = 16 variant
             * needed 128 registers and spilled 12-20 bytes. */
#pragma unroll
            for (int k = 0; k < K; k++)
                r[k] = sml_cld<T, V>(x + off, (k * nt + tid) * V, cols, sml_neg_inf<T>());
#pragma unroll
            for (int k = 0; k < K; k++) sml_cld_fix<T, V>(x + off, (k * nt + tid) * V, cols, r[k]);
            float m = -FLT_MAX;
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < V; j++) m = fmaxf(m, sml_cv(r[k], j));
            m = sml_block_max(m, red[0]);
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_exp_shift(sml_cv(r[k], j), m);
                s += t;
            }
            s = sml_block_sum(s, red[1]);
            const float post = sml_fwd_post(s, LOG);
#pragma unroll
            for (int k = 0; k < K; k++) {
                float o[V];
#pragma unroll
                for (int j = 0; j < V; j++) {
                    const float xf = sml_cv(r[k], j);
                    o[j] = sml_fwd_out(xf, m, post, LOG);
                }
                sml_cst<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, sml_cpack<T, V>(o));
            }
        } else {
            sml_chunk<T, V> ry[K], rd[K];
#pragma unroll
            for (int k = 0; k < K; k++) {
                const int64_t col = (int64_t)(k * nt + tid) * V;
                ry[k] = sml_cld<T, V>(x + off, col, cols, sml_zero<T>());
                rd[k] = sml_cld<T, V>(dy + off, col, cols, sml_zero<T>());
            }
#pragma unroll
            for (int k = 0; k < K; k++) {
                const int64_t col = (int64_t)(k * nt + tid) * V;
                sml_cld_fix<T, V>(x + off, col, cols, ry[k]);
                sml_cld_fix<T, V>(dy + off, col, cols, rd[k]);
            }
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_bwd_term(sml_cv(ry[k], j), sml_cv(rd[k], j), LOG);
                s += t;
            }
            /* One reduction per row: alternate the two buffers between rows. */
            s = sml_block_sum(s, red[parity]);
            parity ^= 1;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float o[V];
#pragma unroll
                for (int j = 0; j < V; j++) o[j] = sml_bwd_out(sml_cv(ry[k], j), sml_cv(rd[k], j), s, LOG);
                sml_cst<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, sml_cpack<T, V>(o));
            }
        }
    }
}

template <typename T, int V, bool BWD, bool LOG>
static sml_status block_go(const sml_problem *p, int K, int threads, int sms, int bps) {
    void (*kern)(const T *, const T *, T *, int64_t, int, int64_t) = NULL;
    if constexpr (V > 1) {
        switch (K) {
        case 1: kern = sml_block_kernel<T, V, 1, BWD, LOG>; break;
        case 2: kern = sml_block_kernel<T, V, 2, BWD, LOG>; break;
        case 4: kern = sml_block_kernel<T, V, 4, BWD, LOG>; break;
        case 8: if constexpr (!BWD) kern = sml_block_kernel<T, V, 8, BWD, LOG>; break;
        case 16: if constexpr (!BWD && V == 4) kern = sml_block_kernel<T, V, 16, BWD, LOG>; break;
        }
        if (BLOCK_IS_WIDE(V, K) && threads > BLOCK_WIDE_THREADS) kern = NULL;
    } else {
        switch (K) {
        case 4: kern = sml_block_kernel<T, 1, 4, BWD, LOG>; break;
        case 16: kern = sml_block_kernel<T, 1, 16, BWD, LOG>; break;
        }
    }
    if (!kern) return SML_ERR_UNSUPPORTED;
    /* Twice the blocks the thread limit lets an SM hold, walking the rows: no occupancy query
     * (a runtime call per launch, ~0.8 us, which rows of a few hundred columns cannot hide:
     * run 3 measured auto at a flat 5.8 us on every 4096 x 256 16-bit op with it). */
    if (bps <= 0) bps = 2 * (2048 / threads);
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * bps);
    kern<<<(unsigned)blocks, threads, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, (int)p->cols, p->ld);
    return sml_launch_ok();
}

template <typename T>
static sml_status block_typed(const sml_problem *p, int V, int K, int threads, int sms, int bps) {
    const bool bwd = sml_op_is_backward(p->op);
    const bool lg = p->op == SML_LOG_SOFTMAX || p->op == SML_LOG_SOFTMAX_BWD;
    constexpr int VV = 16 / sizeof(T);
    if (V == VV) {
        if (bwd) return lg ? block_go<T, VV, true, true>(p, K, threads, sms, bps)
                           : block_go<T, VV, true, false>(p, K, threads, sms, bps);
        return lg ? block_go<T, VV, false, true>(p, K, threads, sms, bps)
                  : block_go<T, VV, false, false>(p, K, threads, sms, bps);
    }
    if (bwd) return lg ? block_go<T, 1, true, true>(p, K, threads, sms, bps)
                       : block_go<T, 1, true, false>(p, K, threads, sms, bps);
    return lg ? block_go<T, 1, false, true>(p, K, threads, sms, bps)
              : block_go<T, 1, false, false>(p, K, threads, sms, bps);
}

/* The default configuration: the smallest K (of those instantiated) that holds the row in
 * <= BLOCK_PREF_THREADS threads, else the largest K with up to 1,024 threads. Fewer, fuller
 * threads measured faster (run 2: at 4,096 columns K = 2-4 beat K = 1 by 3-7%); 16-bit
 * backward stops at K = 2, where y and dy of K = 4 would need more than the 64 registers a
 * 1,024-thread block allows (ptxas spills 64 bytes).
 *
 * Many rows (at least BLOCK_MANY_ROWS_PER_SM per SM): the largest K with at least 32
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
 * against 14.47-14.65, 4096 x 256 6.03-6.07 against 6.17-6.19), hence the threshold. */
#define BLOCK_PREF_THREADS 256
#define BLOCK_MANY_ROWS_PER_SM 48
/* Forward rows longer than BLOCK_SHORT_COLS (vector loads): a fixed K per row length, so the
 * threads grow with the row up to 256 (fp32: K = 4 to 2,048 columns, 8 to 8,192, 16 to
 * 16,384; 16-bit: 4 to 8,192, 8 to 16,384), and a grid of up to BLOCK_MID_FWD_BLOCKS_PER_SM
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
#define BLOCK_SHORT_COLS 1024
#define BLOCK_MID_FWD_BLOCKS_PER_SM 64
typedef struct block_cfg {
    int K;             /* chunks (or elements when scalar) per thread */
    int blocks_per_sm; /* the grid's size per SM; 0: block_go's default */
} block_cfg;

static block_cfg block_plan(int64_t chunks, int V, int bwd, int64_t rows, int sms) {
    block_cfg c = {0, 0};
    if (!bwd && V > 1 && chunks * V > BLOCK_SHORT_COLS) {
        if (V == 4) c.K = chunks <= 512 ? 4 : chunks <= 2048 ? 8 : 16;
        else c.K = chunks <= 1024 ? 4 : 8;
        c.blocks_per_sm = BLOCK_MID_FWD_BLOCKS_PER_SM;
        return c;
    }
    static const int KV[] = {1, 2, 4}, KS[] = {4, 16};
    const int *ks = V > 1 ? KV : KS;
    const int nk = V > 1 ? (V == 8 && bwd ? 2 : 3) : 2;
    int k = ks[nk - 1];
    for (int i = 0; i < nk; i++)
        if ((chunks + ks[i] - 1) / ks[i] <= BLOCK_PREF_THREADS) { k = ks[i]; break; }
    if (V > 1 && rows >= (int64_t)BLOCK_MANY_ROWS_PER_SM * sms) {
        const int kmax = V == 8 ? 2 : 4;
        while (k < kmax && (chunks + 2 * k - 1) / (2 * k) >= 32) k *= 2;
    }
    c.K = k;
    return c;
}

extern "C" sml_status sml_block_run(sml_handle *h, const sml_problem *p, int threads, int K,
                                    int blocks_per_sm) {
    (void)h;
    if (p->cols > BLOCK_MAX_COLS) return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(&sms);
    if (s != SML_OK) return s;
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    if (K <= 0) {
        const block_cfg c = block_plan(chunks, V, sml_op_is_backward(p->op), p->rows, sms);
        K = c.K;
        if (blocks_per_sm <= 0) blocks_per_sm = c.blocks_per_sm;
    }
    if (threads <= 0) threads = (int)((chunks + K - 1) / K);
    threads = (int)sml_max64(32, (threads + 31) / 32 * 32);
    if ((int64_t)threads * K < chunks || threads > BLOCK_MAX_THREADS) return SML_ERR_UNSUPPORTED;
    return SML_DISPATCH_DTYPE(p->dtype, block_typed, p, V, K, threads, sms, blocks_per_sm);
}

extern "C" sml_status sml_launch_block(sml_handle *h, const sml_problem *p) {
    return sml_block_run(h, p, 0, 0, 0);
}
