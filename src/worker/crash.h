/* crash.h: a worker that ended before it answered, made into a verdict (src/worker only). */
#ifndef SML_WORKER_CRASH_H
#define SML_WORKER_CRASH_H

#include <stddef.h>

#include "prop/suite.h"
#include "worker/board.h"
#include "worker/ending.h"

/* Fill job->res as a FAIL with that cause, save the case as a reproducer and report it; where
 * the run's time budget ended the worker (d->killed 2), the job keeps what was judged before
 * the case in flight, which is no verdict, and a note says so. */
void sml_wk_crash_result(sml_prop_job *job, const sml_worker_slot *b, const sml_wk_death *d);

/* Each failure of job->res that a CUDA error ended (ERROR, not shrunk where it happened: the
 * context may be lost) shrunk in fresh workers, its reproducer replaced by the smallest case
 * that ends in the same error, and a line saying so (with --save and shrinking on). */
void sml_wk_shrink_lost_context(sml_prop_job *job);

#endif
