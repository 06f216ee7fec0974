/* share.h: jobs in shared workers (share.c; worker.h says the rules); src/worker only. */
#ifndef SML_WORKER_SHARE_H
#define SML_WORKER_SHARE_H

#include "worker/worker.h"

struct sml_wk_share *sml_wk_share_new(void);
/* Ends every worker still running. */
void sml_wk_share_free(struct sml_wk_share *S);
/* Run the job of suite thread `slot` (< p->threads) in the shared worker of `device`. */
sml_status sml_wk_share_run(sml_worker_pool *p, sml_prop_job *job, int slot, int device);

#endif
