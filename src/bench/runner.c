/* runner.c: executes a benchmark plan (see bench.h). Order per case: inputs, reference,
 * then per kernel: poison, one launch, check, time; then the copy reference on the same
 * number of buffer sets. Checking before timing means a kernel that corrupts memory is
 * caught before its numbers are believed. */
#include "bench/bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/copy_ref.h"
#include "bench/inputs.h"
#include "bench/parallel.h"
#include "core/internal.h"
#include "core/plan_cache.h"
#include "core/rng.h"

#ifndef SML_VERSION
#define SML_VERSION "unknown"
#endif

#define ALIGN 256

void sml_bench_config_default(sml_bench_config *c) {
    memset(c, 0, sizeof *c);
    c->stop.min_samples = 10;
    c->stop.max_samples = 1000;
    c->stop.noise = 0.02;
    c->stop.max_seconds = 0.5;
    c->gpu_sample_s = 200e-6;
    c->cpu_sample_s = 2e-3;
    c->warmup_s = 0.01;
    c->max_batch = 1000;
    /* At least 4 launches per GPU sample, so that the launch call on the host (4.5-7 us for
     * warp, block, online, split and cuDNN, 10-20 us for coop's cooperative launch, on an
     * H100 host) overlaps the previous launch as it does in a stream of
     * work, instead of being timed once per 0.2-0.6 ms sample. */
    c->gpu_min_batch = 4;
    /* Each GPU sample queued whole behind the hold kernel: where a kernel takes less GPU time
     * than its launch call takes the host, back-to-back launches would time the host. */
    c->gpu_hold = 1;
    c->l2_warm = 0;
    c->l2_multiple = 4.0;
    c->max_sets = 256;
    c->seed = 0x5EEDBE4C5EEDBE4Cull;
    c->margin = 0.03;
    c->threads = 0;
    c->check_max_elems = (int64_t)1 << 24;
    c->progress = 1;
    c->time_limit_s = 0;
}

int sml_bench_partial(const sml_bench_run *run) { return run->ncases < run->ncases_planned; }

const char *sml_bench_partial_text(const sml_bench_run *run, char *buf, size_t n) {
    snprintf(buf, n, "the time limit (%g s) stopped the run after %zu of %zu cases",
             run->cfg.time_limit_s, run->ncases, run->ncases_planned);
    return buf;
}

const char *sml_bench_verdict_name(sml_bench_verdict v) {
    switch (v) {
    case SML_VERDICT_OK: return "ok";
    case SML_VERDICT_WRONG: return "WRONG";
    case SML_VERDICT_ERROR: return "ERROR";
    case SML_VERDICT_KNOWN_DEVIATION: return "KNOWN-DEV";
    }
    return "?";
}

int sml_bench_verdict_failed(sml_bench_verdict v) {
    return v == SML_VERDICT_WRONG || v == SML_VERDICT_ERROR;
}

int sml_bench_parse_check_elems(const char *s, int64_t *out) {
    if (!strcmp(s, "all")) {
        *out = 0;
        return 1;
    }
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (!*s || *end || errno || n < 1 || n > ((long long)1 << 40)) return 0;
    *out = n;
    return 1;
}

static void note(char *notes, size_t len, const char *fmt, const char *arg) {
    size_t used = strlen(notes);
    if (used + 2 >= len) return;
    if (used) {
        notes[used++] = ' ';
        notes[used] = 0;
    }
    snprintf(notes + used, len - used, fmt, arg);
}

int sml_bench_supports(const sml_kernel *k, sml_op op, sml_dtype dt, int64_t cols, int gpu) {
    if (!k || !k->launch) return 0;
    if (k->device == SML_DEVICE_GPU && !gpu) return 0;
    if (!(k->ops & (1u << op)) || !(k->dtypes & (1u << dt))) return 0;
    if (cols < k->min_cols || (k->max_cols > 0 && cols > k->max_cols)) return 0;
    return 1;
}

static int runnable(const sml_kernel *k, int gpu) {
    return k && k->launch && (k->device == SML_DEVICE_CPU || gpu);
}

static int add_kernel(const sml_kernel *k, int baseline, const sml_kernel **out, int *flags,
                      size_t *n) {
    for (size_t i = 0; i < *n; i++)
        if (out[i] == k) return 1;
    if (*n >= SML_MAX_KERNELS) return 0;
    out[*n] = k;
    flags[*n] = baseline;
    (*n)++;
    return 1;
}

