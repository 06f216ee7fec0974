/* pool.c: workers for a suite (one per suite thread) and a reproducer replayed in a fresh
 * worker. */
#include <stdio.h>
#include <string.h>

#include "worker/board.h"
#include "worker/crash.h"
#include "worker/worker.h"

/* Past the run's --seconds a hung kernel gets this long before it is killed: long enough
 * for a case that started just before the end, short enough that the budget holds. */
static double grace(double total) {
    double g = 0.1 * total;
    return g < 2.0 ? 2.0 : g > 30.0 ? 30.0 : g;
}

void sml_worker_pool_init(sml_worker_pool *p, double total_seconds) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++) {
        p->w[i].sock = -1;
        p->w[i].device = -1;
    }
    p->device = -1;
    p->deadline = total_seconds > 0 ? sml_prop_now() + total_seconds + grace(total_seconds) : 0.0;
}

sml_status sml_worker_suite_run(sml_prop_job *job, int slot, void *pool) {
    sml_worker_pool *p = pool;
    if (slot < 0 || slot >= SML_PROP_MAX_THREADS) return SML_ERR_INVALID_ARG;
    p->w[slot].device = p->device;
    p->w[slot].wrap = p->wrap;
    return sml_worker_run_job(&p->w[slot], job, p->deadline);
}

void sml_worker_pool_close(sml_worker_pool *p) {
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++) sml_worker_close(&p->w[i]);
}
