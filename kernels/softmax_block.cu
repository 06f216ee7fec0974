/* softmax_block.cu: `block`, rows of 129 (16-bit: 257) to 16,384 columns, forward and backward,
 * in `auto` (fp32 forward and 16-bit backward on to 32,768). One block per row, the row held
 * in registers: each thread keeps K chunks of one 16-byte vector (all K loads issued back to
 * back before the first use), so x (or y and dy) crosses the memory bus once and the output
 * is written once. Differs from `warp` in that a row's reductions span the block (warp
 * butterfly, one shared slot per warp, every warp re-reducing the slots so all threads agree
 * without a second barrier) and from `split` in that a row stays on one SM.
 *
 * What makes it fast is bytes in flight per SM: a block idles in its reductions, so an SM
 * needs several resident blocks, each with a whole row of loads outstanding, or one block
 * with a long row. Blocks of up to 1,024 threads hold up to 4 chunks per thread in at most
 * 64 registers; the wide variants (forward K = 8, 16; backward fp32 K = 8 and 16-bit softmax
 * K = 4 up to 512 threads) are compiled for at most 256 or 512 threads and up to 128
 * registers, which puts two or three rows of 32-64 KB in flight on an SM where 1,024 threads
 * of 4 chunks held one, or a whole fp32 row of 128 KB in one block. 16-bit rows stay packed
 * two to a register (elements are unpacked at each use). Backward rows that fill the block
 * exactly skip the bound checks. The launch plan (sml_block_plan, kernels/block_plan.h)
 * takes, for forward rows past 1,024 columns, a fixed K per row length, and for backward rows
 * of 8,192 columns and more 32 elements per thread, each in a grid of one block per row;
 * otherwise the smallest K in {1, 2, 4} that holds the row in 256 threads (more with many
 * rows, and for forward rows that would not fit on the SMs in one wave; where that comes to 64
 * threads of 16 elements, a build capped at 32 registers, so that 32 such blocks fit an SM as
 * the rule counts). The op is a template argument. The grid walks the rows, so any row count
 * works. */
#include "kernels/block_plan.h"
#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/tuning.h"

#define BLOCK_MAX_THREADS 1024
#define BLOCK_MAX_COLS    32768
/* Launch bounds: SML_BLOCK_MAX_THREADS (block_plan.h) threads, and three resident blocks for the
 * forward K = 8 variant (at most 85 registers; 75-80 used); the lean build (MAXT =
 * SML_BLOCK_LEAN_THREADS) 32 blocks, so 32 registers. Forward K = 16 (fp32 only) gets
 * 128 registers (124-127 used, no spills), two blocks of 256 or one of 512 per SM; 16-bit
 * K = 16 spills 108-372 bytes at 128 registers and is not built. Backward K = 8 is built for
 * fp32 only (16-bit: 32-160 bytes of spill at 128 registers); 16-bit softmax backward K = 4 is
 * built twice (the MAXT argument): for 1,024 threads and for SML_BLOCK_BWD16_LEAN_THREADS. */
#define BLOCK_WIDE_K      8
template <int V, int K, bool BWD, int MAXT>
constexpr int block_min_blocks() {
    return MAXT == SML_BLOCK_LEAN_THREADS       ? SML_SM_BLOCKS
           : V > 1 && !BWD && K == BLOCK_WIDE_K ? 3
                                                : 1;
}

template <typename T, int V, int K, bool BWD, bool LOG,
          int MAXT = SML_BLOCK_MAX_THREADS(V, K, BWD, LOG)>
