/* suite.h: many kernel/op/dtype runs of the engine at once, on a pool of host threads.
 *
 * One GPU case costs far more host time (drawing, the double reference, the checks, the
 * copies and the waits) than GPU time, so a run of the whole registry is bound by one host
 * core unless the runs go side by side. Each run already owns everything it touches (a
 * handle, buffers and a non-blocking stream, made by sml_prop_run), so the suite only hands
 * out jobs, shares the time budget and keeps the output in one piece:
 *
 *   - a job of enough cases is split into parts (parts.h) whose results are joined into the
 *     job's, and the parts start in the order of their jobs (kernel after kernel: the jobs of
 *     a kernel share its worker, src/worker) as threads come free, so one kernel's parts keep
 *     every thread busy until it is done;
 *   - every job runs its profile's cases; the run's cap (total_seconds, --seconds), when
 *     there is one, is the same moment for all of them (cfg.deadline), and a job it stops
 *     before its cases are done is INCOMPLETE (verdict.h);
 *   - the suite draws one progress line for everything (runs done and running, cases,
 *     failures, time, and the case that has held its thread longest once that is long),
 *     and `done` reports each finished job, one at a time, in the order they finish;
 *     failure reports from the engine take the same lock.
 *
 * With threads = 1 this is the sequential loop every driver used to have. */
#ifndef SML_PROP_SUITE_H
#define SML_PROP_SUITE_H

#include <stdio.h>

#include "prop/prop.h"

typedef struct sml_prop_job {
    const sml_kernel *k;
    sml_op op;
    sml_dtype dtype;
    sml_prop_config cfg; /* this run's cases and sizes; the suite sets deadline, hooks
                             and progress */
    sml_status status;   /* what sml_prop_run returned (an error only for a bad argument) */
    sml_prop_result res;
} sml_prop_job;

/* Called once per finished job, under the suite's output lock. */
typedef void (*sml_prop_job_done_fn)(sml_prop_job *job, void *ctx);

typedef struct sml_prop_suite {
    int threads;          /* host threads; clamped to 1..the jobs' tasks */
    double total_seconds; /* the run's cap (--seconds); 0: none */
    const char *label;    /* progress line prefix */
    FILE *progress;       /* the progress line; NULL: none */
    sml_prop_job_done_fn done;
    void *ctx;
    /* How a job runs: NULL: sml_prop_run in this process; else run(job, slot, run_ctx) on
       suite thread `slot` (0..threads-1), which fills job->status and job->res (a worker
       process per slot: src/worker). job->cfg.hooks are the suite's when it is called. */
    sml_status (*run)(sml_prop_job *job, int slot, void *run_ctx);
    void *run_ctx;
    /* When set, called with run_ctx and total_seconds as the suite starts, before any job:
       the workers' own cap then starts with this run and ends with it (0: none). A second
       run on the same workers (check --against's base, which must run every case the
       candidate counted) is then held to its own cap, not to the first run's. */
    void (*cap)(void *run_ctx, double total_seconds);
    /* The progress line's rhythm (0: the defaults): a line every progress_every seconds (0.5
       on a terminal, else 10), which names the case that has held its thread longest once
       that is slow_after seconds or more (30): what a run that has gone quiet waits for. */
    double progress_every, slow_after;
    /* 1: every job draws and references its own cases; 0: the jobs share their big cases
       (case_cache.h), which judges the same cases with the same references in less host time */
    int own_cases;
} sml_prop_suite;

/* The tasks the suite runs for these jobs: each job's parts (parts.h), added up. A driver asks
 * sml_prop_threads for as many threads as this, not as jobs: one job of 100,000 cases runs as
 * 16 parts side by side. */
int sml_prop_suite_tasks(const sml_prop_job *jobs, int njobs);

/* Run every job. SML_OK once all have run (their outcomes are in jobs[i].res);
 * SML_ERR_OUT_OF_MEMORY or SML_ERR_INVALID_ARG when the suite itself cannot start. */
sml_status sml_prop_suite_run(const sml_prop_suite *s, sml_prop_job *jobs, int njobs);

#endif
