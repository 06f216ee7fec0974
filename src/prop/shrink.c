/* shrink.c: the shrinker. Every candidate is strictly smaller or simpler than the current
 * case (fewer rows, fewer columns, plainer layout, or one value replaced by a simpler one
 * in a fixed order), so the greedy loop ends; the budget ends it sooner on slow kernels. */
#include "prop/shrink.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dtype.h"

double sml_prop_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct shrinker {
    sml_prop_shrink_test test;
    void *ctx;
    sml_prop_id prop;
    sml_prop_outcome want;
    int64_t max_evals;
    double deadline;
    sml_prop_case cur;
    sml_prop_verdict verdict;
    sml_prop_shrink_stats *st;
} shrinker;

static int out_of_budget(shrinker *s) {
    if (s->st->evals >= s->max_evals || sml_prop_now() > s->deadline) {
        s->st->exhausted = 1;
        return 1;
    }
    return 0;
}

/* Evaluate cand; on a repeat of the failure it becomes the current case (cand is consumed
 * either way). */
static int try_case(shrinker *s, sml_prop_case *cand) {
    if (out_of_budget(s)) {
        sml_prop_case_free(cand);
        return 0;
    }
    s->st->evals++;
    sml_prop_verdict v;
    s->test(s->ctx, s->prop, cand, &v);
    if (v.outcome != s->want) {
        sml_prop_case_free(cand);
        return 0;
    }
    sml_prop_case_free(&s->cur);
    s->cur = *cand;
    s->verdict = v;
    s->st->steps++;
    return 1;
}

/* A case with the rows [r0, r0 + nr) of cur and either the columns [c0, c0 + nc) or
 * (drop >= 0) every column but [drop, drop + nc). */
static sml_status sub_case(const sml_prop_case *cur, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                           int64_t drop, sml_prop_case *out) {
    *out = *cur;
    out->x = out->dy = out->logits = NULL;
    out->rows = nr;
    out->cols = drop >= 0 ? cur->cols - nc : nc;
    if (out->ld == cur->cols)
        out->ld = out->cols;
    else
        out->ld = out->cols + (cur->ld - cur->cols);
    sml_status st = sml_prop_case_alloc(out);
    if (st != SML_OK) return st;
    size_t esz = sml_dtype_size(cur->dtype);
    const void *src[3] = {cur->x, cur->dy, cur->logits};
    void *dst[3] = {out->x, out->dy, out->logits};
    for (int a = 0; a < 3; a++) {
        if (!src[a] || !dst[a]) continue;
        for (int64_t r = 0; r < nr; r++) {
            const char *in = (const char *)src[a] + (size_t)((r0 + r) * cur->cols) * esz;
            char *o = (char *)dst[a] + (size_t)(r * out->cols) * esz;
            if (drop >= 0) {
                memcpy(o, in, (size_t)drop * esz);
                memcpy(o + (size_t)drop * esz, in + (size_t)(drop + nc) * esz,
                       (size_t)(cur->cols - drop - nc) * esz);
            } else {
                memcpy(o, in + (size_t)c0 * esz, (size_t)nc * esz);
            }
        }
    }
    return SML_OK;
}

static int try_rows(shrinker *s, int64_t r0, int64_t n) {
    sml_prop_case cand;
    if (n < 1 || n >= s->cur.rows || sub_case(&s->cur, r0, n, 0, s->cur.cols, -1, &cand) != SML_OK)
        return 0;
    /* y was derived per row, so a subset of rows keeps it a real forward output */
    return try_case(s, &cand);
}

static int try_cols(shrinker *s, int64_t c0, int64_t n, int64_t drop) {
    sml_prop_case cand;
    if (sub_case(&s->cur, 0, s->cur.rows, c0, n, drop, &cand) != SML_OK) return 0;
    /* A backward case's y must be the forward output of the columns that remain. */
    if (sml_prop_case_derive_y(&cand) != SML_OK) {
        sml_prop_case_free(&cand);
        return 0;
    }
    return try_case(s, &cand);
}

