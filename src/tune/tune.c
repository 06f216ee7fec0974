/* tune.c: the tuner's run on the GPU at hand (tune.h). Per shape and dtype one set of inputs
 * (bench/inputs.h: y and dy of a softmax backward case; forward ops read dy, normal logits, as
 * their x), rotated over enough buffer sets to keep the working set past 4x L2 as the bench
 * does; per op every candidate is launched once (a plan the kernel refuses is skipped) and
 * timed with sml_measure under the bench's default options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/inputs.h"
#include "bench/parallel.h"
#include "core/internal.h"
#include "core/plan_cache.h"
#include "kernels/auto_dispatch.h"
#include "kernels/tuning.h"
#include "tune/tune.h"

typedef struct shape_bufs {
    sml_buffer y, dy, out;
    int nsets;
    size_t stride, tensor;
} shape_bufs;

typedef struct tune_ctx {
    int failed; /* candidate plans whose launch failed other than SML_ERR_UNSUPPORTED */
    sml_handle *h;
    sml_gpu_facts g;
    sml_gpu_info info;
    sml_measure_opts mo;
    sml_problem *p; /* one per buffer set */
    const sml_plan *plan;
} tune_ctx;

static sml_status launch_set(void *arg, int set) {
    tune_ctx *c = arg;
    return sml_plan_run(c->h, &c->p[set], c->plan);
}

/* The bench's own measurement options (runner.c's measure_opts on its default config). */
static void bench_opts(sml_measure_opts *o) {
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    memset(o, 0, sizeof *o);
    o->stop = cfg.stop;
    o->sample_seconds = cfg.gpu_sample_s;
    o->warmup_seconds = cfg.warmup_s;
    o->max_batch = cfg.max_batch;
    o->min_batch = cfg.gpu_min_batch;
    o->hold = cfg.gpu_hold;
}

static void bufs_free(shape_bufs *b) {
    sml_buffer_free(&b->y);
    sml_buffer_free(&b->dy);
    sml_buffer_free(&b->out);
}

/* Inputs of one shape and dtype on the device, nsets copies: as many as keep a forward case's
 * two tensors past 4x L2 (the bench's cold-cache rule; a backward case's three then span
 * more), at most 256. */
static sml_status bufs_make(const tune_ctx *c, int64_t rows, int64_t cols, sml_dtype dt,
                            shape_bufs *b, char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    b->tensor = (size_t)rows * (size_t)cols * sml_dtype_size(dt);
    b->stride = (b->tensor + 255) / 256 * 256;
    const double l2 = c->info.l2_bytes ? (double)c->info.l2_bytes : 128.0 * 1024 * 1024;
    const double want = ceil(4.0 * l2 / (2.0 * (double)b->tensor));
    b->nsets = want < 1 ? 1 : want > 256 ? 256 : (int)want;
    void *hy = malloc(b->tensor), *hdy = malloc(b->tensor);
    sml_status s = hy && hdy ? SML_OK : SML_ERR_OUT_OF_MEMORY;
    if (s == SML_OK)
        s = sml_bench_make_inputs(SML_SOFTMAX_BWD, dt, rows, cols, 0x7E57ull ^ (uint64_t)cols,
                                  sml_host_threads(), hy, hdy);
    const size_t total = b->stride * (size_t)b->nsets;
    if (s == SML_OK) s = sml_buffer_alloc(&b->y, SML_DEVICE_GPU, total);
    if (s == SML_OK) s = sml_buffer_alloc(&b->dy, SML_DEVICE_GPU, total);
    if (s == SML_OK) s = sml_buffer_alloc(&b->out, SML_DEVICE_GPU, total);
    for (int i = 0; s == SML_OK && i < b->nsets; i++) {
        s = sml_buffer_upload(&b->y, b->stride * (size_t)i, hy, b->tensor);
        if (s == SML_OK) s = sml_buffer_upload(&b->dy, b->stride * (size_t)i, hdy, b->tensor);
    }
    free(hy);
    free(hdy);
    if (s != SML_OK) {
        sml_errorf(s, err, errlen, "inputs of %lldx%lld %s (%d sets): %s", (long long)rows,
                   (long long)cols, sml_dtype_name(dt), b->nsets, sml_strerror(s));
        bufs_free(b);
    }
    return s;
}

