/* engine.c: the run loop. For one kernel, op and dtype: replay the saved reproducers, then
 * draw case after case (seed derived per case, sizes ramping with the budget spent),
 * evaluate every property still standing, and on a property's first failure shrink the
 * case, save it, print the command that replays it, and retire that property. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "prop/gen.h"
#include "prop/parts.h"
#include "prop/prop.h"
#include "prop/props.h"
#include "prop/repro.h"
#include "prop/shrink.h"
#include "core/rng.h"
#include "softmax_lab_plugin.h"

int sml_prop_result_killer(const sml_prop_result *res) {
    int best = -1;
    for (int p = 0; p < SML_PROP_COUNT; p++)
        if (res->killed_at[p] > 0 && (best < 0 || res->killed_at[p] < res->killed_at[best]))
            best = p;
    return best;
}

static FILE *log_of(const sml_prop_config *cfg) { return cfg->log ? cfg->log : stdout; }

/* The progress line: rewritten in place on a terminal, one line every 10 s otherwise. */
typedef struct progress {
    double t0, last;
    int tty;
    int drawn;
} progress;

static void progress_update(progress *pg, const sml_prop_config *cfg, const sml_kernel *k,
                            sml_op op, sml_dtype dt, const sml_prop_result *res, int force) {
    double t0 = pg->t0;
    if (!cfg->progress) return;
    double now = sml_prop_now();
    if (!force && now - pg->last < (pg->tty ? 0.25 : 10.0)) return;
    pg->last = now;
    fprintf(cfg->progress, "%scheck %s %s %s: %lld cases, %lld failed, %.1f s%s",
            pg->tty ? "\r\033[K" : "", k->name, sml_op_name(op), sml_dtype_name(dt),
            (long long)res->cases, (long long)res->failed_cases, now - t0, pg->tty ? "" : "\n");
    fflush(cfg->progress);
    pg->drawn = pg->tty;
}

static void progress_clear(progress *pg, const sml_prop_config *cfg) {
    if (cfg->progress && pg->drawn) {
        fprintf(cfg->progress, "\r\033[K");
        fflush(cfg->progress);
        pg->drawn = 0;
    }
}

static int report_hooked(const sml_prop_config *cfg) {
    return cfg->hooks.report_begin && cfg->hooks.report_end;
}

FILE *sml_prop_report_begin(const sml_prop_config *cfg) {
    FILE *L = log_of(cfg);
    if (report_hooked(cfg))
        cfg->hooks.report_begin(cfg->hooks.ctx);
    else
        flockfile(L);
    return L;
}

void sml_prop_report_end(const sml_prop_config *cfg, FILE *L) {
    if (report_hooked(cfg))
        cfg->hooks.report_end(cfg->hooks.ctx);
    else
        funlockfile(L);
}

int sml_prop_context_lost(sml_prop_outcome outcome, const char *msg) {
    return outcome == SML_PROP_ERROR && msg && strstr(msg, "CUDA") != NULL;
}

/* The case rerun in a fresh worker (the runner's `fresh` launcher; in this process, a fresh
 * handle and buffers): 1 when property p fails on it again the same way, 0 when it passes,
 * -1 when no rerun could be made. The rerun's verdict in words into msg. */
static int rerun_fresh(const sml_prop_env *env, const sml_prop_config *cfg, sml_prop_id p,
                       const sml_prop_case *c, const sml_prop_verdict *first, char *msg, size_t n) {
    sml_prop_launcher l = {0};
    int remote = cfg->runner.open != NULL;
    if (remote && cfg->runner.open(cfg->runner.ctx, env->k, 1, &l) != SML_OK) return -1;
    sml_prop_env fresh;
    int r = -1;
    if (sml_prop_env_init(&fresh, env->k, remote ? &l : NULL) == SML_OK) {
        fresh.pool = env->pool; /* its evaluation nests in the one of the case that failed */
        fresh.stream_check = 1;
        fresh.strict = env->strict; /* judged as the run was: under --strict, no declaration */
        fresh.ex.phase = SML_PROP_PHASE_RERUN;
        fresh.ex.index = env->ex.index;
        fresh.ex.prop = (int)p;
        sml_prop_eval e;
        sml_prop_verdict v;
        sml_prop_eval_begin(&e, &fresh, c);
        sml_prop_eval_check(&e, p, &v);
        int judged = e.engine_status == SML_OK &&
                     (v.outcome != SML_PROP_SKIP || v.ended == SML_PROP_ENDED_NONE);
        sml_prop_eval_end(&e);
        if (judged) {
            r = v.outcome == first->outcome && !v.ended == !first->ended;
            snprintf(msg, n, "%s: %.200s", sml_prop_outcome_name(v.outcome), v.msg);
        }
    }
    sml_prop_env_free(&fresh);
    if (remote) cfg->runner.close(cfg->runner.ctx, &l);
    return r;
}

/* Is the failure reproduced in a fresh worker? The shrunk case first (what the reproducer
 * holds), then the case as drawn; the answer into f, counted in the result's events. A hang
 * was confirmed alone already (the worker layer ran it again, under ten times its deadline). */
static void confirm(const sml_prop_env *env, const sml_prop_config *cfg, sml_prop_result *res,
                    sml_prop_failure *f, const sml_prop_case *drawn, const sml_prop_case *small,
                    const sml_prop_verdict *v) {
    f->confirmed = -1;
    if (v->ended == SML_PROP_ENDED_HUNG || v->ended == SML_PROP_ENDED_FORGED) {
        f->confirmed = 1;
        snprintf(f->rerun, sizeof f->rerun, "%s",
                 v->ended == SML_PROP_ENDED_HUNG ? "confirmed alone" : "a forged answer stands");
        res->events.n[SML_EV_RERUN_FAIL]++;
        return;
    }
    int r = rerun_fresh(env, cfg, f->prop, small, v, f->rerun, sizeof f->rerun);
    if (r == 0 && small != drawn)
        r = rerun_fresh(env, cfg, f->prop, drawn, v, f->rerun, sizeof f->rerun);
    f->confirmed = r;
    if (r == 1) res->events.n[SML_EV_RERUN_FAIL]++;
    if (r == 0) res->events.n[SML_EV_RERUN_PASS]++;
}

