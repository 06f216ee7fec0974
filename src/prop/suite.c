/* suite.c: a pool of host threads that takes kernel/op/dtype jobs in order, the run's cap,
 * and the one progress line. Its locks are never held together: `lock` for the job queue
 * (next, finished), `out` for everything written (the progress line, the `done` reports, the
 * engine's failure reports), and each thread's slot's own (which job and case its run is on).
 * The suite drives the engine (sml_prop_run) and hears from it only through the hooks it gives
 * each run. */
#include "prop/suite.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "prop/case_cache.h"
#include "prop/exec.h"
#include "prop/parts.h"

/* The suite's side of its runs' hooks: live counts for the progress line, and the lock
 * all output shares. */
typedef struct suite_tally {
    atomic_llong cases, failed_cases;
    pthread_mutex_t out;
    FILE *progress;
    int tty, drawn; /* under `out` */
} suite_tally;

/* What a thread's run is on: its job, and (the case_begin hook) the case, since when, and the
 * property it checks now, so that the progress line can list the running jobs and name a case
 * that has held its thread long.
 * `lock` is the slot's own (the thread writes at each property, the progress line reads). */
typedef struct suite_slot {
    suite_tally *tally; /* the hooks' other calls go there */
    pthread_mutex_t lock;
    int job;         /* the job (index) its run belongs to; -1: none */
    int phase, prop; /* phase SML_PROP_PHASE_IDLE: between jobs */
    int64_t index;
    double elements, since;
} suite_slot;

/* A job split into parts (parts.h): a copy of the job per part, each with its part of the
 * cases, the log its join needs, and what the parts share; held from its first part's start
 * to the join. n 1: the job runs whole. */
typedef struct job_parts {
    int n, left; /* parts, and parts not finished yet */
    sml_prop_job *part;
    sml_prop_case_log *log;
    sml_prop_part_share *share;
} job_parts;

/* The k-th task of the queue: part q of job j. */
typedef struct task {
    int j, q;
} task;

typedef struct suite_state {
    suite_tally tally;
    const sml_prop_suite *s;
    sml_prop_job *jobs;
    job_parts *parts; /* per job */
    task *tasks;      /* the jobs' parts, in job order */
    int njobs, ntasks, threads;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a job finished */
    int next, finished;     /* next task to start; jobs finished */
    int device;             /* the caller's CUDA device, made current on every worker (-1: none) */
    double t0;
    suite_slot *slot;           /* per thread */
    sml_prop_case_cache *cases; /* the big cases the kernels share; NULL: none */
} suite_state;

typedef struct worker_arg {
    suite_state *st;
    int id;
} worker_arg;

static void clear_line(suite_tally *t) {
    if (t->progress && t->drawn) {
        fprintf(t->progress, "\r\033[K");
        fflush(t->progress);
        t->drawn = 0;
    }
}

/* The hooks (sml_prop_hooks): count one finished case; take and release the output lock
 * around a multi-line report (taking it clears the progress line). */
static void tally_case(void *ctx, int failed) {
    suite_tally *t = ((suite_slot *)ctx)->tally;
    atomic_fetch_add(&t->cases, 1);
    if (failed) atomic_fetch_add(&t->failed_cases, 1);
}

static void tally_report_begin(void *ctx) {
    suite_tally *t = ((suite_slot *)ctx)->tally;
    pthread_mutex_lock(&t->out);
    clear_line(t);
}

static void tally_report_end(void *ctx) { pthread_mutex_unlock(&((suite_slot *)ctx)->tally->out); }

/* The thread's run starts a property on a case: a new case (or phase) restarts its clock. */
static void slot_case_begin(void *ctx, int phase, int64_t index, int level, int prop,
                            double elements) {
    (void)level;
    suite_slot *sl = ctx;
    pthread_mutex_lock(&sl->lock);
    if (sl->phase != phase || sl->index != index || sl->elements != elements) {
        sl->phase = phase;
        sl->index = index;
        sl->elements = elements;
        sl->since = sml_prop_now();
    }
    sl->prop = prop;
    pthread_mutex_unlock(&sl->lock);
}

