/* parts.c: a job's parts (parts.h): which cases each holds, what they share while they run,
 * and the join of their results. */
#include "prop/parts.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/accuracy.h"

/* A case's position in the run's slice: the parts interleave over it. */
static int64_t slice_position(const sml_prop_config *cfg, int64_t i) {
    return cfg->shard.count > 1 ? i / cfg->shard.count : i;
}

int sml_prop_part_has(const sml_prop_config *cfg, int64_t i) {
    if (!sml_shard_has(&cfg->shard, i)) return 0;
    if (cfg->case_only && (i >= cfg->case_cap || !cfg->case_only[i])) return 0;
    return cfg->part.count <= 1 || slice_position(cfg, i) % cfg->part.count == cfg->part.index;
}

int64_t sml_prop_planned(const sml_prop_config *cfg) {
    if (cfg->only_case >= 0) return 1;
    int64_t first = cfg->first_case > 0 ? cfg->first_case : 0, n = 0;
    if (first >= cfg->max_cases) return 0;
    if (cfg->shard.count <= 1 && cfg->part.count <= 1 && !cfg->case_only)
        return cfg->max_cases - first;
    for (int64_t i = first; i < cfg->max_cases; i++) n += sml_prop_part_has(cfg, i);
    return n;
}

int sml_prop_parts_for(const sml_prop_config *cfg) {
    if (cfg->only_case >= 0 || cfg->max_seconds > 0.0 || cfg->stop_on_failure ||
        cfg->ramp_by_time || cfg->part.count > 1)
        return 1;
    int64_t n = sml_prop_planned(cfg) / SML_PROP_PART_CASES;
    return n < 1 ? 1 : n > SML_PROP_MAX_THREADS ? SML_PROP_MAX_THREADS : (int)n;
}

struct sml_prop_part_share {
    _Atomic int64_t first_fail[SML_PROP_COUNT]; /* INT64_MAX: none yet */
    atomic_int stop;
};

sml_prop_part_share *sml_prop_part_share_new(void) {
    sml_prop_part_share *s = malloc(sizeof *s);
    if (!s) return NULL;
    for (int p = 0; p < SML_PROP_COUNT; p++) atomic_init(&s->first_fail[p], INT64_MAX);
    atomic_init(&s->stop, 0);
    return s;
}

void sml_prop_part_share_free(sml_prop_part_share *s) { free(s); }

int sml_prop_part_failed_before(const sml_prop_part_share *s, int p, int64_t i) {
    return s && atomic_load(&((sml_prop_part_share *)s)->first_fail[p]) < i;
}

void sml_prop_part_failed(sml_prop_part_share *s, int p, int64_t i) {
    if (!s) return;
    int64_t cur = atomic_load(&s->first_fail[p]);
    while (i < cur && !atomic_compare_exchange_weak(&s->first_fail[p], &cur, i)) {}
}

void sml_prop_part_stop(sml_prop_part_share *s) {
    if (s) atomic_store(&s->stop, 1);
}

int sml_prop_part_stopped(const sml_prop_part_share *s) {
    return s && atomic_load(&((sml_prop_part_share *)s)->stop);
}

void sml_prop_case_log_free(sml_prop_case_log *l) {
    free(l->ratio);
    free(l->ulps);
    free(l->level);
    free(l->index);
    memset(l, 0, sizeof *l);
}

void sml_prop_case_log_summarize(const sml_prop_case_log *l, const sml_prop_config *cfg,
                                 sml_prop_result *res) {
    sml_accuracy *s = &res->accuracy;
    uint64_t digest = s->digest;
    sml_accuracy_summarize(l->ratio, l->ulps, l->n, s);
    s->seed = cfg->seed;
    s->cases = res->cases;
    s->digest = digest;
    s->worst_level = 0;
    if (s->worst_case >= 0) {
        s->worst_level = l->level[s->worst_case];
        s->worst_case = l->index[s->worst_case];
    }
    for (int64_t i = 0; i < l->n; i++) {
        if (l->index[i] >= cfg->case_cap) continue;
        if (cfg->case_ratio) cfg->case_ratio[l->index[i]] = l->ratio[i];
        if (cfg->case_counted) cfg->case_counted[l->index[i]] = 1;
    }
}

/* The parts' logs as one, in case order (each part's is in order already). 0 when out of
 * memory. */