/* The report of a failure (FAIL, ERROR or FLAKY), its reproducer and the commands. */
static void report_failure(const sml_prop_env *env, const sml_prop_config *cfg,
                           const sml_prop_failure *f, const sml_prop_case *c,
                           const sml_prop_case *small, const sml_prop_verdict *v,
                           const sml_prop_shrink_stats *st, int shrunk, int64_t index, int level) {
    const sml_kernel *k = env->k;
    char a[96], b[96];
    /* A plugin kernel's commands load its library first (a reproducer records it too). */
    char load[4400];
    sml_prop_load_arg(sml_kernel_library(k), load, sizeof load);
    /* The flags beside the seed that decide the case an index draws and its verdict. */
    char how[80];
    sml_prop_case_flags(cfg, how, sizeof how);
    /* Runs on other threads report too: one report's lines stay together. */
    FILE *L = sml_prop_report_begin(cfg);
    sml_prop_case_shape_str(c, a, sizeof a);
    sml_prop_case_shape_str(small, b, sizeof b);
    const char *head = f->confirmed == 0              ? "FLAKY"
                       : v->outcome == SML_PROP_ERROR ? "ERROR"
                                                      : "FAIL";
    if (v->ended) /* the worker's end is the headline: no property was judged */
        fprintf(L, "%s %s %s %s: %s (case %lld: %s, %s, seed 0x%016llx)\n", head, k->name,
                sml_op_name(c->op), sml_dtype_name(c->dtype), v->msg, (long long)index, a,
                c->family, (unsigned long long)c->seed);
    else
        fprintf(L, "%s %s %s %s: property %s %s at case %lld (%s, %s, seed 0x%016llx)\n", head,
                k->name, sml_op_name(c->op), sml_dtype_name(c->dtype), sml_prop_name(f->prop),
                v->outcome == SML_PROP_ERROR ? "errored" : "failed", (long long)index, a, c->family,
                (unsigned long long)c->seed);
    if (shrunk && v->ended) {
        fprintf(L, "  shrunk in %lld steps (%lld tries%s) to %s, ending the same way\n",
                (long long)st->steps, (long long)st->evals,
                st->exhausted ? ", stopped by its limits" : "", b);
    } else if (shrunk) {
        fprintf(L, "  first: %s\n", v->msg);
        fprintf(L, "  shrunk in %lld steps (%lld tries%s) to %s: %s\n", (long long)st->steps,
                (long long)st->evals, st->exhausted ? ", stopped by its limits" : "", b,
                f->message);
    } else if (!v->ended) {
        fprintf(L, "  %s\n", v->msg);
    }
    if (f->confirmed == 1) fprintf(L, "  rerun in a fresh worker: fails again (%s)\n", f->rerun);
    if (f->confirmed == 0)
        fprintf(L,
                "  rerun in a fresh worker: %s\n  FLAKY: the failure did not reproduce; the "
                "kernel is nondeterministic or depends on what ran before it in its process "
                "(rerun the whole job with the seed below)\n",
                f->rerun);
    if (f->repro[0]) {
        fprintf(L, "  reproducer: %s\n", f->repro);
        fprintf(L, "  replay: %s%s %s\n",
                sml_prop_replay_prefix(sml_kernel_library(k), cfg->replay_cmd), load, f->repro);
    }
    /* A Python kernel reruns through the binding (which imports its module first), as it
     * replays: "softmax-lab check" becomes "python3 -m softmax_lab check". */
    const char *rerun = cfg->rerun_cmd, *rerun_tool = "";
    if (rerun && !strncmp(rerun, "softmax-lab ", 12) &&
        sml_source_is_python(sml_kernel_library(k))) {
        rerun_tool = "python3 -m softmax_lab ";
        rerun += 12;
    }
    if (rerun) {
        fprintf(L,
                "  rerun: %s%s%s%s --kernel %s --op %s --dtype %s --seed 0x%016llx --case %lld "
                "--level %d --props %s\n",
                rerun_tool, rerun, load, how, k->name, sml_op_name(c->op), sml_dtype_name(c->dtype),
                (unsigned long long)cfg->seed, (long long)index, level, sml_prop_name(f->prop));
        if (f->confirmed == 0)
            fprintf(L,
                    "  rerun the job: %s%s%s%s --kernel %s --op %s --dtype %s --seed 0x%016llx "
                    "--cases %lld\n",
                    rerun_tool, rerun, load, how, k->name, sml_op_name(c->op),
                    sml_dtype_name(c->dtype), (unsigned long long)cfg->seed,
                    (long long)cfg->max_cases);
    }
    const char *lib = sml_kernel_library(k);
    if (lib && !strcmp(lib, SML_PYTHON_SOURCE_PREFIX "__main__"))
        fprintf(
            L,
            "  (a kernel defined in __main__ cannot be imported again: define it in a module that "
            "registers it on import, e.g. mykernels.py, and pass --load python:mykernels)\n");
    fflush(L);
    sml_prop_report_end(cfg, L);
}

/* The seconds a shrink may take: its own limit, and never past the run's cap. */
static double shrink_seconds(const sml_prop_config *cfg) {
    double s = cfg->shrink_max_seconds;
    if (cfg->deadline > 0.0) {
        double left = cfg->deadline - sml_prop_now();
        if (left < s) s = left > 0.0 ? left : 0.0;
    }
    return s;
}

/* The first failure of property p at case `index`: recorded at once (a failure is final),
 * then shrunk, rerun in a fresh worker (FAIL when it fails again, FLAKY when it does not),
 * saved and reported. */
