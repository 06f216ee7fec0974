/* job_wait.h: sending a suite job to a worker's slot and waiting for its answer, shared by
 * the unshared workers (supervise.c) and the shared ones (share.c); src/worker only. */
#ifndef SML_WORKER_JOB_WAIT_H
#define SML_WORKER_JOB_WAIT_H

#include <stddef.h>

#include "prop/suite.h"
#include "worker/board.h"

typedef enum {
    SML_WK_GOT_RESULT, /* job->res and job->status are the worker's answer */
    SML_WK_DIED,       /* the socket closed before the answer */
    SML_WK_KILL_CASE,  /* the slot's case passed its deadline: the caller kills the worker */
    SML_WK_KILL_RUN    /* the run's time ran out: the caller kills the worker */
} sml_wk_end;

/* Failure reports held back until the job's verdict is known (a job that may run again). */
typedef struct sml_wk_text {
    char *p;
    size_t n, cap;
} sml_wk_text;

/* Before a job: the slot idle, nothing counted, no fault. */
void sml_wk_slot_reset(sml_worker_slot *bs);
/* 0 sent. */
int sml_wk_send_job(int sock, const sml_prop_job *job);
/* Wait for the job's RESULT on sock while watching slot bs: progress into the suite's
 * hooks, the case's deadline (times `slow`: a tool runs kernels tens of times slower) and
 * the run's `deadline` (monotonic; 0 none). Failure reports are printed as they come, or
 * kept in `hold` when it is not NULL. On a KILL end *limit is the seconds the case had. */
sml_wk_end sml_wk_await(int sock, const sml_worker_slot *bs, sml_prop_job *job, double deadline,
                        double slow, sml_wk_text *hold, double *limit);
/* Print what was held (under the suite's output lock) and free it; or just free it. */
void sml_wk_text_flush(const sml_prop_job *job, sml_wk_text *t);
void sml_wk_text_drop(sml_wk_text *t);

#endif
