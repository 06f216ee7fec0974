/* board.h: what a worker and its supervisor share, inside src/worker only.
 *
 * The board is one shared page: the worker writes the case it is about to run before it
 * runs it (no system call per case), and, from its fault handler, where a fault hit; the
 * supervisor reads it while the worker runs (progress, deadlines) and after it died (the
 * cause). The socket carries frames [u32 type][u32 length][payload] both ways. */
#ifndef SML_WORKER_BOARD_H
#define SML_WORKER_BOARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "prop/prop.h"

/* The most case ratios a job ships back (64 MiB of floats; a shard of the nightly profile
 * holds far fewer). */
#define SML_WK_MAX_RATIOS ((int64_t)1 << 24)

typedef struct sml_worker_board sml_worker_board;
struct sml_worker_board {
    atomic_int phase;          /* SML_PROP_PHASE_* (IDLE between jobs and while starting) */
    atomic_llong seq;          /* bumped at every announcement */
    int64_t index;             /* the case (or the regression's index) */
    int level, prop;
    double elements;
    double start;              /* sml_prop_now() when announced (CLOCK_MONOTONIC) */
    atomic_llong cases, failed_cases; /* cases finished in the current job */
    atomic_int fault_set;      /* the fault handler wrote `fault` */
    char fault[256];           /* "wrote past the end of out by 4096 bytes" */
};

enum {
    SML_WK_JOB = 1,      /* supervisor -> worker: a suite job (frame: job_msg, strings) */
    SML_WK_REPLAY,       /* supervisor -> worker: replay a reproducer (path \0 kernel \0) */
    SML_WK_QUIT,
    SML_WK_TEXT = 16,    /* worker -> supervisor: lines of a failure report */
    SML_WK_RESULT,       /* sml_prop_result */
    SML_WK_REPLAYED,     /* sml_prop_replay_result */
    SML_WK_RATIOS        /* before RESULT, when the job asked for them (a shard's run): each
                          * case's agreement err/bound, case_cap floats (prop.h case_ratio) */
};

/* A job as it travels: the config with its pointers cleared; its strings follow in the
 * frame, each NUL-terminated: library, save_dir, regressions_dir, replay_cmd, rerun_cmd. */
typedef struct sml_worker_job_msg {
    char kernel[64];
    int op, dtype;
    sml_prop_config cfg;
} sml_worker_job_msg;

int sml_wk_send(int fd, uint32_t type, const void *a, size_t na, const void *b, size_t nb);
/* Read one frame: type and a malloc'd payload (NUL-terminated for convenience); 0 ok,
 * -1 end of stream or error. */
int sml_wk_recv(int fd, uint32_t *type, char **payload, size_t *len);

struct sml_worker;
/* Wait for the worker to end, up to `seconds`, then kill it; its wait status. */
int sml_wk_reap(struct sml_worker *w, double seconds);

/* The worker's fault handler (SIGSEGV, SIGBUS): names the guard zone a fault hit
 * (prop/guard.h) in the board, then lets the signal kill the worker. */
void sml_wk_fault_install(struct sml_worker_board *b);

#endif
