/* against.c: see against.h. Two suite passes (the candidates, then the bases on exactly the
 * cases each candidate ran), then per op and dtype the pairing, the rule and the reproducer. */
#include "prop/against.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prop/gen.h"
#include "prop/props.h"
#include "prop/repro.h"
#include "core/rng.h"

static float *nan_array(int64_t n) {
    float *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    for (int64_t i = 0; a && i < n; i++) a[i] = NAN;
    return a;
}

/* The limits both kernels take. */
static void shared_limits(const sml_kernel *a, const sml_kernel *b, sml_kernel *out) {
    out->min_cols = a->min_cols > b->min_cols ? a->min_cols : b->min_cols;
    int64_t hi = a->max_cols;
    if (hi == 0 || (b->max_cols > 0 && b->max_cols < hi)) hi = b->max_cols;
    out->max_cols = hi;
}

/* The agreement verdict of kernel k on case c (for the reproducer's message), run where the
 * suite ran it (cfg->runner: a worker). */
static double agreement_on(const sml_kernel *k, const sml_prop_case *c, const sml_prop_config *cfg,
                           char *msg, size_t n) {
    sml_prop_env env;
    double r = NAN;
    msg[0] = 0;
    sml_prop_launcher l = {0};
    if (cfg->runner.open && cfg->runner.open(cfg->runner.ctx, k, 0, &l) != SML_OK) return r;
    if (sml_prop_env_init(&env, k, cfg->runner.open ? &l : NULL) == SML_OK) {
        if (cfg->pool) env.pool = cfg->pool;
        sml_prop_eval e;
        sml_prop_verdict v;
        sml_prop_eval_begin(&e, &env, c);
        sml_prop_eval_check(&e, SML_PROP_AGREEMENT, &v);
        sml_prop_eval_end(&e);
        r = v.outcome == SML_PROP_SKIP ? NAN : v.ratio;
        snprintf(msg, n, "%s", v.msg);
    }
    sml_prop_env_free(&env);
    if (cfg->runner.open) cfg->runner.close(cfg->runner.ctx, &l);
    return r;
}

/* Save the largest-loss case as a reproducer of the candidate. */
static void save_loss(sml_prop_against *a, const sml_prop_config *cfg) {
    sml_prop_config at = a->cand.cfg;
    sml_prop_case c;
    if (sml_prop_gen_case(&a->cand_k, a->op, a->dtype,
                          sml_derive_seed(cfg->seed, (uint64_t)a->loss_case), a->loss_level,
                          &at.sizes, &c) != SML_OK)
        return;
    char mc[384], mb[384];
    double rc = agreement_on(&a->cand_k, &c, cfg, mc, sizeof mc);
    double rb = agreement_on(&a->base_k, &c, cfg, mb, sizeof mb);
    char msg[sizeof mc + 128]; /* the message around mc, whole */
    snprintf(msg, sizeof msg, "accuracy: %.3g of the bound on %s, %.3g on %s: %s", rc,
             a->cand_k.name, rb, a->base_k.name, mc);
    sml_prop_repro m;
    sml_prop_repro_describe(&m, a->cand_k.name, SML_PROP_AGREEMENT, SML_PROP_PASS, msg, cfg->seed,
                            a->loss_case, a->loss_level, &c, 0);
    snprintf(m.verdict, sizeof m.verdict, "less_accurate");
    m.strict = cfg->strict;
    char err[512];
    if (sml_prop_repro_save(cfg->save_dir, &c, &m, cfg->replay_cmd, a->repro, sizeof a->repro, err,
                            sizeof err) != SML_OK) {
        a->repro[0] = 0;
        fprintf(cfg->log ? cfg->log : stdout, "  (could not save the reproducer: %s)\n", err);
    }
    sml_prop_case_free(&c);
}

/* The size level case i was drawn at. */
static int level_of(const sml_prop_config *cfg, int64_t i) {
    return cfg->only_case >= 0 ? cfg->only_level : sml_prop_case_level(cfg, i);
}

static void judge(sml_prop_against *a, const sml_prop_config *cfg) {
    const sml_prop_result *rc = &a->cand.res, *rb = &a->base.res;
    a->loss_case = -1;
    if (a->cand.status != SML_OK || a->base.status != SML_OK || rc->outcome == SML_PROP_SKIP ||
        rb->outcome == SML_PROP_SKIP) {
        a->verdict = SML_ACC_NOT_COMPARABLE;
        snprintf(a->why, sizeof a->why, "not run here: %s",
                 rc->outcome == SML_PROP_SKIP ? rc->note : rb->note);
        return;
    }
    int64_t n = a->cand.cfg.case_cap;
    /* The cases both judged: the others count in neither summary. */
    for (int64_t i = 0; i < n; i++)
        if (isnan(a->cand_ratio[i]) || isnan(a->base_ratio[i]))
            a->cand_ratio[i] = a->base_ratio[i] = NAN;
    sml_accuracy_summarize(a->cand_ratio, NULL, n, &a->acc_cand);
    sml_accuracy_summarize(a->base_ratio, NULL, n, &a->acc_base);
    const sml_prop_result *src[2] = {rc, rb};
    sml_accuracy *dst[2] = {&a->acc_cand, &a->acc_base};
    for (int s = 0; s < 2; s++) {
        dst[s]->seed = src[s]->accuracy.seed;
        dst[s]->cases = src[s]->accuracy.cases;
        dst[s]->digest = src[s]->accuracy.digest;
        dst[s]->worst_ulps = src[s]->accuracy.worst_ulps;
        dst[s]->worst_level =
            dst[s]->worst_case >= 0 ? level_of(&a->cand.cfg, dst[s]->worst_case) : 0;
    }
    a->verdict = sml_accuracy_judge(&a->acc_base, &a->acc_cand, a->why, sizeof a->why);
    double best = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a->cand_ratio[i])) continue;
        double loss = sml_accuracy_ratio(a->base_ratio[i], a->cand_ratio[i]);
        if (a->loss_case < 0 || loss > best ||
            (loss == best && a->cand_ratio[i] - a->base_ratio[i] > a->loss_cand - a->loss_base)) {
            best = loss;
            a->loss_case = i;
            a->loss_cand = a->cand_ratio[i];
            a->loss_base = a->base_ratio[i];
        }
    }
    if (a->loss_case >= 0) a->loss_level = level_of(&a->cand.cfg, a->loss_case);
    if (a->verdict == SML_ACC_LESS && a->loss_case >= 0 && cfg->save_dir) save_loss(a, cfg);
}

