/* compare.c: see compare.h. A document is accepted only if every field the rule needs is
 * there with the right type: a half-read ledger must not gate a merge. */
#include "analysis/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ledger.h"

typedef struct entry {
    char kernel[32], op[24], dtype[8];
    int64_t rows, cols;
    int timed;
    double ms, spread;
    char check[16]; /* "ok", "WRONG", "ERROR", "KNOWN-DEV" */
    int used;
} entry;

typedef struct entries {
    entry *e;
    size_t n;
} entries;

static sml_status read_doc(const sml_json *doc, entries *out, char *gpu, size_t gpulen, char *err,
                           size_t errlen) {
    out->e = NULL;
    out->n = 0;
    if (!doc || doc->type != SML_JSON_OBJECT) {
        snprintf(err, errlen, "not a JSON object");
        return SML_ERR_FORMAT;
    }
    const char *schema = sml_json_str(sml_json_get(doc, "schema"));
    if (!sml_ledger_schema_ok(schema, err, errlen)) return SML_ERR_FORMAT;
    const char *name =
        sml_json_str(sml_json_get(sml_json_get(sml_json_get(doc, "environment"), "gpu"), "name"));
    snprintf(gpu, gpulen, "%s", name ? name : "no GPU");
    sml_printable(gpu);
    const sml_json *recs = sml_json_get(doc, "records");
    if (!recs || recs->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "'records' missing or not an array");
        return SML_ERR_FORMAT;
    }
    size_t total = 0;
    for (size_t i = 0; i < recs->n; i++)
        total += sml_json_len(sml_json_get(recs->items[i], "evidence"));
    out->e = calloc(total ? total : 1, sizeof *out->e);
    if (!out->e) return SML_ERR_OUT_OF_MEMORY;
    char where[96];
    for (size_t i = 0; i < recs->n; i++) {
        const sml_json *r = recs->items[i];
        snprintf(where, sizeof where, "records[%zu]", i);
        char kernel[32];
        if (!r || r->type != SML_JSON_OBJECT) {
            snprintf(err, errlen, "%s: not an object", where);
            goto bad;
        }
        if (!sml_json_req_str(r, "kernel", kernel, sizeof kernel, where, err, errlen)) goto bad;
        const sml_json *ev = sml_json_get(r, "evidence");
        if (!ev || ev->type != SML_JSON_ARRAY) {
            snprintf(err, errlen, "%s: 'evidence' missing or not an array", where);
            goto bad;
        }
        for (size_t j = 0; j < ev->n; j++) {
            const sml_json *x = ev->items[j];
            entry *e = &out->e[out->n];
            snprintf(where, sizeof where, "records[%zu].evidence[%zu]", i, j);
            if (!x || x->type != SML_JSON_OBJECT) {
                snprintf(err, errlen, "%s: not an object", where);
                goto bad;
            }
            memcpy(e->kernel, kernel, sizeof kernel);
            if (!sml_json_req_str(x, "op", e->op, sizeof e->op, where, err, errlen) ||
                !sml_json_req_str(x, "dtype", e->dtype, sizeof e->dtype, where, err, errlen) ||
                !sml_json_req_int(x, "rows", &e->rows, where, err, errlen) ||
                !sml_json_req_int(x, "cols", &e->cols, where, err, errlen) ||
                !sml_json_req_str(x, "check", e->check, sizeof e->check, where, err, errlen))
                goto bad;
            const sml_json *ms = sml_json_get(x, "median_ms");
            if (ms && ms->type != SML_JSON_NULL) {
                const sml_json *sp = sml_json_get(x, "rel_spread");
                if (!sml_json_is_num(ms) || !(ms->number > 0)) {
                    snprintf(err, errlen, "%s: 'median_ms' is not a positive number", where);
                    goto bad;
                }
                if (!sml_json_is_num(sp) || sp->number < 0) {
                    snprintf(err, errlen, "%s: 'rel_spread' missing or negative", where);
                    goto bad;
                }
                e->timed = 1;
                e->ms = ms->number;
                e->spread = sp->number;
            }
            out->n++;
        }
    }
    return SML_OK;
bad:
    free(out->e);
    out->e = NULL;
    out->n = 0;
    return SML_ERR_FORMAT;
}

static int same_key(const entry *a, const entry *b) {
    return !strcmp(a->kernel, b->kernel) && !strcmp(a->op, b->op) && !strcmp(a->dtype, b->dtype) &&
           a->rows == b->rows && a->cols == b->cols;
}

