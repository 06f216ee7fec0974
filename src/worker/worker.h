/* worker.h: judged kernels run in worker processes; the process that keeps the verdicts
 * (the supervisor) never calls one and decides from nothing a worker writes but the bytes a
 * kernel's launch gave back, which it judges itself against its own double-precision
 * reference. A worker is the softmax-lab binary (or the Python binding) re-executed with the
 * hidden command `__worker` for one kernel: it takes launches (a case's layout as an image,
 * prop/exec.h) over a socket per slot, the image in the slot's window (window.h), runs the
 * kernel and answers with what came out. The
 * property engine runs in the supervisor with a launcher that sends each of its launches to
 * the kernel's worker (pool.c, channel.c): cases, references, comparisons, shrinking and
 * reproducers all stay on the supervisor's side.
 *
 * How a launch ends, and what that is (channel.c):
 *   - an answer that matches the request (its frame type, sequence number, and the bytes the
 *     request allows): judged by the engine like any run;
 *   - anything else on the socket: FAIL ("answered with a frame that does not match");
 *   - the worker's death in this launch's thread (a signal, exit()): FAIL with the cause;
 *   - a death no thread can be named for (_exit(), a kill from outside), or one in another
 *     launch's thread: the launch runs again alone in a fresh worker, and that run is its
 *     answer (a death there is its FAIL);
 *   - past its deadline (sml_worker_case_deadline, or --case-timeout): a suspicion only. The
 *     worker is killed and the launch runs again alone under ten times the deadline: an answer
 *     there is judged (the case was slow, and the report says so); none is a FAIL "did not
 *     finish";
 *   - the run's cap (--seconds): no answer, no verdict; the job is INCOMPLETE;
 *   - a CUDA error: the worker's context may be lost, so the worker takes no new launch.
 * docs/SECURITY.md says what this protects against and what not. */
#ifndef SML_WORKER_WORKER_H
#define SML_WORKER_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "edge/edge.h"
#include "prop/prop.h"
#include "prop/suite.h"

typedef struct sml_worker_board sml_worker_board; /* the shared page (board.h) */

typedef struct sml_worker {
    pid_t pid;                      /* 0: none */
    int nslots;                     /* launches it can run at once, each on its own thread */
    int sock[SML_PROP_MAX_THREADS]; /* the supervisor's end of each slot's socket pair */
    sml_worker_board *board;
    size_t board_bytes;
    char library[4096];      /* the Python module source the worker imported, "" none */
    int device;              /* the GPU it sees (-1: the supervisor's view) */
    const char *const *wrap; /* the tool the worker runs under (argv prefix), or NULL */
} sml_worker;

/* How a worker is started: for which kernel, on which GPU (CUDA_VISIBLE_DEVICES of the child is
 * that entry of the supervisor's visible list; -1: the same view as the supervisor), which
 * kernel library it must import first (only a Python module needs it: the C plugin libraries
 * the supervisor loaded are loaded by every worker at its start), and how many launches it
 * runs at once. */