sml_status sml_prop_against_run(const sml_kernel *cand, const sml_kernel *base, unsigned ops,
                                unsigned dtypes, const sml_prop_config *cfg,
                                const sml_prop_suite *how, sml_prop_against **out, int *n) {
    if (!cand || !base || !cfg || !out || !n) return SML_ERR_NULL_POINTER;
    *out = NULL;
    *n = 0;
    int max = SML_OP_COUNT * SML_DTYPE_COUNT, m = 0;
    sml_prop_against *a = calloc((size_t)max, sizeof *a);
    sml_prop_job *jobs = calloc((size_t)max, sizeof *jobs);
    if (!a || !jobs) {
        free(a);
        free(jobs);
        return SML_ERR_OUT_OF_MEMORY;
    }
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            unsigned both_ops = cand->ops & base->ops & ops,
                     both_dts = cand->dtypes & base->dtypes & dtypes;
            if (!(both_ops >> op & 1) || !(both_dts >> dt & 1)) continue;
            sml_prop_against *x = &a[m++];
            x->op = (sml_op)op;
            x->dtype = (sml_dtype)dt;
            x->cand_k = *cand;
            x->base_k = *base;
            shared_limits(cand, base, &x->cand_k);
            shared_limits(cand, base, &x->base_k);
            int64_t cap = cfg->only_case >= 0 ? cfg->only_case + 1 : cfg->max_cases;
            x->cand_ratio = nan_array(cap);
            x->base_ratio = nan_array(cap);
            x->cand_ran = calloc((size_t)(cap > 0 ? cap : 1), 1);
            if (!x->cand_ratio || !x->base_ratio || !x->cand_ran) {
                free(jobs);
                sml_prop_against_free(a, m);
                return SML_ERR_OUT_OF_MEMORY;
            }
            sml_prop_config c = *cfg;
            c.runner = (sml_prop_runner){0}; /* the suite's run gives each job its own */
            c.ramp_by_time = 0; /* the case sequence must not depend on either kernel's speed */
            c.case_ratio = x->cand_ratio;
            c.case_counted = x->cand_ran;
            c.case_cap = cap;
            x->cand = (sml_prop_job){.k = &x->cand_k, .op = x->op, .dtype = x->dtype, .cfg = c};
        }
    if (m == 0) {
        free(a);
        free(jobs);
        return SML_ERR_INVALID_ARG;
    }
    sml_prop_suite suite = *how;
    suite.total_seconds = cfg->total_seconds;
    suite.label = "check (candidate)";
    for (int i = 0; i < m; i++) jobs[i] = a[i].cand;
    sml_status s = sml_prop_suite_run(&suite, jobs, m);
    for (int i = 0; i < m && s == SML_OK; i++) {
        a[i].cand = jobs[i];
        /* The base: agreement only, on exactly the cases the candidate ran, however long it
         * takes. A cap stops the candidate's parts at different places, so its cases need not
         * be the first ones: the base runs the indices it counted. */
        sml_prop_config c = a[i].cand.cfg;
        c.props = 1u << SML_PROP_AGREEMENT;
        c.regressions_dir = NULL;
        c.level_cases = c.max_cases; /* the sizes ramp as they did for the candidate */
        c.case_counted = NULL;
        c.case_only = a[i].cand_ran;
        c.max_seconds = 0.0;
        c.total_seconds = 0.0;
        c.case_ratio = a[i].base_ratio;
        jobs[i] = (sml_prop_job){.k = &a[i].base_k, .op = a[i].op, .dtype = a[i].dtype, .cfg = c};
    }
    suite.total_seconds = 0.0;
    suite.label = "check (base)";
    if (s == SML_OK) s = sml_prop_suite_run(&suite, jobs, m);
    for (int i = 0; i < m && s == SML_OK; i++) {
        a[i].base = jobs[i];
        judge(&a[i], cfg);
    }
    free(jobs);
    if (s != SML_OK) {
        sml_prop_against_free(a, m);
        return s;
    }
    *out = a;
    *n = m;
    return SML_OK;
}

void sml_prop_against_free(sml_prop_against *a, int n) {
    for (int i = 0; a && i < n; i++) {
        free(a[i].cand_ratio);
        free(a[i].base_ratio);
        free(a[i].cand_ran);
    }
    free(a);
}
