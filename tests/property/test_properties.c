/* test_properties: the property suite over every registered kernel, op and dtype of one
 * device. `--device cpu` (CI: cpu_naive, cpu_online) and `--device gpu` (every GPU kernel;
 * exits 77 with no GPU) are two ctest entries built from this one file. Saved reproducers
 * in tests/regressions/ and tests/mutants/corpus/ are replayed first; failures are shrunk and
 * saved under the build tree, and each prints the command that replays it.
 *
 * Flags: --device cpu|gpu, --kernel K, --op OP, --dtype D, and the engine's own
 * (sml_prop_flags_help: --seed, --cases, --seconds, --case/--level, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/deviation.h"
#include "prop/prop.h"
#include "prop/suite.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif
#ifndef SML_PROP_SAVE_DIR
#define SML_PROP_SAVE_DIR "prop-failures"
#endif
#ifndef SML_PROP_REGRESSIONS_DIR
#define SML_PROP_REGRESSIONS_DIR "tests/regressions:tests/mutants/corpus"
#endif

/* docs/PROPERTIES.md's table has one row per entry of SML_PROP_LIST, in its order, with its
 * number, name and ops ("| 3 | `range` | fwd | ..."), and no other. */
static void check_docs_table(sml_tally *t, const char *name) {
    const char *path = "docs/PROPERTIES.md";
    char repro[96];
    snprintf(repro, sizeof repro, "ctest --test-dir build -R %s", name);
    FILE *f = fopen(path, "r");
    if (!f) {
        sml_tally_fail(t, repro, "cannot read %s (run from the source tree)", path);
        return;
    }
    char line[1024];
    int rows = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        int n = 0, used = 0;
        char name[64], ops[8];
        if (sscanf(line, "| %d | `%63[a-z_]` | %7[a-z] |%n", &n, name, ops, &used) != 3 ||
            used == 0)
            continue;
        const sml_prop_id p = (sml_prop_id)rows++;
        const char *want_ops = !sml_prop_applies(p, SML_SOFTMAX)       ? "bwd"
                               : !sml_prop_applies(p, SML_SOFTMAX_BWD) ? "fwd"
                                                                       : "all";
        if (n != rows || p >= SML_PROP_COUNT || strcmp(name, sml_prop_name(p)) ||
            strcmp(ops, want_ops)) {
            sml_tally_fail(
                t, repro,
                "%s: table row %d is '%d %s %s', SML_PROP_LIST (src/prop/prop.h) says '%d %s %s'",
                path, rows, n, name, ops, rows, sml_prop_name(p), want_ops);
            bad = 1;
        }
    }
    fclose(f);
    if (rows != SML_PROP_COUNT && !bad)
        sml_tally_fail(t, repro, "%s: %d property rows, SML_PROP_LIST has %d", path, rows,
                       SML_PROP_COUNT);
    else if (!bad)
        sml_tally_pass(t);
}

static void usage(const char *argv0) {
    printf("usage: %s [--device cpu|gpu] [--kernel K] [--op OP] [--dtype D] [engine flags]\n%s",
           argv0, sml_prop_flags_help());
}

typedef struct report_ctx {
    sml_tally *t;
    const char *rerun;
    uint64_t seed;
} report_ctx;

/* One finished kernel/op/dtype run: its table row, its failures with the commands that
 * replay them (called by the suite, one run at a time). */
