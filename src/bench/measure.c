/* measure.c: see measure.h. The batch size is chosen once from a probe launch, so every
 * sample of a measurement averages the same number of launches; each launch of a batch uses
 * the next buffer set, so rotation keeps working inside a batch. With the launch hold a GPU
 * sample is queued whole behind the hold kernel and timed from that kernel's end; a sample
 * whose hold ran out of time is taken again (measure.h, SML_HOLD_MAX_LOST). */
#include "bench/measure.h"
#include "bench/launch_hold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

double sml_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The clock a sample is read with: host wall time, or CUDA events on the stream. */
typedef struct timer {
    sml_device dev;
    void *stream;
#ifdef SML_HAVE_CUDA
    cudaEvent_t start, stop;
    sml_hold hold;
#endif
    int lost;   /* the last sample's hold ran out of time */
    int nlost;  /* samples whose hold ran out; at SML_HOLD_MAX_LOST the holds stop */
    int unheld; /* the next sample only: no hold (the lazy-initialising first launch) */
    double t0;
} timer;

static sml_status timer_init(timer *t, sml_device dev, void *stream, int hold, char *err,
                             size_t errlen) {
    t->dev = dev;
    t->stream = stream;
    t->lost = 0;
    t->nlost = 0;
    t->unheld = 0;
    if (dev == SML_DEVICE_CPU) return SML_OK;
#ifdef SML_HAVE_CUDA
    t->hold.host = NULL;
    cudaError_t e = cudaEventCreate(&t->start);
    if (e == cudaSuccess) {
        e = cudaEventCreate(&t->stop);
        if (e != cudaSuccess) cudaEventDestroy(t->start);
    }
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaEventCreate: %s", cudaGetErrorString(e));
        return SML_ERR_CUDA;
    }
    if (hold) {
        const sml_status s = sml_hold_init(&t->hold);
        if (s != SML_OK) {
            snprintf(err, errlen, "the launch hold's pinned flag: %s",
                     cudaGetErrorString(cudaGetLastError()));
            cudaEventDestroy(t->start);
            cudaEventDestroy(t->stop);
            return s;
        }
    }
    return SML_OK;
#else
    (void)hold;
    snprintf(err, errlen, "GPU timing requested in a build without CUDA");
    return SML_ERR_NO_DEVICE;
#endif
}

static void timer_free(timer *t) {
#ifdef SML_HAVE_CUDA
    if (t->dev == SML_DEVICE_GPU) {
        cudaEventDestroy(t->start);
        cudaEventDestroy(t->stop);
        sml_hold_free(&t->hold);
    }
#else
    (void)t;
#endif
}

static sml_status timer_begin(timer *t, char *err, size_t errlen) {
    if (t->dev == SML_DEVICE_CPU) {
        t->t0 = sml_now();
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    if (!t->unheld && sml_hold_stream(&t->hold, t->stream) != SML_OK) {
        snprintf(err, errlen, "launching the hold kernel: %s",
                 cudaGetErrorString(cudaGetLastError()));
        return SML_ERR_CUDA;
    }
    cudaError_t e = cudaEventRecord(t->start, (cudaStream_t)t->stream);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaEventRecord: %s", cudaGetErrorString(e));
        return SML_ERR_CUDA;
    }
    return SML_OK;
#else
    (void)err;
    (void)errlen;
    return SML_ERR_NO_DEVICE;
#endif
}

/* Waits for the launches since timer_begin and returns their elapsed seconds. */
static sml_status timer_end(timer *t, double *seconds, char *err, size_t errlen) {
    if (t->dev == SML_DEVICE_CPU) {
        *seconds = sml_now() - t->t0;
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    cudaError_t e = cudaEventRecord(t->stop, (cudaStream_t)t->stream);
    sml_hold_release(&t->hold); /* whatever happened: no hold outlives its sample */
    if (e == cudaSuccess) e = cudaEventSynchronize(t->stop);
    t->lost = sml_hold_lost(&t->hold);
    if (t->lost && ++t->nlost >= SML_HOLD_MAX_LOST) sml_hold_free(&t->hold); /* no more holds */
    if (e == cudaSuccess) e = cudaGetLastError();
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, t->start, t->stop);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "timing the launches: %s", cudaGetErrorString(e));
        return SML_ERR_CUDA;
    }
    *seconds = 1e-3 * (double)ms;
    return SML_OK;