static void handle_failure(sml_prop_env *env, const sml_prop_config *cfg, sml_prop_result *res,
                           sml_prop_id p, const sml_prop_case *c, const sml_prop_verdict *v,
                           int64_t index, int level) {
    sml_prop_failure *f = &res->failures[res->nfail++];
    memset(f, 0, sizeof *f);
    f->prop = p;
    f->outcome = v->outcome;
    f->case_index = index;
    f->level = level;
    f->case_seed = c->seed;
    f->rows = c->rows;
    f->cols = c->cols;
    f->ld = c->ld;
    f->offset = c->offset;
    f->inplace = c->inplace;
    f->ended = v->ended;
    snprintf(f->family, sizeof f->family, "%s", c->family);

    sml_prop_case small = *c;
    sml_prop_verdict sv = *v;
    sml_prop_shrink_stats st = {0, 0, 0};
    int shrunk = 0;
    /* A CUDA error in this process may have taken the context with it: nothing after it can
     * be trusted there (a worker's context is replaced by the worker layer). A hang is not
     * shrunk: every smaller case would cost a deadline. */
    int cuda_lost = !cfg->runner.open && sml_prop_context_lost(v->outcome, v->msg);
    if (cfg->shrink && !cuda_lost && v->ended != SML_PROP_ENDED_HUNG) {
        if (cfg->hooks.case_begin)
            cfg->hooks.case_begin(cfg->hooks.ctx, SML_PROP_PHASE_SHRINK, index, level, (int)p,
                                  (double)sml_prop_case_elems(c));
        int checked = env->stream_check;
        env->stream_check = 1; /* every smaller case is held to the same checks */
        env->ex.phase = SML_PROP_PHASE_SHRINK;
        sml_prop_host_time *clock = env->clock; /* a shrink counts as a whole */
        env->clock = NULL;
        double ts = sml_prop_now();
        if (sml_prop_shrink(env, p, v->outcome, c, v, cfg->shrink_max_evals, shrink_seconds(cfg),
                            &small, &sv, &st) == SML_OK)
            shrunk = 1;
        env->clock = clock;
        if (clock) clock->shrink += sml_prop_now() - ts;
        env->stream_check = checked;
        if (st.exhausted) res->events.n[SML_EV_SHRINK_CUT]++;
    }
    sml_prop_failure_shrunk(f, &small, &st);
    snprintf(f->message, sizeof f->message, "%s", sv.msg);
    confirm(env, cfg, res, f, c, &small, &sv);

    const sml_kernel *k = env->k;
    if (cfg->save_dir) {
        sml_prop_repro m;
        sml_prop_repro_describe(&m, k->name, p, sv.outcome, sv.msg, cfg->seed, index, level, c,
                                st.steps);
        if (sml_kernel_library(k)) snprintf(m.load, sizeof m.load, "%s", sml_kernel_library(k));
        m.strict = cfg->strict;
        char err[512] = "";
        if (sml_prop_repro_save(cfg->save_dir, &small, &m, cfg->replay_cmd, f->repro,
                                sizeof f->repro, err, sizeof err) != SML_OK) {
            f->repro[0] = 0;
            FILE *L = sml_prop_report_begin(cfg);
            fprintf(L, "  (could not save the reproducer: %s)\n", err);
            sml_prop_report_end(cfg, L);
        }
    }
    report_failure(env, cfg, f, c, &small, v, &st, shrunk, index, level);
    if (shrunk) sml_prop_case_free(&small);
}

/* Replay every saved reproducer for this op and dtype on kernel k: each is a hard input
 * that once broke some kernel, and must pass here. -1 (res->note says why) when the engine
 * could not allocate what one needs, -2 when the run's cap stopped it, -3 when no worker could
 * run the kernel: no verdict, the run ends. */
