/* test_suite: the thread pool that runs kernel/op/dtype jobs side by side (src/prop/suite.c)
 * must change nothing but the wall time. The same jobs (both CPU kernels and two planted
 * mutants, so that failures and shrinking are part of what is compared) run in a plain
 * sequential loop of sml_prop_run and through the suite on 4 threads, and every job's
 * result must match field for field: cases, checks, failures,
 * the case each property failed at, the shrunk shape, the worst error to the bit. Also:
 * every job reported exactly once, the mutants caught (else the comparison proves little),
 * the time shares of sml_prop_next_seconds, and the hooks through which the engine reports to
 * whoever drives it (one case_done per case, each failure report between one report_begin
 * and one report_end). And the same jobs with enough cases to be split in parts (parts.h)
 * against one run each; and jobs that share their big cases (case_cache.h) against jobs
 * that draw their own.
 *
 * Flags: the engine's (--seed, --cases, ...); --threads N sets the parallel side (4). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_mutants.h"
#include "prop/parts.h"
#include "prop/prop.h"
#include "prop/suite.h"
#include "test_support.h"

static const char *TEST = "test_suite";

typedef struct counts {
    int calls[64];
} counts;

static void count_done(sml_prop_job *job, void *ctx) {
    counts *c = ctx;
    c->calls[job->cfg.max_cases % 64]++; /* max_cases carries the job's index, see below */
}

static int make_jobs(sml_prop_job *jobs, const sml_prop_config *cfg) {
    const char *names[] = {"cpu_naive", "mut_no_max", "cpu_online", "mut_no_rescale"};
    const sml_op ops[] = {SML_SOFTMAX, SML_LOG_SOFTMAX, SML_SOFTMAX_BWD};
    const sml_dtype dts[] = {SML_F32, SML_F16};
    int n = 0;
    for (int k = 0; k < 4; k++) {
        const sml_kernel *kern = sml_kernel_find(names[k]);
        if (!kern) kern = sml_mutant_find(names[k], NULL);
        if (!kern) return -1;
        for (int o = 0; o < 3; o++)
            for (int d = 0; d < 2; d++) {
                if (!(kern->ops >> ops[o] & 1) || !(kern->dtypes >> dts[d] & 1)) continue;
                jobs[n] = (sml_prop_job){.k = kern, .op = ops[o], .dtype = dts[d], .cfg = *cfg};
                /* Distinct case counts per job (cfg->max_cases + index): a job's result can
                 * only match its own sequential twin. */
                jobs[n].cfg.max_cases = cfg->max_cases + n;
                n++;
            }
    }
    return n;
}

#define DIFF(cond, ...)                    \
    do {                                   \
        if (cond) {                        \
            snprintf(why, n, __VA_ARGS__); \
            return 0;                      \
        }                                  \
    } while (0)

/* Each property's first failure (killed_at) and every failure reported: property, case,
 * shrunk shape and message. */
static int same_failures(const sml_prop_result *x, const sml_prop_result *y, char *why, size_t n) {
    for (int p = 0; p < SML_PROP_COUNT; p++)
        DIFF(x->killed_at[p] != y->killed_at[p], "property %s killed at %lld vs %lld",
             sml_prop_name((sml_prop_id)p), (long long)x->killed_at[p], (long long)y->killed_at[p]);
    DIFF(x->nfail != y->nfail, "failures %d vs %d", x->nfail, y->nfail);
    for (int f = 0; f < x->nfail; f++) {
        const sml_prop_failure *p = &x->failures[f], *q = &y->failures[f];
        DIFF(p->prop != q->prop || p->case_index != q->case_index || p->s_rows != q->s_rows ||
                 p->s_cols != q->s_cols || strcmp(p->message, q->message),
             "failure %d: %s at case %lld shrunk to %lldx%lld vs %s at case %lld shrunk to "
             "%lldx%lld",
             f, sml_prop_name(p->prop), (long long)p->case_index, (long long)p->s_rows,
             (long long)p->s_cols, sml_prop_name(q->prop), (long long)q->case_index,
             (long long)q->s_rows, (long long)q->s_cols);
    }
    return 1;
}

