/* test_accuracy_gate_gpu: the accuracy gate (docs/NUMERICS.md, section 8) on the GPU's own
 * planted pair (acc_pair_gpu.cu): acc_gpu_fast_exp (__expf) against acc_gpu_expf (expf), the
 * same block-per-row kernel, on the same cases: it must pass every property and be LESS
 * ACCURATE on softmax fp32; acc_gpu_expf against the registry's `block` must not be. Exit 77
 * without a GPU. Flags: the engine's (--seed, --cases, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc_pair_gpu.h"
#include "prop/against.h"
#include "test_support.h"

#ifndef SML_PROP_SAVE_DIR
#define SML_PROP_SAVE_DIR "prop-failures"
#endif

static const char *TEST = "test_accuracy_gate_gpu";

/* Rows up to 8,192: a thread's strided partial sum (32 additions) and the 8-level block tree
 * stay inside the contract's summation depth (32 + log2 n). */
#define PAIR(name, fn, what)                                                             \
    {                                                                                    \
        name, "tests/mutants/acc_pair_gpu.cu", SML_DEVICE_GPU,                           \
            1u << SML_SOFTMAX | 1u << SML_LOG_SOFTMAX, 1u << SML_F32, 1, 8192, fn, what, \
            {NULL, 0.0, NULL}, NULL, 0, NULL                                             \
    }
static const sml_kernel ACCURATE =
    PAIR("acc_gpu_expf", sml_acc_gpu_launch_expf, "block per row, expf");
static const sml_kernel FAST =
    PAIR("acc_gpu_fast_exp", sml_acc_gpu_launch_fast_exp, "block per row, __expf");

static int run_pair(sml_tally *t, const sml_kernel *cand, const sml_kernel *base,
                    const sml_prop_config *cfg, const char *rerun, int want_less) {
    sml_prop_against *a = NULL;
    int n = 0;
    sml_prop_suite how = {.progress = stderr};
    sml_status s = sml_prop_against_run(cand, base, 1u << SML_SOFTMAX | 1u << SML_LOG_SOFTMAX,
                                        1u << SML_F32, cfg, &how, &a, &n);
    if (s != SML_OK) {
        sml_tally_fail(t, rerun, "%s against %s did not run: %s", cand->name, base->name,
                       sml_strerror(s));
        return 0;
    }
    for (int i = 0; i < n; i++) {
        printf("  %-17s vs %-13s %-11s %-15s %s\n", cand->name, base->name, sml_op_name(a[i].op),
               sml_acc_verdict_name(a[i].verdict), a[i].why);
        if (a[i].cand.res.outcome != SML_PROP_PASS)
            sml_tally_fail(t, rerun, "%s %s: the property suite did not pass (%s)", cand->name,
                           sml_op_name(a[i].op), sml_prop_outcome_name(a[i].cand.res.outcome));
        else
            sml_tally_pass(t);
        if (a[i].op != SML_SOFTMAX) continue;
        if (want_less && a[i].verdict != SML_ACC_LESS)
            sml_tally_fail(t, rerun, "%s softmax fp32 not LESS ACCURATE than %s: %s", cand->name,
                           base->name, a[i].why);
        else if (!want_less &&
                 (a[i].verdict == SML_ACC_LESS || a[i].verdict == SML_ACC_NOT_COMPARABLE))
            sml_tally_fail(t, rerun, "%s softmax fp32 against %s: %s: %s", cand->name, base->name,
                           sml_acc_verdict_name(a[i].verdict), a[i].why);
        else
            sml_tally_pass(t);
        if (a[i].repro[0]) printf("  largest loss: %s\n", a[i].repro);
    }
    sml_prop_against_free(a, n);
    return 1;
}

int main(int argc, char **argv) {
    int skip = sml_test_require_gpu(TEST);
    if (skip) return skip;
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_GPU);
    cfg.max_cases = 3000;
    cfg.max_seconds = cfg.total_seconds = 0.0;
    sml_prop_config_env(&cfg);
    cfg.save_dir = SML_PROP_SAVE_DIR "/accuracy";
    cfg.log = stdout;
    for (int i = 1; i < argc;) {
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r > 0) continue;
        printf("usage: %s [engine flags]\n%s", argv[0], sml_prop_flags_help());
        return strcmp(argv[i], "--help") ? 2 : 0;
    }
    char rerun[1024];
    snprintf(rerun, sizeof rerun, "%s --seed 0x%016llx --cases %lld", argv[0],
             (unsigned long long)cfg.seed, (long long)cfg.max_cases);
    cfg.rerun_cmd = argv[0];
    sml_tally t = {TEST, 0, 0, 0};
    printf("%s: seed 0x%016llx, %lld cases per op\n", TEST, (unsigned long long)cfg.seed,
           (long long)cfg.max_cases);
    run_pair(&t, &FAST, &ACCURATE, &cfg, rerun, 1);
    const sml_kernel *block = sml_kernel_find("block");
    if (block && block->launch) run_pair(&t, &ACCURATE, block, &cfg, rerun, 0);
    return sml_tally_finish(&t);
}
