/* softmax_online.cu: `online`, any row length with O(1) state per thread. One block per row
 * walks the row in tiles of U vectors per thread; forward keeps a running (max, sum) and
 * rescales the sum by exp(old max - new max) once per tile (the online normaliser of
 * Milakov & Gimelshein), so the row is read twice in all: once for the statistics, once for
 * the output. Backward needs no max: one read for sum(dy*y) or sum(dy), one for dx.
 *
 * Differs from `block` (row in registers, <= 16,384 columns) and `split` (row in the shared
 * memory of a cluster): nothing is held on chip, so no row is too long and no device feature
 * is needed. `auto` uses it for forward rows of 1,025 to 16,384 columns (fp32: 8,192), where
 * the second read comes from L2 and it is ahead of `block` (one barrier per row instead of
 * two, half the registers; docs/KERNELS.md), and for long rows where
 * thread-block clusters are unavailable.
 *
 * Accuracy over long rows: each thread adds one term per tile into a compensated (Kahan)
 * sum, so 2^20 columns in 512 threads (hundreds of tiles per thread) still err like a short
 * tree. Stores are evict-first so that L2 keeps what it can of x for the second read. */
#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/tuning.h"

#define ONLINE_MAX_THREADS 512
#define ONLINE_UNROLL(bwd) ((bwd) ? 2 : 4) /* vectors in flight per tensor */

template <typename T, int V, bool BWD, bool LOG>
__global__ void __launch_bounds__(ONLINE_MAX_THREADS)
    sml_online_kernel(const T *x, const T *dy, T *out, int64_t rows, int64_t cols, int64_t ld) {
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
            sml_chunk<T, V> a[ONLINE_UNROLL(BWD)], b[ONLINE_UNROLL(BWD)];
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                a[u] = sml_cld<T, V>(x + off, col, cols, pad);
                if (BWD) b[u] = sml_cld<T, V>(dy + off, col, cols, pad);
            }
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                sml_cld_fix<T, V>(x + off, col, cols, a[u]);
                if (BWD) sml_cld_fix<T, V>(dy + off, col, cols, b[u]);
            }
            sml_tile_acc<T, V, ONLINE_UNROLL(BWD), BWD, LOG>(a, b, m, acc);
        }
        float s = sml_kval(acc);
        /* Alternate the reduction buffers between rows: one barrier per reduction. */
        if (!BWD)
            sml_block_merge(m, s, red[parity]);
        else
            s = sml_block_sum(s, red[parity]);
        /* The sum's class (common.cuh): the row read again, only when its sum is not finite
         * (every thread holds the same s, so the whole block reaches sml_block_class's
         * barriers). */
        if (BWD && !isfinite(s))
            s = sml_class_sum(
                s, sml_block_class(sml_scan_class<T, LOG>(x + off, dy + off, tid, cols, nt)));
        const float post = BWD ? s : sml_fwd_post(s, LOG);
        for (int64_t j0 = tid; j0 < nch; j0 += (int64_t)ONLINE_UNROLL(BWD) * nt) {
            sml_chunk<T, V> a[ONLINE_UNROLL(BWD)], b[ONLINE_UNROLL(BWD)];
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                a[u] = sml_cld<T, V>(x + off, col, cols, pad);
                if (BWD) b[u] = sml_cld<T, V>(dy + off, col, cols, pad);
            }
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                sml_cld_fix<T, V>(x + off, col, cols, a[u]);
                if (BWD) sml_cld_fix<T, V>(dy + off, col, cols, b[u]);
            }
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL(BWD); u++)
                sml_cst<T, V, true>(out + off, (j0 + (int64_t)u * nt) * V, cols,
                                    sml_chunk_out<T, V, BWD, LOG>(a[u], b[u], m, post));
        }
    }
}

template <typename T, int V, bool BWD, bool LOG>
static sml_status online_go(const sml_problem *p, int threads, int64_t blocks) {
    sml_online_kernel<T, V, BWD, LOG><<<(unsigned)blocks, threads, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, p->cols, p->ld);
    return sml_launch_ok();
}

template <typename T>
static sml_status online_typed(const sml_problem *p, int V, int threads, int64_t blocks) {
    return SML_DISPATCH_VARIANT(T, p, V, online_go, p, threads, blocks);
}

extern "C" sml_status sml_online_run(sml_handle *h, const sml_problem *p, int threads,
                                     int blocks_per_sm) {
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    /* Enough threads for one tile to cover the row when it is short; 512 otherwise. */
    if (threads <= 0)
        threads = (int)sml_min64(
            ONLINE_MAX_THREADS,
            sml_max64(32, sml_pow2_ceil((chunks + ONLINE_UNROLL(0) - 1) / ONLINE_UNROLL(0))));
    if (threads > ONLINE_MAX_THREADS || threads % 32) return SML_ERR_UNSUPPORTED;
    if (blocks_per_sm <= 0) blocks_per_sm = (2048 / threads) * 2;
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * blocks_per_sm);
    return SML_DISPATCH_DTYPE(p->dtype, online_typed, p, V, threads, blocks);
}

extern "C" sml_status sml_launch_online(sml_handle *h, const sml_problem *p) {
    return sml_online_run(h, p, 0, 0);
}
