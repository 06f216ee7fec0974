/* ledger.c: see ledger.h. The statuses come from sml_decide alone; this file only gathers
 * the rows it needs and writes what it said. */
#include "bench/ledger.h"
#include "util/out_file.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/accuracy_compare.h"
#include "bench/json_write.h"
#include "softmax_lab_plugin.h"

const char *sml_ledger_limit_pattern(int reads) {
    return reads == 2 ? "2 reads + 1 write" : "1 read + 1 write";
}

void sml_case_label(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, char *buf, size_t n) {
    snprintf(buf, n, "%s %s %lldx%lld", sml_op_name(op), sml_dtype_name(dt), (long long)rows,
             (long long)cols);
}

static const sml_kernel *plan_kernel(const sml_bench_run *run, const char *name, int *baseline) {
    for (size_t i = 0; i < run->plan.nkernels; i++)
        if (!strcmp(run->plan.kernels[i]->name, name)) {
            if (baseline) *baseline = run->plan.baseline_only ? run->plan.baseline_only[i] : 0;
            return run->plan.kernels[i];
        }
    return sml_kernel_find(name);
}

static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
}

/* "at a, b, c and 4 more" for the rows with outcome o. */
static void list_where(const sml_bench_run *run, const sml_ledger_record *r, sml_row_outcome o,
                       char *buf, size_t n) {
    int shown = 0, total = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->outcome[i] != o) continue;
        total++;
        if (shown >= 6) continue;
        const sml_bench_result *x = &run->results[r->result[i]];
        char label[64];
        sml_case_label(x->op, x->dtype, x->rows, x->cols, label, sizeof label);
        if (x->verdict != SML_VERDICT_OK)
            append(buf, n, "%s%s (%s)", shown ? ", " : "", label, sml_bench_verdict_name(x->verdict));
        else
            append(buf, n, "%s%s (%.2fx)", shown ? ", " : "", label, r->vs_baseline[i]);
        shown++;
    }
    if (total > shown) append(buf, n, " and %d more", total - shown);
}

static void explain(const sml_bench_run *run, sml_ledger_record *r) {
    const sml_decision *d = &r->decision;
    char *b = r->reason;
    size_t n = sizeof r->reason;
    b[0] = 0;
    if (!r->claim.baseline) {
        append(b, n, "No claim (experimental).");
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < r->n; i++) {
            double v = run->results[r->result[i]].vs_cudnn;
            if (isfinite(v)) {
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
        }
        if (isfinite(lo) && strcmp(r->kernel, "cudnn") != 0)
            append(b, n, " Against cudnn: %.2fx to %.2fx.", lo, hi);
        if (r->baseline_only) append(b, n, " Measured as a baseline for the others.");
        return;
    }
    append(b, n, "Claim: >= %.2fx over %s on %s shapes (noise margin >= %.0f%%). ",
           r->claim.min_speedup, r->claim.baseline, r->claim.shapes, run->cfg.margin * 100);
    const int partial = sml_bench_partial(run);
    char part[128];
    sml_bench_partial_text(run, part, sizeof part);
    if (d->counted == 0) {
        append(b, n, "Not testable on this %s: %s.", partial ? "partial run" : "sweep",
               d->no_baseline ? "the baseline was not timed on these shapes"
                              : "no shape of that class was measured");
        if (partial) append(b, n, " Partial run: %s.", part);
        return;
    }
    switch (d->status) {
    case SML_DECISION_SUPPORTED:
        append(b, n, "Meets it on all %d shapes (%.2fx to %.2fx).", d->counted, d->worst_speedup,
               d->best_speedup);
        break;
    case SML_DECISION_REJECTED:
        append(b, n, "At or below parity on every one of %d shapes", d->counted);
        if (isfinite(d->best_speedup)) append(b, n, " (best %.2fx)", d->best_speedup);
        append(b, n, ".");
        if (d->wrong) append(b, n, " WRONG on %d.", d->wrong);
        break;
    case SML_DECISION_CAVEATED:
        if (partial && d->meets == d->counted) { /* Supported on what was measured */
            append(b, n, "Meets it on all %d shapes measured (%.2fx to %.2fx).", d->counted,
                   d->worst_speedup, d->best_speedup);
            break;
        }
        /* fall through */
    default:
        append(b, n, "Meets it on %d of %d shapes", d->meets, d->counted);
        if (d->meets) {
            append(b, n, ": ");
            list_where(run, r, SML_ROW_MEETS, b, n);
        }
        append(b, n, ".");
        if (d->above_parity) {
            append(b, n, " Faster than %s but short of the claim at ", r->claim.baseline);
            list_where(run, r, SML_ROW_ABOVE_PARITY, b, n);
            append(b, n, ".");
        }
        if (d->unclear) {
            append(b, n, " Below the claim but within the timings' noise of it (unclear: measure again, "
                         "more samples) at ");
            list_where(run, r, SML_ROW_UNCLEAR, b, n);
            append(b, n, ".");
        }
        if (d->losses) {
            append(b, n, " At or below parity%s at ", d->wrong ? " or WRONG" : "");
            list_where(run, r, SML_ROW_LOSS, b, n);
            append(b, n, ".");
        }
        break;
    }
    if (d->no_baseline) append(b, n, " %d shapes had no timed baseline.", d->no_baseline);
    if (r->baseline_wrong)
        append(b, n, " %s missed the contract on %d of these shapes (WRONG or a documented "
                     "deviation); its time still counts as the time to beat.",
               r->claim.baseline, r->baseline_wrong);
    /* Last, so that a long reason loses this sentence to the buffer before the evidence. */
    if (partial) append(b, n, " Partial run: %s, and a partial run never calls a claim Supported.", part);
}

