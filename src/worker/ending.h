/* ending.h: how a worker ended, and when a case's time is up (src/worker only). */
#ifndef SML_WORKER_ENDING_H
#define SML_WORKER_ENDING_H

#include <stddef.h>

#include "worker/board.h"

typedef struct sml_wk_death {
    int status;     /* the wait status */
    int killed;     /* 0 it ended by itself; 1 killed at the case's deadline; 2 at the run's end */
    double limit;   /* seconds the case had when killed */
    double seconds; /* the job's time until then */
} sml_wk_death;

/* "SIGSEGV", "exited with status 0", "did not finish ... in 4.0 s", "wrote past the end of
 * out by 4096 bytes (SIGSEGV)" plus " during case K" (or what the board says it was doing).
 * A worker stopped at the run's end (killed 2) is no cause: crash.c says so itself. */
void sml_wk_cause(const sml_wk_death *d, const sml_worker_slot *b, char *buf, size_t n);
/* "SIGSEGV" and the like; NULL for a signal it does not name. */
const char *sml_wk_signal_name(int sig);
/* How a process with wait status `status` ended: "SIGSEGV" ("signal N" where it has no name),
 * "exited with status N", or "ended (wait status 0x...)". */
void sml_wk_status_words(int status, char *buf, size_t n);
/* What the board says the slot was doing: "during case K", "while shrinking case K", "during
 * saved reproducer K", "during the replayed case" or "before its first case". */
void sml_wk_doing(const sml_worker_slot *b, char *buf, size_t n);

#endif
