/* merge_check.c: the shards of a check run (check --json --shard K/N) joined into the
 * result of the whole run (merge.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/merge.h"
#include "prop/accuracy_json.h"
#include "prop/prop.h"

static void copy_str(char *dst, size_t n, const sml_json *v) {
    snprintf(dst, n, "%s", sml_json_str(v) ? sml_json_str(v) : "");
}

static int read_failures(const sml_json *arr, sml_merge_run *r, const char *where, char *err,
                         size_t errlen) {
    const char *ints[] = {"case", "level", "rows", "cols", "shrunk_rows", "shrunk_cols"};
    for (size_t i = 0; i < sml_json_len(arr) && r->nfail < 16; i++) {
        const sml_json *f = sml_json_at(arr, i);
        sml_merge_failure *x = &r->failures[r->nfail++];
        int64_t *dst[] = {&x->case_index, &x->level,       &x->rows,
                          &x->cols,       &x->shrunk_rows, &x->shrunk_cols};
        copy_str(x->property, sizeof x->property, sml_json_get(f, "property"));
        copy_str(x->outcome, sizeof x->outcome, sml_json_get(f, "outcome"));
        copy_str(x->reproducer, sizeof x->reproducer, sml_json_get(f, "reproducer"));
        for (int k = 0; k < 6; k++)
            if (!sml_json_int(sml_json_get(f, ints[k]), -1, INT64_MAX, dst[k])) {
                snprintf(err, errlen, "%s: failures[%zu]: '%s' missing or not a whole number",
                         where, i, ints[k]);
                return 0;
            }
    }
    return 1;
}

/* Each case's err/bound, 8 hex digits of float32 bits each; the j-th is case j * N + K - 1. */
static int read_ratios(const sml_json *mg, int k, int n, sml_merge_run *r, const char *where,
                       char *err, size_t errlen) {
    const char *hex = sml_json_str(sml_json_get(mg, "ratios"));
    size_t len = hex ? strlen(hex) : 1;
    if (len % 8) {
        snprintf(err, errlen, "%s: merge.ratios missing or not 8 hex digits per case", where);
        return 0;
    }
    r->nratios = (int64_t)(len / 8);
    r->ratios = malloc((len / 8 + 1) * sizeof *r->ratios);
    r->index = malloc((len / 8 + 1) * sizeof *r->index);
    if (!r->ratios || !r->index) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < len / 8; i++) {
        char w[9], *end;
        memcpy(w, hex + 8 * i, 8);
        w[8] = 0;
        uint32_t bits = (uint32_t)strtoul(w, &end, 16);
        if (*end) {
            snprintf(err, errlen, "%s: merge.ratios: '%s' is not 8 hex digits", where, w);
            return 0;
        }
        memcpy(&r->ratios[i], &bits, sizeof bits);
        r->index[i] = (int64_t)i * n + k - 1;
    }
    return 1;
}

/* One run of one shard, as it is written. */
static int read_run(const sml_json *o, int k, int n, sml_merge_run *r, const char *where, char *err,
                    size_t errlen) {
    memset(r, 0, sizeof *r);
    const char *ints[] = {"cases", "failed_cases", "regressions", "regressions_failed", "ramp"};
    int64_t *dst[] = {&r->cases, &r->failed_cases, &r->regressions, &r->regressions_failed,
                      &r->ramp};
    if (!sml_json_req_str(o, "kernel", r->kernel, sizeof r->kernel, where, err, errlen) ||
        !sml_json_req_str(o, "op", r->op, sizeof r->op, where, err, errlen) ||
        !sml_json_req_str(o, "dtype", r->dtype, sizeof r->dtype, where, err, errlen) ||
        !sml_json_req_str(o, "outcome", r->outcome, sizeof r->outcome, where, err, errlen))
        return 0;
    for (int k = 0; k < 5; k++)
        if (!sml_json_req_int(o, ints[k], dst[k], where, err, errlen)) return 0;
    copy_str(r->note, sizeof r->note, sml_json_get(o, "note"));
    if (!sml_json_opt_str(o, "library", r->library, sizeof r->library, where, err, errlen))
        return 0;
    r->worst_ratio = sml_json_num(sml_json_get(o, "worst_ratio"), 0.0);
    r->worst_ulps = sml_json_num(sml_json_get(o, "worst_ulps"), 0.0);
    r->seconds = sml_json_num(sml_json_get(o, "seconds"), 0.0);
    char w[1300];
    snprintf(w, sizeof w, "%.1200s: accuracy", where);
    if (!sml_acc_read(sml_json_get(o, "accuracy"), w, &r->acc, err, errlen)) return 0;
    if (!read_failures(sml_json_get(o, "failures"), r, where, err, errlen)) return 0;
    const sml_json *mg = sml_json_get(o, "merge");
    const char *plan = sml_json_str(sml_json_get(mg, "plan"));
    if (!mg || !plan || !sml_json_req_int(mg, "max_cases", &r->max_cases, where, err, errlen) ||
        !sml_json_req_int(mg, "planned", &r->planned, where, err, errlen)) {
        snprintf(err, errlen,
                 "%s: 'merge' (max_cases, planned, plan, ratios) missing: not written with --shard",
                 where);
        return 0;
    }
    r->plan = strtoull(plan, NULL, 16);
    return read_ratios(mg, k, n, r, where, err, errlen);
}