/* ---- accuracy ------------------------------------------------------------------------ */

/* err/bound of a result the checker judged; NaN where it did not (an error, no result). */
static float judged_ratio(const sml_bench_result *x) {
    if (!x || (x->verdict != SML_VERDICT_OK && x->verdict != SML_VERDICT_WRONG &&
               x->verdict != SML_VERDICT_KNOWN_DEVIATION))
        return NAN;
    return (float)x->worst_ratio;
}

/* The summary over the cases of (op, dt) where `ratio` has a result (has[c]), with the digest
 * of those cases: shape, input seed and rows checked. */
static void summarize_cases(const sml_bench_run *run, sml_op op, sml_dtype dt, const float *ratio,
                            const float *ulps, const int *has, sml_accuracy *a) {
    uint64_t digest = 0;
    int64_t cases = 0;
    for (size_t c = 0; c < run->ncases; c++) {
        const sml_bench_case *bc = &run->cases[c];
        if (bc->op != op || bc->dtype != dt || !has[c]) continue;
        cases++;
        digest = sml_accuracy_digest_u64(digest, (uint64_t)op << 8 | (uint64_t)dt);
        digest = sml_accuracy_digest_u64(digest, (uint64_t)bc->rows);
        digest = sml_accuracy_digest_u64(digest, (uint64_t)bc->cols);
        digest = sml_accuracy_digest_u64(digest, bc->seed);
        digest = sml_accuracy_digest_u64(digest, (uint64_t)bc->checked_rows);
    }
    sml_accuracy_summarize(ratio, ulps, (int64_t)run->ncases, a);
    a->seed = run->cfg.seed;
    a->cases = cases;
    a->digest = digest;
}

/* The kernel the accuracy is judged against: the claim's baseline, else cudnn, else the
 * naive form on the kernel's device; the first the run measured that is not the kernel. */
static const char *accuracy_baseline(const sml_bench_run *run, const sml_ledger_record *r) {
    const char *names[] = {r->claim.baseline, "cudnn", r->device == SML_DEVICE_GPU ? "naive" : "cpu_naive"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!names[i] || !strcmp(names[i], r->kernel)) continue;
        for (size_t j = 0; j < run->nresults; j++)
            if (!strcmp(run->results[j].kernel, names[i])) return names[i];
    }
    return NULL;
}

static int build_accuracy(const sml_bench_run *run, sml_ledger_record *r) {
    size_t n = run->ncases ? run->ncases : 1;
    float *mine = malloc(n * sizeof *mine), *ulps = malloc(n * sizeof *ulps), *base = malloc(n * sizeof *base);
    float *pm = malloc(n * sizeof *pm), *pb = malloc(n * sizeof *pb), *bu = malloc(n * sizeof *bu);
    float *pmu = malloc(n * sizeof *pmu), *pbu = malloc(n * sizeof *pbu);
    int *has = malloc(n * sizeof *has), *both = malloc(n * sizeof *both);
    r->acc = calloc(SML_OP_COUNT * SML_DTYPE_COUNT, sizeof *r->acc);
    int ok = mine && ulps && base && pm && pb && bu && pmu && pbu && has && both && r->acc;
    const char *bname = accuracy_baseline(run, r);
    for (int op = 0; ok && op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            int any = 0, any_base = 0;
            for (size_t c = 0; c < run->ncases; c++) {
                const sml_bench_case *bc = &run->cases[c];
                int here = bc->op == (sml_op)op && bc->dtype == (sml_dtype)dt;
                const sml_bench_result *x = here ? sml_bench_find(run, c, r->kernel) : NULL;
                const sml_bench_result *b = here && bname ? sml_bench_find(run, c, bname) : NULL;
                has[c] = x != NULL;
                both[c] = x && b;
                any |= has[c];
                any_base |= both[c];
                mine[c] = judged_ratio(x);
                ulps[c] = x ? (float)x->worst_ulps : NAN;
                base[c] = judged_ratio(b);
                bu[c] = b ? (float)b->worst_ulps : NAN;
                pm[c] = pb[c] = pmu[c] = pbu[c] = NAN;
                if (both[c] && !isnan(mine[c]) && !isnan(base[c])) {
                    pm[c] = mine[c];
                    pb[c] = base[c];
                    pmu[c] = ulps[c];
                    pbu[c] = bu[c];
                }
            }
            if (!any) continue;
            sml_ledger_accuracy *la = &r->acc[r->nacc++];
            la->op = (sml_op)op;
            la->dtype = (sml_dtype)dt;
            summarize_cases(run, la->op, la->dtype, mine, ulps, has, &la->a);
            la->verdict = SML_ACC_NOT_COMPARABLE;
            if (!any_base) {
                snprintf(la->why, sizeof la->why, "no baseline in this run");
                continue;
            }
            snprintf(la->baseline, sizeof la->baseline, "%s", bname);
            summarize_cases(run, la->op, la->dtype, pm, pmu, both, &la->mine);
            summarize_cases(run, la->op, la->dtype, pb, pbu, both, &la->base);
            la->verdict = sml_accuracy_judge(&la->base, &la->mine, la->why, sizeof la->why);
        }
    free(mine);
    free(ulps);
    free(base);
    free(pm);
    free(pb);
    free(bu);
    free(pmu);
    free(pbu);
    free(has);
    free(both);
    return ok;
}

