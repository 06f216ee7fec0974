/* crash.c: the verdict on a worker that died. The case it was running is on the board; the
 * supervisor draws it again (drawing runs no kernel: a case is a pure function of the seed,
 * its index and its level), saves it as a reproducer whose message is the cause, and
 * prints a FAIL report like the engine's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "core/rng.h"
#include "prop/gen.h"
#include "prop/repro.h"
#include "prop/shrink.h"
#include "worker/crash.h"
#include "worker/worker.h"

/* Shrinking a case that ended a worker, or that a CUDA error ended (the context it left
 * cannot judge another case): each candidate is saved as a reproducer in a scratch folder and
 * replayed in a fresh worker; it still fails when it ends the same way (the replay's outcome
 * is `want` and its message holds `head`: the cause up to " during", or the CUDA error). */
typedef struct wk_test {
    const sml_prop_job *job;
    char head[384];
    char dir[64];
    sml_prop_outcome want;
} wk_test;

static void empty_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    char path[600];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

/* A reproducer's description of the job's case `drawn`, with the kernel's library. */
static void describe(const sml_prop_job *job, sml_prop_id prop, sml_prop_outcome outcome,
                     const char *message, int64_t index, int level, const sml_prop_case *drawn,
                     int64_t steps, sml_prop_repro *m) {
    sml_prop_repro_describe(m, job->k->name, prop, outcome, message, job->cfg.seed, index, level,
                            drawn, steps);
    const char *lib = sml_kernel_library(job->k);
    if (lib) snprintf(m->load, sizeof m->load, "%s", lib);
}

/* The job's case `index` at `level`, drawn again (drawing runs no kernel). */
static sml_status draw(const sml_prop_job *job, int64_t index, int level, sml_prop_case *c) {
    return sml_prop_gen_case(job->k, job->op, job->dtype,
                             sml_derive_seed(job->cfg.seed, (uint64_t)index), level,
                             &job->cfg.sizes, c);
}

/* "shrunk in fresh workers to RxC ld L +O (S steps, E tried)", no newline. */
static void print_shrunk(FILE *L, const sml_prop_failure *f) {
    fprintf(L, "shrunk in fresh workers to %lldx%lld ld %lld +%lld%s (%lld steps, %lld tried)",
            (long long)f->s_rows, (long long)f->s_cols, (long long)f->s_ld, (long long)f->s_offset,
            f->s_inplace ? " inplace" : "", (long long)f->shrink_steps, (long long)f->shrink_evals);
}

/* The reproducer's path and the command that replays it. */
static void print_repro(FILE *L, const sml_prop_job *job, const char *path) {
    char load[4400];
    const char *lib = sml_kernel_library(job->k);
    sml_prop_load_arg(lib, load, sizeof load);
    fprintf(L, "  reproducer: %s\n", path);
    fprintf(L, "  replay: %s%s %s\n", sml_prop_replay_prefix(lib, job->cfg.replay_cmd), load, path);
}

static void test_in_worker(void *ctx, sml_prop_id p, const sml_prop_case *c, sml_prop_verdict *v) {
    wk_test *t = ctx;
    memset(v, 0, sizeof *v);
    v->outcome = SML_PROP_PASS;
    v->row = v->col = -1;
    sml_prop_repro m;
    describe(t->job, p, t->want, t->head, -1, 0, c, 0, &m);
    char path[600], err[256];
    sml_prop_replay_result r;
    if (sml_prop_repro_save(t->dir, c, &m, NULL, path, sizeof path, err, sizeof err) == SML_OK &&
        sml_worker_replay(path, t->job->k->name, &r) == SML_OK && r.outcome == t->want &&
        strstr(r.message, t->head)) {
        v->outcome = t->want;
        snprintf(v->msg, sizeof v->msg, "%s", r.message);
    }
    empty_dir(t->dir);
}

/* The smallest case found that still ends a worker the same way, into *small (a copy of c
 * when none is smaller); 1 when it is smaller. */
static int shrink_case(const sml_prop_job *job, sml_prop_id prop, const sml_prop_case *c,
                       const char *cause, sml_prop_outcome want, sml_prop_case *small,
                       sml_prop_shrink_stats *st) {
    wk_test t = {job, "", "/tmp/sml-shrink-XXXXXX", want};
    const char *tmp = getenv("TMPDIR");
    if (tmp && *tmp && strlen(tmp) < 40) snprintf(t.dir, sizeof t.dir, "%s/sml-shrink-XXXXXX", tmp);
    const char *during = want == SML_PROP_FAIL ? strstr(cause, " during") : NULL;
    snprintf(t.head, sizeof t.head, "%.*s",
             (int)(during ? (size_t)(during - cause) : strlen(cause)), cause);
    memset(st, 0, sizeof *st);
    if (!mkdtemp(t.dir)) return sml_prop_case_copy(small, c) == SML_OK ? 0 : -1;
    sml_prop_verdict first = {want, 0, 0.0, 0.0, -1, -1, "", 0.0, 0.0}, last;
    snprintf(first.msg, sizeof first.msg, "%s", cause);
    sml_status s =
        sml_prop_shrink_by(test_in_worker, &t, prop, want, c, &first, job->cfg.shrink_max_evals,
                           job->cfg.shrink_max_seconds, small, &last, st);
    empty_dir(t.dir);
    rmdir(t.dir);
    if (s != SML_OK) return sml_prop_case_copy(small, c) == SML_OK ? 0 : -1;
    return st->steps > 0;
}

