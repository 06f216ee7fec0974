/* softmax_naive.cu: `naive`, the unfused decomposition a framework gets by composing
 * primitives, kept as the slow baseline every fused kernel is measured against. Each step
 * is its own launch with its result in global memory:
 *   softmax:          row max -> e = exp(x - max) (fp32 workspace) -> row sum of e -> e / sum
 *   log_softmax:      row max -> e -> row sum of e -> x - max - log(sum)
 *   softmax_bwd:      p = dy * y (workspace) -> row sum of p -> y * (dy - sum)
 *   log_softmax_bwd:  row sum of dy -> dy - exp(y) * sum
 * The forward pass moves about 5MN + 2M elements where a fused kernel moves 2MN. Scalar
 * accesses, one element per thread per step, a 64-bit element index split with a division:
 * slow on purpose, but with the same arithmetic rules as the fused kernels (fp32, -FLT_MAX
 * start for the max, compensated per-thread sums) so that it passes the same contract.
 * The workspace (rows x cols fp32 + two fp32 per row) comes from the handle. */
#include "core/internal.h"
#include "kernels/common.cuh"
#include "kernels/launchers.h"

#define NAIVE_THREADS 256

/* One block per row (the grid walks rows): the max of a strided row. */
template <typename T>
__global__ void __launch_bounds__(NAIVE_THREADS)
    sml_naive_row_max(const T *x, int64_t rows, int64_t cols, int64_t ld, float *mx) {
    __shared__ float red[32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float m = -FLT_MAX;
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, sml_f(x[r * ld + c]));
        m = sml_block_max(m, red);
        if (threadIdx.x == 0) mx[r] = m;
        __syncthreads(); /* red is reused by the next row */
    }
}

/* One block per row: the compensated sum of a strided row. */
template <typename T>
__global__ void __launch_bounds__(NAIVE_THREADS)
    sml_naive_row_sum(const T *v, int64_t rows, int64_t cols, int64_t ld, float *sum) {
    __shared__ float red[32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        sml_ksum acc = {0.0f, 0.0f};
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
            sml_kadd(acc, sml_f(v[r * ld + c]));
        float s = sml_block_sum(sml_kval(acc), red);
        /* The sum's class (common.cuh): the terms read again only when the sum is not finite. */
        if (!isfinite(s)) {
            unsigned c = 0;
            for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
                c |= sml_term_class(sml_f(v[r * ld + i]));
            s = sml_class_sum(s, sml_block_class(c));
        }
        if (threadIdx.x == 0) sum[r] = s;
        __syncthreads();
    }
}

/* Element-wise steps over all rows * cols elements (grid-stride, 64-bit index). */
template <typename T>
__global__ void sml_naive_exp(const T *x, const float *mx, float *e, int64_t rows, int64_t cols,
                              int64_t ld) {
    const int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols;
        e[i] = sml_exp_shift(sml_f(x[r * ld + c]), mx[r]);
    }
}

template <typename T>
__global__ void sml_naive_divide(const float *e, const float *sum, T *y, int64_t rows, int64_t cols,
                                 int64_t ld) {
    const int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols;
        y[r * ld + c] = sml_from_f<T>(e[i] / sum[r]);
    }
}

template <typename T>
__global__ void sml_naive_log_out(const T *x, const float *mx, const float *sum, T *y, int64_t rows,
                                  int64_t cols, int64_t ld) {
    const int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols;
        y[r * ld + c] = sml_from_f<T>(sml_fwd_out(sml_f(x[r * ld + c]), mx[r], logf(sum[r]), 1));
    }
}

template <typename T>
__global__ void sml_naive_mul(const T *y, const T *dy, float *p, int64_t rows, int64_t cols,
                              int64_t ld) {
    const int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols;
        p[i] = sml_f(dy[r * ld + c]) * sml_f(y[r * ld + c]);
    }
}