static void add_baseline(const char *name, int gpu, const sml_kernel **out, int *flags, size_t *n) {
    const sml_kernel *b = sml_kernel_find(name);
    if (runnable(b, gpu)) add_kernel(b, 1, out, flags, n);
}

sml_status sml_bench_select(const char *spec, int gpu, const sml_kernel **out, int *baseline_only,
                            size_t *n, char *notes, size_t notes_len, char *err, size_t errlen) {
    *n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec && spec[0] ? spec : "all");
    int dropped_gpu = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int any = !strcmp(tok, "all"), want_gpu = !strcmp(tok, "gpu"),
            want_cpu = !strcmp(tok, "cpu");
        if (any || want_gpu || want_cpu) {
            for (size_t i = 0; i < sml_kernel_count(); i++) {
                const sml_kernel *k = sml_kernel_at(i);
                int is_gpu = k->device == SML_DEVICE_GPU;
                int pick = any ? (gpu ? is_gpu : !is_gpu) : (want_gpu ? is_gpu : !is_gpu);
                if (!pick) continue;
                if (!runnable(k, gpu)) {
                    if (is_gpu) dropped_gpu = 1;
                    continue;
                }
                add_kernel(k, 0, out, baseline_only, n);
            }
            if (any && !gpu) dropped_gpu = 1;
            continue;
        }
        const sml_kernel *k = sml_kernel_find(tok);
        if (!k) {
            snprintf(err, errlen, "unknown backend '%s' (softmax-lab list shows the registry)",
                     tok);
            return SML_ERR_UNKNOWN_KERNEL;
        }
        if (!runnable(k, gpu)) {
            if (k->device == SML_DEVICE_GPU)
                dropped_gpu = 1;
            else
                note(notes, notes_len, "Backend %s is not built; skipped.", k->name);
            continue;
        }
        if (!add_kernel(k, 0, out, baseline_only, n)) {
            snprintf(err, errlen, "more than %d backends", SML_MAX_KERNELS);
            return SML_ERR_INVALID_ARG;
        }
    }
    if (dropped_gpu)
        note(notes, notes_len, "%s",
             gpu ? "Some GPU backends are not built in this build (no cuDNN?); skipped."
                 : "GPU backends are unavailable on this machine (no CUDA device, or built "
                   "without CUDA): only CPU backends were run.");
    /* Speedup columns and claims need their baselines measured on the same input. */
    size_t asked = *n;
    for (size_t i = 0; i < asked; i++) {
        const sml_kernel *k = out[i];
        if (k->device == SML_DEVICE_GPU) {
            add_baseline("cudnn", gpu, out, baseline_only, n);
            add_baseline("naive", gpu, out, baseline_only, n);
        } else {
            add_baseline("cpu_naive", gpu, out, baseline_only, n);
        }
        if (k->claim.baseline) add_baseline(k->claim.baseline, gpu, out, baseline_only, n);
    }
    if (*n == 0) {
        snprintf(err, errlen, "no backend left to run: %s",
                 gpu ? "none of those is built" : "GPU backends are unavailable on this machine");
        return SML_ERR_INVALID_ARG;
    }
    return SML_OK;
}

/* Cases in a fixed order: shape, then dtype, then op. */
static size_t enumerate(const sml_bench_plan *p, sml_bench_case *out) {
    size_t n = 0;
    for (size_t s = 0; s < p->shapes.n; s++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) {
            if (!(p->shapes.shape[s].dtypes & p->dtypes & (1u << d))) continue;
            for (int o = 0; o < SML_OP_COUNT; o++) {
                if (!(p->ops & (1u << o))) continue;
                if (out) {
                    sml_bench_case *c = &out[n];
                    memset(c, 0, sizeof *c);
                    c->op = (sml_op)o;
                    c->dtype = (sml_dtype)d;
                    c->rows = p->shapes.shape[s].rows;
                    c->cols = p->shapes.shape[s].cols;
                    c->requested_rows = p->shapes.shape[s].requested_rows;
                }
                n++;
            }
        }
    return n;
}

