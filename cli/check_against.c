/* check --against: a candidate kernel against the kernel it replaces, on the same cases
 * (src/prop/against.h), judged by the accuracy rule of docs/NUMERICS.md, section 8.
 *
 *   softmax-lab check --kernel K --against BASE [--op OP|all] [--dtype D|all]
 *                     [--allow-less-accurate] [--save DIR] [--json FILE] [engine flags]
 *
 * Exit: 0 no property failed and nothing got less accurate (or --allow-less-accurate),
 * 1 a property failed or some op/dtype is LESS ACCURATE, 2 bad usage. */
#include "check_against.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/against.h"

#define ME "softmax-lab check"

static void json_row(FILE *f, const sml_prop_against *a, int first) {
    const sml_prop_result *r = &a->cand.res;
    fprintf(f, "%s    {\"kernel\": \"%s\", \"op\": \"%s\", \"dtype\": \"%s\", \"outcome\": \"%s\", "
               "\"cases\": %lld, \"failed_cases\": %lld, \"worst_ratio\": %.6g, \"worst_ulps\": %.6g, "
               "\"seconds\": %.3f, \"ramp\": %d, \"accuracy\": ",
            first ? "" : ",\n", a->cand_k.name, sml_op_name(a->op), sml_dtype_name(a->dtype),
            sml_prop_outcome_name(r->outcome), (long long)r->cases, (long long)r->failed_cases,
            r->worst_ratio < 1e308 ? r->worst_ratio : 1e308, r->worst_ulps < 1e308 ? r->worst_ulps : 1e308,
            r->seconds, r->last_level);
    sml_accuracy_write_json(f, &r->accuracy);
    fprintf(f, ", \"against\": {\"base\": \"%s\", \"base_outcome\": \"%s\", \"verdict\": \"%s\", \"why\": \"",
            a->base_k.name, sml_prop_outcome_name(a->base.res.outcome), sml_acc_verdict_name(a->verdict));
    for (const char *p = a->why; *p; p++) /* the reasons hold no control characters */
        fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
    fprintf(f, "\", \"candidate\": ");
    sml_accuracy_write_json(f, &a->acc_cand);
    fprintf(f, ", \"base_accuracy\": ");
    sml_accuracy_write_json(f, &a->acc_base);
    if (a->loss_case >= 0)
        fprintf(f, ", \"loss_case\": %lld, \"loss_level\": %d, \"loss_candidate\": %.6g, \"loss_base\": %.6g",
                (long long)a->loss_case, a->loss_level, a->loss_cand, a->loss_base);
    fprintf(f, ", \"reproducer\": \"%s\"}}", a->repro);
}

