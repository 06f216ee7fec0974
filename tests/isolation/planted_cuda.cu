/* planted_cuda.cu: GPU kernels with planted faults, one shared library each (-DPLANT=...),
 * named planted_gpu_<plant>: an fp32 softmax, one block of 256 threads per row, right except
 *
 *   illegal   writes through an address no allocation holds (CUDA error 700)
 *   write1m   writes one float 1 MiB past the end of out
 *   race      reads the reduced max from shared slot 0 with no barrier before the threads
 *             write their partial sums over the same slots (racecheck reports it)
 *   uninit    reads a global scratch buffer nothing wrote, multiplied by 0 (initcheck)
 *   defstream launches on the legacy default stream instead of the stream given
 *
 * Each is judged by the GPU isolation test (test_isolation --gpu, label gpu) beside a right
 * kernel. Public headers and the CUDA runtime only, as a user's plugin. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "softmax_lab_plugin.h"

#define THREADS 256

__global__ static void planted(const float *x, float *out, int64_t rows, int64_t cols, int64_t ld,
                               const float *scratch) {
    __shared__ float red[THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *xr = x + r * ld;
        float *yr = out + r * ld;
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < cols; j += THREADS) m = fmaxf(m, xr[j]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = THREADS / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s)
                red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
#if PLANT != 3
        __syncthreads(); /* the race plant leaves this barrier out */
#endif
        float d = 0.0f;
        for (int64_t j = threadIdx.x; j < cols; j += THREADS) d += expf(xr[j] - m);
#if PLANT == 4
        d += 0.0f * scratch[threadIdx.x];
#endif
        red[threadIdx.x] = d;
        __syncthreads();
        for (int s = THREADS / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        d = red[0];
        __syncthreads();
        for (int64_t j = threadIdx.x; j < cols; j += THREADS) yr[j] = expf(xr[j] - m) / d;
#if PLANT == 1
        if (threadIdx.x == 0) *(volatile float *)(uintptr_t)0x10 = 1.0f;
#elif PLANT == 2
        if (threadIdx.x == 0 && r == rows - 1) out[(rows - 1) * ld + cols + (1 << 18)] = 1.0f;
#endif
    }
    (void)scratch;
}

static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->dtype != SML_F32 || p->op != SML_SOFTMAX) return SML_ERR_UNSUPPORTED;
    if (p->rows == 0) return SML_OK;
    cudaStream_t st = (cudaStream_t)p->stream;
#if PLANT == 5
    st = 0; /* the legacy default stream, not the one given */
#endif
    float *scratch = NULL;
#if PLANT == 4
    if (cudaMalloc(&scratch, THREADS * sizeof(float)) != cudaSuccess) return SML_ERR_CUDA;
#endif
    int grid = p->rows < 65535 ? (int)p->rows : 65535;
    planted<<<grid, THREADS, 0, st>>>((const float *)p->x, (float *)p->out, p->rows, p->cols, p->ld,
                                      scratch);
    cudaError_t e = cudaGetLastError();
#if PLANT == 4
    cudaStreamSynchronize(st);
    cudaFree(scratch);
#endif
    return e == cudaSuccess ? SML_OK : SML_ERR_CUDA;
}

static const sml_kernel KERNELS[] = {
    {PLANT_NAME,
     "tests/isolation/planted_cuda.cu",
     SML_DEVICE_GPU,
     1u << SML_SOFTMAX,
     1u << SML_F32,
     1,
     0,
     launch,
     "test plugin: an fp32 GPU softmax with a planted fault",
     {NULL, 0.0, NULL},
     NULL,
     0,
     NULL},
};

SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
