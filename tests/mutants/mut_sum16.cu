/* mut_sum16.cu: mutant 2 of issue 7, `gpu_sum16`. A copy of the forward half of
 * kernels/softmax_warp.cu (fp16 and bf16) whose row sum is accumulated in the input's 16-bit
 * type instead of fp32: each of the up to 32 additions per lane and 5 butterfly steps rounds
 * to the 16-bit format, so the sum (and every output, which divides by it) is off by several
 * 16-bit ulps, far past the contract's fp32-accumulation bound plus the output rounding.
 * Expected killer: agreement (or row_sum) on any row of more than a few columns.
 * The planted lines are marked MUTANT; everything else is the production code. */
#include "kernels/common.cuh"
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutants.h"


template <typename T, int V, int K>
__global__ void __launch_bounds__(WARP_THREADS)
    gpu_sum16_kernel(const T *x, T *out, int64_t rows, int cols, int64_t ld, int width, int log_op) {
    const int lane = threadIdx.x & 31;
    const int sub = lane / width, lr = lane & (width - 1);
    const int per_warp = 32 / width;
    const int64_t warp0 = (int64_t)blockIdx.x * (WARP_THREADS / 32) + (threadIdx.x >> 5);
    const int64_t step = (int64_t)gridDim.x * (WARP_THREADS / 32) * per_warp;
    for (int64_t base = warp0 * per_warp; base < rows; base += step) {
        const int64_t row = base + sub;
        const int lim = row < rows ? cols : 0;
        const int64_t off = (row < rows ? row : base) * ld;
        sml_vec<T, V> r[K];
#pragma unroll
        for (int k = 0; k < K; k++)
            r[k] = sml_ld<T, V>(x + off, (int64_t)(k * width + lr) * V, lim, sml_neg_inf<T>());
        float m = -FLT_MAX;
#pragma unroll
        for (int k = 0; k < K; k++)
#pragma unroll
            for (int j = 0; j < V; j++) m = fmaxf(m, sml_f(r[k].v[j]));
        m = sml_warp_max(m, width);
        /* MUTANT: the sum is kept in T, the 16-bit input type: every addition, in the lane
         * and in the butterfly, rounds to 11 (fp16) or 8 (bf16) significant bits. */
        T s16 = sml_zero<T>();
#pragma unroll
        for (int k = 0; k < K; k++)
#pragma unroll
            for (int j = 0; j < V; j++) s16 = sml_from_f<T>(sml_f(s16) + sml_exp_shift(sml_f(r[k].v[j]), m));
        for (int o = width >> 1; o > 0; o >>= 1)
            s16 = sml_from_f<T>(sml_f(s16) + sml_f(__shfl_xor_sync(0xffffffffu, s16, o, width)));
        const float s = sml_f(s16);
        const float post = sml_fwd_post(s, log_op);
#pragma unroll
        for (int k = 0; k < K; k++) {
            sml_vec<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++) o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(r[k].v[j]), m, post, log_op));
            sml_st<T, V>(out + off, (int64_t)(k * width + lr) * V, lim, o);
        }
    }
}

template <typename T, int V>
static sml_status go(const sml_problem *p, int K, int width, int blocks) {
    void (*kern)(const T *, T *, int64_t, int, int64_t, int, int) = NULL;
    MUT_PICK_WARP(kern, gpu_sum16_kernel, T, V, K);
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, WARP_THREADS, 0, (cudaStream_t)p->stream>>>((const T *)p->x, (T *)p->out, p->rows,
                                                               (int)p->cols, p->ld, width,
                                                               p->op == SML_LOG_SOFTMAX);
    return sml_launch_ok();
}

template <typename T>
static sml_status typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    const mut_warp_plan w = mut_plan_warp(p, V, sms, WARP_THREADS);
    if (V == 16 / (int)sizeof(T)) return go<T, 16 / sizeof(T)>(p, w.K, w.width, w.blocks);
    return go<T, 1>(p, w.K, w.width, w.blocks);
}

extern "C" sml_status sml_mut_launch_sum16(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > WARP_MAX_COLS || p->dtype == SML_F32 || sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return p->dtype == SML_F16 ? typed<__half>(p, sms) : typed<__nv_bfloat16>(p, sms);
}