static int same_result(const sml_prop_job *a, const sml_prop_job *b, char *why, size_t n) {
    const sml_prop_result *x = &a->res, *y = &b->res;
    DIFF(a->k != b->k || a->op != b->op || a->dtype != b->dtype, "jobs out of order");
    DIFF(a->status != b->status, "status %d vs %d", (int)a->status, (int)b->status);
    DIFF(x->outcome != y->outcome, "outcome %s vs %s", sml_prop_outcome_name(x->outcome),
         sml_prop_outcome_name(y->outcome));
    DIFF(x->cases != y->cases, "cases %lld vs %lld", (long long)x->cases, (long long)y->cases);
    DIFF(x->failed_cases != y->failed_cases, "failed cases %lld vs %lld",
         (long long)x->failed_cases, (long long)y->failed_cases);
    DIFF(memcmp(&x->worst_ratio, &y->worst_ratio, sizeof x->worst_ratio) != 0,
         "worst ratio %.17g vs %.17g", x->worst_ratio, y->worst_ratio);
    DIFF(x->elements != y->elements, "elements %.0f vs %.0f", x->elements, y->elements);
    for (int p = 0; p < SML_PROP_COUNT; p++) {
        DIFF(x->checks[p] != y->checks[p] || x->fails[p] != y->fails[p] ||
                 x->skips[p] != y->skips[p],
             "property %s: checks/fails/skips %lld/%lld/%lld vs %lld/%lld/%lld",
             sml_prop_name((sml_prop_id)p), (long long)x->checks[p], (long long)x->fails[p],
             (long long)x->skips[p], (long long)y->checks[p], (long long)y->fails[p],
             (long long)y->skips[p]);
    }
    if (!same_failures(x, y, why, n)) return 0;
    return 1;
}

static void check_shares(sml_tally *t) {
    sml_prop_config c;
    sml_prop_config_init(&c, SML_PROP_PROFILE_CI);
    c.max_seconds = 1000.0;
    c.total_seconds = 120.0;
    struct {
        double spent;
        int remaining, threads;
        double want;
    } cases[] = {
        {0.0, 12, 1, 10.0},  /* 12 rounds of one */
        {0.0, 12, 4, 40.0},  /* 3 rounds of four */
        {0.0, 13, 4, 30.0},  /* 4 rounds: the 13th job is a round of its own */
        {60.0, 3, 4, 60.0},  /* fewer jobs than threads: all that is left */
        {200.0, 5, 2, 0.05}, /* over budget: still a quick look */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got =
            sml_prop_next_seconds(&c, cases[i].spent, cases[i].remaining, cases[i].threads);
        if (fabs(got - cases[i].want) > 1e-9)
            sml_tally_fail(
                t, "./build/tests/property/test_suite",
                "time share after %.0f s, %d jobs left, %d threads: %.4g s, expected %.4g s",
                cases[i].spent, cases[i].remaining, cases[i].threads, got, cases[i].want);
        else
            sml_tally_pass(t);
    }
    c.max_seconds = 25.0;
    if (sml_prop_next_seconds(&c, 0.0, 12, 4) != 25.0)
        sml_tally_fail(t, "./build/tests/property/test_suite",
                       "the share is not capped by max_seconds");
    else
        sml_tally_pass(t);
}

/* What a run told its hooks. */
typedef struct heard {
    int64_t cases, failed;
    int begins, ends, open, misnested;
} heard;

static void heard_case(void *ctx, int failed) {
    heard *h = ctx;
    h->cases++;
    h->failed += failed != 0;
}
static void heard_begin(void *ctx) {
    heard *h = ctx;
    h->begins++;
    if (h->open++) h->misnested++;
}
static void heard_end(void *ctx) {
    heard *h = ctx;
    h->ends++;
    if (--h->open) h->misnested++;
}

static void check_hooks(sml_tally *t, const sml_prop_config *base, const char *rerun) {
    const sml_kernel *k = sml_mutant_find("mut_no_max", NULL);
    if (!k) {
        sml_tally_fail(t, rerun, "mutant mut_no_max is missing");
        return;
    }
    heard h = {0, 0, 0, 0, 0, 0};
    sml_prop_config c = *base;
    c.stop_on_failure = 0;
    c.hooks = (sml_prop_hooks){
        .case_done = heard_case, .report_begin = heard_begin, .report_end = heard_end, .ctx = &h};
    sml_prop_result *res = malloc(sizeof *res);
    if (!res || sml_prop_run(k, SML_SOFTMAX, SML_F32, &c, res) != SML_OK) {
        sml_tally_fail(t, rerun, "the hooks' run of mut_no_max did not run");
        free(res);
        return;
    }
    if (h.cases != res->cases || h.failed != res->failed_cases)
        sml_tally_fail(t, rerun,
                       "hooks heard %lld cases (%lld failed), the run counted %lld (%lld failed)",
                       (long long)h.cases, (long long)h.failed, (long long)res->cases,
                       (long long)res->failed_cases);
    else
        sml_tally_pass(t);
    if (res->nfail < 1 || h.begins != res->nfail || h.ends != res->nfail || h.misnested || h.open)
        sml_tally_fail(
            t, rerun,
            "%d failure reports, heard %d report_begin and %d report_end (%d misnested, %d open)",
            res->nfail, h.begins, h.ends, h.misnested, h.open);
    else
        sml_tally_pass(t);
    free(res);
}

