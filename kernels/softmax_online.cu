/* softmax_online.cu: `online`, any row length with O(1) state per thread. One block per row
 * walks the row in tiles of U vectors per thread; forward keeps a running (max, sum) and
 * rescales the sum by exp(old max - new max) once per tile (the online normaliser of
 * Milakov & Gimelshein), so the row is read twice in all: once for the statistics, once for
 * the output. Backward needs no max: one read for sum(dy*y) or sum(dy), one for dx.
 *
 * Differs from `block` (row in registers, <= 16,384 columns) and `split` (row in the shared
 * memory of a cluster): nothing is held on chip, so no row is too long and no device feature
 * is needed. `auto` uses it for long rows only where thread-block clusters are unavailable.
 *
 * Accuracy over long rows: each thread adds one term per tile into a compensated (Kahan)
 * sum, so 2^20 columns in 512 threads (hundreds of tiles per thread) still err like a short
 * tree. Stores are evict-first so that L2 keeps what it can of x for the second read. */
#include "kernels/common.cuh"
#include "kernels/launchers.h"

#define ONLINE_MAX_THREADS 512
#define ONLINE_UNROLL(bwd) ((bwd) ? 2 : 4) /* vectors in flight per tensor */

template <typename T, int V, bool BWD>
__global__ void __launch_bounds__(ONLINE_MAX_THREADS)
    sml_online_kernel(const T *x, const T *dy, T *out, int64_t rows, int64_t cols, int64_t ld,
                      int log_op) {
    __shared__ float red[2][64];
    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t nch = (cols + V - 1) / V;
    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1) {
        const int64_t off = row * ld;
        const T pad = BWD ? sml_zero<T>() : sml_neg_inf<T>();
        float m = -FLT_MAX;
        sml_ksum acc = {0.0f, 0.0f};
        for (int64_t j0 = tid; j0 < nch; j0 += (int64_t)ONLINE_UNROLL(BWD) * nt) {
            sml_vec<T, V> a[ONLINE_UNROLL(BWD)], b[ONLINE_UNROLL(BWD)];
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                a[u] = sml_ld<T, V>(x + off, col, cols, pad);
                if (BWD) b[u] = sml_ld<T, V>(dy + off, col, cols, pad);
            }
            float t = 0.0f;
            if (!BWD) {
                float cm = -FLT_MAX;
#pragma unroll
                for (int u = 0; u < ONLINE_UNROLL(BWD); u++)
#pragma unroll
                    for (int j = 0; j < V; j++) cm = fmaxf(cm, sml_f(a[u].v[j]));
                if (cm > m) {
                    sml_kscale(acc, exp2f((m - cm) * SML_LOG2E));
                    m = cm;
                }
#pragma unroll
                for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                    float tu = 0.0f;
#pragma unroll
                    for (int j = 0; j < V; j++) tu += sml_exp_shift(sml_f(a[u].v[j]), m);
                    t += tu;
                }
            } else {
#pragma unroll
                for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                    float tu = 0.0f;
#pragma unroll
                    for (int j = 0; j < V; j++) tu += sml_bwd_term(sml_f(a[u].v[j]), sml_f(b[u].v[j]), log_op);
                    t += tu;
                }
            }
            sml_kadd(acc, t);
        }
        float s = sml_kval(acc);
        /* Alternate the reduction buffers between rows: one barrier per reduction. */
        if (!BWD) sml_block_merge(m, s, red[parity]);
        else s = sml_block_sum(s, red[parity]);
        const float post = BWD ? s : sml_fwd_post(s, log_op);
        for (int64_t j0 = tid; j0 < nch; j0 += (int64_t)ONLINE_UNROLL(BWD) * nt) {
            sml_vec<T, V> a[ONLINE_UNROLL(BWD)], b[ONLINE_UNROLL(BWD)];
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                a[u] = sml_ld<T, V>(x + off, col, cols, pad);
                if (BWD) b[u] = sml_ld<T, V>(dy + off, col, cols, pad);
            }
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                sml_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(BWD ? sml_bwd_out(sml_f(a[u].v[j]), sml_f(b[u].v[j]), post, log_op)
                                               : sml_fwd_out(sml_f(a[u].v[j]), m, post, log_op));
                sml_st<T, V, true>(out + off, (j0 + (int64_t)u * nt) * V, cols, o);
            }
        }
    }
}

template <typename T, int V>
static sml_status online_go(const sml_problem *p, int threads, int64_t blocks) {
    const int log_op = p->op == SML_LOG_SOFTMAX || p->op == SML_LOG_SOFTMAX_BWD;
    cudaStream_t st = (cudaStream_t)p->stream;
    if (sml_op_is_backward(p->op))
        sml_online_kernel<T, V, true><<<(unsigned)blocks, threads, 0, st>>>(
            (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, p->cols, p->ld, log_op);
    else
        sml_online_kernel<T, V, false><<<(unsigned)blocks, threads, 0, st>>>(
            (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, p->cols, p->ld, log_op);
    return sml_launch_ok();
}

template <typename T>
static sml_status online_typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    /* Enough threads for one tile to cover the row when it is short; 512 otherwise. */
    const int threads = (int)sml_min64(ONLINE_MAX_THREADS,
                                       sml_max64(32, sml_pow2_ceil((chunks + ONLINE_UNROLL(0) - 1) / ONLINE_UNROLL(0))));
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * (2048 / threads) * 2);
    if (V == 16 / (int)sizeof(T)) return online_go<T, 16 / sizeof(T)>(p, threads, blocks);
    return online_go<T, 1>(p, threads, blocks);
}

extern "C" sml_status sml_launch_online(sml_handle *h, const sml_problem *p) {
    (void)h;
    int sms = 0;
    sml_status s = sml_device_sms(&sms);
    if (s != SML_OK) return s;
    return SML_DISPATCH_DTYPE(p->dtype, online_typed, p, sms);
}