__global__ void __launch_bounds__(MAXT, (block_min_blocks<V, K, BWD, MAXT>()))
    sml_block_kernel(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld) {
    __shared__ float red[2][32];
    const int nt = blockDim.x, tid = threadIdx.x;
    __shared__ int odd; /* backward: a row of this block had a non-finite sum (in shared memory:
                           as a register live through the loop it cost the common path) */
    if (BWD && tid == 0) odd = 0; /* seen by all after the first reduction's barrier */
    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t off = row * ld;
        if (!BWD) {
            sml_chunk<T, V> r[K];
            /* fp32's lean build (32 registers) takes rows that fill its block exactly without
             * bound checks, as backward does below: with them K = 4 spilled 4-24 bytes (16-bit
             * K = 2 spills none with them and 4 bytes without). */
            bool whole = false;
            if constexpr (V == 4 && MAXT == SML_BLOCK_LEAN_THREADS) whole = cols == K * nt * V;
            if (whole) {
                if constexpr (V > 1) {
#pragma unroll
                    for (int k = 0; k < K; k++)
                        r[k] = sml_ld_whole<T, V>(x + off + (k * nt + tid) * V);
                }
            } else {
                /* 32-bit columns (a row is at most 32,768): with 64-bit ones the K = 16 variant
             * needed 128 registers and spilled 12-20 bytes. */
#pragma unroll
                for (int k = 0; k < K; k++)
                    r[k] = sml_cld<T, V>(x + off, (k * nt + tid) * V, cols, sml_neg_inf<T>());
#pragma unroll
                for (int k = 0; k < K; k++)
                    sml_cld_fix<T, V>(x + off, (k * nt + tid) * V, cols, r[k]);
            }
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
                if constexpr (V > 1) {
                    if (whole) {
                        sml_st_whole<T, V>(out + off + (k * nt + tid) * V, sml_cpack<T, V>(o));
                        continue;
                    }
                }
                sml_cst<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, sml_cpack<T, V>(o));
            }
        } else {
            sml_chunk<T, V> ry[K], rd[K];
            /* A row the block covers exactly (cols == K x threads x V, as every power-of-two
             * row of 8,192 to 32,768 columns is in its wide plan) takes unpredicated loads and
             * stores at 32-bit column offsets, without the bound checks and the partial-chunk
             * code: that is what holds a 16-bit softmax backward row of 32,768 columns in 64
             * registers with 24 bytes of spill, against 72 with the general path. */
            bool whole = false;
            if constexpr (V > 1) {
                whole = cols == K * nt * V;
                if (whole) {
#pragma unroll
                    for (int k = 0; k < K; k++) {
                        const int col = (k * nt + tid) * V;
                        ry[k] = sml_ld_whole<T, V>(x + off + col);
                        rd[k] = sml_ld_whole<T, V>(dy + off + col);
                    }
                }
            }
            if (!whole) {
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
            }
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++)
                    t += sml_bwd_term(sml_cv(ry[k], j), sml_cv(rd[k], j), LOG);
                s += t;
            }
            /* One reduction per row: alternate the two buffers between rows. The store loop
             * below repeats forward's on purpose: as one inlined helper for both, ptxas
             * allocated differently and spilled 48-144 bytes in forward K = 8 and 16. */
            s = sml_block_sum(s, red[parity]);
            parity ^= 1;
            if (!isfinite(s)) odd = 1; /* every thread writes the same value */
#pragma unroll
            for (int k = 0; k < K; k++) {
                float o[V];
#pragma unroll
                for (int j = 0; j < V; j++)
                    o[j] = sml_bwd_out(sml_cv(ry[k], j), sml_cv(rd[k], j), s, LOG);
                if constexpr (V > 1) {
                    if (whole) {
                        sml_st_whole<T, V>(out + off + (k * nt + tid) * V, sml_cpack<T, V>(o));
                        continue;
                    }
                }
                sml_cst<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, sml_cpack<T, V>(o));
            }
        }
    }
    /* The sum's class (common.cuh), in a second walk over the block's rows, taken only when one
     * of them had a non-finite sum, as in `warp` (and for the same reason: code beside the
     * stores costs the common path registers): a row with an infinite or NaN term is written
     * again with its class. The barriers in sml_block_class order every first store before any
     * rewrite. */
    if (BWD) __syncthreads();
    if (BWD && odd)
        for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
            const int64_t off = row * ld;
            const unsigned c =
                sml_block_class(sml_scan_class<T, LOG>(x + off, dy + off, tid, cols, nt));
            if (c)
                sml_bwd_rewrite<T, LOG>(x + off, dy + off, out + off, tid, cols, nt,
                                        sml_class_sum(0.0f, c));
        }
}

