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

#include <type_traits>

#include "core/internal.h"
#include "kernels/int_math.h"
#include "kernels/vector_width.h"
#include "softmax_lab.h"

#define SML_LOG2E 1.4426950408889634f

/* ---- dtype conversion ------------------------------------------------------------------ */

static __device__ __forceinline__ float sml_f(float v) { return v; }
static __device__ __forceinline__ float sml_f(__half v) { return __half2float(v); }
static __device__ __forceinline__ float sml_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T sml_from_f(float v);
template <>
__device__ __forceinline__ float sml_from_f<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ __half sml_from_f<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 sml_from_f<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

/* 2^a by the hardware approximation, results below FLT_MIN flushed to zero (NUMERICS.md
 * 4.1 allows it; exp2f adds a compare and two multiplies per call to keep subnormal
 * results, a third of the per-element instructions of a 16-bit row). exp2(-inf) = 0,
 * exp2(+inf) = inf, NaN stays NaN. */
static __device__ __forceinline__ float sml_exp2(float a) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}

/* ---- chunks: V elements moved as one access of V * sizeof(T) bytes -------------------- */

/* A 16-byte chunk is kept as four 32-bit words and its elements are read out of the words at
 * their use (fp16: a half-select of the register, bf16: a shift or mask), never held as
 * separate 16-bit values: when the partial-chunk fix-up wrote single 16-bit elements, the
 * compiler gave every element its own register, doubled the register footprint of a row
 * and cut the resident blocks per SM in half (block, online: 1 instead of 2). V == 1 (the
 * scalar path for misaligned rows) holds one element. */
template <typename T, int V>
struct alignas(16) sml_chunk {
    static_assert(sizeof(T) * V == 16, "vectors are 16 bytes");
    unsigned int w[4];
};
template <typename T>
struct sml_chunk<T, 1> {
    T v[1];
};

template <typename T>
__device__ __forceinline__ unsigned int sml_bits(T v) {
    if constexpr (sizeof(T) == 4) {
        unsigned int b;
        memcpy(&b, &v, 4);
        return b;
    } else {
        unsigned short b;
        memcpy(&b, &v, 2);
        return b;
    }
}
template <typename T>
__device__ __forceinline__ T sml_from_bits(unsigned int b) {
    T v;
    if constexpr (sizeof(T) == 4) {
        memcpy(&v, &b, 4);
    } else {
        const unsigned short h = (unsigned short)b;
        memcpy(&v, &h, 2);
    }
    return v;
}
/* A word holding `pad` in every element. */
template <typename T>
__device__ __forceinline__ unsigned int sml_pad_word(T pad) {
    return sizeof(T) == 4 ? sml_bits(pad) : sml_bits(pad) * 0x10001u;
}

/* Element j (a compile-time constant after unrolling) of a chunk, as fp32. */
template <typename T, int V>
__device__ __forceinline__ float sml_cv(const sml_chunk<T, V> &r, int j) {
    if constexpr (V == 1) {
        return sml_f(r.v[0]);
    } else if constexpr (sizeof(T) == 4) {
        return __uint_as_float(r.w[j]);
    } else if constexpr (std::is_same<T, __half>::value) {
        __half2 h;
        memcpy(&h, &r.w[j >> 1], 4);
        return (j & 1) ? __high2float(h) : __low2float(h);
    } else { /* bf16: the upper half of an fp32 */
        const unsigned int w = r.w[j >> 1];
        return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
    }
}

template <typename T>
__device__ __forceinline__ T sml_neg_inf();
template <typename T>
__device__ __forceinline__ T sml_zero();

/* Row accesses, in two steps so that a group of loads issues back to back:
 *   sml_cld     the whole-chunk part: one predicated 16-byte load (pad where the chunk is
 *               not whole), no branch, so the compiler cannot place work that waits on one
 *               load between it and the next (it did: with a branch per chunk, the 16-bit
 *               unpack of chunk k was scheduled before the load of chunk k+1, serialising
 *               the loads, which made bf16 rows slower than fp16; docs/KERNELS.md);
 *   sml_cld_fix afterwards, the one partial chunk at the end of a row, element by element,
 *               assembled into whole words.
 * Nothing outside [row, row + cols) is touched. The launcher guarantees 16-byte alignment
 * when V > 1; V == 1 is a plain guarded load. Loads and stores are volatile asm ordered
 * among themselves ("memory" clobber), so an in-place row is read before it is written.
 * I, the type of col and cols, is int64_t unless the caller names int, as `split` does: its
 * slice-relative indices are 32-bit by construction, and 64-bit compares and index arithmetic
 * cost it carry instructions per chunk (docs/KERNELS.md, `split`). I is never deduced, so a call
 * that mixes int and int64_t arguments converts them instead of failing to compile, and a
 * caller that names int while passing int64_t values narrows them: name int only where the
 * values are known to fit. */
