/* test_accuracy_gate: proof that the accuracy gate (docs/NUMERICS.md, section 8) catches a
 * kernel that got less accurate inside the contract, and stays quiet on one that did not, in
 * CI with no GPU.
 *   1. the rule on figures made up for it: the factor, the floor, and NOT COMPARABLE when the
 *      seeds, case counts or case digests differ;
 *   2. the engine's digest: two kernels with the same limits see the same cases under one
 *      seed, a different seed gives other cases; slices of a run (--shard) join to the whole
 *      run's digest, and the digest does not depend on the cases' order;
 *   3. the planted pair (accuracy_pair.c) against cpu_online, on the same cases: acc_fast_exp
 *      passes every property and is LESS ACCURATE on softmax fp32, its largest-loss case is
 *      saved and replays (within the contract, recorded less_accurate); acc_expf, the same code
 *      with expf, passes and is never LESS ACCURATE.
 * Flags: the engine's (--seed, --cases, ...); --replay FILE re-runs a saved reproducer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy_pair.h"
#include "prop/against.h"
#include "core/rng.h"
#include "prop/gen.h"
#include "prop/prop.h"
#include "test_support.h"

#ifndef SML_PROP_SAVE_DIR
#define SML_PROP_SAVE_DIR "prop-failures"
#endif

static const char *TEST = "test_accuracy_gate";

static sml_accuracy fig(double worst, double p99) {
    sml_accuracy a = {0x1234, 300, 300, 0xABCD, worst, p99, p99 / 2, 3.0, 7, 2};
    return a;
}

static void expect(sml_tally *t, const char *rerun, const char *what, sml_accuracy o,
                   sml_accuracy n, sml_acc_verdict want) {
    char why[512];
    sml_acc_verdict got = sml_accuracy_judge(&o, &n, why, sizeof why);
    if (got == want)
        sml_tally_pass(t);
    else
        sml_tally_fail(t, rerun, "rule: %s: %s, want %s (%s)", what, sml_acc_verdict_name(got),
                       sml_acc_verdict_name(want), why);
}

static void check_rule(sml_tally *t, const char *rerun) {
    expect(t, rerun, "__expf's 0.40 -> 0.73 on a GPU block kernel", fig(0.40, 0.30),
           fig(0.73, 0.31), SML_ACC_LESS);
    expect(t, rerun, "p99 alone 1.5x worse", fig(0.40, 0.20), fig(0.40, 0.30), SML_ACC_LESS);
    expect(t, rerun, "1.2x: inside the factor", fig(0.40, 0.30), fig(0.48, 0.36), SML_ACC_SAME);
    expect(t, rerun, "identical", fig(0.40, 0.30), fig(0.40, 0.30), SML_ACC_SAME);
    expect(t, rerun, "halved", fig(0.40, 0.30), fig(0.20, 0.15), SML_ACC_MORE);
    expect(t, rerun, "better worst, worse p99", fig(0.40, 0.10), fig(0.20, 0.20), SML_ACC_LESS);
    expect(t, rerun, "tiny errors tripled, under the floor", fig(0.01, 0.005), fig(0.03, 0.015),
           SML_ACC_SAME);
    expect(t, rerun, "from under the floor to 0.1", fig(0.01, 0.005), fig(0.10, 0.005),
           SML_ACC_LESS);
    sml_accuracy o = fig(0.4, 0.3), n = fig(0.9, 0.8);
    n.seed = 0x9999;
    expect(t, rerun, "other seed", o, n, SML_ACC_NOT_COMPARABLE);
    n = fig(0.9, 0.8);
    n.cases = 299;
    expect(t, rerun, "other case count", o, n, SML_ACC_NOT_COMPARABLE);
    n = fig(0.9, 0.8);
    n.digest ^= 1;
    expect(t, rerun, "other cases, same seed and count", o, n, SML_ACC_NOT_COMPARABLE);
    n = fig(0.9, 0.8);
    n.judged = 250;
    expect(t, rerun, "judged on fewer cases", o, n, SML_ACC_NOT_COMPARABLE);
}

static void check_digest(sml_tally *t, const sml_prop_config *base, const char *rerun) {
    sml_prop_config cfg = *base;
    cfg.props = 1u << SML_PROP_AGREEMENT;
    cfg.max_cases = 40;
    sml_prop_result *r = calloc(3, sizeof *r);
    if (!r) return;
    sml_prop_run(sml_kernel_find("cpu_naive"), SML_SOFTMAX, SML_F32, &cfg, &r[0]);
    sml_prop_run(&sml_acc_fast_exp, SML_SOFTMAX, SML_F32, &cfg, &r[1]);
    cfg.seed ^= 1;
    sml_prop_run(sml_kernel_find("cpu_naive"), SML_SOFTMAX, SML_F32, &cfg, &r[2]);
    if (r[0].accuracy.digest && r[0].accuracy.digest == r[1].accuracy.digest &&
        r[0].accuracy.cases == 40)
        sml_tally_pass(t);
    else
        sml_tally_fail(t, rerun,
                       "digest: cpu_naive and acc_fast_exp drew other cases under one seed "
                       "(0x%016llx vs 0x%016llx)",
                       (unsigned long long)r[0].accuracy.digest,
                       (unsigned long long)r[1].accuracy.digest);
    if (r[2].accuracy.digest != r[0].accuracy.digest)
        sml_tally_pass(t);
    else
        sml_tally_fail(t, rerun, "digest: another seed gave the same digest");
    free(r);
}

/* The digest says which cases a run drew, not in what order or in how many slices: three
 * slices of a run (--shard K/3) join to the whole run's digest and case count, and cases
 * folded in reverse order give the same digest as in order. */
