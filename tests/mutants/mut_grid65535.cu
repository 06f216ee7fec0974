/* mut_grid65535.cu: mutant 12 of issue 7, `gpu_grid65535`. A copy of the forward half of
 * kernels/softmax_block.cu (fp32) whose launcher sizes the grid as one block per row capped
 * at 65,535 blocks (the limit of a grid's y and z dimensions, wrongly applied) while the
 * kernel, without the production grid-stride loop, does one row per block: rows from 65,536
 * on are never computed and keep the poison the harness put there. The standard generators
 * draw more than 65,535 rows only in rare big cases, so the mutation test falls back to a
 * targeted shape (65,537 rows x 3 columns). Expected killer: agreement (NaN output).
 * The planted lines are marked MUTANT; everything else is the production code. */
#include "kernels/common.cuh"
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutants.h"


template <typename T, int V, int K>
__global__ void __launch_bounds__(BLOCK_MAX_THREADS)
    gpu_grid65535_kernel(const T *x, T *out, int64_t rows, int cols, int64_t ld, int log_op) {
    __shared__ float red[2][32];
    const int nt = blockDim.x, tid = threadIdx.x;
    /* MUTANT (with the launcher's grid): one row per block, no grid-stride loop */
    if (blockIdx.x >= rows) return;
    {
        const int64_t row = blockIdx.x;
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
        s = sml_block_sum(s, red[1]);
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
    MUT_PICK_BLOCK(kern, gpu_grid65535_kernel, T, V, K);
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
    (void)sms;
    const int64_t blocks = sml_min64(p->rows, 65535); /* MUTANT: grid capped at 65,535 */
    if (V == 16 / (int)sizeof(T)) return go<T, 16 / sizeof(T)>(p, K, threads, (int)blocks);
    return go<T, 1>(p, K, threads, (int)blocks);
}

extern "C" sml_status sml_mut_launch_grid65535(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > BLOCK_MAX_COLS || p->dtype != SML_F32 || sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<float>(p, sms);
}
