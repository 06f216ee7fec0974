/* plot_svg.h: GB/s against row length per backend, from a ledger document, written as SVG
 * (no plotting library): log2 x axis, the run's device copy bandwidth as a dashed line, the
 * copy kernel on the same bytes as a dashed grey series. */
#ifndef SML_BENCH_PLOT_SVG_H
#define SML_BENCH_PLOT_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "json/json_read.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sml_plot_opts {
    const char *op;    /* NULL: softmax if present, else the first op in the document */
    const char *dtype; /* NULL: the dtype with the most points */
    int64_t rows;      /* 0: the row count with the most distinct cols */
} sml_plot_opts;

/* info (may be NULL) receives a line saying what was plotted. SML_ERR_FORMAT when the
 * document is not a ledger or nothing matches the selection (err says which). */
sml_status sml_plot_svg(const sml_json *doc, const sml_plot_opts *o, FILE *out, char *info,
                        size_t infolen, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