sml_acc_verdict sml_ledger_accuracy_verdict(const sml_ledger_record *r, const sml_ledger_accuracy **row) {
    static const int RANK[] = {[SML_ACC_LESS] = 3, [SML_ACC_MORE] = 2, [SML_ACC_SAME] = 1,
                               [SML_ACC_NOT_COMPARABLE] = 0};
    const sml_ledger_accuracy *best = NULL;
    for (size_t i = 0; i < r->nacc; i++) {
        const sml_ledger_accuracy *a = &r->acc[i];
        /* Within a verdict, the row with the largest change of the worst err/bound. */
        if (!best || RANK[a->verdict] > RANK[best->verdict] ||
            (a->verdict == best->verdict && a->verdict != SML_ACC_NOT_COMPARABLE &&
             fabs(log(sml_accuracy_ratio(a->base.worst, a->mine.worst))) >
                 fabs(log(sml_accuracy_ratio(best->base.worst, best->mine.worst)))))
            best = a;
    }
    if (row) *row = best;
    return best ? best->verdict : SML_ACC_NOT_COMPARABLE;
}

void sml_ledger_side_by_side(const sml_ledger_record *r, char *speed, size_t sn, char *acc, size_t an) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < r->n; i++)
        if (isfinite(r->vs_baseline[i])) {
            lo = fmin(lo, r->vs_baseline[i]);
            hi = fmax(hi, r->vs_baseline[i]);
        }
    if (r->claim.baseline && isfinite(lo)) snprintf(speed, sn, "%.2fx to %.2fx vs %s", lo, hi, r->claim.baseline);
    else snprintf(speed, sn, "-");
    const sml_ledger_accuracy *a = NULL;
    sml_acc_verdict v = sml_ledger_accuracy_verdict(r, &a);
    if (!a || v == SML_ACC_NOT_COMPARABLE) snprintf(acc, an, "-");
    else
        snprintf(acc, an, "%s vs %s (%s %s: worst %.3g -> %.3g)", sml_acc_verdict_name(v), a->baseline,
                 sml_op_name(a->op), sml_dtype_name(a->dtype), a->base.worst, a->mine.worst);
}

sml_status sml_ledger_build(const sml_bench_run *run, sml_ledger *out) {
    memset(out, 0, sizeof *out);
    out->rec = calloc(SML_MAX_KERNELS, sizeof *out->rec);
    if (!out->rec) return SML_ERR_OUT_OF_MEMORY;
    /* Records in the order kernels first appear in the results. */
    for (size_t i = 0; i < run->nresults; i++) {
        const sml_bench_result *x = &run->results[i];
        sml_ledger_record *r = NULL;
        for (size_t j = 0; j < out->n; j++)
            if (!strcmp(out->rec[j].kernel, x->kernel)) r = &out->rec[j];
        if (!r) {
            if (out->n >= SML_MAX_KERNELS) continue;
            r = &out->rec[out->n++];
            snprintf(r->kernel, sizeof r->kernel, "%s", x->kernel);
            r->device = x->device;
            const sml_kernel *k = plan_kernel(run, x->kernel, &r->baseline_only);
            /* A plugin kernel may leave file NULL: its library says where it is. */
            r->file = k && k->file ? k->file : k && sml_kernel_origin(k) ? sml_kernel_origin(k) : "";
            r->origin = k ? sml_kernel_origin(k) : NULL;
            if (k) r->claim = k->claim;
            if (k && run->plan.versus)
                r->claim = strcmp(k->name, run->plan.versus) ? (sml_claim){run->plan.versus, 1.0, "all"}
                                                             : (sml_claim){NULL, 0.0, NULL};
            r->result = calloc(run->nresults, sizeof *r->result);
            r->outcome = calloc(run->nresults, sizeof *r->outcome);
            r->vs_baseline = calloc(run->nresults, sizeof *r->vs_baseline);
            if (!r->result || !r->outcome || !r->vs_baseline) {
                sml_ledger_free(out);
                return SML_ERR_OUT_OF_MEMORY;
            }
        }
        r->result[r->n++] = i;
    }
    for (size_t j = 0; j < out->n; j++) {
        sml_ledger_record *r = &out->rec[j];
        sml_decision_row *rows = calloc(r->n ? r->n : 1, sizeof *rows);
        if (!rows) {
            sml_ledger_free(out);
            return SML_ERR_OUT_OF_MEMORY;
        }
        for (size_t i = 0; i < r->n; i++) {
            const sml_bench_result *x = &run->results[r->result[i]];
            const sml_bench_result *b =
                r->claim.baseline ? sml_bench_find(run, x->case_index, r->claim.baseline) : NULL;
            rows[i].cols = x->cols;
            rows[i].kernel_ok = x->verdict == SML_VERDICT_OK && x->timed;
            rows[i].baseline_ok = b && b->timed;
            if (b && b->timed && b->verdict != SML_VERDICT_OK && sml_shape_in_class(x->cols, r->claim.shapes))
                r->baseline_wrong++;
            r->vs_baseline[i] = NAN;
            if (x->timed && b && b->timed && x->m.t.median > 0)
                r->vs_baseline[i] = b->m.t.median / x->m.t.median;
            rows[i].speedup = r->vs_baseline[i];
            rows[i].kernel_spread = x->m.t.rel_spread;
            rows[i].baseline_spread = b ? b->m.t.rel_spread : NAN;
        }
        sml_decide(r->claim.baseline ? &r->claim : NULL, rows, r->n, run->cfg.margin, &r->decision,
                   r->outcome);
        /* The cases a time limit left out could have been losses: a partial run can show a
         * claim missed, never that it holds everywhere. */
        if (sml_bench_partial(run) && r->decision.status == SML_DECISION_SUPPORTED)
            r->decision.status = SML_DECISION_CAVEATED;
        free(rows);
        explain(run, r);
        if (!build_accuracy(run, r)) {
            sml_ledger_free(out);
            return SML_ERR_OUT_OF_MEMORY;
        }
    }
    return SML_OK;
}

