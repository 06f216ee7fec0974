/* copy_ref.c: see copy_ref.h. */
#include "bench/copy_ref.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define ALIGN 256

static size_t round_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

typedef struct copy_ctx {
    sml_device dev;
    char *dst, *src, *src2; /* src2: the second source of a two-read limit, else NULL */
    size_t bytes, stride;
    int use_kernel; /* GPU: 1 copy kernel, 0 cudaMemcpyAsync */
} copy_ctx;

/* dst = a ^ b on the host, a word at a time (the compiler vectorizes it), then the tail. */
static void host_read2(char *dst, const char *a, const char *b, size_t bytes) {
    size_t words = bytes / sizeof(uint64_t);
    for (size_t i = 0; i < words; i++) {
        uint64_t x, y;
        memcpy(&x, a + i * sizeof x, sizeof x);
        memcpy(&y, b + i * sizeof y, sizeof y);
        x ^= y;
        memcpy(dst + i * sizeof x, &x, sizeof x);
    }
    for (size_t i = words * sizeof(uint64_t); i < bytes; i++) dst[i] = (char)(a[i] ^ b[i]);
}

static sml_status copy_launch(void *arg, int set) {
    copy_ctx *c = arg;
    char *d = c->dst + (size_t)set * c->stride;
    const char *s = c->src + (size_t)set * c->stride;
    const char *s2 = c->src2 ? c->src2 + (size_t)set * c->stride : NULL;
    if (c->dev == SML_DEVICE_CPU) {
        if (s2)
            host_read2(d, s, s2, c->bytes);
        else
            memcpy(d, s, c->bytes);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    if (s2) return sml_bench_read2_kernel(d, s, s2, c->bytes, NULL);
    if (c->use_kernel) return sml_bench_copy_kernel(d, s, c->bytes, NULL);
    return cudaMemcpyAsync(d, s, c->bytes, cudaMemcpyDeviceToDevice, 0) == cudaSuccess
               ? SML_OK
               : SML_ERR_CUDA;
#else
    return SML_ERR_NO_DEVICE;
#endif
}

/* reads: 1 (dst = src) or 2 (dst = src ^ src2); bytes per buffer. */
static sml_status measure_copy(sml_device dev, size_t bytes, int nsets, int use_kernel, int reads,
                               const sml_measure_opts *o, sml_measurement *m, double *gbps,
                               char *err, size_t errlen) {
    *gbps = 0;
    if (nsets < 1) nsets = 1;
    size_t stride = round_up(bytes ? bytes : 1);
    /* buf[0] dst, buf[1] src, buf[2] the second source of a two-read limit. */
    sml_buffer buf[3];
    memset(buf, 0, sizeof buf);
    int nbuf = reads == 2 ? 3 : 2, have = 0;
    sml_status s = SML_OK;
    for (; have < nbuf && s == SML_OK; have++) {
        s = sml_buffer_alloc(&buf[have], dev, stride * (size_t)nsets);
        if (s != SML_OK) {
            snprintf(err, errlen, "allocating %zu bytes for the copy reference: %s",
                     stride * (size_t)nsets, sml_strerror(s));
            break;
        }
    }
    /* Any non-zero patterns, the two sources different: some memory systems compress zeros. */
    static const int FILL[3] = {0xA5, 0x5A, 0x3C};
    for (int i = 0; i < nbuf && s == SML_OK; i++) {
        s = sml_buffer_fill(&buf[i], FILL[i]);
        if (s != SML_OK) snprintf(err, errlen, "filling the copy buffers: %s", sml_strerror(s));
    }
    copy_ctx c = {dev,   buf[0].ptr, buf[1].ptr, nbuf == 3 ? buf[2].ptr : NULL,
                  bytes, stride,     use_kernel};
    if (s == SML_OK) s = sml_measure(dev, NULL, copy_launch, &c, nsets, o, m, err, errlen);
    if (s == SML_OK && m->t.median > 0)
        *gbps = (double)(reads + 1) * (double)bytes / m->t.median * 1e-9;
    while (have-- > 0) sml_buffer_free(&buf[have]);
    return s;
}

sml_status sml_bench_memcpy_bandwidth(sml_device dev, size_t bytes, const sml_measure_opts *o,
                                      sml_measurement *m, double *gbps, char *err, size_t errlen) {
    return measure_copy(dev, bytes, 1, 0, 1, o, m, gbps, err, errlen);
}

sml_status sml_bench_copy_same_bytes(sml_device dev, size_t bytes_moved, int nsets,
                                     const sml_measure_opts *o, sml_measurement *m, double *gbps,
                                     char *err, size_t errlen) {
    size_t half = bytes_moved / 2;
    return measure_copy(dev, half ? half : 1, nsets, dev == SML_DEVICE_GPU, 1, o, m, gbps, err,
                        errlen);
}

sml_status sml_bench_limit_same_traffic(sml_device dev, size_t tensor_bytes, int reads, int nsets,
                                        const sml_measure_opts *o, sml_measurement *m, double *gbps,
                                        char *err, size_t errlen) {
    if (reads != 1 && reads != 2) {
        snprintf(err, errlen, "a traffic-matched limit reads 1 or 2 tensors, not %d", reads);
        return SML_ERR_INVALID_ARG;
    }
    return measure_copy(dev, tensor_bytes ? tensor_bytes : 1, nsets, dev == SML_DEVICE_GPU, reads,
                        o, m, gbps, err, errlen);
}