template <typename T>
__global__ void sml_naive_bwd_out(const T *y, const T *dy, const float *sum, T *dx, int64_t rows,
                                  int64_t cols, int64_t ld, int log_op) {
    const int64_t n = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols, o = r * ld + c;
        dx[o] = sml_from_f<T>(sml_bwd_out(sml_f(y[o]), sml_f(dy[o]), sum[r], log_op));
    }
}

template <typename T>
static sml_status naive_typed(sml_handle *h, const sml_problem *p, int sms) {
    const int64_t rows = p->rows, cols = p->cols, ld = p->ld, n = rows * cols;
    const int64_t need = n * 4 + rows * 8 + 256;
    void *ws = NULL;
    sml_status s = sml_handle_scratch(h, (size_t)need, &ws);
    if (s != SML_OK) return s;
    float *e = (float *)ws;
    float *mx = e + n;
    float *sum = mx + rows;
    cudaStream_t st = (cudaStream_t)p->stream;
    const unsigned row_grid = (unsigned)sml_min64(rows, (int64_t)sms * 8);
    const unsigned el_grid = (unsigned)sml_max64(
        1, sml_min64((n + NAIVE_THREADS - 1) / NAIVE_THREADS, (int64_t)sms * 32));
    const T *x = (const T *)p->x, *dy = (const T *)p->dy;
    T *out = (T *)p->out;

#define NAIVE_STEP(launch)         \
    do {                           \
        launch;                    \
        s = sml_launch_ok();       \
        if (s != SML_OK) return s; \
    } while (0)

    switch (p->op) {
    case SML_SOFTMAX:
    case SML_LOG_SOFTMAX:
        NAIVE_STEP(
            (sml_naive_row_max<T><<<row_grid, NAIVE_THREADS, 0, st>>>(x, rows, cols, ld, mx)));
        NAIVE_STEP((sml_naive_exp<T><<<el_grid, NAIVE_THREADS, 0, st>>>(x, mx, e, rows, cols, ld)));
        NAIVE_STEP((sml_naive_row_sum<float>
                    <<<row_grid, NAIVE_THREADS, 0, st>>>(e, rows, cols, cols, sum)));
        if (p->op == SML_SOFTMAX)
            NAIVE_STEP((sml_naive_divide<T>
                        <<<el_grid, NAIVE_THREADS, 0, st>>>(e, sum, out, rows, cols, ld)));
        else
            NAIVE_STEP((sml_naive_log_out<T>
                        <<<el_grid, NAIVE_THREADS, 0, st>>>(x, mx, sum, out, rows, cols, ld)));
        break;
    case SML_SOFTMAX_BWD:
        NAIVE_STEP((sml_naive_mul<T><<<el_grid, NAIVE_THREADS, 0, st>>>(x, dy, e, rows, cols, ld)));
        NAIVE_STEP((sml_naive_row_sum<float>
                    <<<row_grid, NAIVE_THREADS, 0, st>>>(e, rows, cols, cols, sum)));
        NAIVE_STEP((sml_naive_bwd_out<T>
                    <<<el_grid, NAIVE_THREADS, 0, st>>>(x, dy, sum, out, rows, cols, ld, 0)));
        break;
    case SML_LOG_SOFTMAX_BWD:
        NAIVE_STEP(
            (sml_naive_row_sum<T><<<row_grid, NAIVE_THREADS, 0, st>>>(dy, rows, cols, ld, sum)));
        NAIVE_STEP((sml_naive_bwd_out<T>
                    <<<el_grid, NAIVE_THREADS, 0, st>>>(x, dy, sum, out, rows, cols, ld, 1)));
        break;
    default: return SML_ERR_BAD_OP;
    }
#undef NAIVE_STEP
    return SML_OK;
}

extern "C" sml_status sml_launch_gpu_naive(sml_handle *h, const sml_problem *p) {
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return SML_DISPATCH_DTYPE(p->dtype, naive_typed, h, p, sms);
}