template <typename I>
struct sml_idx {
    typedef I type;
};
template <typename T, int V, typename I = int64_t>
__device__ __forceinline__ sml_chunk<T, V> sml_cld(const T *row, typename sml_idx<I>::type col,
                                                   typename sml_idx<I>::type cols, T pad) {
    sml_chunk<T, V> r;
    if constexpr (V == 1) {
        r.v[0] = col < cols ? row[col] : pad;
    } else {
        const unsigned int p = sml_pad_word(pad);
        unsigned int w0 = p, w1 = p, w2 = p, w3 = p;
        const int full = col + V <= cols;
        asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\t@q ld.global.v4.u32 {%0, %1, "
                     "%2, %3}, [%4];\n\t}"
                     : "+r"(w0), "+r"(w1), "+r"(w2), "+r"(w3)
                     : "l"(row + col), "r"(full)
                     : "memory");
        r.w[0] = w0;
        r.w[1] = w1;
        r.w[2] = w2;
        r.w[3] = w3;
    }
    return r;
}
template <typename T, int V, typename I = int64_t>
__device__ __forceinline__ void sml_cld_fix(const T *row, typename sml_idx<I>::type col,
                                            typename sml_idx<I>::type cols, sml_chunk<T, V> &r) {
    if constexpr (V > 1) {
        if (col < cols && col + V > cols) {
            constexpr int E = 4 / sizeof(T); /* elements per word */
#pragma unroll
            for (int q = 0; q < 4; q++) {
                unsigned int w = r.w[q]; /* pad */
#pragma unroll
                for (int e = 0; e < E; e++) {
                    const int j = q * E + e;
                    if (col + j < cols) {
                        const unsigned int sh = 16u * (unsigned)e * (E - 1),
                                           mask = E == 1 ? 0xffffffffu : 0xffffu << sh;
                        w = (w & ~mask) | (sml_bits(row[col + j]) << sh);
                    }
                }
                r.w[q] = w;
            }
        }
    }
}

/* A whole 16-byte chunk loaded or stored with no bound and no predicate, for code that has
 * shown every chunk it touches whole (split's fused forward loop, block's backward rows that
 * fill the block). Volatile asm with a "memory" clobber, ordered like sml_cld and sml_cst.
 * STREAM: an evict-first store, as sml_cst's (split's fused loop wants L2 to keep the
 * uncached tail for its second read). */
template <typename T, int V>
__device__ __forceinline__ sml_chunk<T, V> sml_ld_whole(const T *p) {
    static_assert(V > 1, "16-byte chunks only");
    sml_chunk<T, V> r;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
                 : "l"(p)
                 : "memory");
    return r;
}
template <typename T, int V, bool STREAM = false>
__device__ __forceinline__ void sml_st_whole(T *p, const sml_chunk<T, V> &r) {
    static_assert(V > 1, "16-byte chunks only");
    if (STREAM)
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(r.w[0]),
                     "r"(r.w[1]), "r"(r.w[2]), "r"(r.w[3])
                     : "memory");
    else
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(r.w[0]), "r"(r.w[1]),
                     "r"(r.w[2]), "r"(r.w[3])
                     : "memory");
}

/* Store the valid part of a chunk: the whole-chunk store predicated, then (rare) the partial
 * chunk element by element. STREAM: evict-first (st.global.cs), for kernels that want L2 to
 * keep their input for a second read rather than their output. */
template <typename T, int V, bool STREAM = false, typename I = int64_t>
__device__ __forceinline__ void sml_cst(T *row, typename sml_idx<I>::type col,
                                        typename sml_idx<I>::type cols, const sml_chunk<T, V> &r) {
    if constexpr (V == 1) {
        if (col < cols) row[col] = r.v[0];
    } else {
        const int full = col + V <= cols;
        if (STREAM)
            asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\t@q st.global.cs.v4.u32 "
                         "[%4], {%0, %1, %2, %3};\n\t}" ::"r"(r.w[0]),
                         "r"(r.w[1]), "r"(r.w[2]), "r"(r.w[3]), "l"(row + col), "r"(full)
                         : "memory");
        else
            asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\t@q st.global.v4.u32 [%4], "
                         "{%0, %1, %2, %3};\n\t}" ::"r"(r.w[0]),
                         "r"(r.w[1]), "r"(r.w[2]), "r"(r.w[3]), "l"(row + col), "r"(full)
                         : "memory");
        if (col < cols && col + V > cols) {
            constexpr int E = 4 / sizeof(T);
#pragma unroll
            for (int j = 0; j < V; j++)
                if (col + j < cols)
                    row[col + j] =
                        sml_from_bits<T>(r.w[j / E] >> (16u * (unsigned)(j % E) * (E - 1)));
        }
    }
}

