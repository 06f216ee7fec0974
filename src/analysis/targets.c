/* targets.c: see targets.h. The rules are the first block of this file; the rest
 * reads a ledger strictly (a half-read ledger must not report a target as met) and counts. */
#include "analysis/targets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ledger.h"

/* ---- The rules (each a row of the ledger, every dtype, all four ops) ---- */

/* T2's long rows: the standard sweep's two shapes of 2^27 elements with the longest rows. */
static const int64_t LONG_SHAPES[][2] = {{128, 1048576}, {1024, 131072}};
#define NLONG (sizeof LONG_SHAPES / sizeof LONG_SHAPES[0])

static int is_long_shape(const sml_tgt_row *r) {
    for (size_t i = 0; i < NLONG; i++)
        if (r->rows == LONG_SHAPES[i][0] && r->cols == LONG_SHAPES[i][1]) return 1;
    return 0;
}

int sml_tgt_in(sml_target_id id, const sml_tgt_row *r) {
    switch (id) {
    case SML_TGT_BANDWIDTH: return r->bytes >= SML_TGT_BIG_BYTES;
    case SML_TGT_LONG: return is_long_shape(r);
    case SML_TGT_CUDNN:
    case SML_TGT_BEST: return 1;
    case SML_TGT_SHORT:
        return r->cols >= SML_TGT_SHORT_MIN_COLS && r->cols <= SML_TGT_SHORT_MAX_COLS;
    case SML_TGT_VS_FIELD:
    case SML_TGT_AT_LIMIT: return r->bytes >= SML_TGT_BIG_BYTES;
    case SML_TGT_SHORT_FIELD: return r->bytes < SML_TGT_BIG_BYTES;
    default: return 0; /* T6 is about the record, not its rows */
    }
}

double sml_tgt_value(sml_target_id id, const sml_tgt_row *r) {
    switch (id) {
    case SML_TGT_BANDWIDTH:
    case SML_TGT_LONG: return r->frac_memcpy;
    case SML_TGT_CUDNN: return r->vs_cudnn;
    case SML_TGT_BEST: return r->vs_best_other;
    case SML_TGT_SHORT: return r->frac_copy_kernel;
    case SML_TGT_VS_FIELD:
    case SML_TGT_SHORT_FIELD: return r->vs_field;
    case SML_TGT_AT_LIMIT: return r->frac_limit;
    default: return NAN;
    }
}

double sml_tgt_threshold(sml_target_id id, double margin) {
    switch (id) {
    case SML_TGT_BANDWIDTH:
    case SML_TGT_LONG: return SML_TGT_FRAC_MEMCPY;
    case SML_TGT_CUDNN: return SML_TGT_VS_CUDNN;
    /* "Not slower than any other kernel's best" within the noise the ledger's own decision
     * rule allows, so a tie inside the margin is not reported as a loss. */
    case SML_TGT_BEST: return 1.0 - margin;
    case SML_TGT_SHORT: return SML_TGT_SHORT_FRAC_COPY;
    case SML_TGT_VS_FIELD:
    case SML_TGT_SHORT_FIELD: return SML_TGT_FIELD_SPEEDUP;
    case SML_TGT_AT_LIMIT: return SML_TGT_FRAC_LIMIT;
    default: return 1;
    }
}

int sml_tgt_row_ok(const sml_tgt_row *r) { return !strcmp(r->check, "ok"); }

int sml_tgt_own_kernel(const sml_tgt_row *r) {
    return r->auto_path[0] && !strcmp(r->auto_path, r->best_other);
}

int sml_tgt_measured(sml_target_id id, const sml_tgt_row *r) {
    switch (id) {
    case SML_TGT_VS_FIELD:
    case SML_TGT_SHORT_FIELD: return r->field[0] != 0;
    case SML_TGT_AT_LIMIT: return r->has_limit;
    default: return 1;
    }
}

