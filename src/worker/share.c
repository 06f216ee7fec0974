/* share.c: the suite's jobs in shared workers (worker.h says the rules). Each suite thread
 * has a slot, the same in every shared worker; a worker is keyed by its GPU and by the
 * Python module it imported ("" for C kernels), started on first need and retired when a
 * job in it does not pass or it dies. The pool's lock guards the list and each worker's
 * counts; it is never held while a job runs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "worker/board.h"
#include "worker/crash.h"
#include "worker/job_wait.h"
#include "worker/share.h"
#include "worker/worker.h"

typedef struct shared {
    sml_worker w;
    struct shared *next;
    int users;       /* jobs running in it */
    uint64_t starts; /* jobs started in it */
    int retired;     /* takes no new job */
    int dead;        /* it ended and was reaped; status is its wait status */
    int status;
    int killer;   /* the slot that had it killed (-1: none) ... */
    int killed;   /* ... 1 at its case's deadline, 2 at the run's end */
    double limit; /* the seconds the killer's case had */
} shared;

struct sml_wk_share {
    pthread_mutex_t mu;
    shared *all;
};

typedef enum { DONE, AGAIN, ALONE } attempt_end;

struct sml_wk_share *sml_wk_share_new(void) {
    struct sml_wk_share *S = calloc(1, sizeof *S);
    if (S) pthread_mutex_init(&S->mu, NULL);
    return S;
}

void sml_wk_share_free(struct sml_wk_share *S) {
    if (!S) return;
    for (shared *s = S->all, *next; s; s = next) {
        next = s->next;
        sml_worker_close(&s->w);
        free(s);
    }
    pthread_mutex_destroy(&S->mu);
    free(S);
}

/* The live worker for (device, module), started when there is none; NULL when none can be. */
static shared *acquire(struct sml_wk_share *S, const char *py, int device, int slots) {
    for (shared *s = S->all; s; s = s->next)
        if (!s->retired && s->w.device == device && !strcmp(s->w.library, py)) return s;
    shared *s = calloc(1, sizeof *s);
    char why[512];
    sml_worker_opts o = {device, py[0] ? py : NULL, NULL, slots};
    if (!s || sml_worker_spawn(&s->w, &o, why, sizeof why) != SML_OK) {
        if (s) fprintf(stderr, "softmax-lab: cannot start a worker (%s)\n", why);
        free(s);
        return NULL;
    }
    s->killer = -1;
    s->next = S->all;
    S->all = s;
    return s;
}

/* A job left s (lock held): a retired worker nobody uses is ended now. */
static void release(shared *s) {
    s->users--;
    if (s->retired && s->users == 0 && s->w.nslots) sml_worker_close(&s->w);
}

/* The worker died (lock held): reap it once, and say whose slot ended it (-1: unknown). */
static int blame(shared *s) {
    if (!s->dead) {
        s->status = sml_wk_reap(&s->w, 2.0);
        s->dead = s->retired = 1;
    }
    if (s->killer >= 0) return s->killer;
    int f = atomic_load(&s->w.board->fault_slot), x = atomic_load(&s->w.board->exit_slot);
    return f >= 0 ? f : x;
}

/* The worker ended while the job in `slot` ran: its FAIL, a run again beside others, or
 * a run alone. `beside`: other jobs ran in the worker meanwhile. */
static attempt_end after_death(struct sml_wk_share *S, shared *s, sml_prop_job *job, int slot,
                               sml_wk_end e, double limit, double t0, int beside, char *cause,
                               size_t n) {
    pthread_mutex_lock(&S->mu);
    if ((e == SML_WK_KILL_CASE || e == SML_WK_KILL_RUN) && !s->dead && s->killer < 0) {
        s->killer = slot;
        s->killed = e == SML_WK_KILL_CASE ? 1 : 2;
        s->limit = limit;
        kill(s->w.pid, SIGKILL);
    }
    int culprit = blame(s);
    const sml_worker_slot *bs = &s->w.board->slot[slot];
    sml_wk_death d = {s->status, 0, 0.0, sml_prop_now() - t0};
    if (s->killed == 2) { /* the run's time ran out: every job in flight ends there */
        d.killed = 2;
        d.limit = culprit == slot ? s->limit : sml_prop_now() - bs->start;
        culprit = slot;
    } else if (culprit == slot && s->killer == slot) {
        d.killed = 1;
        d.limit = s->limit;
    }
    if (culprit < 0 && !beside) culprit = slot;
    pthread_mutex_unlock(&S->mu);
    attempt_end r = culprit == slot ? DONE : culprit >= 0 ? AGAIN : ALONE;
    if (r == DONE) sml_wk_crash_result(job, bs, &d);
    if (r == ALONE) sml_wk_cause(&d, bs, cause, n);
    pthread_mutex_lock(&S->mu);
    release(s);
    pthread_mutex_unlock(&S->mu);
    return r;
}

