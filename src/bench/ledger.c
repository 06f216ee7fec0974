/* ledger.c: see ledger.h. The statuses come from sml_decide alone; this file only gathers
 * the rows it needs and writes what it said. */
#include "bench/ledger.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
            append(buf, n, "%s%s (%s)", shown ? ", " : "", label,
                   sml_bench_verdict_name(x->verdict));
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
            append(b, n,
                   " Below the claim but within the timings' noise of it (unclear: measure again, "
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
        append(b, n,
               " %s missed the contract on %d of these shapes (WRONG or a documented "
               "deviation); its time still counts as the time to beat.",
               r->claim.baseline, r->baseline_wrong);
    /* Last, so that a long reason loses this sentence to the buffer before the evidence. */
    if (partial)
        append(b, n, " Partial run: %s, and a partial run never calls a claim Supported.", part);
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
        uint64_t h = sml_accuracy_digest_u64(0, (uint64_t)op << 8 | (uint64_t)dt);
        h = sml_accuracy_digest_u64(h, (uint64_t)bc->rows);
        h = sml_accuracy_digest_u64(h, (uint64_t)bc->cols);
        h = sml_accuracy_digest_u64(h, bc->seed);
        h = sml_accuracy_digest_u64(h, (uint64_t)bc->checked_rows);
        digest = sml_accuracy_digest_join(digest, h); /* order-free: shards join to the whole */
    }
    sml_accuracy_summarize(ratio, ulps, (int64_t)run->ncases, a);
    a->seed = run->cfg.seed;
    a->cases = cases;
    a->digest = digest;
}

/* The kernel the accuracy is judged against: the claim's baseline, else cudnn, else the
 * naive form on the kernel's device; the first the run measured that is not the kernel. */
static const char *accuracy_baseline(const sml_bench_run *run, const sml_ledger_record *r) {
    const char *names[] = {r->claim.baseline, "cudnn",
                           r->device == SML_DEVICE_GPU ? "naive" : "cpu_naive"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!names[i] || !strcmp(names[i], r->kernel)) continue;
        for (size_t j = 0; j < run->nresults; j++)
            if (!strcmp(run->results[j].kernel, names[i])) return names[i];
    }
    return NULL;
}

static int build_accuracy(const sml_bench_run *run, sml_ledger_record *r) {
    size_t n = run->ncases ? run->ncases : 1;
    float *mine = malloc(n * sizeof *mine), *ulps = malloc(n * sizeof *ulps),
          *base = malloc(n * sizeof *base);
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

sml_acc_verdict sml_ledger_accuracy_verdict(const sml_ledger_record *r,
                                            const sml_ledger_accuracy **row) {
    static const int RANK[] = {
        [SML_ACC_LESS] = 3, [SML_ACC_MORE] = 2, [SML_ACC_SAME] = 1, [SML_ACC_NOT_COMPARABLE] = 0};
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

void sml_ledger_side_by_side(const sml_ledger_record *r, char *speed, size_t sn, char *acc,
                             size_t an) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < r->n; i++)
        if (isfinite(r->vs_baseline[i])) {
            lo = fmin(lo, r->vs_baseline[i]);
            hi = fmax(hi, r->vs_baseline[i]);
        }
    if (r->claim.baseline && isfinite(lo))
        snprintf(speed, sn, "%.2fx to %.2fx vs %s", lo, hi, r->claim.baseline);
    else
        snprintf(speed, sn, "-");
    const sml_ledger_accuracy *a = NULL;
    sml_acc_verdict v = sml_ledger_accuracy_verdict(r, &a);
    if (!a || v == SML_ACC_NOT_COMPARABLE)
        snprintf(acc, an, "-");
    else
        snprintf(acc, an, "%s vs %s (%s %s: worst %.3g -> %.3g)", sml_acc_verdict_name(v),
                 a->baseline, sml_op_name(a->op), sml_dtype_name(a->dtype), a->base.worst,
                 a->mine.worst);
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
            r->file = k && k->file                ? k->file
                      : k && sml_kernel_origin(k) ? sml_kernel_origin(k)
                                                  : "";
            r->origin = k ? sml_kernel_origin(k) : NULL;
            if (k) r->claim = k->claim;
            r->framework = k && (k->flags & SML_KERNEL_FRAMEWORK);
            if (k && run->plan.versus)
                r->claim = strcmp(k->name, run->plan.versus)
                               ? (sml_claim){run->plan.versus, 1.0, "all"}
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
            if (b && b->timed && b->verdict != SML_VERDICT_OK &&
                sml_shape_in_class(x->cols, r->claim.shapes))
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