template <typename T>
__device__ __forceinline__ T sml_neg_inf() {
    return sml_from_f<T>(-INFINITY);
}
template <typename T>
__device__ __forceinline__ T sml_zero() {
    return sml_from_f<T>(0.0f);
}

/* ---- reductions ------------------------------------------------------------------------ */

/* Butterfly over groups of `width` lanes (a power of two <= 32): every lane of a group ends
 * with the same value, since each step combines a pair symmetrically. */
static __device__ __forceinline__ float sml_warp_max(float v, int width) {
    /* All five steps always shuffle, across the whole warp: a group is `width` aligned lanes,
     * so an xor below `width` stays inside it, and only the combine depends on `width`. With
     * a loop bounded by a runtime width the compiler emitted a branch, a divergence check and
     * a lane-clamp computation per step. Same steps in the same order, so the same bits. */
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float t = __shfl_xor_sync(0xffffffffu, v, o);
        if (o < width) v = fmaxf(v, t);
    }
    return v;
}
static __device__ __forceinline__ float sml_warp_sum(float v, int width) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float t = __shfl_xor_sync(0xffffffffu, v, o);
        if (o < width) v += t;
    }
    return v;
}

/* (m, s) represents s * exp(m) with m >= -FLT_MAX; merging two of them. The butterfly
 * merges (a, b) in one lane and (b, a) in its partner, so the result must not depend on the
 * order: with a contracted fma(s, e, s2 * e2) the two lanes rounded differently, threads of
 * one row ended with different sums, and equal logits got outputs one ulp apart (found by
 * the monotonicity property on `online`, H100). Separate rounded products and one
 * commutative add give both lanes the same bits. */
static __device__ __forceinline__ void sml_merge(float &m, float &s, float m2, float s2) {
    float mn = fmaxf(m, m2);
    s = __fadd_rn(__fmul_rn(s, sml_exp2((m - mn) * SML_LOG2E)),
                  __fmul_rn(s2, sml_exp2((m2 - mn) * SML_LOG2E)));
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
    if (lane == 0) {
        red[warp] = m;
        red[32 + warp] = s;
    }
    __syncthreads();
    m = lane < nw ? red[lane] : -FLT_MAX;
    s = lane < nw ? red[32 + lane] : 0.0f;
    sml_warp_merge(m, s, 32);
}

/* Compensated (Kahan) running sum, for threads that add many terms in sequence: the error
 * stays O(1) roundings however long the row. The __f*_rn intrinsics keep the compiler from
 * contracting the correction away. An infinite or NaN total stops the correction so that
 * inf stays inf instead of becoming inf - inf = NaN. */
struct sml_ksum {
    float s, c;
};
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
    return sml_exp2((x - m) * SML_LOG2E);
}
/* Forward output: softmax with r = 1/sum, log-softmax with r = log(sum). */
static __device__ __forceinline__ float sml_fwd_out(float x, float m, float r, int log_op) {
    return log_op ? (x - m) - r : sml_exp_shift(x, m) * r;
}
static __device__ __forceinline__ float sml_fwd_post(float sum, int log_op) {
    return log_op ? logf(sum) : 1.0f / sum;
}
/* Backward: the per-element term of the row sum, and dx given that sum. log_op is a
 * compile-time constant in every production kernel (the op is a template argument), so only
 * the chosen op's values stay live.
 * exp(y) goes through the accurate exp2f, not ex2.approx.ftz: a flushed intermediate is then
 * multiplied by sum(dy), which can lift the error far above the FLT_MIN floor the contract
 * grants outputs. The property suite found it on every kernel (log_softmax_bwd fp32/bf16,
 * H100, shrunk to 1x2: y = (-94, -0), dy = (0, -1089): exp(-94) = 1.5e-41 flushed to 0,
 * dx_0 = 0 where 1.63e-38 is right). Backward moves 3 tensors per element, so the extra
 * instructions stay hidden under memory time. */