/* One run of the job in a shared worker. */
static attempt_end attempt(sml_worker_pool *p, sml_prop_job *job, int slot, int device, char *cause,
                           size_t n) {
    struct sml_wk_share *S = p->shared;
    const char *lib = sml_kernel_library(job->k);
    const char *py = lib && sml_source_is_python(lib) ? lib : "";
    pthread_mutex_lock(&S->mu);
    shared *s = acquire(S, py, device, p->threads);
    if (!s) {
        pthread_mutex_unlock(&S->mu);
        return ALONE;
    }
    s->users++;
    uint64_t mine = ++s->starts;
    int beside = s->users > 1;
    pthread_mutex_unlock(&S->mu);

    sml_worker_slot *bs = &s->w.board->slot[slot];
    sml_wk_slot_reset(bs);
    sml_wk_text hold = {0};
    double t0 = sml_prop_now(), limit = 0.0;
    /* No shrinking beside other jobs: its checks hold the kernel's stream, which stalls the
     * context's other threads; a job that does not pass runs again alone and shrinks there. */
    int shrink = job->cfg.shrink;
    job->cfg.shrink = 0;
    sml_wk_end e = sml_wk_send_job(s->w.sock[slot], job) == 0
                       ? sml_wk_await(s->w.sock[slot], bs, job, p->deadline, 1.0, &hold, &limit)
                       : SML_WK_DIED;
    job->cfg.shrink = shrink;
    pthread_mutex_lock(&S->mu);
    beside |= s->starts != mine || s->users > 1;
    pthread_mutex_unlock(&S->mu);
    if (e != SML_WK_GOT_RESULT) {
        sml_wk_text_drop(&hold);
        return after_death(S, s, job, slot, e, limit, t0, beside, cause, n);
    }
    int passed = job->res.outcome == SML_PROP_PASS || job->res.outcome == SML_PROP_SKIP;
    pthread_mutex_lock(&S->mu);
    if (!passed) s->retired = 1;
    release(s);
    pthread_mutex_unlock(&S->mu);
    if (!passed && (beside || shrink)) {
        snprintf(cause, n, "%s", job->res.note[0] ? job->res.note : "did not pass");
        sml_wk_text_drop(&hold);
        return ALONE;
    }
    sml_wk_text_flush(job, &hold);
    return DONE;
}

/* The job in a fresh worker of its own; its verdict is this run's. */
static sml_status run_alone(sml_worker_pool *p, sml_prop_job *job, int device, const char *cause) {
    sml_worker solo;
    memset(&solo, 0, sizeof solo);
    solo.device = device;
    sml_status st = sml_worker_run_job(&solo, job, p->deadline);
    sml_worker_close(&solo);
    if (cause[0] && st == SML_OK &&
        (job->res.outcome == SML_PROP_PASS || job->res.outcome == SML_PROP_SKIP)) {
        FILE *L = sml_prop_report_begin(&job->cfg);
        fprintf(L,
                "note: %s %s %s: in a shared worker it ended with \"%s\"; run again alone in a "
                "fresh worker it passed, and that run is its verdict\n",
                job->k->name, sml_op_name(job->op), sml_dtype_name(job->dtype), cause);
        fflush(L);
        sml_prop_report_end(&job->cfg, L);
    }
    return st;
}

/* A job that stood beside the one that ended a worker runs again from its start; after a
 * few such deaths it runs alone. */
#define MAX_AGAIN 4

sml_status sml_wk_share_run(sml_worker_pool *p, sml_prop_job *job, int slot, int device) {
    char cause[320] = "";
    for (int i = 0; i < MAX_AGAIN; i++) {
        attempt_end r = attempt(p, job, slot, device, cause, sizeof cause);
        if (r == DONE) return job->status;
        if (r == ALONE) break;
    }
    return run_alone(p, job, device, cause);
}
