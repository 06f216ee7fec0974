/* props.c: the eleven properties. Each is a function of one case; its verdict says pass,
 * fail (with the first place it broke), skip (does not apply) or error (the kernel refused
 * a valid problem, or the engine failed). Tolerances come only from reference/contract.c:
 * agreement uses the checker, the sum properties add up the checker's per-element bounds
 * (sml_prop_row_sum_bound), and the other properties are exact. A kernel's declared deviation
 * (deviation.h) is a second judgment of a miss, property by property: its value bound where
 * values are compared with the reference (agreement, permutation, a row alone, the row sums),
 * its named exceptions where they name the rule (special values, shift); everything else
 * (range, monotonicity, bits across rows and runs, canaries) is never excused. */
#include "prop/props.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/rng.h"
#include "prop/deviation.h"
#include "prop/radix.h"
#include "reference/reference.h"

#define NAME_(id, name, ops, help) #name,
static const char *const NAMES[SML_PROP_COUNT] = {SML_PROP_LIST(NAME_)};
#undef NAME_

const char *sml_prop_name(sml_prop_id p) { return (unsigned)p < SML_PROP_COUNT ? NAMES[p] : "?"; }

sml_status sml_prop_parse(const char *s, sml_prop_id *out) {
    if (!s || !out) return SML_ERR_NULL_POINTER;
    for (int i = 0; i < SML_PROP_COUNT; i++)
        if (!strcmp(s, NAMES[i])) {
            *out = (sml_prop_id)i;
            return SML_OK;
        }
    return SML_ERR_INVALID_ARG;
}

/* The ops column of SML_PROP_LIST as masks of sml_op_is_backward's two answers. */
#define OPS_FWD                   1u
#define OPS_BWD                   2u
#define OPS_ALL                   3u
#define OPS_(id, name, ops, help) OPS_##ops,
static const unsigned OPS[SML_PROP_COUNT] = {SML_PROP_LIST(OPS_)};
#undef OPS_

int sml_prop_applies(sml_prop_id p, sml_op op) {
    if ((unsigned)p >= SML_PROP_COUNT) return 0;
    return (OPS[p] & (sml_op_is_backward(op) ? OPS_BWD : OPS_FWD)) != 0;
}

const char *sml_prop_outcome_name(sml_prop_outcome o) {
    switch (o) {
    case SML_PROP_PASS: return "pass";
    case SML_PROP_FAIL: return "fail";
    case SML_PROP_SKIP: return "skip";
    case SML_PROP_ERROR: return "error";
    }
    return "?";
}

sml_status sml_prop_env_init(sml_prop_env *env, const sml_kernel *k,
                             const sml_prop_launcher *remote) {
    memset(env, 0, sizeof *env);
    env->k = k;
    env->pool = &env->own_pool;
    if (remote && remote->launch) {
        sml_prop_exec_init_remote(&env->ex, k->device, *remote);
        return SML_OK;
    }
    sml_status s = sml_prop_exec_init(&env->ex, k->device);
    return s != SML_OK ? s : sml_handle_create(&env->h);
}

/* ---- buffers kept from case to case (props.h, sml_prop_scratch) ---- */

/* The slots of a set: the evaluation's arrays, then each property's own (properties run one
 * after another, so they share T0..T4). */
enum { S_WANT, S_XD, S_DYD, S_EX, S_FACTS, S_OUT, S_GOT, S_T0, S_T1, S_T2, S_T3, S_T4 };

/* Slot `slot` of s, of at least `bytes` bytes (contents undefined); NULL when there is no
 * memory for it. */
static void *scratch_slot(sml_prop_scratch *s, int slot, size_t bytes) {
    if (!bytes) bytes = 1;
    if (s->cap[slot] < bytes) {
        /* Grown in place where the allocator can (a big buffer's pages move to the new
         * mapping, faulted in and zeroed already); its contents are not needed. */
        void *q = realloc(s->p[slot], bytes);
        if (!q) free(s->p[slot]);
        s->p[slot] = q;
        s->cap[slot] = q ? bytes : 0;
    }
    return s->p[slot];
}

/* Slot `slot` of e's set (scratch_slot). */
static void *scratch(sml_prop_eval *e, int slot, size_t bytes) {
    return scratch_slot(e->sc, slot, bytes);
}

/* Free the largest buffers of s until it holds at most `keep` bytes. */
static void scratch_trim(sml_prop_scratch *s, size_t keep) {
    for (;;) {
        size_t total = 0;
        int big = -1;
        for (int i = 0; i < SML_PROP_SCRATCH_SLOTS; i++) {
            total += s->cap[i];
            if (s->cap[i] && (big < 0 || s->cap[i] > s->cap[big])) big = i;
        }
        if (total <= keep || big < 0) return;
        free(s->p[big]);
        s->p[big] = NULL;
        s->cap[big] = 0;
    }
}

sml_prop_pool *sml_prop_pool_new(void) { return calloc(1, sizeof(sml_prop_pool)); }

static void pool_release(sml_prop_pool *p) {
    for (int i = 0; i < SML_PROP_SCRATCH_LEVELS; i++) scratch_trim(&p->set[i], 0);
    scratch_trim(&p->cases, 0);
}

void *sml_prop_pool_case_buf(sml_prop_pool *p, int slot, size_t bytes) {
    sml_prop_scratch *s = &p->cases;
    if (slot == 0) scratch_trim(s, SML_PROP_SCRATCH_KEEP);
    return scratch_slot(s, slot, bytes);
}

void sml_prop_pool_free(sml_prop_pool *p) {
    if (!p) return;
    pool_release(p);
    free(p);
}

void sml_prop_env_free(sml_prop_env *env) {
    pool_release(&env->own_pool);
    env->pool = &env->own_pool;
    sml_prop_exec_free(&env->ex);
    if (env->h) sml_handle_destroy(env->h);
    env->h = NULL;
}

static size_t n_elems(const sml_prop_case *c) { return (size_t)(c->rows * c->cols); }
static size_t n_bytes(const sml_prop_case *c) {
    size_t b = n_elems(c) * sml_dtype_size(c->dtype);
    return b ? b : 1;
}

/* ---- the host's time, by stage (env->clock) ---- */

static double clock_now(const sml_prop_eval *e) { return e->env->clock ? sml_prop_now() : 0.0; }

static void clock_ref(const sml_prop_eval *e, double t0) {
    if (e->env->clock) e->env->clock->ref += sml_prop_now() - t0;
}

/* A stretch of exec calls: its time goes to the runs, less the exec's copies. */
typedef struct run_clock {
    double t0, copy0;
} run_clock;

static run_clock run_clock_start(const sml_prop_eval *e) {
    run_clock rc = {clock_now(e), e->env->ex.copy_seconds};
    return rc;
}

static void run_clock_stop(const sml_prop_eval *e, run_clock rc) {
    sml_prop_host_time *t = e->env->clock;
    if (!t) return;
    double copy = e->env->ex.copy_seconds - rc.copy0;
    t->copy += copy;
    t->run += sml_prop_now() - rc.t0 - copy;
}

void sml_prop_eval_begin(sml_prop_eval *e, sml_prop_env *env, const sml_prop_case *c) {
    memset(e, 0, sizeof *e);
    e->env = env;
    e->c = c;
    sml_prop_pool *p = env->pool;
    e->sc = p->depth < SML_PROP_SCRATCH_LEVELS ? &p->set[p->depth] : &e->own;
    p->depth++;
}

static int ensure_want(sml_prop_eval *e);
static int ensure_main(sml_prop_eval *e, sml_prop_verdict *v);

/* 1 while this case's main run is out (sent by sml_prop_eval_start, its answer not taken). */
static int main_sent(const sml_prop_eval *e) {
    return e->env->ex.pending && e->env->ex.pending_case == e->c;
}

