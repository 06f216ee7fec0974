/* pool.c: the workers of a suite. Each job runs the engine here, in the supervisor, with a
 * runner (prop.h) whose launchers are channels (channel.c) to its kernel's worker: one shared
 * host per kernel and GPU, a slot per suite thread; or, under a tool or with sharing off, a
 * host per job. The pool's lock guards the host list and each host's slots; it is never held
 * while a launch runs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "worker/channel.h"
#include "worker/ending.h"
#include "worker/worker.h"

/* A suite thread's window (window.h) outlives its runs of one kernel: the channel of a run on
 * the kernel's shared worker borrows it and gives it back, grown or not, when the run ends.
 * Made per run, a window was mapped, faulted in and zeroed in the supervisor and page-locked
 * in the worker again for every part of every job, growing from 64 KiB to the part's biggest
 * image each time; kept, it grows to the biggest image the thread meets once, and a worker
 * slot that holds it already is sent nothing. Only the kernel's own workers ever map it: the
 * thread's first run of the next kernel drops it and starts a new one (the last kernel's
 * worker may still be up, and no kernel's process may write where another's answer is read),
 * and a run in a worker of its own (a rerun, a job under a tool) has a window of its own. */
typedef struct thread_ctx {
    struct sml_worker_pool *p;
    int slot;
    int hazard;    /* a host of its job's, under a tool, ended with the tool's hazard status */
    wk_window win; /* the thread's window while no channel has it */
    const sml_kernel *win_k; /* the kernel whose workers have mapped it */
    int lent;                /* a channel of the thread's has it */
} thread_ctx;

typedef struct ended_kernel {
    const sml_kernel *k;
    char cause[256];
} ended_kernel;

struct sml_worker_pool {
    pthread_mutex_t mu, start;
    wk_host *hosts; /* the shared hosts */
    double cap;     /* when launches in flight are stopped (monotonic; 0: never) */
    double case_timeout;
    int threads, device, share;
    const char *const *wrap;
    thread_ctx ctx[SML_PROP_MAX_THREADS];
    ended_kernel *ended; /* kernels whose worker ended on its own after their launches */
    int nended;
    uint64_t windows; /* windows named so far (channel.h) */
};

/* Past the run's --seconds a launch in flight gets this long before it is stopped: long
 * enough for a case that started just before the end, short enough that the cap holds. */
static double grace(double total) {
    double g = 0.1 * total;
    return g < 2.0 ? 2.0 : g > 30.0 ? 30.0 : g;
}

sml_worker_pool *sml_worker_pool_new(double case_timeout, int threads, int device,
                                     const char *const *wrap) {
    sml_worker_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->start, NULL);
    p->case_timeout = case_timeout;
    p->threads = threads < 1 ? 1 : threads > SML_PROP_MAX_THREADS ? SML_PROP_MAX_THREADS : threads;
    p->device = device;
    p->wrap = wrap;
    const char *env = getenv("SML_WORKER_SHARE");
    p->share = !(env && !strcmp(env, "0")) && !wrap;
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++)
        p->ctx[i] = (thread_ctx){p, i, 0, SML_WK_WINDOW_NONE, NULL, 0};
    return p;
}

double sml_wk_pool_cap(const sml_worker_pool *p) { return p->cap; }

void sml_worker_suite_cap(void *pool, double total_seconds) {
    sml_worker_pool *p = pool;
    p->cap = total_seconds > 0 ? sml_prop_now() + total_seconds + grace(total_seconds) : 0.0;
}

double sml_wk_pool_deadline(const sml_worker_pool *p, const sml_prop_launch_req *q) {
    double d = p->case_timeout > 0
                   ? p->case_timeout
                   : sml_worker_case_deadline((double)(q->shape.rows * q->shape.cols));
    if (q->kind == SML_PROP_LAUNCH_PING) d = SML_WORKER_FLOOR_S;
    /* A tool runs kernels tens of times slower; a worker's first launch starts its device. */
    return p->wrap ? 50.0 * d : d;
}