/* The thread starts a run of job j (j >= 0), or has ended one (-1: idle). */
static void slot_job(suite_slot *sl, int j) {
    pthread_mutex_lock(&sl->lock);
    sl->job = j;
    sl->phase = SML_PROP_PHASE_IDLE;
    pthread_mutex_unlock(&sl->lock);
}

int sml_prop_suite_tasks(const sml_prop_job *jobs, int njobs) {
    int total = 0;
    for (int j = 0; j < njobs; j++) total += sml_prop_parts_for(&jobs[j].cfg);
    return total;
}

/* Queue the jobs' parts, job after job: a job of enough cases is split into parts (parts.h).
 * Their memory is taken when the first part starts (open_parts) and given back at the join.
 * 0 when the queue cannot be allocated. */
static int plan_tasks(suite_state *st) {
    int total = 0;
    st->parts = calloc((size_t)st->njobs, sizeof *st->parts);
    if (!st->parts) return 0;
    for (int j = 0; j < st->njobs; j++) {
        job_parts *jp = &st->parts[j];
        jp->n = jp->left = sml_prop_parts_for(&st->jobs[j].cfg);
        total += jp->n;
    }
    st->tasks = malloc((size_t)total * sizeof *st->tasks);
    if (!st->tasks) return 0;
    st->ntasks = 0;
    for (int j = 0; j < st->njobs; j++)
        for (int q = 0; q < st->parts[j].n; q++) st->tasks[st->ntasks++] = (task){j, q};
    return 1;
}

static void close_parts(job_parts *jp) {
    for (int q = 0; jp->log && q < jp->n; q++) sml_prop_case_log_free(&jp->log[q]);
    free(jp->part);
    free(jp->log);
    sml_prop_part_share_free(jp->share);
    jp->part = NULL;
    jp->log = NULL;
    jp->share = NULL;
}

/* The parts of a split job, made from it (under the queue's lock, as its first part starts,
 * before any other is taken). Without the memory for them the job runs whole: n and left
 * become 1, and its other parts' tasks are passed over. */
static void open_parts(job_parts *jp, const sml_prop_job *job) {
    jp->part = calloc((size_t)jp->n, sizeof *jp->part);
    jp->log = calloc((size_t)jp->n, sizeof *jp->log);
    jp->share = sml_prop_part_share_new();
    if (!jp->part || !jp->log || !jp->share) {
        close_parts(jp);
        jp->n = jp->left = 1;
        return;
    }
    for (int q = 0; q < jp->n; q++) {
        jp->part[q] = *job;
        jp->part[q].cfg.part = (sml_prop_part){q, jp->n};
        jp->part[q].cfg.share = jp->share;
        jp->part[q].cfg.log_out = &jp->log[q];
    }
}

static void free_tasks(suite_state *st) {
    for (int j = 0; st->parts && j < st->njobs; j++) close_parts(&st->parts[j]);
    free(st->parts);
    free(st->tasks);
}

/* The last part of a split job has finished: its result is the parts' joined, its status
 * the first part's error, if any. */
static void join_parts(sml_prop_job *job, job_parts *jp) {
    const sml_prop_result *res[SML_PROP_MAX_THREADS]; /* sml_prop_parts_for: at most that many */
    job->status = SML_OK;
    for (int q = 0; q < jp->n; q++) {
        res[q] = &jp->part[q].res;
        if (job->status == SML_OK) job->status = jp->part[q].status;
    }
    sml_prop_parts_join(&job->cfg, res, jp->log, jp->n, &job->res);
}