void sml_prop_eval_start(sml_prop_eval *e) {
    sml_prop_exec *x = &e->env->ex;
    if (!x->remote.send || !x->remote.recv || e->main_state || main_sent(e)) return;
    if (!e->out && !(e->out = scratch(e, S_OUT, n_bytes(e->c)))) return; /* ensure_main says it */
    run_clock rc = run_clock_start(e);
    sml_status s = sml_prop_exec_run_begin(x, e->c, 1);
    run_clock_stop(e, rc);
    if (s == SML_OK && main_sent(e)) ensure_want(e);
}

/* Take the main run's answer, when it was sent, before the exec runs anything else. */
static void take_pending(sml_prop_eval *e) {
    if (!main_sent(e)) return;
    sml_prop_verdict scratch; /* the properties that need the main run repeat its verdict */
    ensure_main(e, &scratch);
}

void sml_prop_eval_end(sml_prop_eval *e) {
    take_pending(e);
    scratch_trim(e->sc, e->sc == &e->own ? 0 : SML_PROP_SCRATCH_KEEP);
    e->env->pool->depth--;
    memset(e, 0, sizeof *e);
}

static void verdict(sml_prop_verdict *v, sml_prop_outcome o, int64_t row, int64_t col,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void verdict(sml_prop_verdict *v, sml_prop_outcome o, int64_t row, int64_t col,
                    const char *fmt, ...) {
    v->outcome = o;
    v->row = row;
    v->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
}

/* The engine could not allocate what the case needs: an error verdict for this property, and
 * engine_status says so, so that the run ends without judging the kernel (engine.c). */
static void engine_oom(sml_prop_eval *e, sml_prop_verdict *v) {
    e->engine_status = SML_ERR_OUT_OF_MEMORY;
    verdict(v, SML_PROP_ERROR, -1, -1, "engine: out of memory");
}

/* The terms the kernel declares for this case's op and dtype (none in a strict run): 1 when
 * there are any. */
static int dev_terms(const sml_prop_eval *e, sml_dev_terms *t) {
    const sml_deviation *d = e->env->strict ? NULL : e->env->k->deviation;
    return sml_dev_terms_get(d, e->c->op, e->c->dtype, t);
}

static int has_value_bound(const sml_dev_terms *t) {
    return t->ulps > 0 || t->factor > 0 ||
           (t->exceptions & (SML_DEV_LOWEST_MAX_ROW | SML_DEV_LOG_SOFTMAX_LSE_ROUNDED));
}

/* A miss the declaration covers: PASS, counted as a deviation, the message saying which
 * terms excused what. */
static void excused(sml_prop_verdict *v, const sml_dev_terms *t, const char *what) {
    v->outcome = SML_PROP_PASS;
    v->deviation = 1;
    snprintf(v->msg, sizeof v->msg, "within its declared deviation (%.120s): %.220s", t->text,
             what);
}

/* The contract's checker on p (a dense problem in doubles, reference/check.h); for a kernel
 * with declared terms t (NULL: none), every miss judged against them too, into d
 * (deviation.h). why: when the contract fails under terms, the judgment in words. */
static sml_status check_values(const sml_dev_terms *t, const sml_check_dense *p,
                               sml_check_report *rep, sml_dev_report *d, char *why, size_t n) {
    memset(d, 0, sizeof *d);
    d->row = -1;
    why[0] = 0;
    if (!t) return sml_check_dense_run(p, rep, NULL, NULL);
    sml_status s = sml_dev_check_dense(t, p, rep, d);
    if (s == SML_OK && !rep->pass) sml_dev_report_why(d, t, why, n);
    return s;
}

/* The dense problem of case c's `rows` rows from row `row` on: x, dy, ex and facts as given
 * (NULL where not), want, and the output out in the dtype (got: as doubles, or NULL). */
static sml_check_dense dense_of(const sml_prop_case *c, int64_t row, int64_t rows, const double *x,
                                const double *dy, const double *ex, const sml_row_facts *facts,
                                const double *want, const void *out, const double *got) {
    size_t at = (size_t)(row * c->cols);
    sml_check_dense p = {c->op,
                         c->dtype,
                         rows,
                         c->cols,
                         x + at,
                         dy ? dy + at : NULL,
                         ex ? ex + at : NULL,
                         facts ? facts + row : NULL,
                         want + at,
                         out,
                         got ? got + at : NULL,
                         NULL};
    return p;
}

/* The verdict of a value comparison: PASS, PASS within the declaration, or FAIL with what
 * (the checker's words, or the caller's around them), led by the declaration it broke. */
static void values_verdict(sml_prop_verdict *v, const sml_dev_terms *t, const sml_check_report *rep,
                           const sml_dev_report *d, const char *why, int64_t row, int64_t col,
                           const char *what) {
    if (rep->pass) {
        verdict(v, SML_PROP_PASS, -1, -1, "%s", what);
    } else if (why[0] && sml_dev_report_pass(d)) {
        excused(v, t, what);
        v->excused_ulps = d->worst_ulps;
        v->excused_ratio = d->worst_ratio;
    } else if (why[0])
        verdict(v, SML_PROP_FAIL, row, col, "%.200s; %.180s", why, what);
    else
        verdict(v, SML_PROP_FAIL, row, col, "%s", what);
}

static int ensure_inputs(sml_prop_eval *e) {
    if (e->xd) return 1;
    const sml_prop_case *c = e->c;
    size_t n = n_elems(c);
    e->xd = scratch(e, S_XD, n * sizeof *e->xd);
    if (c->dy) e->dyd = scratch(e, S_DYD, n * sizeof *e->dyd);
    if (!e->xd || (c->dy && !e->dyd)) {
        e->xd = NULL;
        e->engine_status = SML_ERR_OUT_OF_MEMORY;
        return 0;
    }
    double t0 = clock_now(e);
    sml_load_n(c->dtype, c->x, 0, (int64_t)n, e->xd);
    if (c->dy) sml_load_n(c->dtype, c->dy, 0, (int64_t)n, e->dyd);
    clock_ref(e, t0);
    return 1;
}

/* The rows' exponentials the reference, the row facts and log_softmax_bwd's bounds share
 * (sml_ref_exp_row; none for softmax_bwd, whose e->ex stays NULL). */
static int ensure_ex(sml_prop_eval *e) {
    if (e->ex_state) return e->ex_state > 0;
    const sml_prop_case *c = e->c;
    if (!ensure_inputs(e)) {
        e->ex_state = -1;
        return 0;
    }
    if (c->op == SML_SOFTMAX_BWD) {
        e->ex_state = 1;
        return 1;
    }
    size_t n = n_elems(c);
    e->ex = scratch(e, S_EX, n * sizeof *e->ex);
    if (!e->ex) {
        e->engine_status = SML_ERR_OUT_OF_MEMORY;
        e->ex_state = -1;
        return 0;
    }
    double t0 = clock_now(e);
    for (int64_t r = 0; r < c->rows; r++)
        sml_ref_exp_row(c->op, e->xd + r * c->cols, c->cols, e->ex + r * c->cols);
    clock_ref(e, t0);
    e->ex_state = 1;
    return 1;
}

static int ensure_want(sml_prop_eval *e) {
    if (e->want_state) return e->want_state > 0;
    const sml_prop_case *c = e->c;
    if (!ensure_ex(e)) {
        e->want_state = -1;
        return 0;
    }
    e->want = scratch(e, S_WANT, n_elems(c) * sizeof *e->want);
    if (!e->want) {
        e->engine_status = SML_ERR_OUT_OF_MEMORY;
        e->want_state = -1;
        return 0;
    }
    double t0 = clock_now(e);
    /* sml_ref_run's bits, from the inputs and exponentials already widened */
    sml_ref_rows(c->op, c->rows, c->cols, e->xd, e->dyd, e->ex, e->want);
    clock_ref(e, t0);
    e->want_state = 1;
    return 1;
}

static int ensure_facts(sml_prop_eval *e) {
    if (e->facts_state) return e->facts_state > 0;
    const sml_prop_case *c = e->c;
    if (!ensure_ex(e)) {
        e->facts_state = -1;
        return 0;
    }
    e->facts = scratch(e, S_FACTS, (size_t)c->rows * sizeof *e->facts);
    if (!e->facts) {
        e->engine_status = SML_ERR_OUT_OF_MEMORY;
        e->facts_state = -1;
        return 0;
    }
    double t0 = clock_now(e);
    for (int64_t r = 0; r < c->rows; r++) {
        size_t at = (size_t)(r * c->cols);
        sml_row_facts_compute_ex(c->op, c->dtype, e->xd + at, e->dyd ? e->dyd + at : NULL,
                                 e->ex ? e->ex + at : NULL, c->cols, &e->facts[r]);
    }
    clock_ref(e, t0);
    e->facts_state = 1;
    return 1;
}

sml_status sml_prop_derive(sml_prop_env *env, sml_prop_pool *pool, const sml_prop_case *c,
                           sml_prop_derived *d) {
    memset(d, 0, sizeof *d);
    sml_prop_pool *own = env->pool;
    env->pool = pool; /* the evaluation's arrays are kept there */
    sml_prop_eval e;
    sml_prop_eval_begin(&e, env, c);
    int ok = ensure_want(&e) && ensure_facts(&e);
    sml_status s = ok ? SML_OK : e.engine_status != SML_OK ? e.engine_status : SML_ERR_INTERNAL;
    if (ok) *d = (sml_prop_derived){e.xd, e.dyd, e.ex, e.want, e.facts};
    sml_prop_eval_end(&e);
    env->pool = own;
    return s;
}

void sml_prop_eval_use(sml_prop_eval *e, const sml_prop_derived *d) {
    e->xd = d->xd;
    e->dyd = d->dyd;
    e->ex = d->ex;
    e->want = d->want;
    e->facts = d->facts;
    e->ex_state = e->want_state = e->facts_state = 1;
}

/* Shapes are drawn inside the kernel's declared limits, so a missing device is a reason to
 * skip, and so is a refusal of a padded stride (the cuDNN baseline cannot honour one; the
 * refusal is counted and must write nothing, which `canaries` checks). A launcher refusing
 * a dense problem inside its limits has a registry entry that promises too much: an error. */
static int refused_legitimately(const sml_prop_case *c, const sml_prop_run_report *rep) {
    if (rep->status == SML_ERR_NO_DEVICE) return 1;
    return rep->status == SML_ERR_UNSUPPORTED && c->ld != c->cols && !rep->canary_bad;
}

int sml_prop_eval_refused(const sml_prop_eval *e) {
    return e->main_state < 0 && e->main.status == SML_ERR_UNSUPPORTED &&
           refused_legitimately(e->c, &e->main);
}

/* A run in a worker that gave no answer to judge (exec.h, SML_PROP_ENDED_*): the worker's death,
 * a confirmed hang or a forged answer is the kernel's FAIL, with the cause; a run the cap
 * stopped, or that no worker could take, is no verdict (SKIP here; the engine stops the job and
 * says why). 1 when rep ended so. */
static int ended_verdict(const sml_prop_run_report *rep, sml_prop_verdict *v) {
    if (!rep->ended) return 0;
    int judged = rep->ended != SML_PROP_ENDED_CAPPED && rep->ended != SML_PROP_ENDED_NOT_RUN;
    verdict(v, judged ? SML_PROP_FAIL : SML_PROP_SKIP, -1, -1, "%s", rep->where);
    v->ended = rep->ended;
    return 1;
}

/* Run the kernel on case c into out; turn a refusal or engine failure into a verdict.
 * Returns 1 when the output is there to judge. */
static int run_into(sml_prop_eval *e, const sml_prop_case *c, void *out, sml_prop_run_report *rep,
                    sml_prop_verdict *v) {
    take_pending(e);
    run_clock rc = run_clock_start(e);
    sml_status s = sml_prop_exec_run(&e->env->ex, e->env->k, e->env->h, c, 0, out, rep);
    run_clock_stop(e, rc);
    if (s != SML_OK) {
        if (s == SML_ERR_OUT_OF_MEMORY) e->engine_status = s;
        verdict(v, SML_PROP_ERROR, -1, -1, "engine: %s", sml_strerror(s));
        return 0;
    }
    if (ended_verdict(rep, v)) return 0;
    if (refused_legitimately(c, rep)) {
        verdict(v, SML_PROP_SKIP, -1, -1, "%s", rep->where);
        return 0;
    }
    if (rep->status != SML_OK) {
        verdict(v, SML_PROP_ERROR, -1, -1, "%s", rep->where);
        return 0;
    }
    return 1;
}

/* After the main run: did the kernel run outside the stream it was given (exec.h)? The
 * answer goes with the main run's report; 0 (with an error verdict) when the engine failed. */

static int stream_check(sml_prop_eval *e, sml_prop_verdict *v) {
    int ran = -1;
    sml_prop_run_report rep;
    run_clock rc = run_clock_start(e);
    sml_status s = sml_prop_exec_stream_check(&e->env->ex, e->env->k, e->env->h, e->c, &ran, &rep);
    run_clock_stop(e, rc);
    if (s != SML_OK) {
        e->engine_status = s;
        e->main_state = -1;
        verdict(v, SML_PROP_ERROR, -1, -1, "engine: the stream check failed: %s", sml_strerror(s));
        return 0;
    }
    if (rep.ended) { /* the held run's worker gave no answer: that stands for the case */
        e->main = rep;
        e->main_state = -1;
        return ensure_main(e, v);
    }
    e->main.off_stream = ran == 1;
    return 1;
}

static int ensure_main(sml_prop_eval *e, sml_prop_verdict *v) {
    if (e->main_state > 0) return 1;
    if (e->main_state < 0) {
        /* Repeat the first run's verdict for every property that needs it. */
        if (ended_verdict(&e->main, v)) return 0;
        if (refused_legitimately(e->c, &e->main))
            verdict(v, SML_PROP_SKIP, -1, -1, "%s", e->main.where);
        else if (e->engine_status != SML_OK)
            verdict(v, SML_PROP_ERROR, -1, -1, "engine: %s", sml_strerror(e->engine_status));
        else
            verdict(v, SML_PROP_ERROR, -1, -1, "%s", e->main.where);
        return 0;
    }
    if (!e->out && !(e->out = scratch(e, S_OUT, n_bytes(e->c)))) {
        e->engine_status = SML_ERR_OUT_OF_MEMORY;
        e->main_state = -1;
        engine_oom(e, v);
        return 0;
    }
    /* The answer to the run sml_prop_eval_start sent, or the whole run here. */
    run_clock rc = run_clock_start(e);
    sml_status s =
        sml_prop_exec_run_end(&e->env->ex, e->env->k, e->env->h, e->c, 1, e->out, &e->main);
    run_clock_stop(e, rc);
    if (s != SML_OK) e->engine_status = s;
    e->main_state = (s == SML_OK && e->main.status == SML_OK) ? 1 : -1;
    if (e->main_state < 0) return ensure_main(e, v);
    if (e->env->stream_check && !stream_check(e, v)) return 0;
    return 1;
}

/* ensure_main, and the main run's output widened to doubles (e->got), which the properties
 * that read it share. */
static int ensure_got(sml_prop_eval *e, sml_prop_verdict *v) {
    if (!ensure_main(e, v)) return 0;
    if (e->got_state > 0) return 1;
    if (e->got_state == 0) {
        size_t n = n_elems(e->c);
        e->got = scratch(e, S_GOT, n * sizeof *e->got);
        e->got_state = e->got ? 1 : -1;
        if (e->got) sml_load_n(e->c->dtype, e->out, 0, (int64_t)n, e->got);
    }
    if (e->got_state > 0) return 1;
    engine_oom(e, v);
    return 0;
}

/* A row whose reference holds a NaN is a special-value row: only property 10 judges it. */
static int row_is_nan(const double *want, int64_t cols) {
    for (int64_t j = 0; j < cols; j++)
        if (isnan(want[j])) return 1;
    return 0;
}

/* Equal bits, except that any NaN equals any NaN (payloads of NaNs a kernel makes from
 * different operations are not its output's meaning). Returns the first difference or -1. */
static int64_t first_bit_difference(sml_dtype dt, const void *a, const void *b, int64_t n) {
    size_t esz = sml_dtype_size(dt);
    if (memcmp(a, b, (size_t)n * esz) == 0) return -1;
    for (int64_t i = 0; i < n; i++) {
        if (memcmp((const char *)a + (size_t)i * esz, (const char *)b + (size_t)i * esz, esz) == 0)
            continue;
        if (isnan(sml_load(dt, a, i)) && isnan(sml_load(dt, b, i))) continue;
        return i;
    }
    return -1;
}

static sml_rng prop_rng(const sml_prop_case *c, sml_prop_id p) {
    sml_rng r;
    sml_rng_seed(&r, c->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(p + 1)));
    return r;
}