static int merge_logs(const sml_prop_case_log *logs, int n, sml_prop_case_log *out) {
    int64_t total = 0;
    for (int q = 0; q < n; q++) total += logs[q].n;
    memset(out, 0, sizeof *out);
    size_t m = total > 0 ? (size_t)total : 1;
    out->ratio = malloc(m * sizeof *out->ratio);
    out->ulps = malloc(m * sizeof *out->ulps);
    out->level = malloc(m);
    out->index = malloc(m * sizeof *out->index);
    int64_t *at = calloc((size_t)n, sizeof *at);
    if (!out->ratio || !out->ulps || !out->level || !out->index || !at) {
        free(at);
        sml_prop_case_log_free(out);
        return 0;
    }
    out->cap = total;
    for (out->n = 0; out->n < total; out->n++) {
        int best = -1;
        for (int q = 0; q < n; q++)
            if (at[q] < logs[q].n &&
                (best < 0 || logs[q].index[at[q]] < logs[best].index[at[best]]))
                best = q;
        const sml_prop_case_log *b = &logs[best];
        out->ratio[out->n] = b->ratio[at[best]];
        out->ulps[out->n] = b->ulps[at[best]];
        out->level[out->n] = b->level[at[best]];
        out->index[out->n] = b->index[at[best]];
        at[best]++;
    }
    free(at);
    return 1;
}

/* The cases one run of cfg draws up to and including case index i: killed_at of a failure
 * at i. */
static int64_t cases_through(const sml_prop_config *cfg, int64_t i) {
    sml_prop_config whole = *cfg;
    whole.part = (sml_prop_part){0, 0};
    whole.only_case = -1;
    whole.max_cases = i + 1;
    return sml_prop_planned(&whole);
}

void sml_prop_parts_join(const sml_prop_config *cfg, const sml_prop_result *const *res,
                         const sml_prop_case_log *logs, int n, sml_prop_result *out) {
    *out = *res[0];
    out->nfail = 0;
    memset(out->failures, 0, sizeof out->failures);
    memset(out->killed_at, 0, sizeof out->killed_at);
    memset(out->killed_case, 0, sizeof out->killed_case);
    for (int q = 1; q < n; q++) {
        const sml_prop_result *r = res[q];
        out->events.planned += r->events.planned;
        for (int e = 0; e < SML_EV_COUNT; e++) out->events.n[e] += r->events.n[e];
        if (!out->note[0]) memcpy(out->note, r->note, sizeof out->note);
        out->cases += r->cases;
        out->failed_cases += r->failed_cases;
        out->refused += r->refused;
        out->regressions += r->regressions;
        out->regressions_failed += r->regressions_failed;
        for (int p = 0; p < SML_PROP_COUNT; p++) {
            out->checks[p] += r->checks[p];
            out->fails[p] += r->fails[p];
            out->skips[p] += r->skips[p];
            out->deviations[p] += r->deviations[p];
        }
        out->excused_ulps = fmax(out->excused_ulps, r->excused_ulps);
        out->excused_ratio = fmax(out->excused_ratio, r->excused_ratio);
        if (!(r->worst_ratio <= out->worst_ratio)) {
            out->worst_ratio = r->worst_ratio;
            out->worst_ulps = r->worst_ulps;
        }
        out->accuracy.digest = sml_accuracy_digest_join(out->accuracy.digest, r->accuracy.digest);
        out->seconds += r->seconds;
        sml_prop_host_time_add(&out->host, &r->host);
        out->elements += r->elements;
        out->tall += r->tall;
        out->shared += r->shared;
        if (r->last_level > out->last_level) out->last_level = r->last_level;
        if (r->slowest_seconds > out->slowest_seconds) {
            out->slowest_seconds = r->slowest_seconds;
            out->slowest_case = r->slowest_case;
            out->slowest_elements = r->slowest_elements;
        }
    }
    /* Each property's first failing case, over every part. */
    for (int p = 0; p < SML_PROP_COUNT; p++) {
        int64_t first = -1;
        for (int q = 0; q < n; q++)
            if (res[q]->killed_at[p] > 0 && (first < 0 || res[q]->killed_case[p] < first))
                first = res[q]->killed_case[p];
        if (first >= 0) {
            out->killed_case[p] = first;
            out->killed_at[p] = cases_through(cfg, first);
        }
    }
    /* Each reported property's failure at its lowest case, in case order. */
    const sml_prop_failure *pick[SML_PROP_COUNT] = {0};
    for (int q = 0; q < n; q++)
        for (int f = 0; f < res[q]->nfail; f++) {
            const sml_prop_failure *x = &res[q]->failures[f];
            if (!pick[x->prop] || x->case_index < pick[x->prop]->case_index) pick[x->prop] = x;
        }
    for (;;) {
        int best = -1;
        for (int p = 0; p < SML_PROP_COUNT; p++)
            if (pick[p] && (best < 0 || pick[p]->case_index < pick[best]->case_index)) best = p;
        if (best < 0) break;
        out->failures[out->nfail++] = *pick[best];
        pick[best] = NULL;
    }
    sml_prop_case_log all;
    if (merge_logs(logs, n, &all)) {
        sml_prop_case_log_summarize(&all, cfg, out);
        sml_prop_case_log_free(&all);
    } else { /* no summary of the whole job's accuracy: no verdict on it either */
        out->events.n[SML_EV_NOT_JUDGED]++;
        snprintf(out->note, sizeof out->note,
                 "engine: out of memory joining the parts' per-case figures; not judged");
    }
    out->accuracy.cases = out->cases;
    sml_prop_result_decide(out);
}