static void fill_key(sml_cmp_row *r, const entry *e) {
    memcpy(r->kernel, e->kernel, sizeof r->kernel);
    memcpy(r->op, e->op, sizeof r->op);
    memcpy(r->dtype, e->dtype, sizeof r->dtype);
    r->rows = e->rows;
    r->cols = e->cols;
}

sml_status sml_compare_docs(const sml_json *old_doc, const sml_json *new_doc, double threshold,
                            sml_cmp_report *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    entries a, b;
    char e2[256];
    sml_status s = read_doc(old_doc, &a, out->old_gpu, sizeof out->old_gpu, e2, sizeof e2);
    if (s != SML_OK) {
        snprintf(err, errlen, "OLD: %s", e2);
        return s;
    }
    s = read_doc(new_doc, &b, out->new_gpu, sizeof out->new_gpu, e2, sizeof e2);
    if (s != SML_OK) {
        snprintf(err, errlen, "NEW: %s", e2);
        free(a.e);
        return s;
    }
    out->rows = calloc(a.n + b.n + 1, sizeof *out->rows);
    if (!out->rows) {
        free(a.e);
        free(b.e);
        return SML_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < a.n; i++) {
        const entry *o = &a.e[i];
        int dup = 0;
        for (size_t k = 0; k < i && !dup; k++) dup = same_key(&a.e[k], o);
        if (dup) continue; /* the first of duplicate keys speaks for the case */
        sml_cmp_row *r = &out->rows[out->n++];
        fill_key(r, o);
        r->old_timed = o->timed;
        r->old_ms = o->ms;
        r->old_spread = o->spread;
        snprintf(r->old_check, sizeof r->old_check, "%s", o->check);
        const entry *nw = NULL;
        for (size_t j = 0; j < b.n && !nw; j++)
            if (!b.e[j].used && same_key(&b.e[j], o)) nw = &b.e[j];
        if (!nw) {
            r->presence = SML_CMP_ONLY_OLD;
            out->only_old++;
            continue;
        }
        for (size_t j = 0; j < b.n; j++)
            if (same_key(&b.e[j], o)) b.e[j].used = 1;
        r->presence = SML_CMP_BOTH;
        r->new_timed = nw->timed;
        r->new_ms = nw->ms;
        r->new_spread = nw->spread;
        snprintf(r->new_check, sizeof r->new_check, "%s", nw->check);
        r->broke = !strcmp(o->check, "ok") && strcmp(nw->check, "ok") != 0;
        if (r->broke) out->broke++;
        r->verdict =
            r->old_timed && r->new_timed
                ? sml_compare_verdict(r->old_ms, r->old_spread, r->new_ms, r->new_spread, threshold)
                : SML_CMP_UNCLEAR;
        out->count[r->verdict]++;
        out->compared += r->old_timed && r->new_timed;
    }
    for (size_t j = 0; j < b.n; j++) {
        if (b.e[j].used) continue;
        int dup = 0;
        for (size_t k = 0; k < j && !dup; k++) dup = same_key(&b.e[k], &b.e[j]);
        if (dup) continue;
        sml_cmp_row *r = &out->rows[out->n++];
        fill_key(r, &b.e[j]);
        r->presence = SML_CMP_ONLY_NEW;
        r->new_timed = b.e[j].timed;
        r->new_ms = b.e[j].ms;
        r->new_spread = b.e[j].spread;
        snprintf(r->new_check, sizeof r->new_check, "%s", b.e[j].check);
        out->only_new++;
    }
    free(a.e);
    free(b.e);
    return SML_OK;
}

sml_status sml_compare_files(const char *old_path, const char *new_path, double threshold,
                             sml_cmp_report *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    sml_json *a = NULL, *b = NULL;
    char e2[256];
    sml_status s = sml_json_parse_file(old_path, &a, e2, sizeof e2);
    if (s != SML_OK) {
        snprintf(err, errlen, "%s: %s", old_path, e2);
        return s;
    }
    s = sml_json_parse_file(new_path, &b, e2, sizeof e2);
    if (s != SML_OK) {
        snprintf(err, errlen, "%s: %s", new_path, e2);
        sml_json_free(a);
        return s;
    }
    s = sml_compare_docs(a, b, threshold, out, e2, sizeof e2);
    if (s != SML_OK) snprintf(err, errlen, "%s", e2);
    sml_json_free(a);
    sml_json_free(b);
    return s;
}

void sml_cmp_report_free(sml_cmp_report *r) {
    free(r->rows);
    memset(r, 0, sizeof *r);
}

int sml_cmp_failed(const sml_cmp_report *r) { return r->count[SML_CMP_SLOW] > 0 || r->broke > 0; }
