/* plugins.c: --load PATH and SML_LOAD, taken out of a command's arguments before the
 * command parses them, so each command sees loaded kernels in the registry like its own. */
#include "plugins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softmax_lab_plugin.h"

static int takes_kernels(const char *name) {
    static const char *const NAMES[] = {"list", "check", "bench", "replay", "compare", "targets", "__worker"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!strcmp(name, NAMES[i])) return 1;
    return 0;
}

static int load(const char *name, const char *path, const char *from) {
    char msg[1024];
    if (sml_load_plugin(path, msg, sizeof msg) == SML_OK) return 0;
    fprintf(stderr, "softmax-lab %s: %s%s\n", name, msg, from);
    return 2;
}

/* Each library of SML_LOAD in order (empty entries skipped). */
static int load_env(const char *name) {
    const char *env = getenv("SML_LOAD");
    if (!env || !*env) return 0;
    char *copy = malloc(strlen(env) + 1);
    if (!copy) {
        fprintf(stderr, "softmax-lab %s: out of memory\n", name);
        return 2;
    }
    strcpy(copy, env);
    int rc = 0;
    for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && !rc; p = strtok_r(NULL, ":", &save))
        rc = load(name, p, " (from SML_LOAD)");
    free(copy);
    return rc;
}

static void help(void) {
    printf("\nPlugin kernels (shared libraries exporting sml_plugin_kernels, softmax_lab_plugin.h):\n"
           "  --load PATH      load the kernels of the library at PATH first (repeatable); they are\n"
           "                   listed, checked, benchmarked and replayed like built-in ones\n"
           "  SML_LOAD=P1:P2   the same from the environment (loaded before --load)\n");
}

int sml_cli_run_with_plugins(const char *name, int (*cmd)(int, char **), int argc, char **argv) {
    if (!takes_kernels(name)) return cmd(argc, argv);
    int asks_help = 0, n = 0;
    const char **paths = malloc(((size_t)argc + 1) * sizeof *paths);
    if (!paths) {
        fprintf(stderr, "softmax-lab %s: out of memory\n", name);
        return 2;
    }
    size_t npaths = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) asks_help = 1;
        if (!strcmp(a, "--load")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "softmax-lab %s: --load needs a library path\n", name);
                free(paths);
                return 2;
            }
            paths[npaths++] = argv[++i];
            continue;
        }
        if (!strncmp(a, "--load=", 7)) {
            if (!a[7]) {
                fprintf(stderr, "softmax-lab %s: --load needs a library path\n", name);
                free(paths);
                return 2;
            }
            paths[npaths++] = a + 7;
            continue;
        }
        argv[n++] = argv[i];
    }
    argv[n] = NULL;
    int rc = 0;
    if (!asks_help) {
        rc = load_env(name);
        for (size_t i = 0; i < npaths && !rc; i++) rc = load(name, paths[i], "");
    }
    free(paths);
    if (rc) return rc;
    rc = cmd(n, argv);
    if (asks_help) help();
    return rc;
}
