/* replay.c: one reproducer replayed with its kernel in a fresh worker, the engine here: a
 * reproducer of a crash crashes the worker, not the command, and the cause becomes the
 * replay's FAIL. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "prop/repro.h"
#include "worker/worker.h"

/* The registered kernel the replay runs: `kernel`, else the one the reproducer names (a
 * plugin kernel not registered yet is for sml_prop_replay_in to load). */
static const sml_kernel *kernel_of(const char *path, const char *kernel) {
    if (kernel && kernel[0]) return sml_kernel_find(kernel);
    sml_prop_case c;
    sml_prop_repro m;
    char err[256];
    if (sml_prop_repro_load(path, &c, &m, err, sizeof err) != SML_OK) return NULL;
    sml_prop_case_free(&c);
    return sml_kernel_find(m.kernel);
}

sml_status sml_worker_replay(const char *path, const char *kernel, double case_timeout,
                             sml_prop_replay_result *r) {
    memset(r, 0, sizeof *r);
    const sml_kernel *k = kernel_of(path, kernel);
    sml_worker_pool *p = sml_worker_pool_new(case_timeout, 1, -1, NULL);
    if (!p) return SML_ERR_OUT_OF_MEMORY;
    sml_prop_runner runner = sml_worker_runner(p, 0);
    sml_status s = sml_prop_replay_in(path, k, &runner, r);
    sml_worker_pool_close(p, NULL, 0);
    return s;
}