static void *worker(void *arg) {
    worker_arg *w = arg;
    suite_state *st = w->st;
    sml_gpu_use(st->device);
    /* The host buffers this thread's runs keep their cases' arrays in, from run to run (a
     * job's parts are runs of their own); without memory for it each run keeps its own. */
    sml_prop_pool *pool = sml_prop_pool_new();
    for (;;) {
        pthread_mutex_lock(&st->lock);
        if (st->next >= st->ntasks) {
            pthread_mutex_unlock(&st->lock);
            sml_prop_pool_free(pool);
            return NULL;
        }
        task t = st->tasks[st->next++];
        job_parts *jp = &st->parts[t.j];
        sml_prop_job *whole = &st->jobs[t.j];
        if (t.q == 0 && jp->n > 1) open_parts(jp, whole);
        if (t.q >= jp->n) { /* its job runs whole after all (open_parts) */
            pthread_mutex_unlock(&st->lock);
            continue;
        }
        sml_prop_job *job = jp->n > 1 ? &jp->part[t.q] : whole;
        /* The run's cap, the same moment for every job; no job has a time of its own. */
        job->cfg.total_seconds = st->s->total_seconds;
        job->cfg.deadline = st->s->total_seconds > 0 ? st->t0 + st->s->total_seconds : 0.0;
        pthread_mutex_unlock(&st->lock);
        slot_job(&st->slot[w->id], t.j);

        job->cfg.hooks = (sml_prop_hooks){.case_done = tally_case,
                                          .report_begin = tally_report_begin,
                                          .report_end = tally_report_end,
                                          .case_begin = slot_case_begin,
                                          .ctx = &st->slot[w->id]};
        job->cfg.progress = NULL; /* the suite draws the one progress line */
        job->cfg.pool = pool;
        job->cfg.cases = st->cases;
        job->status = st->s->run ? st->s->run(job, w->id, st->s->run_ctx)
                                 : sml_prop_run(job->k, job->op, job->dtype, &job->cfg, &job->res);
        job->cfg.hooks = (sml_prop_hooks){0};
        job->cfg.pool = NULL;
        job->cfg.cases = NULL;
        slot_job(&st->slot[w->id], -1);

        pthread_mutex_lock(&st->lock);
        int last = --jp->left == 0;
        pthread_mutex_unlock(&st->lock);
        if (!last) continue;
        if (jp->n > 1) {
            join_parts(whole, jp);
            close_parts(jp);
        }

        tally_report_begin(&st->slot[w->id]);
        if (st->s->done) st->s->done(whole, st->s->ctx);
        tally_report_end(&st->slot[w->id]);

        pthread_mutex_lock(&st->lock);
        st->finished++;
        pthread_cond_signal(&st->changed);
        pthread_mutex_unlock(&st->lock);
    }
}

/* The case that has held its thread longest, where that is slow_after seconds or more:
 * "; cudnn log_softmax_bwd fp32 case 99871 (8388608 elements, checking agreement) for 250 s" into
 * buf, else "". A run that has gone quiet says what it waits for. */
static void name_slowest(suite_state *st, double now, char *buf, size_t n) {
    buf[0] = 0;
    double after = st->s->slow_after > 0 ? st->s->slow_after : 30.0, oldest = now, elements = 0;
    int job = -1, phase = 0, prop = 0;
    int64_t index = 0;
    for (int i = 0; i < st->threads; i++) {
        suite_slot *sl = &st->slot[i];
        pthread_mutex_lock(&sl->lock);
        if (sl->job >= 0 && sl->phase != SML_PROP_PHASE_IDLE && sl->since < oldest) {
            oldest = sl->since;
            job = sl->job;
            phase = sl->phase;
            prop = sl->prop;
            index = sl->index;
            elements = sl->elements;
        }
        pthread_mutex_unlock(&sl->lock);
    }
    if (job < 0 || now - oldest < after) return;
    const sml_prop_job *j = &st->jobs[job];
    const char *what = phase == SML_PROP_PHASE_SHRINK       ? "shrinking case"
                       : phase == SML_PROP_PHASE_REGRESSION ? "reproducer"
                                                            : "case";
    snprintf(buf, n, "; %s %s %s %s %lld (%.0f elements, checking %s) for %.0f s", j->k->name,
             sml_op_name(j->op), sml_dtype_name(j->dtype), what, (long long)index, elements,
             sml_prop_name((sml_prop_id)prop), now - oldest);
}

