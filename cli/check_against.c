/* check --against: a candidate kernel against the kernel it replaces, on the same cases
 * (src/prop/against.h), judged by the accuracy rule of docs/NUMERICS.md, section 8.
 *
 *   softmax-lab check --kernel K --against BASE [--op OP|all] [--dtype D|all]
 *                     [--allow-less-accurate] [--save DIR] [--json FILE] [engine flags]
 *
 * Exit: 0 no property failed and nothing got less accurate (or --allow-less-accurate),
 * 1 a property failed or some op/dtype is LESS ACCURATE, 2 bad usage or --json could not be
 * written (the old file, or none, is left), 3 nothing was compared (neither kernel ran here). */
#include "check_against.h"
#include "masks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/accuracy_json.h"
#include "json/json_write.h"
#include "prop/against.h"
#include "prop/repro.h"
#include "io/out_file.h"
#include "worker/worker.h"

/* The check JSON's schema with the against verdicts (runs[] as in softmax-lab-check/1). */
#define SML_CHECK_AGAINST_SCHEMA "softmax-lab-check-against/1"

#define ME "softmax-lab check"

/* lib: the candidate's plugin library (NULL: built in). */
static void json_row(sml_jw *w, const sml_prop_against *a, const char *lib) {
    const sml_prop_result *r = &a->cand.res;
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "kernel", a->cand_k.name);
    sml_jw_kstr(w, "library", lib);
    sml_jw_kstr(w, "op", sml_op_name(a->op));
    sml_jw_kstr(w, "dtype", sml_dtype_name(a->dtype));
    sml_jw_kstr(w, "outcome", sml_prop_outcome_name(r->outcome));
    sml_jw_kint(w, "cases", r->cases);
    sml_jw_kint(w, "failed_cases", r->failed_cases);
    sml_jw_knum(w, "worst_ratio", r->worst_ratio);
    sml_jw_knum(w, "worst_ulps", r->worst_ulps);
    sml_jw_knum(w, "seconds", r->seconds);
    sml_acc_write(w, "accuracy", &r->accuracy);
    sml_jw_key(w, "against");
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "base", a->base_k.name);
    sml_jw_kstr(w, "base_outcome", sml_prop_outcome_name(a->base.res.outcome));
    sml_jw_kstr(w, "verdict", sml_acc_verdict_name(a->verdict));
    sml_jw_kstr(w, "why", a->why);
    sml_acc_write(w, "candidate", &a->acc_cand);
    sml_acc_write(w, "base_accuracy", &a->acc_base);
    if (a->loss_case >= 0) {
        sml_jw_kint(w, "loss_case", a->loss_case);
        sml_jw_kint(w, "loss_level", a->loss_level);
        sml_jw_knum(w, "loss_candidate", a->loss_cand);
        sml_jw_knum(w, "loss_base", a->loss_base);
    }
    sml_jw_kstr(w, "reproducer", a->repro[0] ? a->repro : NULL);
    sml_jw_end(w);
    sml_jw_end(w);
}

/* End the workers: a candidate's worker that ended on its own after its last launch is the
 * FAIL of each of its runs (sml_worker_pool_close). */
static void close_pool(sml_worker_pool *pool, sml_prop_against *a, int n) {
    if (!pool) return;
    sml_prop_job *jobs = n > 0 && a ? calloc((size_t)n, sizeof *jobs) : NULL;
    for (int i = 0; jobs && i < n; i++) jobs[i] = a[i].cand;
    sml_worker_pool_close(pool, jobs, jobs ? n : 0);
    for (int i = 0; jobs && i < n; i++) a[i].cand.res = jobs[i].res;
    free(jobs);
}