void sml_ledger_free(sml_ledger *l) {
    if (!l->rec) return;
    for (size_t j = 0; j < l->n; j++) {
        free(l->rec[j].result);
        free(l->rec[j].outcome);
        free(l->rec[j].vs_baseline);
        free(l->rec[j].acc);
    }
    free(l->rec);
    memset(l, 0, sizeof *l);
}

const sml_ledger_record *sml_ledger_find(const sml_ledger *l, const char *kernel) {
    for (size_t j = 0; j < l->n; j++)
        if (!strcmp(l->rec[j].kernel, kernel)) return &l->rec[j];
    return NULL;
}

/* ---- JSON -------------------------------------------------------------------------------- */

static void json_measurement(sml_jw *w, const char *key, const sml_measurement *m) {
    sml_jw_key(w, key);
    sml_jw_object_inline(w);
    sml_jw_knum(w, "median_ms", m->t.median * 1e3);
    sml_jw_knum(w, "q1_ms", m->t.q1 * 1e3);
    sml_jw_knum(w, "q3_ms", m->t.q3 * 1e3);
    sml_jw_knum(w, "min_ms", m->t.min * 1e3);
    sml_jw_knum(w, "max_ms", m->t.max * 1e3);
    sml_jw_knum(w, "rel_spread", m->t.rel_spread);
    sml_jw_kint(w, "samples", m->t.n);
    sml_jw_kint(w, "batch", m->batch);
    sml_jw_kstr(w, "stop", sml_stop_reason_name(m->stop));
    sml_jw_kint(w, "held", m->held);
    sml_jw_kint(w, "holds_lost", m->holds_lost);
    sml_jw_end(w);
}

static void json_env(sml_jw *w, const sml_bench_run *run) {
    const sml_bench_env *e = &run->env;
    sml_jw_key(w, "environment");
    sml_jw_object(w);
    sml_jw_kstr(w, "time_utc", e->time_utc);
    sml_jw_kstr(w, "host", e->host);
    sml_jw_kint(w, "host_threads", e->threads);
    sml_jw_kstr(w, "softmax_lab_version", e->version);
    sml_jw_key(w, "gpu");
    if (e->gpu.present) {
        sml_jw_object(w);
        sml_jw_kstr(w, "name", e->gpu.name);
        sml_jw_kint(w, "sm_count", e->gpu.sm_count);
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", e->gpu.cc_major, e->gpu.cc_minor);
        sml_jw_kstr(w, "compute_capability", cc);
        sml_jw_kint(w, "sm_clock_mhz", e->gpu.sm_clock_mhz);
        sml_jw_kint(w, "mem_clock_mhz", e->gpu.mem_clock_mhz);
        sml_jw_kint(w, "driver_version", e->gpu.driver_version);
        sml_jw_kint(w, "runtime_version", e->gpu.runtime_version);
        sml_jw_kint(w, "l2_bytes", (int64_t)e->gpu.l2_bytes);
        sml_jw_kint(w, "global_mem_bytes", (int64_t)e->gpu.global_mem_bytes);
        sml_jw_end(w);
    } else {
        sml_jw_null(w);
    }
    sml_jw_key(w, "copy");
    sml_jw_object(w);
    if (e->has_memcpy) {
        sml_jw_knum(w, "memcpy_d2d_gbps", e->memcpy_gbps);
        sml_jw_kint(w, "memcpy_d2d_bytes", (int64_t)e->memcpy_bytes);
        json_measurement(w, "memcpy_d2d", &e->memcpy);
    }
    if (e->has_host_memcpy) {
        sml_jw_knum(w, "host_memcpy_gbps", e->host_memcpy_gbps);
        sml_jw_kint(w, "host_memcpy_bytes", (int64_t)e->host_memcpy_bytes);
        json_measurement(w, "host_memcpy", &e->host_memcpy);
    }
    sml_jw_end(w);
    sml_jw_end(w);
}