/* A job split in parts (parts.h) must give what one run gives: the same first failure of each
 * property (case, shrunk shape, message) and killed_at; and, where nothing failed, the same
 * cases, checks, worst error, digest and accuracy summary to the bit. (After a failure the parts
 * may check a few more cases than one run would, so those counts are not compared there.) */
static int same_split(const sml_prop_job *a, const sml_prop_job *b, char *why, size_t n) {
    const sml_prop_result *x = &a->res, *y = &b->res;
    DIFF(a->status != b->status, "status %d vs %d", (int)a->status, (int)b->status);
    DIFF(x->verdict != y->verdict, "verdict %s vs %s", sml_verdict_name(x->verdict),
         sml_verdict_name(y->verdict));
    if (!same_failures(x, y, why, n)) return 0;
    if (x->nfail) return 1;
    DIFF(x->cases != y->cases || x->events.planned != y->events.planned,
         "cases %lld of %lld vs %lld of %lld", (long long)x->cases, (long long)x->events.planned,
         (long long)y->cases, (long long)y->events.planned);
    for (int p = 0; p < SML_PROP_COUNT; p++)
        DIFF(x->checks[p] != y->checks[p], "property %s: %lld checks vs %lld",
             sml_prop_name((sml_prop_id)p), (long long)x->checks[p], (long long)y->checks[p]);
    const sml_accuracy *u = &x->accuracy, *v = &y->accuracy;
    DIFF(memcmp(&x->worst_ratio, &y->worst_ratio, sizeof x->worst_ratio) ||
             memcmp(&u->worst, &v->worst, sizeof u->worst) ||
             memcmp(&u->p99, &v->p99, sizeof u->p99) ||
             memcmp(&u->median, &v->median, sizeof u->median) || u->worst_case != v->worst_case ||
             u->worst_level != v->worst_level || u->digest != v->digest || u->cases != v->cases,
         "accuracy: worst %.17g p99 %.17g median %.17g at case %lld, digest %016llx vs worst "
         "%.17g p99 %.17g median %.17g at case %lld, digest %016llx",
         u->worst, u->p99, u->median, (long long)u->worst_case, (unsigned long long)u->digest,
         v->worst, v->p99, v->median, (long long)v->worst_case, (unsigned long long)v->digest);
    return 1;
}

static void check_parts(sml_tally *t, const sml_prop_config *base, const char *rerun) {
    sml_prop_config cfg = *base;
    cfg.max_cases = 3 * SML_PROP_PART_CASES + 20;
    /* Smaller shapes than the profile's, so that 20 jobs of 1,520 cases take seconds. */
    if (cfg.sizes.small_max_elems > 1024) cfg.sizes.small_max_elems = 1024;
    if (cfg.sizes.small_min_elems > cfg.sizes.small_max_elems)
        cfg.sizes.small_min_elems = cfg.sizes.small_max_elems;
    cfg.sizes.big_max_elems = 1 << 13;
    cfg.sizes.tall_prob = 0.0;
    static sml_prop_job one[32], many[32];
    int n = make_jobs(one, &cfg);
    if (n < 0 || make_jobs(many, &cfg) != n) {
        sml_tally_fail(t, rerun, "a kernel or mutant of this test is missing");
        return;
    }
    int parts = sml_prop_parts_for(&many[0].cfg);
    if (parts < 3) {
        sml_tally_fail(t, rerun, "a job of %lld cases is not split (%d part)",
                       (long long)cfg.max_cases, parts);
        return;
    }
    for (int j = 0; j < n; j++)
        one[j].status = sml_prop_run(one[j].k, one[j].op, one[j].dtype, &one[j].cfg, &one[j].res);
    sml_prop_suite sn = {.threads = cfg.threads, .label = TEST};
    if (sml_prop_suite_run(&sn, many, n) != SML_OK) {
        sml_tally_fail(t, rerun, "the suite did not run");
        return;
    }
    int failed = 0;
    for (int j = 0; j < n; j++) {
        char why[512];
        const sml_prop_job *a = &one[j];
        failed += a->res.nfail > 0;
        if (!same_split(a, &many[j], why, sizeof why))
            sml_tally_fail(t, rerun, "%s %s %s in %d parts differs from one run: %s", a->k->name,
                           sml_op_name(a->op), sml_dtype_name(a->dtype), parts, why);
        else
            sml_tally_pass(t);
    }
    if (failed < 2 || failed == n)
        sml_tally_fail(t, rerun, "%d of %d jobs failed: the split comparison needs both kinds",
                       failed, n);
    else
        sml_tally_pass(t);
    printf("%s: %d jobs of %lld cases in %d parts each, %d failing, compared with one run each\n",
           TEST, n, (long long)cfg.max_cases, parts, failed);
}

