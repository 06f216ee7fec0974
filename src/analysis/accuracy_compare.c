/* accuracy_compare.c: see accuracy_compare.h. Every field the rule reads is checked: a
 * half-read file must not pass a gate. */
#include "analysis/accuracy_compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/repro.h"

typedef struct acc_entry {
    char kernel[64], op[24], dtype[8];
    char library[1024]; /* a check run's plugin library ("": built in) */
    sml_accuracy a;
    int used;
} acc_entry;

typedef struct acc_list {
    acc_entry *e;
    size_t n, cap;
    int strict, long_profile; /* a check document's "strict" and "long" (0 when absent) */
} acc_list;

static acc_entry *add(acc_list *l) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        acc_entry *e = realloc(l->e, cap * sizeof *e);
        if (!e) return NULL;
        l->e = e;
        l->cap = cap;
    }
    acc_entry *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* One {kernel?, op, dtype, accuracy} item: kernel from `kernel` when given. */
static int read_item(acc_list *l, const sml_json *x, const char *kernel, const sml_json *acc,
                     const char *where, char *err, size_t errlen) {
    acc_entry *e = add(l);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    if (kernel)
        snprintf(e->kernel, sizeof e->kernel, "%s", kernel);
    else if (!sml_json_req_str(x, "kernel", e->kernel, sizeof e->kernel, where, err, errlen))
        return 0;
    if (!sml_json_opt_str(x, "library", e->library, sizeof e->library, where, err, errlen))
        return 0;
    if (!sml_json_req_str(x, "op", e->op, sizeof e->op, where, err, errlen) ||
        !sml_json_req_str(x, "dtype", e->dtype, sizeof e->dtype, where, err, errlen))
        return 0;
    char w[160];
    snprintf(w, sizeof w, "%s.accuracy", where);
    return sml_acc_read(acc, w, &e->a, err, errlen);
}

static sml_status read_doc(const sml_json *doc, acc_list *l, char *err, size_t errlen) {
    char where[96];
    const sml_json *runs = sml_json_get(doc, "runs");
    const sml_json *st = sml_json_get(doc, "strict"), *lg = sml_json_get(doc, "long");
    l->strict = st && st->type == SML_JSON_BOOL && st->boolean;
    l->long_profile = lg && lg->type == SML_JSON_BOOL && lg->boolean;
    if (runs) {
        if (runs->type != SML_JSON_ARRAY) {
            snprintf(err, errlen, "'runs' is not an array");
            return SML_ERR_FORMAT;
        }
        for (size_t i = 0; i < runs->n; i++) {
            const sml_json *x = runs->items[i];
            snprintf(where, sizeof where, "runs[%zu]", i);
            if (!read_item(l, x, NULL, sml_json_get(x, "accuracy"), where, err, errlen))
                return SML_ERR_FORMAT;
        }
        return SML_OK;
    }
    const sml_json *recs = sml_json_get(doc, "records");
    if (!recs || recs->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "neither 'runs' (check JSON) nor 'records' (ledger) is an array");
        return SML_ERR_FORMAT;
    }
    for (size_t i = 0; i < recs->n; i++) {
        const sml_json *r = recs->items[i];
        char kernel[64];
        snprintf(where, sizeof where, "records[%zu]", i);
        if (!sml_json_req_str(r, "kernel", kernel, sizeof kernel, where, err, errlen))
            return SML_ERR_FORMAT;
        const sml_json *acc = sml_json_get(r, "accuracy");
        if (!acc) continue; /* a ledger written before accuracy was recorded */
        if (acc->type != SML_JSON_ARRAY) {
            snprintf(err, errlen, "%s: 'accuracy' is not an array", where);
            return SML_ERR_FORMAT;
        }
        for (size_t j = 0; j < acc->n; j++) {
            snprintf(where, sizeof where, "records[%zu].accuracy[%zu]", i, j);
            if (!read_item(l, acc->items[j], kernel, acc->items[j], where, err, errlen))
                return SML_ERR_FORMAT;
        }
    }
    return SML_OK;
}

/* 1 when the list names one kernel only (written into name). */
static int one_kernel(const acc_list *l, const char **name) {
    if (!l->n) return 0;
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->e[i].kernel, l->e[0].kernel)) return 0;
    *name = l->e[0].kernel;
    return 1;
}

sml_status sml_acc_compare_docs(const sml_json *old_doc, const sml_json *new_doc,
                                sml_acc_report *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    acc_list lo = {0}, ln = {0};
    char e2[400];
    sml_status s = read_doc(old_doc, &lo, e2, sizeof e2);
    if (s != SML_OK) snprintf(err, errlen, "OLD: %s", e2);
    if (s == SML_OK && (s = read_doc(new_doc, &ln, e2, sizeof e2)) != SML_OK)
        snprintf(err, errlen, "NEW: %s", e2);
    const char *ko = NULL, *kn = NULL;
    int by_op = s == SML_OK && one_kernel(&lo, &ko) && one_kernel(&ln, &kn) && strcmp(ko, kn);
    if (s == SML_OK) out->rows = calloc(lo.n + ln.n + 1, sizeof *out->rows);
    if (s == SML_OK && !out->rows) s = SML_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; s == SML_OK && i < ln.n; i++) {
        acc_entry *n = &ln.e[i], *o = NULL;
        for (size_t j = 0; j < lo.n && !o; j++)
            if (!lo.e[j].used && (by_op || !strcmp(lo.e[j].kernel, n->kernel)) &&
                !strcmp(lo.e[j].op, n->op) && !strcmp(lo.e[j].dtype, n->dtype))
                o = &lo.e[j];
        if (!o) {
            out->only_new++;
            continue;
        }
        o->used = 1;
        sml_acc_row *r = &out->rows[out->n++];
        snprintf(r->old_kernel, sizeof r->old_kernel, "%s", o->kernel);
        snprintf(r->new_kernel, sizeof r->new_kernel, "%s", n->kernel);
        snprintf(r->op, sizeof r->op, "%s", n->op);
        snprintf(r->dtype, sizeof r->dtype, "%s", n->dtype);
        r->old_a = o->a;
        r->new_a = n->a;
        /* The flags as a run of NEW's settings prints them (sml_prop_case_flags), then its
         * kernel's library. */
        sml_prop_config nc = {0};
        nc.profile = ln.long_profile ? SML_PROP_PROFILE_LONG : SML_PROP_PROFILE_GPU;
        nc.strict = ln.strict;
        char flags[80], load[1100];
        sml_prop_case_flags(&nc, flags, sizeof flags);
        sml_prop_load_arg(n->library, load, sizeof load);
        snprintf(r->new_flags, sizeof r->new_flags, "%s%s", flags, load);
        r->verdict = sml_accuracy_judge(&o->a, &n->a, r->why, sizeof r->why);
        out->count[r->verdict]++;
    }
    for (size_t j = 0; s == SML_OK && j < lo.n; j++) out->only_old += !lo.e[j].used;
    free(lo.e);
    free(ln.e);
    if (s != SML_OK) sml_acc_report_free(out);
    return s;
}

void sml_acc_report_free(sml_acc_report *r) {
    free(r->rows);
    memset(r, 0, sizeof *r);
}