static void json_config(sml_jw *w, const sml_bench_run *run) {
    const sml_bench_config *c = &run->cfg;
    sml_jw_key(w, "config");
    sml_jw_object(w);
    sml_jw_kint(w, "min_samples", c->stop.min_samples);
    sml_jw_kint(w, "max_samples", c->stop.max_samples);
    sml_jw_knum(w, "noise", c->stop.noise);
    sml_jw_knum(w, "max_seconds", c->stop.max_seconds);
    sml_jw_knum(w, "gpu_sample_seconds", c->gpu_sample_s);
    sml_jw_kint(w, "gpu_min_batch", c->gpu_min_batch);
    sml_jw_kstr(w, "gpu_launches", c->gpu_hold ? "queued behind a hold kernel, then released" : "as made");
    sml_jw_knum(w, "cpu_sample_seconds", c->cpu_sample_s);
    sml_jw_kstr(w, "l2", c->l2_warm ? "warm" : "cold");
    sml_jw_knum(w, "l2_multiple", c->l2_multiple);
    char seed[24];
    snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)c->seed);
    sml_jw_kstr(w, "seed", seed);
    sml_jw_knum(w, "decision_margin", c->margin);
    sml_jw_knum(w, "time_limit_s", c->time_limit_s > 0 ? c->time_limit_s : NAN);
    sml_jw_kstr(w, "shape_classes", "short: cols <= 1024; mid: 1024 < cols < 131072; long: cols >= 131072");
    sml_jw_end(w);
}

static void json_evidence(sml_jw *w, const sml_bench_run *run, const sml_ledger_record *r, size_t i) {
    const sml_bench_result *x = &run->results[r->result[i]];
    const sml_bench_case *c = &run->cases[x->case_index];
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "op", sml_op_name(x->op));
    sml_jw_kstr(w, "dtype", sml_dtype_name(x->dtype));
    sml_jw_kint(w, "rows", x->rows);
    sml_jw_kint(w, "cols", x->cols);
    if (c->requested_rows && c->requested_rows != c->rows) sml_jw_kint(w, "requested_rows", c->requested_rows);
    sml_jw_kstr(w, "class", sml_shape_class(x->cols));
    sml_jw_kstr(w, "check", sml_bench_verdict_name(x->verdict));
    sml_jw_kstr(w, "check_detail", x->check);
    sml_jw_kint(w, "checked_rows", c->checked_rows);
    sml_jw_knum(w, "worst_ulps", x->worst_ulps);
    sml_jw_kstr(w, "outcome", sml_row_outcome_name(r->outcome[i]));
    if (x->auto_path[0]) sml_jw_kstr(w, "auto_path", x->auto_path);
    if (x->timed) {
        sml_jw_knum(w, "median_ms", x->m.t.median * 1e3);
        sml_jw_knum(w, "q1_ms", x->m.t.q1 * 1e3);
        sml_jw_knum(w, "q3_ms", x->m.t.q3 * 1e3);
        sml_jw_knum(w, "min_ms", x->m.t.min * 1e3);
        sml_jw_knum(w, "max_ms", x->m.t.max * 1e3);
        sml_jw_knum(w, "rel_spread", x->m.t.rel_spread);
        sml_jw_kint(w, "samples", x->m.t.n);
        sml_jw_kint(w, "batch", x->m.batch);
        sml_jw_kstr(w, "stop", sml_stop_reason_name(x->m.stop));
        sml_jw_kint(w, "held", x->m.held);
        sml_jw_kint(w, "holds_lost", x->m.holds_lost);
        sml_jw_knum(w, "gbps", x->gbps);
        sml_jw_knum(w, "frac_memcpy", x->frac_memcpy);
        sml_jw_knum(w, "frac_copy_kernel", x->frac_copy_kernel);
        sml_jw_knum(w, "frac_limit", x->frac_limit);
        sml_jw_knum(w, "vs_cudnn", x->vs_cudnn);
        sml_jw_knum(w, "vs_naive", x->vs_naive);
        sml_jw_knum(w, "vs_baseline", r->vs_baseline[i]);
        if (r->claim.baseline) {
            const sml_bench_result *b = sml_bench_find(run, x->case_index, r->claim.baseline);
            sml_jw_kstr(w, "baseline_check", b ? sml_bench_verdict_name(b->verdict) : NULL);
        }
        sml_jw_knum(w, "vs_best_other", x->vs_best_other);
        sml_jw_kstr(w, "best_other", x->best_other[0] ? x->best_other : NULL);
    }
    sml_jw_kint(w, "bytes_moved", (int64_t)c->bytes_moved);
    sml_jw_kstr(w, "cache", c->cache);
    sml_jw_kint(w, "buffer_sets", c->nsets);
    if (c->has_copy) {
        sml_jw_knum(w, "copy_kernel_ms", c->copy.t.median * 1e3);
        sml_jw_knum(w, "copy_kernel_gbps", c->copy_gbps);
    }
    if (c->has_limit) {
        sml_jw_kstr(w, "limit_pattern", sml_ledger_limit_pattern(c->limit_reads));
        sml_jw_knum(w, "limit_ms", c->limit.t.median * 1e3);
        sml_jw_knum(w, "limit_rel_spread", c->limit.t.rel_spread);
        sml_jw_knum(w, "limit_gbps", c->limit_gbps);
    }
    char seed[24];
    snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)c->seed);
    sml_jw_kstr(w, "seed", seed);
    sml_jw_end(w);
}

/* Per op and dtype: the accuracy summary in the form compare reads (accuracy_compare.h), and
 * the verdict against the baseline on the cases both judged. */
