/* table.h: the human-readable output of a benchmark run, shared by `softmax-lab bench` and
 * the perf test: one table per case as it finishes, and the decisions at the end. */
#ifndef SML_BENCH_TABLE_H
#define SML_BENCH_TABLE_H

#include <stdio.h>

#include "bench/bench.h"
#include "bench/ledger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The run's header: device, copy bandwidth, method, notes. */
void sml_bench_print_header(FILE *f, const sml_bench_run *run);
/* Case c: one line per backend and the copy reference. */
void sml_bench_print_case(FILE *f, const sml_bench_run *run, size_t c);
/* One line per ledger record: kernel, claim, status, reason. */
void sml_bench_print_decisions(FILE *f, const sml_bench_run *run, const sml_ledger *l);

#ifdef __cplusplus
}
#endif
#endif