/* "label: 31/84 runs done, 8 running (naive softmax fp16, ... +6), 312004 cases, 0 failed, 93 s
 * of 540 s", and the slowest case where one has held its thread long (name_slowest). running:
 * room for a job per thread, read from the slots here. */
static void draw_progress(suite_state *st, int finished, int *running) {
    suite_tally *t = &st->tally;
    char now[160] = "";
    int shown = 0, more = 0, nrun = 0;
    for (int i = 0; i < st->threads; i++) {
        pthread_mutex_lock(&st->slot[i].lock);
        running[i] = st->slot[i].job;
        pthread_mutex_unlock(&st->slot[i].lock);
    }
    for (int i = 0; i < st->threads; i++) {
        int seen = 0; /* a job's parts are one run */
        for (int k = 0; k < i && !seen; k++) seen = running[k] == running[i];
        if (running[i] < 0 || seen) continue;
        nrun++;
        if (shown == 2) {
            more++;
            continue;
        }
        const sml_prop_job *j = &st->jobs[running[i]];
        size_t len = strlen(now);
        snprintf(now + len, sizeof now - len, "%s%s %s %s", shown ? ", " : "", j->k->name,
                 sml_op_name(j->op), sml_dtype_name(j->dtype));
        shown++;
    }
    if (more) {
        size_t len = strlen(now);
        snprintf(now + len, sizeof now - len, " +%d", more);
    }
    double at = sml_prop_now(), spent = at - st->t0;
    char budget[48] = "", slow[200];
    if (st->s->total_seconds > 0)
        snprintf(budget, sizeof budget, " (cap %.0f s)", st->s->total_seconds);
    name_slowest(st, at, slow, sizeof slow);
    pthread_mutex_lock(&t->out);
    fprintf(t->progress,
            "%s%s: %d/%d runs done, %d running%s%s%s, %lld cases, %lld failed, %.0f s%s%s%s",
            t->tty ? "\r\033[K" : "", st->s->label ? st->s->label : "check", finished, st->njobs,
            nrun, nrun ? " (" : "", now, nrun ? ")" : "", (long long)atomic_load(&t->cases),
            (long long)atomic_load(&t->failed_cases), spent, budget, slow, t->tty ? "" : "\n");
    fflush(t->progress);
    t->drawn = t->tty;
    pthread_mutex_unlock(&t->out);
}

/* The memory the shared cases may hold: an eighth of the machine's, at most 16 GiB. The
 * suite runs kernel after kernel (a GPU's contexts of separate processes take turns), so a
 * kernel's big cases wait there for the kernels after it: every big case of a run, where
 * they fit. */
static size_t share_budget(void) {
    size_t phys = sml_prop_host_phys_bytes(), cap = (size_t)16 << 30;
    if (!phys) return (size_t)1 << 30;
    return phys / 8 < cap ? phys / 8 : cap;
}