static int shrink_rows(shrinker *s) {
    int progress = 0;
    while (s->cur.rows > 1 && !out_of_budget(s)) {
        int64_t R = s->cur.rows, hint = s->verdict.row;
        if (hint >= 0 && hint < R && try_rows(s, hint, 1)) {
            progress = 1;
            continue;
        }
        if (try_rows(s, 0, 1) || try_rows(s, R - 1, 1)) {
            progress = 1;
            continue;
        }
        if (try_rows(s, 0, R / 2) || try_rows(s, R / 2, R - R / 2)) {
            progress = 1;
            continue;
        }
        if (R <= 32) {
            int any = 0;
            for (int64_t r = R - 1; r >= 0 && !any; r--) {
                sml_prop_case cand;
                /* drop row r: rows [0, r) then [r + 1, R) */
                cand = s->cur;
                cand.x = cand.dy = cand.logits = NULL;
                cand.rows = R - 1;
                if (sml_prop_case_alloc(&cand) != SML_OK) break;
                size_t rb = (size_t)s->cur.cols * sml_dtype_size(s->cur.dtype);
                const void *src[3] = {s->cur.x, s->cur.dy, s->cur.logits};
                void *dst[3] = {cand.x, cand.dy, cand.logits};
                for (int a = 0; a < 3; a++) {
                    if (!src[a] || !dst[a]) continue;
                    memcpy(dst[a], src[a], (size_t)r * rb);
                    memcpy((char *)dst[a] + (size_t)r * rb,
                           (const char *)src[a] + (size_t)(r + 1) * rb, (size_t)(R - r - 1) * rb);
                }
                any = try_case(s, &cand);
            }
            if (any) {
                progress = 1;
                continue;
            }
        }
        break;
    }
    return progress;
}

static int shrink_cols(shrinker *s) {
    int progress = 0;
    while (s->cur.cols > 1 && !out_of_budget(s)) {
        int64_t C = s->cur.cols, h = C / 2;
        if (try_cols(s, 0, h, -1) || try_cols(s, h, C - h, -1)) {
            progress = 1;
            continue;
        }
        /* a window around the column the verdict named, for failures far from either end */
        int64_t col = s->verdict.col;
        if (col >= 0 && col < C && C >= 8) {
            int64_t q = C / 4, start = col - q / 2;
            if (start < 0) start = 0;
            if (start + q > C) start = C - q;
            if (try_cols(s, start, q, -1)) {
                progress = 1;
                continue;
            }
        }
        /* Then ever smaller blocks of columns removed, down to single columns. */
        int any = 0;
        if (C <= 4096)
            for (int64_t w = C / 4 > 0 ? C / 4 : 1; w >= 1 && !any; w /= 2)
                for (int64_t j = C - w; j >= 0 && !any && !out_of_budget(s); j -= w)
                    any = try_cols(s, 0, w, j);
        if (any) {
            progress = 1;
            continue;
        }
        break;
    }
    return progress;
}

static int shrink_layout(shrinker *s) {
    int progress = 0;
    sml_prop_case cand;
    if (s->cur.inplace && sml_prop_case_copy(&cand, &s->cur) == SML_OK) {
        cand.inplace = 0;
        progress |= try_case(s, &cand);
    }
    if (s->cur.offset && sml_prop_case_copy(&cand, &s->cur) == SML_OK) {
        cand.offset = 0;
        progress |= try_case(s, &cand);
    }
    if (s->cur.ld != s->cur.cols && sml_prop_case_copy(&cand, &s->cur) == SML_OK) {
        cand.ld = cand.cols;
        if (!try_case(s, &cand) && sml_prop_case_copy(&cand, &s->cur) == SML_OK) {
            cand.ld = cand.cols + 1; /* keep a padding, the smallest one */
            if (cand.ld < s->cur.ld)
                progress |= try_case(s, &cand);
            else
                sml_prop_case_free(&cand);
        } else {
            progress = 1;
        }
    }
    return progress;
}

/* Simplicity order of single values: +0, -0, integers (smaller first), other finite
 * values (smaller first), -inf, +inf, NaN. */
static int value_class(double v) {
    if (isnan(v)) return 6;
    if (v == INFINITY) return 5;
    if (v == -INFINITY) return 4;
    if (v == 0.0) return signbit(v) ? 1 : 0;
    return v == nearbyint(v) ? 2 : 3;
}

static int simpler(double a, double b) {
    int ca = value_class(a), cb = value_class(b);
    if (ca != cb) return ca < cb;
    if (ca == 2 || ca == 3) return fabs(a) < fabs(b);
    return 0;
}

/* Replace element i of array `which` (0: the source values, 1: dy) by v if that is simpler. */
static int try_value(shrinker *s, int which, int64_t i, double v) {
    const sml_prop_case *c = &s->cur;
    void *arr = which ? c->dy : sml_prop_case_source(c);
    if (!arr) return 0;
    double old = sml_load(c->dtype, arr, i);
    double nv = sml_round_to(c->dtype, v);
    if (!simpler(nv, old)) return 0;
    sml_prop_case cand;
    if (sml_prop_case_copy(&cand, c) != SML_OK) return 0;
    sml_store(cand.dtype, which ? cand.dy : sml_prop_case_source(&cand), i, nv);
    if (!which && sml_prop_case_derive_y(&cand) != SML_OK) {
        sml_prop_case_free(&cand);
        return 0;
    }
    return try_case(s, &cand);
}

/* One candidate with every value of an array changed at once: to_zero, every finite non-zero
 * value to 0 (specials kept); else every non-integer finite value truncated. */
