/* verdict.c: the edge-shape harness's bookkeeping: which kernels run on a case, what a run's
 * result counts as (pass, within the kernel's declared deviation, fail), and the lines that
 * say so with the command that reproduces them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "edge/harness.h"
#include "kernels/auto_dispatch.h"
#include "kernels/vector_width.h"

static const char *const VARIANT_NAMES[SML_EDGE_LAYOUT_COUNT] = {"dense", "padded-ld", "misaligned",
                                                                 "in-place"};

/* The command that re-runs one case of one kernel, with this run's plugins and seed. */
static void repro_line(const sml_edge_ctx *c, const char *kernel, const sml_edge_case *t, char *buf,
                       size_t n) {
    char loads[2048] = "";
    for (int i = 0; i < c->o.nloads; i++) {
        size_t used = strlen(loads);
        snprintf(loads + used, sizeof loads - used, " --load %s", c->o.loads[i]);
    }
    int len =
        snprintf(buf, n,
                 "%s%s%s --kernel %s --op %s --dtype %s --rows %" PRId64 " --cols %" PRId64
                 " --ld %" PRId64 " --offset %" PRId64 " --inplace %d --seed 0x%" PRIx64,
                 c->o.argv0, loads, c->o.cpu ? " --cpu" : "", kernel, sml_op_name(t->op),
                 sml_dtype_name(t->dt), t->rows, t->cols, t->ld, t->offset, t->inplace, c->o.seed);
    if (t->sampled && len > 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " --sampled");
    if (c->o.strict && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " --strict");
}

static void describe(const sml_edge_ctx *c, const sml_kernel *k, const sml_edge_case *t, char *buf,
                     size_t n) {
    int len = snprintf(buf, n, "%s %s %s rows=%" PRId64 " cols=%" PRId64 " ld=%" PRId64 " (%s)",
                       k->name, sml_op_name(t->op), sml_dtype_name(t->dt), t->rows, t->cols, t->ld,
                       VARIANT_NAMES[t->var]);
    if (len > 0 && (size_t)len < n && !strcmp(k->name, "auto"))
        snprintf(buf + len, n - (size_t)len, " auto->%s",
                 sml_auto_path_name(
                     sml_auto_pick(t->op, t->dt, t->rows, t->cols,
                                   t->offset == 0 && sml_stride_takes_vectors(t->ld, t->dt), c->sms,
                                   c->has_clusters, c->dram)));
}

int sml_edge_kernel_selected(const sml_edge_ctx *c, size_t ki, const sml_kernel *k) {
    if (k->device != c->dev || (ki < MAX_KERNELS && c->ended[ki])) return 0;
    return !c->o.kernel || !strcmp(c->o.kernel, k->name);
}

void sml_edge_each_kernel(sml_edge_ctx *c, const sml_edge_case *t, const sml_edge_case_runner *r,
                          void *state, size_t state_bytes) {
    memset(state, 0, state_bytes);
    int ok = r->setup(c, t, state) == 0;
    for (size_t ki = 0; ok && ki < sml_kernel_count() && ki < MAX_KERNELS; ki++) {
        const sml_kernel *k = sml_kernel_at(ki);
        if (!sml_edge_kernel_selected(c, ki, k)) continue;
        if (r->run(c, t, state, ki, k)) break;
        if (c->lost) {
            r->release(c, state);
            memset(state, 0, state_bytes);
            c->lost = 0;
            ok = r->setup(c, t, state) == 0;
        }
    }
    r->release(c, state);
}

/* 1 when k is registered for this op, dtype and row length (what sml_validate checks
 * before it looks at pointers and devices). */
int sml_edge_kernel_supports(const sml_kernel *k, const sml_edge_case *t) {
    if (!(k->ops & (1u << t->op)) || !(k->dtypes & (1u << t->dt))) return 0;
    return t->cols >= k->min_cols && (k->max_cols == 0 || t->cols <= k->max_cols);
}

static void record(sml_edge_ctx *c, size_t ki, sml_dtype dt, int fail, const sml_check_report *r) {
    sml_edge_cell *s = &c->stats[ki][dt];
    s->cases++;
    if (fail) s->fails++;
    if (r && r->checked > 0) {
        if (r->worst_ratio > s->worst_ratio) s->worst_ratio = r->worst_ratio;
        if (r->worst_ulps > s->worst_ulps) s->worst_ulps = r->worst_ulps;
    }
}

