/* warp_mutants.cu: the ten mutants copied from kernels/softmax_warp.cu (one row per group of
 * `width` lanes, K chunks per lane, launched as launch_plan.cuh's warp plan). Forward:
 *   gpu_no_max          no max subtraction: every exponent is exp(x - 0). Mathematically the
 *                       same softmax; in fp32 exp overflows past x ~ 88.7 (inf / inf = NaN),
 *                       underflows below ~ -103 (0 / 0), and even for small logits the rounding
 *                       differs from exp(x - max), so shifted inputs give other bits. Killers:
 *                       shift (bitwise shift invariance) or agreement on exp-threshold logits.
 *   gpu_sum16           (fp16, bf16) the row sum accumulated in the input's 16-bit type: each of
 *                       the up to 32 additions per lane and 5 butterfly steps rounds to the 16-bit
 *                       format, so the sum (and every output) is off by several 16-bit ulps, far
 *                       past the contract's bound. Killer: agreement or row_sum.
 *   gpu_pad_zero        padding lanes (past the row's end) load 0 instead of -inf: each adds
 *                       exp(0 - max) to the sum and can raise the max to 0; rows that fill their
 *                       lanes exactly are still right. Killer: agreement or row_sum.
 *   gpu_offset32        (fp16) the row stride and row offset are 32-bit ints: right while
 *                       rows * ld < 2^31; with ld >= 2^32 the offset wraps to a small positive one
 *                       (the row is read from and written to the wrong place, in bounds), with
 *                       2^31 <= row * ld < 2^32 to a negative one. The standard generators stop
 *                       at 2^22 elements, so the mutation test draws a targeted shape: 2 rows of 8
 *                       columns with ld = 2^32 + 8 (16 GiB of fp16). Killer: agreement.
 *   gpu_vec_tail        the chunk load's partial-chunk loop stops one short: the row's last
 *                       element is taken as padding. Only the 16-byte path has partial chunks, so
 *                       it shows when cols % 4 != 0 with a base and ld that still allow 16-byte
 *                       loads (a padded ld). Killer: agreement.
 *   gpu_past_row        the chunk store writes one element past the end of every row whose last
 *                       chunk is partial or whose lanes reach past it: into the stride padding,
 *                       the next row's first element (racing with its owner), or past the tensor.
 *                       Killers: canaries, or agreement; compute-sanitizer memcheck catches the
 *                       write past the last row of an exactly-sized allocation.
 *   gpu_log_of_softmax  (log-softmax) computed as log(softmax): -inf where softmax underflows
 *                       (x - max below ~ -103 in fp32), lost digits below ~ -87. Killer:
 *                       agreement (an inf mismatch) or special_values, on a wide spread.
 *   gpu_assume_aligned  the launcher picks 16-byte loads when x's base pointer is aligned,
 *                       forgetting the output pointer and the row stride: with ld % 4 != 0,
 *                       row 1's vector loads are misaligned and the kernel faults, a sticky CUDA
 *                       error (the bug sml_vec_elems exists to prevent; it shows that the suite
 *                       turns a faulting kernel into a reported error with a reproducer).
 *                       Killer: agreement, as an error.
 * Backward:
 *   gpu_bwd_no_dot      without the dot term: softmax backward gives y * dy instead of
 *                       y * (dy - sum(dy * y)), log-softmax backward dy instead of
 *                       dy - exp(y) * sum(dy); right only when that sum is 0. Killer: agreement
 *                       or bwd_sum.
 *   gpu_bwd_dot_rows    the dot reduced over the whole warp instead of the row's `width` lanes:
 *                       when one warp holds several rows (cols <= 64 on the 16-byte path, <= 16
 *                       scalar), each row's sum(dy * y) takes in the other rows of its warp too.
 *                       Killers: agreement, bwd_sum or row_independence, on two or more short
 *                       rows.
 * Every planted line is marked MUTANT with the mutant's name; everything else is the
 * production code. */
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutant.cuh"

/* The row stride's type: 64-bit, but 32-bit in gpu_offset32. */
template <mut_id M>
struct warp_ld {
    typedef int64_t t;
};
/* MUTANT gpu_offset32: ld narrowed to int by the launcher, and the row offset with it */
template <>
struct warp_ld<GPU_OFFSET32> {
    typedef int t;
};

/* The padding of a forward load. */
template <typename T, mut_id M>
__device__ __forceinline__ T fwd_pad() {
    if constexpr (M == GPU_PAD_ZERO)
        return sml_zero<T>(); /* MUTANT gpu_pad_zero: padding lanes hold 0, not -inf */
    else
        return sml_neg_inf<T>();
}