/* Kernels with the same column limits share their big cases (case_cache.h): drawn and
 * referenced by the first job to reach one, read by the others. Two CPU kernels and a mutant
 * on shapes where most cases are big: the suite sharing them, the suite with each job drawing
 * its own (own_cases) and a plain loop give the same results field for field, and the sharing
 * run did share (each job's `shared` count), the others not. */
static void check_shared(sml_tally *t, const sml_prop_config *base, const char *rerun) {
    sml_prop_config cfg = *base;
    cfg.max_cases = 40;
    cfg.sizes.small_min_elems = 1;
    cfg.sizes.small_max_elems = 1024;
    cfg.sizes.big_prob = 1.0;
    cfg.sizes.big_max_elems = (int64_t)1 << 19;
    cfg.sizes.tall_prob = 0.0;
    const char *names[] = {"cpu_naive", "cpu_online", "mut_no_max"};
    const sml_op ops[] = {SML_SOFTMAX, SML_SOFTMAX_BWD};
    static sml_prop_job loop[6], shared[6], own[6];
    int n = 0;
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 3; k++) {
            const sml_kernel *kern = sml_kernel_find(names[k]);
            if (!kern) kern = sml_mutant_find(names[k], NULL);
            if (!kern) {
                sml_tally_fail(t, rerun, "kernel or mutant %s is missing", names[k]);
                return;
            }
            loop[n] = (sml_prop_job){.k = kern, .op = ops[o], .dtype = SML_F32, .cfg = cfg};
            shared[n] = own[n] = loop[n];
            n++;
        }
    for (int j = 0; j < n; j++)
        loop[j].status =
            sml_prop_run(loop[j].k, loop[j].op, loop[j].dtype, &loop[j].cfg, &loop[j].res);
    sml_prop_suite sh = {.threads = cfg.threads, .label = TEST};
    sml_prop_suite ow = {.threads = cfg.threads, .label = TEST, .own_cases = 1};
    if (sml_prop_suite_run(&sh, shared, n) != SML_OK || sml_prop_suite_run(&ow, own, n) != SML_OK) {
        sml_tally_fail(t, rerun, "the suite did not run");
        return;
    }
    int64_t taken = 0, taken_own = 0, taken_loop = 0;
    int caught = 0;
    for (int j = 0; j < n; j++) {
        char why[512];
        const sml_prop_job *a = &loop[j];
        taken += shared[j].res.shared;
        taken_own += own[j].res.shared;
        taken_loop += a->res.shared;
        caught += a->res.outcome == SML_PROP_FAIL;
        if (!same_result(a, &shared[j], why, sizeof why))
            sml_tally_fail(t, rerun, "%s %s %s with shared cases differs from a plain loop: %s",
                           a->k->name, sml_op_name(a->op), sml_dtype_name(a->dtype), why);
        else if (!same_result(a, &own[j], why, sizeof why))
            sml_tally_fail(t, rerun, "%s %s %s with its own cases differs from a plain loop: %s",
                           a->k->name, sml_op_name(a->op), sml_dtype_name(a->dtype), why);
        else if (a->res.accuracy.digest != shared[j].res.accuracy.digest)
            sml_tally_fail(t, rerun, "%s %s %s: case set digest %016llx shared, %016llx alone",
                           a->k->name, sml_op_name(a->op), sml_dtype_name(a->dtype),
                           (unsigned long long)shared[j].res.accuracy.digest,
                           (unsigned long long)a->res.accuracy.digest);
        else
            sml_tally_pass(t);
    }
    if (taken < 4 || taken_own || taken_loop)
        sml_tally_fail(t, rerun,
                       "cases taken from another job: %lld sharing (want several), %lld with "
                       "own_cases and %lld in a plain loop (want 0)",
                       (long long)taken, (long long)taken_own, (long long)taken_loop);
    else if (!caught)
        sml_tally_fail(t, rerun, "the mutant passed: the comparison saw no failure");
    else
        sml_tally_pass(t);
    printf("%s: %d jobs on big cases, %lld cases taken from another kernel's job, %d failing, "
           "compared with the suite drawing its own and a plain loop\n",
           TEST, n, (long long)taken, caught);
}

