/* board.h: what a worker and its supervisor share, inside src/worker only.
 *
 * The board is shared memory with one slot per job the worker can run at once: the thread
 * serving a slot writes the case it is about to run before it runs it (no system call per
 * case), and, from the fault handler, where a fault hit; the supervisor reads it while the
 * worker runs (progress, deadlines) and after it died (the cause, and whose it was). Each
 * slot has its own socket, carrying frames [u32 type][u32 length][payload] both ways. */
#ifndef SML_WORKER_BOARD_H
#define SML_WORKER_BOARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "prop/prop.h"

/* The most case ratios a job ships back (64 MiB of floats; a shard of the nightly profile
 * holds far fewer). */
#define SML_WK_MAX_RATIOS ((int64_t)1 << 24)

/* One job slot: what the thread serving it is doing. */
typedef struct sml_worker_slot {
    atomic_int phase; /* SML_PROP_PHASE_* (IDLE between jobs and while starting) */
    atomic_llong seq; /* bumped at every announcement */
    int64_t index;    /* the case (or the regression's index) */
    int level, prop;
    double elements;
    double start;                     /* sml_prop_now() when announced (CLOCK_MONOTONIC) */
    atomic_llong cases, failed_cases; /* cases finished in the current job */
    atomic_int fault_set;             /* the fault handler wrote `fault` */
    char fault[256];                  /* "wrote past the end of out by 4096 bytes" */
} sml_worker_slot;

/* The whole board: which slot's thread ended the worker, when the worker knows, then the
 * slots. A fatal signal is raised in the thread that faulted and exit() runs its handlers
 * in the thread that called it, so both name their slot; _exit() and a signal sent from
 * outside name none. */
typedef struct sml_worker_board sml_worker_board;
struct sml_worker_board {
    int nslots;
    atomic_int fault_slot; /* took a fatal signal (-1: none) */
    atomic_int exit_slot;  /* called exit() (-1: none) */
    sml_worker_slot slot[];
};

/* Bytes of the board of n slots, a whole number of pages. */
size_t sml_wk_board_bytes(int nslots);

enum {
    SML_WK_JOB = 1, /* supervisor -> worker: a suite job (frame: job_msg, strings) */
    SML_WK_REPLAY,  /* supervisor -> worker: replay a reproducer (path \0 kernel \0) */
    SML_WK_QUIT,
    SML_WK_TEXT = 16, /* worker -> supervisor: lines of a failure report */
    SML_WK_RESULT,    /* sml_prop_result */
    SML_WK_REPLAYED,  /* sml_prop_replay_result */
    SML_WK_RATIOS     /* before RESULT, when the job asked for them (a shard's run): each
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

/* The worker's handler of fatal signals (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) and of
 * exit(): names the slot of the thread they came from in the board, and for a fault the
 * guard zone it hit (prop/guard.h), then lets the signal (or the exit) end the worker. */
void sml_wk_fault_install(struct sml_worker_board *b);
/* The slot the calling thread serves (-1: none), and the worker ending normally. */
void sml_wk_fault_slot(int slot);
void sml_wk_fault_quitting(void);

#endif
