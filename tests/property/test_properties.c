/* test_properties: the property suite over every registered kernel, op and dtype of one
 * device. `--device cpu` (CI: cpu_naive, cpu_online) and `--device gpu` (every GPU kernel;
 * exits 77 with no GPU) are two ctest entries built from this one file. Saved reproducers
 * in tests/regressions/ are replayed first; failures are shrunk and saved under the build
 * tree, and each prints the command that replays it.
 *
 * Flags: --device cpu|gpu, --kernel K, --op OP, --dtype D, and the engine's own
 * (sml_prop_flags_help: --seed, --cases, --seconds, --case/--level, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/prop.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif
#ifndef SML_PROP_SAVE_DIR
#define SML_PROP_SAVE_DIR "prop-failures"
#endif
#ifndef SML_PROP_REGRESSIONS_DIR
#define SML_PROP_REGRESSIONS_DIR "tests/regressions"
#endif

static void usage(const char *argv0) {
    printf("usage: %s [--device cpu|gpu] [--kernel K] [--op OP] [--dtype D] [engine flags]\n%s",
           argv0, sml_prop_flags_help());
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
        if (!strcmp(argv[i], "--device")) device = strcmp(argv[i + 1], "gpu") ? SML_DEVICE_CPU : SML_DEVICE_GPU;
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, device == SML_DEVICE_GPU ? SML_PROP_PROFILE_GPU : SML_PROP_PROFILE_CI);
    sml_prop_config_env(&cfg);
    cfg.regressions_dir = SML_PROP_REGRESSIONS_DIR;
    cfg.save_dir = SML_PROP_SAVE_DIR;
    cfg.replay_cmd = SML_CLI_PATH " replay";
    char rerun[1024];
    snprintf(rerun, sizeof rerun, "%s --device %s", argv[0], device == SML_DEVICE_GPU ? "gpu" : "cpu");
    cfg.rerun_cmd = rerun;
    cfg.progress = stderr;
    for (int i = 1; i < argc;) {
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r > 0) continue;
        const char *a = argv[i];
        if ((!strcmp(a, "--device") || !strcmp(a, "--kernel") || !strcmp(a, "--op") ||
             !strcmp(a, "--dtype")) && i + 1 < argc) {
            const char *v = argv[i + 1];
            if (!strcmp(a, "--kernel")) only_kernel = v;
            else if (!strcmp(a, "--op")) {
                sml_op op;
                if (sml_op_parse(v, &op) != SML_OK) { fprintf(stderr, "unknown op '%s'\n", v); return 2; }
                only_op = op;
            } else if (!strcmp(a, "--dtype")) {
                sml_dtype dt;
                if (sml_dtype_parse(v, &dt) != SML_OK) { fprintf(stderr, "unknown dtype '%s'\n", v); return 2; }
                only_dtype = dt;
            } else if (strcmp(v, "cpu") && strcmp(v, "gpu")) {
                fprintf(stderr, "--device takes cpu or gpu\n");
                return 2;
            }
            i += 2;
            continue;
        }
        if (!strcmp(a, "--help")) { usage(argv[0]); return 0; }
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
    printf("%s: seed 0x%016llx, up to %lld cases per kernel/op/dtype, %.0f s budget%s\n", name,
           (unsigned long long)cfg.seed, (long long)cfg.max_cases, cfg.total_seconds,
           cfg.only_case >= 0 ? " (one case)" : "");

    /* The runs this invocation makes, so the time budget can be shared among them. */
    int total = 0;
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (k->device != device || (only_kernel && strcmp(only_kernel, k->name))) continue;
        for (int op = 0; op < SML_OP_COUNT; op++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
                if ((only_op < 0 || only_op == op) && (only_dtype < 0 || only_dtype == dt) &&
                    (k->ops & (1u << op)) && (k->dtypes & (1u << dt)))
                    total++;
    }
    printf("%-10s %-15s %-5s %8s %6s %5s %11s %9s %8s %9s\n", "kernel", "op", "dtype", "cases", "fail",
           "regr", "worst/bound", "worst ulp", "seconds", "cases/s");
    double t0 = sml_prop_now();
    int done = 0;
    int64_t all_cases = 0;
    double all_seconds = 0.0;
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (k->device != device || (only_kernel && strcmp(only_kernel, k->name))) continue;
        for (int op = 0; op < SML_OP_COUNT; op++) {
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
                if ((only_op >= 0 && only_op != op) || (only_dtype >= 0 && only_dtype != dt)) continue;
                if (!(k->ops & (1u << op)) || !(k->dtypes & (1u << dt))) continue;
                sml_prop_config c = cfg;
                c.max_seconds = sml_prop_next_seconds(&cfg, sml_prop_now() - t0, total - done);
                sml_prop_result *res = malloc(sizeof *res);
                if (!res) return 1;
                sml_status s = sml_prop_run(k, (sml_op)op, (sml_dtype)dt, &c, res);
                done++;
                if (s != SML_OK) {
                    sml_tally_fail(&t, NULL, "%s %s %s: engine error %s", k->name, sml_op_name(op),
                                   sml_dtype_name(dt), sml_strerror(s));
                    free(res);
                    continue;
                }
                all_cases += res->cases;
                all_seconds += res->seconds;
                printf("%-10s %-15s %-5s %8lld %6lld %5lld %11.3g %9.3g %8.2f %9.0f%s%s\n", k->name,
                       sml_op_name(op), sml_dtype_name(dt), (long long)res->cases,
                       (long long)res->failed_cases, (long long)res->regressions, res->worst_ratio,
                       res->worst_ulps, res->seconds, res->seconds > 0 ? res->cases / res->seconds : 0.0,
                       res->outcome == SML_PROP_SKIP ? "  SKIP: " : "", res->outcome == SML_PROP_SKIP ? res->note : "");
                int64_t dev = 0;
                for (int p = 0; p < SML_PROP_COUNT; p++) dev += res->deviations[p];
                if (res->refused)
                    printf("  %s refused %lld of %lld cases (SML_ERR_UNSUPPORTED on a padded stride): "
                           "skipped, after checking it wrote nothing\n",
                           k->name, (long long)res->refused, (long long)res->cases);
                if (dev)
                    printf("  KNOWN DEVIATION of %s (%s): %lld property checks excused (agreement %lld); "
                           "special values, bits and writes are still enforced\n",
                           k->name, k->known_deviation, (long long)dev,
                           (long long)res->deviations[SML_PROP_AGREEMENT]);
                if (res->outcome == SML_PROP_SKIP) {
                    t.skipped++;
                } else if (res->outcome == SML_PROP_PASS) {
                    sml_tally_pass(&t);
                } else {
                    for (int f = 0; f < res->nfail; f++) {
                        const sml_prop_failure *fl = &res->failures[f];
                        char cmd[2048];
                        if (fl->repro[0])
                            snprintf(cmd, sizeof cmd, "%s replay %s%s%s", SML_CLI_PATH, fl->repro,
                                     fl->case_index < 0 ? " --kernel " : "", fl->case_index < 0 ? k->name : "");
                        else
                            snprintf(cmd, sizeof cmd, "%s --kernel %s --op %s --dtype %s --seed 0x%016llx --case %lld --level %d",
                                     rerun, k->name, sml_op_name(op), sml_dtype_name(dt),
                                     (unsigned long long)cfg.seed, (long long)fl->case_index, fl->level);
                        sml_tally_fail(&t, cmd, "%s %s %s: %s %s (%lldx%lld shrunk to %lldx%lld): %s", k->name,
                                       sml_op_name(op), sml_dtype_name(dt), sml_prop_name(fl->prop),
                                       sml_prop_outcome_name(fl->outcome), (long long)fl->rows,
                                       (long long)fl->cols, (long long)fl->s_rows, (long long)fl->s_cols,
                                       fl->message);
                    }
                    if (res->note[0]) printf("  note: %s\n", res->note);
                }
                free(res);
            }
        }
    }
    printf("%s: %lld cases in %.1f s (%.0f cases/s)\n", name, (long long)all_cases, all_seconds,
           all_seconds > 0 ? all_cases / all_seconds : 0.0);
    return sml_tally_finish(&t);
}