void sml_bench_estimate_plan(const sml_bench_plan *p, const sml_bench_config *c, int gpu,
                             sml_bench_estimate *e) {
    memset(e, 0, sizeof *e);
    size_t n = enumerate(p, NULL);
    sml_bench_case *cases = calloc(n ? n : 1, sizeof *cases);
    if (!cases) return;
    enumerate(p, cases);
    e->cases = n;
    e->threads = c->threads > 0 ? c->threads : sml_host_threads();
    for (size_t i = 0; i < n; i++) {
        double elems = (double)cases[i].rows * (double)cases[i].cols;
        sml_rowset rs; /* the rows the run will check, by the run's own rule */
        sml_rowset_make(cases[i].rows, cases[i].cols, c->check_max_elems, &rs);
        double checked = (double)rs.total_rows * (double)cases[i].cols;
        int k = 0;
        for (size_t j = 0; j < p->nkernels; j++)
            k += sml_bench_supports(p->kernels[j], cases[i].op, cases[i].dtype, cases[i].cols, gpu);
        if (!k) continue;
        e->cases_run++;
        e->measurements += (size_t)k + 1; /* + the copy reference */
        /* Rough single-core costs measured on the development VM (16-bit dtypes are the
         * slow ones): generation 80 ns per element (200 for backward, which also computes
         * y), reference 40 ns, the check 130 ns per kernel, per checked element. */
        int bwd = sml_op_is_backward(cases[i].op);
        e->host_s += (elems * (bwd ? 200e-9 : 80e-9) + checked * (40e-9 + k * 130e-9)) / e->threads;
    }
    e->timing_bound_s = (double)e->measurements * (c->stop.max_seconds + c->warmup_s + 0.01);
    free(cases);
}

const sml_bench_result *sml_bench_find(const sml_bench_run *run, size_t c, const char *kernel) {
    for (size_t i = 0; i < run->nresults; i++)
        if (run->results[i].case_index == c && !strcmp(run->results[i].kernel, kernel))
            return &run->results[i];
    return NULL;
}

static sml_bench_result *new_result(sml_bench_run *run) {
    if (run->nresults == run->cap) {
        size_t cap = run->cap ? run->cap * 2 : 64;
        sml_bench_result *nr = realloc(run->results, cap * sizeof *nr);
        if (!nr) return NULL;
        run->results = nr;
        run->cap = cap;
    }
    sml_bench_result *r = &run->results[run->nresults++];
    memset(r, 0, sizeof *r);
    r->vs_cudnn = r->vs_naive = r->vs_best_other = NAN;
    r->gbps = r->frac_memcpy = r->frac_copy_kernel = r->frac_limit = NAN;
    r->worst_ulps = r->worst_ratio = NAN;
    return r;
}

int sml_bench_hold_lost(const sml_bench_run *run, const sml_bench_result *r) {
    return run->cfg.gpu_hold && r->timed && r->device == SML_DEVICE_GPU && !r->m.held;
}

static void measure_opts(const sml_bench_config *cfg, sml_device dev, sml_measure_opts *o) {
    o->stop = cfg->stop;
    o->sample_seconds = dev == SML_DEVICE_GPU ? cfg->gpu_sample_s : cfg->cpu_sample_s;
    o->warmup_seconds = cfg->warmup_s;
    o->max_batch = cfg->max_batch;
    o->min_batch = dev == SML_DEVICE_GPU ? cfg->gpu_min_batch : 1;
    o->hold = dev == SML_DEVICE_GPU && cfg->gpu_hold;
}

/* ---- progress ------------------------------------------------------------------------ */

typedef struct progress {
    int on, tty;
    double start, total_weight, done_weight;
    size_t ncases;
} progress;

/* On a terminal one line is rewritten at every step; in a log only each case's first step
 * is written, so a CI log gets one line per case. */
static void progress_line(progress *pg, size_t ci, const sml_bench_case *c, const char *what,
                          int case_start) {
    if (!pg->on || (!pg->tty && !case_start)) return;
    double el = sml_now() - pg->start;
    char eta[32] = "";
    if (pg->done_weight > 0 && pg->total_weight > pg->done_weight)
        snprintf(eta, sizeof eta, ", ~%.0f s left", el * (pg->total_weight / pg->done_weight - 1));
    fprintf(stderr, "%s[%zu/%zu %.0f s%s] %s %s %lldx%lld: %s%s", pg->tty ? "\r\033[K" : "", ci + 1,
            pg->ncases, el, eta, sml_op_name(c->op), sml_dtype_name(c->dtype), (long long)c->rows,
            (long long)c->cols, what, pg->tty ? "" : "\n");
    fflush(stderr);
}

/* ---- one case -------------------------------------------------------------------------- */

typedef struct dev_bufs {
    sml_device dev;
    int nsets;
    size_t stride;
    sml_buffer x, dy, out;
} dev_bufs;

static void dev_bufs_free(dev_bufs *b) {
    sml_buffer_free(&b->x);
    sml_buffer_free(&b->dy);
    sml_buffer_free(&b->out);
}