/* The progress line names a case that has held its thread long. slow_once is cpu_online that
 * sleeps in its 30th launch; with lines every 0.2 s, a sleep of 1.5 s against 0.5 s as long
 * must be named (kernel, case, time), and one of 0.3 s against 5 s must not, though lines
 * are drawn while it sleeps. */
static _Atomic int launches;
static _Atomic long sleep_ns;
static const sml_kernel *online;

static sml_status slow_once(sml_handle *h, const sml_problem *p) {
    if (atomic_fetch_add(&launches, 1) + 1 == 30) {
        long ns = atomic_load(&sleep_ns);
        struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
        nanosleep(&ts, NULL);
    }
    return online->launch(h, p);
}

static void progress_of(const sml_prop_config *base, long ns, double slow_after, char *text,
                        size_t n, sml_prop_result *res) {
    sml_kernel k = *online;
    k.name = "slow_once";
    k.launch = slow_once;
    atomic_store(&launches, 0);
    atomic_store(&sleep_ns, ns);
    static sml_prop_job job;
    memset(&job, 0, sizeof job);
    job = (sml_prop_job){.k = &k, .op = SML_SOFTMAX, .dtype = SML_F32, .cfg = *base};
    job.cfg.max_cases = 40;
    FILE *f = tmpfile();
    text[0] = 0;
    if (!f) return;
    sml_prop_suite sn = {.threads = 1,
                         .label = TEST,
                         .progress = f,
                         .progress_every = 0.2,
                         .slow_after = slow_after};
    sml_prop_suite_run(&sn, &job, 1);
    *res = job.res;
    rewind(f);
    size_t got = fread(text, 1, n - 1, f);
    text[got] = 0;
    fclose(f);
}

static void check_slow_named(sml_tally *t, const sml_prop_config *base, const char *rerun) {
    online = sml_kernel_find("cpu_online");
    if (!online || !online->launch) {
        sml_tally_fail(t, rerun, "no cpu_online kernel to wrap");
        return;
    }
    static char text[1 << 16];
    static sml_prop_result res;
    progress_of(base, 1500000000L, 0.5, text, sizeof text, &res);
    const char *named = strstr(text, "; slow_once softmax fp32 case ");
    if (!named || !strstr(named, " elements, ") || !strstr(named, " for "))
        sml_tally_fail(t, rerun,
                       "a launch of 1.5 s with lines every 0.2 s: no progress line named its "
                       "case (slow_after 0.5 s); the lines:\n%s",
                       text);
    else
        sml_tally_pass(t);
    /* The run's slowest case is the one that slept (the summary's "slowest case" line). */
    long long shown = -1;
    if (named) sscanf(named, "; slow_once softmax fp32 case %lld", &shown);
    if (!(res.slowest_seconds >= 1.5 && res.slowest_case == shown && res.slowest_elements >= 1))
        sml_tally_fail(t, rerun,
                       "the run with a 1.5 s launch records its slowest case as case %lld of %.0f "
                       "elements, %.3f s (the progress line named case %lld)",
                       (long long)res.slowest_case, res.slowest_elements, res.slowest_seconds,
                       shown);
    else
        sml_tally_pass(t);
    progress_of(base, 300000000L, 5.0, text, sizeof text, &res);
    if (!strstr(text, "runs done") || strstr(text, "; slow_once"))
        sml_tally_fail(t, rerun,
                       "a launch of 0.3 s against 5 s as long: lines must be drawn and name no "
                       "case; the lines:\n%s",
                       text);
    else
        sml_tally_pass(t);
}

