/* supervise.c: the supervisor's side of one job: send it, wait for the answer while
 * watching the job's slot of the board (progress for the suite's line, the case's
 * deadline, the run's end), and, in a worker of its own, on any end of the worker before
 * its answer hand the death to crash.c. share.c does the same for shared workers. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "worker/board.h"
#include "worker/crash.h"
#include "worker/job_wait.h"
#include "worker/worker.h"

/* The deadline (monotonic) of what the slot says the worker is doing now. */
static double slot_deadline(const sml_worker_slot *b, const sml_prop_config *cfg, double started,
                            double slow) {
    int phase = atomic_load(&b->phase);
    if (phase == SML_PROP_PHASE_IDLE)
        return started + slow * (60.0 + SML_WORKER_FLOOR_S); /* start, CUDA context */
    double d = slow * sml_worker_case_deadline(b->elements);
    if (phase == SML_PROP_PHASE_SHRINK) d += cfg->shrink_max_seconds;
    return b->start + d;
}

/* Serialize the job: its config without pointers, then its strings. */
int sml_wk_send_job(int sock, const sml_prop_job *job) {
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
    const char *str[5] = {lib ? lib : "", job->cfg.save_dir, job->cfg.regressions_dir,
                          job->cfg.replay_cmd, job->cfg.rerun_cmd};
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
    int r = sml_wk_send(sock, SML_WK_JOB, &m, sizeof m, buf, n);
    free(buf);
    return r;
}

/* A failure report the worker wrote, printed whole under the suite's output lock. */
static void print_text(const sml_prop_job *job, const char *p, size_t len) {
    FILE *L = sml_prop_report_begin(&job->cfg);
    fwrite(p, 1, len, L);
    fflush(L);
    sml_prop_report_end(&job->cfg, L);
}

static void hold_text(sml_wk_text *t, const char *p, size_t len) {
    if (t->n + len > t->cap) {
        size_t cap = 2 * (t->n + len) + 256;
        char *q = realloc(t->p, cap);
        if (!q) return;
        t->p = q;
        t->cap = cap;
    }
    memcpy(t->p + t->n, p, len);
    t->n += len;
}

void sml_wk_text_flush(const sml_prop_job *job, sml_wk_text *t) {
    if (t->n) print_text(job, t->p, t->n);
    sml_wk_text_drop(t);
}

void sml_wk_text_drop(sml_wk_text *t) {
    free(t->p);
    *t = (sml_wk_text){0};
}

void sml_wk_slot_reset(sml_worker_slot *bs) {
    atomic_store(&bs->phase, SML_PROP_PHASE_IDLE);
    atomic_store(&bs->fault_set, 0);
    atomic_store(&bs->cases, 0);
    atomic_store(&bs->failed_cases, 0);
}

/* Feed the suite's case counter from the slot. */
static void tally(const sml_prop_job *job, const sml_worker_slot *b, int64_t *seen,
                  int64_t *seen_failed) {
    int64_t c = atomic_load(&b->cases), f = atomic_load(&b->failed_cases);
    if (!job->cfg.hooks.case_done) return;
    for (; *seen < c; (*seen)++)
        job->cfg.hooks.case_done(job->cfg.hooks.ctx, *seen_failed < f ? ((*seen_failed)++, 1) : 0);
}

/* One frame from the worker: 1 when it was the job's RESULT. */
static int take_frame(sml_prop_job *job, uint32_t type, const char *p, size_t len,
                      sml_wk_text *hold) {
    if (type == SML_WK_TEXT) {
        if (hold)
            hold_text(hold, p, len);
        else
            print_text(job, p, len);
    }
    if (type == SML_WK_RATIOS && job->cfg.case_ratio &&
        len == (size_t)job->cfg.case_cap * sizeof(float))
        memcpy(job->cfg.case_ratio, p, len);
    if (type == SML_WK_RESULT && len == sizeof(int32_t) + sizeof job->res) {
        int32_t st;
        memcpy(&st, p, sizeof st);
        memcpy(&job->res, p + sizeof st, sizeof job->res);
        job->res.kernel = job->k;
        job->status = (sml_status)st;
        return 1;
    }
    return 0;
}