template <mut_id M, typename T, int V, int K>
__global__ void __launch_bounds__(WARP_THREADS)
    warp_fwd(const T *x, T *out, int64_t rows, int cols, typename warp_ld<M>::t ld, int width,
             int log_op) {
    typedef typename warp_ld<M>::t LD;
    const int lane = threadIdx.x & 31;
    const int sub = lane / width, lr = lane & (width - 1);
    const int per_warp = 32 / width;
    const int64_t warp0 = (int64_t)blockIdx.x * (WARP_THREADS / 32) + (threadIdx.x >> 5);
    const int64_t step = (int64_t)gridDim.x * (WARP_THREADS / 32) * per_warp;
    for (int64_t base = warp0 * per_warp; base < rows; base += step) {
        const int64_t row = base + sub;
        const int lim = row < rows ? cols : 0;
        const LD off =
            (LD)((row < rows ? row : base) * ld); /* gpu_offset32: truncated to 32 bits */
        mut_vec<T, V> r[K];
#pragma unroll
        for (int k = 0; k < K; k++)
            r[k] = mut_ld<T, V, M>(x + off, (int64_t)(k * width + lr) * V, lim, fwd_pad<T, M>());
        float m = -FLT_MAX;
        if constexpr (M == GPU_NO_MAX) {
            m = 0.0f; /* MUTANT gpu_no_max: no max reduction; exp(x - 0) overflows past 88.7 */
        } else {
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < V; j++) m = fmaxf(m, sml_f(r[k].v[j]));
            m = sml_warp_max(m, width);
        }
        float s = 0.0f;
        if constexpr (M == GPU_SUM16) {
            /* MUTANT gpu_sum16: the sum is kept in T, the 16-bit input type: every addition, in
             * the lane and in the butterfly, rounds to 11 (fp16) or 8 (bf16) significant bits. */
            T s16 = sml_zero<T>();
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < V; j++)
                    s16 = sml_from_f<T>(sml_f(s16) + sml_exp_shift(sml_f(r[k].v[j]), m));
            for (int o = width >> 1; o > 0; o >>= 1)
                s16 =
                    sml_from_f<T>(sml_f(s16) + sml_f(__shfl_xor_sync(0xffffffffu, s16, o, width)));
            s = sml_f(s16);
        } else {
#pragma unroll
            for (int k = 0; k < K; k++) {
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
                s += t;
            }
            s = sml_warp_sum(s, width);
        }
        /* MUTANT gpu_log_of_softmax (with the output below): log(softmax) */
        const float post = M == GPU_LOG_OF_SOFTMAX ? 1.0f / s : sml_fwd_post(s, log_op);
#pragma unroll
        for (int k = 0; k < K; k++) {
            mut_vec<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++) {
                if constexpr (M == GPU_LOG_OF_SOFTMAX)
                    o.v[j] = sml_from_f<T>(log_op ? logf(sml_exp_shift(sml_f(r[k].v[j]), m) * post)
                                                  : sml_exp_shift(sml_f(r[k].v[j]), m) * post);
                else
                    o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(r[k].v[j]), m, post, log_op));
            }
            mut_st<T, V, M>(out + off, (int64_t)(k * width + lr) * V, lim, o);
        }
    }
}

template <mut_id M, typename T, int V, int K>
__global__ void __launch_bounds__(WARP_THREADS)
    warp_bwd(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld, int width,
             int log_op) {
    const int lane = threadIdx.x & 31;
    const int sub = lane / width, lr = lane & (width - 1);
    const int per_warp = 32 / width;
    const int64_t warp0 = (int64_t)blockIdx.x * (WARP_THREADS / 32) + (threadIdx.x >> 5);
    const int64_t step = (int64_t)gridDim.x * (WARP_THREADS / 32) * per_warp;
    for (int64_t base = warp0 * per_warp; base < rows; base += step) {
        const int64_t row = base + sub;
        const int lim = row < rows ? cols : 0;
        const int64_t off = (row < rows ? row : base) * ld;
        mut_vec<T, V> ry[K], rd[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t col = (int64_t)(k * width + lr) * V;
            ry[k] = mut_ld<T, V, M>(x + off, col, lim, sml_zero<T>());
            rd[k] = mut_ld<T, V, M>(dy + off, col, lim, sml_zero<T>());
        }
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; k++) {
            float t = 0.0f;
#pragma unroll
            for (int j = 0; j < V; j++)
                t += sml_bwd_term(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), log_op);
            s += t;
        }
        static_assert(M == GPU_BWD_NO_DOT || M == GPU_BWD_DOT_ROWS, "the backward mutants");
        if constexpr (M == GPU_BWD_NO_DOT)
            s = 0.0f; /* MUTANT gpu_bwd_no_dot: the row's dot term is dropped */
        else /* MUTANT gpu_bwd_dot_rows: the butterfly spans the warp, not the row's `width` lanes */
            s = sml_warp_sum(s, 32);
