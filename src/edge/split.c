/* split.c: the edge-shape run over every GPU of a host (edge.h, sml_edge_split): one worker
 * process per GPU (io/per_device.h), worker i running every n-th case from i - 1 with the run's
 * seed. The cases and their seeds depend only on the seed and the case, so the workers
 * together run exactly the cases of a one-GPU run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "edge/edge.h"
#include "io/per_device.h"

/* The workers' exit codes into the run's: any failure fails it; all skipped (77) skips it. */
static int combine(const char *name, const int *codes, int n) {
    int fails = 0, skips = 0;
    for (int i = 0; i < n; i++) {
        fails += codes[i] != 0 && codes[i] != 77;
        skips += codes[i] == 77;
    }
    printf("%s: %d of %d workers failed, %d skipped\n", name, fails, n, skips);
    return fails ? 1 : skips == n ? 77 : 0;
}

/* The GPUs: --devices, else every visible one; n < 2 (or a slice already, or ctest's one GPU):
 * run here. SML_WORKERS_TEST_COUNT=n stands in for n GPUs, so that the CPU tests run the
 * split on the CPU kernels (--cpu runs in one process otherwise). */
static int choose(const char *name, const sml_edge_opts *o, int *dev, int *n) {
    int stand_in = sml_gpu_stand_in() > 0;
    if (o->shard.count || (o->cpu && !stand_in)) return -1;
    if (!o->devices && getenv("CTEST_RESOURCE_GROUP_0_GPUS")) return -1;
    int count = sml_visible_gpus();
    char why[768];
    if (o->devices && !sml_devices_choose(o->devices, count, stand_in, dev, n, why, sizeof why)) {
        fprintf(stderr, "%s: bad value for --devices: '%.40s' (%s)\n", name, o->devices, why);
        return 2;
    }
    if (!o->devices) {
        *n = count < SML_MAX_DEVICES ? count : SML_MAX_DEVICES;
        for (int i = 0; i < *n; i++) dev[i] = i;
    }
    return *n < 2 ? -1 : 0;
}

int sml_edge_split(const char *name, const sml_edge_opts *o, int argc, char **argv) {
    int dev[SML_MAX_DEVICES], n = 0, codes[SML_MAX_DEVICES];
    int rc = choose(name, o, dev, &n);
    char exe[4096], dir[4300], seed[24], shard[SML_MAX_DEVICES][24], why[160];
    if (rc != 0 || !sml_self_exe(exe, sizeof exe) || sml_per_device_dir(dir, sizeof dir))
        return rc ? rc : -1;
    snprintf(seed, sizeof seed, "0x%" PRIx64, o->seed);
    char **argvs[SML_MAX_DEVICES], logs[SML_MAX_DEVICES][4400];
    const char *logp[SML_MAX_DEVICES];
    for (int i = 0; i < n; i++) {
        char **a = calloc((size_t)argc + 8, sizeof *a);
        if (!a) return 2;
        int k = 0;
        a[k++] = exe;
        for (int j = 1; j < argc; j++) {
            if (!strcmp(argv[j], "--devices") || !strcmp(argv[j], "--seed")) {
                j++;
                continue;
            }
            a[k++] = argv[j];
        }
        snprintf(shard[i], sizeof shard[i], "%d/%d", i + 1, n);
        a[k++] = "--seed", a[k++] = seed, a[k++] = "--shard", a[k++] = shard[i];
        argvs[i] = a;
        snprintf(logs[i], sizeof logs[i], "%s/worker-%d.log", dir, i + 1);
        logp[i] = logs[i];
    }
    printf("%s: %d GPUs, one worker each (every %d-th case), seed %s\n", name, n, n, seed);
    rc = sml_per_device_run((char *const *const *)argvs, dev, n, logp, codes, why, sizeof why);
    for (int i = 0; i < n; i++) {
        char label[96];
        snprintf(label, sizeof label, "worker %d/%d, GPU %d, exit %d", i + 1, n, dev[i], codes[i]);
        sml_per_device_print_log(stdout, label, logs[i]);
        free(argvs[i]);
    }
    sml_per_device_cleanup(dir, logp, n);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", name, why);
        return 1;
    }
    return combine(name, codes, n);
}