static void report_run(sml_prop_job *job, void *ctx) {
    report_ctx *rc = ctx;
    const sml_kernel *k = job->k;
    const sml_prop_result *res = &job->res;
    int op = job->op, dt = job->dtype;
    if (job->status != SML_OK) {
        sml_tally_fail(rc->t, NULL, "%s %s %s: engine error %s", k->name, sml_op_name(op),
                       sml_dtype_name(dt), sml_strerror(job->status));
        return;
    }
    printf("%-10s %-15s %-5s %8lld %6lld %5lld %11.3g %9.3g %8.2f %9.0f %5d%s%s\n", k->name,
           sml_op_name(op), sml_dtype_name(dt), (long long)res->cases, (long long)res->failed_cases,
           (long long)res->regressions, res->worst_ratio, res->worst_ulps, res->seconds,
           res->seconds > 0 ? res->cases / res->seconds : 0.0, res->last_level,
           res->outcome == SML_PROP_SKIP ? "  SKIP: " : "",
           res->outcome == SML_PROP_SKIP ? res->note : "");
    int64_t dev = 0;
    for (int p = 0; p < SML_PROP_COUNT; p++) dev += res->deviations[p];
    if (res->refused)
        printf("  %s refused %lld of %lld cases (SML_ERR_UNSUPPORTED on a padded stride): "
               "skipped, after checking it wrote nothing\n",
               k->name, (long long)res->refused, (long long)res->cases);
    if (dev) {
        sml_dev_terms t;
        sml_dev_terms_get(k->deviation, (sml_op)op, (sml_dtype)dt, &t);
        printf("  %s passed within its declared deviation (%s): %lld checks outside the contract "
               "and within it (agreement %lld), largest value error excused %.3g ulp, %.3g x the "
               "bound\n",
               k->name, t.text, (long long)dev, (long long)res->deviations[SML_PROP_AGREEMENT],
               res->excused_ulps, res->excused_ratio);
    }
    if (res->verdict == SML_JOB_SKIP) {
        rc->t->skipped++;
    } else if (res->verdict == SML_JOB_PASS) {
        sml_tally_pass(rc->t);
    } else if (res->verdict == SML_JOB_INCOMPLETE) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s --kernel %s --op %s --dtype %s --seed 0x%016llx", rc->rerun,
                 k->name, sml_op_name(op), sml_dtype_name(dt), (unsigned long long)rc->seed);
        sml_tally_fail(rc->t, cmd, "%s %s %s: INCOMPLETE: ran %lld of %lld cases (%s)", k->name,
                       sml_op_name(op), sml_dtype_name(dt), (long long)res->cases,
                       (long long)res->events.planned, res->note);
    } else {
        for (int f = 0; f < res->nfail; f++) {
            const sml_prop_failure *fl = &res->failures[f];
            char cmd[2048];
            if (fl->repro[0])
                snprintf(cmd, sizeof cmd, "%s replay %s%s%s", SML_CLI_PATH, fl->repro,
                         fl->case_index < 0 ? " --kernel " : "", fl->case_index < 0 ? k->name : "");
            else
                snprintf(
                    cmd, sizeof cmd,
                    "%s --kernel %s --op %s --dtype %s --seed 0x%016llx --case %lld --level %d",
                    rc->rerun, k->name, sml_op_name(op), sml_dtype_name(dt),
                    (unsigned long long)rc->seed, (long long)fl->case_index, fl->level);
            sml_tally_fail(rc->t, cmd, "%s %s %s: %s %s (%lldx%lld shrunk to %lldx%lld): %s",
                           k->name, sml_op_name(op), sml_dtype_name(dt), sml_prop_name(fl->prop),
                           sml_prop_outcome_name(fl->outcome), (long long)fl->rows,
                           (long long)fl->cols, (long long)fl->s_rows, (long long)fl->s_cols,
                           fl->message);
        }
        if (res->note[0]) printf("  note: %s\n", res->note);
    }
    fflush(stdout);
}

/* Per kernel: the fewest cases any of its op/dtype runs reached, and the ramp it got to;
 * then whether every run reached its cases (the GPU profile has 10,000 each). */