int sml_check_against_cli(const sml_check_against_args *x) {
    const sml_kernel *base = sml_kernel_find(x->base);
    if (!base) {
        char names[2048];
        fprintf(stderr,
                ME ": bad value for --against: no kernel '%s' in the registry (valid: %s)\n",
                x->base, sml_cli_kernel_names(names, sizeof names));
        return 2;
    }
    if (base == x->cand) {
        fprintf(stderr, ME ": --against %s: the candidate itself\n", x->base);
        return 2;
    }
    /* Opened now, so an unwritable path is refused before anything runs (util/out_file.h). */
    sml_out_file jout;
    char werr[1200];
    if (x->json && sml_out_open(&jout, x->json, werr, sizeof werr) != SML_OK) {
        fprintf(stderr, ME ": %s\n", werr);
        return 2;
    }
    sml_prop_config cfg = *x->cfg;
    /* The plugin libraries a printed command loads first: the candidate's, and the base's when
     * it is another. */
    char load_cand[4400], load_base[4400];
    const char *lib_cand = sml_kernel_library(x->cand), *lib_base = sml_kernel_library(base);
    sml_prop_load_arg(lib_cand, load_cand, sizeof load_cand);
    sml_prop_load_arg(lib_cand && lib_base && !strcmp(lib_cand, lib_base) ? NULL : lib_base,
                      load_base, sizeof load_base);
    char flags[80]; /* and the flags that redraw a case and judge it as this run does */
    sml_prop_case_flags(x->cfg, flags, sizeof flags);
    char rerun[128]; /* a failure's rerun draws its case with the limits both kernels share */
    snprintf(rerun, sizeof rerun, "softmax-lab check --against %s", base->name);
    cfg.rerun_cmd = rerun;
    int threads = sml_prop_threads(&cfg, SML_OP_COUNT * SML_DTYPE_COUNT);
    printf("check: %s against %s on the same cases: seed 0x%016llx, up to %lld cases per op/dtype, "
           "%d host thread%s\n",
           x->cand->name, base->name, (unsigned long long)cfg.seed, (long long)cfg.max_cases,
           threads, threads == 1 ? "" : "s");
    fflush(stdout);
    sml_prop_against *a = NULL;
    int n = 0;
    /* Both kernels run in worker processes (src/worker) and are judged here: a crash, an exit
     * or a hang is a FAIL of that kernel. */
    sml_prop_suite how = {.threads = threads, .progress = stderr};
    sml_worker_pool *pool = NULL;
    if (x->isolated) {
        pool = sml_worker_pool_new(cfg.case_timeout, threads, -1, NULL);
        if (!pool) {
            fprintf(stderr, ME ": out of memory\n");
            if (x->json) sml_out_abort(&jout);
            return 2;
        }
        how.run = sml_worker_suite_run;
        how.run_ctx = pool;
        how.cap = sml_worker_suite_cap; /* each run its own cap: none for the base */
        cfg.runner = sml_worker_runner(pool, 0);
    }
    sml_status s = sml_prop_against_run(x->cand, base, x->ops, x->dtypes, &cfg, &how, &a, &n);
    close_pool(pool, a, n);
    if (s == SML_ERR_INVALID_ARG) {
        fprintf(stderr, ME ": %s and %s share no selected op and dtype\n", x->cand->name,
                base->name);
        if (x->json) sml_out_abort(&jout);
        return 2;
    }
    if (s != SML_OK) {
        fprintf(stderr, ME ": cannot run: %s\n", sml_strerror(s));
        if (x->json) sml_out_abort(&jout);
        return 2;
    }
    int failed = 0, less = 0, judged = 0, verdicts = 0;
    printf("\n%-10s %-10s %-16s %-5s %7s %8s  %-15s %s\n", "kernel", "base", "op", "dtype", "cases",
           "suite", "accuracy", "err/bound: base -> kernel");
    for (int i = 0; i < n; i++) {
        const sml_prop_against *y = &a[i];
        const sml_prop_result *r = &y->cand.res;
        if (r->outcome == SML_PROP_FAIL || r->outcome == SML_PROP_ERROR) failed = 1;
        verdicts = sml_verdict_exit_worse(verdicts, sml_verdict_exit(r->verdict));
        if (y->verdict == SML_ACC_LESS) less++;
        if (y->verdict != SML_ACC_NOT_COMPARABLE) judged++;
        printf("%-10s %-10s %-16s %-5s %7lld %8s  %-15s %s\n", y->cand_k.name, y->base_k.name,
               sml_op_name(y->op), sml_dtype_name(y->dtype), (long long)r->cases,
               sml_verdict_name(r->verdict), sml_acc_verdict_name(y->verdict), y->why);
        if (y->verdict == SML_ACC_LESS && y->loss_case >= 0) {
            printf(
                "%-10s largest loss: case %lld (level %d), %.3g of the bound on %s, %.3g on %s\n",
                "", (long long)y->loss_case, y->loss_level, y->loss_cand, y->cand_k.name,
                y->loss_base, y->base_k.name);
            if (y->repro[0])
                printf("%-10s reproducer: %s\n%-10s replay: softmax-lab replay %s (--kernel %s for "
                       "the base)\n",
                       "", y->repro, "", y->repro, y->base_k.name);
            else
                printf("%-10s keep it: softmax-lab check%s%s%s --kernel %s --against %s --op %s "
                       "--dtype %s --seed 0x%016llx --case %lld --level %d --save DIR\n",
                       "", load_cand, load_base, flags, y->cand_k.name, y->base_k.name,
                       sml_op_name(y->op), sml_dtype_name(y->dtype), (unsigned long long)cfg.seed,
                       (long long)y->loss_case, y->loss_level);
        }
    }
    int write_failed = 0;
    if (x->json) {
        sml_jw w;
        sml_jw_init(&w, jout.f);
        sml_jw_object(&w);
        sml_jw_kstr(&w, "schema", SML_CHECK_AGAINST_SCHEMA);
        sml_jw_kstr(&w, "version", SML_VERSION);
        char seed[24];
        snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)cfg.seed);
        sml_jw_kstr(&w, "seed", seed);
        sml_jw_kint(&w, "threads", threads);
        sml_jw_kbool(&w, "strict", cfg.strict);
        sml_jw_kbool(&w, "long", cfg.profile == SML_PROP_PROFILE_LONG);
        sml_jw_kstr(&w, "against", base->name);
        sml_jw_key(&w, "runs");
        sml_jw_array(&w);
        for (int i = 0; i < n; i++) json_row(&w, &a[i], lib_cand);
        sml_jw_end(&w);
        sml_jw_kbool(&w, "passed", !(failed || (less && !x->allow_less)));
        sml_jw_end(&w);
        if (sml_jw_finish(&w) != 0) {
            sml_out_abort(&jout);
            fprintf(stderr, ME ": %s: write failed\n", x->json);
            write_failed = 1;
        } else if (sml_out_commit(&jout, werr, sizeof werr) != SML_OK) {
            fprintf(stderr, ME ": %s\n", werr);
            write_failed = 1;
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
    if (verdicts == 4)
        printf("check: INCOMPLETE: the --seconds cap stopped %s before its cases were done (the "
               "suite column); no pass; exit 4\n",
               x->cand->name);
    if (write_failed) return 2;
    /* The suite's verdicts (verdict.h: FLAKY 5, INCOMPLETE 4, ...), then the comparison's. */
    int rc = sml_verdict_exit_worse(verdicts, failed || (less && !x->allow_less) ? 1 : 0);
    return judged ? rc : sml_verdict_exit_worse(rc, 3);
}