static __device__ __forceinline__ float sml_bwd_term(float y, float dy, int log_op) {
    return log_op ? dy : dy * y;
}
static __device__ __forceinline__ float sml_bwd_out(float y, float dy, float sum, int log_op) {
    return log_op ? dy - exp2f(y * SML_LOG2E) * sum : y * (dy - sum);
}

/* ---- the backward sum's class (docs/NUMERICS.md section 2) ------------------------------
 * The class of a backward sum (NaN, +inf, -inf or finite) is the exact sum's, whatever the
 * order: NaN if a term is NaN or both infinities appear, else the infinity that appears. A
 * plain fp32 sum can lose it: huge finite terms of one sign overflow a partial sum to -inf
 * before it meets a +inf term, and -inf + inf is NaN. Only a sum that comes out non-finite can
 * be wrong (a NaN or infinite term leaves every partial sum it reaches non-finite, so a
 * finite sum had none), so every kernel adds plainly and looks at its terms again only when
 * the row's sum is not finite: the common path pays a compare per row (`warp` and `block`:
 * and a flag in shared memory, docs/KERNELS.md "Shared rules"). A sum that overflowed with
 * finite terms only keeps what the additions gave (section 4.6 accepts any non-finite output
 * in such rows). */
#define SML_CLS_NAN  1u
#define SML_CLS_PINF 2u
#define SML_CLS_NINF 4u
static __device__ __forceinline__ unsigned sml_term_class(float t) {
    return isnan(t)         ? SML_CLS_NAN
           : t == INFINITY  ? SML_CLS_PINF
           : t == -INFINITY ? SML_CLS_NINF
                            : 0u;
}
/* The row's sum given the class bits of all its terms: s itself when no term was special. */
static __device__ __forceinline__ float sml_class_sum(float s, unsigned cls) {
    if ((cls & SML_CLS_NAN) ||
        (cls & (SML_CLS_PINF | SML_CLS_NINF)) == (SML_CLS_PINF | SML_CLS_NINF))
        return NAN;
    if (cls & SML_CLS_PINF) return INFINITY;
    if (cls & SML_CLS_NINF) return -INFINITY;
    return s;
}
/* The class bits of one chunk's backward terms (padding is 0 in both tensors: no bits). */
template <typename T, int V, bool LOG>
__device__ __forceinline__ unsigned sml_chunk_class(const sml_chunk<T, V> &y,
                                                    const sml_chunk<T, V> &d) {
    unsigned c = 0;
#pragma unroll
    for (int j = 0; j < V; j++) c |= sml_term_class(sml_bwd_term(sml_cv(y, j), sml_cv(d, j), LOG));
    return c;
}
/* The class bits of the terms of elements from, from + step, ... below n of a row, read from
 * global memory one element at a time (the rare path: no alignment needed). */
template <typename T, bool LOG>
__device__ unsigned sml_scan_class(const T *y, const T *dy, int64_t from, int64_t n, int64_t step) {
    unsigned c = 0;
#pragma unroll 1 /* unrolled, its loads in flight cost registers on the kernels' common path */
    for (int64_t i = from; i < n; i += step)
        c |= sml_term_class(sml_bwd_term(sml_f(y[i]), sml_f(dy[i]), LOG));
    return c;
}
/* A backward row written again, element by element, with the sum `sum` (the rare path of the
 * kernels that hold the row in registers: backward output never overlaps its inputs). */
template <typename T, bool LOG>
__device__ void sml_bwd_rewrite(const T *y, const T *dy, T *dx, int64_t from, int64_t n,
                                int64_t step, float sum) {
#pragma unroll 1
    for (int64_t i = from; i < n; i += step)
        dx[i] = sml_from_f<T>(sml_bwd_out(sml_f(y[i]), sml_f(dy[i]), sum, LOG));
}
/* threadIdx.x and blockIdx.x read again from their special registers (volatile, so the
 * compiler cannot reuse an earlier value): for a rare path after a loop, whose indices, if
 * derived from the loop's, would stay live in registers through the whole loop. */
static __device__ __forceinline__ void sml_fresh_ids(unsigned &tid, unsigned &bid) {
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(bid));
}
/* OR of the class bits over a group of `width` lanes (every lane of the warp must call it), or
 * over the block (a barrier: only where the whole block takes the branch, as it does on a sum
 * every thread holds). */
