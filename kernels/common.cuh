/* common.cuh: what every kernel file shares: dtype conversion, 16-byte (or scalar) row
 * loads and stores that never touch a byte outside [row, row + cols), warp and block
 * reductions, the (max, sum) merge of the online form, a compensated sum, the four ops'
 * epilogues, and the host-side checks a launcher needs.
 *
 * Special values fall out of one rule instead of branches: every running max starts at
 * -FLT_MAX (not -inf), so `x - max` is never (-inf) - (-inf). A -inf logit then contributes
 * exp(-inf) = 0; a row of only -inf keeps max = -FLT_MAX and sum = 0, and the epilogue's
 * exp(-inf) * (1/0) = 0 * inf (or -inf - log 0 = -inf + inf) gives NaN, as PyTorch does; a
 * +inf logit makes max = +inf and exp(inf - inf) = NaN poisons the sum; a NaN logit poisons
 * the sum directly (fmaxf ignores it, the sum does not). The online merge therefore needs no
 * special case either: its rescale factors are exp(m_old - m_new) of finite maxima.
 *
 * Padding lanes (past cols) load -inf for a forward input and 0 for backward inputs, so they
 * drop out of the max and add an exact 0 to every sum. */
#ifndef SML_KERNELS_COMMON_CUH
#define SML_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "softmax_lab.h"

#define SML_LOG2E 1.4426950408889634f

/* ---- dtype conversion ------------------------------------------------------------------ */

static __device__ __forceinline__ float sml_f(float v) { return v; }
static __device__ __forceinline__ float sml_f(__half v) { return __half2float(v); }
static __device__ __forceinline__ float sml_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T sml_from_f(float v);
template <> __device__ __forceinline__ float sml_from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half sml_from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 sml_from_f<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

/* ---- vectors: V elements moved as one access of V * sizeof(T) bytes ------------------- */

template <typename T, int V> struct alignas(sizeof(T) * V) sml_vec { T v[V]; };

template <int B> struct sml_word;
template <> struct sml_word<16> { typedef uint4 t; };
template <> struct sml_word<8> { typedef uint2 t; };
template <> struct sml_word<4> { typedef unsigned int t; };
template <> struct sml_word<2> { typedef unsigned short t; };

/* One chunk of V elements starting at column `col` of a row with `cols` valid columns.
 * A whole chunk is one aligned load (the launcher guarantees alignment when V > 1); a
 * partial or absent chunk is read element by element and padded with `pad`. */
template <typename T, int V>
__device__ __forceinline__ sml_vec<T, V> sml_ld(const T *row, int64_t col, int64_t cols, T pad) {
    sml_vec<T, V> r;
    if (col + V <= cols) {
        typedef typename sml_word<sizeof(T) * V>::t W;
        W w = *reinterpret_cast<const W *>(row + col);
        memcpy(&r, &w, sizeof w);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) r.v[j] = (col + j < cols) ? row[col + j] : pad;
    }
    return r;
}

/* Store the valid part of a chunk. STREAM: evict-first (st.global.cs), for kernels that
 * want L2 to keep their input for a second read rather than their output. */
template <typename T, int V, bool STREAM = false>
__device__ __forceinline__ void sml_st(T *row, int64_t col, int64_t cols, const sml_vec<T, V> &r) {
    if (col + V <= cols) {
        typedef typename sml_word<sizeof(T) * V>::t W;
        W w;
        memcpy(&w, &r, sizeof w);
        if (STREAM) __stcs(reinterpret_cast<W *>(row + col), w);
        else *reinterpret_cast<W *>(row + col) = w;
    } else {
#pragma unroll
        for (int j = 0; j < V; j++)
            if (col + j < cols) row[col + j] = r.v[j];
    }
}

template <typename T> __device__ __forceinline__ T sml_neg_inf() { return sml_from_f<T>(-INFINITY); }
template <typename T> __device__ __forceinline__ T sml_zero() { return sml_from_f<T>(0.0f); }

/* ---- reductions ------------------------------------------------------------------------ */

/* Butterfly over groups of `width` lanes (a power of two <= 32): every lane of a group ends
 * with the same value, since each step combines a pair symmetrically. */
static __device__ __forceinline__ float sml_warp_max(float v, int width) {
    for (int o = width >> 1; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, width));
    return v;
}
static __device__ __forceinline__ float sml_warp_sum(float v, int width) {
    for (int o = width >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, width);
    return v;
}

/* (m, s) represents s * exp(m) with m >= -FLT_MAX; merging two of them. */
static __device__ __forceinline__ void sml_merge(float &m, float &s, float m2, float s2) {
    float mn = fmaxf(m, m2);
    s = s * exp2f((m - mn) * SML_LOG2E) + s2 * exp2f((m2 - mn) * SML_LOG2E);
    m = mn;
}
static __device__ __forceinline__ void sml_warp_merge(float &m, float &s, int width) {
    for (int o = width >> 1; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o, width);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o, width);
        sml_merge(m, s, m2, s2);
    }
}