static void json_accuracy(sml_jw *w, const sml_ledger_record *r) {
    sml_jw_key(w, "accuracy");
    sml_jw_array(w);
    for (size_t i = 0; i < r->nacc; i++) {
        const sml_ledger_accuracy *a = &r->acc[i];
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "op", sml_op_name(a->op));
        sml_jw_kstr(w, "dtype", sml_dtype_name(a->dtype));
        sml_acc_write_fields(w, &a->a);
        sml_jw_key(w, "vs_baseline");
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "baseline", a->baseline[0] ? a->baseline : NULL);
        sml_jw_kstr(w, "verdict", sml_acc_verdict_name(a->verdict));
        sml_jw_kstr(w, "why", a->why);
        sml_jw_end(w);
        sml_jw_end(w);
    }
    sml_jw_end(w);
}

int sml_ledger_write_json(const sml_bench_run *run, const sml_ledger *l, FILE *f) {
    sml_jw w;
    sml_jw_init(&w, f);
    sml_jw_object(&w);
    sml_jw_kstr(&w, "schema", SML_LEDGER_SCHEMA);
    sml_jw_kstr(&w, "sweep", run->plan.sweep);
    sml_jw_key(&w, "ops");
    sml_jw_array_inline(&w);
    for (int o = 0; o < SML_OP_COUNT; o++)
        if (run->plan.ops & (1u << o)) sml_jw_str(&w, sml_op_name((sml_op)o));
    sml_jw_end(&w);
    sml_jw_kbool(&w, "shrunk_for_cpu", run->plan.shrunk);
    sml_jw_kstr(&w, "notes", run->notes);
    sml_jw_kstr(&w, "decision_rule",
                "docs/BENCHMARKING.md; code: sml_decide in src/bench/decide.c. A row meets the "
                "claim when speedup >= min_speedup*(1-margin); below that but >= "
                "min_speedup*(1-m), m = max(margin, 2*sqrt(ks^2+bs^2)) from both relative "
                "spreads, it is unclear (noise never turns a miss into a pass); Supported: every "
                "row in the claim's class meets; Rejected: none meets, is unclear or is faster "
                "than the baseline beyond m; Caveated: otherwise; Measured: no claim or nothing "
                "to test. A WRONG kernel's row is a loss.");
    sml_jw_knum(&w, "seconds", run->seconds);
    sml_jw_key(&w, "partial"); /* null: every planned case was measured */
    if (sml_bench_partial(run)) {
        sml_jw_object_inline(&w);
        sml_jw_kint(&w, "cases_measured", (int64_t)run->ncases);
        sml_jw_kint(&w, "cases_planned", (int64_t)run->ncases_planned);
        sml_jw_knum(&w, "time_limit_s", run->cfg.time_limit_s);
        sml_jw_end(&w);
    } else {
        sml_jw_null(&w);
    }
    json_env(&w, run);
    json_config(&w, run);
    sml_jw_key(&w, "records");
    sml_jw_array(&w);
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        sml_jw_object(&w);
        sml_jw_kstr(&w, "kernel", r->kernel);
        sml_jw_kstr(&w, "sweep", run->plan.sweep);
        sml_jw_kstr(&w, "device", r->device == SML_DEVICE_GPU ? "gpu" : "cpu");
        sml_jw_kstr(&w, "file", r->file);
        sml_jw_kstr(&w, "origin", r->origin);
        sml_jw_kbool(&w, "baseline_only", r->baseline_only);
        sml_jw_key(&w, "claim");
        if (r->claim.baseline) {
            sml_jw_object_inline(&w);
            sml_jw_kstr(&w, "baseline", r->claim.baseline);
            sml_jw_knum(&w, "min_speedup", r->claim.min_speedup);
            sml_jw_kstr(&w, "shapes", r->claim.shapes);
            sml_jw_end(&w);
        } else {
            sml_jw_null(&w);
        }
        sml_jw_kstr(&w, "status", sml_decision_name(r->decision.status));
        sml_jw_kstr(&w, "reason", r->reason);
        sml_jw_key(&w, "counts");
        sml_jw_object_inline(&w);
        sml_jw_kint(&w, "counted", r->decision.counted);
        sml_jw_kint(&w, "meets", r->decision.meets);
        sml_jw_kint(&w, "above_parity", r->decision.above_parity);
        sml_jw_kint(&w, "losses", r->decision.losses);
        sml_jw_kint(&w, "wrong", r->decision.wrong);
        sml_jw_kint(&w, "no_baseline", r->decision.no_baseline);
        sml_jw_kint(&w, "unclear", r->decision.unclear);
        sml_jw_end(&w);
        sml_jw_key(&w, "evidence");
        sml_jw_array(&w);
        for (size_t i = 0; i < r->n; i++) json_evidence(&w, run, r, i);
        sml_jw_end(&w);
        json_accuracy(&w, r);
        sml_jw_end(&w);
    }
    sml_jw_end(&w);
    sml_jw_end(&w);
    return sml_jw_finish(&w);
}

/* ---- Markdown ------------------------------------------------------------------------------ */

static void md_num(FILE *f, double v, const char *fmt) {
    if (isfinite(v)) fprintf(f, fmt, v);
    else fputs("-", f);
}

/* GB/s with three significant figures at CPU scale, whole numbers at GPU scale. */
static void md_gbps(FILE *f, double v) {
    md_num(f, v, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f");
}

static void md_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '\n') fputc(' ', f);
        else fputc(*s, f);
    }
}