#else
    (void)seconds;
    (void)err;
    (void)errlen;
    return SML_ERR_NO_DEVICE;
#endif
}

typedef struct runner {
    sml_launch_cb fn;
    void *ctx;
    int nsets, next;
    long long launches;
} runner;

static sml_status run_batch(runner *r, int batch, char *err, size_t errlen) {
    for (int i = 0; i < batch; i++) {
        sml_status s = r->fn(r->ctx, r->next);
        if (s != SML_OK) {
            snprintf(err, errlen, "launch %lld (buffer set %d) failed: %s", r->launches, r->next,
                     sml_strerror(s));
            return s;
        }
        r->next = (r->next + 1) % r->nsets;
        r->launches++;
    }
    return SML_OK;
}

static sml_status timed_batch(timer *t, runner *r, int batch, double *seconds, char *err,
                              size_t errlen) {
    sml_status s = timer_begin(t, err, errlen);
    if (s == SML_OK) s = run_batch(r, batch, err, errlen);
    double dummy;
    /* Always close the timing, so a failed launch still drains the stream. */
    sml_status s2 = timer_end(t, s == SML_OK ? seconds : &dummy, err, errlen);
    return s != SML_OK ? s : s2;
}

sml_status sml_measure(sml_device dev, void *stream, sml_launch_cb fn, void *ctx, int nsets,
                       const sml_measure_opts *o, sml_measurement *m, char *err, size_t errlen) {
    m->batch = 1;
    m->stop = SML_STOP_CONTINUE;
    m->seconds = 0;
    m->launches = 0;
    m->held = 0;
    m->holds_lost = 0;
    sml_summarize(NULL, 0, &m->t);
    timer t;
    sml_status s = timer_init(&t, dev, stream, o->hold, err, errlen);
    if (s != SML_OK) return s;
    runner r = {fn, ctx, nsets > 0 ? nsets : 1, 0, 0};
    int cap = o->stop.max_samples > 0 ? o->stop.max_samples : 1;
    double *samples = malloc((size_t)cap * sizeof *samples);
    if (!samples) {
        timer_free(&t);
        return SML_ERR_OUT_OF_MEMORY;
    }
    /* Probe: the first launch pays for lazy initialisation, the second is timed to size
     * the batch. The first is not held: an allocation in it would wait for the GPU, and so
     * for the hold's time limit. */
    double probe = 0;
    t.unheld = 1;
    s = timed_batch(&t, &r, 1, &probe, err, errlen);
    t.unheld = 0;
    if (s == SML_OK) s = timed_batch(&t, &r, 1, &probe, err, errlen);
    if (s == SML_OK) {
        double want = o->sample_seconds > 0 ? o->sample_seconds : 0;
        double b = probe > 0 ? ceil(want / probe) : 1;
        int maxb = o->max_batch > 0 ? o->max_batch : 1;
        m->batch = b < 1 ? 1 : b > maxb ? maxb : (int)b;
        if (o->min_batch > m->batch) m->batch = o->min_batch < maxb ? o->min_batch : maxb;
        /* Warm-up: clocks settle and caches fill the way the samples will see them. */
        double w0 = sml_now(), ignored;
        do {
            s = timed_batch(&t, &r, m->batch, &ignored, err, errlen);
        } while (s == SML_OK && sml_now() - w0 < o->warmup_seconds);
    }
    int n = 0;
    double start = sml_now();
    while (s == SML_OK) {
        double sec;
        s = timed_batch(&t, &r, m->batch, &sec, err, errlen);
        if (s != SML_OK) break;
        if (t.lost) continue; /* it timed launch calls: taken again */
        samples[n++] = sec / m->batch;
        m->stop = sml_should_stop(samples, n, sml_now() - start, &o->stop);
        if (m->stop == SML_STOP_CONTINUE && n >= cap) m->stop = SML_STOP_SAMPLE_CAP;
        if (m->stop != SML_STOP_CONTINUE) break;
    }
    m->seconds = sml_now() - start;
    m->launches = r.launches;
    m->held = dev == SML_DEVICE_GPU && o->hold && t.nlost < SML_HOLD_MAX_LOST;
    m->holds_lost = t.nlost;
    if (s == SML_OK) sml_summarize(samples, n, &m->t);
    free(samples);
    timer_free(&t);
    return s;
}
