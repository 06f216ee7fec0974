/* edge_shapes.c: softmax-lab-edge-shapes, the edge-shape harness (src/edge/edge.h) as an
 * installed program, so that softmax_lab_add_gate runs it on plugin kernels. The harness runs
 * in a worker process (src/worker/command.c) unless --in-process: a kernel that crashes,
 * exits or hangs is a FAIL naming it, not the harness's verdict. */
#include <string.h>

#include "edge/edge.h"
#include "worker/worker.h"

static int has(int argc, char **argv, const char *flag) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], flag)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *name = "softmax-lab-edge-shapes";
    if (sml_worker_command_child()) {
        int rc = sml_edge_main(name, argc, argv);
        sml_worker_command_done(rc);
        return rc;
    }
    if (!has(argc, argv, "--in-process") && !has(argc, argv, "--list-cases") &&
        sml_worker_command_available())
        return sml_worker_command(name, 1.0, 0, -1, argv);
    return sml_edge_main(name, argc, argv);
}