/* Is `name` one of the comma-separated names of list (whole names)? */
static int has_name(const char *list, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

int sml_tgt_undecided(sml_target_id id, const sml_tgt_row *r, double margin) {
    int against_unheld;
    switch (id) {
    case SML_TGT_VS_FIELD:
    case SML_TGT_SHORT_FIELD: against_unheld = r->field_unheld[0] != 0; break;
    case SML_TGT_CUDNN: against_unheld = has_name(r->unheld, "cudnn"); break;
    case SML_TGT_BEST: against_unheld = r->unheld[0] != 0; break;
    default: against_unheld = 0; /* against memcpy, the copy kernel or the limit: the bench's own */
    }
    return against_unheld && sml_tgt_met(id, r, margin);
}

const char *sml_tgt_unheld_for(sml_target_id id, const sml_tgt_row *r) {
    return id == SML_TGT_VS_FIELD || id == SML_TGT_SHORT_FIELD ? r->field_unheld
           : id == SML_TGT_CUDNN                               ? "cudnn"
                                                               : r->unheld;
}

int sml_tgt_met(sml_target_id id, const sml_tgt_row *r, double margin) {
    /* A wrong result is never fast enough; NaN (a metric the row lacks) compares false. */
    return sml_tgt_in(id, r) && sml_tgt_measured(id, r) && sml_tgt_row_ok(r) &&
           sml_tgt_value(id, r) >= sml_tgt_threshold(id, margin);
}

const char *sml_tgt_state_name(sml_tgt_state s) {
    return s == SML_TGT_MET ? "met" : s == SML_TGT_MISSED ? "missed" : "NOT MEASURED";
}

int sml_tgt_status_met(const char *status) { return status && !strcmp(status, SML_TGT_STATUS); }

/* The words each target prints, built from the same numbers the rules use. */
static void describe(sml_tgt_result *t, sml_target_id id, double margin, int version) {
    static const char *const NAMES[SML_TGT_COUNT] = {
        "T1", "T2", "T3", "T4", "T5", "T6", "vs-field", "at-limit", "short-vs-field"};
    const double f = SML_TGT_FRAC_MEMCPY * 100, c = SML_TGT_VS_CUDNN,
                 th = sml_tgt_threshold(id, margin);
    const int lo = SML_TGT_SHORT_MIN_COLS, hi = SML_TGT_SHORT_MAX_COLS;
    const long long big = (long long)SML_TGT_BIG_BYTES;
    char *title = t->title, *rule = t->rule;
    const size_t tn = sizeof t->title, rn = sizeof t->rule;
    t->name = NAMES[id];
    t->threshold = th;
    switch (id) {
    case SML_TGT_BANDWIDTH:
        snprintf(title, tn, ">= %.0f%% of memcpy, traffic >= %lld MiB", f, big >> 20);
        snprintf(rule, rn, "frac_memcpy >= %.2f on rows with bytes_moved >= %lld", th, big);
        break;
    case SML_TGT_LONG:
        snprintf(title, tn, ">= %.0f%% of memcpy, long rows", f);
        snprintf(rule, rn,
                 "frac_memcpy >= %.2f on rows (rows, cols) = (%lld, %lld) or (%lld, %lld)", th,
                 (long long)LONG_SHAPES[0][0], (long long)LONG_SHAPES[0][1],
                 (long long)LONG_SHAPES[1][0], (long long)LONG_SHAPES[1][1]);
        break;
    case SML_TGT_CUDNN:
        snprintf(title, tn, ">= %.2fx cuDNN", c);
        snprintf(rule, rn, "vs_cudnn >= %.2f on every row", th);
        break;
    case SML_TGT_BEST:
        snprintf(title, tn, "not slower than the best other kernel (>= %.2fx)", th);
        snprintf(rule, rn, "vs_best_other >= 1 - decision_margin = %.2f on every row", th);
        break;
    case SML_TGT_SHORT:
        snprintf(title, tn, "within %.1fx of the copy kernel, %d-%d cols",
                 1 / SML_TGT_SHORT_FRAC_COPY, lo, hi);
        snprintf(rule, rn, "frac_copy_kernel >= 1/%.1f = %.4f on rows with %d <= cols <= %d",
                 1 / SML_TGT_SHORT_FRAC_COPY, th, lo, hi);
        break;
    case SML_TGT_VS_FIELD:
    case SML_TGT_SHORT_FIELD:
        snprintf(title, tn, "traffic %s %lld MiB: >= %.2fx the fastest framework baseline",
                 id == SML_TGT_VS_FIELD ? ">=" : "<", big >> 20, th);
        {
            char field[64] = "record with \"framework\": true";
            if (version == 1) { /* a version 1 ledger's baselines go by name */
                memcpy(field, "of ", 4);
                sml_ledger_v1_framework_list(", ", field + 3, sizeof field - 3);
            }
            snprintf(rule, rn,
                     "median_ms(fastest %s) / median_ms >= %.2f on rows with bytes_moved %s %lld",
                     field, th, id == SML_TGT_VS_FIELD ? ">=" : "<", big);
            break;
        }
    case SML_TGT_AT_LIMIT:
        snprintf(title, tn, "traffic >= %lld MiB: >= %.2f of the traffic-matched limit", big >> 20,
                 th);
        snprintf(rule, rn, "frac_limit >= %.2f on rows with bytes_moved >= %lld", th, big);
        break;
    default:
        snprintf(title, tn, "status %s", SML_TGT_STATUS);
        snprintf(rule, rn, "the kernel's record has status == %s", SML_TGT_STATUS);
        break;
    }
}

/* ---- Reading the ledger ---- */

/* A metric: required on a row whose check is ok; a row that is not ok may leave it out or null. */
static int get_metric(const sml_json *o, const char *key, int required, double *dst,
                      const char *where, char *err, size_t errlen) {
    const sml_json *v = sml_json_get(o, key);
    *dst = NAN;
    /* Finite only: a fraction or a time of "inf" would meet every threshold, and a time of
     * "nan" is no time (the bench writes these as absent or null where it has none). */
    if (sml_json_is_num(v) && isfinite(v->number)) {
        *dst = v->number;
        return 1;
    }
    if (!required && (!v || v->type == SML_JSON_NULL)) return 1;
    if (!required && v->type == SML_JSON_STRING && !strcmp(v->string, "nan") &&
        strcmp(key, "median_ms"))
        return 1;
    snprintf(err, errlen, "%s: '%s' missing or not a finite number", where, key);
    return 0;
}

static int read_row(const sml_json *x, sml_tgt_row *r, const char *where, char *err,
                    size_t errlen) {
    if (!x || x->type != SML_JSON_OBJECT) {
        snprintf(err, errlen, "%s: not an object", where);
        return 0;
    }
    if (!sml_json_req_str(x, "op", r->op, sizeof r->op, where, err, errlen) ||
        !sml_json_req_str(x, "dtype", r->dtype, sizeof r->dtype, where, err, errlen) ||
        !sml_json_req_int(x, "rows", &r->rows, where, err, errlen) ||
        !sml_json_req_int(x, "cols", &r->cols, where, err, errlen) ||
        !sml_json_req_int(x, "bytes_moved", &r->bytes, where, err, errlen) ||
        !sml_json_req_str(x, "check", r->check, sizeof r->check, where, err, errlen))
        return 0;
    const int need = sml_tgt_row_ok(r);
    if (!get_metric(x, "gbps", need, &r->gbps, where, err, errlen) ||
        !get_metric(x, "frac_memcpy", need, &r->frac_memcpy, where, err, errlen) ||
        !get_metric(x, "frac_copy_kernel", need, &r->frac_copy_kernel, where, err, errlen) ||
        !get_metric(x, "vs_cudnn", need, &r->vs_cudnn, where, err, errlen) ||
        !get_metric(x, "vs_best_other", need, &r->vs_best_other, where, err, errlen))
        return 0;
    /* Only printed: a ledger with a single kernel has no best other; an older ledger has no
     * auto_path. */
    /* Not in ledgers written before the limit was measured, nor on an untimed row. */
    if (!get_metric(x, "frac_limit", 0, &r->frac_limit, where, err, errlen) ||
        !get_metric(x, "median_ms", 0, &r->median_ms, where, err, errlen))
        return 0;
    if (r->median_ms <= 0) {
        snprintf(err, errlen, "%s: 'median_ms' not > 0", where);
        return 0;
    }
    r->has_limit = sml_json_is_num(sml_json_get(x, "limit_gbps"));
    r->field_ms = r->vs_field = NAN;
    const char *b = sml_json_str(sml_json_get(x, "best_other"));
    snprintf(r->best_other, sizeof r->best_other, "%s", b ? b : "-");
    sml_printable(r->best_other);
    const char *a = sml_json_str(sml_json_get(x, "auto_path"));
    snprintf(r->auto_path, sizeof r->auto_path, "%s", a ? a : "");
    sml_printable(r->auto_path);
    return 1;
}

static void read_environment(const sml_json *doc, sml_tgt_report *out) {
    const sml_json *env = sml_json_get(doc, "environment");
    const char *gpu = sml_json_str(sml_json_get(sml_json_get(env, "gpu"), "name"));
    const char *sweep = sml_json_str(sml_json_get(doc, "sweep"));
    snprintf(out->gpu, sizeof out->gpu, "%s", gpu ? gpu : "no GPU");
    const char *plans = sml_json_str(sml_json_get(env, "auto_plans"));
    snprintf(out->auto_plans, sizeof out->auto_plans, "%s", plans ? plans : "not recorded");
    sml_printable(out->auto_plans);
    snprintf(out->sweep, sizeof out->sweep, "%s", sweep ? sweep : "-");
    sml_printable(out->gpu);
    sml_printable(out->sweep);
    out->memcpy_gbps =
        sml_json_num(sml_json_get(sml_json_get(env, "copy"), "memcpy_d2d_gbps"), NAN);
    const sml_json *part = sml_json_get(doc, "partial");
    /* Counts out of range read as absent (0): a cast of such a double would be undefined. */
    if (!sml_json_int(sml_json_get(part, "cases_measured"), 0, INT32_MAX, &out->cases_measured))
        out->cases_measured = 0;
    if (!sml_json_int(sml_json_get(part, "cases_planned"), 0, INT32_MAX, &out->cases_planned))
        out->cases_planned = 0;
    const sml_json *ops = sml_json_get(doc, "ops");
    for (size_t i = 0; i < sml_json_len(ops); i++) {
        const char *op = sml_json_str(sml_json_at(ops, i));
        size_t used = strlen(out->ops);
        if (op) snprintf(out->ops + used, sizeof out->ops - used, "%s%s", used ? ", " : "", op);
        sml_printable(out->ops);
    }
}

static int read_header(const sml_json *doc, sml_tgt_report *out, char *err, size_t errlen) {
    if (!doc || doc->type != SML_JSON_OBJECT) {
        snprintf(err, errlen, "not a JSON object: not a softmax-lab ledger");
        return 0;
    }
    const char *schema = sml_json_str(sml_json_get(doc, "schema"));
    if (!(out->version = sml_ledger_schema_version(schema, err, errlen))) return 0;
    const sml_json *m = sml_json_get(sml_json_get(doc, "config"), "decision_margin");
    if (!sml_json_is_num(m) || !sml_margin_ok(m->number)) {
        snprintf(err, errlen, "'config.decision_margin' missing or not a number in [0, %.2f]",
                 SML_MAX_MARGIN);
        return 0;
    }
    out->margin = m->number;
    read_environment(doc, out);
    return 1;
}

/* The kernel's one record; its index goes to *at for error messages. */
static const sml_json *find_record(const sml_json *doc, const char *kernel, size_t *at, char *err,
                                   size_t errlen) {
    const sml_json *recs = sml_json_get(doc, "records");
    if (!recs || recs->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "'records' missing or not an array");
        return NULL;
    }
    const sml_json *found = NULL;
    char names[256] = "";
    for (size_t i = 0; i < recs->n; i++) {
        const char *k = sml_json_str(sml_json_get(recs->items[i], "kernel"));
        if (!k) {
            snprintf(err, errlen, "records[%zu]: 'kernel' missing or not a string", i);
            return NULL;
        }
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", k);
        sml_printable(names);
        if (strcmp(k, kernel)) continue;
        if (found) { /* which of two records would speak for the kernel is not ours to guess */
            snprintf(err, errlen, "records[%zu]: a second record for kernel '%s'", i, kernel);
            return NULL;
        }
        found = recs->items[i];
        *at = i;
    }
    if (!found)
        snprintf(err, errlen, "no record for kernel '%s' (the ledger has: %s)", kernel, names);
    return found;
}