/* Median seconds of one plan on the cell; SML_ERR_UNSUPPORTED where the kernel refuses it. */
static sml_status time_plan(tune_ctx *c, int nsets, const sml_plan *plan, double *sec, char *err,
                            size_t errlen) {
    c->plan = plan;
    sml_status s = sml_plan_run(c->h, &c->p[0], plan);
    if (s == SML_OK) s = sml_device_sync(SML_DEVICE_GPU, NULL);
    if (s != SML_OK) {
        if (s != SML_ERR_UNSUPPORTED) {
            char d[128];
            sml_errorf(s, err, errlen, "%s: %s (%s)", sml_plan_describe(plan, d, sizeof d),
                       sml_strerror(s), sml_last_cuda_error());
        }
        return s;
    }
    sml_measurement m;
    s = sml_measure(SML_DEVICE_GPU, NULL, launch_set, c, nsets, &c->mo, &m, err, errlen);
    if (s == SML_OK) *sec = m.t.median;
    return s;
}

static int same_plan(const sml_plan *a, const sml_plan *b) { return !memcmp(a, b, sizeof *a); }

static double median3(double a, double b, double x) {
    return a > b ? (b > x ? b : a > x ? x : a) : (a > x ? a : b > x ? x : b);
}

/* One cell: every candidate, then the best and the rules' plan timed twice more, alternately,
 * so that the choice between the two rests on three medians each. */
static sml_status tune_cell(tune_ctx *c, int nsets, sml_tune_cell *cell, double min_gain, char *err,
                            size_t errlen) {
    sml_auto_path path;
    sml_status s = sml_auto_decide(c->h, cell->op, cell->dtype, cell->rows, cell->cols, 1, &path);
    if (s != SML_OK) return sml_errorf(s, err, errlen, "the rules' choice: %s", sml_strerror(s));
    memset(&cell->rules, 0, sizeof cell->rules);
    cell->rules.family = (sml_plan_family)path; /* the same order (tests/unit/test_tune_bands) */
    sml_plan cand[SML_TUNE_MAX_CANDIDATES];
    cell->tried = sml_tune_candidates(cell->op, cell->cols, c->g.clusters && c->g.coop, cand,
                                      SML_TUNE_MAX_CANDIDATES);
    cell->ran = 0;
    cell->best_s = cell->rules_s = INFINITY;
    for (int i = 0; i < cell->tried; i++) {
        double t;
        s = time_plan(c, nsets, &cand[i], &t, err, errlen);
        if (s == SML_ERR_UNSUPPORTED) continue;
        if (s != SML_OK) {
            /* kernels/tuning.h promises SML_ERR_UNSUPPORTED for a plan that cannot run: any
             * other failure is a kernel bug, said here and kept out of the table. A sticky
             * CUDA error fails the rules' plan too, and with it the run. */
            fprintf(stderr, "tune: %s %s %lldx%lld: %s (left out)\n", sml_op_name(cell->op),
                    sml_dtype_name(cell->dtype), (long long)cell->rows, (long long)cell->cols, err);
            sml_gpu_forget_error();
            c->failed++;
            continue;
        }
        cell->ran++;
        if (t < cell->best_s) {
            cell->best_s = t;
            cell->best = cand[i];
        }
        if (same_plan(&cand[i], &cell->rules)) cell->rules_s = t;
    }
    if (!cell->ran) return sml_errorf(SML_ERR_INTERNAL, err, errlen, "no candidate plan ran");
    if (same_plan(&cell->best, &cell->rules)) return SML_OK;
    double b[3] = {cell->best_s, 0, 0}, r[3] = {cell->rules_s, 0, 0};
    for (int i = 1; i < 3 && s == SML_OK; i++) {
        s = time_plan(c, nsets, &cell->rules, &r[i], err, errlen);
        if (s == SML_OK) s = time_plan(c, nsets, &cell->best, &b[i], err, errlen);
    }
    if (s != SML_OK) return s;
    cell->best_s = median3(b[0], b[1], b[2]);
    cell->rules_s = median3(r[0], r[1], r[2]);
    if (!(cell->best_s < cell->rules_s * (1.0 - min_gain))) {
        cell->best = cell->rules;
        cell->best_s = cell->rules_s;
    }
    return SML_OK;
}

/* Problems over the buffer sets for one op: forward reads dy (normal logits) as x. */
static void problems(tune_ctx *c, const shape_bufs *b, sml_op op, sml_dtype dt, int64_t rows,
                     int64_t cols) {
    const int bwd = sml_op_is_backward(op);
    for (int i = 0; i < b->nsets; i++) {
        const size_t off = b->stride * (size_t)i;
        sml_problem p = {op, dt, rows, cols, cols, NULL, NULL, (char *)b->out.ptr + off, NULL};
        p.x = (const char *)(bwd ? b->y.ptr : b->dy.ptr) + off;
        p.dy = bwd ? (const char *)b->dy.ptr + off : NULL;
        c->p[i] = p;
    }
}

