// copy_kernel.cu: the "plain copy kernel moving the same bytes" that target T5 measures
// short rows against. One 16-byte vector per thread, no grid-stride loop and no tricks, so it shows
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