static sml_status dev_bufs_make(dev_bufs *b, sml_device dev, int nsets, const sml_bench_case *c,
                                const void *hx, const void *hdy) {
    memset(b, 0, sizeof *b);
    b->dev = dev;
    b->nsets = nsets;
    b->stride = (c->tensor_bytes + ALIGN - 1) / ALIGN * ALIGN;
    size_t total = b->stride * (size_t)nsets;
    int bwd = sml_op_is_backward(c->op);
    sml_status s = sml_buffer_alloc(&b->x, dev, total);
    if (s == SML_OK) s = sml_buffer_alloc(&b->out, dev, total);
    if (s == SML_OK && bwd) s = sml_buffer_alloc(&b->dy, dev, total);
    for (int i = 0; s == SML_OK && i < nsets; i++) {
        s = sml_buffer_upload(&b->x, b->stride * (size_t)i, hx, c->tensor_bytes);
        if (s == SML_OK && bwd)
            s = sml_buffer_upload(&b->dy, b->stride * (size_t)i, hdy, c->tensor_bytes);
    }
    if (s != SML_OK) dev_bufs_free(b);
    return s;
}

static sml_problem problem_at(const dev_bufs *b, const sml_bench_case *c, int set) {
    size_t off = b->stride * (size_t)set;
    sml_problem p;
    memset(&p, 0, sizeof p);
    p.op = c->op;
    p.dtype = c->dtype;
    p.rows = c->rows;
    p.cols = c->cols;
    p.ld = c->cols;
    p.x = (const char *)b->x.ptr + off;
    p.dy = b->dy.ptr ? (const char *)b->dy.ptr + off : NULL;
    p.out = (char *)b->out.ptr + off;
    p.stream = NULL;
    return p;
}

typedef struct launch_ctx {
    const sml_kernel *k;
    sml_handle *h;
    const sml_problem *p;
} launch_ctx;

static sml_status launch_set(void *arg, int set) {
    launch_ctx *l = arg;
    return l->k->launch(l->h, &l->p[set]);
}

/* How many buffer sets a GPU case rotates through, and what the table calls it. */
static int choose_sets(const sml_bench_config *cfg, const sml_bench_env *env, size_t ws,
                       char *label, size_t n) {
    double l2 = env->gpu.l2_bytes ? (double)env->gpu.l2_bytes : 128.0 * 1024 * 1024;
    double target = cfg->l2_multiple * l2;
    if (cfg->l2_warm) {
        snprintf(label, n, "L2-warm");
        return 1;
    }
    if ((double)ws >= target) {
        snprintf(label, n, "cold");
        return 1;
    }
    double want = ceil(target / (double)(ws ? ws : 1));
    int sets = want > cfg->max_sets ? cfg->max_sets : (int)want;
    if ((double)sets * (double)ws >= target)
        snprintf(label, n, "cold (rotating %d sets)", sets);
    else
        snprintf(label, n, "L2-warm (%d sets span only %.1fx L2)", sets,
                 (double)sets * (double)ws / l2);
    return sets;
}

static void fail_result(sml_bench_result *r, const char *fmt, const char *a, const char *b) {
    r->verdict = SML_VERDICT_ERROR;
    snprintf(r->check, sizeof r->check, fmt, a, b);
}

/* The cause a kernel's worker ended with in an earlier run of this bench, or NULL. */
static const char *ended_cause(const char *ended, const char *name, char *buf, size_t n) {
    size_t len = strlen(name);
    for (const char *l = ended; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
        if (strncmp(l, name, len) || l[len] != '\t') continue;
        const char *c = l + len + 1, *e = strchr(c, '\n');
        snprintf(buf, n, "%.*s", (int)(e ? (size_t)(e - c) : strlen(c)), c);
        return buf;
    }
    return NULL;
}