/* A kernel whose worker ended on its own, for sml_worker_pool_close. */
static void note_ended(sml_worker_pool *p, const sml_kernel *k, int status) {
    ended_kernel *e = realloc(p->ended, (size_t)(p->nended + 1) * sizeof *e);
    if (!e) return;
    p->ended = e;
    e[p->nended].k = k;
    char how[64];
    sml_wk_status_words(status, how, sizeof how);
    snprintf(e[p->nended].cause, sizeof e[p->nended].cause,
             "the kernel's worker %s after its last launch, before it was told to quit", how);
    p->nended++;
}

/* Close a host nobody holds; a shared host that ended on its own is its kernel's failure. */
static void close_host(sml_worker_pool *p, wk_host *h, wk_chan *owner) {
    int unasked = 0;
    const sml_kernel *k = h->k;
    int shared = h->shared;
    int status = sml_wk_host_close(h, &unasked);
    if (owner) {
        owner->status = status;
        owner->unasked = unasked;
    }
    if (shared && unasked) {
        pthread_mutex_lock(&p->mu);
        note_ended(p, k, status);
        pthread_mutex_unlock(&p->mu);
    }
}

/* A free slot of a live shared host of c's kernel (under the lock), the one that holds c's
 * window already where there is one; NULL when there is none. */
static wk_host *find_shared(sml_worker_pool *p, const wk_chan *c, int *slot) {
    wk_host *first = NULL;
    for (wk_host *h = p->hosts; h; h = h->next) {
        if (h->k != c->k || h->device != c->device || h->retired || h->dead) continue;
        for (int i = 0; i < h->w.nslots; i++) {
            if (h->busy[i]) continue;
            if (c->win.base && h->win[i] == c->win.id) {
                *slot = i;
                return h;
            }
            if (!first) {
                first = h;
                *slot = i;
            }
        }
    }
    return first;
}

/* Unlink the shared hosts nobody holds that are not c's kernel's (under the lock): the suite
 * runs kernel after kernel, so they are done. Returned as a list to close outside the lock. */
static wk_host *take_idle(sml_worker_pool *p, const wk_chan *c) {
    wk_host *idle = NULL, **at = &p->hosts;
    while (*at) {
        wk_host *h = *at;
        if (h->users == 0 && (h->k != c->k || h->device != c->device || h->dead || h->retired)) {
            *at = h->next;
            h->next = idle;
            idle = h;
        } else {
            at = &h->next;
        }
    }
    return idle;
}

/* Take a free slot of a live shared host of c's kernel for c (under the lock); NULL: none. */
static wk_host *take_slot(sml_worker_pool *p, wk_chan *c) {
    int slot = -1;
    wk_host *h = find_shared(p, c, &slot);
    if (h) {
        h->busy[slot] = 1;
        h->users++;
        c->host = h;
        c->slot = slot;
    }
    return h;
}

/* A host just started, once its worker says it has (its start is not a launch's time): h, or
 * NULL with why[] when it did not start within SML_WORKER_START_LIMIT_S (then killed). A
 * worker that ended, or the run's cap, is found by the first launch. */
static wk_host *started(const sml_worker_pool *p, wk_host *h, char *why, size_t n) {
    if (!h || sml_worker_await_start(&h->w, SML_WORKER_START_LIMIT_S, p->cap) != 1) return h;
    snprintf(why, n,
             "the kernel's worker did not start within %.0f s (loading the kernel and its "
             "module, setting up its device)",
             SML_WORKER_START_LIMIT_S);
    int unasked;
    sml_wk_host_ended(h, 0, 0);
    sml_wk_host_close(h, &unasked);
    return NULL;
}

