/* pool.c: the workers of a suite: shared (share.c), or one per suite thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/board.h"
#include "worker/crash.h"
#include "worker/share.h"
#include "worker/worker.h"

/* Past the run's --seconds a hung kernel gets this long before it is killed: long enough
 * for a case that started just before the end, short enough that the budget holds. */
static double grace(double total) {
    double g = 0.1 * total;
    return g < 2.0 ? 2.0 : g > 30.0 ? 30.0 : g;
}

void sml_worker_pool_init(sml_worker_pool *p, double total_seconds, int threads) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++) p->w[i].device = -1;
    p->device = -1;
    p->deadline = total_seconds > 0 ? sml_prop_now() + total_seconds + grace(total_seconds) : 0.0;
    p->threads = threads < 1 ? 1 : threads > SML_PROP_MAX_THREADS ? SML_PROP_MAX_THREADS : threads;
    const char *env = getenv("SML_WORKER_SHARE");
    p->share = !(env && !strcmp(env, "0"));
    if (p->share) p->shared = sml_wk_share_new();
}

int sml_worker_kernel_in_process(const char *name) {
    const char *v = getenv("SML_IN_PROCESS_KERNELS");
    size_t n = name ? strlen(name) : 0;
    for (const char *p = v; p && *p && n;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

sml_status sml_worker_suite_run(sml_prop_job *job, int slot, void *pool) {
    sml_worker_pool *p = pool;
    if (slot < 0 || slot >= SML_PROP_MAX_THREADS) return SML_ERR_INVALID_ARG;
    if (sml_worker_kernel_in_process(job->k->name)) {
        job->status = sml_prop_run(job->k, job->op, job->dtype, &job->cfg, &job->res);
        return job->status;
    }
    int device = p->ndevices > 0 ? p->devices[slot % p->ndevices] : p->device;
    /* A tool's verdict is the exit status of the worker it wraps: one job per worker. */
    if (p->share && !p->wrap && slot < p->threads) {
        if (p->shared) return sml_wk_share_run(p, job, slot, device);
    }
    p->w[slot].device = device;
    p->w[slot].wrap = p->wrap;
    return sml_worker_run_job(&p->w[slot], job, p->deadline);
}

void sml_worker_pool_close(sml_worker_pool *p) {
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++) sml_worker_close(&p->w[i]);
    sml_wk_share_free(p->shared);
    p->shared = NULL;
}