static void run_kernel(sml_bench_run *run, size_t ci, const sml_kernel *k, int baseline_only,
                       sml_handle *h, dev_bufs *b, void *hout, const void *hx, const void *hdy,
                       const sml_rowset *rs, const double *want, int ref_ok, const char *ref_err,
                       int threads, progress *pg) {
    sml_bench_case *c = &run->cases[ci];
    sml_bench_result *r = new_result(run);
    if (!r) return;
    snprintf(r->kernel, sizeof r->kernel, "%s", k->name);
    r->device = k->device;
    r->baseline_only = baseline_only;
    r->case_index = ci;
    r->op = c->op;
    r->dtype = c->dtype;
    r->rows = c->rows;
    r->cols = c->cols;
    /* The kernel `auto` runs here, so that its rows can be read against that kernel's own. */
    const char *path = NULL;
    if (!strcmp(k->name, "auto") &&
        sml_auto_choice(h, c->op, c->dtype, c->rows, c->cols, &path) == SML_OK)
        snprintf(r->auto_path, sizeof r->auto_path, "%s", path);
    char cause[200];
    if (ended_cause(run->cfg.ended, k->name, cause, sizeof cause)) {
        fail_result(r, "%s%s", "not checked, not timed: the kernel's worker ", cause);
        return;
    }
    if (!ref_ok) {
        fail_result(r, "%s%s",
                    "not checked, not timed: the inputs or the reference failed: ", ref_err);
        return;
    }
    if (!b) {
        fail_result(r, "%s%s", "could not allocate the buffers: ", ref_err);
        return;
    }
    sml_problem *p = malloc((size_t)b->nsets * sizeof *p);
    if (!p) {
        fail_result(r, "%s%s", "out of memory", "");
        return;
    }
    for (int i = 0; i < b->nsets; i++) p[i] = problem_at(b, c, i);
    char what[64];
    snprintf(what, sizeof what, "checking %s", k->name);
    progress_line(pg, ci, c, what, 0);
    /* Correctness first, on poisoned output: every element must be written. */
    sml_status s = sml_buffer_fill(&b->out, 0xFF);
    if (s == SML_OK) s = sml_run(k, h, &p[0]);
    if (s == SML_OK) s = sml_device_sync(k->device, NULL);
    if (s != SML_OK) {
        fail_result(r, "run failed: %s (%s)", sml_strerror(s),
                    k->device == SML_DEVICE_GPU ? sml_last_cuda_error() : "host");
        free(p);
        return;
    }
    s = sml_buffer_download(&b->out, 0, hout, c->tensor_bytes);
    sml_check_report rep;
    sml_dev_report dev;
    sml_dev_terms terms;
    int decl = sml_dev_terms_get(k->deviation, c->op, c->dtype, &terms);
    if (s == SML_OK)
        s = sml_bench_check(c->op, c->dtype, c->cols, hx, hdy, rs, want, hout, threads,
                            decl ? &terms : NULL, &rep, &dev);
    if (s != SML_OK) {
        fail_result(r, "could not check the output: %s%s", sml_strerror(s), "");
        free(p);
        return;
    }
    r->verdict = rep.pass ? SML_VERDICT_OK : SML_VERDICT_WRONG;
    snprintf(r->check, sizeof r->check, "%s", rep.message);
    /* A declared deviation is a looser bound, checked: KNOWN-DEV only when every miss is
     * within the kernel's declared terms; a miss outside them is WRONG, naming them. */
    if (!rep.pass && decl) {
        char why[400];
        sml_dev_report_why(&dev, &terms, why, sizeof why);
        if (sml_dev_report_pass(&dev)) r->verdict = SML_VERDICT_KNOWN_DEVIATION;
        snprintf(r->check, sizeof r->check, "%.200s; %.220s", why, rep.message);
    }
    r->worst_ulps = rep.worst_ulps;
    r->worst_ratio = rep.worst_ratio;
    /* A wrong kernel is still timed: its time is shown, but never counts as a win. */
    snprintf(what, sizeof what, "timing %s", k->name);
    progress_line(pg, ci, c, what, 0);
    sml_measure_opts o;
    measure_opts(&run->cfg, k->device, &o);
    launch_ctx l = {k, h, p};
    char err[256] = "";
    sml_call_watch(k, &p[0]);
    s = sml_measure(k->device, NULL, launch_set, &l, b->nsets, &o, &r->m, err, sizeof err);
    if (s != SML_OK) {
        r->verdict = SML_VERDICT_ERROR;
        snprintf(r->check, sizeof r->check, "timing failed: %s", err);
    } else {
        r->timed = 1;
    }
    free(p);
}