static int prop_rank(const char *name) {
    sml_prop_id p;
    return sml_prop_parse(name, &p) == SML_OK ? (int)p : SML_PROP_COUNT;
}

/* Order of the unsharded run: saved reproducers' failures first (replayed before any case),
 * then by case index, properties in their order within a case. */
static int fail_cmp(const void *a, const void *b) {
    const sml_merge_failure *x = a, *y = b;
    if (x->case_index != y->case_index) return x->case_index < y->case_index ? -1 : 1;
    return prop_rank(x->property) - prop_rank(y->property);
}

/* Each property's first failure over the shards: the smallest case index. */
static void join_failures(sml_merge_run *d, const sml_merge_run *s) {
    for (int i = 0; i < s->nfail; i++) {
        const sml_merge_failure *f = &s->failures[i];
        int at = -1;
        for (int j = 0; j < d->nfail && f->case_index >= 0; j++)
            if (d->failures[j].case_index >= 0 && !strcmp(d->failures[j].property, f->property))
                at = j;
        if (at < 0 && d->nfail < 16)
            d->failures[d->nfail++] = *f;
        else if (at >= 0 && f->case_index < d->failures[at].case_index)
            d->failures[at] = *f;
    }
    qsort(d->failures, (size_t)d->nfail, sizeof *d->failures, fail_cmp);
}

static int outcome_rank(const char *o) {
    return !strcmp(o, "fail") ? 3 : !strcmp(o, "error") ? 2 : !strcmp(o, "pass") ? 1 : 0;
}

static int join_run(sml_merge_run *d, sml_merge_run *s, const char *pd, const char *ps, char *err,
                    size_t errlen) {
    if (strcmp(d->kernel, s->kernel) || strcmp(d->op, s->op) || strcmp(d->dtype, s->dtype)) {
        snprintf(
            err, errlen,
            "shards of different runs: kernels differ (%s runs %s %s %s where %s runs %s %s %s)",
            pd, d->kernel, d->op, d->dtype, ps, s->kernel, s->op, s->dtype);
        return 0;
    }
    if (d->plan != s->plan || d->max_cases != s->max_cases) {
        snprintf(err, errlen,
                 "shards of different runs: %s %s %s has other case settings in %s than in %s "
                 "(%lld vs %lld cases%s)",
                 d->kernel, d->op, d->dtype, ps, pd, (long long)s->max_cases,
                 (long long)d->max_cases,
                 d->plan != s->plan ? "; or other sizes, properties or shrinking" : "");
        return 0;
    }
    int rd = outcome_rank(d->outcome), rs = outcome_rank(s->outcome);
    if (rs > rd || (rd == 0 && rs == 0 && !d->note[0])) {
        snprintf(d->outcome, sizeof d->outcome, "%s", s->outcome);
        snprintf(d->note, sizeof d->note, "%s", s->note);
    }
    d->cases += s->cases;
    d->failed_cases += s->failed_cases;
    d->regressions += s->regressions;
    d->regressions_failed += s->regressions_failed;
    d->planned += s->planned;
    d->seconds += s->seconds;
    if (s->ramp > d->ramp) d->ramp = s->ramp;
    if (!(s->worst_ratio <= d->worst_ratio)) {
        d->worst_ratio = s->worst_ratio;
        d->worst_ulps = s->worst_ulps;
    }
    sml_accuracy *a = &d->acc, *b = &s->acc;
    a->cases += b->cases;
    a->digest = sml_accuracy_digest_join(a->digest, b->digest);
    if (b->judged && !(b->worst_ulps <= a->worst_ulps)) a->worst_ulps = b->worst_ulps;
    if (b->judged && (!a->judged || b->worst > a->worst ||
                      (b->worst == a->worst && b->worst_case < a->worst_case))) {
        a->worst = b->worst;
        a->worst_case = b->worst_case;
        a->worst_level = b->worst_level;
    }
    a->judged += b->judged;
    float *r = realloc(d->ratios, (size_t)(d->nratios + s->nratios + 1) * sizeof *r);
    if (r) d->ratios = r;
    int64_t *x = realloc(d->index, (size_t)(d->nratios + s->nratios + 1) * sizeof *x);
    if (x) d->index = x;
    if (!r || !x) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    memcpy(r + d->nratios, s->ratios, (size_t)s->nratios * sizeof *r);
    memcpy(x + d->nratios, s->index, (size_t)s->nratios * sizeof *x);
    d->nratios += s->nratios;
    join_failures(d, s);
    return 1;
}

