/* softmax_warp.cu: `warp`, short rows (registered to 1,024 columns; `auto` sends it rows of
 * up to 128 columns, 256 in 16-bit). A row belongs to one warp, or to a group of `width` lanes (a power of two below
 * 32) when the row is shorter than one 16-byte vector per lane, so that one warp serves
 * 32 / width rows and no lane idles on a row of 32 columns. The row lives in registers in
 * its own dtype (K chunks of one 16-byte vector per lane, all loads issued back to back
 * before the first use), so x (or y and dy) is read from memory once and every reduction is
 * a register butterfly: no shared memory, no barrier.
 *
 * A lane group may hold R rows at once (R rows of loads in flight before the first
 * reduction, R butterflies interleaved); the launcher uses R = 1, which is level with or
 * ahead of R = 2; fp32 forward rows of 65-128 columns take K = 2 chunks per lane in a group
 * of 16 lanes instead (WARP_FWD_NARROW). Each variant is
 * built for a number of resident blocks (warp_min_blocks, a register budget). The op is a
 * template argument. The grid is at most 16 blocks per SM and walks the rows (so 65,537+ rows
 * need no second grid dimension); the launcher makes no occupancy query, a runtime call per
 * launch that rows this short cannot hide. Lanes of a group beyond the last row pad with
 * -inf / 0 and store nothing.
 *
 * Variants: K (chunks per lane) in {1, 2, 4, 8} at 16-byte width, {1, 4, 32} at scalar width
 * (misaligned base or an ld that breaks 16-byte alignment); R in {1, 2, 4} where K * R <= 8;
 * width is a runtime argument, passed as its log2 (a shift, not a division). */
#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/sm_limits.h"
#include "kernels/tuning.h"

#define WARP_THREADS  128
#define WARP_MAX_COLS 1024

/* Resident blocks per SM a variant is built for: the second argument of its launch bounds,
 * a budget of 65,536 / (128 x this) registers per thread. Without it the compiler took what
 * it liked: fp32 forward at K = 4 took 70 registers, 7 blocks per SM, so 16384 x 128's 1,024
 * blocks ran in 1.11 waves; 16-bit forward at K = 1 took 40, 12 blocks of the 16 the threads
 * allow; the budgets make both faster (docs/KERNELS.md, "Measurements behind the design notes").
 * D counts the row elements a lane holds, as fp32: 16-bit chunks are unpacked to fp32 for
 * the arithmetic, and counting them packed made the 16-bit variants spill. Scalar chunks
 * (an address per element) and several rows per group (per-row state) count twice: without
 * that, ptxas spilled 4-132 bytes in them. */
template <int V, int K, int R, bool BWD>
constexpr int warp_min_blocks() {
    constexpr int D = K * R * (BWD ? 2 : 1) * V * (V == 1 || R > 1 ? 2 : 1);
    return D <= 8 ? 16 : D <= 16 ? 8 : D <= 32 ? 4 : 2;
}

