/* edge.c: the edge-shape harness as a program: parse -> run every case on every selected
 * kernel -> print the summary (summary.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "edge/harness.h"
#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* 0 when a CUDA device is usable (the one ctest assigned through CTEST_RESOURCE_GROUP_0_GPUS,
 * if any), else a line saying why and 77. */
static int require_gpu(const char *name) {
    if (!sml_gpu_available()) {
#ifdef SML_HAVE_CUDA
        printf("SKIP %s: no CUDA device on this machine\n", name);
#else
        printf("SKIP %s: built without CUDA (nvcc not found at configure time)\n", name);
#endif
        return 77;
    }
#ifdef SML_HAVE_CUDA
    /* ctest's resource allocation: "id:3,slots:1" names the GPU this run was given. */
    const char *res = getenv("CTEST_RESOURCE_GROUP_0_GPUS");
    const char *id = res ? strstr(res, "id:") : NULL;
    if (id && cudaSetDevice(atoi(id + 3)) != cudaSuccess) {
        printf("FAIL %s: cannot select GPU %s\n", name, res);
        return 1;
    }
#endif
    return 0;
}

/* --list-cases counts one case; otherwise it runs, unless a CUDA error stopped the run. */
static void visit(void *arg, const sml_edge_case *t) {
    sml_edge_ctx *c = arg;
    if (!sml_shard_has(&c->o.shard, c->visited++)) return;
    if (c->o.list) {
        c->n_inputs++;
        int64_t pick[MAX_PICK];
        const int sampled = sml_edge_sampled_case(t);
        const int64_t el = sampled ? sml_edge_sampled_block(t) * t->cols : t->rows * t->cols;
        c->n_elems += el;
        for (size_t ki = 0; ki < sml_kernel_count(); ki++) {
            const sml_kernel *k = sml_kernel_at(ki);
            if (sml_edge_kernel_selected(c, ki, k) && sml_edge_kernel_supports(k, t)) {
                c->n_runs++;
                c->n_checked +=
                    sampled ? sml_edge_sampled_rows(t, sml_edge_sampled_block(t), pick) * t->cols
                            : el;
            }
        }
        return;
    }
    if (c->dead) return;
    /* No kernel left to run on it (each ended its worker, or takes no such case): no inputs or
     * reference to make. */
    int any = 0;
    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS && !any; ki++)
        any = sml_edge_kernel_selected(c, ki, sml_kernel_at(ki)) &&
              sml_edge_kernel_supports(sml_kernel_at(ki), t);
    if (!any) return;
    if (sml_edge_sampled_case(t))
        sml_edge_run_sampled(c, t);
    else
        sml_edge_run_input(c, t);
}

/* auto's view of the device, as the harness prints and describes it. */
static int open_device(sml_edge_ctx *c) {
    if (!c->o.cpu) {
        int rc = require_gpu(c->tally.name);
        if (rc) return rc;
        sml_gpu_facts g;
        if (sml_gpu_facts_get(NULL, &g) == SML_OK) {
            c->has_clusters = g.clusters;
            c->sms = g.sms;
            c->dram = g.dram;
        }
        sml_gpu_forget_error();
    }
    if (sml_handle_create(&c->h) != SML_OK) {
        printf("FAIL %s: sml_handle_create\n", c->tally.name);
        return 1;
    }
    return 0;
}

int sml_edge_main(const char *name, int argc, char **argv, const sml_edge_remote *remote) {
    static sml_edge_ctx c; /* large: keep it off the stack */
    memset(&c, 0, sizeof c);
    c.remote = remote;
    int rc = sml_edge_parse(&c.o, argc, argv);
    if (rc) return rc;
    c.tally.name = name;
    c.dev = c.o.cpu ? SML_DEVICE_CPU : SML_DEVICE_GPU;
    if (c.o.list) {
        sml_edge_cases(&c.o, visit, &c);
        printf("%s: %" PRId64 " inputs, %" PRId64 " kernel runs, %" PRId64
               " reference elements, %" PRId64 " checked elements\n",
               name, c.n_inputs, c.n_runs, c.n_elems, c.n_checked);
        return 0;
    }
    rc = sml_edge_split(name, &c.o, argc, argv);
    if (rc >= 0) return rc;
    rc = open_device(&c);
    if (rc) return rc;
    printf("%s: seed 0x%" PRIx64 "%s\n", name, c.o.seed,
           c.o.cpu ? " (CPU kernels: harness check)" : "");
    if (!c.o.cpu)
        printf("%s: auto's device facts: %d SMs, cluster launch %s, %.1f DRAM bytes per SM clock\n",
               name, c.sms, c.has_clusters ? "yes" : "no", c.dram);
    fflush(stdout);
    sml_edge_cases(&c.o, visit, &c);
    sml_handle_destroy(c.h);
    if (c.dead) printf("%s: stopped after a CUDA error; later cases did not run\n", name);
    sml_edge_summary(&c);
    return sml_edge_tally_finish(&c.tally);
}