int main(int argc, char **argv) {
    sml_tally t = {TEST, 0, 0, 0};
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_CI);
    sml_prop_config_env(&cfg);
    cfg.max_cases = 60;
    cfg.threads = 4;
    for (int i = 1; i < argc;) {
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r == 0) {
            fprintf(stderr, "usage: %s [engine flags]\n%s", argv[0], sml_prop_flags_help());
            return 2;
        }
    }
    if (cfg.threads < 2) cfg.threads = 4;
    cfg.max_seconds = 0.0; /* no time budget: the counts decide, so both sides are equal */
    cfg.total_seconds = 0.0;
    cfg.save_dir = NULL;
    cfg.regressions_dir = NULL;
    cfg.log = fopen("/dev/null", "w");
    char rerun[256];
    snprintf(rerun, sizeof rerun, "%s --seed 0x%016llx --cases %lld --threads %d", argv[0],
             (unsigned long long)cfg.seed, (long long)cfg.max_cases, cfg.threads);
    printf(
        "%s: seed 0x%016llx, %lld+ cases per job, a plain loop against the suite on %d threads\n",
        TEST, (unsigned long long)cfg.seed, (long long)cfg.max_cases, cfg.threads);

    check_shares(&t);
    check_shared(&t, &cfg, rerun);
    check_hooks(&t, &cfg, rerun);
    check_slow_named(&t, &cfg, rerun);

    sml_prop_job one[32], many[32];
    int n = make_jobs(one, &cfg);
    if (n < 0 || make_jobs(many, &cfg) != n) {
        sml_tally_fail(&t, rerun, "a kernel or mutant of this test is missing");
        return sml_tally_finish(&t);
    }
    /* The plain loop every driver had before the suite: what the pool must reproduce. */
    counts c1 = {{0}}, cn = {{0}};
    double t0 = sml_prop_now();
    for (int j = 0; j < n; j++) {
        one[j].status = sml_prop_run(one[j].k, one[j].op, one[j].dtype, &one[j].cfg, &one[j].res);
        count_done(&one[j], &c1);
    }
    double t1 = sml_prop_now();
    sml_prop_suite sn = {
        .threads = cfg.threads, .label = TEST, .progress = stderr, .done = count_done, .ctx = &cn};
    sml_status stn = sml_prop_suite_run(&sn, many, n);
    double t2 = sml_prop_now();
    if (stn != SML_OK) {
        sml_tally_fail(&t, rerun, "the suite did not run: %s", sml_strerror(stn));
        return sml_tally_finish(&t);
    }
    int caught = 0;
    for (int j = 0; j < n; j++) {
        char why[512];
        const sml_prop_job *a = &one[j];
        if (c1.calls[a->cfg.max_cases % 64] != 1 || cn.calls[many[j].cfg.max_cases % 64] != 1)
            sml_tally_fail(&t, rerun, "%s %s %s reported %d and %d times, not once", a->k->name,
                           sml_op_name(a->op), sml_dtype_name(a->dtype),
                           c1.calls[a->cfg.max_cases % 64], cn.calls[many[j].cfg.max_cases % 64]);
        else if (!same_result(a, &many[j], why, sizeof why))
            sml_tally_fail(
                &t, rerun, "%s %s %s differs between a plain loop and the suite on %d threads: %s",
                a->k->name, sml_op_name(a->op), sml_dtype_name(a->dtype), cfg.threads, why);
        else
            sml_tally_pass(&t);
        int mutant = !strncmp(a->k->name, "mut_", 4);
        if (mutant && a->res.outcome == SML_PROP_FAIL) caught++;
        if (!mutant && a->res.outcome != SML_PROP_PASS)
            sml_tally_fail(&t, rerun, "%s %s %s did not pass: %s", a->k->name, sml_op_name(a->op),
                           sml_dtype_name(a->dtype), sml_prop_outcome_name(a->res.outcome));
    }
    /* The mutants must fail somewhere, or the failure fields above were never compared. */
    if (caught < 2)
        sml_tally_fail(&t, rerun, "only %d mutant jobs failed; the comparison saw no failures",
                       caught);
    else
        sml_tally_pass(&t);
    printf("%s: %d jobs, %d of them failing mutants: a plain loop took %.1f s, the suite on %d "
           "threads %.1f s\n",
           TEST, n, caught, t1 - t0, cfg.threads, t2 - t1);
    check_parts(&t, &cfg, rerun);
    fclose(cfg.log);
    return sml_tally_finish(&t);
}
