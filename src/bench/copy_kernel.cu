// copy_kernel.cu: the plain copy kernel moving the same bytes as a case, and the two-read
// kernel a backward pass's traffic is measured against. One 16-byte vector per thread, no grid-stride loop and no tricks, so it shows
// what an ordinary well-coalesced streaming kernel reaches at a given size; the few bytes
// past the last whole vector are copied one per thread by a second small launch.
#include <cuda_runtime.h>
#include <stdint.h>

#include "bench/copy_ref.h"

__global__ void sml_copy16(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

__global__ void sml_copy1(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src,
                          size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

extern "C" sml_status sml_bench_copy_kernel(void *dst, const void *src, size_t bytes,
                                            void *stream) {
    const unsigned threads = 256;
    cudaStream_t st = (cudaStream_t)stream;
    int aligned = ((uintptr_t)dst % 16 == 0) && ((uintptr_t)src % 16 == 0);
    size_t vecs = aligned ? bytes / 16 : 0;
    if (vecs) {
        size_t blocks = (vecs + threads - 1) / threads;
        sml_copy16<<<(unsigned)blocks, threads, 0, st>>>((uint4 *)dst, (const uint4 *)src, vecs);
    }
    size_t done = vecs * 16, rest = bytes - done;
    if (rest) {
        size_t blocks = (rest + threads - 1) / threads;
        sml_copy1<<<(unsigned)blocks, threads, 0, st>>>((unsigned char *)dst + done,
                                                        (const unsigned char *)src + done, rest);
    }
    return cudaGetLastError() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
}

__global__ void sml_read2_16(uint4 *__restrict__ dst, const uint4 *__restrict__ a,
                             const uint4 *__restrict__ b, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint4 x = a[i], y = b[i];
        dst[i] = make_uint4(x.x ^ y.x, x.y ^ y.y, x.z ^ y.z, x.w ^ y.w);
    }
}

__global__ void sml_read2_1(unsigned char *__restrict__ dst, const unsigned char *__restrict__ a,
                            const unsigned char *__restrict__ b, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = a[i] ^ b[i];
}

extern "C" sml_status sml_bench_read2_kernel(void *dst, const void *a, const void *b, size_t bytes,
                                             void *stream) {
    const unsigned threads = 256;
    cudaStream_t st = (cudaStream_t)stream;
    int aligned =
        ((uintptr_t)dst % 16 == 0) && ((uintptr_t)a % 16 == 0) && ((uintptr_t)b % 16 == 0);
    size_t vecs = aligned ? bytes / 16 : 0;
    if (vecs) {
        size_t blocks = (vecs + threads - 1) / threads;
        sml_read2_16<<<(unsigned)blocks, threads, 0, st>>>((uint4 *)dst, (const uint4 *)a,
                                                           (const uint4 *)b, vecs);
    }
    size_t done = vecs * 16, rest = bytes - done;
    if (rest) {
        size_t blocks = (rest + threads - 1) / threads;
        sml_read2_1<<<(unsigned)blocks, threads, 0, st>>>((unsigned char *)dst + done,
                                                          (const unsigned char *)a + done,
                                                          (const unsigned char *)b + done, rest);
    }
    return cudaGetLastError() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
}
