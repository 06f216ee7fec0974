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
    pid_t pid;                      /* 0: none */
    int nslots;                     /* jobs it can run at once, each on its own thread and socket */
    int sock[SML_PROP_MAX_THREADS]; /* the supervisor's end of each slot's socket pair */
    sml_worker_board *board;
    size_t board_bytes;
    char library[4096];      /* the Python module source the worker imported, "" none */
    int device;              /* the GPU it sees (-1: the supervisor's view) */
    const char *const *wrap; /* the tool the worker runs under (argv prefix), or NULL */
} sml_worker;

/* How a worker is started: on which GPU (CUDA_VISIBLE_DEVICES of the child is that entry of
 * the supervisor's visible list; -1: the same view as the supervisor), which kernel library
 * it must import first (only a Python module needs it: C plugin libraries travel with each
 * job and are loaded by the worker on first use), and how many jobs it runs at once. */
typedef struct sml_worker_opts {
    int device;
    const char *library;
    const char *const *wrap; /* NULL, or a tool's argv prefix (NULL-terminated) the worker
                                  runs under: compute-sanitizer --tool racecheck ... */
    int slots;               /* 1..SML_PROP_MAX_THREADS (0: 1) */
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

/* The workers of a suite (sml_prop_suite.run = sml_worker_suite_run, run_ctx = the pool).
 *
 * By default the suite's jobs share workers: one worker per GPU (per kernel library that
 * needs its own interpreter), running as many jobs at once as the suite has threads, so
 * jobs on a GPU share one CUDA context as they would in one process (contexts of separate
 * processes take turns on a GPU; many of them run the suite several times slower). A job
 * that ends a shared worker is a FAIL when the worker can say whose it was (the thread
 * that faulted, called exit() or passed its case's deadline); the jobs beside it run again
 * in a fresh worker. Where it cannot say (an _exit(), a kill from outside), each job that
 * was in it runs again alone in a fresh worker and that run is its verdict. Jobs do not
 * shrink in a shared worker (shrinking holds the kernel's stream, which stalls the other
 * threads of the context): a job that does not pass there runs again alone, where it
 * shrinks, and that run is its verdict (a sticky CUDA error, which shows in every job of the
 * context, so lands on the kernel that caused it). A worker in which a job did not pass
 * takes no new job.
 *
 * With `share` 0 (a tool wraps the worker, whose verdict is its exit status, or
 * SML_WORKER_SHARE=0) every suite thread has a worker of its own, one job at a time. */
typedef struct sml_worker_pool {
    sml_worker w[SML_PROP_MAX_THREADS]; /* the unshared workers, one per suite thread */
    double deadline;                    /* monotonic seconds the run must end by; 0: none */
    int device;   /* the GPU of every worker (-1: the supervisor's view) ... */
    int ndevices; /* ... or, when > 0, suite thread t's jobs run on devices[t % n] */
    int devices[SML_PROP_MAX_THREADS];
    const char *const *wrap;     /* every worker runs under this tool (sml_worker_opts.wrap) */
    int share;                   /* 1: jobs share workers (the default; see above) */
    int threads;                 /* the suite's threads: slots of a shared worker */
    struct sml_wk_share *shared; /* the shared workers (share.c) */
} sml_worker_pool;
/* total_seconds: the run's --seconds (0: none); threads: the suite's. */
void sml_worker_pool_init(sml_worker_pool *p, double total_seconds, int threads);
sml_status sml_worker_suite_run(sml_prop_job *job, int slot, void *pool);
void sml_worker_pool_close(sml_worker_pool *p);

/* A whole command in a worker process (command.c), for the commands that run kernels
 * outside the suite's jobs: check --input and --against, bench, the edge-shape harness.
 * available: this program can run itself again (it is softmax-lab or
 * softmax-lab-edge-shapes, or SML_COMMAND_ARGV names the program to run by its absolute
 * path, and it is not itself such a worker). sml_worker_command runs `line` (the command's
 * argv, NULL-terminated) again with --in-process, in this executable or in SML_COMMAND_ARGV's
 * program, and returns its exit code, or 1 with a FAIL naming the kernel when the child ended
 * before its command returned (an exit, a signal, a kernel call past `slow` times the
 * suite's case deadline). With `again`, a kernel that ended the child is named to the next
 * run in SML_WORKER_ENDED (lines "kernel<TAB>cause"; the bench writes them into that
 * kernel's rows and does not run it) and the command runs again, so the rest is still
 * measured; the exit code is then at least 1. `out` (>= 0): the child's standard output (the
 * real one while this process's goes to standard error). The child calls
 * sml_worker_command_child first (1: it is one) and sml_worker_command_done with the
 * command's exit code last. */
int sml_worker_command_available(void);
int sml_worker_command(const char *cmd, double slow, int again, int out, char *const *line);

int sml_worker_command_child(void);
void sml_worker_command_done(int rc);
/* SML_IN_PROCESS_KERNELS (comma-separated names): kernels no worker process can have (the
 * Python binding names those a new interpreter cannot import); their jobs run in this
 * process. 1 for such a kernel. */
int sml_worker_kernel_in_process(const char *name);

#endif
