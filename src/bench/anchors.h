/* anchors.h: baselines measured on another machine (the CSV files of ../shared/anchors, from
 * an H200), read so the bench can print them beside this run's numbers. They are never used
 * in a decision: another machine, another method (same buffers every call, so small shapes
 * ran from L2). */
#ifndef SML_BENCH_ANCHORS_H
#define SML_BENCH_ANCHORS_H

#include <stddef.h>
#include <stdint.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sml_anchor {
    int found;
    double best_gbps;       /* the best public baseline for the cell */
    char best_backend[32];
    double cudnn_gbps;      /* 0 when the file has none */
    double copy_kernel_gbps, memcpy_gbps; /* same-bytes copies on that machine; 0 if absent */
} sml_anchor;

typedef struct sml_anchor_cell {
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols;
    sml_anchor a;
} sml_anchor_cell;

typedef struct sml_anchors {
    char source[256]; /* the file, as given */
    char label[160];  /* e.g. "NVIDIA H200 (132 SMs, driver 580.159), CUDA 13.0, ..." or the file name */
    size_t n, cap;
    sml_anchor_cell *cells;
} sml_anchors;

/* Reads either format of ../shared/anchors: h200-anchors-best.csv (one row per cell with a
 * `best` column) or h200-baselines.csv (one row per backend and cell, '#' comment lines).
 * SML_ERR_IO / SML_ERR_FORMAT with a line-numbered reason in err. */
sml_status sml_anchors_load(const char *path, sml_anchors *out, char *err, size_t errlen);
void sml_anchors_free(sml_anchors *a);
/* 1 and *out filled when the file has the cell. */
int sml_anchors_find(const sml_anchors *a, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                     sml_anchor *out);

#ifdef __cplusplus
}
#endif
#endif
