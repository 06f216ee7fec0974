/* plugin_cuda.cu: a test plugin with a GPU kernel, plug_cuda: fp32, every op, one block per
 * row (a grid-stride loop over rows), any row length; sums in double. It includes only the
 * public headers and links only the CUDA runtime, as a user's plugin; test_plugins (--part
 * gpu) and test_gpu_kernels --load run it on a GPU. Special values as the CPU backends: the
 * max skips NaN, and NaN, +inf or an all -inf row make the row NaN through x - max. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "softmax_lab_plugin.h"

#define THREADS 256

/* Block-wide reductions (every thread gets the result); `red` holds THREADS / 32 slots. */
__device__ static float block_max(float v, float *red) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = -INFINITY;
    for (int w = 0; w < THREADS / 32; w++) v = fmaxf(v, red[w]);
    return v;
}

__device__ static double block_sum(double v, double *red) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = 0.0;
    for (int w = 0; w < THREADS / 32; w++) v += red[w];
    return v;
}

__global__ static void plug_kernel(int op, const float *x, const float *dy, float *out,
                                   int64_t rows, int64_t cols, int64_t ld) {
    __shared__ float redf[THREADS / 32];
    __shared__ double redd[THREADS / 32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *xr = x + r * ld;
        float *yr = out + r * ld;
        if (op == SML_SOFTMAX || op == SML_LOG_SOFTMAX) {
            float m = -INFINITY;
            for (int64_t j = threadIdx.x; j < cols; j += THREADS) m = fmaxf(m, xr[j]);
            m = block_max(m, redf);
            double d = 0.0;
            for (int64_t j = threadIdx.x; j < cols; j += THREADS) d += (double)expf(xr[j] - m);
            d = block_sum(d, redd);
            if (op == SML_SOFTMAX) {
                float sum = (float)d;
                for (int64_t j = threadIdx.x; j < cols; j += THREADS) yr[j] = expf(xr[j] - m) / sum;
            } else {
                double l = log(d);
                for (int64_t j = threadIdx.x; j < cols; j += THREADS)
                    yr[j] = (float)((double)xr[j] - (double)m - l);
            }
        } else {
            const float *gr = dy + r * ld;
            double s = 0.0;
            if (op == SML_SOFTMAX_BWD)
                for (int64_t j = threadIdx.x; j < cols; j += THREADS)
                    s += (double)gr[j] * (double)xr[j];
            else
                for (int64_t j = threadIdx.x; j < cols; j += THREADS) s += (double)gr[j];
            s = block_sum(s, redd);
            if (op == SML_SOFTMAX_BWD)
                for (int64_t j = threadIdx.x; j < cols; j += THREADS)
                    yr[j] = (float)((double)xr[j] * ((double)gr[j] - s));
            else
                for (int64_t j = threadIdx.x; j < cols; j += THREADS)
                    yr[j] = (float)((double)gr[j] - exp((double)xr[j]) * s);
        }
        __syncthreads(); /* the reduction slots are reused by the next row */
    }
}

static sml_status plug_cuda_launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->dtype != SML_F32) return SML_ERR_UNSUPPORTED;
    if (p->rows == 0 || p->cols == 0) return SML_OK;
    int64_t grid = p->rows < (1 << 20) ? p->rows : (1 << 20);
    plug_kernel<<<(unsigned)grid, THREADS, 0, (cudaStream_t)p->stream>>>(
        (int)p->op, (const float *)p->x, (const float *)p->dy, (float *)p->out, p->rows, p->cols,
        p->ld);
    return cudaGetLastError() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
}

static const sml_kernel KERNELS[] = {
    {"plug_cuda",
     "tests/plugins/plugin_cuda.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     1u << SML_F32,
     1,
     0,
     plug_cuda_launch,
     "test plugin: fp32 GPU softmax, one block per row, sums in double",
     {"naive", 1.0, "all"},
     NULL,
     0,
     NULL},
};

const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
