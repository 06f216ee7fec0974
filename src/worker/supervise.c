/* supervise.c: the supervisor's side of one job: send it, wait for the answer while
 * watching the board (progress for the suite's line, the case's deadline, the run's end),
 * and on any end of the worker before its answer hand the death to crash.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "reference/reference.h"
#include "worker/board.h"
#include "worker/crash.h"
#include "worker/worker.h"

/* Seconds per element of the double-precision forward reference here, measured once. */
static double ref_speed;
static pthread_once_t ref_once = PTHREAD_ONCE_INIT;

static void measure_ref(void) {
    const int64_t rows = 256, cols = 1024;
    float *x = malloc((size_t)(rows * cols) * sizeof *x);
    double *y = malloc((size_t)(rows * cols) * sizeof *y);
    ref_speed = 1e-7;
    if (!x || !y) {
        free(x);
        free(y);
        return;
    }
    for (int64_t i = 0; i < rows * cols; i++) x[i] = (float)(i % 97) * 0.1f;
    double t0 = sml_prop_now();
    sml_ref_run(SML_SOFTMAX, SML_F32, rows, cols, cols, x, NULL, y);
    double t = sml_prop_now() - t0;
    if (t > 0) ref_speed = t / (double)(rows * cols);
    free(x);
    free(y);
}

double sml_worker_case_deadline(double elements) {
    pthread_once(&ref_once, measure_ref);
    double d = 200.0 * elements * ref_speed;
    return d > SML_WORKER_FLOOR_S ? d : SML_WORKER_FLOOR_S;
}

/* The deadline (monotonic) of what the board says the worker is doing now; 0: none. */
static double board_deadline(const sml_worker_board *b, const sml_prop_config *cfg, double started, double slow) {
    int phase = atomic_load(&b->phase);
    if (phase == SML_PROP_PHASE_IDLE) return started + slow * (60.0 + SML_WORKER_FLOOR_S); /* start, CUDA context */
    double d = slow * sml_worker_case_deadline(b->elements);
    if (phase == SML_PROP_PHASE_SHRINK) d += cfg->shrink_max_seconds;
    return b->start + d;
}

/* Serialize the job: its config without pointers, then its strings. */
static int send_job(sml_worker *w, const sml_prop_job *job) {
    sml_worker_job_msg m;
    memset(&m, 0, sizeof m);
    snprintf(m.kernel, sizeof m.kernel, "%s", job->k->name);
    m.op = job->op;
    m.dtype = job->dtype;
    m.cfg = job->cfg;
    m.cfg.save_dir = m.cfg.regressions_dir = m.cfg.replay_cmd = m.cfg.rerun_cmd = NULL;
    m.cfg.log = m.cfg.progress = NULL;
    m.cfg.tally = NULL;
    m.cfg.hooks = (sml_prop_hooks){0};
    m.cfg.case_ratio = NULL;
    const char *lib = sml_kernel_library(job->k);
    const char *str[5] = {lib ? lib : "", job->cfg.save_dir, job->cfg.regressions_dir, job->cfg.replay_cmd,
                          job->cfg.rerun_cmd};
    size_t n = 0;
    for (int i = 0; i < 5; i++) n += (str[i] ? strlen(str[i]) : 0) + 1;
    char *buf = malloc(n), *q = buf;
    if (!buf) return -1;
    for (int i = 0; i < 5; i++) {
        size_t l = str[i] ? strlen(str[i]) : 0;
        if (l) memcpy(q, str[i], l);
        q[l] = 0;
        q += l + 1;
    }
    int r = sml_wk_send(w->sock, SML_WK_JOB, &m, sizeof m, buf, n);
    free(buf);
    return r;
}

/* A failure report the worker wrote, printed whole under the suite's output lock. */
static void print_text(const sml_prop_job *job, const char *p, size_t len) {
    const sml_prop_hooks *h = &job->cfg.hooks;
    FILE *L = job->cfg.log ? job->cfg.log : stdout;
    if (h->report_begin && h->report_end) h->report_begin(h->ctx);
    fwrite(p, 1, len, L);
    fflush(L);
    if (h->report_begin && h->report_end) h->report_end(h->ctx);
}

/* Feed the suite's case counter from the board. */
static void tally(const sml_prop_job *job, const sml_worker_board *b, int64_t *seen, int64_t *seen_failed) {
    int64_t c = atomic_load(&b->cases), f = atomic_load(&b->failed_cases);
    if (!job->cfg.hooks.case_done) return;
    for (; *seen < c; (*seen)++) job->cfg.hooks.case_done(job->cfg.hooks.ctx, *seen_failed < f ? ((*seen_failed)++, 1) : 0);
}

typedef enum { GOT_RESULT, DIED, KILLED_CASE, KILLED_RUN } wait_end;

