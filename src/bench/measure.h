/* measure.h: timing one launchable thing the way docs/BENCHMARKING.md describes: a probe
 * launch to size the batch, a warm-up, then samples until the stopping rule says so. GPU
 * samples are CUDA events around a batch of back-to-back launches on the stream (queued
 * behind the launch hold unless told not to); CPU samples are CLOCK_MONOTONIC around the same. */
#ifndef SML_BENCH_MEASURE_H
#define SML_BENCH_MEASURE_H

#include "bench/stats.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One launch using buffer set `set` (0 <= set < nsets); asynchronous on the GPU. */
typedef sml_status (*sml_launch_cb)(void *ctx, int set);

typedef struct sml_measure_opts {
    sml_stop_rule stop;
    double sample_seconds; /* launches are batched until one sample takes about this long */
    double warmup_seconds; /* run at least this long before the first sample */
    int max_batch;
    int min_batch; /* launches per sample at least this many (<= 1: no minimum) */
    int hold;      /* GPU: queue each sample behind the launch hold (launch_hold.h) */
} sml_measure_opts;

typedef struct sml_measurement {
    sml_summary t; /* seconds per launch */
    int batch;     /* launches per sample */
    sml_stop_reason stop;
    double seconds; /* wall time spent sampling */
    int held;       /* GPU: every sample was queued behind the launch hold */
    int holds_lost; /* GPU: samples whose hold ran out of time, each discarded and taken again */
    long long launches;
} sml_measurement;

/* A sample whose hold runs out of time timed some of the host's launch calls: it is discarded
 * and taken again. After this many such samples in one measurement the holds stop and the rest
 * is timed as made (`held` 0). */
#define SML_HOLD_MAX_LOST 3

/* On error returns the status and writes a line to err (the CUDA reason where there is one). */
sml_status sml_measure(sml_device dev, void *stream, sml_launch_cb fn, void *ctx, int nsets,
                       const sml_measure_opts *o, sml_measurement *m, char *err, size_t errlen);

/* Seconds since an arbitrary point (CLOCK_MONOTONIC). */
double sml_now(void);

#ifdef __cplusplus
}
#endif
#endif