static int replay_corpus(sml_prop_env *env, const sml_prop_config *cfg, sml_op op, sml_dtype dt,
                         sml_prop_result *res) {
    char **paths;
    size_t n = sml_prop_repro_list(cfg->regressions_dir, &paths);
    const sml_kernel *k = env->k;
    for (size_t i = 0; i < n; i++) {
        sml_prop_case c;
        sml_prop_repro m;
        char err[512];
        if (sml_prop_repro_load(paths[i], &c, &m, err, sizeof err) != SML_OK) {
            fprintf(log_of(cfg), "warning: skipping %s: %s\n", paths[i], err);
            continue;
        }
        int fits = c.op == op && c.dtype == dt && c.cols >= k->min_cols &&
                   (k->max_cols == 0 || c.cols <= k->max_cols) && (cfg->props & (1u << m.prop));
        if (fits) {
            sml_prop_eval e;
            sml_prop_verdict v;
            if (cfg->hooks.case_begin)
                cfg->hooks.case_begin(cfg->hooks.ctx, SML_PROP_PHASE_REGRESSION, (int64_t)i, 0,
                                      (int)m.prop, (double)sml_prop_case_elems(&c));
            env->ex.phase = SML_PROP_PHASE_REGRESSION;
            env->ex.index = (int64_t)i;
            env->ex.prop = (int)m.prop;
            int strict = env->strict; /* a --strict run's reproducer is judged strictly */
            env->strict = strict || m.strict;
            sml_prop_eval_begin(&e, env, &c);
            sml_prop_eval_check(&e, m.prop, &v);
            int oom = e.engine_status == SML_ERR_OUT_OF_MEMORY;
            sml_prop_eval_end(&e);
            env->strict = strict;
            if (v.ended == SML_PROP_ENDED_CAPPED || v.ended == SML_PROP_ENDED_NOT_RUN) {
                /* No verdict on the kernel: the run ends, saying why (sml_prop_run). */
                snprintf(res->note, sizeof res->note, "%.190s", v.msg);
                sml_prop_case_free(&c);
                sml_prop_repro_list_free(paths, n);
                return v.ended == SML_PROP_ENDED_CAPPED ? -2 : -3;
            }
            if (oom) {
                snprintf(res->note, sizeof res->note,
                         "engine: out of memory for the reproducer %.120s; not judged", paths[i]);
                sml_prop_case_free(&c);
                sml_prop_repro_list_free(paths, n);
                return -1;
            }
            res->regressions++;
            res->events.n[SML_EV_REGRESSION]++;
            if (v.outcome == SML_PROP_FAIL || v.outcome == SML_PROP_ERROR) {
                res->regressions_failed++;
                res->events.n[SML_EV_FAIL]++; /* a saved failure again: it stands */
                if (res->nfail < SML_PROP_COUNT) {
                    sml_prop_failure *f = &res->failures[res->nfail++];
                    memset(f, 0, sizeof *f);
                    f->prop = m.prop;
                    f->outcome = v.outcome;
                    f->case_index = -1;
                    f->confirmed = -1; /* a saved failure again: not rerun (it stands) */
                    f->rows = f->s_rows = c.rows;
                    f->cols = f->s_cols = c.cols;
                    f->ld = f->s_ld = c.ld;
                    f->offset = f->s_offset = c.offset;
                    snprintf(f->message, sizeof f->message, "%s", v.msg);
                    snprintf(f->repro, sizeof f->repro, "%s", paths[i]);
                }
                FILE *L = sml_prop_report_begin(cfg);
                fprintf(L,
                        "FAIL %s %s %s: saved reproducer %s (recorded on %s%s) fails %s again: "
                        "%s\n",
                        k->name, sml_op_name(op), sml_dtype_name(dt), paths[i], m.kernel,
                        m.strict && !strict ? " by a --strict run, judged so" : "",
                        sml_prop_name(m.prop), v.msg);
                char load[4400];
                sml_prop_load_arg(sml_kernel_library(k), load, sizeof load);
                fprintf(L, "  replay: %s%s %s --kernel %s\n",
                        sml_prop_replay_prefix(sml_kernel_library(k), cfg->replay_cmd), load,
                        paths[i], k->name);
                fflush(L);
                sml_prop_report_end(cfg, L);
            }
        }
        sml_prop_case_free(&c);
    }
    sml_prop_repro_list_free(paths, n);
    return 0;
}

int sml_prop_case_level(const sml_prop_config *cfg, int64_t i) {
    int64_t over = cfg->level_cases > 0 ? cfg->level_cases : cfg->max_cases;
    double f = over > 0 ? (double)i / (double)over : 0.0;
    int level = (int)(100.0 * f);
    return level > 100 ? 100 : level;
}

/* Room for one more case in the run's per-case log (parts.h). */
static int acc_grow(sml_prop_case_log *a, int64_t need) {
    if (need <= a->cap) return 1;
    int64_t cap = a->cap ? 2 * a->cap : 256;
    float *r = realloc(a->ratio, (size_t)cap * sizeof *r);
    if (r) a->ratio = r;
    float *u = realloc(a->ulps, (size_t)cap * sizeof *u);
    if (u) a->ulps = u;
    unsigned char *l = realloc(a->level, (size_t)cap);
    if (l) a->level = l;
    int64_t *x = realloc(a->index, (size_t)cap * sizeof *x);
    if (x) a->index = x;
    if (!r || !u || !l || !x) return 0;
    a->cap = cap;
    return 1;
}

/* The run's accuracy summary; its log goes to the join when a suite split the job. */
static void acc_finish(sml_prop_case_log *a, const sml_prop_config *cfg, sml_prop_result *res) {
    a->n = res->cases;
    sml_prop_case_log_summarize(a, cfg, res);
    if (cfg->log_out) {
        *cfg->log_out = *a;
        memset(a, 0, sizeof *a);
    } else {
        sml_prop_case_log_free(a);
    }
}

/* A GPU kernel's failure on a suite case, whose main run was not held (props.h): was it
 * because the kernel ran outside the stream it was given (the read-back then races its
 * writes, and the symptom is any property's)? The case's canaries, with the stream check: 1
 * with that verdict in *v when so. */
static int ran_off_stream(sml_prop_env *env, const sml_prop_config *cfg, const sml_prop_case *c,
                          unsigned retired, sml_prop_verdict *v) {
    if (env->k->device != SML_DEVICE_GPU || env->stream_check ||
        !(cfg->props & (1u << SML_PROP_CANARIES)) || (retired & (1u << SML_PROP_CANARIES)))
        return 0;
    env->stream_check = 1;
    sml_prop_eval e;
    sml_prop_verdict cv;
    sml_prop_eval_begin(&e, env, c);
    sml_prop_eval_check(&e, SML_PROP_CANARIES, &cv);
    int off = e.main_state > 0 && e.main.off_stream && cv.outcome == SML_PROP_FAIL;
    sml_prop_eval_end(&e);
    env->stream_check = 0;
    if (off) *v = cv;
    return off;
}

/* Check every property still standing on case c (index i, size level `level`): count the
 * results, note its agreement figures, handle each property's first failure. 1 if some
 * property failed or errored on it; -1 when the engine could not allocate what the case
 * needs, -2 when the run's cap stopped it, -3 when no worker could run the kernel (res->note
 * says so; nothing about the kernel is concluded from it). */