int sml_check_against_cli(const sml_check_against_args *x) {
    const sml_kernel *base = sml_kernel_find(x->base);
    if (!base) {
        fprintf(stderr, ME ": --against: no kernel '%s' in the registry (softmax-lab list)\n", x->base);
        return 2;
    }
    if (base == x->cand) {
        fprintf(stderr, ME ": --against %s: the candidate itself\n", x->base);
        return 2;
    }
    FILE *jf = NULL;
    if (x->json && !(jf = fopen(x->json, "w"))) {
        fprintf(stderr, ME ": cannot write %s\n", x->json);
        return 2;
    }
    sml_prop_config cfg = *x->cfg;
    char rerun[128]; /* a failure's rerun draws its case with the limits both kernels share */
    snprintf(rerun, sizeof rerun, "softmax-lab check --against %s", base->name);
    cfg.rerun_cmd = rerun;
    int threads = sml_prop_threads(&cfg, SML_OP_COUNT * SML_DTYPE_COUNT);
    printf("check: %s against %s on the same cases: seed 0x%016llx, up to %lld cases per op/dtype, "
           "%d host thread%s\n", x->cand->name, base->name, (unsigned long long)cfg.seed,
           (long long)cfg.max_cases, threads, threads == 1 ? "" : "s");
    fflush(stdout);
    sml_prop_against *a = NULL;
    int n = 0;
    sml_status s = sml_prop_against_run(x->cand, base, x->ops, x->dtypes, &cfg, threads, stderr, &a, &n);
    if (s == SML_ERR_INVALID_ARG) {
        fprintf(stderr, ME ": %s and %s share no selected op and dtype\n", x->cand->name, base->name);
        if (jf) fclose(jf);
        return 2;
    }
    if (s != SML_OK) {
        fprintf(stderr, ME ": cannot run: %s\n", sml_strerror(s));
        if (jf) fclose(jf);
        return 2;
    }
    int failed = 0, less = 0, judged = 0;
    printf("\n%-10s %-10s %-16s %-5s %7s %8s  %-15s %s\n", "kernel", "base", "op", "dtype", "cases", "suite",
           "accuracy", "err/bound: base -> kernel");
    for (int i = 0; i < n; i++) {
        const sml_prop_against *y = &a[i];
        const sml_prop_result *r = &y->cand.res;
        if (r->outcome == SML_PROP_FAIL || r->outcome == SML_PROP_ERROR) failed = 1;
        if (y->verdict == SML_ACC_LESS) less++;
        if (y->verdict != SML_ACC_NOT_COMPARABLE) judged++;
        printf("%-10s %-10s %-16s %-5s %7lld %8s  %-15s %s\n", y->cand_k.name, y->base_k.name, sml_op_name(y->op),
               sml_dtype_name(y->dtype), (long long)r->cases, sml_prop_outcome_name(r->outcome),
               sml_acc_verdict_name(y->verdict), y->why);
        if (y->verdict == SML_ACC_LESS && y->loss_case >= 0) {
            printf("%-10s largest loss: case %lld (level %d), %.3g of the bound on %s, %.3g on %s\n", "",
                   (long long)y->loss_case, y->loss_level, y->loss_cand, y->cand_k.name, y->loss_base,
                   y->base_k.name);
            if (y->repro[0])
                printf("%-10s reproducer: %s\n%-10s replay: softmax-lab replay %s (--kernel %s for the base)\n", "",
                       y->repro, "", y->repro, y->base_k.name);
            else
                printf("%-10s keep it: softmax-lab check --kernel %s --against %s --op %s --dtype %s --seed 0x%016llx "
                       "--case %lld --level %d --save DIR\n", "", y->cand_k.name, y->base_k.name, sml_op_name(y->op),
                       sml_dtype_name(y->dtype), (unsigned long long)cfg.seed, (long long)y->loss_case,
                       y->loss_level);
        }
    }
    if (jf) {
        fprintf(jf, "{\n  \"seed\": \"0x%016llx\",\n  \"threads\": %d,\n  \"against\": \"%s\",\n  \"runs\": [\n",
                (unsigned long long)cfg.seed, threads, base->name);
        for (int i = 0; i < n; i++) json_row(jf, &a[i], i == 0);
        fprintf(jf, "\n  ],\n  \"passed\": %s\n}\n", failed || (less && !x->allow_less) ? "false" : "true");
        if (fclose(jf) != 0) {
            fprintf(stderr, ME ": write failed: %s\n", x->json);
            remove(x->json);
            failed = 1;
        }
    }
    sml_prop_against_free(a, n);
    printf("\n");
    if (failed) printf("check: FAILED (a property failed: see the FAIL lines above)\n");
    if (less)
        printf("check: %d op/dtype LESS ACCURATE than %s%s\n", less, base->name,
               x->allow_less ? " (allowed by --allow-less-accurate)" : "");
    else if (!judged)
        printf("check: nothing was compared (neither kernel ran here, or nothing was judged)\n");
    else if (!failed)
        printf("check: no op/dtype is less accurate than %s\n", base->name);
    return failed || (less && !x->allow_less) ? 1 : 0;
}