int sml_ledger_write_md(const sml_bench_run *run, const sml_ledger *l, FILE *f) {
    const sml_bench_env *e = &run->env;
    fprintf(f, "# softmax-lab decision ledger: sweep `%s`\n\n", run->plan.sweep);
    fprintf(f, "Ops:");
    for (int o = 0; o < SML_OP_COUNT; o++)
        if (run->plan.ops & (1u << o)) fprintf(f, " %s", sml_op_name((sml_op)o));
    fprintf(f, ". Run at %s on host `%s` (%d threads), softmax-lab %s, %.1f s.\n\n", e->time_utc,
            e->host, e->threads, e->version, run->seconds);
    if (e->gpu.present)
        fprintf(f,
                "GPU: %s, %d SMs, cc %d.%d, SM clock %d MHz, memory clock %d MHz (maximum clocks "
                "as the runtime reports them), L2 %.0f MiB, driver %d, CUDA runtime %d.\n\n",
                e->gpu.name, e->gpu.sm_count, e->gpu.cc_major, e->gpu.cc_minor, e->gpu.sm_clock_mhz,
                e->gpu.mem_clock_mhz, (double)e->gpu.l2_bytes / 1048576.0, e->gpu.driver_version,
                e->gpu.runtime_version);
    else
        fprintf(f, "GPU: none on this machine.\n\n");
    if (e->has_memcpy)
        fprintf(f, "Device copy bandwidth, same run: cudaMemcpy D2D of %.0f MiB: **%.0f GB/s** "
                   "(read + written; spread %.1f%%).\n\n",
                (double)e->memcpy_bytes / 1048576.0, e->memcpy_gbps, e->memcpy.t.rel_spread * 100);
    if (e->has_host_memcpy)
        fprintf(f, "Host copy bandwidth, same run: memcpy of %.0f MiB: **%.1f GB/s**.\n\n",
                (double)e->host_memcpy_bytes / 1048576.0, e->host_memcpy_gbps);
    fprintf(f, "Timing: at least %d samples of at least %d back-to-back GPU launches (%s), until IQR/median <= %.1f%% or %.2f s per measurement; "
               "L2 %s; seed 0x%016llx; decision margin %.0f%%. Shape classes: short cols <= %d, "
               "long cols >= %d, mid between. Method: docs/BENCHMARKING.md.\n\n",
            run->cfg.stop.min_samples, run->cfg.gpu_min_batch,
            run->cfg.gpu_hold ? "queued behind a hold kernel" : "timed as made", run->cfg.stop.noise * 100,
            run->cfg.stop.max_seconds, run->cfg.l2_warm ? "warm (same buffers every call)" : "cold (buffers rotated past L2)",
            (unsigned long long)run->cfg.seed, run->cfg.margin * 100, SML_SHORT_MAX_COLS,
            SML_LONG_MIN_COLS);
    if (run->notes[0]) fprintf(f, "**Notes:** %s\n\n", run->notes);
    if (sml_bench_partial(run)) {
        char part[128];
        fprintf(f, "**Partial run:** %s; the cases after those below were not measured, and no kernel "
                   "with a claim is called Supported.\n\n",
                sml_bench_partial_text(run, part, sizeof part));
    }
    fprintf(f, "## Decisions\n\nSpeed and accuracy against the same baseline (the claim's, else cudnn), side by "
               "side; accuracy by the rule of docs/NUMERICS.md, section 8, on the cases both ran.\n\n"
               "| kernel | device | claim | status | speedup | accuracy | why |\n|---|---|---|---|---|---|---|\n");
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        fprintf(f, "| %s | %s | ", r->kernel, r->device == SML_DEVICE_GPU ? "gpu" : "cpu");
        if (r->claim.baseline)
            fprintf(f, ">= %.2fx %s (%s)", r->claim.min_speedup, r->claim.baseline, r->claim.shapes);
        else
            fprintf(f, "none");
        fprintf(f, " | **%s** | ", sml_decision_name(r->decision.status));
        char sp[96], ac[160];
        sml_ledger_side_by_side(r, sp, sizeof sp, ac, sizeof ac);
        fprintf(f, "%s | %s | ", sp, ac);
        md_escape(f, r->reason);
        fprintf(f, " |\n");
    }
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        fprintf(f, "\n## %s: %s\n\n", r->kernel, sml_decision_name(r->decision.status));
        fprintf(f, "`%s`. ", r->file);
        md_escape(f, r->reason);
        fprintf(f, "\n\n| case | class | check | ms | spread | GB/s | of memcpy | of copy kernel | "
                   "of limit | vs cudnn | vs naive | vs claim baseline | vs best other | outcome | "
                   "cache | samples |\n");
        fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < r->n; i++) {
            const sml_bench_result *x = &run->results[r->result[i]];
            const sml_bench_case *c = &run->cases[x->case_index];
            char label[64];
            sml_case_label(x->op, x->dtype, x->rows, x->cols, label, sizeof label);
            fprintf(f, "| %s | %s | %s | ", label, sml_shape_class(x->cols), sml_bench_verdict_name(x->verdict));
            if (x->timed) {
                md_num(f, x->m.t.median * 1e3, "%.4f");
                fputs(" | ", f);
                md_num(f, x->m.t.rel_spread * 100, "%.1f%%");
                fputs(" | ", f);
                md_gbps(f, x->gbps);
                fputs(" | ", f);
                md_num(f, x->frac_memcpy * 100, "%.0f%%");
                fputs(" | ", f);
                md_num(f, x->frac_copy_kernel * 100, "%.0f%%");
                fputs(" | ", f);
                md_num(f, x->frac_limit * 100, "%.0f%%");
                fputs(" | ", f);
                md_num(f, x->vs_cudnn, "%.2fx");
                fputs(" | ", f);
                md_num(f, x->vs_naive, "%.2fx");
                fputs(" | ", f);
                md_num(f, r->vs_baseline[i], "%.2fx");
                fputs(" | ", f);
                md_num(f, x->vs_best_other, "%.2fx");
                fprintf(f, "%s%s", x->best_other[0] ? " " : "", x->best_other);
            } else {
                fputs("- | - | - | - | - | - | - | - | - | -", f);
            }
            fprintf(f, " | %s | %s | %d x%d%s |", sml_row_outcome_name(r->outcome[i]), c->cache,
                    x->m.t.n, x->m.batch, sml_bench_hold_lost(run, x) ? " (unheld)" : "");
            fputc('\n', f);
            if (x->verdict != SML_VERDICT_OK) {
                fputs("| | | ", f);
                md_escape(f, x->check);
                fputs(" | | | | | | | | | | | | | |", f);
                fputc('\n', f);
            }
        }
    }
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        if (!r->nacc) continue;
        fprintf(f, "\n### %s: accuracy (err/bound per case: its worst element)\n\n| op | dtype | cases | judged | "
                   "worst | p99 | median | worst ulp | baseline | accuracy vs baseline |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n", r->kernel);
        for (size_t i = 0; i < r->nacc; i++) {
            const sml_ledger_accuracy *a = &r->acc[i];
            fprintf(f, "| %s | %s | %lld | %lld | ", sml_op_name(a->op), sml_dtype_name(a->dtype),
                    (long long)a->a.cases, (long long)a->a.judged);
            md_num(f, a->a.worst, "%.3g");
            fputs(" | ", f);
            md_num(f, a->a.p99, "%.3g");
            fputs(" | ", f);
            md_num(f, a->a.median, "%.3g");
            fputs(" | ", f);
            md_num(f, a->a.worst_ulps, "%.3g");
            fprintf(f, " | %s | **%s**: ", a->baseline[0] ? a->baseline : "-", sml_acc_verdict_name(a->verdict));
            md_escape(f, a->why);
            fputs(" |\n", f);
        }
    }
    fprintf(f, "\n## Copy references (same run, same buffer rotation as the case)\n\n"
               "The limit moves the case's bytes with the op's own pattern: one read and one write "
               "forward (the copy itself), two reads and one write backward.\n\n"
               "| case | bytes moved | cache | copy ms | copy GB/s | limit | limit ms | limit GB/s |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < run->ncases; i++) {
        const sml_bench_case *c = &run->cases[i];
        if (!c->has_copy && !c->has_limit) continue;
        char label[64];
        sml_case_label(c->op, c->dtype, c->rows, c->cols, label, sizeof label);
        fprintf(f, "| %s | %.1f MiB | %s | ", label, (double)c->bytes_moved / 1048576.0, c->cache);
        md_num(f, c->has_copy ? c->copy.t.median * 1e3 : NAN, "%.4f");
        fputs(" | ", f);
        md_gbps(f, c->has_copy ? c->copy_gbps : NAN);
        fprintf(f, " | %s | ", c->has_limit ? sml_ledger_limit_pattern(c->limit_reads) : "-");
        md_num(f, c->has_limit ? c->limit.t.median * 1e3 : NAN, "%.4f");
        fputs(" | ", f);
        md_gbps(f, c->has_limit ? c->limit_gbps : NAN);
        fputs(" |\n", f);
    }
    return ferror(f) ? -1 : 0;
}