static void check_digest_split(sml_tally *t, const sml_prop_config *base, const char *rerun) {
    sml_prop_config cfg = *base;
    cfg.props = 1u << SML_PROP_AGREEMENT;
    cfg.max_cases = 40;
    cfg.regressions_dir = NULL;
    const sml_kernel *k = sml_kernel_find("cpu_naive");
    sml_prop_result *r = calloc(4, sizeof *r);
    if (!r) return;
    sml_prop_run(k, SML_SOFTMAX, SML_F32, &cfg, &r[0]);
    uint64_t joined = 0;
    int64_t cases = 0;
    for (int s = 1; s <= 3; s++) {
        cfg.shard = (sml_shard){s, 3};
        sml_prop_run(k, SML_SOFTMAX, SML_F32, &cfg, &r[s]);
        joined = sml_accuracy_digest_join(joined, r[s].accuracy.digest);
        cases += r[s].cases;
    }
    if (joined == r[0].accuracy.digest && cases == r[0].cases && r[1].cases == 14 &&
        r[3].cases == 13)
        sml_tally_pass(t);
    else
        sml_tally_fail(
            t, rerun,
            "digest: slices 1/3..3/3 (%lld, %lld, %lld cases) join to 0x%016llx over %lld "
            "cases, the whole run 0x%016llx over %lld",
            (long long)r[1].cases, (long long)r[2].cases, (long long)r[3].cases,
            (unsigned long long)joined, (long long)cases, (unsigned long long)r[0].accuracy.digest,
            (long long)r[0].cases);
    free(r);
    uint64_t fwd = 0, bwd = 0;
    sml_prop_case c[6];
    int drawn = 0;
    for (; drawn < 6; drawn++)
        if (sml_prop_gen_case(k, SML_SOFTMAX, SML_F32, sml_derive_seed(cfg.seed, (uint64_t)drawn),
                              10, &cfg.sizes, &c[drawn]) != SML_OK)
            break;
    for (int i = 0; i < drawn; i++) fwd = sml_accuracy_digest_case(fwd, &c[i]);
    for (int i = drawn - 1; i >= 0; i--) bwd = sml_accuracy_digest_case(bwd, &c[i]);
    for (int i = 0; i < drawn; i++) sml_prop_case_free(&c[i]);
    if (drawn == 6 && fwd == bwd)
        sml_tally_pass(t);
    else
        sml_tally_fail(t, rerun,
                       "digest: 6 cases in order give 0x%016llx, in reverse 0x%016llx (%d drawn)",
                       (unsigned long long)fwd, (unsigned long long)bwd, drawn);
}

static const sml_prop_against *find(const sml_prop_against *a, int n, sml_op op, sml_dtype dt) {
    for (int i = 0; i < n; i++)
        if (a[i].op == op && a[i].dtype == dt) return &a[i];
    return NULL;
}

static void print_rows(const sml_prop_against *a, int n) {
    for (int i = 0; i < n; i++)
        printf("  %-12s vs %-10s %-11s %-4s %-15s %s\n", a[i].cand_k.name, a[i].base_k.name,
               sml_op_name(a[i].op), sml_dtype_name(a[i].dtype), sml_acc_verdict_name(a[i].verdict),
               a[i].why);
}

