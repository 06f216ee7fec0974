/* int_math.h: the integer helpers of the launch plans, in plain C so that the CPU-tested plan
 * headers (block_plan.h, split_plan.h) and the CUDA files (common.cuh) share one copy. Under
 * nvcc the two comparisons are also device functions. */
#ifndef SML_KERNELS_INT_MATH_H
#define SML_KERNELS_INT_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define SML_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SML_HOST_DEVICE inline
#endif

static SML_HOST_DEVICE int64_t sml_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static SML_HOST_DEVICE int64_t sml_max64(int64_t a, int64_t b) { return a > b ? a : b; }
/* The smallest power of two >= n (1 for n <= 1). */
static inline int sml_pow2_ceil(int64_t n) {
    int p = 1;
    while (p < n) p <<= 1;
    return p;
}

#endif
