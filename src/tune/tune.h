/* tune.h: `softmax-lab tune`, plan tables measured on the GPU at hand. For each cell of a
 * sweep (op, dtype, rows, cols) the candidate plans (each family's launcher default and a
 * small grid of its knobs, sml_tune_candidates) are timed with the bench's own method
 * (bench/measure.h: CUDA events, warm-up, medians, the launch hold); the fastest wins unless
 * the rules' own plan (what `auto` runs without a table) is within min_gain of it, and the
 * cells become bands (sml_tune_bands) of a table keyed by this GPU. Nothing the tuner does on
 * the host lies inside a timed sample. */
#ifndef SML_TUNE_TUNE_H
#define SML_TUNE_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "core/plan_table.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One measured cell: the plan chosen, and the rules' plan beside it. */
typedef struct sml_tune_cell {
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols;
    sml_plan best, rules;
    double best_s, rules_s; /* median seconds per launch (the rules' from the same run) */
    int tried, ran;         /* candidates tried; those that could run the cell */
} sml_tune_cell;

/* At most this many candidates a cell. */
#define SML_TUNE_MAX_CANDIDATES 32

/* The candidates of a cell on a GPU with (clusters = 1) or without cluster and cooperative
 * launch: each family's default where it may hold the row, then the knob grid (warp K x R to
 * 1,024 columns; block K to 32,768; split C and coop stages past 16,384). Some are refused at
 * launch for some shapes (SML_ERR_UNSUPPORTED) and are then not timed. Returns the count. */
int sml_tune_candidates(sml_op op, int64_t cols, int clusters, sml_plan *out, int cap);

/* Cells of any ops and dtypes (each (op, dtype) in its own bands) into a table keyed `key`:
 * per op and dtype, each measured column count gets the columns up to the geometric midpoint
 * to its neighbours (the first and the last measured count end the bands), rows the same way
 * where one column count was measured at several row counts (else every row count), and
 * neighbouring column bands with the same plans merge. Sorted as the loader wants it. */
sml_status sml_tune_bands(const sml_tune_cell *cells, size_t n, const sml_plan_key *key,
                          sml_plan_table *out, char *err, size_t errlen);

typedef struct sml_tune_opts {
    const char *sweep; /* a sweep name (bench/sweeps.h) */
    unsigned ops;      /* bit per sml_op */
    unsigned dtypes;   /* bit per sml_dtype; filters the sweep's own */
    double min_gain;   /* the rules' plan stays unless the best is this much faster (0.01: 1%) */
    int progress;      /* 1: a line per cell on stderr */
} sml_tune_opts;

/* Run the tuner on the current device: *cells (malloc'ed) and *ncells, and the GPU's key.
 * *failed (may be NULL): candidate launches that failed other than with SML_ERR_UNSUPPORTED
 * (each said on stderr and left out). SML_ERR_NO_DEVICE without a GPU; other errors with err
 * set. */
sml_status sml_tune_run(const sml_tune_opts *o, sml_tune_cell **cells, size_t *ncells,
                        sml_plan_key *key, int *failed, char *err, size_t errlen);

/* Cells and candidate measurements the run will make, and its rough duration in seconds. */
void sml_tune_estimate(const sml_tune_opts *o, int clusters, size_t *cells, size_t *candidates,
                       double *seconds);

#ifdef __cplusplus
}
#endif
#endif
