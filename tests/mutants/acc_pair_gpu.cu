/* acc_pair_gpu.cu: the accuracy gate's planted pair on the GPU, test-only (never in the
 * registry): one block per row, fp32 forward softmax and log_softmax, the same code twice but
 * for the exp: `expf` in acc_gpu_expf, `__expf` (ex2.approx of the fp32 product t * log2 e) in
 * acc_gpu_fast_exp. Both stay inside the numerics contract; the fast one loses accuracy. */
#include <cuda_runtime.h>
#include <float.h>

#include "kernels/common.cuh"
#include "tests/mutants/acc_pair_gpu.h"

#define ACC_THREADS 256

__global__ void __launch_bounds__(ACC_THREADS)
    acc_pair_kernel(const float *x, float *out, int64_t cols, int64_t ld, int log_op, int fast) {
    __shared__ float red[ACC_THREADS];
    const float *xr = x + (int64_t)blockIdx.x * ld;
    float *yr = out + (int64_t)blockIdx.x * ld;
    float m = -INFINITY;
    int nan = 0;
    for (int64_t i = threadIdx.x; i < cols; i += ACC_THREADS) {
        m = fmaxf(m, xr[i]);
        nan |= isnan(xr[i]);
    }
    /* A row with a NaN (fmaxf skips it) is NaN throughout, as the contract wants; +inf and all
     * -inf rows become NaN through x - m. */
    nan = __syncthreads_or(nan);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = ACC_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = nan ? NAN : red[0];
    __syncthreads();
    float d = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += ACC_THREADS)
        d += fast ? __expf(xr[i] - m) : expf(xr[i] - m);
    red[threadIdx.x] = d;
    __syncthreads();
    for (int s = ACC_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    d = red[0];
    __syncthreads();
    const float l = logf(d);
    for (int64_t i = threadIdx.x; i < cols; i += ACC_THREADS) {
        float t = xr[i] - m;
        yr[i] = log_op ? t - l : (fast ? __expf(t) : expf(t)) / d;
    }
}

static sml_status launch(const sml_problem *p, int fast) {
    if (p->dtype != SML_F32 || sml_op_is_backward(p->op)) return SML_ERR_UNSUPPORTED;
    if (p->rows == 0 || p->cols == 0) return SML_OK;
    if (p->rows > 2147483647) return SML_ERR_UNSUPPORTED;
    acc_pair_kernel<<<(unsigned)p->rows, ACC_THREADS, 0, (cudaStream_t)p->stream>>>(
        (const float *)p->x, (float *)p->out, p->cols, p->ld, p->op == SML_LOG_SOFTMAX, fast);
    return sml_launch_ok();
}

extern "C" sml_status sml_acc_gpu_launch_expf(sml_handle *h, const sml_problem *p) {
    (void)h;
    return launch(p, 0);
}

extern "C" sml_status sml_acc_gpu_launch_fast_exp(sml_handle *h, const sml_problem *p) {
    (void)h;
    return launch(p, 1);
}
