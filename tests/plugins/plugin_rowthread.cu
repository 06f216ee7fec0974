/* plugin_rowthread.cu: a test plugin with a right but slow GPU kernel, plug_rowthread: one
 * thread per row, every op and dtype, any row length, sums in double. A row of a million
 * columns is a million dependent steps of one thread, thousands of times the time a fused
 * kernel takes: the kernel a merge gate must pass as slow, never fail as hung (softmax_lab_add_gate
 * on a GPU, tests/package). Special values as the CPU backends: the max skips NaN, and NaN,
 * +inf or an all -inf row make the row NaN through x - max. Only the public headers and the
 * CUDA runtime, as a user's plugin. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "softmax_lab_plugin.h"

#define THREADS 128

template <typename T>
__device__ static double load(const T *p, int64_t i);
template <>
__device__ double load<float>(const float *p, int64_t i) {
    return p[i];
}
template <>
__device__ double load<__half>(const __half *p, int64_t i) {
    return __half2float(p[i]);
}
template <>
__device__ double load<__nv_bfloat16>(const __nv_bfloat16 *p, int64_t i) {
    return __bfloat162float(p[i]);
}

template <typename T>
__device__ static void store(T *p, int64_t i, double v);
template <>
__device__ void store<float>(float *p, int64_t i, double v) {
    p[i] = (float)v;
}
template <>
__device__ void store<__half>(__half *p, int64_t i, double v) {
    p[i] = __double2half(v);
}
template <>
__device__ void store<__nv_bfloat16>(__nv_bfloat16 *p, int64_t i, double v) {
    p[i] = __double2bfloat16(v);
}

template <typename T>
__global__ static void row_kernel(int op, const T *x, const T *dy, T *out, int64_t rows,
                                  int64_t cols, int64_t ld) {
    int64_t r = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (r >= rows) return;
    const T *xr = x + r * ld;
    T *yr = out + r * ld;
    if (op == SML_SOFTMAX || op == SML_LOG_SOFTMAX) {
        float m = -INFINITY;
        for (int64_t j = 0; j < cols; j++) m = fmaxf(m, (float)load(xr, j));
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++) s += exp(load(xr, j) - (double)m);
        if (op == SML_SOFTMAX)
            for (int64_t j = 0; j < cols; j++) store(yr, j, exp(load(xr, j) - (double)m) / s);
        else
            for (int64_t j = 0; j < cols; j++) store(yr, j, load(xr, j) - (double)m - log(s));
        return;
    }
    const T *gr = dy + r * ld;
    double s = 0.0;
    for (int64_t j = 0; j < cols; j++)
        s += op == SML_SOFTMAX_BWD ? load(gr, j) * load(xr, j) : load(gr, j);
    /* Each output read after its inputs: in place is not asked of a backward op. */
    for (int64_t j = 0; j < cols; j++)
        store(yr, j,
              op == SML_SOFTMAX_BWD ? load(xr, j) * (load(gr, j) - s)
                                    : load(gr, j) - exp(load(xr, j)) * s);
}

template <typename T>
static void launch(const sml_problem *p, unsigned blocks) {
    row_kernel<T><<<blocks, THREADS, 0, (cudaStream_t)p->stream>>>(
        (int)p->op, (const T *)p->x, (const T *)p->dy, (T *)p->out, p->rows, p->cols, p->ld);
}

static sml_status rowthread_launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->rows == 0 || p->cols == 0) return SML_OK;
    int64_t blocks = (p->rows + THREADS - 1) / THREADS;
    if (blocks > 0x7fffffff) return SML_ERR_UNSUPPORTED;
    if (p->dtype == SML_F32) launch<float>(p, (unsigned)blocks);
    if (p->dtype == SML_F16) launch<__half>(p, (unsigned)blocks);
    if (p->dtype == SML_BF16) launch<__nv_bfloat16>(p, (unsigned)blocks);
    return cudaGetLastError() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
}

static const sml_kernel KERNELS[] = {
    {"plug_rowthread",
     "tests/plugins/plugin_rowthread.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     0,
     rowthread_launch,
     "test plugin: right but slow, one GPU thread per row, sums in double",
     {NULL, 0.0, NULL}, /* no speed claim: it is slow on purpose */
     NULL,
     0,
     NULL},
};

const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
