/* replay: re-run saved reproducers (docs/PROPERTIES.md, "Reproducers") and say whether each
 * still fails. A folder replays every .json under it.
 *
 *   softmax-lab replay FILE.json|DIR [--kernel K] [--load PATH]
 *
 * --kernel runs the reproducer on another registered kernel (for example a fix, or the
 * production kernel a mutant's reproducer came from). A plugin kernel's reproducer names its
 * library, loaded unless --load (cli/plugins.c) already loaded a library with a kernel of that
 * name. Exit: 0 none fails now, 1 some still fails, 2 a reproducer could not be read (or its
 * kernel found), 3 none fails but some could not run here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "prop/prop.h"
#include "prop/repro.h"
#include "softmax_lab.h"
#include "worker/worker.h"

#define ME "softmax-lab replay"

/* 1 (and the command to run, on stderr) when the reproducer at p names a library or Python
 * module whose kernel is not loaded: a data file never loads code by itself. */
static int needs_code(const char *p) {
    sml_prop_case c;
    sml_prop_repro m;
    char err[512];
    if (sml_prop_repro_load(p, &c, &m, err, sizeof err) != SML_OK)
        return 0; /* reported by the replay */
    sml_prop_case_free(&c);
    if (!m.load[0] || sml_kernel_find(m.kernel)) return 0;
    char load[4400];
    sml_prop_load_arg(m.load, load, sizeof load);
    fprintf(stderr,
            ME ": %s: kernel '%s' comes from %s, which a reproducer does not load by itself (it is "
               "data);\n"
               "  if you trust that library, run: %s%s %s\n  (or pass --trust-reproducer)\n",
            p, m.kernel, m.load, sml_prop_replay_prefix(m.load, ME), load, p);
    return 1;
}

int sml_cmd_replay(int argc, char **argv) {
    const char *path = NULL, *kernel = NULL;
    int in_process = 0, trust = 0;
    double case_timeout = 0.0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--in-process") || !strcmp(argv[i], "--trust-reproducer")) {
            *(argv[i][2] == 'i' ? &in_process : &trust) = 1;
            continue;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(
                "usage: softmax-lab replay FILE.json|DIR [--kernel K]\n"
                "Re-runs a saved reproducer (or every one under DIR) on the kernel it names, or\n"
                "on K, and says whether the property still fails. A plugin kernel's reproducer\n"
                "records its library, loaded again here unless a --load library already has a\n"
                "kernel of that name (a rebuilt plugin, say). The kernel runs in a worker\n"
                "process: a crash, an exit or a hang is a failure with its cause (--in-process:\n"
                "in this process, for a debugger). --case-timeout S: a launch past S seconds runs\n"
                "again alone under 10 x S before it counts as a hang (default: from its size).\n"
                "A reproducer is data: the library (or Python module) it names is loaded only "
                "with\n"
                "--load LIB, or with --trust-reproducer; else replay prints the command and exits "
                "2.\n"
                "exit: 0 none fails now, 1 some still fails, 2 bad usage or a reproducer could "
                "not\n"
                "     be read, 3 none fails but some could not run here (skipped: nothing "
                "checked)\n");
            return 0;
        }
        if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            kernel = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--case-timeout") && i + 1 < argc) {
            char *end;
            case_timeout = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(case_timeout > 0)) {
                fprintf(stderr, ME ": bad value for --case-timeout: '%s' (seconds, more than 0)\n",
                        argv[i]);
                return 2;
            }
            continue;
        }
        if (argv[i][0] == '-' || path) {
            fprintf(stderr, ME ": unexpected argument '%s' (softmax-lab replay --help)\n", argv[i]);
            return 2;
        }
        path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: softmax-lab replay FILE.json|DIR [--kernel K]\n");
        return 2;
    }
    const sml_kernel *k = NULL;
    if (kernel && !(k = sml_kernel_find(kernel))) {
        fprintf(stderr, ME ": no kernel '%s' in the registry\n", kernel);
        return 2;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, ME ": %s: %s\n", path,
                errno == ENOENT ? "no such file or directory" : strerror(errno));
        return 2;
    }
    char **paths = NULL;
    size_t n = 0;
    char *single[1] = {(char *)path};
    if (S_ISDIR(st.st_mode)) {
        n = sml_prop_repro_list(path, &paths);
        if (!n) {
            fprintf(stderr, ME ": no reproducers (*.json) under %s\n", path);
            return 2;
        }
    } else {
        n = 1;
    }
    int still = 0, bad = 0, passed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = paths ? paths[i] : single[0];
        if (!trust && !k && needs_code(p)) {
            bad = 1;
            continue;
        }
        sml_prop_replay_result r;
        sml_status s = in_process || !sml_worker_available()
                           ? sml_prop_replay(p, k, NULL, NULL, &r)
                           : sml_worker_replay(p, kernel, case_timeout, &r);
        if (s != SML_OK) {
            fprintf(stderr, ME ": %s: %s\n", p, r.message);
            bad = 1;
            continue;
        }
        const char *verdict = r.outcome == SML_PROP_FAIL    ? "STILL FAILS"
                              : r.outcome == SML_PROP_ERROR ? "STILL ERRORS"
                              : r.outcome == SML_PROP_PASS  ? "passes now"
                                                            : "skipped";
        printf("%s: %s %s %s %lldx%lld (ld %lld, offset %lld%s), property %s: %s (recorded: %s)\n  "
               "%s\n",
               p, r.kernel, sml_op_name(r.op), sml_dtype_name(r.dtype), (long long)r.rows,
               (long long)r.cols, (long long)r.ld, (long long)r.offset,
               r.inplace ? ", in place" : "", sml_prop_name(r.prop), verdict,
               r.recorded[0] ? r.recorded : "?", r.message);
        if (r.library[0]) printf("  kernel %s from %s\n", r.kernel, r.library);
        if (r.outcome == SML_PROP_FAIL || r.outcome == SML_PROP_ERROR)
            still++;
        else if (r.outcome == SML_PROP_PASS)
            passed++;
        else
            skipped++;
    }
    if (paths) sml_prop_repro_list_free(paths, n);
    if (n > 1)
        printf("replay: %zu reproducers: %d still fail, %d pass now, %d skipped%s\n", n, still,
               passed, skipped, bad ? ", some unreadable" : "");
    if (!still && !bad && skipped)
        printf("replay: %d reproducer(s) could not run here: not checked; exit 3\n", skipped);
    return still ? 1 : bad ? 2 : skipped ? 3 : 0;
}
