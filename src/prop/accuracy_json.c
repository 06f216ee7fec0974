/* accuracy_json.c: see accuracy_json.h. Every field the accuracy rule reads is checked: a
 * half-read file must not pass a gate. */
#include "prop/accuracy_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_hex(const sml_json *o, const char *key, uint64_t *dst, const char *where,
                     char *err, size_t errlen) {
    const char *s = sml_json_str(sml_json_get(o, key));
    char *end = NULL;
    errno = 0;
    unsigned long long v = s ? strtoull(s, &end, 16) : 0;
    if (!s || strncmp(s, "0x", 2) || strlen(s) > 18 || errno || !end || *end) {
        snprintf(err, errlen, "%s: '%s' missing or not a 0x hex string of 64 bits", where, key);
        return 0;
    }
    *dst = v;
    return 1;
}

/* A figure: a non-negative number ("inf" where a case failed), or null when nothing was
 * judged. */
static int parse_fig(const sml_json *o, const char *key, int judged, double *dst, const char *where,
                     char *err, size_t errlen) {
    const sml_json *v = sml_json_get(o, key);
    if (!judged && v && v->type == SML_JSON_NULL) {
        *dst = NAN;
        return 1;
    }
    double x = sml_json_num(v, NAN);
    if (!(x >= 0)) {
        snprintf(err, errlen, "%s: '%s' missing or not a non-negative number%s", where, key,
                 judged ? "" : " or null");
        return 0;
    }
    *dst = x;
    return 1;
}

static void write_hex(sml_jw *w, const char *key, uint64_t v) {
    char b[24];
    snprintf(b, sizeof b, "0x%016llx", (unsigned long long)v);
    sml_jw_kstr(w, key, b);
}

void sml_acc_write_fields(sml_jw *w, const sml_accuracy *a) {
    int j = a->judged > 0;
    write_hex(w, "seed", a->seed);
    sml_jw_kint(w, "cases", a->cases);
    sml_jw_kint(w, "judged", a->judged);
    write_hex(w, "digest", a->digest);
    const char *keys[] = {"worst", "p99", "median", "worst_ulps"};
    const double vals[] = {a->worst, a->p99, a->median, a->worst_ulps};
    for (int i = 0; i < 4; i++) {
        sml_jw_key(w, keys[i]);
        if (j)
            sml_jw_num(w, vals[i]);
        else
            sml_jw_null(w);
    }
    if (j) {
        sml_jw_kint(w, "worst_case", a->worst_case);
        sml_jw_kint(w, "worst_level", a->worst_level);
    }
}

void sml_acc_write(sml_jw *w, const char *key, const sml_accuracy *a) {
    sml_jw_key(w, key);
    sml_jw_object_inline(w);
    sml_acc_write_fields(w, a);
    sml_jw_end(w);
}

int sml_acc_read(const sml_json *o, const char *where, sml_accuracy *a, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    a->worst_case = -1;
    if (!o || o->type != SML_JSON_OBJECT) {
        snprintf(err, errlen, "%s: not an object", where);
        return 0;
    }
    if (!parse_hex(o, "seed", &a->seed, where, err, errlen) ||
        !sml_json_req_int(o, "cases", &a->cases, where, err, errlen) ||
        !sml_json_req_int(o, "judged", &a->judged, where, err, errlen) ||
        !parse_hex(o, "digest", &a->digest, where, err, errlen))
        return 0;
    if (a->judged > a->cases) {
        snprintf(err, errlen, "%s: 'judged' (%lld) is more than 'cases' (%lld)", where,
                 (long long)a->judged, (long long)a->cases);
        return 0;
    }
    int j = a->judged > 0;
    if (!parse_fig(o, "worst", j, &a->worst, where, err, errlen) ||
        !parse_fig(o, "p99", j, &a->p99, where, err, errlen) ||
        !parse_fig(o, "median", j, &a->median, where, err, errlen) ||
        !parse_fig(o, "worst_ulps", j, &a->worst_ulps, where, err, errlen))
        return 0;
    if (j && !(a->median <= a->p99 && a->p99 <= a->worst)) {
        snprintf(err, errlen, "%s: 'median' <= 'p99' <= 'worst' does not hold", where);
        return 0;
    }
    if (j && sml_json_get(o, "worst_case")) {
        int64_t c;
        if (!sml_json_req_int(o, "worst_case", &c, where, err, errlen)) return 0;
        a->worst_case = c;
        int64_t l = 0;
        if (sml_json_get(o, "worst_level")) {
            if (!sml_json_req_int(o, "worst_level", &l, where, err, errlen)) return 0;
            if (l > 100) {
                snprintf(err, errlen, "%s: 'worst_level' over 100", where);
                return 0;
            }
        }
        a->worst_level = (int)l;
    }
    return 1;
}

int sml_acc_doc_has_accuracy(const sml_json *doc) {
    const sml_json *runs = sml_json_get(doc, "runs");
    if (runs && runs->type == SML_JSON_ARRAY) return 1;
    const sml_json *recs = sml_json_get(doc, "records");
    for (size_t i = 0; i < sml_json_len(recs); i++)
        if (sml_json_get(sml_json_at(recs, i), "accuracy")) return 1;
    return 0;
}