static __device__ __forceinline__ unsigned sml_warp_class(unsigned c, int width) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned t = __shfl_xor_sync(0xffffffffu, c, o);
        if (o < width) c |= t;
    }
    return c;
}
static __device__ __forceinline__ unsigned sml_block_class(unsigned c) {
    return (__syncthreads_or(c & SML_CLS_NAN) ? SML_CLS_NAN : 0u) |
           (__syncthreads_or(c & SML_CLS_PINF) ? SML_CLS_PINF : 0u) |
           (__syncthreads_or(c & SML_CLS_NINF) ? SML_CLS_NINF : 0u);
}

/* V fp32 values to one chunk of T; 16-bit pairs convert with one instruction (each value
 * still rounded to nearest even on its own) straight into a word. */
template <typename T, int V>
__device__ __forceinline__ sml_chunk<T, V> sml_cpack(const float *f) {
    sml_chunk<T, V> r;
    if constexpr (V == 1) {
        r.v[0] = sml_from_f<T>(f[0]);
    } else if constexpr (sizeof(T) == 4) {
#pragma unroll
        for (int q = 0; q < 4; q++) r.w[q] = __float_as_uint(f[q]);
    } else {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            if constexpr (std::is_same<T, __half>::value) {
                const __half2 h = __floats2half2_rn(f[2 * q], f[2 * q + 1]);
                memcpy(&r.w[q], &h, 4);
            } else {
                const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * q], f[2 * q + 1]);
                memcpy(&r.w[q], &h, 4);
            }
        }
    }
    return r;
}

/* ---- asynchronous copies into shared memory (coop, split) -------------------------------- */

/* One whole 16-byte chunk from global to shared memory, asynchronously (cp.async: no
 * registers). The caller commits the thread's copies as a group and waits for groups. */
static __device__ __forceinline__ void sml_cp16(void *dst, const void *src) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
static __device__ __forceinline__ void sml_cp_commit(void) {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
/* Wait until at most n (0..3) of this thread's copy groups are pending; the count is an
 * immediate of the instruction. */
static __device__ __forceinline__ void sml_cp_wait(int n) {
    switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    }
}

/* Slot i of a slice (x, and dy backward; nval valid elements from xs on) into shared memory:
 * a whole chunk by sml_cp16, the row's partial last chunk element by element (sml_cld /
 * sml_cld_fix) and stored by the thread, padded as every row end is. Not a cp.async with a
 * short source size: compute-sanitizer counts the whole 16 bytes of such a copy as read, and
 * flagged the bytes past the row (memcheck at the end of an allocation, initcheck in the
 * stride padding). */
template <typename T, int V, bool BWD>
__device__ __forceinline__ void sml_slot_async(const T *xs, const T *ds, int i, int nval,
                                               sml_chunk<T, V> *sx, sml_chunk<T, V> *sd) {
    if constexpr (V > 1) {
        if ((i + 1) * V <= nval) {
            sml_cp16(&sx[i], xs + (int64_t)i * V);
            if (BWD) sml_cp16(&sd[i], ds + (int64_t)i * V);
        } else {
            const T pad = BWD ? sml_zero<T>() : sml_neg_inf<T>();
            sml_chunk<T, V> a = sml_cld<T, V>(xs, (int64_t)i * V, nval, pad);
            sml_cld_fix<T, V>(xs, (int64_t)i * V, nval, a);
            sx[i] = a;
            if (BWD) {
                sml_chunk<T, V> b = sml_cld<T, V>(ds, (int64_t)i * V, nval, pad);
                sml_cld_fix<T, V>(ds, (int64_t)i * V, nval, b);
                sd[i] = b;
            }
        }
    } else {
        sx[i].v[0] = xs[i];
        if (BWD) sd[i].v[0] = ds[i];
    }
}

/* ---- tiles of the two-pass kernels (online, split) ------------------------------------- */

/* One tile of U chunks (per tensor) into the running statistics of a row (online, split):
 * the online (max, compensated sum) forward, the compensated sum of dy * y (or dy) backward. */
