/* crash.h: a worker that ended before it answered, made into a verdict (src/worker only). */
#ifndef SML_WORKER_CRASH_H
#define SML_WORKER_CRASH_H

#include <stddef.h>

#include "prop/suite.h"
#include "worker/board.h"

typedef struct sml_wk_death {
    int status;     /* the wait status */
    int killed;     /* 0 it ended by itself; 1 killed at the case's deadline; 2 at the run's end */
    double limit;   /* seconds the case had when killed */
    double seconds; /* the job's time until then */
} sml_wk_death;

/* "SIGSEGV", "exited with status 0", "did not finish ... in 4.0 s", "wrote past the end of
 * out by 4096 bytes (SIGSEGV)" plus " during case K" (or what the board says it was doing). */
void sml_wk_cause(const sml_wk_death *d, const sml_worker_slot *b, char *buf, size_t n);
/* "SIGSEGV" and the like; NULL for a signal it does not name. */
const char *sml_wk_signal_name(int sig);
/* Fill job->res as a FAIL with that cause, save the case as a reproducer and report it; where
 * the run's time budget ended the worker (d->killed 2), the job keeps what was judged before
 * the case in flight, which is no verdict, and a note says so. */
void sml_wk_crash_result(sml_prop_job *job, const sml_worker_slot *b, const sml_wk_death *d);

/* Each failure of job->res that a CUDA error ended (ERROR, not shrunk where it happened: the
 * context may be lost) shrunk in fresh workers, its reproducer replaced by the smallest case
 * that ends in the same error, and a line saying so (with --save and shrinking on). */
void sml_wk_shrink_lost_context(sml_prop_job *job);

#endif
