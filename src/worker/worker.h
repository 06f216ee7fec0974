/* worker.h: judged kernels run in worker processes; the process that keeps the verdicts
 * (the supervisor) never calls one. A worker is the softmax-lab binary (or the Python
 * binding) re-executed with the hidden command `__worker`: it takes jobs (one kernel, op and
 * dtype of the property suite, or one reproducer to replay) over a socket and answers with
 * their results. Before the kernel runs on a case the worker writes the case into a page it
 * shares with the supervisor (the board), so when the worker dies (a signal, an exit, a
 * deadline passed) the supervisor knows the case, turns the death into a FAIL of that
 * kernel, op and dtype with its cause, saves the case as a reproducer and goes on with a
 * fresh worker. A worker whose job did not pass is never given another job: kernels do not
 * share a CUDA context with one that failed. docs/SECURITY.md says what this protects
 * against and what not. */
#ifndef SML_WORKER_WORKER_H
#define SML_WORKER_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "prop/prop.h"
#include "prop/suite.h"

typedef struct sml_worker_board sml_worker_board; /* the shared page (board.h) */

typedef struct sml_worker {
    pid_t pid;                 /* 0: none */
    int sock;                  /* the supervisor's end of the socket pair */
    sml_worker_board *board;
    char library[4096];        /* the Python module source the worker imported, "" none */
    int device;                /* the GPU it sees (-1: the supervisor's view) */
    const char *const *wrap;   /* the tool the worker runs under (argv prefix), or NULL */
} sml_worker;

/* How a worker is started: on which GPU (CUDA_VISIBLE_DEVICES of the child is that entry of
 * the supervisor's visible list; -1: the same view as the supervisor), and which kernel
 * library it must import first (only a Python module needs it: C plugin libraries travel
 * with each job and are loaded by the worker on first use). */
typedef struct sml_worker_opts {
    int device;
    const char *library;
    const char *const *wrap;   /* NULL, or a tool's argv prefix (NULL-terminated) the worker
                                  runs under: compute-sanitizer --tool racecheck ... */
} sml_worker_opts;

/* The exit status a worker under compute-sanitizer ends with when the tool reported a hazard. */
#define SML_WORKER_SANITIZER_EXIT 86

/* 1 when this process can start workers (it is the softmax-lab executable, or
 * SML_WORKER_ARGV names the worker command), else 0. */
int sml_worker_available(void);
sml_status sml_worker_spawn(sml_worker *w, const sml_worker_opts *o, char *why, size_t n);
/* Ask it to quit, wait (up to a second, a minute under a tool), then kill it; always reaps.
 * Its wait status, -1 when there was none. */
int sml_worker_close(sml_worker *w);

/* The seconds a case of `elements` input elements may take in a worker before it is
 * killed: 200 times the double-precision reference's time for it on this machine, at least
 * SML_WORKER_FLOOR_S. */
#define SML_WORKER_FLOOR_S 4.0
double sml_worker_case_deadline(double elements);

/* Run one job of the suite in w (spawned when w->pid is 0). job->res is the worker's result,
 * or, when the worker ended before answering, a FAIL with the cause in res.note and in
 * failures[0] (its reproducer saved under job->cfg.save_dir), reported through
 * job->cfg.hooks. `deadline` (monotonic seconds, 0: none) is when the whole run must end.
 * The worker is closed after any job that did not pass. */
sml_status sml_worker_run_job(sml_worker *w, sml_prop_job *job, double deadline);

/* Replay the reproducer at path on kernel `kernel` ("" or NULL: the one it names) in a fresh
 * worker. SML_OK with r filled; when the worker ends abnormally r->outcome is FAIL and
 * r->message the cause. */
sml_status sml_worker_replay(const char *path, const char *kernel, sml_prop_replay_result *r);

/* The worker's side, `softmax-lab __worker`: serve jobs until told to quit. */
int sml_worker_main(int argc, char **argv);

/* A pool of workers for a suite (sml_prop_suite.run = sml_worker_suite_run, run_ctx = the
 * pool): one worker per suite thread. */
typedef struct sml_worker_pool {
    sml_worker w[SML_PROP_MAX_THREADS];
    double deadline;           /* monotonic seconds the run must end by; 0: none */
    int device;
    const char *const *wrap;   /* every worker runs under this tool (sml_worker_opts.wrap) */
} sml_worker_pool;
void sml_worker_pool_init(sml_worker_pool *p, double total_seconds);
sml_status sml_worker_suite_run(sml_prop_job *job, int slot, void *pool);
void sml_worker_pool_close(sml_worker_pool *p);

#endif
