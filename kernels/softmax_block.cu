/* softmax_block.cu: `block`, mid-length rows (up to 16,384 columns). One block per row, the
 * row held in registers in its own dtype: each thread keeps K chunks of one 16-byte vector
 * (all K loads issued before the first use), so x (or y and dy) crosses the memory bus once
 * and the output is written once. Differs from `warp` in that a row's reductions span the
 * block (warp butterfly, one shared slot per warp, every warp re-reducing the slots so all
 * threads agree without a second barrier) and from `split` in that a row stays on one SM.
 *
 * Sizing: the launcher picks the smallest K in {1, 2, 4} (16-byte width) or {4, 16}
 * (scalar width: misaligned base or odd ld) that keeps the block at <= 512 threads, so two
 * or more blocks share an SM and one block's barrier waits hide behind another's loads;
 * only the longest rows use 1024 threads. Registers per thread stay <= 64 (launch bounds)
 * because the row is kept packed (16-bit dtypes: two values per register) and converted to
 * fp32 on each use. The grid walks the rows, so any row count works. */
#include "kernels/common.cuh"
#include "kernels/launchers.h"

#define BLOCK_MAX_THREADS 1024
#define BLOCK_PREFERRED_THREADS 512
#define BLOCK_MAX_COLS 16384

template <typename T, int V, int K, bool BWD>
__global__ void __launch_bounds__(BLOCK_MAX_THREADS)
    sml_block_kernel(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld,
                     int log_op) {
    __shared__ float red[2][32];
    const int nt = blockDim.x, tid = threadIdx.x;
    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t off = row * ld;
        if (!BWD) {
            sml_vec<T, V> r[K];
#pragma unroll
            for (int k = 0; k < K; k++)
                r[k] = sml_ld<T, V>(x + off, (int64_t)(k * nt + tid) * V, cols, sml_neg_inf<T>());
            float m = -FLT_MAX;
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < V; j++) m = fmaxf(m, sml_f(r[k].v[j]));
            m = sml_block_max(m, red[0]);
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
                s += t;
            }
            s = sml_block_sum(s, red[1]);
            const float post = sml_fwd_post(s, log_op);
#pragma unroll
            for (int k = 0; k < K; k++) {
                sml_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(r[k].v[j]), m, post, log_op));
                sml_st<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, o);
            }
        } else {
            sml_vec<T, V> ry[K], rd[K];
#pragma unroll
            for (int k = 0; k < K; k++) {
                const int64_t col = (int64_t)(k * nt + tid) * V;
                ry[k] = sml_ld<T, V>(x + off, col, cols, sml_zero<T>());
                rd[k] = sml_ld<T, V>(dy + off, col, cols, sml_zero<T>());
            }
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_bwd_term(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), log_op);
                s += t;
            }
            /* One reduction per row: alternate the two buffers between rows. */
            s = sml_block_sum(s, red[parity]);
            parity ^= 1;
#pragma unroll
            for (int k = 0; k < K; k++) {
                sml_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(sml_bwd_out(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), s, log_op));
                sml_st<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, o);
            }
        }
    }
}

template <typename T, int V, bool BWD>
static sml_status block_go(const sml_problem *p, int K, int threads, int blocks) {
    void (*kern)(const T *, const T *, T *, int64_t, int, int64_t, int) = NULL;
    if constexpr (V > 1) {
        switch (K) {
        case 1: kern = sml_block_kernel<T, V, 1, BWD>; break;
        case 2: kern = sml_block_kernel<T, V, 2, BWD>; break;
        case 4: kern = sml_block_kernel<T, V, 4, BWD>; break;
        }
    } else {
        switch (K) {
        case 4: kern = sml_block_kernel<T, 1, 4, BWD>; break;
        case 16: kern = sml_block_kernel<T, 1, 16, BWD>; break;
        }
    }
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, threads, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, (int)p->cols, p->ld,
        p->op == SML_LOG_SOFTMAX || p->op == SML_LOG_SOFTMAX_BWD);
    return sml_launch_ok();
}

template <typename T>
static sml_status block_typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    static const int KV[] = {1, 2, 4}, KS[] = {4, 16};
    const int *ks = V > 1 ? KV : KS;
    const int nk = V > 1 ? 3 : 2;
    int K = ks[nk - 1];
    for (int i = 0; i < nk; i++)
        if ((chunks + ks[i] - 1) / ks[i] <= BLOCK_PREFERRED_THREADS) { K = ks[i]; break; }
    const int64_t per_k = (chunks + K - 1) / K;
    if (per_k > BLOCK_MAX_THREADS) return SML_ERR_UNSUPPORTED;
    const int threads = (int)sml_max64(32, (per_k + 31) / 32 * 32);
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * (2048 / threads) * 2);
    const bool bwd = sml_op_is_backward(p->op);
    if (V == 16 / (int)sizeof(T))
        return bwd ? block_go<T, 16 / sizeof(T), true>(p, K, threads, (int)blocks)
                   : block_go<T, 16 / sizeof(T), false>(p, K, threads, (int)blocks);
    return bwd ? block_go<T, 1, true>(p, K, threads, (int)blocks)
               : block_go<T, 1, false>(p, K, threads, (int)blocks);
}

extern "C" sml_status sml_launch_block(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > BLOCK_MAX_COLS) return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(&sms);
    if (s != SML_OK) return s;
    return SML_DISPATCH_DTYPE(p->dtype, block_typed, p, sms);
}