static int check_case(sml_prop_env *env, const sml_prop_config *cfg, sml_prop_result *res,
                      sml_prop_case_log *acc, progress *pg, const sml_prop_case *c,
                      const sml_prop_derived *shared, int64_t i, int level, unsigned *retired,
                      int *stop) {
    sml_op op = c->op;
    sml_prop_eval e;
    sml_prop_eval_begin(&e, env, c);
    if (shared) sml_prop_eval_use(&e, shared);
    int case_failed = 0, started = 0;
    for (int p = 0; p < SML_PROP_COUNT && !*stop; p++) {
        if (!(cfg->props & (1u << p)) || (*retired & (1u << p)) ||
            !sml_prop_applies((sml_prop_id)p, op))
            continue;
        if (sml_prop_part_failed_before(cfg->share, p, i)) {
            *retired |= 1u << p; /* failed at an earlier case, in another part of the job */
            continue;
        }
        sml_prop_verdict v;
        if (cfg->hooks.case_begin)
            cfg->hooks.case_begin(cfg->hooks.ctx, SML_PROP_PHASE_CASE, i, level, p,
                                  (double)(c->rows * c->cols));
        env->ex.phase = SML_PROP_PHASE_CASE;
        env->ex.index = i;
        env->ex.prop = p;
        /* With a worker, the case's main run goes out before the first property's check and
         * the reference is computed while it runs (named for that property). */
        if (!started++) sml_prop_eval_start(&e);
        sml_prop_eval_check(&e, (sml_prop_id)p, &v);
        if (v.ended == SML_PROP_ENDED_CAPPED || v.ended == SML_PROP_ENDED_NOT_RUN) {
            /* No verdict: the case is not judged, the run ends saying why (sml_prop_run). */
            snprintf(res->note, sizeof res->note, "case %lld not judged: %.150s", (long long)i,
                     v.msg);
            case_failed = v.ended == SML_PROP_ENDED_CAPPED ? -2 : -3;
            *stop = 1;
            break;
        }
        if (e.engine_status == SML_ERR_OUT_OF_MEMORY) {
            /* No verdict on the kernel: the run ends with the reason (sml_prop_run). */
            char shape[96];
            sml_prop_case_shape_str(c, shape, sizeof shape);
            int said = e.main_state < 0 && e.main.status == SML_OK && e.main.where[0];
            snprintf(res->note, sizeof res->note,
                     "engine: out of memory for case %lld (%.40s)%s%.76s; not judged", (long long)i,
                     shape, said ? ": " : "", said ? e.main.where : "");
            case_failed = -1;
            *stop = 1;
            break;
        }
        if (v.outcome == SML_PROP_SKIP) {
            res->skips[p]++;
            continue;
        }
        res->checks[p]++;
        if (p == SML_PROP_AGREEMENT) {
            acc->ratio[res->cases - 1] = (float)v.ratio;
            acc->ulps[res->cases - 1] = (float)v.ulps;
        }
        if (p == SML_PROP_AGREEMENT && !(v.ratio <= res->worst_ratio)) {
            res->worst_ratio = v.ratio;
            res->worst_ulps = v.ulps;
        }
        if (v.deviation) {
            res->deviations[p]++;
            res->excused_ulps = fmax(res->excused_ulps, v.excused_ulps);
            res->excused_ratio = fmax(res->excused_ratio, v.excused_ratio);
        }
        if (v.outcome == SML_PROP_PASS) continue;
        res->fails[p]++;
        res->events.n[SML_EV_FAIL]++;
        case_failed = 1;
        res->killed_at[p] = res->cases;
        res->killed_case[p] = i;
        *retired |= 1u << p;
        sml_prop_part_failed(cfg->share, p, i);
        progress_clear(pg, cfg);
        sml_prop_id fp = (sml_prop_id)p;
        if (!v.ended && ran_off_stream(env, cfg, c, *retired, &v)) {
            fp = SML_PROP_CANARIES; /* the cause, not the symptom, is the failure reported */
            *retired |= 1u << fp;
        }
        if (res->nfail < SML_PROP_COUNT) handle_failure(env, cfg, res, fp, c, &v, i, level);
        /* A CUDA error: the context it came from may be lost (a worker's is replaced for the
         * shrink and the rerun); the job's verdict is that error, and it stops there. */
        if (sml_prop_context_lost(v.outcome, v.msg)) {
            snprintf(res->note, sizeof res->note, "a CUDA error stopped the run");
            *stop = 1;
        }
        /* The worker's death, a hang or a forged answer is the job's verdict: nothing after it
         * in that job is run. */
        if (v.ended) *stop = 1;
        if (*stop) sml_prop_part_stop(cfg->share); /* ... in every part of it */
        if (cfg->stop_on_failure) *stop = 1;
    }
    if (sml_prop_eval_refused(&e)) res->refused++;
    sml_prop_eval_end(&e);
    return case_failed;
}

void sml_prop_result_decide(sml_prop_result *res) {
    res->verdict = sml_verdict_decide(&res->events);
    switch (res->verdict) {
    case SML_JOB_FAIL:
    case SML_JOB_FLAKY: res->outcome = SML_PROP_FAIL; break;
    case SML_JOB_ERROR: res->outcome = SML_PROP_ERROR; break;
    case SML_JOB_SKIP: res->outcome = SML_PROP_SKIP; break;
    default: res->outcome = SML_PROP_PASS; break;
    }
    /* A kernel error (ERROR, not FAIL) is what the properties saw, when nothing failed. */
    int any_fail = 0, any_error = 0;
    for (int i = 0; i < res->nfail; i++) {
        if (res->failures[i].outcome == SML_PROP_ERROR)
            any_error = 1;
        else
            any_fail = 1;
    }
    if (res->outcome == SML_PROP_FAIL && any_error && !any_fail) res->outcome = SML_PROP_ERROR;
}

/* Why a kernel/op/dtype job is not run here at all (res->note), or NULL. */
static int cannot_run(const sml_kernel *k, sml_op op, sml_dtype dt, sml_prop_result *res) {
    if (!(k->ops & (1u << op)) || !(k->dtypes & (1u << dt)))
        snprintf(res->note, sizeof res->note, "%s does not support %s %s", k->name, sml_op_name(op),
                 sml_dtype_name(dt));
    else if (!k->launch)
        snprintf(res->note, sizeof res->note, "%s is not built in this build (no CUDA or cuDNN)",
                 k->name);
    else if (k->device == SML_DEVICE_GPU && !sml_gpu_available())
        snprintf(res->note, sizeof res->note, "no CUDA device: GPU kernel %s not run", k->name);
    else
        return 0;
    res->events.n[SML_EV_SKIP]++;
    return 1;
}

