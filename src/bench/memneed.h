/* memneed.h: whether the largest case of a bench plan fits in this machine's memory, asked
 * before anything is allocated, so that a case too big is refused with both numbers instead
 * of growing until the kernel's OOM killer ends the run. */
#ifndef SML_BENCH_MEMNEED_H
#define SML_BENCH_MEMNEED_H

#include <stddef.h>

#include "bench/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes one case needs, in double (rows x cols up to 2^31 x 2^31 would overflow 64 bits):
 * on the host, its inputs, the output read back and the reference on the checked rows, plus
 * the CPU kernels' own buffer set where a CPU kernel runs it; on the GPU, one buffer set. */
void sml_bench_case_need(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                         int64_t check_max_elems, int cpu_kernels, int gpu_kernels, double *host,
                         double *device);

/* Host memory this process may still take: the smaller of MemAvailable (/proc/meminfo) and
 * what is left under its address-space limit (ulimit -v); <= 0 when unknown. */
double sml_host_memory_available(void);

/* 1 when every case of the plan fits in the host memory available and in the GPU's memory;
 * else 0, with err naming the case and both numbers (needed, available). */
int sml_bench_memory_check(const sml_bench_plan *p, const sml_bench_config *c, int gpu, char *err,
                           size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