/* What the unsharded run counts once a property has failed: it stops checking that property,
 * so it judges agreement on no case after agreement's first failure, and a case fails only
 * where some property fails for the first time. The shards, each unaware of the others'
 * failures, checked on: their figures are cut back to the unsharded run's. */
static void finish_run(sml_merge_run *d) {
    sml_accuracy *a = &d->acc;
    int64_t cut = INT64_MAX, distinct = 0;
    for (int i = 0; i < d->nfail; i++) {
        const sml_merge_failure *f = &d->failures[i];
        if (f->case_index >= 0 && !strcmp(f->property, "agreement") && f->case_index < cut)
            cut = f->case_index;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= d->failures[j].case_index == f->case_index;
        distinct += f->case_index >= 0 && !seen;
    }
    if (d->nfail) d->failed_cases = distinct;
    int64_t m = 0;
    a->worst_case = -1;
    for (int64_t i = 0; i < d->nratios; i++) {
        if (d->index[i] > cut || isnan(d->ratios[i])) continue;
        if (a->worst_case < 0 || d->ratios[i] > a->worst ||
            (d->ratios[i] == a->worst && d->index[i] < a->worst_case)) {
            a->worst = d->ratios[i];
            a->worst_case = d->index[i];
        }
        d->ratios[m++] = d->ratios[i];
    }
    a->judged = m;
    if (a->judged) {
        a->p99 = sml_accuracy_quantile(d->ratios, m, 0.99);
        a->median = sml_accuracy_quantile(d->ratios, m, 0.5);
        /* the engine's size level of that case (sml_prop_case_level: sizes ramp by case count) */
        int level =
            (int)(100.0 * (d->max_cases > 0 ? (double)a->worst_case / (double)d->max_cases : 0.0));
        a->worst_level = level > 100 ? 100 : level;
    } else {
        a->worst = a->p99 = a->median = a->worst_ulps = NAN;
    }
}

/* The whole run's exit status: a failure anywhere is 1; a shard that checked nothing a
 * named kernel needed, or a shard missing, is 3. */
static void finish(sml_merge *m, const sml_json *const *docs) {
    int failed = 0, unchecked = m->missing[0] != 0;
    for (size_t i = 0; i < m->nruns; i++) {
        failed |= outcome_rank(m->runs[i].outcome) >= 2;
        finish_run(&m->runs[i]);
    }
    for (int k = 0; k < m->count; k++) {
        int64_t e = 0;
        if (docs[k] && sml_json_int(sml_json_get(docs[k], "exit"), 0, 255, &e) && e == 3)
            unchecked = 1;
        int64_t t = 0;
        if (docs[k] && sml_json_int(sml_json_get(docs[k], "threads"), 0, 1 << 20, &t))
            m->threads += t;
    }
    m->exit_code = failed ? 1 : unchecked ? 3 : 0;
    for (size_t i = 0; i < m->nruns; i++) {
        const char *k = m->runs[i].kernel;
        int all_skip = 1, seen = 0;
        for (size_t j = 0; j < m->nruns; j++)
            if (!strcmp(m->runs[j].kernel, k)) all_skip &= !strcmp(m->runs[j].outcome, "skip");
        for (size_t j = 0; j < i; j++) seen |= !strcmp(m->runs[j].kernel, k);
        size_t used = strlen(m->not_run);
        if (all_skip && !seen && used + strlen(k) + 3 < sizeof m->not_run)
            snprintf(m->not_run + used, sizeof m->not_run - used, "%s%s", used ? ", " : "", k);
    }
}

sml_status sml_merge_check_docs(sml_merge *m, const sml_json *const *docs, const char *const *paths,
                                char *err, size_t errlen) {
    int first = -1;
    for (int k = 0; k < m->count; k++) {
        if (!docs[k]) continue;
        const sml_json *runs = sml_json_get(docs[k], "runs");
        size_t n = sml_json_len(runs);
        if (first < 0) {
            first = k;
            m->nruns = n;
            m->runs = calloc(n ? n : 1, sizeof *m->runs);
            if (!m->runs) return SML_ERR_OUT_OF_MEMORY;
        } else if (n != m->nruns) {
            snprintf(err, errlen,
                     "shards of different runs: kernels differ (%s has %zu kernel/op/dtype runs, "
                     "%s %zu)",
                     paths[first], m->nruns, paths[k], n);
            return SML_ERR_INVALID_ARG;
        }
        for (size_t i = 0; i < n; i++) {
            char where[1200];
            snprintf(where, sizeof where, "%s: runs[%zu]", paths[k], i);
            sml_merge_run one;
            int ok = read_run(sml_json_at(runs, i), k + 1, m->count, &one, where, err, errlen);
            if (ok && k == first) {
                m->runs[i] = one;
                continue;
            }
            ok = ok && join_run(&m->runs[i], &one, paths[first], paths[k], err, errlen);
            free(one.ratios);
            free(one.index);
            if (!ok) return strstr(err, "different runs") ? SML_ERR_INVALID_ARG : SML_ERR_FORMAT;
        }
    }
    finish(m, docs);
    return SML_OK;
}