/* Wait for the job's RESULT. */
static wait_end await_result(sml_worker *w, sml_prop_job *job, double deadline, double *limit) {
    double started = sml_prop_now();
    int64_t seen = 0, seen_failed = 0;
    for (;;) {
        struct pollfd pf = {w->sock, POLLIN, 0};
        int r = poll(&pf, 1, 50);
        tally(job, w->board, &seen, &seen_failed);
        if (r > 0) {
            uint32_t type;
            char *p;
            size_t len;
            if (sml_wk_recv(w->sock, &type, &p, &len) != 0) return DIED;
            if (type == SML_WK_TEXT) print_text(job, p, len);
            if (type == SML_WK_RATIOS && job->cfg.case_ratio && len == (size_t)job->cfg.case_cap * sizeof(float))
                memcpy(job->cfg.case_ratio, p, len);
            if (type == SML_WK_RESULT && len == sizeof(int32_t) + sizeof job->res) {
                int32_t st;
                memcpy(&st, p, sizeof st);
                memcpy(&job->res, p + sizeof st, sizeof job->res);
                job->res.kernel = job->k;
                job->status = (sml_status)st;
                free(p);
                return GOT_RESULT;
            }
            free(p);
            continue;
        }
        if (r < 0 && errno != EINTR) return DIED;
        /* A tool such as compute-sanitizer runs kernels tens of times slower. */
        double now = sml_prop_now(), cd = board_deadline(w->board, &job->cfg, started, w->wrap ? 50.0 : 1.0);
        if (now > cd) {
            *limit = cd - (atomic_load(&w->board->phase) == SML_PROP_PHASE_IDLE ? started : w->board->start);
            kill(w->pid, SIGKILL);
            return KILLED_CASE;
        }
        if (deadline > 0 && now > deadline) {
            *limit = now - (atomic_load(&w->board->phase) == SML_PROP_PHASE_IDLE ? started : w->board->start);
            kill(w->pid, SIGKILL);
            return KILLED_RUN;
        }
    }
}

/* The tool's report went to the output as it ran; its exit status says whether it found a
 * hazard in the job's cases. */
static void sanitizer_verdict(sml_prop_job *job, const char *const *wrap, int status) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != SML_WORKER_SANITIZER_EXIT) return;
    const char *tool = "?";
    for (const char *const *t = wrap; *t; t++)
        if (!strcmp(*t, "--tool") && t[1]) tool = t[1];
    sml_prop_result *res = &job->res;
    res->outcome = SML_PROP_FAIL;
    snprintf(res->note, sizeof res->note, "compute-sanitizer %s reported a hazard", tool);
    if (res->nfail < SML_PROP_COUNT) {
        sml_prop_failure *f = &res->failures[res->nfail++];
        memset(f, 0, sizeof *f);
        f->prop = SML_PROP_AGREEMENT;
        f->outcome = SML_PROP_FAIL;
        f->case_index = -1;
        snprintf(f->message, sizeof f->message, "%s", res->note);
    }
    res->failed_cases++;
    const sml_prop_hooks *h = &job->cfg.hooks;
    FILE *L = job->cfg.log ? job->cfg.log : stdout;
    if (h->report_begin && h->report_end) h->report_begin(h->ctx);
    fprintf(L, "FAIL %s %s %s: compute-sanitizer %s reported a hazard in cases 0..%lld (its report above)\n"
               "  rerun: softmax-lab check --sanitize %s --kernel %s --op %s --dtype %s --seed 0x%016llx --cases %lld\n",
            job->k->name, sml_op_name(job->op), sml_dtype_name(job->dtype), tool, (long long)res->cases - 1, tool,
            job->k->name, sml_op_name(job->op), sml_dtype_name(job->dtype), (unsigned long long)job->cfg.seed,
            (long long)job->cfg.max_cases);
    fflush(L);
    if (h->report_begin && h->report_end) h->report_end(h->ctx);
}

sml_status sml_worker_run_job(sml_worker *w, sml_prop_job *job, double deadline) {
    const char *lib = sml_kernel_library(job->k);
    int py = lib && sml_source_is_python(lib);
    if (w->pid > 0 && (py ? strcmp(w->library, lib) : w->library[0] != 0)) sml_worker_close(w);
    if (w->pid <= 0) {
        char why[512];
        sml_worker_opts o = {w->device, lib, w->wrap};
        sml_status s = sml_worker_spawn(w, &o, why, sizeof why);
        if (s != SML_OK) {
            fprintf(stderr, "softmax-lab: cannot start a worker (%s): running %s in this process\n", why, job->k->name);
            job->status = sml_prop_run(job->k, job->op, job->dtype, &job->cfg, &job->res);
            return job->status;
        }
    }
    atomic_store(&w->board->phase, SML_PROP_PHASE_IDLE);
    atomic_store(&w->board->fault_set, 0);
    atomic_store(&w->board->cases, 0);
    atomic_store(&w->board->failed_cases, 0);
    double t0 = sml_prop_now(), limit = 0.0;
    wait_end e = send_job(w, job) == 0 ? await_result(w, job, deadline, &limit) : DIED;
    if (e == GOT_RESULT) {
        /* Under a tool, the worker's exit status is the tool's verdict: one job per worker. */
        if (w->wrap) sanitizer_verdict(job, w->wrap, sml_worker_close(w));
        else if (job->res.outcome != SML_PROP_PASS && job->res.outcome != SML_PROP_SKIP) sml_worker_close(w);
        return job->status;
    }
    int status = sml_wk_reap(w, 2.0);
    sml_wk_death d = {status, e == KILLED_CASE ? 1 : e == KILLED_RUN ? 2 : 0, limit, sml_prop_now() - t0};
    sml_wk_crash_result(job, w->board, &d);
    sml_worker_close(w);
    return job->status;
}