static void summarize(const sml_prop_job *jobs, int n, int64_t target, const char *name,
                      double wall, int threads) {
    int64_t all = 0;
    int short_runs = 0, stopped = 0, ran = 0;
    printf("\n%-10s %5s %10s %10s %9s %6s\n", "kernel", "runs", "cases", "fewest", "min ramp",
           "tall");
    for (int i = 0; i < n;) {
        const sml_kernel *k = jobs[i].k;
        int64_t cases = 0, fewest = -1, tall = 0;
        int runs = 0, ramp = 100;
        for (; i < n && jobs[i].k == k; i++) {
            const sml_prop_result *r = &jobs[i].res;
            if (jobs[i].status != SML_OK || r->outcome == SML_PROP_SKIP) continue;
            runs++;
            cases += r->cases;
            tall += r->tall;
            if (fewest < 0 || r->cases < fewest) fewest = r->cases;
            if (r->last_level < ramp) ramp = r->last_level;
            /* a run that stopped early on a failure or error is not short of budget, but it
             * did not reach the target either: say so, never "every run reached" */
            if (r->cases < target && r->outcome == SML_PROP_PASS)
                short_runs++;
            else if (r->cases < target)
                stopped++;
        }
        if (!runs) continue;
        ran += runs;
        all += cases;
        printf("%-10s %5d %10lld %10lld %9d %6lld\n", k->name, runs, (long long)cases,
               (long long)fewest, ramp, (long long)tall);
    }
    printf("%s: %lld cases in %.1f s of wall time on %d host thread%s (%.0f cases/s); ", name,
           (long long)all, wall, threads, threads == 1 ? "" : "s", wall > 0 ? all / wall : 0.0);
    if (!ran)
        printf("no run took place\n");
    else if (!short_runs && !stopped)
        printf("every run reached its %lld cases\n", (long long)target);
    else {
        if (short_runs)
            printf("%d of %d runs stopped short of %lld cases (the --seconds cap)", short_runs, ran,
                   (long long)target);
        if (short_runs && stopped) printf("; ");
        if (stopped) printf("%d of %d runs stopped early on a failure or error", stopped, ran);
        printf("\n");
    }
}

