/* test_perf_gates.c: the performance gate. Measures every registered GPU kernel on the
 * standard sweep (softmax and softmax_bwd by default, every dtype), writes the decision
 * ledger, and fails when a kernel misses the claim it declares in the registry beyond the
 * noise margin (status Caveated or Rejected). Kernels with no claim are Measured and never
 * fail it. Correctness is the property suite's job; here a WRONG kernel's rows count as
 * losses, so a claimed kernel that is wrong fails too. GPU only: exits 77 without one.
 *
 *   test_perf_gates [--sweep NAME] [--op OP[,OP...]] [--kernel K] [--ledger DIR]
 *                   [--max-seconds S] [--noise X] [--check-elems N|all] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "json/json_read.h"
#include "report/ledger_write.h"
#include "report/plot_svg.h"
#include "report/table.h"
#include "test_support.h"

static void on_case(const sml_bench_run *run, size_t c, void *user) {
    int *header = user;
    if (!*header) {
        sml_bench_print_header(stdout, run);
        *header = 1;
    }
    sml_bench_print_case(stdout, run, c);
    fflush(stdout);
}

static int usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s [--sweep NAME] [--op OP[,OP...]] [--kernel K] [--ledger DIR] "
            "[--max-seconds S] [--noise X] [--check-elems N|all]\n",
            argv0);
    return 2;
}

int main(int argc, char **argv) {
    const char *sweep = "standard", *ops_arg = "softmax,softmax_bwd", *kernel = NULL;
    const char *ledger_dir = "ledger";
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    cfg.stop.max_seconds = 0.25;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage(argv[0]);
        const char *a = argv[i], *v = argv[++i];
        if (!strcmp(a, "--sweep"))
            sweep = v;
        else if (!strcmp(a, "--op"))
            ops_arg = v;
        else if (!strcmp(a, "--kernel"))
            kernel = v;
        else if (!strcmp(a, "--ledger"))
            ledger_dir = v;
        else if (!strcmp(a, "--max-seconds"))
            cfg.stop.max_seconds = atof(v);
        else if (!strcmp(a, "--noise"))
            cfg.stop.noise = atof(v);
        else if (!strcmp(a, "--check-elems")) {
            if (!sml_bench_parse_check_elems(v, &cfg.check_max_elems)) return usage(argv[0]);
        } else
            return usage(argv[0]);
    }
    int skip = sml_test_require_gpu("test_perf_gates");
    if (skip) return skip;
    sml_tally T = {"test_perf_gates", 0, 0, 0};

    sml_bench_plan plan;
    memset(&plan, 0, sizeof plan);
    if (sml_sweep_get(sweep, &plan.shapes) != SML_OK) {
        printf("FAIL test_perf_gates: unknown sweep '%s'\n", sweep);
        return 2;
    }
    snprintf(plan.sweep, sizeof plan.sweep, "%s", sweep);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", ops_arg);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        sml_op op;
        if (sml_op_parse(t, &op) != SML_OK) {
            printf("FAIL test_perf_gates: unknown op '%s'\n", t);
            return 2;
        }
        plan.ops |= 1u << op;
    }
    plan.dtypes = SML_DTYPES_ALL;
    const sml_kernel *kernels[SML_MAX_KERNELS];
    int baseline_only[SML_MAX_KERNELS];
    size_t nk = 0;
    char notes[512] = "", err[512];
    if (sml_bench_select(kernel ? kernel : "gpu", 1, kernels, baseline_only, &nk, notes,
                         sizeof notes, err, sizeof err) != SML_OK) {
        printf("FAIL test_perf_gates: %s\n", err);
        return 1;
    }
    plan.kernels = kernels;
    plan.baseline_only = baseline_only;
    plan.nkernels = nk;
    plan.notes = notes;
    sml_bench_estimate est;
    sml_bench_estimate_plan(&plan, &cfg, 1, &est);
    printf("test_perf_gates: sweep %s, ops %s, %zu kernels, %zu cases, %zu measurements; timing "
           "bound %.0f s, host work ~%.0f s; correctness checked on <= %lld elements per kernel "
           "and case\n",
           sweep, ops_arg, nk, est.cases, est.measurements, est.timing_bound_s, est.host_s,
           (long long)cfg.check_max_elems);
    fflush(stdout);

    sml_bench_run run;
    int header = 0;
    if (sml_bench_execute(&plan, &cfg, on_case, &header, &run, err, sizeof err) != SML_OK) {
        printf("FAIL test_perf_gates: the run failed: %s\n", err);
        return 1;
    }
    sml_ledger l;
    if (sml_ledger_build(&run, &l) != SML_OK) {
        printf("FAIL test_perf_gates: out of memory building the ledger\n");
        return 1;
    }
    sml_bench_print_decisions(stdout, &run, &l);
    char stem[160], jp[1200], mp[1200], ops_tag[96];
    snprintf(ops_tag, sizeof ops_tag, "%s", ops_arg);
    for (char *p = ops_tag; *p; p++)
        if (*p == ',') *p = '-';
    snprintf(stem, sizeof stem, "perf_%s_%s%s%s", sweep, ops_tag, kernel ? "_" : "",
             kernel ? kernel : "");
    if (sml_ledger_save(&run, &l, ledger_dir, stem, jp, mp, sizeof jp, err, sizeof err) != SML_OK) {
        sml_tally_fail(&T, NULL, "could not write the ledger: %s", err);
    } else {
        printf("\nledger: %s and %s\n", jp, mp);
        sml_json *doc = NULL;
        if (sml_json_parse_file(jp, &doc, err, sizeof err) == SML_OK) {
            char svg[1300];
            snprintf(svg, sizeof svg, "%s/%s.svg", ledger_dir, stem);
            FILE *f = fopen(svg, "w");
            if (f && sml_plot_svg(doc, NULL, f, NULL, 0, err, sizeof err) == SML_OK)
                printf("plot: %s\n", svg);
            if (f) fclose(f);
        }
        sml_json_free(doc);
    }

    for (size_t j = 0; j < l.n; j++) {
        const sml_ledger_record *r = &l.rec[j];
        if (r->baseline_only) continue;
        char repro[512];
        snprintf(repro, sizeof repro, "%s --sweep %s --op %s --kernel %s --ledger %s", argv[0],
                 sweep, ops_arg, r->kernel, ledger_dir);
        if (!r->claim.baseline || r->decision.status == SML_DECISION_SUPPORTED ||
            r->decision.status == SML_DECISION_MEASURED) {
            sml_tally_pass(&T);
            int bad = 0;
            for (size_t i = 0; i < r->n; i++)
                bad += sml_bench_verdict_failed(run.results[r->result[i]].verdict);
            if (bad)
                printf("warning: %s was WRONG or failed on %d shapes (not this test's verdict; see "
                       "the ledger and the GPU kernel tests)\n",
                       r->kernel, bad);
            continue;
        }
        sml_tally_fail(&T, repro, "%s misses its claim (>= %.2fx over %s on %s shapes): %s. %s",
                       r->kernel, r->claim.min_speedup, r->claim.baseline, r->claim.shapes,
                       sml_decision_name(r->decision.status), r->reason);
    }
    printf("test_perf_gates: %.0f s wall (budget: about 240 s on an H100 for the standard sweep)\n",
           run.seconds);
    sml_ledger_free(&l);
    sml_bench_run_free(&run);
    return sml_tally_finish(&T);
}