static int try_all(shrinker *s, int which, int to_zero) {
    sml_prop_case cand;
    if (sml_prop_case_copy(&cand, &s->cur) != SML_OK) return 0;
    void *arr = which ? cand.dy : sml_prop_case_source(&cand);
    int changed = 0;
    for (int64_t i = 0, n = sml_prop_case_elems(&cand); i < n; i++) {
        double v = sml_load(cand.dtype, arr, i);
        if (to_zero ? isfinite(v) && v != 0.0 : value_class(v) == 3) {
            sml_store(cand.dtype, arr, i, to_zero ? 0.0 : trunc(v));
            changed = 1;
        }
    }
    if (changed && (which || sml_prop_case_derive_y(&cand) == SML_OK)) return try_case(s, &cand);
    sml_prop_case_free(&cand);
    return 0;
}

/* All finite values of an array made integers at once, then each value on its own. */
static int shrink_values(shrinker *s, int which) {
    if (which && !s->cur.dy) return 0;
    /* Too many values to take one by one: try them all at 0 (specials kept). */
    if (sml_prop_case_elems(&s->cur) > 4096) return try_all(s, which, 1);
    int progress = try_all(s, which, 0);
    for (int64_t i = 0; i < sml_prop_case_elems(&s->cur) && !out_of_budget(s); i++) {
        void *arr = which ? s->cur.dy : sml_prop_case_source(&s->cur);
        double v = sml_load(s->cur.dtype, arr, i);
        if (try_value(s, which, i, 0.0)) {
            progress = 1;
            continue;
        }
        if (value_class(v) == 3 && try_value(s, which, i, trunc(v))) {
            progress = 1;
            v = trunc(v);
        }
        if (value_class(v) >= 4 && (try_value(s, which, i, 1.0) || try_value(s, which, i, -1.0))) {
            progress = 1;
            continue;
        }
        /* halve integers toward 0 while it still fails */
        while (value_class(v) == 2 && fabs(v) >= 2.0 && !out_of_budget(s) &&
               try_value(s, which, i, trunc(v / 2.0))) {
            progress = 1;
            v = sml_load(s->cur.dtype, which ? s->cur.dy : sml_prop_case_source(&s->cur), i);
        }
        /* fewer distinct values: take a simpler neighbour's value */
        int64_t cols = s->cur.cols;
        if (i % cols > 0) {
            const void *now = which ? s->cur.dy : sml_prop_case_source(&s->cur);
            if (try_value(s, which, i, sml_load(s->cur.dtype, now, i - 1))) progress = 1;
        }
    }
    return progress;
}

/* The engine's test: the property on the kernel, in this process. */
typedef struct env_test {
    sml_prop_env *env;
} env_test;

static void test_in_env(void *ctx, sml_prop_id p, const sml_prop_case *c, sml_prop_verdict *v) {
    sml_prop_eval e;
    sml_prop_eval_begin(&e, ((env_test *)ctx)->env, c);
    sml_prop_eval_check(&e, p, v);
    sml_prop_eval_end(&e);
}

sml_status sml_prop_shrink_by(sml_prop_shrink_test test, void *ctx, sml_prop_id p,
                              sml_prop_outcome want, const sml_prop_case *failing,
                              const sml_prop_verdict *first, int64_t max_evals, double max_seconds,
                              sml_prop_case *out, sml_prop_verdict *last,
                              sml_prop_shrink_stats *st) {
    memset(st, 0, sizeof *st);
    shrinker s = {test, ctx, p, want, max_evals, sml_prop_now() + max_seconds, {0}, *first, st};
    sml_status rc = sml_prop_case_copy(&s.cur, failing);
    if (rc != SML_OK) return rc;
    for (int round = 0; round < 64 && !out_of_budget(&s); round++) {
        int progress = 0;
        progress |= shrink_rows(&s);
        progress |= shrink_cols(&s);
        progress |= shrink_layout(&s);
        progress |= shrink_values(&s, 0);
        progress |= shrink_values(&s, 1);
        if (!progress) break;
    }
    *out = s.cur;
    *last = s.verdict;
    return SML_OK;
}

sml_status sml_prop_shrink(sml_prop_env *env, sml_prop_id p, sml_prop_outcome want,
                           const sml_prop_case *failing, const sml_prop_verdict *first,
                           int64_t max_evals, double max_seconds, sml_prop_case *out,
                           sml_prop_verdict *last, sml_prop_shrink_stats *st) {
    env_test t = {env};
    return sml_prop_shrink_by(test_in_env, &t, p, want, failing, first, max_evals, max_seconds, out,
                              last, st);
}

void sml_prop_failure_shrunk(sml_prop_failure *f, const sml_prop_case *small,
                             const sml_prop_shrink_stats *st) {
    f->s_rows = small->rows;
    f->s_cols = small->cols;
    f->s_ld = small->ld;
    f->s_offset = small->offset;
    f->s_inplace = small->inplace;
    f->shrink_steps = st->steps;
    f->shrink_evals = st->evals;
}