/* Is the run out of time before case i? Only a cap stops it (the profile is its case count). */
static int capped(const sml_prop_config *cfg, double t0) {
    double now = sml_prop_now();
    return (cfg->deadline > 0.0 && now >= cfg->deadline) ||
           (cfg->max_seconds > 0.0 && now - t0 >= cfg->max_seconds);
}

/* The size level of case i: by case count; a driver's ramp_by_time (never a profile's) may
 * raise it with the time spent of its per-job cap. */
static int level_of(const sml_prop_config *cfg, int64_t i, double t0) {
    if (cfg->only_case >= 0) return cfg->only_level;
    int level = sml_prop_case_level(cfg, i);
    double spent = sml_prop_now() - t0;
    if (cfg->ramp_by_time && !cfg->shard.count && cfg->max_seconds > 0.0 &&
        spent / cfg->max_seconds > level / 100.0)
        level = (int)(100.0 * spent / cfg->max_seconds);
    return level > 100 ? 100 : level;
}

/* Case i drawn from the suite's shared cases (case_cache.h) where it is big enough to be
 * there: READY, *c a view of the entry's case (its arrays are the entry's) and *en held; MINE,
 * the same once this job has drawn it and computed its arrays. NONE (*en NULL): not shared, or
 * this job could not draw or reference it there; the caller draws its own, as without sharing
 * (where memory is short, its evaluation says so). */
static sml_prop_share_role shared_case(sml_prop_env *env, const sml_prop_config *cfg,
                                       sml_prop_result *res, uint64_t seed, int level,
                                       sml_prop_case *c, sml_prop_case_entry **en) {
    *en = NULL;
    if (!cfg->cases) return SML_PROP_SHARE_NONE;
    sml_prop_gen_shape(env->k, res->op, res->dtype, seed, level, &cfg->sizes, c);
    if (sml_prop_case_elems(c) < SML_PROP_SHARE_MIN_ELEMS) return SML_PROP_SHARE_NONE;
    sml_prop_case_key key =
        sml_prop_case_key_of(env->k, res->op, res->dtype, &cfg->sizes, seed, level);
    sml_prop_share_role role =
        sml_prop_case_cache_acquire(cfg->cases, &key, sml_prop_case_share_bytes(c), en);
    if (role == SML_PROP_SHARE_MINE) {
        sml_prop_case *own = sml_prop_case_entry_case(*en);
        sml_prop_pool *pool = sml_prop_case_entry_pool(*en);
        double tg = sml_prop_now();
        sml_status s =
            sml_prop_gen_case_in(pool, env->k, res->op, res->dtype, seed, level, &cfg->sizes, own);
        res->host.gen += sml_prop_now() - tg;
        if (s == SML_OK) /* its reference's time counts as this job's (env->clock) */
            s = sml_prop_derive(env, pool, own, sml_prop_case_entry_derived(*en));
        sml_prop_case_cache_publish(cfg->cases, *en, s == SML_OK);
        if (s != SML_OK) {
            *en = NULL;
            return SML_PROP_SHARE_NONE;
        }
    }
    if (*en) {
        *c = *sml_prop_case_entry_case(*en);
        c->pooled = 1; /* the entry's arrays: sml_prop_case_free lets them be */
    }
    return role;
}

/* Done with case c: its arrays freed, or the shared entry it views let go. */
static void drop_case(const sml_prop_config *cfg, sml_prop_case *c, sml_prop_case_entry *en) {
    sml_prop_case_free(c);
    if (en) sml_prop_case_cache_release(cfg->cases, en);
}

/* One random case, drawn, judged and counted: 0 go on, 1 stop (res->note says why when the
 * case was not judged). */
static int one_case(sml_prop_env *env, const sml_prop_config *cfg, sml_prop_result *res,
                    sml_prop_case_log *acc, progress *pg, int64_t i, int level, unsigned *retired,
                    int *oom) {
    sml_prop_case c;
    sml_prop_case_entry *en;
    uint64_t seed = sml_derive_seed(cfg->seed, (uint64_t)i);
    double tg = sml_prop_now();
    sml_status s = SML_OK;
    sml_prop_share_role role = shared_case(env, cfg, res, seed, level, &c, &en);
    const sml_prop_derived *shared = en ? sml_prop_case_entry_derived(en) : NULL;
    if (!en) {
        double t0 = sml_prop_now();
        s = sml_prop_gen_case_in(env->pool, env->k, res->op, res->dtype, seed, level, &cfg->sizes,
                                 &c);
        res->host.gen += sml_prop_now() - t0;
    }
    if (s != SML_OK) {
        res->events.n[SML_EV_NOT_JUDGED]++;
        snprintf(res->note, sizeof res->note, "engine: cannot draw case %lld: %s%s", (long long)i,
                 sml_strerror(s), s == SML_ERR_OUT_OF_MEMORY ? "; not judged" : "");
        *oom = s == SML_ERR_OUT_OF_MEMORY;
        return 1;
    }
    if (!acc_grow(acc, res->cases + 1)) {
        drop_case(cfg, &c, en);
        res->events.n[SML_EV_NOT_JUDGED]++;
        snprintf(res->note, sizeof res->note,
                 "engine: out of memory for the run's records at case %lld; not judged",
                 (long long)i);
        *oom = 1;
        return 1;
    }
    acc->ratio[res->cases] = acc->ulps[res->cases] = NAN;
    acc->level[res->cases] = (unsigned char)level;
    acc->index[res->cases] = i;
    uint64_t digest = res->accuracy.digest;
    res->accuracy.digest = sml_accuracy_digest_case(digest, &c);
    res->cases++;
    int stop = 0;
    sml_prop_host_time before = res->host;
    double tc = sml_prop_now();
    int case_failed = check_case(env, cfg, res, acc, pg, &c, shared, i, level, retired, &stop);
    /* The properties' own work: the case's time less what the stages below it counted. */
    const sml_prop_host_time *h = &res->host;
    res->host.check += sml_prop_now() - tc - (h->ref - before.ref) - (h->run - before.run) -
                       (h->copy - before.copy) - (h->shrink - before.shrink);
    if (case_failed < 0) { /* not judged: counted as no case */
        res->cases--;
        res->accuracy.digest = digest;
        if (case_failed == -1 || case_failed == -3) res->events.n[SML_EV_NOT_JUDGED]++;
        if (case_failed == -2) res->events.n[SML_EV_CAP]++;
        *oom = case_failed == -1;
        drop_case(cfg, &c, en);
        return 1;
    }
    res->last_level = level;
    res->elements += (double)(c.rows * c.cols);
    double took = sml_prop_now() - tg;
    if (took > res->slowest_seconds) {
        res->slowest_seconds = took;
        res->slowest_case = i;
        res->slowest_elements = (double)(c.rows * c.cols);
    }
    res->tall += c.tall;
    res->shared += role == SML_PROP_SHARE_READY;
    drop_case(cfg, &c, en);
    if (case_failed) res->failed_cases++;
    if (cfg->hooks.case_done) cfg->hooks.case_done(cfg->hooks.ctx, case_failed);
    unsigned live = 0;
    for (int p = 0; p < SML_PROP_COUNT; p++)
        if ((cfg->props & (1u << p)) && sml_prop_applies((sml_prop_id)p, res->op)) live |= 1u << p;
    if (live && (*retired & live) == live) stop = 1; /* every property has failed already */
    progress_update(pg, cfg, env->k, res->op, res->dtype, res, 0);
    return stop;
}

