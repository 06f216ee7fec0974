/* sweeps.h: the named shape sweeps of the benchmark and how they shrink on a CPU-only host. */
#ifndef SML_BENCH_SWEEPS_H
#define SML_BENCH_SWEEPS_H

#include <stddef.h>
#include <stdint.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sml_sweep_shape {
    int64_t rows, cols;
    unsigned dtypes;        /* bit (1u << dtype) of the dtypes this shape is measured in */
    int64_t requested_rows; /* the sweep's rows before a CPU-only shrink; 0: not shrunk */
} sml_sweep_shape;

#define SML_SWEEP_MAX_SHAPES 32

typedef struct sml_sweep {
    char name[32];
    size_t n;
    sml_sweep_shape shape[SML_SWEEP_MAX_SHAPES];
} sml_sweep;

/* "seeds", "cols", "long", "short", "standard" (their union). SML_ERR_INVALID_ARG if unknown. */
sml_status sml_sweep_get(const char *name, sml_sweep *out);
/* The names, for --help: "seeds, cols, long, short, standard". */
const char *sml_sweep_names(void);
#define SML_SWEEP_NAMES "seeds, seed-row-fusion, seed-cutedsl, cols, long, short, standard"
/* One line describing a sweep's shapes, for --help and the ledger. */
void sml_sweep_describe(const char *name, char *buf, size_t n);

/* With no GPU the CPU backends must time each case in seconds: a shape keeps its cols (the
 * cols decide the shape class) and loses rows until rows * cols <= max_elems (at least one
 * row). Returns the new row count. */
int64_t sml_sweep_shrink_rows(int64_t rows, int64_t cols, int64_t max_elems);
#define SML_CPU_MAX_ELEMS ((int64_t)1 << 20)

#ifdef __cplusplus
}
#endif
#endif
