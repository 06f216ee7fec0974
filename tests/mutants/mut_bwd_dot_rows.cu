/* mut_bwd_dot_rows.cu: mutant 11b of issue 7 (the dot summed over the wrong axis),
 * `gpu_bwd_dot_rows`. A copy of the backward half of kernels/softmax_warp.cu (fp32) whose dot
 * term is reduced over the whole warp instead of the row's group of `width` lanes: when rows
 * are short enough that one warp holds several rows (cols <= 64 on the 16-byte path, <= 16 on
 * the scalar path), each row's sum(dy * y) also takes in the other rows of its warp, i.e. it
 * is summed down the columns as well as along the row. Expected killers: agreement, bwd_sum or
 * row_independence, on two or more short rows. The planted line is marked MUTANT. */
#include "kernels/common.cuh"
#include "tests/mutants/launch_plan.cuh"
#include "tests/mutants/mutants.h"


template <typename T, int V, int K>
__global__ void __launch_bounds__(WARP_THREADS)
    gpu_bwd_dot_rows_kernel(const T *x, const T *dy, T *out, int64_t rows, int cols, int64_t ld, int width, int log_op) {
    const int lane = threadIdx.x & 31;
    const int sub = lane / width, lr = lane & (width - 1);
    const int per_warp = 32 / width;
    const int64_t warp0 = (int64_t)blockIdx.x * (WARP_THREADS / 32) + (threadIdx.x >> 5);
    const int64_t step = (int64_t)gridDim.x * (WARP_THREADS / 32) * per_warp;
    for (int64_t base = warp0 * per_warp; base < rows; base += step) {
        const int64_t row = base + sub;
        const int lim = row < rows ? cols : 0;
        const int64_t off = (row < rows ? row : base) * ld;
        sml_vec<T, V> ry[K], rd[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t col = (int64_t)(k * width + lr) * V;
            ry[k] = sml_ld<T, V>(x + off, col, lim, sml_zero<T>());
            rd[k] = sml_ld<T, V>(dy + off, col, lim, sml_zero<T>());
        }
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; k++) {
            float t = 0.0f;
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_bwd_term(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), log_op);
            s += t;
        }
        s = sml_warp_sum(s, 32); /* MUTANT: the butterfly spans the warp, not the row's lanes */
#pragma unroll
        for (int k = 0; k < K; k++) {
            sml_vec<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++)
                o.v[j] = sml_from_f<T>(sml_bwd_out(sml_f(ry[k].v[j]), sml_f(rd[k].v[j]), s, log_op));
            sml_st<T, V>(out + off, (int64_t)(k * width + lr) * V, lim, o);
        }
    }
}

template <typename T, int V>
static sml_status go(const sml_problem *p, int K, int width, int blocks) {
    void (*kern)(const T *, const T *, T *, int64_t, int, int64_t, int, int) = NULL;
    MUT_PICK_WARP(kern, gpu_bwd_dot_rows_kernel, T, V, K);
    if (!kern) return SML_ERR_INTERNAL;
    kern<<<blocks, WARP_THREADS, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, (int)p->cols, p->ld, width,
        p->op == SML_LOG_SOFTMAX_BWD);
    return sml_launch_ok();
}

template <typename T>
static sml_status typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    const mut_warp_plan w = mut_plan_warp(p, V, sms, WARP_THREADS);
    if (V == 16 / (int)sizeof(T)) return go<T, 16 / sizeof(T)>(p, w.K, w.width, w.blocks);
    return go<T, 1>(p, w.K, w.width, w.blocks);
}

extern "C" sml_status sml_mut_launch_bwd_dot_rows(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->cols > WARP_MAX_COLS || p->dtype != SML_F32 || !sml_op_is_backward(p->op))
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<float>(p, sms);
}