int sml_edge_terms(const sml_edge_ctx *c, const sml_kernel *k, const sml_edge_case *t,
                   sml_dev_terms *terms) {
    return sml_dev_terms_get(c->o.strict ? NULL : k->deviation, t->op, t->dt, terms);
}

sml_status sml_edge_check(const sml_edge_ctx *c, const sml_kernel *k, const sml_edge_case *t,
                          int64_t rows, int64_t ld, const void *x, const void *dy,
                          const double *want, const void *got, sml_check_report *rep,
                          sml_dev_report *d) {
    sml_dev_terms terms;
    int decl = sml_edge_terms(c, k, t, &terms);
    memset(rep, 0, sizeof *rep);
    return sml_dev_check_against(decl ? &terms : NULL, t->op, t->dt, rows, t->cols, ld, x, dy, want,
                                 got, rep, d);
}

/* Count a failure; print it with its reproduce line unless this kernel and dtype already
 * printed PRINT_CAP (a kernel broken everywhere would otherwise bury the summary). */
static void report_fail(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                        const sml_check_report *rep, const char *detail) {
    sml_edge_cell *cl = &c->stats[ki][t->dt];
    if (cl->fails < PRINT_CAP) {
        char repro[512], what[256];
        repro_line(c, k->name, t, repro, sizeof repro);
        describe(c, k, t, what, sizeof what);
        sml_edge_tally_fail(&c->tally, repro, "%s: %s", what, detail);
        if (cl->fails + 1 == PRINT_CAP)
            printf("  (further failures of %s %s are counted, not printed)\n", k->name,
                   sml_dtype_name(t->dt));
    } else {
        c->tally.failed++;
    }
    record(c, ki, t->dt, 1, rep);
}

/* A failure of the run itself (validation, launch, an overwritten canary, a changed input). */
void sml_edge_fail_run(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                       const char *what, const char *detail) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s%s", what, detail);
    report_fail(c, ki, k, t, NULL, msg);
}

/* The verdict on a checked output: pass; within the kernel's declared deviation (every miss
 * covered by its terms: counted and printed with them, never a plain pass); or fail (with the
 * terms it broke, for a kernel that declares any). `detail` is the checker's message. */
void sml_edge_judge(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                    sml_status s, const sml_check_report *rep, const sml_dev_report *d,
                    const char *detail) {
    if (s == SML_OK && rep->pass) {
        sml_edge_tally_pass(&c->tally);
        record(c, ki, t->dt, 0, rep);
        return;
    }
    sml_dev_terms terms;
    int decl = sml_edge_terms(c, k, t, &terms);
    char why[400];
    if (s == SML_OK && decl) sml_dev_report_why(d, &terms, why, sizeof why);
    if (s == SML_OK && decl && sml_dev_report_pass(d)) {
        sml_edge_cell *cl = &c->stats[ki][t->dt];
        if (cl->known < PRINT_CAP) {
            char what[256], repro[512];
            describe(c, k, t, what, sizeof what);
            repro_line(c, k->name, t, repro, sizeof repro);
            printf("WITHIN DECLARED DEVIATION %s: %s: %s; largest excused error %.3g ulp (%.3g x "
                   "the bound): %s\n  reproduce: %s\n",
                   c->tally.name, what, why, d->worst_ulps, d->worst_ratio, detail, repro);
            if (cl->known + 1 == PRINT_CAP)
                printf("  (further cases of %s %s within its declared deviation are counted, not "
                       "printed)\n",
                       k->name, sml_dtype_name(t->dt));
        }
        cl->known++;
        sml_edge_tally_pass(&c->tally);
        if (d->worst_ratio > cl->known_ratio) cl->known_ratio = d->worst_ratio;
        if (d->worst_ulps > cl->known_ulps) cl->known_ulps = d->worst_ulps;
        record(c, ki, t->dt, 0, rep);
        return;
    }
    if (s == SML_OK && decl) {
        char both[1024];
        snprintf(both, sizeof both, "%s; %s", why, detail);
        report_fail(c, ki, k, t, rep, both);
        return;
    }
    report_fail(c, ki, k, t, rep, detail);
}

int sml_edge_fail_status(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                         sml_status s) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s (%s)", sml_strerror(s),
             c->dev == SML_DEVICE_GPU ? sml_last_cuda_error() : "cpu");
    sml_edge_fail_run(c, ki, k, t, "run failed: ", msg);
    if (s != SML_ERR_CUDA) return 0;
    if (c->remote) { /* the worker's context: the case again in a fresh worker (dev.c) */
        c->lost = 1;
        return 0;
    }
    c->dead = 1;
    return 1;
}