static void progress_line(const sml_tune_cell *cell, size_t i, size_t n, double elapsed) {
    char b[128], r[128];
    fprintf(stderr,
            "[%zu/%zu %.0f s] %s %s %lldx%lld: %s %.2f us (rules %s %.2f us, %d of %d plans ran)\n",
            i + 1, n, elapsed, sml_op_name(cell->op), sml_dtype_name(cell->dtype),
            (long long)cell->rows, (long long)cell->cols,
            sml_plan_describe(&cell->best, b, sizeof b), cell->best_s * 1e6,
            sml_plan_describe(&cell->rules, r, sizeof r), cell->rules_s * 1e6, cell->ran,
            cell->tried);
}

/* The cells of one shape and dtype, one per op asked for. */
static sml_status tune_shape(tune_ctx *c, const sml_tune_opts *o, int64_t rows, int64_t cols,
                             sml_dtype dt, sml_tune_cell *cells, size_t *n, size_t total, double t0,
                             char *err, size_t errlen) {
    shape_bufs b;
    sml_status s = bufs_make(c, rows, cols, dt, &b, err, errlen);
    if (s != SML_OK) return s;
    c->p = malloc((size_t)b.nsets * sizeof *c->p);
    if (!c->p) s = sml_errorf(SML_ERR_OUT_OF_MEMORY, err, errlen, "out of memory");
    for (int op = 0; s == SML_OK && op < SML_OP_COUNT; op++) {
        if (!(o->ops & (1u << op))) continue;
        sml_tune_cell *cell = &cells[*n];
        memset(cell, 0, sizeof *cell);
        cell->op = (sml_op)op;
        cell->dtype = dt;
        cell->rows = rows;
        cell->cols = cols;
        problems(c, &b, (sml_op)op, dt, rows, cols);
        s = tune_cell(c, b.nsets, cell, o->min_gain, err, errlen);
        if (s == SML_OK && o->progress) progress_line(cell, *n, total, sml_now() - t0);
        if (s == SML_OK) ++*n;
    }
    free(c->p);
    c->p = NULL;
    bufs_free(&b);
    return s;
}

sml_status sml_tune_run(const sml_tune_opts *o, sml_tune_cell **cells, size_t *ncells,
                        sml_plan_key *key, int *failed, char *err, size_t errlen) {
    if (failed) *failed = 0;
    *cells = NULL;
    *ncells = 0;
    const int dev = sml_gpu_current();
    if (!sml_gpu_available() || dev < 0)
        return sml_errorf(SML_ERR_NO_DEVICE, err, errlen,
                          "no GPU: tune times plans on the GPU at hand");
    sml_sweep sw;
    if (sml_sweep_get(o->sweep, &sw) != SML_OK)
        return sml_errorf(SML_ERR_INVALID_ARG, err, errlen, "unknown sweep '%s'", o->sweep);
    tune_ctx c;
    memset(&c, 0, sizeof c);
    bench_opts(&c.mo);
    sml_status s = sml_handle_create(&c.h);
    if (s == SML_OK) s = sml_gpu_facts_get(c.h, &c.g);
    if (s == SML_OK) s = sml_gpu_query(&c.info);
    if (s == SML_OK) s = sml_gpu_plan_key(dev, key);
    size_t total = 0, ncand = 0;
    double est = 0;
    sml_tune_estimate(o, c.g.clusters && c.g.coop, &total, &ncand, &est);
    sml_tune_cell *out = calloc(total ? total : 1, sizeof *out);
    if (s == SML_OK && !out) s = SML_ERR_OUT_OF_MEMORY;
    if (s != SML_OK) {
        free(out);
        sml_handle_destroy(c.h);
        return sml_errorf(s, err, errlen, "starting on the GPU: %s (%s)", sml_strerror(s),
                          sml_last_cuda_error());
    }
    if (o->progress)
        fprintf(stderr,
                "tune: %s (%d SMs, %.1f DRAM bytes per SM clock): %zu cells, %zu candidate plans, "
                "about %.0f s\n",
                key->name, key->sms, key->dram, total, ncand, est);
    const double t0 = sml_now();
    size_t n = 0;
    for (size_t i = 0; s == SML_OK && i < sw.n; i++)
        for (int d = 0; s == SML_OK && d < SML_DTYPE_COUNT; d++)
            if (sw.shape[i].dtypes & o->dtypes & (1u << d))
                s = tune_shape(&c, o, sw.shape[i].rows, sw.shape[i].cols, (sml_dtype)d, out, &n,
                               total, t0, err, errlen);
    sml_handle_destroy(c.h);
    if (s != SML_OK) {
        free(out);
        return s;
    }
    if (o->progress) fprintf(stderr, "tune: %zu cells in %.1f s\n", n, sml_now() - t0);
    *cells = out;
    *ncells = n;
    if (failed) *failed = c.failed;
    return SML_OK;
}