static int same_cell(const sml_tgt_row *a, const sml_tgt_row *b) {
    return a->rows == b->rows && a->cols == b->cols && !strcmp(a->op, b->op) &&
           !strcmp(a->dtype, b->dtype);
}

static int read_record(const sml_json *rec, size_t at, sml_tgt_report *out, char *err,
                       size_t errlen) {
    char where[96];
    snprintf(where, sizeof where, "records[%zu]", at);
    if (!sml_json_req_str(rec, "status", out->status, sizeof out->status, where, err, errlen))
        return 0;
    const sml_json *ev = sml_json_get(rec, "evidence");
    if (!ev || ev->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "%s: 'evidence' missing or not an array", where);
        return 0;
    }
    out->rows = calloc(ev->n ? ev->n : 1, sizeof *out->rows);
    if (!out->rows) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    for (size_t j = 0; j < ev->n; j++, out->n++) {
        snprintf(where, sizeof where, "records[%zu].evidence[%zu]", at, j);
        if (!read_row(ev->items[j], &out->rows[j], where, err, errlen)) return 0;
        /* A cell counted twice would count twice toward every target. */
        for (size_t i = 0; i < j; i++)
            if (same_cell(&out->rows[i], &out->rows[j])) {
                snprintf(err, errlen,
                         "%s: a second row for %s %s %lldx%lld (the first is evidence[%zu])", where,
                         out->rows[j].op, out->rows[j].dtype, (long long)out->rows[j].rows,
                         (long long)out->rows[j].cols, i);
                return 0;
            }
    }
    return 1;
}

