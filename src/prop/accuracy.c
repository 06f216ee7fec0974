/* accuracy.c: the accuracy summary of a run, the digest that says two runs drew the same
 * cases, and the rule that calls one run MORE / LESS ACCURATE than another (docs/NUMERICS.md,
 * section 8). */
#include "prop/accuracy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

const char *sml_acc_verdict_name(sml_acc_verdict v) {
    switch (v) {
    case SML_ACC_SAME: return "SAME";
    case SML_ACC_MORE: return "MORE ACCURATE";
    case SML_ACC_LESS: return "LESS ACCURATE";
    default: return "NOT COMPARABLE";
    }
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double sml_accuracy_quantile(const float *v, int64_t n, double q) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) m += !isnan(v[i]);
    if (m == 0) return NAN;
    float *s = malloc((size_t)m * sizeof *s);
    if (!s) return NAN;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(v[i])) s[k++] = v[i];
    qsort(s, (size_t)m, sizeof *s, cmp_float);
    int64_t rank = (int64_t)ceil(q * (double)m); /* nearest rank, 1-based */
    if (rank < 1) rank = 1;
    if (rank > m) rank = m;
    double r = s[rank - 1];
    free(s);
    return r;
}

void sml_accuracy_summarize(const float *ratio, const float *ulps, int64_t n, sml_accuracy *a) {
    a->judged = 0;
    a->worst = a->p99 = a->median = a->worst_ulps = NAN;
    a->worst_case = -1;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(ratio[i])) continue;
        a->judged++;
        if (a->worst_case < 0 || ratio[i] > a->worst) {
            a->worst = ratio[i];
            a->worst_case = i;
        }
        /* A case with no error at all reports the ulps of its first element, inf when that
         * element is a matching special value: only finite errors count. */
        if (ulps && isfinite(ulps[i]) && ratio[i] > 0 && !(ulps[i] <= a->worst_ulps))
            a->worst_ulps = ulps[i];
    }
    if (!a->judged) return;
    if (ulps && isnan(a->worst_ulps)) a->worst_ulps = 0.0;
    a->p99 = sml_accuracy_quantile(ratio, n, 0.99);
    a->median = sml_accuracy_quantile(ratio, n, 0.5);
}

double sml_accuracy_ratio(double old_v, double new_v) {
    return fmax(new_v, SML_ACC_FLOOR) / fmax(old_v, SML_ACC_FLOOR);
}

sml_acc_verdict sml_accuracy_judge(const sml_accuracy *o, const sml_accuracy *n, char *why,
                                   size_t why_n) {
    char dummy[8];
    if (!why) {
        why = dummy;
        why_n = sizeof dummy;
    }
    if (o->seed != n->seed) {
        snprintf(why, why_n, "different seeds (old 0x%016llx, new 0x%016llx): not the same cases",
                 (unsigned long long)o->seed, (unsigned long long)n->seed);
        return SML_ACC_NOT_COMPARABLE;
    }
    if (o->cases != n->cases) {
        snprintf(why, why_n, "different case counts (old %lld, new %lld): not the same cases",
                 (long long)o->cases, (long long)n->cases);
        return SML_ACC_NOT_COMPARABLE;
    }
    if (o->digest != n->digest) {
        snprintf(why, why_n,
                 "same seed and count but different cases (digest 0x%016llx vs 0x%016llx: "
                 "other kernel limits, profile or registry)",
                 (unsigned long long)o->digest, (unsigned long long)n->digest);
        return SML_ACC_NOT_COMPARABLE;
    }
    if (!o->judged && !n->judged) {
        snprintf(why, why_n, "nothing judged (no case ran agreement)");
        return SML_ACC_NOT_COMPARABLE;
    }
    if (o->judged != n->judged) {
        snprintf(why, why_n, "judged on different cases (old %lld, new %lld of %lld)",
                 (long long)o->judged, (long long)n->judged, (long long)n->cases);
        return SML_ACC_NOT_COMPARABLE;
    }
    double rw = sml_accuracy_ratio(o->worst, n->worst), rp = sml_accuracy_ratio(o->p99, n->p99);
    sml_acc_verdict v = SML_ACC_SAME;
    if (rw > SML_ACC_FACTOR || rp > SML_ACC_FACTOR)
        v = SML_ACC_LESS;
    else if (rw < 1.0 / SML_ACC_FACTOR || rp < 1.0 / SML_ACC_FACTOR)
        v = SML_ACC_MORE;
    snprintf(
        why, why_n,
        "worst %.3g -> %.3g (%.2fx), p99 %.3g -> %.3g (%.2fx), median %.3g -> %.3g of the bound; "
        "worst %.3g -> %.3g ulp",
        o->worst, n->worst, rw, o->p99, n->p99, rp, o->median, n->median, o->worst_ulps,
        n->worst_ulps);
    return v;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = mix(h, w);
    }
    uint64_t tail = 0;
    for (; i < n; i++) tail = tail << 8 | b[i];
    return mix(h, tail ^ (uint64_t)n);
}

uint64_t sml_accuracy_digest_u64(uint64_t h, uint64_t v) { return mix(h, v); }

uint64_t sml_accuracy_digest_join(uint64_t a, uint64_t b) { return a + b; }

/* One case's own hash: a chain over its fields and bytes, from a fixed start. */
static uint64_t case_hash(const sml_prop_case *c) {
    uint64_t h = 0;
    h = mix(h, (uint64_t)c->op << 8 | (uint64_t)c->dtype);
    h = mix(h, (uint64_t)c->rows);
    h = mix(h, (uint64_t)c->cols);
    h = mix(h, (uint64_t)c->ld);
    h = mix(h, (uint64_t)c->offset << 1 | (uint64_t)(c->inplace != 0));
    h = mix(h, c->seed);
    size_t bytes = (size_t)(c->rows * c->cols) * sml_dtype_size(c->dtype);
    if (c->x) h = mix_bytes(h, c->x, bytes);
    if (c->dy) h = mix_bytes(h, c->dy, bytes);
    return h;
}

uint64_t sml_accuracy_digest_case(uint64_t h, const sml_prop_case *c) {
    return sml_accuracy_digest_join(h, case_hash(c));
}