/* The job's cases after its reproducers: until the profile's count, a failure that ends the
 * job, or a cap. 1 when the engine ran out of memory. */
static int run_cases(sml_prop_env *env, const sml_prop_config *cfg, sml_prop_result *res,
                     sml_prop_case_log *acc, progress *pg, double t0) {
    unsigned retired = 0;
    int oom = 0;
    int64_t first = cfg->only_case >= 0   ? cfg->only_case
                    : cfg->first_case > 0 ? cfg->first_case
                                          : 0;
    int64_t end = cfg->only_case >= 0 ? cfg->only_case : cfg->max_cases - 1;
    /* i <= end, not i < end + 1: --case 9223372036854775807 must not overflow. */
    for (int64_t i = first; i >= 0 && i <= end; i = i < INT64_MAX ? i + 1 : -1) {
        if (cfg->only_case < 0 && !sml_prop_part_has(cfg, i)) continue;
        if (sml_prop_part_stopped(cfg->share)) break; /* another part ended the job */
        if (capped(cfg, t0)) {
            res->events.n[SML_EV_CAP]++;
            break;
        }
        if (one_case(env, cfg, res, acc, pg, i, level_of(cfg, i, t0), &retired, &oom)) break;
        if (i == INT64_MAX) break;
    }
    return oom;
}

/* The job's worker (cfg->runner) or this process, as an env. */
static sml_status env_open(sml_prop_env *env, const sml_kernel *k, const sml_prop_config *cfg,
                           sml_prop_launcher *l) {
    memset(l, 0, sizeof *l);
    if (cfg->runner.open) {
        sml_status s = cfg->runner.open(cfg->runner.ctx, k, 0, l);
        if (s != SML_OK) return s;
    }
    return sml_prop_env_init(env, k, cfg->runner.open ? l : NULL);
}

sml_status sml_prop_run(const sml_kernel *k, sml_op op, sml_dtype dt, const sml_prop_config *cfg,
                        sml_prop_result *res) {
    if (!k || !cfg || !res) return SML_ERR_NULL_POINTER;
    if ((unsigned)op >= SML_OP_COUNT) return SML_ERR_BAD_OP;
    if ((unsigned)dt >= SML_DTYPE_COUNT) return SML_ERR_BAD_DTYPE;
    memset(res, 0, sizeof *res);
    res->accuracy.seed = cfg->seed;
    res->accuracy.worst_case = -1;
    res->slowest_case = -1;
    res->kernel = k;
    res->op = op;
    res->dtype = dt;
    res->events.planned = sml_prop_planned(cfg);
    if (cannot_run(k, op, dt, res)) {
        sml_prop_result_decide(res);
        return SML_OK;
    }
    sml_prop_env env;
    sml_prop_launcher l;
    sml_status s = env_open(&env, k, cfg, &l);
    if (s != SML_OK) {
        sml_prop_env_free(&env);
        if (cfg->runner.open && l.launch) cfg->runner.close(cfg->runner.ctx, &l);
        return s;
    }
    env.strict = cfg->strict;
    env.clock = &res->host;
    if (cfg->pool) env.pool = cfg->pool;
    double t0 = sml_prop_now();
    progress pg = {t0, t0, cfg->progress ? isatty(fileno(cfg->progress)) : 0, 0};
    int oom = 0, corpus = 0;
    sml_prop_case_log acc = {0};
    if (cfg->regressions_dir && cfg->shard.index <= 1 && cfg->part.index == 0)
        corpus = replay_corpus(&env, cfg, op, dt, res);
    if (corpus == -1 || corpus == -3) res->events.n[SML_EV_NOT_JUDGED]++;
    if (corpus == -2) res->events.n[SML_EV_CAP]++;
    oom = corpus == -1;
    if (corpus == 0) oom = run_cases(&env, cfg, res, &acc, &pg, t0);
    progress_clear(&pg, cfg);
    acc_finish(&acc, cfg, res);
    res->seconds = sml_prop_now() - t0;
    res->events.n[SML_EV_CASE] = res->cases;
    res->events.n[SML_EV_SLOW] += env.ex.slow;
    res->events.n[SML_EV_BYSTANDER] += env.ex.alone;
    sml_prop_env_free(&env);
    if (cfg->runner.open) cfg->runner.close(cfg->runner.ctx, &l);
    sml_prop_result_decide(res);
    /* Memory the engine could not get is no verdict on the kernel: the caller reports the
     * run as not checked, with res->note (failures found before it stay in res). */
    return oom ? SML_ERR_OUT_OF_MEMORY : SML_OK;
}