/* Draw the case the slot names again, shrink it in fresh workers (a death that was not a
 * deadline: a hang would cost a deadline per candidate) and save it; the reproducer's path
 * in f->repro. */
static void save_case(sml_prop_job *job, const sml_worker_slot *b, const char *cause, int killed,
                      sml_prop_failure *f) {
    const sml_prop_config *cfg = &job->cfg;
    int phase = atomic_load(&b->phase);
    if (phase == SML_PROP_PHASE_REGRESSION) {
        char **paths;
        size_t np = sml_prop_repro_list(cfg->regressions_dir, &paths);
        if (b->index >= 0 && (size_t)b->index < np)
            snprintf(f->repro, sizeof f->repro, "%s", paths[b->index]);
        sml_prop_repro_list_free(paths, np);
        return;
    }
    if ((phase != SML_PROP_PHASE_CASE && phase != SML_PROP_PHASE_SHRINK) || b->index < 0) return;
    sml_prop_case c;
    if (draw(job, b->index, b->level, &c) != SML_OK) return;
    f->case_seed = c.seed;
    f->rows = c.rows;
    f->cols = c.cols;
    f->ld = c.ld;
    f->offset = c.offset;
    f->inplace = c.inplace;
    snprintf(f->family, sizeof f->family, "%s", c.family);
    sml_prop_case small;
    sml_prop_shrink_stats st = {0, 0, 0};
    int shrunk = cfg->shrink && !killed && cfg->save_dir
                     ? shrink_case(job, f->prop, &c, cause, SML_PROP_FAIL, &small, &st)
                     : 0;
    if (shrunk < 0 || (!shrunk && sml_prop_case_copy(&small, &c) != SML_OK)) {
        sml_prop_case_free(&c);
        return;
    }
    sml_prop_failure_shrunk(f, &small, &st);
    if (cfg->save_dir) {
        sml_prop_repro m;
        describe(job, f->prop, SML_PROP_FAIL, cause, b->index, b->level, &c, st.steps, &m);
        char err[512];
        if (sml_prop_repro_save(cfg->save_dir, &small, &m, cfg->replay_cmd, f->repro,
                                sizeof f->repro, err, sizeof err) != SML_OK)
            f->repro[0] = 0;
    }
    sml_prop_case_free(&small);
    sml_prop_case_free(&c);
}

static void report(const sml_prop_job *job, const sml_prop_failure *f, const char *cause) {
    FILE *L = sml_prop_report_begin(&job->cfg);
    fprintf(L, "FAIL %s %s %s: the kernel's worker %s\n", job->k->name, sml_op_name(job->op),
            sml_dtype_name(job->dtype), cause);
    if (f->rows)
        fprintf(L,
                "  case %lld: %lldx%lld ld %lld +%lld%s (%s, seed 0x%016llx), property %s being "
                "checked\n",
                (long long)f->case_index, (long long)f->rows, (long long)f->cols, (long long)f->ld,
                (long long)f->offset, f->inplace ? " inplace" : "", f->family,
                (unsigned long long)f->case_seed, sml_prop_name(f->prop));
    if (f->shrink_steps > 0) {
        fprintf(L, "  ");
        print_shrunk(L, f);
        fprintf(L, "\n");
    }
    if (f->repro[0]) print_repro(L, job, f->repro);
    fflush(L);
    sml_prop_report_end(&job->cfg, L);
}

/* The run's time budget ran out while the job's case was in flight, and its worker was
 * killed so that the run ends on time. That case's own deadline had not passed: it was not
 * judged, and its end is no verdict on the kernel. The job keeps the cases judged before it
 * (none: skipped, with the reason). */
