/* copy_ref.h: the copy references every kernel's bandwidth is read against, measured in the
 * same run with the same timing method: a device-to-device cudaMemcpy of a large buffer (the
 * device's copy bandwidth), and a plain 16-byte-vector copy kernel moving the same bytes as
 * a case (what "at the memory-bandwidth limit" means for that size). On the CPU both are
 * memcpy. Bytes count read plus written. */
#ifndef SML_BENCH_COPY_REF_H
#define SML_BENCH_COPY_REF_H

#include <stddef.h>

#include "bench/measure.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy `bytes` from one buffer to another, repeatedly; *gbps = 2 * bytes / median time. */
sml_status sml_bench_memcpy_bandwidth(sml_device dev, size_t bytes, const sml_measure_opts *o,
                                      sml_measurement *m, double *gbps, char *err, size_t errlen);

/* The copy kernel (GPU) or memcpy (CPU) moving bytes_moved bytes: bytes_moved / 2 read and
 * as many written, rotating over nsets buffer pairs like the case it stands beside. */
sml_status sml_bench_copy_same_bytes(sml_device dev, size_t bytes_moved, int nsets,
                                     const sml_measure_opts *o, sml_measurement *m, double *gbps,
                                     char *err, size_t errlen);

/* The traffic-matched limit of a case: a streaming kernel with the op's own pattern over
 * buffers of tensor_bytes, rotating over nsets buffer sets. reads 1: the copy kernel (GPU) or
 * memcpy (CPU), one read and one write, what a forward pass moves; reads 2: dst = a ^ b with
 * 16-byte loads and stores (GPU) or 8-byte words (CPU), two reads and one write, what a
 * backward pass moves (y and dy in, dx out). *gbps = (reads + 1) * tensor_bytes / median. */
sml_status sml_bench_limit_same_traffic(sml_device dev, size_t tensor_bytes, int reads, int nsets,
                                        const sml_measure_opts *o, sml_measurement *m, double *gbps,
                                        char *err, size_t errlen);

#ifdef SML_HAVE_CUDA
/* copy_kernel.cu: dst[0, bytes) = src[0, bytes) with 16-byte loads and stores where both
 * pointers allow; asynchronous on `stream`. */
sml_status sml_bench_copy_kernel(void *dst, const void *src, size_t bytes, void *stream);
/* copy_kernel.cu: dst[i] = a[i] ^ b[i] over [0, bytes), 16 bytes at a time where all three
 * pointers allow; asynchronous on `stream`. */
sml_status sml_bench_read2_kernel(void *dst, const void *a, const void *b, size_t bytes,
                                  void *stream);
#endif

#ifdef __cplusplus
}
#endif
#endif
