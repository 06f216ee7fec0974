/* shard_json.c: see shard_json.h. */
#include "prop/shard_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sml_shard_jobs_prepare(sml_prop_job *jobs, int njobs) {
    for (int j = 0; j < njobs; j++) {
        int64_t n = jobs[j].cfg.max_cases > 0 ? jobs[j].cfg.max_cases : 1;
        float *r = malloc((size_t)n * sizeof *r);
        if (!r) {
            sml_shard_jobs_free(jobs, j);
            return -1;
        }
        for (int64_t i = 0; i < n; i++) r[i] = NAN;
        jobs[j].cfg.case_ratio = r;
        jobs[j].cfg.case_cap = n;
    }
    return 0;
}

void sml_shard_jobs_free(sml_prop_job *jobs, int njobs) {
    for (int j = 0; j < njobs; j++) {
        free(jobs[j].cfg.case_ratio);
        jobs[j].cfg.case_ratio = NULL;
        jobs[j].cfg.case_cap = 0;
    }
}

static uint64_t fold(uint64_t h, uint64_t v) { return sml_accuracy_digest_u64(h, v); }

static uint64_t fold_f(uint64_t h, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return fold(h, bits);
}

uint64_t sml_shard_plan_hash(const sml_prop_config *c) {
    const sml_prop_sizes *z = &c->sizes;
    uint64_t h = fold(0, (uint64_t)c->max_cases);
    h = fold(h, (uint64_t)c->level_cases);
    h = fold(h, c->props);
    h = fold(h, (uint64_t)c->shrink);
    h = fold(h, (uint64_t)c->shrink_max_evals);
    h = fold(h, (uint64_t)c->stop_on_failure);
    h = fold(h, (uint64_t)z->small_min_elems);
    h = fold(h, (uint64_t)z->small_max_elems);
    h = fold_f(h, z->big_prob);
    h = fold(h, (uint64_t)z->big_max_elems);
    h = fold(h, (uint64_t)z->max_cols);
    h = fold_f(h, z->tall_prob);
    return fold(h, (uint64_t)z->tall_max_elems);
}

void sml_shard_json_head(sml_jw *w, const sml_shard *s) {
    sml_jw_key(w, "shard");
    sml_jw_object_inline(w);
    sml_jw_kint(w, "index", s->index);
    sml_jw_kint(w, "count", s->count);
    sml_jw_kstr(w, "ramp", "cases");
    sml_jw_end(w);
}

/* The judged cases' ratios of the slice, in case order, 8 hex digits each. */
static char *ratios_hex(const sml_prop_job *job) {
    const sml_prop_config *c = &job->cfg;
    int64_t n = c->case_ratio ? c->case_cap : 0, used = 0;
    char *s = malloc((size_t)n * 8 + 1);
    if (!s) return NULL;
    for (int64_t i = 0; i < n; i++) {
        float r = c->case_ratio[i];
        if (!sml_shard_has(&c->shard, i)) continue;
        if (i >= job->res.cases * (int64_t)(c->shard.count > 0 ? c->shard.count : 1))
            break; /* not run */
        uint32_t bits;
        memcpy(&bits, &r, sizeof bits);
        snprintf(s + used, 9, "%08x", (unsigned)bits);
        used += 8;
    }
    s[used] = 0;
    return s;
}

void sml_shard_json_run(sml_jw *w, const sml_prop_job *job) {
    const sml_prop_config *c = &job->cfg;
    char plan[24];
    snprintf(plan, sizeof plan, "0x%016llx", (unsigned long long)sml_shard_plan_hash(c));
    char *hex = ratios_hex(job);
    sml_jw_key(w, "merge");
    sml_jw_object_inline(w);
    sml_jw_kint(w, "max_cases", c->max_cases);
    sml_jw_kint(w, "planned", sml_shard_size(&c->shard, c->max_cases));
    sml_jw_kstr(w, "plan", plan);
    sml_jw_kstr(w, "ratios", hex ? hex : "out of memory");
    sml_jw_end(w);
    free(hex);
}