typedef struct sml_worker_opts {
    const char *kernel; /* NULL with `edge`: the edge-shape harness's worker (every kernel) */
    int edge;
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
/* Wait until the worker says it has started (its kernel found, a Python kernel's module
 * imported, its device's context made: what a first launch would otherwise pay inside its
 * deadline), at most `limit` seconds or until the run's cap (an absolute sml_prop_now() time;
 * 0: none). 0 started, 1 not within `limit`, 2 the cap came first, -1 the worker ended first
 * (its first launch finds out how). A worker that says it started when it has not only makes
 * its own first launch late. */
int sml_worker_await_start(const sml_worker *w, double limit, double cap);
/* How long a worker may take to start (sml_worker_await_start): importing PyTorch or Triton and
 * making a CUDA context take seconds, more on a loaded host or under compute-sanitizer. */
#define SML_WORKER_START_LIMIT_S 300.0

/* Ask it to quit, wait (up to a second, a minute under a tool), then kill it; always reaps.
 * Its wait status, -1 when there was none. */
int sml_worker_close(sml_worker *w);

/* The seconds a launch of a case of `elements` input elements may take in a worker before it
 * is a suspect (then confirmed alone under ten times as long): 200 times the double-precision
 * reference's time for the elements on this machine, measured once, at least
 * SML_WORKER_FLOOR_S. A kernel slower than that is judged all the same; a hung one costs
 * eleven deadlines. */
#define SML_WORKER_FLOOR_S 4.0
double sml_worker_case_deadline(double elements);

/* Replay the reproducer at path on kernel `kernel` ("" or NULL: the one it names) in a fresh
 * worker. SML_OK with r filled; when the worker ends abnormally r->outcome is FAIL and
 * r->message the cause. case_timeout: --case-timeout (0: derived). */
sml_status sml_worker_replay(const char *path, const char *kernel, double case_timeout,
                             sml_prop_replay_result *r);

/* The worker's side, `softmax-lab __worker`: serve launches until told to quit. */
int sml_worker_main(int argc, char **argv);

/* The workers of a suite (sml_prop_suite.run = sml_worker_suite_run, run_ctx = the pool).
 *
 * A worker runs one kernel, so no kernel is ever blamed for another's end. By default the jobs
 * of a kernel share its worker: one per kernel and GPU, with a slot per suite thread, so the
 * kernel's jobs on a GPU share one CUDA context as they would in one process (contexts of
 * separate processes take turns on a GPU). The suite runs the jobs kernel after kernel, each
 * split in parts (prop/parts.h) so that one kernel's fill every thread: few kernels' workers
 * are open at once, and two run launches together only where one kernel ends and the next
 * begins. With `share` 0 (a tool wraps the worker, whose verdict is
 * its exit status, or SML_WORKER_SHARE=0) every job has a worker of its own. */
typedef struct sml_worker_pool sml_worker_pool;
/* case_timeout: --case-timeout (0: derived); threads: the suite's; device: the GPU of every
 * worker (-1: the supervisor's view); wrap: a tool every worker runs under, or NULL. No cap
 * until a suite run sets one (sml_worker_suite_cap). NULL when there is no memory. */
sml_worker_pool *sml_worker_pool_new(double case_timeout, int threads, int device,
                                     const char *const *wrap);
sml_status sml_worker_suite_run(sml_prop_job *job, int slot, void *pool);
/* The pool's cap for the run that starts now (sml_prop_suite.cap): total_seconds from now,
 * with the grace a launch in flight gets; 0: none. Called before the run's threads start. */
void sml_worker_suite_cap(void *pool, double total_seconds);
/* The runner (prop.h) of suite thread `slot`: its jobs' launches go to the pool's workers. */
sml_prop_runner sml_worker_runner(sml_worker_pool *p, int slot);
/* Ends every worker. A worker that ended on its own after its kernel's last launch (a timer
 * in the kernel, say) is that kernel's FAIL: each job of jobs[0..njobs) with that kernel gets
 * the failure (res->events, res->verdict) and a line says so. */
void sml_worker_pool_close(sml_worker_pool *p, sml_prop_job *jobs, int njobs);
/* Ends every worker and frees the pool, for a command that ran one kernel through it: 1 when
 * k's worker ended on its own after its last launch (the cause in cause[]), else 0. */
int sml_worker_pool_finish(sml_worker_pool *p, const sml_kernel *k, char *cause, size_t n);

/* The edge-shape harness's kernels in a worker process (edge_remote.c, edge_serve.c): the
 * harness (src/edge) keeps its inputs, references and every check, and the worker holds its
 * device buffers and runs each kernel launch (edge/edge.h, sml_edge_remote). device: the GPU
 * the worker sees (an entry of this process's visible list; -1: the same view); case_timeout:
 * --case-timeout (0: derived from each launch's size). Free closes the worker and prints how
 * many launches were slow. */
typedef struct sml_wk_edge sml_wk_edge;
sml_wk_edge *sml_worker_edge_new(int device, double case_timeout);
sml_edge_remote sml_worker_edge_remote(sml_wk_edge *e);
void sml_worker_edge_free(sml_wk_edge *e);

/* A whole command in a worker process (command.c), for the commands that run kernels
 * outside the suite's jobs and judge them there: bench.
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