template <typename T, int V, bool BWD, bool LOG>
static sml_status block_go(const sml_problem *p, int K, int threads, int sms, int bps, bool lean) {
    void (*kern)(const T *, const T *, T *, int64_t, int, int64_t) = NULL;
    /* The plan sets lean only for the forward 16-element variants the switch builds lean; an
     * explicit thread count past the lean bound takes the default build. */
    lean = lean && threads <= SML_BLOCK_LEAN_THREADS;
    if constexpr (V > 1) {
        switch (K) {
        case 1: kern = sml_block_kernel<T, V, 1, BWD, LOG>; break;
        case 2:
            if constexpr (!BWD && V == 8)
                if (lean) {
                    kern = sml_block_kernel<T, V, 2, BWD, LOG, SML_BLOCK_LEAN_THREADS>;
                    break;
                }
            kern = sml_block_kernel<T, V, 2, BWD, LOG>;
            break;
        case 4:
            if constexpr (!BWD && V == 4)
                if (lean) {
                    kern = sml_block_kernel<T, V, 4, BWD, LOG, SML_BLOCK_LEAN_THREADS>;
                    break;
                }
            if constexpr (BWD && V == 8 && !LOG)
                if (threads <= SML_BLOCK_BWD16_LEAN_THREADS) {
                    kern = sml_block_kernel<T, V, 4, BWD, LOG, SML_BLOCK_BWD16_LEAN_THREADS>;
                    break;
                }
            kern = sml_block_kernel<T, V, 4, BWD, LOG>;
            break;
        case 8:
            if constexpr (!BWD || V == 4) kern = sml_block_kernel<T, V, 8, BWD, LOG>;
            break;
        case 16:
            if constexpr (!BWD && V == 4) kern = sml_block_kernel<T, V, 16, BWD, LOG>;
            break;
        }
        if (threads > SML_BLOCK_MAX_THREADS(V, K, BWD, LOG)) kern = NULL; /* its launch bounds */
    } else {
        switch (K) {
        case 4: kern = sml_block_kernel<T, 1, 4, BWD, LOG>; break;
        case 16: kern = sml_block_kernel<T, 1, 16, BWD, LOG>; break;
        }
    }
    if (!kern) return SML_ERR_UNSUPPORTED;
    /* Twice the blocks the thread limit lets an SM hold, walking the rows: no occupancy query
     * (a runtime call per launch, which rows of a few hundred columns cannot hide; docs/KERNELS.md,
     * "Measurements behind the design notes"). */
    if (bps <= 0) bps = 2 * (SML_SM_THREADS / threads);
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * bps);
    kern<<<(unsigned)blocks, threads, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, (int)p->cols, p->ld);
    return sml_launch_ok();
}

template <typename T>
static sml_status block_typed(const sml_problem *p, int V, int K, int threads, int sms, int bps,
                              bool lean) {
    return SML_DISPATCH_VARIANT(T, p, V, block_go, p, K, threads, sms, bps, lean);
}

extern "C" sml_status sml_block_run(sml_handle *h, const sml_problem *p, int threads, int K,
                                    int blocks_per_sm) {
    if (p->cols > BLOCK_MAX_COLS) return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    bool lean =
        false; /* only the plan picks the lean build; an explicit K (tools/tune) gets the default one */
    if (K <= 0) {
        const sml_block_cfg c = sml_block_plan(chunks, V, sml_op_is_backward(p->op), p->rows, sms);
        K = c.K;
        lean = c.lean;
        if (blocks_per_sm <= 0) blocks_per_sm = c.blocks_per_sm;
    }
    threads = threads > 0 ? sml_block_threads(threads, 1) : sml_block_threads(chunks, K);
    if ((int64_t)threads * K < chunks || threads > BLOCK_MAX_THREADS) return SML_ERR_UNSUPPORTED;
    return SML_DISPATCH_DTYPE(p->dtype, block_typed, p, V, K, threads, sms, blocks_per_sm, lean);
}

extern "C" sml_status sml_launch_block(sml_handle *h, const sml_problem *p) {
    return sml_block_run(h, p, 0, 0, 0);
}