static void derive_metrics(sml_bench_run *run, size_t ci, size_t first, size_t last) {
    sml_bench_case *c = &run->cases[ci];
    for (size_t i = first; i < last; i++) {
        sml_bench_result *r = &run->results[i];
        if (!r->timed || !(r->m.t.median > 0)) continue;
        double t = r->m.t.median;
        r->gbps = (double)c->bytes_moved / t * 1e-9;
        double dev_copy =
            r->device == SML_DEVICE_GPU ? run->env.memcpy_gbps : run->env.host_memcpy_gbps;
        if (dev_copy > 0) r->frac_memcpy = r->gbps / dev_copy;
        const char *naive = r->device == SML_DEVICE_GPU ? "naive" : "cpu_naive";
        double best = INFINITY;
        for (size_t j = first; j < last; j++) {
            const sml_bench_result *o = &run->results[j];
            if (!o->timed || !(o->m.t.median > 0) || o->device != r->device) continue;
            if (!strcmp(o->kernel, "cudnn")) r->vs_cudnn = o->m.t.median / t;
            if (!strcmp(o->kernel, naive)) r->vs_naive = o->m.t.median / t;
            if (j != i && o->verdict == SML_VERDICT_OK && o->m.t.median < best) {
                best = o->m.t.median;
                snprintf(r->best_other, sizeof r->best_other, "%s", o->kernel);
            }
        }
        if (isfinite(best)) r->vs_best_other = best / t;
    }
}

static void free_case_host(void **x, void **dy, void **out, double **want) {
    free(*x);
    free(*dy);
    free(*out);
    free(*want);
    *x = *dy = *out = NULL;
    *want = NULL;
}

static uint64_t case_seed(uint64_t run_seed, const sml_bench_case *c) {
    uint64_t key = ((uint64_t)c->rows * 0x100000001B3ull) ^ (uint64_t)c->cols;
    key = key * 16 + (uint64_t)c->op * 4 + (uint64_t)c->dtype;
    return sml_derive_seed(run_seed, key);
}

static void run_case(sml_bench_run *run, size_t ci, sml_handle *h, int threads, progress *pg) {
    sml_bench_case *c = &run->cases[ci];
    const sml_bench_plan *p = &run->plan;
    int gpu = run->env.gpu.present;
    int bwd = sml_op_is_backward(c->op);
    c->seed = case_seed(run->cfg.seed, c);
    c->tensor_bytes = (size_t)c->rows * (size_t)c->cols * sml_dtype_size(c->dtype);
    c->bytes_moved = c->tensor_bytes * (bwd ? 3u : 2u);
    int use[2] = {0, 0};
    for (size_t k = 0; k < p->nkernels; k++)
        if (sml_bench_supports(p->kernels[k], c->op, c->dtype, c->cols, gpu))
            use[p->kernels[k]->device] = 1;
    if (!use[0] && !use[1]) return;

    progress_line(pg, ci, c, "generating inputs and the reference", 1);
    sml_rowset rs;
    sml_rowset_make(c->rows, c->cols, run->cfg.check_max_elems, &rs);
    c->checked_rows = rs.total_rows;
    size_t elems = (size_t)rs.total_rows * (size_t)c->cols;
    void *hx = malloc(c->tensor_bytes ? c->tensor_bytes : 1);
    void *hdy = bwd ? malloc(c->tensor_bytes ? c->tensor_bytes : 1) : NULL;
    void *hout = malloc(c->tensor_bytes ? c->tensor_bytes : 1);
    double *want = malloc((elems ? elems : 1) * sizeof *want);
    char ref_err[160] = "";
    int ref_ok = hx && hout && want && (!bwd || hdy);
    if (!ref_ok) snprintf(ref_err, sizeof ref_err, "out of host memory");
    if (ref_ok) {
        sml_status s =
            sml_bench_make_inputs(c->op, c->dtype, c->rows, c->cols, c->seed, threads, hx, hdy);
        if (s == SML_OK)
            s = sml_bench_reference(c->op, c->dtype, c->cols, hx, hdy, &rs, want, threads);
        if (s != SML_OK) {
            ref_ok = 0;
            snprintf(ref_err, sizeof ref_err, "%s", sml_strerror(s));
        }
    }
    size_t first = run->nresults;
    int copy_sets[2] = {1, 1};
    for (int dev = 0; dev < 2; dev++) {
        if (!use[dev]) continue;
        int nsets = 1;
        char label[64] = "host (caches not controlled)";
        if (dev == SML_DEVICE_GPU)
            nsets = choose_sets(&run->cfg, &run->env, c->bytes_moved, label, sizeof label);
        /* A case's label is the GPU's when it has GPU kernels. */
        if (dev == SML_DEVICE_GPU || !use[SML_DEVICE_GPU]) {
            snprintf(c->cache, sizeof c->cache, "%s", label);
            c->nsets = nsets;
        }
        copy_sets[dev] = nsets;
        dev_bufs b;
        int have = 0;
        char alloc_err[160] = "";
        if (ref_ok) {
            sml_status s = dev_bufs_make(&b, (sml_device)dev, nsets, c, hx, hdy);
            have = s == SML_OK;
            if (!have) snprintf(alloc_err, sizeof alloc_err, "%s", sml_strerror(s));
        }
        for (size_t k = 0; k < p->nkernels; k++) {
            const sml_kernel *kk = p->kernels[k];
            if ((int)kk->device != dev || !sml_bench_supports(kk, c->op, c->dtype, c->cols, gpu))
                continue;
            run_kernel(run, ci, kk, p->baseline_only ? p->baseline_only[k] : 0, h, have ? &b : NULL,
                       hout, hx, hdy, &rs, want, ref_ok, ref_ok ? alloc_err : ref_err, threads, pg);
        }
        if (have) dev_bufs_free(&b);
    }
    free_case_host(&hx, &hdy, &hout, &want);
    /* The copy references, after the case's buffers are gone, rotated the same way. The
     * traffic-matched limit of a forward case (one read, one write of the tensor) is the copy
     * itself; a backward case's (two reads, one write) is timed on its own. */
    for (int dev = 0; dev < 2; dev++) {
        if (!use[dev]) continue;
        progress_line(pg, ci, c,
                      dev ? "timing the copy kernel (same bytes)" : "timing memcpy (same bytes)",
                      0);
        sml_measure_opts o;
        measure_opts(&run->cfg, (sml_device)dev, &o);
        char err[256];
        sml_measurement m, lm;
        double gbps, lgbps = 0;
        int have_copy = sml_bench_copy_same_bytes((sml_device)dev, c->bytes_moved, copy_sets[dev],
                                                  &o, &m, &gbps, err, sizeof err) == SML_OK;
        int have_limit = have_copy && !bwd;
        if (have_limit) {
            lm = m;
            lgbps = gbps;
        } else if (bwd) {
            progress_line(pg, ci, c, "timing the limit (2 reads + 1 write)", 0);
            have_limit =
                sml_bench_limit_same_traffic((sml_device)dev, c->tensor_bytes, 2, copy_sets[dev],
                                             &o, &lm, &lgbps, err, sizeof err) == SML_OK;
        }
        /* Stored per device: CPU backends compare against memcpy, GPU ones the kernel. */
        if (dev == SML_DEVICE_GPU || !use[SML_DEVICE_GPU]) {
            c->has_copy = have_copy;
            if (have_copy) {
                c->copy = m;
                c->copy_gbps = gbps;
            }
            c->has_limit = have_limit;
            c->limit_reads = bwd ? 2 : 1;
            if (have_limit) {
                c->limit = lm;
                c->limit_gbps = lgbps;
            }
        }
        for (size_t i = first; i < run->nresults; i++) {
            sml_bench_result *r = &run->results[i];
            if ((int)r->device != dev || !r->timed || !(r->m.t.median > 0)) continue;
            if (have_copy) r->frac_copy_kernel = m.t.median / r->m.t.median;
            if (have_limit) r->frac_limit = lm.t.median / r->m.t.median;
        }
    }
    derive_metrics(run, ci, first, run->nresults);
    pg->done_weight += (double)c->bytes_moved + 1e6;
}

