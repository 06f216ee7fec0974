/* plugins.c: --load PATH and SML_LOAD, taken out of a command's arguments before the
 * command parses them, so each command sees loaded kernels in the registry like its own. */
#define _DEFAULT_SOURCE /* S_ISVTX */
#include "plugins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "core/internal.h"
#include "worker/describe.h"
#include "io/per_device.h"
#include "options.h"
#include "softmax_lab_plugin.h"

/* A library that someone else could have replaced is code nobody vouched for: refused when
 * the file or its folder is writable by group or others (a sticky folder such as /tmp
 * excepted: there only the owner can replace the file). 0 ok, else a message in why. */
static int writable_by_others(const char *path, char *why, size_t n) {
    struct stat st;
    if (stat(path, &st) != 0) return 0; /* the loader reports a missing file */
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, n,
                 "%.400s: the library is writable by %s (chmod go-w it, or pass "
                 "--allow-writable-plugin)",
                 path, st.st_mode & S_IWOTH ? "others" : "its group");
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        snprintf(dir, sizeof dir, ".");
    if (stat(dir, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
        snprintf(why, n,
                 "%.400s: its folder %.400s is writable by %s (chmod go-w it, or pass "
                 "--allow-writable-plugin)",
                 path, dir, st.st_mode & S_IWOTH ? "others" : "its group");
        return 1;
    }
    return 0;
}

static int load(const char *name, const char *path, const char *from, int allow_writable) {
    char msg[1024];
    if (!allow_writable && !sml_source_is_python(path) &&
        writable_by_others(path, msg, sizeof msg)) {
        fprintf(stderr, "softmax-lab %s: %s%s\n", name, msg, from);
        return 2;
    }
    if (sml_load_plugin(path, msg, sizeof msg) == SML_OK) return 0;
    fprintf(stderr, "softmax-lab %s: %s%s\n", name, msg, from);
    return 2;
}

/* Each library of SML_LOAD in order (empty entries skipped). */
static int load_env(const char *name, int allow_writable) {
    const char *env = getenv("SML_LOAD");
    if (!env || !*env) return 0;
    char *copy = malloc(strlen(env) + 1);
    if (!copy) {
        fprintf(stderr, "softmax-lab %s: out of memory\n", name);
        return 2;
    }
    strcpy(copy, env);
    int rc = 0;
    for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && !rc;
         p = strtok_r(NULL, ":", &save)) {
        /* A path, never a name: dlopen would look a bare name up in the library path. */
        if (!strchr(p, '/') && !sml_source_is_python(p)) {
            fprintf(stderr,
                    "softmax-lab %s: SML_LOAD entry '%s' is not a path (write ./%s or an absolute "
                    "path)\n",
                    name, p, p);
            rc = 2;
            break;
        }
        rc = load(name, p, " (from SML_LOAD)", allow_writable);
    }
    free(copy);
    return rc;
}

const sml_opt sml_cli_plugin_opts[2] = {
    {"load", "PATH", "the path of a shared library exporting sml_plugin_kernels",
     "load the library's kernels first (repeatable; env SML_LOAD=P1:P2)",
     "they are listed, checked, benchmarked and replayed like built-in ones "
     "(softmax_lab_plugin.h). "
     "SML_LOAD's libraries (paths only) are loaded before --load's; compare and targets, which "
     "run no kernel, ignore it",
     0},
    {"allow-writable-plugin", NULL, NULL, "load a library although group or others may write it",
     "refused by default: the library or its folder writable by group or others", 1},
};

static void help(void) {
    const sml_opt_group g = SML_OPT_GROUP("Plugin kernels", sml_cli_plugin_opts);
    sml_cli_help_group(stdout, &g);
}

/* A command that runs kernels only in worker processes, or none (check, replay, bench, list,
 * compare, targets), run as the softmax-lab executable and not --in-process, never loads a
 * plugin library itself: its table is read in a child (describe.c), and each worker loads the
 * library it runs. Its verdicts are then made by a process no judged code ran in. */
static int describes(const char *name, int argc, char **argv) {
    static const char *const CMDS[] = {"check", "replay", "bench", "list", "compare", "targets"};
    int cmd = 0;
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) cmd |= !strcmp(name, CMDS[i]);
    for (int i = 0; i < argc && cmd; i++)
        if (!strcmp(argv[i], "--in-process")) return 0;
    char exe[4096];
    return cmd && sml_self_exe_is(exe, sizeof exe, "softmax-lab");
}

int sml_cli_run_with_plugins(const char *name, int (*cmd)(int, char **), int argc, char **argv,
                             int read_env) {
    if (describes(name, argc, argv)) sml_registry_set_plugin_loader(sml_wk_describe_load);
    int asks_help = 0, n = 0, allow_writable = 0;
    const char **paths = malloc(((size_t)argc + 1) * sizeof *paths);
    if (!paths) {
        fprintf(stderr, "softmax-lab %s: out of memory\n", name);
        return 2;
    }
    size_t npaths = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) asks_help = 1;
        if (sml_opt_is(a, &sml_cli_plugin_opts[1])) {
            allow_writable = 1;
            continue;
        }
        if (sml_opt_is(a, &sml_cli_plugin_opts[0])) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "softmax-lab %s: --load needs a value (valid: %s)\n", name,
                        sml_cli_plugin_opts[0].values);
                free(paths);
                return 2;
            }
            paths[npaths++] = argv[++i];
            continue;
        }
        argv[n++] = argv[i];
    }
    argv[n] = NULL;
    int rc = 0;
    if (!asks_help) {
        if (read_env) rc = load_env(name, allow_writable);
        for (size_t i = 0; i < npaths && !rc; i++) rc = load(name, paths[i], "", allow_writable);
    }
    free(paths);
    if (rc) return rc;
    rc = cmd(n, argv);
    if (asks_help) help();
    return rc;
}