int sml_mkdir_p(const char *dir) {
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

sml_status sml_ledger_save_file(const sml_bench_run *run, const sml_ledger *l, const char *path,
                                int json, char *err, size_t errlen) {
    sml_out_file o;
    if (sml_out_open(&o, path, err, errlen) != SML_OK) return SML_ERR_IO;
    if (json ? sml_ledger_write_json(run, l, o.f) : sml_ledger_write_md(run, l, o.f)) {
        sml_out_abort(&o);
        snprintf(err, errlen, "%s: write failed", path);
        return SML_ERR_IO;
    }
    return sml_out_commit(&o, err, errlen);
}

sml_status sml_ledger_save(const sml_bench_run *run, const sml_ledger *l, const char *dir,
                           const char *stem, char *json_path, char *md_path, size_t path_len,
                           char *err, size_t errlen) {
    if (sml_mkdir_p(dir) != 0) {
        snprintf(err, errlen, "cannot create the ledger directory %s: %s", dir, strerror(errno));
        return SML_ERR_IO;
    }
    snprintf(json_path, path_len, "%s/%s.json", dir, stem);
    snprintf(md_path, path_len, "%s/%s.md", dir, stem);
    sml_status s = sml_ledger_save_file(run, l, json_path, 1, err, errlen);
    if (s == SML_OK) s = sml_ledger_save_file(run, l, md_path, 0, err, errlen);
    return s;
}