template <typename T, int V, int K, int R, bool BWD, bool LOG>
__global__ void __launch_bounds__(WARP_THREADS, (warp_min_blocks<V, K, R, BWD>()))
    sml_warp_kernel(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld, int lw) {
    /* The group width comes as its log2: `lane / width` with a runtime width compiled to a
     * generic integer division (a MUFU.RCP and about 30 dependent instructions) ahead of the
     * first load of every warp. */
    const int width = 1 << lw;
    const int lane = threadIdx.x & 31;
    const int sub = lane >> lw, lr = lane & (width - 1);
    const int per_warp = 32 >> lw;
    const int64_t warp0 = (int64_t)blockIdx.x * (WARP_THREADS / 32) + (threadIdx.x >> 5);
    const int64_t step = (int64_t)gridDim.x * (WARP_THREADS / 32) * per_warp * R;
    /* Backward: a row of this warp had a non-finite sum. In shared memory: as a register live
     * through the loop it cost the common path registers. */
    __shared__ int odd[WARP_THREADS / 32];
    if (BWD) {
        if (lane == 0) odd[threadIdx.x >> 5] = 0;
        __syncwarp();
    }
    /* The loop bound is the same for every lane of a warp, so the shuffles below always
     * have all 32 lanes; rows past the end get lim = 0 (pad everything, store nothing). A
     * warp's R * per_warp rows are consecutive: group `sub` holds rows base + sub * R + i. */
    for (int64_t base = warp0 * per_warp * R; base < rows; base += step) {
        int lim[R];
        int64_t off[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            const int64_t row = base + (int64_t)sub * R + i;
            lim[i] = row < rows ? cols : 0;
            off[i] = (row < rows ? row : base) * ld;
        }
        if (!BWD) {
            sml_chunk<T, V> r[R][K];
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int k = 0; k < K; k++)
                    r[i][k] = sml_cld<T, V>(x + off[i], (int64_t)(k * width + lr) * V, lim[i],
                                            sml_neg_inf<T>());
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int k = 0; k < K; k++)
                    sml_cld_fix<T, V>(x + off[i], (int64_t)(k * width + lr) * V, lim[i], r[i][k]);
            float m[R], s[R];
#pragma unroll
            for (int i = 0; i < R; i++) {
                m[i] = -FLT_MAX;
#pragma unroll
                for (int k = 0; k < K; k++)
#pragma unroll
                    for (int j = 0; j < V; j++) m[i] = fmaxf(m[i], sml_cv(r[i][k], j));
            }
#pragma unroll
            for (int i = 0; i < R; i++) m[i] = sml_warp_max(m[i], width);
#pragma unroll
            for (int i = 0; i < R; i++) {
                s[i] = 0.0f;
#pragma unroll
                for (int k = 0; k < K; k++) {
                    float t = 0.0f;
#pragma unroll
                    for (int j = 0; j < V; j++) t += sml_exp_shift(sml_cv(r[i][k], j), m[i]);
                    s[i] += t;
                }
            }
#pragma unroll
            for (int i = 0; i < R; i++) s[i] = sml_fwd_post(sml_warp_sum(s[i], width), LOG);
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int k = 0; k < K; k++) {
                    float o[V];
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        const float xf = sml_cv(r[i][k], j);
                        o[j] = sml_fwd_out(xf, m[i], s[i], LOG);
                    }
                    sml_cst<T, V>(out + off[i], (int64_t)(k * width + lr) * V, lim[i],
                                  sml_cpack<T, V>(o));
                }
        } else {
            sml_chunk<T, V> ry[R][K], rd[R][K];
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int k = 0; k < K; k++) {
                    const int64_t col = (int64_t)(k * width + lr) * V;
                    ry[i][k] = sml_cld<T, V>(x + off[i], col, lim[i], sml_zero<T>());
                    rd[i][k] = sml_cld<T, V>(dy + off[i], col, lim[i], sml_zero<T>());
                }
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int k = 0; k < K; k++) {
                    const int64_t col = (int64_t)(k * width + lr) * V;
                    sml_cld_fix<T, V>(x + off[i], col, lim[i], ry[i][k]);
                    sml_cld_fix<T, V>(dy + off[i], col, lim[i], rd[i][k]);
                }
            float s[R];
#pragma unroll
            for (int i = 0; i < R; i++) {
                s[i] = 0.0f;
#pragma unroll
                for (int k = 0; k < K; k++) {
                    float t = 0.0f;
#pragma unroll
                    for (int j = 0; j < V; j++)
                        t += sml_bwd_term(sml_cv(ry[i][k], j), sml_cv(rd[i][k], j), LOG);
                    s[i] += t;
                }
            }
#pragma unroll
            for (int i = 0; i < R; i++) {
                s[i] = sml_warp_sum(s[i], width);
                if (!isfinite(s[i])) odd[threadIdx.x >> 5] = 1; /* lanes write the same value */
            }
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int k = 0; k < K; k++) {
                    float o[V];
#pragma unroll
                    for (int j = 0; j < V; j++)
                        o[j] = sml_bwd_out(sml_cv(ry[i][k], j), sml_cv(rd[i][k], j), s[i], LOG);
                    sml_cst<T, V>(out + off[i], (int64_t)(k * width + lr) * V, lim[i],
                                  sml_cpack<T, V>(o));
                }
        }
    }
    /* The sum's class (common.cuh), in a second walk over the warp's rows, taken only when one
     * of them had a non-finite sum: each row's terms are read again, and a row with an infinite
     * or NaN term is written again with its class. Here, after the loop, and not beside each
     * row's stores: any code there, even a branch that stores one value, kept state live
     * through the stores and cost the 16-bit variants 12 more registers. A row rewritten with
     * the sum it already had gets the same bits. */
    if (BWD) __syncwarp(); /* every lane's flag and stores land before the flag is read */
    if (BWD && odd[threadIdx.x >> 5]) {
        /* The walk's indices read afresh (sml_fresh_ids): derived from the loop's, they were
         * kept live through it, 7 more registers in the 16-bit variants. */
        unsigned t, b;
        sml_fresh_ids(t, b);
        const int w = 1 << lw, l = (int)(t & 31) & (w - 1), g = (int)(t & 31) >> lw;
        const int64_t first = ((int64_t)b * (WARP_THREADS / 32) + (t >> 5)) * (32 >> lw) * R;
        for (int64_t base = first; base < rows; base += step)
            for (int i = 0; i < R; i++) {
                const int64_t row = base + (int64_t)g * R + i;
                const int n = row < rows ? cols : 0;
                const int64_t o = (row < rows ? row : base) * ld;
                const unsigned c =
                    sml_warp_class(sml_scan_class<T, LOG>(x + o, dy + o, l, n, w), w);
                if (c)
                    sml_bwd_rewrite<T, LOG>(x + o, dy + o, out + o, l, n, w,
                                            sml_class_sum(0.0f, c));
            }
    }
}

