/* plans_flag.c: --plans PATH and SML_PLANS, checked before a command runs (plans_flag.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "plans_flag.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan_cache.h"
#include "options.h"

const sml_opt sml_cli_plans_opts[1] = {
    {"plans", "PATH|off", "the path of a plan table for this GPU, or off",
     "auto's plan table (env SML_PLANS; default: the shipped table of this GPU, if any)",
     "softmax-lab tune writes them; off: the rules everywhere. A bad table, or one for another "
     "GPU, exits 2",
     0},
};

void sml_cli_plans_help(void) {
    const sml_opt_group g = SML_OPT_GROUP("Plan tables", sml_cli_plans_opts);
    sml_cli_help_group(stdout, &g);
}

/* Remove --plans PATH (the arguments are normalised: argv_norm.h); *path the last one given,
 * "" when one had no value. */
static void strip(int *argc, char **argv, const char **path) {
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (sml_opt_is(argv[i], sml_cli_plans_opts)) {
            *path = i + 1 < *argc ? argv[++i] : "";
            continue;
        }
        argv[n++] = argv[i];
    }
    argv[n] = NULL;
    *argc = n;
}

/* The table at path for the GPU at hand: 0, or 2 after saying why not. */
static int check_table(const char *name, const char *what, const char *path) {
    sml_plan_table t;
    char err[1024];
    if (sml_plan_table_load(path, &t, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab %s: %s: %s\n", name, what, err);
        return 2;
    }
    sml_plan_key gpu;
    const int dev = sml_gpu_current();
    int rc = 0;
    if (dev >= 0 && sml_gpu_plan_key(dev, &gpu) == SML_OK) {
        const char *field = sml_plan_key_mismatch(&t.key, &gpu);
        if (field) {
            fprintf(stderr,
                    "softmax-lab %s: %s: %s: %s: the table is for '%s' (%d SMs, %.1f DRAM bytes "
                    "per SM clock), this "
                    "GPU is '%s' (%d SMs, %.1f)\n",
                    name, what, path, field, t.key.name, t.key.sms, t.key.dram, gpu.name, gpu.sms,
                    gpu.dram);
            rc = 2;
        }
    }
    sml_plan_table_free(&t);
    return rc;
}

int sml_cli_take_plans(const char *name, int *argc, char **argv) {
    for (int i = 0; i < *argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 0;
    const char *path = NULL;
    strip(argc, argv, &path);
    const char *what = "--plans";
    if (!path) {
        path = getenv("SML_PLANS");
        what = "SML_PLANS";
        if (!path || !*path) return 0;
    }
    if (!*path) {
        fprintf(stderr, "softmax-lab %s: --plans needs a value (valid: %s)\n", name,
                sml_cli_plans_opts[0].values);
        return 2;
    }
    if (!strcmp(path, "off")) return setenv("SML_PLANS", "off", 1) ? 2 : 0;
    const int rc = check_table(name, what, path);
    if (rc) return rc;
    char abs[PATH_MAX];
    if (!realpath(path, abs) || setenv("SML_PLANS", abs, 1)) {
        fprintf(stderr, "softmax-lab %s: %s: %s: cannot resolve the path\n", name, what, path);
        return 2;
    }
    return 0;
}