template <typename T, int V, int U, bool BWD, bool LOG>
__device__ __forceinline__ void sml_tile_acc(const sml_chunk<T, V> *a, const sml_chunk<T, V> *b,
                                             float &m, sml_ksum &acc) {
    /* Each sum starts from its first term, not from 0.0f, which saves an add per chunk
     * (softmax_bwd: 0 + dy * y was an fma, now a mul, so one add per tile). The bits are the
     * same: starting from 0.0f only turns a sum of all -0 terms (dy, or dy * y) into +0, and
     * sml_kadd gives the same bits for -0 and +0 unless its sum is -0, which it never is (it
     * starts at +0, an exact cancellation rounds to +0, and it is only scaled by factors >= 0).
     * Forward terms are never -0. */
    float t;
    if (!BWD) {
        float cm = -FLT_MAX;
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int j = 0; j < V; j++) cm = fmaxf(cm, sml_cv(a[u], j));
        if (cm > m) {
            sml_kscale(acc, sml_exp2((m - cm) * SML_LOG2E));
            m = cm;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            float tu = sml_exp_shift(sml_cv(a[u], 0), m);
#pragma unroll
            for (int j = 1; j < V; j++) tu += sml_exp_shift(sml_cv(a[u], j), m);
            t = u == 0 ? tu : t + tu;
        }
    } else {
#pragma unroll
        for (int u = 0; u < U; u++) {
            float tu = sml_bwd_term(sml_cv(a[u], 0), sml_cv(b[u], 0), LOG);
#pragma unroll
            for (int j = 1; j < V; j++) tu += sml_bwd_term(sml_cv(a[u], j), sml_cv(b[u], j), LOG);
            t = u == 0 ? tu : t + tu;
        }
    }
    sml_kadd(acc, t);
}

/* One output chunk from its input chunk(s) and the row statistics (online, split). */
template <typename T, int V, bool BWD, bool LOG>
__device__ __forceinline__ sml_chunk<T, V>
sml_chunk_out(const sml_chunk<T, V> &a, const sml_chunk<T, V> &b, float M, float post) {
    float o[V];
#pragma unroll
    for (int j = 0; j < V; j++)
        o[j] = BWD ? sml_bwd_out(sml_cv(a, j), sml_cv(b, j), post, LOG)
                   : sml_fwd_out(sml_cv(a, j), M, post, LOG);
    return sml_cpack<T, V>(o);
}

/* ---- host side ------------------------------------------------------------------------- */

static inline sml_status sml_cuda_ok(cudaError_t e) {
    if (e == cudaSuccess) return SML_OK;
    return e == cudaErrorMemoryAllocation ? SML_ERR_OUT_OF_MEMORY : SML_ERR_CUDA;
}

/* After every launch: a bad configuration shows up here, not at the next sync. */
static inline sml_status sml_launch_ok(void) { return sml_cuda_ok(cudaGetLastError()); }

/* The current device's SM count, from the handle's facts (src/core/internal.h). */
static inline sml_status sml_device_sms(sml_handle *h, int *sms) {
    sml_gpu_facts g;
    const sml_status s = sml_gpu_facts_get(h, &g);
    *sms = g.sms;
    return s;
}

/* Run GO<T, W, BWD, LOG>(args...), the kernel variant for a problem p of dtype T whose rows
 * take vectors of v elements: W = 16 bytes of T where v is that, else 1 (scalar loads); BWD
 * and LOG from p's op. */
#define SML_LOG_OP(op) ((op) == SML_LOG_SOFTMAX || (op) == SML_LOG_SOFTMAX_BWD)
#define SML_DISPATCH_VARIANT(T, p, v, GO, ...)                                                     \
    ((v) == (int)(16 / sizeof(T))                                                                  \
         ? (sml_op_is_backward((p)->op)                                                            \
                ? (SML_LOG_OP((p)->op) ? GO<T, (int)(16 / sizeof(T)), true, true>(__VA_ARGS__)     \
                                       : GO<T, (int)(16 / sizeof(T)), true, false>(__VA_ARGS__))   \
                : (SML_LOG_OP((p)->op) ? GO<T, (int)(16 / sizeof(T)), false, true>(__VA_ARGS__)    \
                                       : GO<T, (int)(16 / sizeof(T)), false, false>(__VA_ARGS__))) \
         : (sml_op_is_backward((p)->op)                                                            \
                ? (SML_LOG_OP((p)->op) ? GO<T, 1, true, true>(__VA_ARGS__)                         \
                                       : GO<T, 1, true, false>(__VA_ARGS__))                       \
                : (SML_LOG_OP((p)->op) ? GO<T, 1, false, true>(__VA_ARGS__)                        \
                                       : GO<T, 1, false, false>(__VA_ARGS__))))

/* Run FN<T>(args...) for the problem's dtype. */
#define SML_DISPATCH_DTYPE(dt, FN, ...)          \
    ((dt) == SML_F32   ? FN<float>(__VA_ARGS__)  \
     : (dt) == SML_F16 ? FN<__half>(__VA_ARGS__) \
                       : FN<__nv_bfloat16>(__VA_ARGS__))

#endif