/* Appends name to the ", "-separated list unless it is there already (by whole name: triton
 * is not in triton_online). */
static void add_name(char *list, size_t n, const char *name) {
    if (has_name(list, name)) return;
    const size_t used = strlen(list);
    snprintf(list + used, n - used, "%s%s", used ? ", " : "", name);
}

/* Another kernel's record. A row of it timed without the launch hold (`held`: 0; absent in
 * ledgers older than the hold) is named in the kernel's row on its cell (unheld, and
 * field_unheld for a framework baseline). A framework baseline's rows also set the time to
 * beat: each of the kernel's rows on a cell it timed gets its time when it is the fastest so
 * far. A baseline row that failed its own check still sets the time to beat, as a claim's
 * baseline does; an untimed one (no median_ms) sets none. */
static int read_other_record(const sml_json *rec, size_t at, const char *name, int field,
                             sml_tgt_report *out, char *err, size_t errlen) {
    char where[96];
    snprintf(where, sizeof where, "records[%zu]", at);
    const sml_json *ev = sml_json_get(rec, "evidence");
    if (!ev || ev->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "%s: 'evidence' missing or not an array", where);
        return 0;
    }
    for (size_t j = 0; j < ev->n; j++) {
        snprintf(where, sizeof where, "records[%zu].evidence[%zu]", at, j);
        const sml_json *x = ev->items[j];
        sml_tgt_row b;
        memset(&b, 0, sizeof b);
        if (!x || x->type != SML_JSON_OBJECT) {
            snprintf(err, errlen, "%s: not an object", where);
            return 0;
        }
        if (!sml_json_req_str(x, "op", b.op, sizeof b.op, where, err, errlen) ||
            !sml_json_req_str(x, "dtype", b.dtype, sizeof b.dtype, where, err, errlen) ||
            !sml_json_req_int(x, "rows", &b.rows, where, err, errlen) ||
            !sml_json_req_int(x, "cols", &b.cols, where, err, errlen) ||
            !get_metric(x, "median_ms", 0, &b.median_ms, where, err, errlen))
            return 0;
        if (b.median_ms <= 0) {
            snprintf(err, errlen, "%s: 'median_ms' not > 0", where);
            return 0;
        }
        const sml_json *h = sml_json_get(x, "held");
        int64_t held = 1;
        if (h && h->type != SML_JSON_NULL && !sml_json_int(h, 0, 1, &held)) {
            snprintf(err, errlen, "%s: 'held' not 0 or 1", where);
            return 0;
        }
        if (isnan(b.median_ms)) continue;
        for (size_t i = 0; i < out->n; i++) {
            sml_tgt_row *r = &out->rows[i];
            if (!same_cell(r, &b)) continue;
            if (!held) {
                add_name(r->unheld, sizeof r->unheld, name);
                if (field) add_name(r->field_unheld, sizeof r->field_unheld, name);
            }
            if (!field || !(isnan(r->field_ms) || b.median_ms < r->field_ms)) continue;
            r->field_ms = b.median_ms;
            snprintf(r->field, sizeof r->field, "%s", name);
            sml_printable(r->field);
        }
    }
    return 1;
}