int main(int argc, char **argv) {
    /* test_properties_gpu is built with SML_PROP_GPU_TEST: GPU unless told otherwise. */
#ifdef SML_PROP_GPU_TEST
    sml_device device = SML_DEVICE_GPU;
#else
    sml_device device = SML_DEVICE_CPU;
#endif
    const char *only_kernel = NULL;
    int only_op = -1, only_dtype = -1;
    /* The device decides the profile, so read it before anything else. */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--device"))
            device = strcmp(argv[i + 1], "gpu") ? SML_DEVICE_CPU : SML_DEVICE_GPU;
    sml_prop_config cfg;
    sml_prop_config_init(&cfg,
                         device == SML_DEVICE_GPU ? SML_PROP_PROFILE_GPU : SML_PROP_PROFILE_CI);
    sml_prop_config_env(&cfg);
    if (cfg.profile == SML_PROP_PROFILE_LONG) { /* the nightly, as check --long runs it */
        sml_prop_config g;
        sml_prop_config_init(&g, SML_PROP_PROFILE_GPU);
        const char *given = getenv("SML_PROP_CASES");
        if (device == SML_DEVICE_GPU)
            cfg.sizes = g.sizes;
        else if (!given || !*given)
            cfg.max_cases = SML_PROP_LONG_CPU_CASES;
    }
    cfg.regressions_dir = SML_PROP_REGRESSIONS_DIR;
    cfg.save_dir = SML_PROP_SAVE_DIR;
    cfg.replay_cmd = SML_CLI_PATH " replay";
    char rerun[1024];
    snprintf(rerun, sizeof rerun, "%s --device %s", argv[0],
             device == SML_DEVICE_GPU ? "gpu" : "cpu");
    cfg.rerun_cmd = rerun;
    for (int i = 1; i < argc;) {
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r > 0) continue;
        const char *a = argv[i];
        if ((!strcmp(a, "--device") || !strcmp(a, "--kernel") || !strcmp(a, "--op") ||
             !strcmp(a, "--dtype")) &&
            i + 1 < argc) {
            const char *v = argv[i + 1];
            if (!strcmp(a, "--kernel"))
                only_kernel = v;
            else if (!strcmp(a, "--op")) {
                sml_op op;
                if (sml_op_parse(v, &op) != SML_OK) {
                    fprintf(stderr, "unknown op '%s'\n", v);
                    return 2;
                }
                only_op = op;
            } else if (!strcmp(a, "--dtype")) {
                sml_dtype dt;
                if (sml_dtype_parse(v, &dt) != SML_OK) {
                    fprintf(stderr, "unknown dtype '%s'\n", v);
                    return 2;
                }
                only_dtype = dt;
            } else if (strcmp(v, "cpu") && strcmp(v, "gpu")) {
                fprintf(stderr, "--device takes cpu or gpu\n");
                return 2;
            }
            i += 2;
            continue;
        }
        if (!strcmp(a, "--help")) {
            usage(argv[0]);
            return 0;
        }
        fprintf(stderr, "unknown argument '%s'\n", a);
        usage(argv[0]);
        return 2;
    }
    const char *name = device == SML_DEVICE_GPU ? "test_properties_gpu" : "test_properties_cpu";
    sml_tally t = {name, 0, 0, 0};
    if (device == SML_DEVICE_GPU) {
        int rc = sml_test_require_gpu(name);
        if (rc) return rc;
    }
    if (only_kernel && !sml_kernel_find(only_kernel)) {
        fprintf(stderr, "no kernel '%s' in the registry\n", only_kernel);
        return 2;
    }
    check_docs_table(&t, name);
    printf("%s: seed 0x%016llx, %lld cases per kernel/op/dtype, %s%s\n", name,
           (unsigned long long)cfg.seed, (long long)cfg.max_cases,
           cfg.total_seconds > 0 ? "capped by --seconds" : "no time cap",
           cfg.only_case >= 0 ? " (one case)" : "");

    /* The runs this invocation makes, slow kernels first as the registry lists them. */
    int total = 0;
    sml_prop_job *jobs = calloc(sml_kernel_count() * SML_OP_COUNT * SML_DTYPE_COUNT, sizeof *jobs);
    if (!jobs) return 1;
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (k->device != device || (only_kernel && strcmp(only_kernel, k->name))) continue;
        for (int op = 0; op < SML_OP_COUNT; op++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
                if ((only_op < 0 || only_op == op) && (only_dtype < 0 || only_dtype == dt) &&
                    (k->ops & (1u << op)) && (k->dtypes & (1u << dt)))
                    jobs[total++] = (sml_prop_job){
                        .k = k, .op = (sml_op)op, .dtype = (sml_dtype)dt, .cfg = cfg};
    }
    int threads = sml_prop_threads(&cfg, sml_prop_suite_tasks(jobs, total));
    printf("%s: %d kernel/op/dtype runs on %d host thread%s\n", name, total, threads,
           threads == 1 ? "" : "s");
    printf("%-10s %-15s %-5s %8s %6s %5s %11s %9s %8s %9s %5s\n", "kernel", "op", "dtype", "cases",
           "fail", "regr", "worst/bound", "worst ulp", "seconds", "cases/s", "ramp");
    fflush(stdout);
    report_ctx rc = {&t, rerun, cfg.seed};
    sml_prop_suite suite = {.threads = threads,
                            .total_seconds = cfg.total_seconds,
                            .label = name,
                            .progress = stderr,
                            .done = report_run,
                            .ctx = &rc};
    double t0 = sml_prop_now();
    if (sml_prop_suite_run(&suite, jobs, total) != SML_OK) {
        fprintf(stderr, "%s: cannot start the runs (out of memory)\n", name);
        return 1;
    }
    double wall = sml_prop_now() - t0;
    summarize(jobs, total, cfg.max_cases, name, wall, threads);
    free(jobs);
    return sml_tally_finish(&t);
}
