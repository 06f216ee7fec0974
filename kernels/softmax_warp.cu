/* softmax_warp.cu: `warp`, the short-row path (cols <= 1024). A row belongs to one warp, or
 * to a group of `width` lanes (a power of two below 32) when the row is shorter than one
 * 16-byte vector per lane, so that one warp serves 32 / width rows and no lane idles on a
 * row of 32 columns. The row lives in registers in its own dtype (K chunks of one 16-byte
 * vector per lane, all loads issued before the first use), so x (or y and dy) is read from
 * memory once and every reduction is a register butterfly: no shared memory, no barrier.
 *
 * Why it is fast by construction: 16-byte coalesced accesses, K independent loads in flight
 * per lane, a grid of at most ~16 blocks per SM that walks the rows (persistent, so 65,537+
 * rows need no second grid dimension and short rows pay no block start-up each). Lanes of a
 * group beyond the last row pad with -inf / 0 and store nothing.
 *
 * Variants: K (chunks per lane) in {1, 2, 4, 8} at 16-byte width, {1, 4, 32} at scalar width
 * (misaligned base or an ld that breaks 16-byte alignment); width is a runtime argument. */
#include "kernels/common.cuh"
#include "kernels/launchers.h"

#define WARP_THREADS 128
#define WARP_MAX_COLS 1024

template <typename T, int V, int K, bool BWD>
__global__ void __launch_bounds__(WARP_THREADS)
    sml_warp_kernel(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld,
                    int width, int log_op) {
    const int lane = threadIdx.x & 31;
    const int sub = lane / width, lr = lane & (width - 1);
    const int per_warp = 32 / width;
    const int64_t warp0 = (int64_t)blockIdx.x * (WARP_THREADS / 32) + (threadIdx.x >> 5);
    const int64_t step = (int64_t)gridDim.x * (WARP_THREADS / 32) * per_warp;
    /* The loop bound is the same for every lane of a warp, so the shuffles below always
     * have all 32 lanes; rows past the end get lim = 0 (pad everything, store nothing). */
    for (int64_t base = warp0 * per_warp; base < rows; base += step) {
        const int64_t row = base + sub;
        const int lim = row < rows ? cols : 0;
        const int64_t off = (row < rows ? row : base) * ld;
        if (!BWD) {
            sml_vec<T, V> r[K];
#pragma unroll
            for (int k = 0; k < K; k++)
                r[k] = sml_ld<T, V>(x + off, (int64_t)(k * width + lr) * V, lim, sml_neg_inf<T>());
            float m = -FLT_MAX;
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < V; j++) m = fmaxf(m, sml_f(r[k].v[j]));
            m = sml_warp_max(m, width);
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
                s += t;
            }
            s = sml_warp_sum(s, width);
            const float post = sml_fwd_post(s, log_op);
#pragma unroll
            for (int k = 0; k < K; k++) {
                sml_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(r[k].v[j]), m, post, log_op));
                sml_st<T, V>(out + off, (int64_t)(k * width + lr) * V, lim, o);
            }
        } else {
            sml_vec<T, V> ry[K], rd[K];
#pragma unroll
            for (int k = 0; k < K; k++) {
                const int64_t col = (int64_t)(k * width + lr) * V;
                ry[k] = sml_ld<T, V>(x + off, col, lim, sml_zero<T>());
                rd[k] = sml_ld<T, V>(dy + off, col, lim, sml_zero<T>());
            }
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_bwd_term(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), log_op);
                s += t;
            }
            s = sml_warp_sum(s, width);
#pragma unroll
            for (int k = 0; k < K; k++) {
                sml_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(sml_bwd_out(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), s, log_op));
                sml_st<T, V>(out + off, (int64_t)(k * width + lr) * V, lim, o);
            }
        }
    }
}

template <typename T, int V, bool BWD>
static sml_status warp_go(const sml_problem *p, int K, int width, int blocks) {
    void (*kern)(const T *, const T *, T *, int64_t, int, int64_t, int, int) = NULL;
    if constexpr (V > 1) {
        switch (K) {
        case 1: kern = sml_warp_kernel<T, V, 1, BWD>; break;
        case 2: kern = sml_warp_kernel<T, V, 2, BWD>; break;
        case 4: kern = sml_warp_kernel<T, V, 4, BWD>; break;
        case 8:
            if constexpr (V * 32 * 8 <= WARP_MAX_COLS) kern = sml_warp_kernel<T, V, 8, BWD>;
            break;
        }
    } else {
        switch (K) {
        case 1: kern = sml_warp_kernel<T, 1, 1, BWD>; break;
        case 4: kern = sml_warp_kernel<T, 1, 4, BWD>; break;
        case 32: kern = sml_warp_kernel<T, 1, 32, BWD>; break;
        }
    }
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, WARP_THREADS, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, (int)p->cols, p->ld, width,
        p->op == SML_LOG_SOFTMAX || p->op == SML_LOG_SOFTMAX_BWD);
    return sml_launch_ok();
}

template <typename T>
static sml_status warp_typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    int width, K;
    if (chunks <= 32) {
        width = sml_pow2_ceil(chunks);
        K = 1;
    } else {
        width = 32;
        const int64_t need = (chunks + 31) / 32;
        if (V > 1) K = need <= 1 ? 1 : need <= 2 ? 2 : need <= 4 ? 4 : 8;
        else K = need <= 4 ? 4 : 32;
    }
    const int64_t rows_per_block = (WARP_THREADS / 32) * (32 / width);
    const int64_t blocks = sml_min64((p->rows + rows_per_block - 1) / rows_per_block,
                                     (int64_t)sms * (2048 / WARP_THREADS));
    const bool bwd = sml_op_is_backward(p->op);
    if (V == 16 / (int)sizeof(T))
        return bwd ? warp_go<T, 16 / sizeof(T), true>(p, K, width, (int)blocks)
                   : warp_go<T, 16 / sizeof(T), false>(p, K, width, (int)blocks);
    return bwd ? warp_go<T, 1, true>(p, K, width, (int)blocks)
               : warp_go<T, 1, false>(p, K, width, (int)blocks);
}

extern "C" sml_status sml_launch_warp(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > WARP_MAX_COLS) return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(&sms);
    if (s != SML_OK) return s;
    return SML_DISPATCH_DTYPE(p->dtype, warp_typed, p, sms);
}