/* ---- 1. agreement ------------------------------------------------------------------- */

static void p_agreement(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_got(e, v)) return;
    if (!ensure_want(e) || !ensure_facts(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    sml_dev_terms t;
    int decl = dev_terms(e, &t);
    sml_check_report rep;
    sml_dev_report d;
    char why[320];
    sml_check_dense p =
        dense_of(c, 0, c->rows, e->xd, e->dyd, e->ex, e->facts, e->want, e->out, e->got);
    sml_status s = check_values(decl ? &t : NULL, &p, &rep, &d, why, sizeof why);
    if (s != SML_OK) {
        verdict(v, SML_PROP_ERROR, -1, -1, "checker: %s", sml_strerror(s));
        return;
    }
    values_verdict(v, &t, &rep, &d, why, rep.worst_row, rep.worst_col, rep.message);
    v->ratio = rep.worst_ratio;
    v->ulps = rep.worst_ulps;
}

/* ---- 2. row sums (and the bound shared with 11) --------------------------------------- */

/* Room for a row-sum bound's per-element figures: the contract's bound of each element, and
 * for log_softmax exp of each reference value (NULL: computed where needed). */
typedef struct sum_scratch {
    double *bound, *exp_want;
} sum_scratch;

/* The row-sum bound from per-element bounds: the contract's, or where declared terms t are
 * looser, theirs (sml_dev_allowed). ex: the row's sml_ref_exp_row or NULL; sc: scratch of cols
 * doubles each (bound computed here; exp_want, log_softmax, filled by the caller) or NULL. */
static double row_sum_bound(sml_op op, sml_dtype dt, const sml_row_facts *f, const double *x,
                            const double *dy, const double *ex, const double *want, int64_t cols,
                            const sml_dev_terms *t, const sum_scratch *sc) {
    double *bound = sc ? sc->bound : NULL;
    if (bound) sml_check_bound_row(op, dt, f, x, dy, ex, want, cols, bound);
    const double *ew = sc ? sc->exp_want : NULL;
    double b = 0.0, slack = t && !dy ? sml_dev_row_slack(t, x, cols) : 0.0;
    for (int64_t j = 0; j < cols; j++) {
        if (!isfinite(want[j])) continue; /* -inf log-probabilities: exp gives exactly 0 */
        double bj = bound ? bound[j] : sml_check_bound(op, dt, f, x[j], dy ? dy[j] : 0.0, want[j]);
        if (t) bj = sml_dev_allowed(t, dt, bj, want[j], slack);
        if (op == SML_LOG_SOFTMAX) {
            /* exp(want + b) - exp(want), without 0 * inf far below the max */
            double e = ew ? ew[j] : exp(want[j]), d = e * expm1(bj);
            if (e == 0.0 || !isfinite(d)) d = exp(fmin(want[j] + bj, 710.0)) - e;
            bj = d;
        }
        b += bj;
    }
    return b;
}

double sml_prop_row_sum_bound(sml_op op, sml_dtype dt, const sml_row_facts *f, const double *x,
                              const double *dy, const double *want, int64_t cols) {
    return row_sum_bound(op, dt, f, x, dy, NULL, want, cols, NULL, NULL);
}

/* A row whose output holds a NaN or inf that the contract accepts (16-bit overflow of a
 * value near the dtype's top, or a backward row whose fp32 intermediates may overflow) has
 * no meaningful sum; one the contract does not accept is for properties 1 and 10 to report,
 * and fails the sum too. Returns 1 when the row is to be skipped. */
static int row_overflows_legally(const sml_prop_eval *e, int64_t r) {
    const sml_prop_case *c = e->c;
    const sml_row_facts *f = &e->facts[r];
    for (int64_t j = 0; j < c->cols; j++) {
        int64_t i = r * c->cols + j;
        double g = e->got[i], w = e->want[i];
        if (isfinite(g) || !isfinite(w)) continue;
        if (isnan(g)) {
            if (f->may_overflow) return 1;
            continue;
        }
        sml_bound b =
            sml_check_bound_parts(c->op, c->dtype, f, e->xd[i], e->dyd ? e->dyd[i] : 0.0, w);
        if (sml_check_inf_allowed(c->dtype, f, w, &b, g)) return 1;
    }
    return 0;
}

/* A row holding a NaN or infinity that the declared exceptions t cover (deviation.h): no
 * meaningful sum, as for a legal overflow. */
static int row_special_excused(const sml_prop_eval *e, int64_t r, const sml_dev_terms *t) {
    const sml_prop_case *c = e->c;
    if (!t || !t->exceptions) return 0;
    const double *x = e->xd + r * c->cols, *dy = e->dyd ? e->dyd + r * c->cols : NULL;
    sml_dev_row facts;
    int found = 0; /* the row's facts, found at its first special value */
    for (int64_t j = 0; j < c->cols; j++) {
        int64_t i = r * c->cols + j;
        double g = e->got[i];
        if (isfinite(g)) continue;
        if (!found++) sml_dev_row_of(t, x, dy, c->cols, &facts);
        if (sml_dev_special_excused_in(t, &facts, dy != NULL, g, e->want[i])) return 1;
    }
    return 0;
}

/* Row r's sum, off by `err`, against the contract's row-sum bound plus `slack` and then, for a
 * kernel that declared a looser value bound, against the declared one: 0 within the contract,
 * 1 within the declaration only, -1 outside both (*allowed: the last bound it was held to). */
static int row_sum_within(const sml_prop_eval *e, const sml_dev_terms *t, int decl, int64_t r,
                          const double *dy, double err, double slack, const sum_scratch *sc,
                          double *allowed) {
    const sml_prop_case *c = e->c;
    const double *x = e->xd + r * c->cols, *w = e->want + r * c->cols;
    const double *ex = e->ex ? e->ex + r * c->cols : NULL;
    *allowed =
        row_sum_bound(c->op, c->dtype, &e->facts[r], x, dy, ex, w, c->cols, NULL, sc) + slack;
    if (err <= *allowed) return 0;
    if (!decl || !has_value_bound(t)) return -1;
    *allowed = row_sum_bound(c->op, c->dtype, &e->facts[r], x, dy, ex, w, c->cols, t, sc) + slack;
    return err <= *allowed ? 1 : -1;
}

/* Scratch for row_sum_within over rows of cols (with exp_want: log_softmax's row sums). */
static int sum_scratch_alloc(sml_prop_eval *e, sum_scratch *sc, int64_t cols, int exp_want) {
    size_t n = (size_t)(cols ? cols : 1);
    sc->bound = scratch(e, S_T0, (exp_want ? 2 : 1) * n * sizeof *sc->bound);
    sc->exp_want = sc->bound && exp_want ? sc->bound + n : NULL;
    return sc->bound != NULL;
}

/* The end of a row-sum property: PASS (some rows within the declared terms only: a
 * deviation), or SKIP when no row was judged. */
static void sums_verdict(sml_prop_verdict *v, const sml_dev_terms *t, int64_t judged,
                         int64_t excused_rows, const char *skip, const char *pass) {
    if (!judged && !excused_rows) {
        verdict(v, SML_PROP_SKIP, -1, -1, "%s", skip);
    } else if (excused_rows) {
        char what[160];
        snprintf(what, sizeof what, "%lld rows outside the contract's row-sum bound",
                 (long long)excused_rows);
        excused(v, t, what);
    } else {
        verdict(v, SML_PROP_PASS, -1, -1, "%lld %s", (long long)judged, pass);
    }
}

static void p_row_sum(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_got(e, v)) return;
    if (!ensure_want(e) || !ensure_facts(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    sml_dev_terms t;
    int decl = dev_terms(e, &t);
    int log = c->op == SML_LOG_SOFTMAX;
    sum_scratch sc;
    if (!sum_scratch_alloc(e, &sc, c->cols, log)) {
        engine_oom(e, v);
        return;
    }
    int64_t judged = 0, within = 0;
    for (int64_t r = 0; r < c->rows; r++) {
        const double *w = e->want + r * c->cols;
        if (row_is_nan(w, c->cols) || row_overflows_legally(e, r)) continue;
        if (decl && row_special_excused(e, r, &t)) {
            within++;
            continue;
        }
        const double *g = e->got + r * c->cols;
        double got = 0.0, ref = 0.0;
        if (log) {
            for (int64_t j = 0; j < c->cols; j++) sc.exp_want[j] = exp(w[j]);
            for (int64_t j = 0; j < c->cols; j++) {
                got += exp(g[j]);
                ref += sc.exp_want[j];
            }
        } else {
            for (int64_t j = 0; j < c->cols; j++) {
                got += g[j];
                ref += w[j];
            }
        }
        double allowed;
        judged++;
        int k =
            row_sum_within(e, &t, decl, r, NULL, fabs(got - 1.0), fabs(ref - 1.0), &sc, &allowed);
        within += k > 0;
        if (k >= 0) continue;
        verdict(v, SML_PROP_FAIL, r, -1,
                "%s%.200s%srow %lld: %s sums to %.17g, 1 +- %.3g allowed (reference's row sums "
                "to %.17g)",
                decl ? "outside its declared deviation (" : "", decl ? t.text : "",
                decl ? "): " : "", (long long)r, log ? "exp(log_softmax)" : "softmax", got, allowed,
                ref);
        v->ratio = allowed > 0 ? fabs(got - 1.0) / allowed : INFINITY;
        return;
    }
    sums_verdict(v, &t, judged, within, "every row is a special-value row",
                 "rows sum to 1 within the contract");
}

/* ---- 3. range -------------------------------------------------------------------------- */

static void p_range(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_got(e, v)) return;
    if (!ensure_want(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    int log = c->op == SML_LOG_SOFTMAX;
    for (int64_t r = 0; r < c->rows; r++) {
        if (row_is_nan(e->want + r * c->cols, c->cols)) continue;
        for (int64_t j = 0; j < c->cols; j++) {
            double g = e->got[r * c->cols + j];
            int ok = log ? g <= 0.0 : (g >= 0.0 && g <= 1.0);
            if (!ok) {
                verdict(v, SML_PROP_FAIL, r, j, "row %lld col %lld: %s = %.9g, outside %s",
                        (long long)r, (long long)j, sml_op_name(c->op), g,
                        log ? "[-inf, 0]" : "[0, 1]");
                return;
            }
        }
    }
    verdict(v, SML_PROP_PASS, -1, -1, "in range");
}

/* ---- 4. shift invariance ------------------------------------------------------------------ */

/* Integers up to this size stay exact in the dtype, and so do their differences in fp32. */
static double exact_int_limit(sml_dtype dt) {
    return dt == SML_F32 ? 0x1p22 : dt == SML_F16 ? 2048.0 : 256.0;
}

/* Bits that change under a shift, where the kernel declares that exception: each output, of
 * the integer logits and of the shifted ones, must still be within the declared terms of its
 * own reference. */
static void shift_within_terms(sml_prop_eval *e, const sml_dev_terms *t, const sml_prop_case *base,
                               const void *base_out, const sml_prop_case *shifted,
                               const void *shift_out, const char *what, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    size_t n = n_elems(c);
    double *want = malloc(2 * n * sizeof *want), *xs = want ? want + n : NULL;
    if (!want) {
        engine_oom(e, v);
        return;
    }
    const sml_prop_case *cases[2] = {base, shifted};
    const void *outs[2] = {base_out, shift_out};
    for (int i = 0; i < 2; i++) {
        sml_check_report rep;
        sml_dev_report d;
        char why[320];
        sml_load_n(c->dtype, cases[i]->x, 0, (int64_t)n, xs);
        sml_ref_rows(c->op, c->rows, c->cols, xs, NULL, NULL, want);
        sml_check_dense p = dense_of(c, 0, c->rows, xs, NULL, NULL, NULL, want, outs[i], NULL);
        sml_status s = check_values(t, &p, &rep, &d, why, sizeof why);
        if (s != SML_OK) {
            verdict(v, SML_PROP_ERROR, -1, -1, "reference or checker: %s", sml_strerror(s));
            free(want);
            return;
        }
        if (!rep.pass && !sml_dev_report_pass(&d)) {
            verdict(v, SML_PROP_FAIL, rep.worst_row, rep.worst_col, "%.150s; the %s output: %.200s",
                    what, i ? "shifted" : "unshifted", why);
            free(want);
            return;
        }
    }
    free(want);
    excused(v, t, what);
}

/* The shift's logits are integers of at most lim in magnitude, or special values. For a 16-bit
 * dtype and a long case, ints_store stores them through a table of the encodings of every
 * integer in [-lim, lim] (made by sml_store_n, so the same bits) instead of encoding each
 * element; other cases store as sml_store_n does. */
#define SHIFT_TABLE_MAX 4097 /* 2 x fp16's exact_int_limit + 1 */
typedef struct ints_table {
    int on;
    double lim;
    uint16_t bits[SHIFT_TABLE_MAX];
} ints_table;

static void ints_table_init(ints_table *t, sml_dtype dt, double lim, size_t n) {
    const int64_t m = 2 * (int64_t)lim + 1;
    t->on = dt != SML_F32 && m <= SHIFT_TABLE_MAX && n >= 16 * (size_t)m;
    t->lim = lim;
    for (int64_t i = 0; t->on && i < m; i += 256) {
        double ints[256];
        int64_t len = m - i < 256 ? m - i : 256;
        for (int64_t j = 0; j < len; j++) ints[j] = (double)(i + j) - lim;
        sml_store_n(dt, t->bits, i, len, ints);
    }
}

/* v[0..m) into elements [at, at + m) of to, in dt: integers of at most t->lim in magnitude,
 * or values that are not finite. */
static void ints_store(const ints_table *t, sml_dtype dt, void *to, size_t at, size_t m,
                       const double *v) {
    if (!t->on) {
        sml_store_n(dt, to, (int64_t)at, (int64_t)m, v);
        return;
    }
    uint16_t *p = (uint16_t *)to + at;
    for (size_t j = 0; j < m; j++) {
        if (isfinite(v[j]))
            p[j] = t->bits[(int64_t)(v[j] + t->lim)];
        else
            sml_store_n(dt, p, (int64_t)j, 1, v + j);
    }
}

static void p_shift(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_inputs(e)) {
        engine_oom(e, v);
        return;
    }
    size_t n = n_elems(c);
    double lim = exact_int_limit(c->dtype);
    /* The case's logits made integer (rounded, clamped to half the exact range) unless they
     * already are; special values stay. */
    int already = 1;
    double maxabs = 0.0;
    double *xi = scratch(e, S_T0, n * sizeof *xi);
    sml_prop_case base = *c, shifted = *c;
    base.x = scratch(e, S_T1, n_bytes(c));
    shifted.x = scratch(e, S_T2, n_bytes(c));
    void *out_base = scratch(e, S_T3, n_bytes(c)), *out_shift = scratch(e, S_T4, n_bytes(c));
    if (!xi || !base.x || !shifted.x || !out_base || !out_shift) {
        engine_oom(e, v);
        goto done;
    }
    const double half = lim / 2, round = 0x1.8p52;
    for (size_t i = 0; i < n; i++) {
        double x = e->xd[i], t = x;
        if (isfinite(x)) {
            /* nearbyint(fmin(fmax(x, -half), half)) without three calls: adding and taking
             * away 1.5 x 2^52 rounds |t| <= 2^21 to an integer, to nearest, ties to even, as
             * nearbyint does in the default rounding mode; only the sign of a zero can differ,
             * and a zero is made +0 next. */
            t = x < -half ? -half : x > half ? half : x;
            t = (t + round) - round;
            if (t == 0.0) t = 0.0; /* no -0: -0 + c would not be the shift of -0 in bits */
            maxabs = fabs(t) > maxabs ? fabs(t) : maxabs;
        }
        if (!(t == x || (isnan(t) && isnan(x))) || (x == 0.0 && signbit(x))) already = 0;
        xi[i] = t;
    }
    double room = lim - maxabs;
    if (room < 1.0) {
        verdict(v, SML_PROP_SKIP, -1, -1, "no room for a shift that keeps every value exact");
        goto done;
    }
    sml_rng rng = prop_rng(c, SML_PROP_SHIFT);
    double k = 1.0 + (double)sml_rng_below(&rng, (uint64_t)(room < 4096.0 ? room : 4096.0));
    if (sml_rng_below(&rng, 2)) k = -k;
    /* The integer logits in the dtype: run (when they are not the case's own) or needed by the
     * declared-deviation judgment below, which stores them itself then. */
    ints_table tab;
    ints_table_init(&tab, c->dtype, lim, n);
    if (!already) ints_store(&tab, c->dtype, base.x, 0, n, xi);
    for (size_t i = 0; i < n; i += 256) {
        double xk[256];
        size_t m = n - i < 256 ? n - i : 256;
        for (size_t j = 0; j < m; j++) xk[j] = xi[i + j] + k;
        ints_store(&tab, c->dtype, shifted.x, i, m, xk);
    }
    sml_prop_run_report rep;
    const void *ref_out;
    if (already) {
        if (!ensure_main(e, v)) goto done;
        ref_out = e->out;
    } else {
        if (!run_into(e, &base, out_base, &rep, v)) goto done;
        ref_out = out_base;
    }
    if (!run_into(e, &shifted, out_shift, &rep, v)) goto done;
    int64_t d = first_bit_difference(c->dtype, ref_out, out_shift, (int64_t)n);
    if (d >= 0) {
        int64_t r = d / c->cols, j = d % c->cols;
        char what[300];
        snprintf(what, sizeof what,
                 "row %lld col %lld: integer logits%s shifted by %+.0f change the output bits: "
                 "x = %.9g gives %.9g, x %+.0f gives %.9g",
                 (long long)r, (long long)j, already ? "" : " (the case's, rounded)", k, xi[d],
                 sml_load(c->dtype, ref_out, d), k, sml_load(c->dtype, out_shift, d));
        sml_dev_terms t;
        if (dev_terms(e, &t) && (t.exceptions & SML_DEV_LOG_SOFTMAX_SHIFT_BITS)) {
            if (already) sml_store_n(c->dtype, base.x, 0, (int64_t)n, xi);
            shift_within_terms(e, &t, &base, ref_out, &shifted, out_shift, what, v);
        } else
            verdict(v, SML_PROP_FAIL, r, j, "%s", what);
        goto done;
    }
    verdict(v, SML_PROP_PASS, -1, -1, "shift by %+.0f: identical bits", k);
done:;
}

/* ---- 5. monotonicity ------------------------------------------------------------------ */

static void p_monotonic(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_got(e, v)) return;
    if (!ensure_want(e) || !ensure_inputs(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    /* Each row's columns in the order of their inputs, ties by column: a key is the input's
     * order (inputs are values of the dtype, so floats exactly) above the column. */
    uint64_t *t = scratch(e, S_T0, 2 * (size_t)c->cols * sizeof *t);
    if (!t) {
        engine_oom(e, v);
        return;
    }
    for (int64_t r = 0; r < c->rows; r++) {
        if (row_is_nan(e->want + r * c->cols, c->cols)) continue;
        const double *x = e->xd + r * c->cols;
        if (c->dtype == SML_F32) {
            for (int64_t j = 0; j < c->cols; j++)
                t[j] = (uint64_t)sml_radix_float_key((float)x[j]) << 32 | (uint64_t)j;
        } else { /* the same order from the 16-bit patterns: half the passes */
            const uint16_t *b = (const uint16_t *)c->x + r * c->cols;
            for (int64_t j = 0; j < c->cols; j++)
                t[j] = (uint64_t)sml_radix_half_key(b[j]) << 32 | (uint64_t)j;
        }
        sml_radix_sort_u64_hi(t, t + c->cols, (size_t)c->cols); /* t's low halves ascend */
        /* The inputs compared through their keys, which order them as their values and are
         * equal exactly for equal values: x itself is read only for a failure's words (a long
         * row's x and y read in sorted order are two reads all over the row per element). */
        uint64_t kp = 0;
        double yp = 0;
        int64_t jp = 0;
        const double *y = e->got + r * c->cols;
        for (int64_t k = 0; k < c->cols; k++) {
            int64_t j = (int64_t)(t[k] & 0xFFFFFFFFu);
            uint64_t key = t[k] >> 32;
            double yk = y[j];
            int bad = isnan(yk);
            if (!bad && k > 0) bad = key > kp ? !(yk >= yp) : !(yk == yp);
            if (bad) {
                if (k == 0) kp = key, yp = yk, jp = j;
                double xk = x[j], xp = x[jp];
                verdict(v, SML_PROP_FAIL, r, j,
                        "row %lld: x[%lld] = %.9g %s x[%lld] = %.9g but y = %.9g %s %.9g",
                        (long long)r, (long long)j, xk, xk == xp ? "==" : ">", (long long)jp, xp,
                        yk, xk == xp ? "!=" : "<", yp);
                return;
            }
            kp = key, yp = yk, jp = j;
        }
    }
    verdict(v, SML_PROP_PASS, -1, -1, "monotonic");
}

/* ---- 6. column permutation --------------------------------------------------------------- */

/* to[j] = from[perm[j]], j < n, elements of esz bytes (2 or 4); and of doubles. */
static void gather(size_t esz, void *to, const void *from, const int64_t *perm, int64_t n) {
    if (esz == 4) {
        uint32_t *t = to;
        const uint32_t *f = from;
        for (int64_t j = 0; j < n; j++) t[j] = f[perm[j]];
    } else if (esz == 2) {
        uint16_t *t = to;
        const uint16_t *f = from;
        for (int64_t j = 0; j < n; j++) t[j] = f[perm[j]];
    } else {
        for (int64_t j = 0; j < n; j++)
            memcpy((char *)to + (size_t)j * esz, (const char *)from + (size_t)perm[j] * esz, esz);
    }
}

static void p_permutation(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (c->cols < 2) {
        verdict(v, SML_PROP_SKIP, -1, -1, "one column");
        return;
    }
    if (!ensure_want(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    size_t esz = sml_dtype_size(c->dtype);
    int64_t *perm = scratch(e, S_T0, (size_t)c->cols * sizeof *perm);
    sml_prop_case pc = *c;
    pc.x = scratch(e, S_T1, n_bytes(c));
    pc.dy = c->dy ? scratch(e, S_T2, n_bytes(c)) : NULL;
    pc.logits = NULL;
    void *out = scratch(e, S_T3, n_bytes(c));
    if (!perm || !pc.x || (c->dy && !pc.dy) || !out) {
        engine_oom(e, v);
        goto done;
    }
    sml_rng rng = prop_rng(c, SML_PROP_PERMUTATION);
    int reverse = sml_rng_below(&rng, 4) == 0;
    for (int64_t j = 0; j < c->cols; j++) perm[j] = reverse ? c->cols - 1 - j : j;
    if (!reverse)
        for (int64_t j = c->cols - 1; j > 0; j--) {
            int64_t k = (int64_t)sml_rng_below(&rng, (uint64_t)j + 1);
            int64_t t = perm[j];
            perm[j] = perm[k];
            perm[k] = t;
        }
    for (int64_t r = 0; r < c->rows; r++) {
        size_t at = (size_t)(r * c->cols);
        gather(esz, (char *)pc.x + at * esz, (const char *)c->x + at * esz, perm, c->cols);
        if (c->dy)
            gather(esz, (char *)pc.dy + at * esz, (const char *)c->dy + at * esz, perm, c->cols);
    }
    sml_prop_run_report rep;
    if (!run_into(e, &pc, out, &rep, v)) goto done;
    sml_dev_terms t;
    int decl = dev_terms(e, &t);
    sml_check_report cr;
    sml_dev_report d;
    char why[320], what[384];
    /* The permuted problem's reference, inputs and exponentials are the case's, permuted: the
     * checker gathers them a row at a time, and computes the permuted rows' facts from them in
     * their new order (as from the permuted inputs: no exp). */
    sml_check_dense p = dense_of(c, 0, c->rows, e->xd, e->dyd, e->ex, NULL, e->want, out, NULL);
    p.perm = perm;
    sml_status s = check_values(decl ? &t : NULL, &p, &cr, &d, why, sizeof why);
    if (s != SML_OK) {
        verdict(v, SML_PROP_ERROR, -1, -1, "checker: %s", sml_strerror(s));
        goto done;
    }
    if (cr.pass)
        snprintf(what, sizeof what, "permuted output within the contract");
    else
        snprintf(what, sizeof what, "columns %s (column %lld of the case moved to %lld): %.300s",
                 reverse ? "reversed" : "permuted",
                 (long long)(cr.worst_col >= 0 ? perm[cr.worst_col] : -1), (long long)cr.worst_col,
                 cr.message);
    values_verdict(v, &t, &cr, &d, why, cr.worst_row, cr.worst_row >= 0 ? perm[cr.worst_col] : -1,
                   what);
    v->ratio = cr.worst_ratio;
done:;
}

/* ---- 7. row independence ----------------------------------------------------------------- */

/* Rows whose bits moved with their place (bits says where), under terms t that declare
 * SML_DEV_ROW_BITS_BY_ADDRESS: the output of the case's rows in reverse order (out) held to
 * the value bound against the reference in the same order. 1 within it; else 0 with the FAIL
 * in v. */
static int reversed_within_terms(sml_prop_eval *e, const sml_dev_terms *t, const void *out,
                                 const char *bits, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_want(e) || !ensure_facts(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return 0;
    }
    size_t row_bytes = (size_t)c->cols * sml_dtype_size(c->dtype);
    /* Row r of the reordered output is row rows-1-r of the case: judged against its reference. */
    for (int64_t r = 0; r < c->rows; r++) {
        int64_t src = c->rows - 1 - r;
        sml_check_dense p = dense_of(c, src, 1, e->xd, e->dyd, e->ex, e->facts, e->want,
                                     (const char *)out + (size_t)r * row_bytes, NULL);
        sml_check_report cr;
        sml_dev_report d;
        char why[320];
        sml_status s = check_values(t, &p, &cr, &d, why, sizeof why);
        if (s != SML_OK) {
            verdict(v, SML_PROP_ERROR, -1, -1, "checker: %s", sml_strerror(s));
            return 0;
        }
        if (cr.pass || sml_dev_report_pass(&d)) continue;
        verdict(v, SML_PROP_FAIL, src, cr.worst_col, "%.200s; %.180s", why, bits);
        return 0;
    }
    return 1;
}

static void p_row_independence(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (c->rows < 2) {
        verdict(v, SML_PROP_SKIP, -1, -1, "one row");
        return;
    }
    if (!ensure_main(e, v)) return;
    size_t esz = sml_dtype_size(c->dtype), row_bytes = (size_t)c->cols * esz;
    sml_prop_case rc = *c, one = *c;
    rc.x = scratch(e, S_T1, n_bytes(c));
    rc.dy = c->dy ? scratch(e, S_T2, n_bytes(c)) : NULL;
    rc.logits = one.logits = NULL;
    void *out = scratch(e, S_T3, n_bytes(c));
    if (!rc.x || (c->dy && !rc.dy) || !out) {
        engine_oom(e, v);
        goto done;
    }
    /* (a) the rows in reverse order: each row's output moves with it, bit for bit. */
    for (int64_t r = 0; r < c->rows; r++) {
        size_t to = (size_t)r * row_bytes, from = (size_t)(c->rows - 1 - r) * row_bytes;
        memcpy((char *)rc.x + to, (const char *)c->x + from, row_bytes);
        if (c->dy) memcpy((char *)rc.dy + to, (const char *)c->dy + from, row_bytes);
    }
    sml_prop_run_report rep;
    if (!run_into(e, &rc, out, &rep, v)) goto done;
    char bits[320] = "";
    for (int64_t r = 0; r < c->rows && !bits[0]; r++) {
        int64_t src = c->rows - 1 - r;
        int64_t d = first_bit_difference(c->dtype, (const char *)out + (size_t)r * row_bytes,
                                         (const char *)e->out + (size_t)src * row_bytes, c->cols);
        if (d < 0) continue;
        snprintf(bits, sizeof bits,
                 "row %lld computed as row %lld of the same batch in reverse order gives "
                 "different bits at col %lld: %.9g vs %.9g",
                 (long long)src, (long long)r, (long long)d,
                 sml_load(c->dtype, (const char *)out + (size_t)r * row_bytes, d),
                 sml_load(c->dtype, (const char *)e->out + (size_t)src * row_bytes, d));
        sml_dev_terms bt;
        if (!(dev_terms(e, &bt) && (bt.exceptions & SML_DEV_ROW_BITS_BY_ADDRESS))) {
            verdict(v, SML_PROP_FAIL, src, d, "%s", bits);
            goto done;
        }
        if (!reversed_within_terms(e, &bt, out, bits, v)) goto done;
    }
    /* (b) one row alone, with the same layout, within the contract: a kernel may size its
     * reduction by the problem's shape (split sizes clusters by the row count), so only the
     * same-shape comparison above can ask for identical bits. */
    if (!ensure_want(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        goto done;
    }
    sml_rng rng = prop_rng(c, SML_PROP_ROW_INDEPENDENCE);
    int64_t pick = (int64_t)sml_rng_below(&rng, (uint64_t)c->rows);
    one.rows = 1;
    one.x = (char *)c->x + (size_t)pick * row_bytes;
    one.dy = c->dy ? (char *)c->dy + (size_t)pick * row_bytes : NULL;
    if (!run_into(e, &one, out, &rep, v)) goto done;
    sml_dev_terms t;
    int decl = dev_terms(e, &t);
    sml_check_report cr;
    sml_dev_report d;
    char why[320], what[384];
    if (!ensure_facts(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        goto done;
    }
    sml_check_dense p = dense_of(c, pick, 1, e->xd, e->dyd, e->ex, e->facts, e->want, out, NULL);
    sml_status s = check_values(decl ? &t : NULL, &p, &cr, &d, why, sizeof why);
    if (s != SML_OK) {
        verdict(v, SML_PROP_ERROR, -1, -1, "checker: %s", sml_strerror(s));
        goto done;
    }
    if (cr.pass)
        snprintf(what, sizeof what, "rows independent");
    else
        snprintf(what, sizeof what, "row %lld of %lld computed alone breaks the contract: %.300s",
                 (long long)pick, (long long)c->rows, cr.message);
    values_verdict(v, &t, &cr, &d, why, pick, cr.worst_col, what);
    if (bits[0] && v->outcome == SML_PROP_PASS && !v->deviation) excused(v, &t, bits);
done:;
}

/* ---- 8. determinism ---------------------------------------------------------------------- */

static void p_determinism(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_main(e, v)) return;
    void *out = scratch(e, S_T3, n_bytes(c));
    if (!out) {
        engine_oom(e, v);
        return;
    }
    sml_prop_run_report rep;
    if (run_into(e, c, out, &rep, v)) {
        size_t esz = sml_dtype_size(c->dtype);
        if (memcmp(out, e->out, n_elems(c) * esz) != 0) {
            size_t i = 0;
            while (memcmp((char *)out + i * esz, (char *)e->out + i * esz, esz) == 0) i++;
            verdict(v, SML_PROP_FAIL, (int64_t)i / c->cols, (int64_t)i % c->cols,
                    "two runs on the same input differ at row %lld col %lld: %.9g then %.9g",
                    (long long)((int64_t)i / c->cols), (long long)((int64_t)i % c->cols),
                    sml_load(c->dtype, e->out, (int64_t)i), sml_load(c->dtype, out, (int64_t)i));
        } else {
            verdict(v, SML_PROP_PASS, -1, -1, "identical bits");
        }
    }
}

/* ---- 9. canaries ------------------------------------------------------------------------- */

static void p_canaries(sml_prop_eval *e, sml_prop_verdict *v) {
    if (!ensure_main(e, v)) {
        if (e->main.status == SML_ERR_UNSUPPORTED && e->main.canary_bad)
            verdict(v, SML_PROP_FAIL, -1, -1, "%s (%lld bytes)", e->main.where,
                    (long long)e->main.canary_bad);
        return;
    }
    if (e->main.canary_bad)
        verdict(v, SML_PROP_FAIL, -1, -1, "%s (%lld canary bytes changed)", e->main.where,
                (long long)e->main.canary_bad);
    else if (e->main.input_modified)
        verdict(v, SML_PROP_FAIL, -1, -1, "%s", e->main.where);
    else if (e->main.off_stream)
        verdict(
            v, SML_PROP_FAIL, -1, -1,
            "ran outside the stream it was given: its output changed while that stream was held "
            "(a launch on the legacy default stream or a stream of its own)");
    else
        verdict(v, SML_PROP_PASS, -1, -1, "canaries intact, inputs unchanged");
}

/* ---- 10. special values -------------------------------------------------------------------- */

static void p_special_values(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_got(e, v)) return;
    if (!ensure_want(e) || !ensure_facts(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    sml_dev_terms t;
    int decl = dev_terms(e, &t) && t.exceptions;
    int64_t within = 0;
    for (int64_t r = 0; r < c->rows; r++) {
        const sml_row_facts *f = &e->facts[r];
        const double *xr = e->xd + r * c->cols, *dyr = e->dyd ? e->dyd + r * c->cols : NULL;
        sml_dev_row facts;
        int found = 0; /* the row's facts, found at its first mismatch */
        for (int64_t j = 0; j < c->cols; j++) {
            int64_t i = r * c->cols + j;
            double w = e->want[i], g = e->got[i], x = e->xd[i];
            const char *why = NULL;
            if (isnan(w)) {
                if (!isnan(g)) why = "NaN expected";
            } else if (isinf(w)) {
                if (g != w && !(isnan(g) && sml_check_nan_allowed(c->op, f, x)))
                    why = w > 0 ? "+inf expected" : "-inf expected";
            } else if (c->op == SML_SOFTMAX && x == -INFINITY) {
                if (g != 0.0) why = "exactly 0 expected for a -inf logit";
            } else if (isnan(g) || isinf(g)) {
                sml_bound b =
                    sml_check_bound_parts(c->op, c->dtype, f, x, e->dyd ? e->dyd[i] : 0.0, w);
                int ok = isnan(g) ? f->may_overflow : sml_check_inf_allowed(c->dtype, f, w, &b, g);
                if (!ok) why = "a finite value expected";
            }
            if (why && decl && !found++) sml_dev_row_of(&t, xr, dyr, c->cols, &facts);
            if (why && decl && sml_dev_special_excused_in(&t, &facts, dyr != NULL, g, w)) {
                within++;
                continue;
            }
            if (why) {
                verdict(v, SML_PROP_FAIL, r, j,
                        "%s%.200s%srow %lld col %lld: %s: x %.9g%s, want %.9g, got %.9g",
                        decl ? "outside its declared deviation (" : "", decl ? t.text : "",
                        decl ? "): " : "", (long long)r, (long long)j, why, x,
                        sml_op_is_backward(c->op) ? " (y)" : "", w, g);
                return;
            }
        }
    }
    if (within) {
        char what[96];
        snprintf(what, sizeof what, "%lld special values other than the contract's",
                 (long long)within);
        excused(v, &t, what);
        return;
    }
    verdict(v, SML_PROP_PASS, -1, -1, "special values as the contract says");
}

/* ---- 11. backward row sums ------------------------------------------------------------------ */

static void p_bwd_sum(sml_prop_eval *e, sml_prop_verdict *v) {
    const sml_prop_case *c = e->c;
    if (!ensure_got(e, v)) return;
    if (!ensure_want(e) || !ensure_facts(e)) {
        verdict(v, SML_PROP_ERROR, -1, -1, "reference failed");
        return;
    }
    sml_dev_terms t;
    int decl = dev_terms(e, &t);
    sum_scratch sc;
    if (!sum_scratch_alloc(e, &sc, c->cols, 0)) {
        engine_oom(e, v);
        return;
    }
    int64_t judged = 0, within = 0;
    for (int64_t r = 0; r < c->rows; r++) {
        const double *w = e->want + r * c->cols;
        const sml_row_facts *f = &e->facts[r];
        int finite = !f->may_overflow;
        for (int64_t j = 0; j < c->cols && finite; j++) finite = isfinite(w[j]);
        if (!finite || row_overflows_legally(e, r)) continue;
        if (decl && row_special_excused(e, r, &t)) {
            within++;
            continue;
        }
        double got = 0.0, ref = 0.0;
        const double *g = e->got + r * c->cols;
        for (int64_t j = 0; j < c->cols; j++) {
            got += g[j];
            ref += w[j];
        }
        double bound;
        judged++;
        int k =
            row_sum_within(e, &t, decl, r, e->dyd + r * c->cols, fabs(got - ref), 0.0, &sc, &bound);
        within += k > 0;
        if (k >= 0) continue;
        verdict(v, SML_PROP_FAIL, r, -1,
                "%s%.200s%srow %lld: dx sums to %.9g, the reference's to %.9g (about 0), +- %.3g "
                "allowed",
                decl ? "outside its declared deviation (" : "", decl ? t.text : "",
                decl ? "): " : "", (long long)r, got, ref, bound);
        v->ratio = bound > 0 ? fabs(got - ref) / bound : INFINITY;
        return;
    }
    sums_verdict(v, &t, judged, within, "no finite row", "rows sum as the reference's do");
}

typedef void (*prop_fn)(sml_prop_eval *, sml_prop_verdict *);
#define FN_(id, name, ops, help) p_##name,
static const prop_fn FNS[SML_PROP_COUNT] = {SML_PROP_LIST(FN_)};
#undef FN_

void sml_prop_eval_check(sml_prop_eval *e, sml_prop_id p, sml_prop_verdict *v) {
    memset(v, 0, sizeof *v);
    v->row = v->col = -1;
    if ((unsigned)p >= SML_PROP_COUNT || !sml_prop_applies(p, e->c->op)) {
        verdict(v, SML_PROP_SKIP, -1, -1, "%s does not apply to %s", sml_prop_name(p),
                sml_op_name(e->c->op));
        return;
    }
    if (e->c->rows == 0 || e->c->cols == 0) {
        verdict(v, SML_PROP_SKIP, -1, -1, "empty problem");
        return;
    }
    FNS[p](e, v);
}