/* Every other kernel's record: the framework baselines (the records that say so, or in a
 * version 1 ledger the names of sml_ledger_v1_framework) set the time to beat, and any row
 * timed unheld is noted; then each row's speedup over the fastest baseline on its cell. */
static int read_field(const sml_json *doc, const char *kernel, sml_tgt_report *out, char *err,
                      size_t errlen) {
    const sml_json *recs = sml_json_get(doc, "records"); /* an array: find_record checked */
    for (size_t i = 0; i < recs->n; i++) {
        const char *k = sml_json_str(sml_json_get(recs->items[i], "kernel"));
        if (!k || !strcmp(k, kernel)) continue; /* find_record refused a record without a name */
        char where[48];
        snprintf(where, sizeof where, "records[%zu]", i);
        const int field =
            sml_ledger_record_framework(out->version, recs->items[i], where, err, errlen);
        if (field < 0) return 0;
        if (!field) {
            if (!read_other_record(recs->items[i], i, k, 0, out, err, errlen)) return 0;
            continue;
        }
        add_name(out->field, sizeof out->field, k);
        sml_printable(out->field);
        if (!read_other_record(recs->items[i], i, k, 1, out, err, errlen)) return 0;
    }
    for (size_t i = 0; i < out->n; i++) {
        sml_tgt_row *r = &out->rows[i];
        if (r->field[0]) r->vs_field = r->field_ms / r->median_ms;
    }
    return 1;
}

