/* block_mutants.cu: the three mutants copied from the forward half of kernels/softmax_block.cu
 * (fp32; one row per block, K chunks per thread, launched as launch_plan.cuh's block plan):
 *   gpu_no_barrier  the block reductions lack the barrier between the per-warp partials'
 *                   writes to shared memory and the reads that combine them: a warp that gets
 *                   there first reads slots holding the previous row's (or a previous kernel's)
 *                   partials, so warps of one block disagree on the row's max and sum. Needs two
 *                   or more warps per block (cols > 128) and real timing skew between warps, so
 *                   it may take many rows; the mutation test falls back to a targeted shape
 *                   (1024 rows x 16384 columns, 1024 threads per block). Killers: agreement,
 *                   determinism or row_independence; compute-sanitizer racecheck reports the
 *                   hazard on any multi-warp launch.
 *   gpu_grid65535   the launcher sizes the grid as one block per row capped at 65,535 blocks
 *                   (the limit of a grid's y and z dimensions, wrongly applied) while the
 *                   kernel, without the grid-stride loop, does one row per block: rows from
 *                   65,536 on are never computed and keep the poison the harness put there. The
 *                   standard generators draw more than 65,535 rows only in rare big cases, so the
 *                   mutation test falls back to a targeted shape (65,537 rows x 3 columns).
 *                   Killer: agreement (NaN output).
 *   gpu_atomic_sum  the block sum adds the per-warp partials with atomicAdd into one shared
 *                   float: float addition is not associative, so with three or more warps the
 *                   sum's last bits depend on which warp arrives first, and the same input gives
 *                   other output bits from run to run. The result stays within the contract;
 *                   only the bitwise properties see it. Killers: determinism or row_independence
 *                   (reversed rows must give identical bits), on rows of more than 256 columns.
 * Every planted line is marked MUTANT with the mutant's name; everything else is the
 * production code. */
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutant.cuh"

/* sml_block_max / sml_block_sum of kernels/common.cuh (`red` is 32 floats of shared memory;
 * callers alternate two buffers), with gpu_no_barrier's switch. */
template <mut_id M>
static __device__ __forceinline__ float block_max(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = sml_warp_max(v, 32);
    if (lane == 0) red[warp] = v;
    /* MUTANT gpu_no_barrier: no __syncthreads() here: a warp may read slots other warps have not written */
    if constexpr (M != GPU_NO_BARRIER) __syncthreads();
    v = lane < nw ? red[lane] : -FLT_MAX;
    return sml_warp_max(v, 32);
}
template <mut_id M>
static __device__ __forceinline__ float block_sum(float v, float *red) {
    v = sml_warp_sum(v, 32);
    if constexpr (M == GPU_ATOMIC_SUM) {
        /* The partials added by atomics into one shared float: the order of the additions is
         * the order in which warps arrive. */
        if (threadIdx.x == 0) *red = 0.0f;
        __syncthreads();
        /* MUTANT gpu_atomic_sum: arrival order decides the sum's bits */
        if ((threadIdx.x & 31) == 0) atomicAdd(red, v);
        __syncthreads();
        v = *red;
        __syncthreads(); /* the next row zeroes red[0] */
        return v;
    } else {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
        if (lane == 0) red[warp] = v;
        /* MUTANT gpu_no_barrier: no __syncthreads() here either (the same helper, twice) */
        if constexpr (M != GPU_NO_BARRIER) __syncthreads();
        v = lane < nw ? red[lane] : 0.0f;
        return sml_warp_sum(v, 32);
    }
}

/* One row, by the whole block. */
template <mut_id M, typename T, int V, int K>
static __device__ __forceinline__ void block_row(const T *x, T *out, int64_t row, int cols,
                                                 int64_t ld, int log_op, float (*red)[32]) {
    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t off = row * ld;
    mut_vec<T, V> r[K];
#pragma unroll
    for (int k = 0; k < K; k++)
        r[k] = mut_ld<T, V, M>(x + off, (int64_t)(k * nt + tid) * V, cols, sml_neg_inf<T>());
    float m = -FLT_MAX;
#pragma unroll
    for (int k = 0; k < K; k++)
#pragma unroll
        for (int j = 0; j < V; j++) m = fmaxf(m, sml_f(r[k].v[j]));
    m = block_max<M>(m, red[0]);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; k++) {
        float t = 0.0f;
#pragma unroll
        for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
        s += t;
    }
    s = block_sum<M>(s, red[1]);
    const float post = sml_fwd_post(s, log_op);
#pragma unroll
    for (int k = 0; k < K; k++) {
        mut_vec<T, V> o;
#pragma unroll
        for (int j = 0; j < V; j++)
            o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(r[k].v[j]), m, post, log_op));
        mut_st<T, V, M>(out + off, (int64_t)(k * nt + tid) * V, cols, o);
    }
}

template <mut_id M, typename T, int V, int K>
__global__ void __launch_bounds__(BLOCK_MAX_THREADS)
    block_fwd(const T *x, T *out, int64_t rows, int cols, int64_t ld, int log_op) {
    __shared__ float red[2][32];
    if constexpr (M == GPU_GRID65535) {
        /* MUTANT gpu_grid65535 (with the launcher's grid): one row per block, no grid-stride loop */
        if (blockIdx.x >= rows) return;
        block_row<M, T, V, K>(x, out, blockIdx.x, cols, ld, log_op, red);
    } else {
        for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
            block_row<M, T, V, K>(x, out, row, cols, ld, log_op, red);
    }
}

template <mut_id M, typename T, int V>
static sml_status go(const sml_problem *p, int K, int threads, int blocks) {
    void (*kern)(const T *, T *, int64_t, int, int64_t, int) = NULL;
    MUT_PICK_BLOCK(kern, block_fwd, M, T, V, K);
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, threads, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (T *)p->out, p->rows, (int)p->cols, p->ld, p->op == SML_LOG_SOFTMAX);
    return sml_launch_ok();
}

template <mut_id M, typename T>
static sml_status typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    mut_block_plan b;
    const sml_status s = mut_plan_block(p, V, BLOCK_PREFERRED_THREADS, BLOCK_MAX_THREADS, &b);
    if (s != SML_OK) return s;
    /* MUTANT gpu_grid65535: grid capped at 65,535 */
    const int64_t blocks = M == GPU_GRID65535
                               ? sml_min64(p->rows, 65535)
                               : sml_min64(p->rows, (int64_t)sms * (2048 / b.threads) * 2);
    if (V == 16 / (int)sizeof(T)) return go<M, T, 16 / sizeof(T)>(p, b.K, b.threads, (int)blocks);
    return go<M, T, 1>(p, b.K, b.threads, (int)blocks);
}

template <mut_id M>
static sml_status launch(sml_handle *h, const sml_problem *p) {
    if (p->cols > BLOCK_MAX_COLS || p->dtype != SML_F32 || sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<M, float>(p, sms);
}

MUT_LAUNCHER(no_barrier, GPU_NO_BARRIER)
MUT_LAUNCHER(grid65535, GPU_GRID65535)
MUT_LAUNCHER(atomic_sum, GPU_ATOMIC_SUM)
