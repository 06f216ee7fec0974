/* edge_shapes.c: softmax-lab-edge-shapes, the edge-shape harness (src/edge/edge.h) as an
 * installed program, so that softmax_lab_add_gate runs it on plugin kernels. Unless
 * --in-process, the harness judges kernels it never calls or loads: a plugin's kernel table is
 * read in a child (`__describe`, src/worker/describe.c), and every device buffer and kernel
 * launch lives in a worker process (`__worker`, src/worker/edge_serve.c) that the harness
 * drives; a kernel that crashes, exits or hangs there is a FAIL naming it, and the harness
 * goes on in a fresh worker without it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "edge/edge.h"
#include "softmax_lab_plugin.h"
#include "worker/describe.h"
#include "worker/worker.h"

#define NAME "softmax-lab-edge-shapes"

static int has(int argc, char **argv, const char *flag) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], flag)) return 1;
    return 0;
}

/* The value after `flag`, or NULL. */
static const char *value(int argc, char **argv, const char *flag) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], flag)) return argv[i + 1];
    return NULL;
}

/* `__worker` and `__describe`, started by this program itself: load the libraries after
 * --load (each checked by the parent already), then serve. */
static int child(int argc, char **argv) {
    for (int i = 2; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--load")) continue;
        char msg[1024];
        if (sml_load_plugin(argv[++i], msg, sizeof msg) != SML_OK) {
            fprintf(stderr, NAME " %s: %s\n", argv[1], msg);
            return 2;
        }
    }
    return !strcmp(argv[1], "__worker") ? sml_worker_main(0, NULL) : sml_wk_describe_main(0, NULL);
}

/* The GPU ctest gave this run (RESOURCE_GROUPS gpus:1: "id:3,slots:1"), for its worker; -1 none. */
static int ctest_device(void) {
    const char *res = getenv("CTEST_RESOURCE_GROUP_0_GPUS"), *id = res ? strstr(res, "id:") : NULL;
    return id && id[3] >= '0' && id[3] <= '9' ? atoi(id + 3) : -1;
}

int main(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "__worker") || !strcmp(argv[1], "__describe")))
        return child(argc, argv);
    if (has(argc, argv, "--in-process") || has(argc, argv, "--list-cases") ||
        !sml_worker_available())
        return sml_edge_main(NAME, argc, argv, NULL);
    sml_registry_set_plugin_loader(sml_wk_describe_load);
    const char *t = value(argc, argv, "--case-timeout");
    sml_wk_edge *e = sml_worker_edge_new(ctest_device(), t ? strtod(t, NULL) : 0.0);
    if (!e) {
        fprintf(stderr, NAME ": out of memory\n");
        return 2;
    }
    sml_edge_remote r = sml_worker_edge_remote(e);
    int rc = sml_edge_main(NAME, argc, argv, &r);
    sml_worker_edge_free(e);
    return rc;
}