static void budget_end(sml_prop_job *job, const sml_worker_slot *b, const sml_wk_death *d) {
    sml_prop_result *res = &job->res;
    memset(res, 0, sizeof *res);
    res->kernel = job->k;
    res->op = job->op;
    res->dtype = job->dtype;
    res->accuracy.worst_case = -1;
    res->cases = atomic_load(&b->cases);
    res->failed_cases = atomic_load(&b->failed_cases);
    res->seconds = d->seconds;
    res->outcome = res->failed_cases > 0 ? SML_PROP_FAIL
                   : res->cases > 0      ? SML_PROP_PASS
                                         : SML_PROP_SKIP;
    char at[96];
    sml_wk_doing(b, at, sizeof at);
    snprintf(res->note, sizeof res->note, "the run's time budget ran out %.60s, not judged", at);
    job->status = SML_OK;
    FILE *L = sml_prop_report_begin(&job->cfg);
    fprintf(L,
            "note: %s %s %s: the run's time budget ran out %s; that case was not judged (its "
            "worker was stopped to end the run on time), the %lld before it were\n",
            job->k->name, sml_op_name(job->op), sml_dtype_name(job->dtype), at,
            (long long)res->cases);
    fflush(L);
    sml_prop_report_end(&job->cfg, L);
}

void sml_wk_crash_result(sml_prop_job *job, const sml_worker_slot *b, const sml_wk_death *d) {
    if (d->killed == 2) {
        budget_end(job, b, d);
        return;
    }
    sml_prop_result *res = &job->res;
    char cause[320];
    sml_wk_cause(d, b, cause, sizeof cause);
    memset(res, 0, sizeof *res);
    res->kernel = job->k;
    res->op = job->op;
    res->dtype = job->dtype;
    res->outcome = SML_PROP_FAIL;
    res->accuracy.worst_case = -1;
    snprintf(res->note, sizeof res->note, "%.180s", cause);
    res->cases = atomic_load(&b->cases);
    res->failed_cases = atomic_load(&b->failed_cases) + 1;
    res->seconds = d->seconds;
    sml_prop_failure *f = &res->failures[res->nfail++];
    f->prop = (sml_prop_id)(b->prop >= 0 && b->prop < SML_PROP_COUNT ? b->prop : 0);
    f->outcome = SML_PROP_FAIL;
    f->case_index = b->index;
    f->level = b->level;
    snprintf(f->message, sizeof f->message, "%s", cause);
    res->killed_at[f->prop] = res->cases + 1;
    res->fails[f->prop]++;
    save_case(job, b, cause, d->killed, f);
    job->status = SML_OK;
    report(job, f, cause);
}

/* A failure a CUDA error ended, not shrunk where it happened (the engine stops there: the
 * context may be lost): its case drawn again and shrunk in fresh workers, the smallest one
 * that ends in the same error saved in place of the first reproducer, and said. */
static void shrink_lost(sml_prop_job *job, sml_prop_failure *f) {
    const sml_prop_config *cfg = &job->cfg;
    sml_prop_case c, small;
    if (draw(job, f->case_index, f->level, &c) != SML_OK) return;
    /* A regression's failure names no case of the run: the drawn one must be the one that failed. */
    sml_prop_shrink_stats st = {0, 0, 0};
    int shrunk = c.seed == f->case_seed && c.rows == f->rows && c.cols == f->cols
                     ? shrink_case(job, f->prop, &c, f->message, SML_PROP_ERROR, &small, &st)
                     : -1;
    if (shrunk > 0) {
        sml_prop_repro m;
        describe(job, f->prop, SML_PROP_ERROR, f->message, f->case_index, f->level, &c, st.steps,
                 &m);
        char path[1024], err[512];
        if (sml_prop_repro_save(cfg->save_dir, &small, &m, cfg->replay_cmd, path, sizeof path, err,
                                sizeof err) == SML_OK) {
            if (f->repro[0] && strcmp(f->repro, path)) unlink(f->repro);
            snprintf(f->repro, sizeof f->repro, "%s", path);
        }
        sml_prop_failure_shrunk(f, &small, &st);
        FILE *L = sml_prop_report_begin(cfg);
        fprintf(L, "  %s %s %s: case %lld (%lldx%lld) ", job->k->name, sml_op_name(job->op),
                sml_dtype_name(job->dtype), (long long)f->case_index, (long long)f->rows,
                (long long)f->cols);
        print_shrunk(L, f);
        fprintf(L, ", the same CUDA error\n");
        if (f->repro[0]) print_repro(L, job, f->repro);
        fflush(L);
        sml_prop_report_end(cfg, L);
    }
    if (shrunk >= 0) sml_prop_case_free(&small);
    sml_prop_case_free(&c);
}

void sml_wk_shrink_lost_context(sml_prop_job *job) {
    if (!job->cfg.shrink || !job->cfg.save_dir) return;
    for (int i = 0; i < job->res.nfail; i++) {
        sml_prop_failure *f = &job->res.failures[i];
        if (sml_prop_context_lost(f->outcome, f->message) && f->shrink_steps == 0 &&
            f->case_index >= 0)
            shrink_lost(job, f);
    }
}
