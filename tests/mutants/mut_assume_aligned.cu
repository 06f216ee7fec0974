/* mut_assume_aligned.cu: a mutant beyond issue 7's list, `gpu_assume_aligned`. A copy of the
 * forward half of kernels/softmax_warp.cu (fp32) whose launcher picks 16-byte loads when the
 * input's base pointer is 16-byte aligned, forgetting the output pointer and the row stride:
 * with an ld that is not a multiple of 4 floats, row 1's vector loads are misaligned and the
 * kernel faults ("misaligned address"), a sticky CUDA error. This is the bug the production
 * sml_vec_elems (common.cuh) exists to prevent; it shows that the suite turns a faulting
 * kernel into a reported error with a reproducer. Expected killer: agreement, as an error.
 * The planted line is marked MUTANT; everything else is the production code. */
#include "kernels/common.cuh"
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutants.h"


template <typename T, int V, int K>
__global__ void __launch_bounds__(WARP_THREADS)
    gpu_assume_aligned_kernel(const T *x, T *out, int64_t rows, int cols, int64_t ld, int width, int log_op) {
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
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; k++) {
            float t = 0.0f;
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_exp_shift(sml_f(r[k].v[j]), m);
            s += t;
        }
        s = sml_warp_sum(s, width);
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
    MUT_PICK_WARP(kern, gpu_assume_aligned_kernel, T, V, K);
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, WARP_THREADS, 0, (cudaStream_t)p->stream>>>((const T *)p->x, (T *)p->out, p->rows,
                                                               (int)p->cols, p->ld, width,
                                                               p->op == SML_LOG_SOFTMAX);
    return sml_launch_ok();
}

template <typename T>
static sml_status typed(const sml_problem *p, int sms) {
    /* MUTANT: only x's base is checked; out's base and the row stride ld are not */
    const int V = ((uintptr_t)p->x & 15u) == 0 ? (int)(16 / sizeof(T)) : 1;
    const mut_warp_plan w = mut_plan_warp(p, V, sms, WARP_THREADS);
    if (V == 16 / (int)sizeof(T)) return go<T, 16 / sizeof(T)>(p, w.K, w.width, w.blocks);
    return go<T, 1>(p, w.K, w.width, w.blocks);
}

extern "C" sml_status sml_mut_launch_assume_aligned(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > WARP_MAX_COLS || p->dtype != SML_F32 || sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<float>(p, sms);
}
