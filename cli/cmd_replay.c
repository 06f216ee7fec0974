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
#include "masks.h"
#include "options.h"
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

typedef struct replay_args {
    const char *kernel;
    int in_process, trust;
    double case_timeout;
} replay_args;

enum { R_KERNEL, R_IN_PROCESS, R_TRUST, R_CASE_TIMEOUT };

static const sml_opt OPTS[] = {
    {"kernel", "K", "a registered kernel name (softmax-lab list)",
     "run the reproducer on K, not the kernel it names",
     "a fix, say, or the production kernel a "
     "mutant's reproducer came from",
     R_KERNEL},
    {"in-process", NULL, NULL, "run the kernel in this process (for a debugger), not a worker",
     NULL, R_IN_PROCESS},
    {"trust-reproducer", NULL, NULL, "load the library or Python module the reproducer names",
     "without it (or --load LIB) replay prints the command and exits 2", R_TRUST},
    {"case-timeout", "S", "seconds, more than 0",
     "a launch's deadline; past it, the launch runs again alone under 10 x S",
     "only a launch that does not finish alone is a hang (default: from the case's size, at "
     "least 4 s)",
     R_CASE_TIMEOUT},
};

static const sml_cli_spec SPEC = {
    "replay",
    "FILE.json|DIR [--kernel K] [--in-process] [--trust-reproducer] [--case-timeout S]",
    "Re-runs a saved reproducer (or every one under DIR) on the kernel it names, or on K, and "
    "says whether the property still fails. A plugin kernel's reproducer records its library, "
    "loaded again here unless a --load library already has a kernel of that name (a rebuilt "
    "plugin, say). The kernel runs in a worker process: a crash, an exit or a hang is a failure "
    "with its cause. A reproducer is data: the library (or Python module) it names is loaded "
    "only with --load LIB, or with --trust-reproducer.",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0 none fails now, 1 some still fails, 2 bad usage or a reproducer could not be read, "
    "3 none fails but some could not run here (skipped: nothing checked)",
    NULL,
    NULL};

const sml_cli_spec *sml_spec_replay(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    (void)why, (void)n;
    replay_args *a = ctx;
    if (o->id == R_KERNEL) {
        a->kernel = v;
    } else if (o->id == R_CASE_TIMEOUT) {
        char *end;
        a->case_timeout = strtod(v, &end);
        if (*end || end == v || !(a->case_timeout > 0)) return -1;
    } else {
        *(o->id == R_IN_PROCESS ? &a->in_process : &a->trust) = 1;
    }
    return 0;
}

int sml_cmd_replay(int argc, char **argv) {
    replay_args a = {NULL, 0, 0, 0.0};
    const char *path = NULL;
    int npos;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, &a, &path, 1, &npos,
                           "one reproducer or folder");
    if (rc >= 0) return rc;
    if (!path) {
        fprintf(stderr, ME ": which reproducer?\n");
        sml_cli_usage(stderr, &SPEC);
        return 2;
    }
    const char *kernel = a.kernel;
    int in_process = a.in_process, trust = a.trust;
    double case_timeout = a.case_timeout;
    const sml_kernel *k = NULL;
    if (kernel && !(k = sml_kernel_find(kernel))) {
        char names[2048];
        fprintf(stderr, ME ": bad value for --kernel: '%s' (not in the registry; valid: %s)\n",
                kernel, sml_cli_kernel_names(names, sizeof names));
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
        if (r.strict)
            printf("  judged against the contract itself, as the --strict run that saved it: the "
                   "kernel's declared deviation excuses nothing\n");
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