sml_wk_end sml_wk_await(int sock, const sml_worker_slot *bs, sml_prop_job *job, double deadline,
                        double slow, sml_wk_text *hold, double *limit) {
    double started = sml_prop_now();
    int64_t seen = 0, seen_failed = 0;
    for (;;) {
        struct pollfd pf = {sock, POLLIN, 0};
        int r = poll(&pf, 1, 50);
        tally(job, bs, &seen, &seen_failed);
        if (r > 0) {
            uint32_t type;
            char *p;
            size_t len;
            if (sml_wk_recv(sock, &type, &p, &len) != 0) return SML_WK_DIED;
            int got = take_frame(job, type, p, len, hold);
            free(p);
            if (got) return SML_WK_GOT_RESULT;
            continue;
        }
        if (r < 0 && errno != EINTR) return SML_WK_DIED;
        double now = sml_prop_now(), cd = slot_deadline(bs, &job->cfg, started, slow);
        double since = atomic_load(&bs->phase) == SML_PROP_PHASE_IDLE ? started : bs->start;
        if (now > cd) {
            *limit = cd - since;
            return SML_WK_KILL_CASE;
        }
        if (deadline > 0 && now > deadline) {
            *limit = now - since;
            return SML_WK_KILL_RUN;
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
    FILE *L = sml_prop_report_begin(&job->cfg);
    fprintf(L,
            "FAIL %s %s %s: compute-sanitizer %s reported a hazard in cases 0..%lld (its report "
            "above)\n"
            "  rerun: softmax-lab check --sanitize %s --kernel %s --op %s --dtype %s --seed "
            "0x%016llx --cases %lld\n",
            job->k->name, sml_op_name(job->op), sml_dtype_name(job->dtype), tool,
            (long long)res->cases - 1, tool, job->k->name, sml_op_name(job->op),
            sml_dtype_name(job->dtype), (unsigned long long)job->cfg.seed,
            (long long)job->cfg.max_cases);
    fflush(L);
    sml_prop_report_end(&job->cfg, L);
}

sml_status sml_worker_run_job(sml_worker *w, sml_prop_job *job, double deadline) {
    const char *lib = sml_kernel_library(job->k);
    int py = lib && sml_source_is_python(lib);
    if (w->pid > 0 && (py ? strcmp(w->library, lib) : w->library[0] != 0)) sml_worker_close(w);
    if (w->pid <= 0) {
        char why[512];
        sml_worker_opts o = {w->device, lib, w->wrap, 1};
        sml_status s = sml_worker_spawn(w, &o, why, sizeof why);
        if (s != SML_OK) {
            fprintf(stderr, "softmax-lab: cannot start a worker (%s): running %s in this process\n",
                    why, job->k->name);
            job->status = sml_prop_run(job->k, job->op, job->dtype, &job->cfg, &job->res);
            return job->status;
        }
    }
    sml_worker_slot *bs = &w->board->slot[0];
    sml_wk_slot_reset(bs);
    double t0 = sml_prop_now(), limit = 0.0;
    sml_wk_end e =
        sml_wk_send_job(w->sock[0], job) == 0
            ? sml_wk_await(w->sock[0], bs, job, deadline, w->wrap ? 50.0 : 1.0, NULL, &limit)
            : SML_WK_DIED;
    if (e == SML_WK_GOT_RESULT) {
        /* Under a tool, the worker's exit status is the tool's verdict: one job per worker. */
        if (w->wrap)
            sanitizer_verdict(job, w->wrap, sml_worker_close(w));
        else if (job->res.outcome != SML_PROP_PASS && job->res.outcome != SML_PROP_SKIP) {
            sml_worker_close(w);
            sml_wk_shrink_lost_context(job);
        }
        return job->status;
    }
    if (e == SML_WK_KILL_CASE || e == SML_WK_KILL_RUN) kill(w->pid, SIGKILL);
    int status = sml_wk_reap(w, 2.0);
    sml_wk_death d = {status,
                      e == SML_WK_KILL_CASE  ? 1
                      : e == SML_WK_KILL_RUN ? 2
                                             : 0,
                      limit, sml_prop_now() - t0};
    sml_wk_crash_result(job, bs, &d);
    sml_worker_close(w);
    return job->status;
}