sml_status sml_prop_suite_run(const sml_prop_suite *s, sml_prop_job *jobs, int njobs) {
    if (!s || (njobs > 0 && !jobs) || njobs < 0) return SML_ERR_INVALID_ARG;
    if (njobs == 0) return SML_OK;
    suite_state st;
    memset(&st, 0, sizeof st);
    st.s = s;
    st.jobs = jobs;
    st.njobs = njobs;
    if (!plan_tasks(&st)) {
        free_tasks(&st);
        return SML_ERR_OUT_OF_MEMORY;
    }
    st.threads = s->threads < 1 ? 1 : s->threads > st.ntasks ? st.ntasks : s->threads;
    st.tally.progress = s->progress;
    st.tally.tty = s->progress ? isatty(fileno(s->progress)) : 0;
    atomic_init(&st.tally.cases, 0);
    atomic_init(&st.tally.failed_cases, 0);
    st.slot = calloc((size_t)st.threads, sizeof *st.slot);
    pthread_t *tid = malloc((size_t)st.threads * sizeof *tid);
    worker_arg *args = malloc((size_t)st.threads * sizeof *args);
    int slots = 0; /* slot locks made */
    if (st.slot && tid && args) {
        for (; slots < st.threads; slots++) {
            st.slot[slots].tally = &st.tally;
            st.slot[slots].job = -1;
            if (pthread_mutex_init(&st.slot[slots].lock, NULL)) break;
        }
    }
    if (slots < st.threads || pthread_mutex_init(&st.lock, NULL) ||
        pthread_mutex_init(&st.tally.out, NULL) || pthread_cond_init(&st.changed, NULL)) {
        for (int i = 0; i < slots; i++) pthread_mutex_destroy(&st.slot[i].lock);
        free_tasks(&st);
        free(st.slot);
        free(tid);
        free(args);
        return SML_ERR_OUT_OF_MEMORY;
    }
    /* Only when a GPU job is among them: asking the runtime would start CUDA for CPU runs. */
    st.device = -1;
    for (int i = 0; i < njobs && st.device < 0; i++)
        if (jobs[i].k->device == SML_DEVICE_GPU && sml_gpu_available())
            st.device = sml_gpu_current();
    if (njobs > 1 && !s->own_cases) st.cases = sml_prop_case_cache_new(share_budget());
    for (int j = 0; st.cases && j < njobs; j++) {
        sml_prop_case_key kind =
            sml_prop_case_key_of(jobs[j].k, jobs[j].op, jobs[j].dtype, &jobs[j].cfg.sizes, 0, 0);
        if (!sml_prop_case_cache_expect(st.cases, &kind)) {
            sml_prop_case_cache_free(st.cases); /* without its counts, nothing is shared */
            st.cases = NULL;
        }
    }
    if (s->cap) s->cap(s->run_ctx, s->total_seconds);
    st.t0 = sml_prop_now();

    /* Threads that cannot be made are done without: the rest take their jobs. */
    int started = 0;
    pthread_mutex_lock(
        &st.lock); /* no job starts before st.threads is final (it sets the shares) */
    for (int i = 0; i < st.threads; i++) {
        args[i] = (worker_arg){&st, i};
        if (pthread_create(&tid[i], NULL, worker, &args[i])) break;
        started++;
    }
    if (started == 0) {
        st.threads = 1;
        pthread_mutex_unlock(&st.lock);
        args[0] = (worker_arg){&st, 0};
        worker(&args[0]);
    } else {
        st.threads = started;
        double every = s->progress_every > 0 ? s->progress_every
                       : st.tally.tty        ? 0.5
                                             : 10.0,
               last = st.t0;
        int *snap = malloc((size_t)started * sizeof *snap);
        while (st.finished < njobs) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 250 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&st.changed, &st.lock, &ts);
            double now = sml_prop_now();
            if (!s->progress || !snap || now - last < every || st.finished >= njobs) continue;
            last = now;
            int finished = st.finished;
            pthread_mutex_unlock(&st.lock);
            draw_progress(&st, finished, snap);
            pthread_mutex_lock(&st.lock);
        }
        pthread_mutex_unlock(&st.lock);
        for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
        free(snap);
    }
    clear_line(&st.tally);
    pthread_cond_destroy(&st.changed);
    pthread_mutex_destroy(&st.lock);
    pthread_mutex_destroy(&st.tally.out);
    for (int i = 0; i < slots; i++) pthread_mutex_destroy(&st.slot[i].lock);
    free_tasks(&st);
    free(st.slot);
    free(tid);
    free(args);
    sml_prop_case_cache_free(st.cases);
    return SML_OK;
}