#pragma unroll
        for (int k = 0; k < K; k++) {
            mut_vec<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++)
                o.v[j] =
                    sml_from_f<T>(sml_bwd_out(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), s, log_op));
            mut_st<T, V, M>(out + off, (int64_t)(k * width + lr) * V, lim, o);
        }
    }
}

static constexpr bool is_bwd(mut_id M) { return M == GPU_BWD_NO_DOT || M == GPU_BWD_DOT_ROWS; }

template <mut_id M, typename T, int V>
static sml_status go(const sml_problem *p, int K, int width, int blocks) {
    const cudaStream_t st = (cudaStream_t)p->stream;
    if constexpr (is_bwd(M)) {
        void (*kern)(const T *, const T *, T *, int64_t, int, int64_t, int, int) = NULL;
        MUT_PICK_WARP(kern, warp_bwd, M, T, V, K);
        if (!kern) return SML_ERR_INTERNAL;
        kern<<<blocks, WARP_THREADS, 0, st>>>((const T *)p->x, (const T *)p->dy, (T *)p->out,
                                              p->rows, (int)p->cols, p->ld, width,
                                              p->op == SML_LOG_SOFTMAX_BWD);
    } else {
        typedef typename warp_ld<M>::t LD;
        void (*kern)(const T *, T *, int64_t, int, LD, int, int) = NULL;
        MUT_PICK_WARP(kern, warp_fwd, M, T, V, K);
        if (!kern) return SML_ERR_INTERNAL;
        kern<<<blocks, WARP_THREADS, 0, st>>>((const T *)p->x, (T *)p->out, p->rows, (int)p->cols,
                                              (LD)p->ld, width, p->op == SML_LOG_SOFTMAX);
    }
    return sml_launch_ok();
}

template <mut_id M, typename T>
static int vec_elems(const sml_problem *p) {
    /* MUTANT gpu_assume_aligned: only x's base is checked; out's base and the row stride ld are not */
    if constexpr (M == GPU_ASSUME_ALIGNED)
        return ((uintptr_t)p->x & 15u) == 0 ? (int)(16 / sizeof(T)) : 1;
    else
        return sml_vec_elems(p);
}

template <mut_id M, typename T>
static sml_status typed(const sml_problem *p, int sms) {
    const int V = vec_elems<M, T>(p);
    const mut_warp_plan w = mut_plan_warp(p, V, sms, WARP_THREADS);
    if (V == 16 / (int)sizeof(T)) return go<M, T, 16 / sizeof(T)>(p, w.K, w.width, w.blocks);
    return go<M, T, 1>(p, w.K, w.width, w.blocks);
}

/* The dtypes a mutant instantiates (mutants.c declares the same) and the ops it takes. */
static constexpr bool takes_dtype(mut_id M, sml_dtype dt) {
    return M == GPU_SUM16      ? dt == SML_F16 || dt == SML_BF16
           : M == GPU_OFFSET32 ? dt == SML_F16
                               : dt == SML_F32;
}
static bool takes_op(mut_id M, sml_op op) {
    return M == GPU_LOG_OF_SOFTMAX ? op == SML_LOG_SOFTMAX : sml_op_is_backward(op) == is_bwd(M);
}

template <mut_id M>
static sml_status launch(sml_handle *h, const sml_problem *p) {
    if (p->cols > WARP_MAX_COLS || !takes_dtype(M, p->dtype) || !takes_op(M, p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    if constexpr (takes_dtype(M, SML_F32))
        if (p->dtype == SML_F32) return typed<M, float>(p, sms);
    if constexpr (takes_dtype(M, SML_F16))
        if (p->dtype == SML_F16) return typed<M, __half>(p, sms);
    if constexpr (takes_dtype(M, SML_BF16))
        if (p->dtype == SML_BF16) return typed<M, __nv_bfloat16>(p, sms);
    return SML_ERR_UNSUPPORTED;
}

MUT_LAUNCHER(no_max, GPU_NO_MAX)
MUT_LAUNCHER(sum16, GPU_SUM16)
MUT_LAUNCHER(pad_zero, GPU_PAD_ZERO)
MUT_LAUNCHER(offset32, GPU_OFFSET32)
MUT_LAUNCHER(vec_tail, GPU_VEC_TAIL)
MUT_LAUNCHER(past_row, GPU_PAST_ROW)
MUT_LAUNCHER(log_of_softmax, GPU_LOG_OF_SOFTMAX)
MUT_LAUNCHER(assume_aligned, GPU_ASSUME_ALIGNED)
MUT_LAUNCHER(bwd_no_dot, GPU_BWD_NO_DOT)
MUT_LAUNCHER(bwd_dot_rows, GPU_BWD_DOT_ROWS)
