/* check: the property suite from the command line (docs/PROPERTIES.md), or, with --input,
 * every kernel on a user's own .npy logits (check_input.c).
 *
 *   softmax-lab check [--kernel K|all] [--op OP|all] [--dtype D|all] [--cases N]
 *                     [--seconds S] [--seed S] [--save DIR] [--json FILE] [engine flags]
 *   softmax-lab check --input logits.npy [--kernel K|all] [--op OP] [--dy grad.npy]
 *                     [--dtype bf16] [--save DIR] [--json FILE]
 *
 * Exit: 0 every property held (skips allowed), 1 a kernel failed, 2 bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_input.h"
#include "commands.h"
#include "prop/prop.h"
#include "prop/suite.h"
#include "softmax_lab.h"

#define ME "softmax-lab check"

static void usage(FILE *f) {
    fprintf(f,
            "usage: softmax-lab check [--kernel K|all] [--op OP|all] [--dtype D|all] [--cases N]\n"
            "                         [--seconds S] [--seed S] [--save DIR] [--json FILE] [...]\n"
            "       softmax-lab check --input logits.npy [--kernel K|all] [--op OP|all] [--dy grad.npy]\n"
            "                         [--dtype bf16] [--save DIR] [--json FILE]\n\n"
            "The first form runs the property suite (11 properties, shrinking, reproducers) on\n"
            "each selected kernel, op and dtype; the saved reproducers under tests/regressions/\n"
            "are replayed first. The second runs the kernels on your own tensor (numpy.save;\n"
            "fp32, fp16, or bf16 bits as uint16 with --dtype bf16; softmax over the last axis)\n"
            "and judges each against the double-precision reference; --save writes each kernel's\n"
            "output as .npy. For backward ops --input holds the logits: y is the reference forward\n"
            "output of them, rounded to the dtype, and --dy the upstream gradient.\n\n"
            "Suite options:\n"
            "  --kernel K       a registered kernel, or all (default)\n"
            "  --op OP          softmax, log_softmax, softmax_bwd, log_softmax_bwd, or all (default)\n"
            "  --dtype D        fp32, fp16, bf16, or all (default)\n"
            "  --json FILE      write the results as JSON\n"
            "%s",
            sml_prop_flags_help());
}

static int dir_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct ksum {
    int64_t cases, failed, regressions, runs, skipped, deviations;
    double worst_ratio, worst_ulps, seconds;
    char skip_note[192];
} ksum;

static size_t registry_index(const sml_kernel *k) {
    size_t i = 0;
    while (sml_kernel_at(i) && sml_kernel_at(i) != k) i++;
    return i;
}

int sml_cmd_check(int argc, char **argv) {
    const char *kernel = NULL, *op_s = NULL, *dt_s = NULL, *json = NULL, *input = NULL, *dy = NULL;
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_CI);
    sml_prop_config_env(&cfg);
    int64_t default_cases = cfg.max_cases;
    cfg.replay_cmd = "softmax-lab replay";
    cfg.regressions_dir = dir_exists("tests/regressions") ? "tests/regressions" : NULL;
    for (int i = 0; i < argc;) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        const char **slot = !strcmp(a, "--kernel") ? &kernel : !strcmp(a, "--op") ? &op_s
                          : !strcmp(a, "--dtype") ? &dt_s : !strcmp(a, "--json") ? &json
                          : !strcmp(a, "--input") ? &input : !strcmp(a, "--dy") ? &dy : NULL;
        if (slot) {
            if (i + 1 >= argc) {
                fprintf(stderr, ME ": %s needs a value\n", a);
                return 2;
            }
            *slot = argv[i + 1];
            i += 2;
            continue;
        }
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r == 0) {
            fprintf(stderr, ME ": unknown option '%s' (softmax-lab check --help)\n", a);
            return 2;
        }
    }
    if (input) {
        int dt = -1;
        if (dt_s && strcmp(dt_s, "all")) {
            sml_dtype d;
            if (sml_dtype_parse(dt_s, &d) != SML_OK) {
                fprintf(stderr, ME ": unknown dtype '%s'\n", dt_s);
                return 2;
            }
            dt = d;
        }
        sml_check_input_args ia = {input, dy, kernel, op_s, dt, cfg.save_dir, json};
        return sml_check_input(&ia);
    }
    if (dy) {
        fprintf(stderr, ME ": --dy goes with --input\n");
        return 2;
    }

    const sml_kernel *only = NULL;
    if (kernel && strcmp(kernel, "all") && !(only = sml_kernel_find(kernel))) {
        fprintf(stderr, ME ": no kernel '%s' in the registry (softmax-lab list)\n", kernel);
        return 2;
    }
    unsigned ops = SML_OPS_ALL, dts = SML_DTYPES_ALL;
    if (op_s && strcmp(op_s, "all")) {
        sml_op op;
        if (sml_op_parse(op_s, &op) != SML_OK) {
            fprintf(stderr, ME ": unknown op '%s'\n", op_s);
            return 2;
        }
        ops = 1u << op;
    }
    if (dt_s && strcmp(dt_s, "all")) {
        sml_dtype d;
        if (sml_dtype_parse(dt_s, &d) != SML_OK) {
            fprintf(stderr, ME ": unknown dtype '%s'\n", dt_s);
            return 2;
        }
        dts = 1u << d;
    }
    FILE *jf = NULL;
    if (json && !(jf = fopen(json, "w"))) {
        fprintf(stderr, ME ": cannot write %s\n", json);
        return 2;
    }
    /* GPU kernels get the GPU profile's sizes (and its case count unless --cases was given). */
    sml_prop_config gcfg;
    sml_prop_config_init(&gcfg, SML_PROP_PROFILE_GPU);
    char rerun[64];
    snprintf(rerun, sizeof rerun, "softmax-lab check");
    cfg.rerun_cmd = rerun;
    size_t nk = sml_kernel_count();
    sml_prop_job *jobs = calloc(nk * SML_OP_COUNT * SML_DTYPE_COUNT, sizeof *jobs);
    ksum *sum = calloc(nk, sizeof *sum);
    if (!jobs || !sum) {
        fprintf(stderr, ME ": out of memory\n");
        return 2;
    }
    int njobs = 0, runnable = 0, gpu = sml_gpu_available();
    for (size_t i = 0; i < nk; i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (only && k != only) continue;
        for (int op = 0; op < SML_OP_COUNT; op++) {
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
                if (!(ops >> op & 1) || !(dts >> dt & 1) || !(k->ops >> op & 1) || !(k->dtypes >> dt & 1))
                    continue;
                sml_prop_config c = cfg;
                if (k->device == SML_DEVICE_GPU) {
                    c.sizes = gcfg.sizes;
                    c.ramp_by_time = gcfg.ramp_by_time;
                    if (cfg.max_cases == default_cases) c.max_cases = gcfg.max_cases;
                }
                jobs[njobs++] = (sml_prop_job){.k = k, .op = (sml_op)op, .dtype = (sml_dtype)dt, .cfg = c};
                /* Kernels that cannot run here go last and outside the suite: they must not
                 * take a share of the time budget. */
                if (k->launch && (k->device == SML_DEVICE_CPU || gpu)) {
                    sml_prop_job tmp = jobs[runnable];
                    jobs[runnable] = jobs[njobs - 1];
                    jobs[njobs - 1] = tmp;
                    runnable++;
                }
            }
        }
    }
    int threads = sml_prop_threads(&cfg, runnable > 0 ? runnable : 1);
    printf("check: seed 0x%016llx, up to %lld cases per kernel/op/dtype (GPU kernels %lld), ", (unsigned long long)cfg.seed,
           (long long)cfg.max_cases, (long long)(cfg.max_cases == default_cases ? gcfg.max_cases : cfg.max_cases));
    if (cfg.total_seconds > 0) printf("%.0f s budget", cfg.total_seconds);
    else printf("no time budget");
    printf(", %d host thread%s%s%s%s\n", threads, threads == 1 ? "" : "s",
           cfg.regressions_dir ? ", replaying " : "", cfg.regressions_dir ? cfg.regressions_dir : "",
           cfg.regressions_dir ? " first" : "");
    fflush(stdout);
    sml_prop_suite suite = {threads, cfg.total_seconds, "check", stderr, NULL, NULL};
    double t0 = sml_prop_now();
    if (sml_prop_suite_run(&suite, jobs, runnable) != SML_OK) {
        fprintf(stderr, ME ": cannot start the runs (out of memory)\n");
        return 2;
    }
    double wall = sml_prop_now() - t0;
    for (int j = runnable; j < njobs; j++) /* each answers SKIP at once, with the reason */
        jobs[j].status = sml_prop_run(jobs[j].k, jobs[j].op, jobs[j].dtype, &jobs[j].cfg, &jobs[j].res);
    if (jf) fprintf(jf, "{\n  \"seed\": \"0x%016llx\",\n  \"threads\": %d,\n  \"runs\": [\n",
                    (unsigned long long)cfg.seed, threads);
    int failed = 0, first_json = 1;
    for (int j = 0; j < njobs; j++) {
        const sml_kernel *k = jobs[j].k;
        const sml_prop_result *res = &jobs[j].res;
        int op = jobs[j].op, dt = jobs[j].dtype;
        if (jobs[j].status != SML_OK) continue;
        ksum *s = &sum[registry_index(k)];
        s->runs++;
        if (res->outcome == SML_PROP_SKIP) {
            s->skipped++;
            snprintf(s->skip_note, sizeof s->skip_note, "%s", res->note);
        }
        if (res->outcome == SML_PROP_FAIL || res->outcome == SML_PROP_ERROR) failed = 1;
        for (int p = 0; p < SML_PROP_COUNT; p++) s->deviations += res->deviations[p];
        s->cases += res->cases;
        s->failed += res->failed_cases + res->regressions_failed;
        s->regressions += res->regressions;
        s->seconds += res->seconds;
        if (!(res->worst_ratio <= s->worst_ratio)) {
            s->worst_ratio = res->worst_ratio;
            s->worst_ulps = res->worst_ulps;
        }
        if (jf) {
            fprintf(jf, "%s    {\"kernel\": \"%s\", \"op\": \"%s\", \"dtype\": \"%s\", \"outcome\": \"%s\", "
                        "\"cases\": %lld, \"failed_cases\": %lld, \"regressions\": %lld, "
                        "\"regressions_failed\": %lld, \"worst_ratio\": %.6g, \"worst_ulps\": %.6g, "
                        "\"seconds\": %.3f, \"ramp\": %d, \"failures\": [",
                    first_json ? "" : ",\n", k->name, sml_op_name(op), sml_dtype_name(dt),
                    sml_prop_outcome_name(res->outcome), (long long)res->cases,
                    (long long)res->failed_cases, (long long)res->regressions,
                    (long long)res->regressions_failed,
                    res->worst_ratio < 1e308 ? res->worst_ratio : 1e308,
                    res->worst_ulps < 1e308 ? res->worst_ulps : 1e308, res->seconds, res->last_level);
            first_json = 0;
            for (int f = 0; f < res->nfail; f++) {
                const sml_prop_failure *fl = &res->failures[f];
                fprintf(jf, "%s{\"property\": \"%s\", \"outcome\": \"%s\", \"case\": %lld, \"level\": %d, "
                            "\"rows\": %lld, \"cols\": %lld, \"shrunk_rows\": %lld, \"shrunk_cols\": %lld, "
                            "\"reproducer\": \"%s\"}",
                        f ? ", " : "", sml_prop_name(fl->prop), sml_prop_outcome_name(fl->outcome),
                        (long long)fl->case_index, fl->level, (long long)fl->rows, (long long)fl->cols,
                        (long long)fl->s_rows, (long long)fl->s_cols, fl->repro);
            }
            fprintf(jf, "]}");
        }
    }
    free(jobs);
    printf("\n%-10s %-4s %8s %8s %6s %12s %10s %8s  %s\n", "kernel", "dev", "cases", "failures", "regr",
           "worst/bound", "worst ulp", "seconds", "status");
    for (size_t i = 0; i < nk; i++) {
        const sml_kernel *k = sml_kernel_at(i);
        ksum *s = &sum[i];
        if ((only && k != only) || !s->runs) continue;
        const char *status = s->failed ? "FAIL" : s->skipped == s->runs ? "skipped" : "pass";
        printf("%-10s %-4s %8lld %8lld %6lld %12.3g %10.3g %8.1f  %s%s%s\n", k->name,
               k->device == SML_DEVICE_GPU ? "gpu" : "cpu", (long long)s->cases, (long long)s->failed,
               (long long)s->regressions, s->worst_ratio, s->worst_ulps, s->seconds, status,
               s->skipped ? ": " : "", s->skipped ? s->skip_note : "");
        if (s->deviations)
            printf("%-10s      KNOWN DEVIATION: %lld checks missed the value bounds and were excused (%s)\n", "",
                   (long long)s->deviations, k->known_deviation);
    }
    if (jf) {
        fprintf(jf, "\n  ],\n  \"passed\": %s\n}\n", failed ? "false" : "true");
        fclose(jf);
    }
    int64_t all = 0;
    for (size_t i = 0; i < nk; i++) all += sum[i].cases;
    free(sum);
    printf("\n%lld cases in %.1f s of wall time on %d host thread%s (the seconds column adds up each kernel's runs)\n",
           (long long)all, wall, threads, threads == 1 ? "" : "s");
    printf("%s\n", failed ? "check: FAILED (see the FAIL lines above for the commands that replay each)"
                          : "check: every property held on every kernel that ran");
    return failed ? 1 : 0;
}