wk_host *sml_wk_pool_attach(sml_worker_pool *p, wk_chan *c, char *why, size_t n) {
    if (c->host && !c->host->dead && !c->host->retired) return c->host;
    if (c->host) sml_wk_pool_detach(p, c);
    if (c->own) {
        wk_host *h = started(p, sml_wk_host_start(c->k, c->device, 1, 0, p->wrap, why, n), why, n);
        if (!h) return NULL;
        h->users = 1;
        h->busy[0] = 1;
        c->host = h;
        c->slot = 0;
        return h;
    }
    pthread_mutex_lock(&p->mu);
    wk_host *h = take_slot(p, c), *idle = h ? NULL : take_idle(p, c);
    pthread_mutex_unlock(&p->mu);
    while (idle) {
        wk_host *next = idle->next;
        close_host(p, idle, NULL);
        idle = next;
    }
    if (h) return h;
    /* One start at a time, so that the threads that all begin a kernel's jobs at once share
     * the one worker the first of them starts. */
    pthread_mutex_lock(&p->start);
    pthread_mutex_lock(&p->mu);
    h = take_slot(p, c);
    pthread_mutex_unlock(&p->mu);
    if (!h) {
        wk_host *fresh =
            started(p, sml_wk_host_start(c->k, c->device, p->threads, 1, NULL, why, n), why, n);
        if (fresh) {
            pthread_mutex_lock(&p->mu);
            fresh->next = p->hosts;
            p->hosts = fresh;
            h = take_slot(p, c);
            pthread_mutex_unlock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->start);
    return h;
}

void sml_wk_pool_detach(sml_worker_pool *p, wk_chan *c) {
    wk_host *h = c->host;
    if (!h) return;
    c->host = NULL;
    if (!h->shared) {
        close_host(p, h, c);
        return;
    }
    pthread_mutex_lock(&p->mu);
    h->busy[c->slot] = 0;
    h->users--;
    int close = (h->dead || h->retired) && h->users == 0;
    if (close)
        for (wk_host **at = &p->hosts; *at; at = &(*at)->next)
            if (*at == h) {
                *at = h->next;
                break;
            }
    pthread_mutex_unlock(&p->mu);
    if (close) close_host(p, h, NULL);
}

void sml_wk_pool_retire(sml_worker_pool *p, wk_host *h) {
    pthread_mutex_lock(&p->mu);
    h->retired = 1;
    pthread_mutex_unlock(&p->mu);
}

uint64_t sml_wk_pool_window_id(sml_worker_pool *p) {
    pthread_mutex_lock(&p->mu);
    uint64_t id = ++p->windows;
    pthread_mutex_unlock(&p->mu);
    return id;
}

int sml_wk_pool_users(sml_worker_pool *p, wk_host *h) {
    pthread_mutex_lock(&p->mu);
    int n = h->users;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* The runner (prop.h) of suite thread ctx: a channel per launcher. */
static sml_status runner_open(void *ctx, const sml_kernel *k, int fresh, sml_prop_launcher *out) {
    thread_ctx *t = ctx;
    wk_chan *c = calloc(1, sizeof *c);
    if (!c) return SML_ERR_OUT_OF_MEMORY;
    *c = (wk_chan){.pool = t->p,
                   .k = k,
                   .device = t->p->device,
                   .own = fresh || !t->p->share,
                   .slot = -1,
                   .status = -1,
                   .win = SML_WK_WINDOW_NONE};
    if (!c->own && !t->lent) { /* a second channel of the thread's at once has its own */
        if (t->win_k != k) {
            sml_wk_window_free(&t->win);
            t->win_k = k;
        }
        c->win = t->win;
        c->borrowed = 1;
        t->win = (wk_window)SML_WK_WINDOW_NONE;
        t->lent = 1;
    }
    out->window = sml_wk_chan_window;
    out->launch = sml_wk_chan_launch;
    out->send = sml_wk_chan_send;
    out->recv = sml_wk_chan_recv;
    out->ctx = c;
    return SML_OK;
}

static void runner_close(void *ctx, sml_prop_launcher *l) {
    thread_ctx *t = ctx;
    wk_chan *c = l->ctx;
    if (!c) return;
    sml_wk_pool_detach(t->p, c);
    if (c->borrowed) {
        t->win = c->win; /* grown or not, for the thread's next run */
        t->lent = 0;
    } else {
        sml_wk_window_free(&c->win);
    }
    if (t->p->wrap && c->status != -1 && WIFEXITED(c->status) &&
        WEXITSTATUS(c->status) == SML_WORKER_SANITIZER_EXIT)
        t->hazard = 1;
    free(c);
    l->ctx = NULL;
}

sml_prop_runner sml_worker_runner(sml_worker_pool *p, int slot) {
    sml_prop_runner r = {runner_open, runner_close, &p->ctx[slot]};
    return r;
}

int sml_worker_kernel_in_process(const char *name) {
    const char *v = getenv("SML_IN_PROCESS_KERNELS");
    size_t n = name ? strlen(name) : 0;
    for (const char *p = v; p && *p && n;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

/* The tool's report went to the output as it ran; its exit status says it found a hazard in
 * the job's cases: a failure of the job (its events, then the one verdict function). */
static void sanitizer_failure(sml_prop_job *job, const char *const *wrap) {
    const char *tool = "?";
    for (const char *const *t = wrap; *t; t++)
        if (!strcmp(*t, "--tool") && t[1]) tool = t[1];
    sml_prop_result *res = &job->res;
    snprintf(res->note, sizeof res->note, "compute-sanitizer %s reported a hazard", tool);
    if (res->nfail < SML_PROP_COUNT) {
        sml_prop_failure *f = &res->failures[res->nfail++];
        memset(f, 0, sizeof *f);
        f->prop = SML_PROP_AGREEMENT;
        f->outcome = SML_PROP_FAIL;
        f->case_index = -1;
        f->confirmed = -1;
        snprintf(f->message, sizeof f->message, "%s", res->note);
    }
    res->failed_cases++;
    res->events.n[SML_EV_FAIL]++;
    sml_prop_result_decide(res);
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

sml_status sml_worker_suite_run(sml_prop_job *job, int slot, void *pool) {
    sml_worker_pool *p = pool;
    if (slot < 0 || slot >= SML_PROP_MAX_THREADS) return SML_ERR_INVALID_ARG;
    if (!sml_worker_kernel_in_process(job->k->name)) job->cfg.runner = sml_worker_runner(p, slot);
    p->ctx[slot].hazard = 0;
    job->status = sml_prop_run(job->k, job->op, job->dtype, &job->cfg, &job->res);
    job->cfg.runner = (sml_prop_runner){0};
    if (p->wrap && p->ctx[slot].hazard) sanitizer_failure(job, p->wrap);
    return job->status;
}

/* Close every host; the kernels that ended on their own are then in p->ended. */
static void close_hosts(sml_worker_pool *p) {
    for (wk_host *h = p->hosts, *next; h; h = next) {
        next = h->next;
        close_host(p, h, NULL);
    }
    p->hosts = NULL;
}

static void pool_free(sml_worker_pool *p) {
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++) sml_wk_window_free(&p->ctx[i].win);
    free(p->ended);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->start);
    free(p);
}

int sml_worker_pool_finish(sml_worker_pool *p, const sml_kernel *k, char *cause, size_t n) {
    if (!p) return 0;
    close_hosts(p);
    int ended = 0;
    for (int e = 0; e < p->nended && !ended; e++)
        if (p->ended[e].k == k) {
            snprintf(cause, n, "%s", p->ended[e].cause);
            ended = 1;
        }
    pool_free(p);
    return ended;
}

void sml_worker_pool_close(sml_worker_pool *p, sml_prop_job *jobs, int njobs) {
    if (!p) return;
    close_hosts(p);
    for (int e = 0; e < p->nended; e++) {
        fprintf(stdout, "FAIL %s: %s\n", p->ended[e].k->name, p->ended[e].cause);
        for (int j = 0; j < njobs; j++) {
            sml_prop_result *res = &jobs[j].res;
            if (jobs[j].k != p->ended[e].k || res->verdict == SML_JOB_SKIP) continue;
            res->events.n[SML_EV_FAIL]++;
            if (!res->note[0]) snprintf(res->note, sizeof res->note, "%.190s", p->ended[e].cause);
            sml_prop_result_decide(res);
        }
    }
    pool_free(p);
}
