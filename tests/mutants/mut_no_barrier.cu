/* mut_no_barrier.cu: mutant 8 of issue 7, `gpu_no_barrier`. A copy of the forward half of
 * kernels/softmax_block.cu (fp32) whose block reductions (copies of common.cuh's) lack the
 * barrier between the per-warp partials' writes to shared memory and the reads that combine
 * them: a warp that gets there first reads slots holding the previous row's (or a previous
 * kernel's) partials, so warps of one block disagree on the row's max and sum. Needs two or
 * more warps per block (cols > 128) and real timing skew between warps, so it may take many
 * rows; the mutation test falls back to a targeted shape (1024 rows x 16384 columns, 1024
 * threads per block). Expected killers: agreement, determinism or row_independence;
 * compute-sanitizer racecheck reports the hazard on any multi-warp launch.
 * The planted lines are marked MUTANT; everything else is the production code. */
#include "kernels/common.cuh"
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutants.h"


/* sml_block_max / sml_block_sum of kernels/common.cuh without the barrier between the
 * per-warp partials' writes and the reads that combine them. */
static __device__ __forceinline__ float mut_block_max(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = sml_warp_max(v, 32);
    if (lane == 0) red[warp] = v;
    /* MUTANT: no __syncthreads() here: a warp may read slots other warps have not written */
    v = lane < nw ? red[lane] : -FLT_MAX;
    return sml_warp_max(v, 32);
}
static __device__ __forceinline__ float mut_block_sum(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = sml_warp_sum(v, 32);
    if (lane == 0) red[warp] = v;
    /* MUTANT: no __syncthreads() here either (the same helper, written once, used twice) */
    v = lane < nw ? red[lane] : 0.0f;
    return sml_warp_sum(v, 32);
}

template <typename T, int V, int K>
__global__ void __launch_bounds__(BLOCK_MAX_THREADS)
    gpu_no_barrier_kernel(const T *x, T *out, int64_t rows, int cols, int64_t ld, int log_op) {
    __shared__ float red[2][32];
    const int nt = blockDim.x, tid = threadIdx.x;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t off = row * ld;
        sml_vec<T, V> r[K];
#pragma unroll
        for (int k = 0; k < K; k++)
            r[k] = sml_ld<T, V>(x + off, (int64_t)(k * nt + tid) * V, cols, sml_neg_inf<T>());
        float m = -FLT_MAX;
#pragma unroll
        for (int k = 0; k < K; k++)
#pragma unroll
            for (int j = 0; j < V; j++) m = fmaxf(m, sml_f(r[k].v[j]));
        m = mut_block_max(m, red[0]);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; k++) {
            float t = 0.0f;
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
            s += t;
        }
        s = mut_block_sum(s, red[1]);
        const float post = sml_fwd_post(s, log_op);
#pragma unroll
        for (int k = 0; k < K; k++) {
            sml_vec<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++) o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(r[k].v[j]), m, post, log_op));
            sml_st<T, V>(out + off, (int64_t)(k * nt + tid) * V, cols, o);
        }
    }
}

template <typename T, int V>
static sml_status go(const sml_problem *p, int K, int threads, int blocks) {
    void (*kern)(const T *, T *, int64_t, int, int64_t, int) = NULL;
    MUT_PICK_BLOCK(kern, gpu_no_barrier_kernel, T, V, K);
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, threads, 0, (cudaStream_t)p->stream>>>((const T *)p->x, (T *)p->out, p->rows,
                                                          (int)p->cols, p->ld, p->op == SML_LOG_SOFTMAX);
    return sml_launch_ok();
}

template <typename T>
static sml_status typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    mut_block_plan b;
    const sml_status s = mut_plan_block(p, V, BLOCK_PREFERRED_THREADS, BLOCK_MAX_THREADS, &b);
    if (s != SML_OK) return s;
    const int K = b.K, threads = b.threads;
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * (2048 / threads) * 2);
    if (V == 16 / (int)sizeof(T)) return go<T, 16 / sizeof(T)>(p, K, threads, (int)blocks);
    return go<T, 1>(p, K, threads, (int)blocks);
}

extern "C" sml_status sml_mut_launch_no_barrier(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > BLOCK_MAX_COLS || p->dtype != SML_F32 || sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<float>(p, sms);
}