static void fill_env(sml_bench_env *e) {
    memset(e, 0, sizeof *e);
    sml_gpu_query(&e->gpu);
    if (gethostname(e->host, sizeof e->host - 1) != 0) snprintf(e->host, sizeof e->host, "?");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(e->time_utc, sizeof e->time_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(e->version, sizeof e->version, "%s", SML_VERSION);
    if (e->gpu.present) {
        sml_plan_slot tmp;
        memset(&tmp, 0, sizeof tmp);
        const char *source = NULL;
        if (sml_plans_for(NULL, sml_gpu_current(), &tmp, &source) && source) {
            const char *slash = strrchr(source, '/');
            snprintf(e->auto_plans, sizeof e->auto_plans, "%s", slash ? slash + 1 : source);
        }
        sml_plan_slot_free(&tmp);
    }
}

sml_status sml_bench_execute(const sml_bench_plan *plan, const sml_bench_config *cfg,
                             sml_bench_case_cb cb, void *user, sml_bench_run *run, char *err,
                             size_t errlen) {
    memset(run, 0, sizeof *run);
    run->plan = *plan;
    run->cfg = *cfg;
    if (plan->notes) snprintf(run->notes, sizeof run->notes, "%s", plan->notes);
    run->plan.notes = NULL;
    double t0 = sml_now();
    fill_env(&run->env);
    int threads = cfg->threads > 0 ? cfg->threads : sml_host_threads();
    run->env.threads = threads;
    int gpu = run->env.gpu.present;
    int use[2] = {0, 0};
    for (size_t k = 0; k < plan->nkernels; k++)
        if (runnable(plan->kernels[k], gpu)) use[plan->kernels[k]->device] = 1;
    run->ncases = enumerate(plan, NULL);
    run->cases = calloc(run->ncases ? run->ncases : 1, sizeof *run->cases);
    if (!run->cases) {
        snprintf(err, errlen, "out of memory");
        return SML_ERR_OUT_OF_MEMORY;
    }
    enumerate(plan, run->cases);
    run->ncases_in_plan = run->ncases;
    size_t kept = 0; /* a slice keeps its own cases, in the plan's order */
    for (size_t i = 0; i < run->ncases; i++)
        if (sml_shard_has(&plan->shard, (int64_t)i)) {
            run->cases[kept] = run->cases[i];
            run->cases[kept++].plan_index = i;
        }
    run->ncases = kept;
    run->ncases_planned = run->ncases;
    progress pg = {cfg->progress, cfg->progress && isatty(2), t0, 0, 0, run->ncases};
    for (size_t i = 0; i < run->ncases; i++) {
        double bytes = (double)run->cases[i].rows * (double)run->cases[i].cols *
                       (double)sml_dtype_size(run->cases[i].dtype) *
                       (sml_op_is_backward(run->cases[i].op) ? 3 : 2);
        pg.total_weight += bytes + 1e6;
    }
    sml_handle *h = NULL;
    sml_status s = sml_handle_create(&h);
    if (s != SML_OK) {
        snprintf(err, errlen, "sml_handle_create: %s", sml_strerror(s));
        return s;
    }
    /* The device copy bandwidths first: they also bring the GPU's clocks up. */
    for (int dev = 0; dev < 2; dev++) {
        if (!use[dev]) continue;
        if (pg.on) {
            fprintf(stderr, "%smeasuring the %s copy bandwidth%s", pg.tty ? "\r\033[K" : "",
                    dev ? "device-to-device cudaMemcpy" : "host memcpy", pg.tty ? "" : "\n");
            fflush(stderr);
        }
        sml_measure_opts o;
        measure_opts(cfg, (sml_device)dev, &o);
        if (o.warmup_seconds < 0.2) o.warmup_seconds = 0.2;
        size_t bytes = (size_t)128 << 20;
        if (dev == SML_DEVICE_GPU) {
            bytes = (size_t)1 << 30;
            if (run->env.gpu.global_mem_bytes && bytes > run->env.gpu.global_mem_bytes / 8)
                bytes = run->env.gpu.global_mem_bytes / 8;
        }
        sml_measurement m;
        double gbps;
        char e2[256];
        s = sml_bench_memcpy_bandwidth((sml_device)dev, bytes, &o, &m, &gbps, e2, sizeof e2);
        if (s != SML_OK) {
            snprintf(err, errlen, "measuring the copy bandwidth: %s", e2);
            sml_handle_destroy(h);
            return s;
        }
        if (dev == SML_DEVICE_GPU) {
            run->env.has_memcpy = 1;
            run->env.memcpy_bytes = bytes;
            run->env.memcpy = m;
            run->env.memcpy_gbps = gbps;
        } else {
            run->env.has_host_memcpy = 1;
            run->env.host_memcpy_bytes = bytes;
            run->env.host_memcpy = m;
            run->env.host_memcpy_gbps = gbps;
        }
    }
    for (size_t i = 0; i < run->ncases; i++) {
        /* A case is never cut short: the limit only stops the next one from starting, so
         * every case in the ledger is whole. */
        if (i > 0 && cfg->time_limit_s > 0 && sml_now() - t0 >= cfg->time_limit_s) {
            run->ncases = i;
            break;
        }
        run_case(run, i, h, threads, &pg);
        if (cb) cb(run, i, user);
    }
    if (pg.on && pg.tty) fprintf(stderr, "\r\033[K");
    if (sml_bench_partial(run))
        fprintf(stderr, "time limit: %g s reached after %zu of %zu cases; the ledger is partial\n",
                cfg->time_limit_s, run->ncases, run->ncases_planned);
    if (pg.on)
        fprintf(stderr, "done: %zu cases, %zu measurements in %.1f s\n", run->ncases, run->nresults,
                sml_now() - t0);
    sml_handle_destroy(h);
    run->seconds = sml_now() - t0;
    return SML_OK;
}

void sml_bench_run_free(sml_bench_run *run) {
    free(run->cases);
    free(run->results);
    memset(run, 0, sizeof *run);
}