static sml_status replay(const char *json_path, const sml_kernel *k, sml_prop_lookup_fn lookup,
                         void *lookup_ctx, const sml_prop_runner *runner,
                         sml_prop_replay_result *r);

sml_status sml_prop_replay(const char *json_path, const sml_kernel *k, sml_prop_lookup_fn lookup,
                           void *lookup_ctx, sml_prop_replay_result *r) {
    return replay(json_path, k, lookup, lookup_ctx, NULL, r);
}

sml_status sml_prop_replay_in(const char *json_path, const sml_kernel *k,
                              const sml_prop_runner *runner, sml_prop_replay_result *r) {
    return replay(json_path, k, NULL, NULL, runner, r);
}

static sml_status replay(const char *json_path, const sml_kernel *k, sml_prop_lookup_fn lookup,
                         void *lookup_ctx, const sml_prop_runner *runner,
                         sml_prop_replay_result *r) {
    if (!json_path || !r) return SML_ERR_NULL_POINTER;
    memset(r, 0, sizeof *r);
    sml_prop_case c;
    sml_prop_repro m;
    sml_status s = sml_prop_repro_load(json_path, &c, &m, r->message, sizeof r->message);
    if (s != SML_OK) return s;
    if (!k) k = lookup ? lookup(m.kernel, lookup_ctx) : NULL;
    if (!k) k = sml_kernel_find(m.kernel);
    /* A plugin kernel not loaded yet (a library given with --load that has it wins): load
     * the library the reproducer recorded. */
    if (!k && m.load[0]) {
        char why[1024];
        if (sml_load_plugin(m.load, why, sizeof why) != SML_OK) {
            snprintf(r->kernel, sizeof r->kernel, "%s", m.kernel);
            snprintf(r->message, sizeof r->message,
                     "kernel '%s': the library the reproducer names (load): %.250s", m.kernel, why);
            sml_prop_case_free(&c);
            return SML_ERR_PLUGIN;
        }
        k = sml_kernel_find(m.kernel);
    }
    snprintf(r->kernel, sizeof r->kernel, "%s", k ? k->name : m.kernel);
    if (k && sml_kernel_library(k))
        snprintf(r->library, sizeof r->library, "%s", sml_kernel_library(k));
    sml_prop_replay_describe(&c, &m, r);
    if (!k) {
        if (m.load[0])
            snprintf(r->message, sizeof r->message,
                     "kernel '%s' is not in the library the reproducer names (%.250s)", m.kernel,
                     m.load);
        else
            snprintf(
                r->message, sizeof r->message,
                "kernel '%s' is not in the registry (a mutant? replay it with --kernel NAME, or "
                "with the test binary that defines it; a plugin kernel: --load its library)",
                m.kernel);
        sml_prop_case_free(&c);
        return SML_ERR_UNKNOWN_KERNEL;
    }
    if (!(k->ops & (1u << c.op)) || !(k->dtypes & (1u << c.dtype)) || c.cols < k->min_cols ||
        (k->max_cols > 0 && c.cols > k->max_cols)) {
        r->outcome = SML_PROP_SKIP;
        snprintf(r->message, sizeof r->message, "%s does not take %s %s with %lld columns", k->name,
                 sml_op_name(c.op), sml_dtype_name(c.dtype), (long long)c.cols);
        sml_prop_case_free(&c);
        return SML_OK;
    }
    if (!k->launch || (k->device == SML_DEVICE_GPU && !sml_gpu_available())) {
        r->outcome = SML_PROP_SKIP;
        snprintf(r->message, sizeof r->message, "%s cannot run here (%s)", k->name,
                 !k->launch ? "not built" : "no CUDA device");
        sml_prop_case_free(&c);
        return SML_OK;
    }
    sml_prop_env env;
    sml_prop_launcher l = {0};
    int remote = runner && runner->open;
    if (remote && (s = runner->open(runner->ctx, k, 1, &l)) != SML_OK) {
        sml_prop_case_free(&c);
        return s;
    }
    s = sml_prop_env_init(&env, k, remote ? &l : NULL);
    if (s == SML_OK) {
        env.stream_check = 1; /* a reproducer replays with every check the suite may make */
        env.strict = r->strict = m.strict; /* judged as the run that saved it judged it */
        env.ex.phase = SML_PROP_PHASE_CASE;
        env.ex.index = -1;
        env.ex.prop = (int)m.prop;
        sml_prop_eval e;
        sml_prop_verdict v;
        sml_prop_eval_begin(&e, &env, &c);
        sml_prop_eval_check(&e, m.prop, &v);
        sml_status engine = e.engine_status;
        char why[sizeof e.main.where];
        snprintf(why, sizeof why, "%s", e.main.where);
        sml_prop_eval_end(&e);
        if (engine != SML_OK) {
            /* The engine could not lay the case out or judge it (memory): that is no verdict
             * on the kernel, and the reproducer was not replayed. */
            s = engine;
            snprintf(r->message, sizeof r->message,
                     "not replayed: the engine cannot run this case here (%s%s%.300s)",
                     sml_strerror(engine), why[0] ? ": " : "", why);
        } else {
            r->outcome = v.outcome;
            snprintf(r->message, sizeof r->message, "%s", v.msg);
        }
    }
    sml_prop_env_free(&env);
    if (remote) runner->close(runner->ctx, &l);
    sml_prop_case_free(&c);
    return s;
}
