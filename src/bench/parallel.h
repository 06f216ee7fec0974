/* parallel.h: a parallel-for over row chunks for the host-side work of a benchmark (input
 * generation, the double reference, the correctness check), which on a 2^27-element case
 * would otherwise dwarf the GPU time. Chunks depend on the shape only, never on the thread
 * count, so generated inputs are the same on every machine. */
#ifndef SML_BENCH_PARALLEL_H
#define SML_BENCH_PARALLEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*sml_chunk_fn)(void *ctx, int64_t chunk, int64_t row0, int64_t row1);

/* Rows per chunk for a row length: about 2^18 elements, at least one row. */
int64_t sml_chunk_rows(int64_t cols);
/* Calls fn for every chunk [row0, row1) of `rows`, on up to `threads` threads (<= 1: inline).
 * fn must only touch its own rows. */
void sml_parallel_rows(int64_t rows, int64_t chunk_rows, int threads, sml_chunk_fn fn, void *ctx);
/* Online processors, at least 1, at most 64. */
int sml_host_threads(void);

#ifdef __cplusplus
}
#endif
#endif
