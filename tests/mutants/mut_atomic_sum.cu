/* mut_atomic_sum.cu: a mutant beyond issue 7's list, `gpu_atomic_sum`. A copy of the forward
 * half of kernels/softmax_block.cu (fp32) whose block sum adds the per-warp partials with
 * atomicAdd into one shared float: float addition is not associative, so with three or more
 * warps the sum's last bits depend on which warp arrives first, and the same input gives
 * different output bits from run to run. The result stays within the contract; only the
 * bitwise properties can see it. Expected killers: determinism or row_independence (reversed
 * rows must give identical bits), on rows of more than 256 columns.
 * The planted line is marked MUTANT; everything else is the production code. */
#include "kernels/common.cuh"
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutants.h"


/* sml_block_sum of kernels/common.cuh with the per-warp partials added by atomics into one
 * shared float: the order of the additions is the order in which warps arrive. */
static __device__ __forceinline__ float mut_block_sum(float v, float *acc) {
    v = sml_warp_sum(v, 32);
    if (threadIdx.x == 0) *acc = 0.0f;
    __syncthreads();
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, v); /* MUTANT: arrival order decides the sum's bits */
    __syncthreads();
    v = *acc;
    __syncthreads(); /* the next row zeroes acc */
    return v;
}

template <typename T, int V, int K>
__global__ void __launch_bounds__(BLOCK_MAX_THREADS)
    gpu_atomic_sum_kernel(const T *x, T *out, int64_t rows, int cols, int64_t ld, int log_op) {
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
        m = sml_block_max(m, red[0]);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; k++) {
            float t = 0.0f;
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
            s += t;
        }
        s = mut_block_sum(s, &red[1][0]);
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
    MUT_PICK_BLOCK(kern, gpu_atomic_sum_kernel, T, V, K);
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

extern "C" sml_status sml_mut_launch_atomic_sum(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > BLOCK_MAX_COLS || p->dtype != SML_F32 || sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<float>(p, sms);
}
