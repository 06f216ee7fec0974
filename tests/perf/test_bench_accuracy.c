/* test_bench_accuracy: the ledger's accuracy (docs/NUMERICS.md, section 8) on the CPU, with
 * the planted kernels of tests/property/accuracy_pair.c: on the same bench cases (N(0, 1)
 * logits), acc_narrow_sum is LESS ACCURATE than its baseline cpu_naive while inside the
 * contract, acc_expf is not, and acc_fast_exp's loss is recorded but stays under the rule's
 * floor; the decisions show speedup and accuracy side by side; `compare` of two ledgers whose
 * kernel `acc_kernel` was acc_expf in the first run and acc_narrow_sum in the second says LESS
 * ACCURATE and fails, while the same ledger twice is SAME. Flags: --cli PATH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../property/accuracy_pair.h"
#include "bench/bench.h"
#include "report/ledger_write.h"
#include "cli_run.h"
#include "test_support.h"

static sml_tally T = {"test_bench_accuracy", 0, 0, 0};
static const char *REPRO = "build/tests/perf/test_bench_accuracy --cli build/softmax-lab";

static sml_status run_plan(const sml_kernel **kernels, size_t n, sml_bench_run *run) {
    static int baseline_only[8];
    sml_bench_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.sweep, sizeof plan.sweep, "test");
    static const int64_t SHAPES[][2] = {{64, 1000}, {16, 4096}, {256, 300},
                                        {8, 20000}, {512, 77},  {32, 2048}};
    plan.shapes.n = sizeof SHAPES / sizeof SHAPES[0];
    for (size_t i = 0; i < plan.shapes.n; i++)
        plan.shapes.shape[i] = (sml_sweep_shape){SHAPES[i][0], SHAPES[i][1], 1u << SML_F32, 0};
    plan.ops = 1u << SML_SOFTMAX;
    plan.dtypes = 1u << SML_F32;
    plan.kernels = kernels;
    plan.baseline_only = baseline_only;
    plan.nkernels = n;
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    cfg.stop.max_seconds = 0.01;
    cfg.stop.min_samples = 3;
    cfg.cpu_sample_s = 1e-4;
    cfg.progress = 0;
    cfg.threads = 2;
    char err[256];
    sml_status s = sml_bench_execute(&plan, &cfg, NULL, NULL, run, err, sizeof err);
    if (s != SML_OK) printf("  bench: %s\n", err);
    return s;
}

static const sml_ledger_accuracy *acc_of(const sml_ledger *l, const char *k) {
    const sml_ledger_record *r = sml_ledger_find(l, k);
    for (size_t i = 0; r && i < r->nacc; i++)
        if (r->acc[i].op == SML_SOFTMAX && r->acc[i].dtype == SML_F32) return &r->acc[i];
    return NULL;
}

static int save(const sml_bench_run *run, const sml_ledger *l, const char *path) {
    char err[256];
    if (sml_ledger_save_file(run, l, path, 1, err, sizeof err) == SML_OK) return 1;
    sml_tally_fail(&T, REPRO, "cannot write %s: %s", path, err);
    return 0;
}

int main(int argc, char **argv) {
    const char *cli = "build/softmax-lab";
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--cli")) cli = argv[i + 1];
    char tmp[128];
    if (sml_cli_setup("test_bench_accuracy", cli, tmp, sizeof tmp)) return 1;
    const sml_kernel *k1[] = {sml_kernel_find("cpu_naive"), &sml_acc_narrow_sum,
                              &sml_acc_accurate_exp, &sml_acc_fast_exp};
    sml_bench_run run;
    if (run_plan(k1, 4, &run) != SML_OK) return 1;
    sml_ledger l;
    if (sml_ledger_build(&run, &l) != SML_OK) return 1;
    const char *names[] = {"acc_narrow_sum", "acc_expf", "acc_fast_exp"};
    const sml_ledger_accuracy *a[3];
    for (int i = 0; i < 3; i++) {
        a[i] = acc_of(&l, names[i]);
        printf("%-15s %s vs %s: %s\n", names[i], a[i] ? sml_acc_verdict_name(a[i]->verdict) : "-",
               a[i] ? a[i]->baseline : "-", a[i] ? a[i]->why : "");
    }
    int wrong = 0;
    for (size_t i = 0; i < run.nresults; i++) wrong += run.results[i].verdict != SML_VERDICT_OK;
    if (!wrong)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, REPRO,
                       "%d results missed the contract: the planted kernels must stay inside it",
                       wrong);
    if (a[0] && a[0]->verdict == SML_ACC_LESS && !strcmp(a[0]->baseline, "cpu_naive"))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, REPRO,
                       "the ledger does not call acc_narrow_sum LESS ACCURATE than cpu_naive");
    if (a[1] && (a[1]->verdict == SML_ACC_SAME || a[1]->verdict == SML_ACC_MORE))
        sml_tally_pass(&T);
    else
        sml_tally_fail(
            &T, REPRO,
            "the ledger does not call acc_expf SAME (or MORE ACCURATE) against cpu_naive");
    /* N(0, 1) logits keep the fast exp's loss under the floor: recorded, not called. */
    if (a[2] && a[2]->mine.worst > a[1]->mine.worst && a[2]->verdict == SML_ACC_SAME)
        sml_tally_pass(&T);
    else
        sml_tally_fail(
            &T, REPRO,
            "acc_fast_exp: want a worse worst err/bound than acc_expf, under the floor (SAME)");
    char sp[96], ac[160];
    sml_ledger_side_by_side(sml_ledger_find(&l, "acc_narrow_sum"), sp, sizeof sp, ac, sizeof ac);
    printf("side by side: speedup %s; accuracy %s\n", sp, ac);
    if (!strncmp(ac, "LESS ACCURATE vs cpu_naive (softmax fp32: worst ", 48))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, REPRO, "the decisions' accuracy column reads \"%s\"", ac);

    /* Two ledgers of one kernel name: expf first, the fast exp second. */
    sml_kernel named_good = sml_acc_accurate_exp, named_fast = sml_acc_narrow_sum;
    named_good.name = named_fast.name = "acc_kernel";
    const sml_kernel *k2[] = {sml_kernel_find("cpu_naive"), &named_good};
    const sml_kernel *k3[] = {sml_kernel_find("cpu_naive"), &named_fast};
    char p_old[256], p_new[256], log[32768];
    snprintf(p_old, sizeof p_old, "%s/old.json", tmp);
    snprintf(p_new, sizeof p_new, "%s/new.json", tmp);
    sml_bench_run r2, r3;
    sml_ledger l2, l3;
    if (run_plan(k2, 2, &r2) != SML_OK || run_plan(k3, 2, &r3) != SML_OK ||
        sml_ledger_build(&r2, &l2) != SML_OK || sml_ledger_build(&r3, &l3) != SML_OK)
        return 1;
    fflush(stdout); /* the child's stdout starts empty */
    if (save(&r2, &l2, p_old) && save(&r3, &l3, p_new)) {
        const char *a1[] = {"compare", p_old, p_new, NULL};
        int rc = sml_run_cli(cli, tmp, a1, log, sizeof log);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "%s compare %s %s", cli, p_old, p_new);
        if (rc == 1 && strstr(log, "acc_kernel softmax          fp32  LESS ACCURATE"))
            sml_tally_pass(&T);
        else
            sml_tally_fail(&T, cmd,
                           "compare of the two ledgers: exit %d, want 1 and LESS ACCURATE:\n%s", rc,
                           log);
        const char *a2[] = {"compare", p_old, p_old, NULL};
        rc = sml_run_cli(cli, tmp, a2, log, sizeof log);
        if (strstr(log, "0 LESS ACCURATE, 0 MORE ACCURATE, 2 SAME"))
            sml_tally_pass(&T);
        else
            sml_tally_fail(
                &T, cmd, "compare of a ledger with itself is not SAME for both kernels:\n%s", log);
        if (sml_dir_entries(tmp) == 2)
            sml_tally_pass(&T); /* the two ledgers: compare wrote nothing */
        else
            sml_tally_fail(&T, cmd, "compare wrote files into %s", tmp);
    }
    sml_ledger_free(&l);
    sml_ledger_free(&l2);
    sml_ledger_free(&l3);
    sml_bench_run_free(&run);
    sml_bench_run_free(&r2);
    sml_bench_run_free(&r3);
    return sml_tally_finish(&T);
}