static void check_pair(sml_tally *t, const sml_prop_config *cfg, const char *rerun) {
    const sml_kernel *base = sml_kernel_find("cpu_online");
    const sml_kernel *cands[2] = {&sml_acc_fast_exp, &sml_acc_accurate_exp};
    for (int k = 0; k < 2; k++) {
        const sml_kernel *cand = cands[k];
        int fast = cand == &sml_acc_fast_exp;
        sml_prop_against *a = NULL;
        int n = 0;
        sml_prop_suite how = {.progress = stderr};
        sml_status s =
            sml_prop_against_run(cand, base, SML_OPS_FWD, SML_DTYPES_ALL, cfg, &how, &a, &n);
        if (s != SML_OK) {
            sml_tally_fail(t, rerun, "%s against cpu_online did not run: %s", cand->name,
                           sml_strerror(s));
            continue;
        }
        print_rows(a, n);
        for (int i = 0; i < n; i++) {
            const sml_prop_result *r = &a[i].cand.res;
            if (r->outcome == SML_PROP_PASS && a[i].base.res.outcome == SML_PROP_PASS)
                sml_tally_pass(t);
            else
                sml_tally_fail(t, rerun,
                               "%s %s %s: the property suite did not pass (%s; base %s): the gate "
                               "must catch what the suite cannot",
                               cand->name, sml_op_name(a[i].op), sml_dtype_name(a[i].dtype),
                               sml_prop_outcome_name(r->outcome),
                               sml_prop_outcome_name(a[i].base.res.outcome));
            if (a[i].acc_cand.digest != a[i].acc_base.digest ||
                a[i].acc_cand.cases != a[i].acc_base.cases)
                sml_tally_fail(t, rerun, "%s %s %s: the base ran other cases than the candidate",
                               cand->name, sml_op_name(a[i].op), sml_dtype_name(a[i].dtype));
            if (!fast && a[i].verdict == SML_ACC_LESS)
                sml_tally_fail(t, rerun,
                               "acc_expf %s %s called LESS ACCURATE against cpu_online: %s",
                               sml_op_name(a[i].op), sml_dtype_name(a[i].dtype), a[i].why);
            else if (!fast && a[i].verdict != SML_ACC_NOT_COMPARABLE)
                sml_tally_pass(t);
            else if (!fast)
                sml_tally_fail(t, rerun, "acc_expf %s %s: no verdict: %s", sml_op_name(a[i].op),
                               sml_dtype_name(a[i].dtype), a[i].why);
        }
        if (fast) {
            const sml_prop_against *x = find(a, n, SML_SOFTMAX, SML_F32);
            if (!x || x->verdict != SML_ACC_LESS) {
                sml_tally_fail(t, rerun, "acc_fast_exp softmax fp32 not called LESS ACCURATE: %s",
                               x ? x->why : "not run");
            } else {
                sml_tally_pass(t);
                printf("  largest loss: case %lld (level %d): %.3g of the bound vs %.3g; "
                       "reproducer %s\n",
                       (long long)x->loss_case, x->loss_level, x->loss_cand, x->loss_base,
                       x->repro);
                sml_prop_replay_result rr;
                char cmd[2200];
                snprintf(cmd, sizeof cmd, "%s --replay %s", rerun, x->repro);
                if (!x->repro[0])
                    sml_tally_fail(t, rerun, "the largest-loss case was not saved");
                else if (sml_prop_replay(x->repro, NULL, sml_acc_pair_find, NULL, &rr) != SML_OK ||
                         rr.outcome != SML_PROP_PASS || strcmp(rr.recorded, "less_accurate") ||
                         strcmp(rr.kernel, "acc_fast_exp"))
                    sml_tally_fail(t, cmd,
                                   "the loss reproducer does not replay as acc_fast_exp within the "
                                   "contract, recorded less_accurate: %s (%s)",
                                   rr.message, rr.recorded);
                else
                    sml_tally_pass(t);
            }
        }
        sml_prop_against_free(a, n);
    }
}

int main(int argc, char **argv) {
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_CI);
    cfg.max_cases = 200;
    cfg.max_seconds = cfg.total_seconds = 0.0; /* a time budget would cut runs at other cases */
    cfg.seed = 0xACC0AA7E5EED0001ull;
    sml_prop_config_env(&cfg);
    cfg.save_dir = SML_PROP_SAVE_DIR "/accuracy";
    cfg.log = stdout;
    char rerun[1024];
    snprintf(rerun, sizeof rerun, "%s", argv[0]);
    for (int i = 1; i < argc;) {
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r > 0) continue;
        if (!strcmp(argv[i], "--replay") && i + 1 < argc) {
            sml_prop_replay_result rr;
            sml_status s = sml_prop_replay(argv[i + 1], NULL, sml_acc_pair_find, NULL, &rr);
            printf("%s: %s (recorded %s): %s\n", rr.kernel,
                   s == SML_OK ? sml_prop_outcome_name(rr.outcome) : "?", rr.recorded, rr.message);
            return s == SML_OK ? 0 : 2;
        }
        printf("usage: %s [--replay FILE] [engine flags]\n%s", argv[0], sml_prop_flags_help());
        return strcmp(argv[i], "--help") ? 2 : 0;
    }
    cfg.rerun_cmd = rerun;
    sml_tally t = {TEST, 0, 0, 0};
    printf("%s: seed 0x%016llx, %lld cases per kernel/op/dtype\n", TEST,
           (unsigned long long)cfg.seed, (long long)cfg.max_cases);
    check_rule(&t, rerun);
    check_digest(&t, &cfg, rerun);
    check_digest_split(&t, &cfg, rerun);
    check_pair(&t, &cfg, rerun);
    return sml_tally_finish(&t);
}