/* ---- Counting ---- */

typedef struct miss_key {
    double key;
    size_t idx;
} miss_key;

static int by_key(const void *a, const void *b) {
    const miss_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Misses sorted by value / threshold, smallest first; a row that is not ok leads. */
static void sort_misses(sml_tgt_result *t, const sml_tgt_report *r, sml_target_id id,
                        miss_key *keys) {
    for (size_t k = 0; k < t->nmiss; k++) {
        const sml_tgt_row *x = &r->rows[t->miss[k]];
        keys[k].idx = t->miss[k];
        keys[k].key = !sml_tgt_row_ok(x) ? -INFINITY : sml_tgt_value(id, x) / t->threshold;
    }
    qsort(keys, t->nmiss, sizeof *keys, by_key);
    for (size_t k = 0; k < t->nmiss; k++) t->miss[k] = keys[k].idx;
}

static int count_target(sml_tgt_report *r, sml_target_id id, miss_key *keys) {
    sml_tgt_result *t = &r->t[id];
    t->miss = calloc(r->n ? r->n : 1, sizeof *t->miss);
    t->undecided = calloc(r->n ? r->n : 1, sizeof *t->undecided);
    if (!t->miss || !t->undecided) return 0;
    for (size_t i = 0; i < r->n; i++) {
        const sml_tgt_row *x = &r->rows[i];
        if (!sml_tgt_in(id, x)) continue;
        if (!sml_tgt_measured(id, x)) {
            t->not_measured++;
            continue;
        }
        if (sml_tgt_undecided(id, x, r->margin)) {
            t->undecided[t->nundecided++] = i;
            continue;
        }
        t->counted++;
        if (sml_tgt_met(id, x, r->margin)) {
            t->met++;
        } else {
            t->miss[t->nmiss++] = i;
            if (id == SML_TGT_BEST && sml_tgt_own_kernel(x)) t->own_kernel++;
        }
        if (id == SML_TGT_BEST && sml_tgt_row_ok(x) && x->vs_best_other >= 1.0) t->at_parity++;
    }
    sort_misses(t, r, id, keys);
    /* A target measured against another kernel or the limit says NOT MEASURED unless every one
     * of its rows had that to be measured against; the older targets count what they find. */
    const int needs_other =
        id == SML_TGT_VS_FIELD || id == SML_TGT_AT_LIMIT || id == SML_TGT_SHORT_FIELD;
    t->state = t->nmiss ? SML_TGT_MISSED
               : t->nundecided || (needs_other && (t->not_measured || !t->counted))
                   ? SML_TGT_NOT_MEASURED
                   : SML_TGT_MET;
    return 1;
}

static int evaluate(sml_tgt_report *r) {
    miss_key *keys = calloc(r->n ? r->n : 1, sizeof *keys);
    if (!keys) return 0;
    int ok = 1;
    for (int id = 0; id < SML_TGT_COUNT && ok; id++) {
        describe(&r->t[id], (sml_target_id)id, r->margin, r->version);
        if (id != SML_TGT_STATE) ok = count_target(r, (sml_target_id)id, keys);
    }
    free(keys);
    r->t[SML_TGT_STATE].counted = 1;
    r->t[SML_TGT_STATE].met = sml_tgt_status_met(r->status);
    r->t[SML_TGT_STATE].state = r->t[SML_TGT_STATE].met ? SML_TGT_MET : SML_TGT_MISSED;
    return ok;
}

sml_status sml_targets_doc(const sml_json *doc, const char *kernel, sml_tgt_report *out, char *err,
                           size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!kernel || !kernel[0] || strlen(kernel) >= sizeof out->kernel) {
        snprintf(err, errlen, "bad kernel name");
        return SML_ERR_FORMAT;
    }
    snprintf(out->kernel, sizeof out->kernel, "%s", kernel);
    size_t at = 0;
    const sml_json *rec = NULL;
    if (!read_header(doc, out, err, errlen) ||
        !(rec = find_record(doc, kernel, &at, err, errlen)) ||
        !read_record(rec, at, out, err, errlen) || !read_field(doc, kernel, out, err, errlen)) {
        sml_tgt_report_free(out);
        return SML_ERR_FORMAT;
    }
    if (!evaluate(out)) {
        sml_tgt_report_free(out);
        snprintf(err, errlen, "out of memory");
        return SML_ERR_OUT_OF_MEMORY;
    }
    return SML_OK;
}

sml_status sml_targets_file(const char *path, const char *kernel, sml_tgt_report *out, char *err,
                            size_t errlen) {
    memset(out, 0, sizeof *out);
    sml_json *doc = NULL;
    char e2[384];
    sml_status s = sml_json_parse_file(path, &doc, e2, sizeof e2);
    if (s == SML_OK) s = sml_targets_doc(doc, kernel, out, e2, sizeof e2);
    if (s != SML_OK) snprintf(err, errlen, "%s: %s", path, e2);
    sml_json_free(doc);
    return s;
}

void sml_tgt_report_free(sml_tgt_report *r) {
    for (int id = 0; id < SML_TGT_COUNT; id++) {
        free(r->t[id].miss);
        free(r->t[id].undecided);
    }
    free(r->rows);
    memset(r, 0, sizeof *r);
}

int sml_tgt_all_met(const sml_tgt_report *r) {
    for (int id = 0; id < SML_TGT_COUNT; id++)
        if (r->t[id].state != SML_TGT_MET) return 0;
    return 1;
}

int sml_tgt_any_missed(const sml_tgt_report *r) {
    for (int id = 0; id < SML_TGT_COUNT; id++)
        if (r->t[id].state == SML_TGT_MISSED) return 1;
    return 0;
}