template <typename T, int V, bool BWD, bool LOG>
static sml_status warp_go(const sml_problem *p, int K, int R, int width, int sms, int bps) {
    void (*kern)(const T *, const T *, T *, int64_t, int, int64_t, int) = NULL;
    if constexpr (V > 1) {
        switch (K * 8 + R) {
        case 1 * 8 + 1: kern = sml_warp_kernel<T, V, 1, 1, BWD, LOG>; break;
        case 1 * 8 + 2: kern = sml_warp_kernel<T, V, 1, 2, BWD, LOG>; break;
        case 1 * 8 + 4: kern = sml_warp_kernel<T, V, 1, 4, BWD, LOG>; break;
        case 2 * 8 + 1: kern = sml_warp_kernel<T, V, 2, 1, BWD, LOG>; break;
        case 2 * 8 + 2: kern = sml_warp_kernel<T, V, 2, 2, BWD, LOG>; break;
        case 4 * 8 + 1: kern = sml_warp_kernel<T, V, 4, 1, BWD, LOG>; break;
        case 4 * 8 + 2: kern = sml_warp_kernel<T, V, 4, 2, BWD, LOG>; break;
        case 8 * 8 + 1:
            if constexpr (V * 32 * 8 <= WARP_MAX_COLS) kern = sml_warp_kernel<T, V, 8, 1, BWD, LOG>;
            break;
        }
    } else {
        switch (K * 8 + R) {
        case 1 * 8 + 1: kern = sml_warp_kernel<T, 1, 1, 1, BWD, LOG>; break;
        case 4 * 8 + 1: kern = sml_warp_kernel<T, 1, 4, 1, BWD, LOG>; break;
        case 32 * 8 + 1: kern = sml_warp_kernel<T, 1, 32, 1, BWD, LOG>; break;
        }
    }
    if (!kern) return SML_ERR_UNSUPPORTED;
    /* At most 16 blocks per SM (what the thread limit allows), walking the rows: no occupancy
     * query, a runtime call per launch that rows this short cannot hide. A grid of only
     * warp_min_blocks per SM loses wherever more blocks than that fit (16-bit forward at K = 2,
     * 16-bit backward at K = 1; docs/KERNELS.md). */
    if (bps <= 0) bps = SML_SM_THREADS / WARP_THREADS;
    const int64_t rows_per_block = (int64_t)(WARP_THREADS / 32) * (32 / width) * R;
    const int64_t blocks =
        sml_min64((p->rows + rows_per_block - 1) / rows_per_block, (int64_t)sms * bps);
    int lw = 0;
    while ((1 << lw) < width) lw++;
    kern<<<(unsigned)blocks, WARP_THREADS, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, (int)p->cols, p->ld, lw);
    return sml_launch_ok();
}

template <typename T>
static sml_status warp_typed(const sml_problem *p, int V, int K, int R, int width, int sms,
                             int bps) {
    return SML_DISPATCH_VARIANT(T, p, V, warp_go, p, K, R, width, sms, bps);
}

/* fp32 forward rows of 65-128 columns (17-32 vectors) take more than one chunk per lane, so a
 * row spans fewer lanes and each lane has several loads in flight (cuDNN's small-row kernel
 * holds two rows per warp for the same reason). 16-bit rows gain nothing from it, nor do rows
 * of 64 columns or backward, so only fp32 forward. K = 2 rather than 4: with the register
 * budgets of warp_min_blocks K = 2 holds 16 blocks per SM where K = 4 holds 8, and is faster
 * (docs/KERNELS.md, "Measurements behind the design notes"). */
#define WARP_FWD_NARROW_K 2
#define WARP_FWD_NARROW(p, V, chunks) \
    (!sml_op_is_backward((p)->op) && (V) == 4 && (p)->cols > 64 && (chunks) <= 32)

extern "C" sml_status sml_warp_run(sml_handle *h, const sml_problem *p, int K, int R,
                                   int blocks_per_sm) {
    if (p->cols > WARP_MAX_COLS) return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    int width, kmin;
    if (chunks <= 32) {
        width = sml_pow2_ceil(chunks);
        kmin = 1;
    } else {
        width = 32;
        const int64_t need = (chunks + 31) / 32;
        if (V > 1)
            kmin = need <= 1 ? 1 : need <= 2 ? 2 : need <= 4 ? 4 : 8;
        else
            kmin = need <= 4 ? 4 : 32;
    }
    if (K <= 0) K = WARP_FWD_NARROW(p, V, chunks) ? WARP_FWD_NARROW_K : kmin;
    if (K < kmin) return SML_ERR_UNSUPPORTED;
    /* More chunks per lane than the row needs: fewer lanes per row, more rows per warp. */
    if (K > kmin) width = (int)sml_min64(width, sml_pow2_ceil((chunks + K - 1) / K));
    if (R <= 0) R = 1;
    return SML_DISPATCH_DTYPE(p->dtype, warp_typed, p, V, K, R, width, sms, blocks_per_sm);
}

extern "C" sml_status sml_launch_warp(sml_handle *h, const sml_problem *p) {
    return sml_warp_run(h, p, 0, 0, 0);
}