/* Block-wide reductions; every thread gets the result. `red` is 32 floats of shared memory
 * (64 for the merge) that no other reduction may use until the next reduction on a different
 * buffer has passed its barrier: callers alternate two buffers, which saves a barrier. Every
 * warp reduces the per-warp partials in the same order, so all threads agree bit for bit. */
static __device__ __forceinline__ float sml_block_max(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = sml_warp_max(v, 32);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : -FLT_MAX;
    return sml_warp_max(v, 32);
}
static __device__ __forceinline__ float sml_block_sum(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = sml_warp_sum(v, 32);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : 0.0f;
    return sml_warp_sum(v, 32);
}
static __device__ __forceinline__ void sml_block_merge(float &m, float &s, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    sml_warp_merge(m, s, 32);
    if (lane == 0) { red[warp] = m; red[32 + warp] = s; }
    __syncthreads();
    m = lane < nw ? red[lane] : -FLT_MAX;
    s = lane < nw ? red[32 + lane] : 0.0f;
    sml_warp_merge(m, s, 32);
}

/* Compensated (Kahan) running sum, for threads that add many terms in sequence: the error
 * stays O(1) roundings however long the row. The __f*_rn intrinsics keep the compiler from
 * contracting the correction away. An infinite or NaN total stops the correction so that
 * inf stays inf instead of becoming inf - inf = NaN. */
struct sml_ksum { float s, c; };
static __device__ __forceinline__ void sml_kadd(sml_ksum &k, float v) {
    float y = __fsub_rn(v, k.c);
    float t = __fadd_rn(k.s, y);
    float c = __fsub_rn(__fsub_rn(t, k.s), y);
    k.c = fabsf(t) < INFINITY ? c : 0.0f;
    k.s = t;
}
static __device__ __forceinline__ void sml_kscale(sml_ksum &k, float f) {
    k.s = __fmul_rn(k.s, f);
    k.c = __fmul_rn(k.c, f);
}
static __device__ __forceinline__ float sml_kval(const sml_ksum &k) { return __fsub_rn(k.s, k.c); }

/* ---- the four ops' element math -------------------------------------------------------- */

/* exp(x - m) through exp2 with log2(e) folded into the scale of the difference. */
static __device__ __forceinline__ float sml_exp_shift(float x, float m) {
    return exp2f((x - m) * SML_LOG2E);
}
/* Forward output: softmax with r = 1/sum, log-softmax with r = log(sum). */
static __device__ __forceinline__ float sml_fwd_out(float x, float m, float r, int log_op) {
    return log_op ? (x - m) - r : sml_exp_shift(x, m) * r;
}
static __device__ __forceinline__ float sml_fwd_post(float sum, int log_op) {
    return log_op ? logf(sum) : 1.0f / sum;
}
/* Backward: the per-element term of the row sum, and dx given that sum. */
static __device__ __forceinline__ float sml_bwd_term(float y, float dy, int log_op) {
    return log_op ? dy : dy * y;
}
static __device__ __forceinline__ float sml_bwd_out(float y, float dy, float sum, int log_op) {
    return log_op ? dy - exp2f(y * SML_LOG2E) * sum : y * (dy - sum);
}

/* ---- host side ------------------------------------------------------------------------- */

static inline sml_status sml_cuda_ok(cudaError_t e) {
    if (e == cudaSuccess) return SML_OK;
    return e == cudaErrorMemoryAllocation ? SML_ERR_OUT_OF_MEMORY : SML_ERR_CUDA;
}

/* After every launch: a bad configuration shows up here, not at the next sync. */
static inline sml_status sml_launch_ok(void) { return sml_cuda_ok(cudaGetLastError()); }

/* Elements per 16-byte vector when every pointer of the problem and the row stride allow
 * it, else 1 (scalar loads: misaligned base pointers and odd strides are not errors). */
static inline int sml_vec_elems(const sml_problem *p) {
    size_t esz = sml_dtype_size(p->dtype);
    uintptr_t bits = (uintptr_t)p->x | (uintptr_t)p->out;
    if (sml_op_is_backward(p->op)) bits |= (uintptr_t)p->dy;
    if ((bits & 15u) != 0 || ((uint64_t)p->ld * esz) % 16u != 0) return 1;
    return (int)(16 / esz);
}

static inline sml_status sml_device_sms(int *sms) {
    int dev = 0;
    sml_status s = sml_cuda_ok(cudaGetDevice(&dev));
    if (s != SML_OK) return s;
    return sml_cuda_ok(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
}

static __host__ __device__ __forceinline__ int64_t sml_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static __host__ __device__ __forceinline__ int64_t sml_max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int sml_pow2_ceil(int64_t n) {
    int p = 1;
    while (p < n) p <<= 1;
    return p;
}

/* Run FN<T>(args...) for the problem's dtype. */
#define SML_DISPATCH_DTYPE(dt, FN, ...)                                                     \
    ((dt) == SML_F32   ? FN<float>(__VA_ARGS__)                                             \
     : (dt) == SML_F16 ? FN<__half>(__VA_ARGS__)                                            \
                       : FN<__nv_bfloat16>(__VA_ARGS__))

#endif
