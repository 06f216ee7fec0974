/* copy_ref.c: see copy_ref.h. */
#include "bench/copy_ref.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define ALIGN 256

static size_t round_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

typedef struct copy_ctx {
    sml_device dev;
    char *dst, *src;
    size_t bytes, stride;
    int use_kernel; /* GPU: 1 copy kernel, 0 cudaMemcpyAsync */
} copy_ctx;

static sml_status copy_launch(void *arg, int set) {
    copy_ctx *c = arg;
    char *d = c->dst + (size_t)set * c->stride;
    const char *s = c->src + (size_t)set * c->stride;
    if (c->dev == SML_DEVICE_CPU) {
        memcpy(d, s, c->bytes);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    if (c->use_kernel) return sml_bench_copy_kernel(d, s, c->bytes, NULL);
    return cudaMemcpyAsync(d, s, c->bytes, cudaMemcpyDeviceToDevice, 0) == cudaSuccess
               ? SML_OK
               : SML_ERR_CUDA;
#else
    return SML_ERR_NO_DEVICE;
#endif
}

static sml_status measure_copy(sml_device dev, size_t bytes, int nsets, int use_kernel,
                               const sml_measure_opts *o, sml_measurement *m, double *gbps,
                               char *err, size_t errlen) {
    *gbps = 0;
    if (nsets < 1) nsets = 1;
    size_t stride = round_up(bytes ? bytes : 1);
    sml_buffer src, dst;
    sml_status s = sml_buffer_alloc(&src, dev, stride * (size_t)nsets);
    if (s != SML_OK) {
        snprintf(err, errlen, "allocating %zu bytes for the copy reference: %s",
                 stride * (size_t)nsets, sml_strerror(s));
        return s;
    }
    s = sml_buffer_alloc(&dst, dev, stride * (size_t)nsets);
    if (s != SML_OK) {
        snprintf(err, errlen, "allocating %zu bytes for the copy reference: %s",
                 stride * (size_t)nsets, sml_strerror(s));
        sml_buffer_free(&src);
        return s;
    }
    /* Any non-zero pattern: some memory systems compress zeros. */
    s = sml_buffer_fill(&src, 0x5A);
    if (s == SML_OK) s = sml_buffer_fill(&dst, 0xA5);
    if (s != SML_OK) snprintf(err, errlen, "filling the copy buffers: %s", sml_strerror(s));
    copy_ctx c = {dev, dst.ptr, src.ptr, bytes, stride, use_kernel};
    if (s == SML_OK) s = sml_measure(dev, NULL, copy_launch, &c, nsets, o, m, err, errlen);
    if (s == SML_OK && m->t.median > 0) *gbps = 2.0 * (double)bytes / m->t.median * 1e-9;
    sml_buffer_free(&dst);
    sml_buffer_free(&src);
    return s;
}

sml_status sml_bench_memcpy_bandwidth(sml_device dev, size_t bytes, const sml_measure_opts *o,
                                      sml_measurement *m, double *gbps, char *err, size_t errlen) {
    return measure_copy(dev, bytes, 1, 0, o, m, gbps, err, errlen);
}

sml_status sml_bench_copy_same_bytes(sml_device dev, size_t bytes_moved, int nsets,
                                     const sml_measure_opts *o, sml_measurement *m, double *gbps,
                                     char *err, size_t errlen) {
    size_t half = bytes_moved / 2;
    return measure_copy(dev, half ? half : 1, nsets, dev == SML_DEVICE_GPU, o, m, gbps, err, errlen);
}
