/* plan_table.c: the plan-table format of plan_table.h, read strictly (every field bounded,
 * every refusal naming the line and the field), written back, and looked up. */
#include "core/plan_table.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static const char *const FAMILY[SML_PLAN_FAMILY_COUNT] = {"warp", "block", "split", "online",
                                                          "coop"};

const char *sml_plan_family_name(sml_plan_family f) {
    return (unsigned)f < SML_PLAN_FAMILY_COUNT ? FAMILY[f] : "?";
}

/* The knobs, their bounds, and the families that take each (bit per family). */
typedef struct knob_def {
    const char *name;
    size_t off;
    int lo, hi;
    unsigned families;
} knob_def;

#define FAM(f) (1u << (f))
static const knob_def KNOBS[] = {
    {"threads", offsetof(sml_plan, threads), 32, 1024,
     FAM(SML_PLAN_BLOCK) | FAM(SML_PLAN_ONLINE) | FAM(SML_PLAN_SPLIT) | FAM(SML_PLAN_COOP)},
    {"K", offsetof(sml_plan, K), 1, 32, FAM(SML_PLAN_WARP) | FAM(SML_PLAN_BLOCK)},
    {"R", offsetof(sml_plan, R), 1, 8, FAM(SML_PLAN_WARP)},
    {"blocks", offsetof(sml_plan, blocks), 1, 64, (1u << SML_PLAN_FAMILY_COUNT) - 1},
    {"C", offsetof(sml_plan, C), 1, 16, FAM(SML_PLAN_SPLIT)},
    {"stages", offsetof(sml_plan, stages), 2, 4, FAM(SML_PLAN_COOP)},
    {"slices", offsetof(sml_plan, slices), 1, 65536, FAM(SML_PLAN_COOP)},
};
#define NKNOBS (sizeof KNOBS / sizeof KNOBS[0])

static int *knob_at(sml_plan *p, size_t k) { return (int *)((char *)p + KNOBS[k].off); }
static int knob_get(const sml_plan *p, size_t k) {
    return *(const int *)((const char *)p + KNOBS[k].off);
}

static int pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* Why a knob's value is impossible for its family, or NULL. 0 is always allowed (default). */
static const char *knob_problem(size_t k, int v, sml_plan_family f) {
    if (v == 0) return NULL;
    if (!(KNOBS[k].families & FAM(f))) return "does not apply to this kernel family";
    if (v < KNOBS[k].lo || v > KNOBS[k].hi) return "out of range";
    if (!strcmp(KNOBS[k].name, "threads") && v % 32) return "not a multiple of 32";
    if ((!strcmp(KNOBS[k].name, "K") || !strcmp(KNOBS[k].name, "C")) && !pow2(v))
        return "not a power of two";
    return NULL;
}

/* Every knob of p against its family; the first bad one into err. */
static int plan_ok(const sml_plan *p, const char *where, int line, char *err, size_t errlen) {
    if ((unsigned)p->family >= SML_PLAN_FAMILY_COUNT) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: family: unknown kernel family", where,
                   line);
        return 0;
    }
    for (size_t k = 0; k < NKNOBS; k++) {
        const int v = knob_get(p, k);
        const char *why = knob_problem(k, v, p->family);
        if (why) {
            sml_errorf(SML_ERR_FORMAT, err, errlen,
                       "%s:%d: %s: %d %s (%s: %d..%d, 0 for the launcher's choice)", where, line,
                       KNOBS[k].name, v, why, FAMILY[p->family], KNOBS[k].lo, KNOBS[k].hi);
            return 0;
        }
    }
    return 1;
}

/* ---- numbers and fields -------------------------------------------------------------- */

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!*s || !isdigit((unsigned char)*s)) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

/* "LO-HI" with HI a number or `max` (allow_star: also "*"), 1 <= LO <= HI <= 2^62. */
static int parse_band(const char *s, int allow_star, int64_t *lo, int64_t *hi) {
    if (allow_star && !strcmp(s, "*")) {
        *lo = 1;
        *hi = SML_PLAN_MAX_BAND;
        return 1;
    }
    const char *dash = strchr(s, '-');
    char a[32];
    if (!dash || (size_t)(dash - s) >= sizeof a) return 0;
    memcpy(a, s, (size_t)(dash - s));
    a[dash - s] = 0;
    if (!parse_i64(a, 1, SML_PLAN_MAX_BAND, lo)) return 0;
    if (!strcmp(dash + 1, "max"))
        *hi = SML_PLAN_MAX_BAND;
    else if (!parse_i64(dash + 1, 1, SML_PLAN_MAX_BAND, hi))
        return 0;
    return *lo <= *hi;
}

static int parse_family(const char *s, sml_plan_family *f) {
    for (int i = 0; i < SML_PLAN_FAMILY_COUNT; i++)
        if (!strcmp(s, FAMILY[i])) {
            *f = (sml_plan_family)i;
            return 1;
        }
    return 0;
}

/* A strict op or dtype name: the canonical spelling only. */
static int parse_op(const char *s, sml_op *op) {
    for (int i = 0; i < SML_OP_COUNT; i++)
        if (!strcmp(s, sml_op_name((sml_op)i))) {
            *op = (sml_op)i;
            return 1;
        }
    return 0;
}
static int parse_dtype(const char *s, sml_dtype *dt) {
    for (int i = 0; i < SML_DTYPE_COUNT; i++)
        if (!strcmp(s, sml_dtype_name((sml_dtype)i))) {
            *dt = (sml_dtype)i;
            return 1;
        }
    return 0;
}

/* "NAME=VALUE" into the plan's knob; 0 with err set when bad. */
static int parse_knob(const char *tok, sml_plan *p, const char *where, int line, char *err,
                      size_t errlen) {
    const char *eq = strchr(tok, '=');
    size_t k = 0;
    for (; eq && k < NKNOBS; k++)
        if (strlen(KNOBS[k].name) == (size_t)(eq - tok) &&
            !strncmp(tok, KNOBS[k].name, (size_t)(eq - tok)))
            break;
    if (!eq || k == NKNOBS) {
        sml_errorf(SML_ERR_FORMAT, err, errlen,
                   "%s:%d: knob: '%.40s' is not KNOB=VALUE with KNOB threads, K, R, blocks, C, "
                   "stages or slices",
                   where, line, tok);
        return 0;
    }
    int64_t v;
    if (!parse_i64(eq + 1, 0, 1 << 20, &v)) {
        sml_errorf(SML_ERR_FORMAT, err, errlen,
                   "%s:%d: %s: '%.40s' is not a whole number from 0 to %d", where, line,
                   KNOBS[k].name, eq + 1, KNOBS[k].hi);
        return 0;
    }
    *knob_at(p, k) = (int)v;
    return 1;
}

/* ---- lines --------------------------------------------------------------------------- */

#define MAX_TOKENS 16

/* Split a line in place on blanks; returns the token count, or -1 past MAX_TOKENS. */
static int tokenize(char *s, char **tok) {
    int n = 0;
    for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == MAX_TOKENS) return -1;
        tok[n++] = t;
    }
    return n;
}

static int parse_entry(char **tok, int n, const char *where, int line, sml_plan_entry *e, char *err,
                       size_t errlen) {
    static const char *const FIELD[] = {"op", "dtype", "cols", "rows", "family"};
    static const char *const WANT[] = {
        "softmax, log_softmax, softmax_bwd or log_softmax_bwd", "fp32, fp16 or bf16",
        "LO-HI, 1 <= LO <= HI (HI may be max)", "* or LO-HI, 1 <= LO <= HI (HI may be max)",
        "warp, block, split, online or coop (an unknown kernel family)"};
    memset(e, 0, sizeof *e);
    e->line = line;
    int bad = 0; /* the first field that is missing or wrong */
    if (n > 0 && parse_op(tok[0], &e->op)) bad = 1;
    if (bad == 1 && n > 1 && parse_dtype(tok[1], &e->dtype)) bad = 2;
    if (bad == 2 && n > 2 && parse_band(tok[2], 0, &e->cols_lo, &e->cols_hi)) bad = 3;
    if (bad == 3 && n > 3 && parse_band(tok[3], 1, &e->rows_lo, &e->rows_hi)) bad = 4;
    if (bad == 4 && n > 4 && parse_family(tok[4], &e->plan.family)) bad = 5;
    if (bad < 5) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: %s: %s%.40s%s (want %s)", where, line,
                   FIELD[bad], bad < n ? "'" : "missing", bad < n ? tok[bad] : "",
                   bad < n ? "'" : "", WANT[bad]);
        return 0;
    }
    for (int i = 5; i < n; i++)
        if (!parse_knob(tok[i], &e->plan, where, line, err, errlen)) return 0;
    return plan_ok(&e->plan, where, line, err, errlen);
}

typedef struct parser {
    const char *where;
    int have_format, have_name, have_sms, have_dram;
    sml_plan_key key;
    sml_plan_entry *e;
    size_t n;
} parser;

/* A gpu.* line: the rest of the line after the field name is its value. */
static int parse_key_line(parser *ps, const char *field, const char *value, int line, char *err,
                          size_t errlen) {
    if (!strcmp(field, "gpu.name")) {
        size_t len = strlen(value);
        while (len && isspace((unsigned char)value[len - 1])) len--;
        if (ps->have_name || !len || len >= SML_PLAN_NAME_LEN) {
            sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: gpu.name: %s", ps->where, line,
                       ps->have_name ? "given twice"
                       : len         ? "longer than 95 characters"
                                     : "empty");
            return 0;
        }
        memcpy(ps->key.name, value, len);
        ps->key.name[len] = 0;
        ps->have_name = 1;
        return 1;
    }
    int64_t v;
    if (!strcmp(field, "gpu.sms")) {
        if (ps->have_sms || !parse_i64(value, 1, SML_PLAN_MAX_SMS, &v)) {
            sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: gpu.sms: %s", ps->where, line,
                       ps->have_sms ? "given twice" : "not a whole number from 1 to 1024");
            return 0;
        }
        ps->key.sms = (int)v;
        ps->have_sms = 1;
        return 1;
    }
    char *end;
    errno = 0;
    const double d = strtod(value, &end);
    if (ps->have_dram || !isdigit((unsigned char)*value) || *end || errno ||
        !(d >= 0.1 && d <= 1000.0)) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: gpu.dram: %s", ps->where, line,
                   ps->have_dram ? "given twice"
                                 : "not a number from 0.1 to 1000 (DRAM bytes per SM clock)");
        return 0;
    }
    ps->key.dram = d;
    ps->have_dram = 1;
    return 1;
}

/* One line (NUL-terminated, no newline). */
static int parse_line(parser *ps, char *s, int line, char *err, size_t errlen) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s || *s == '#') return 1;
    for (const char *c = s; *c; c++)
        if (!isprint((unsigned char)*c) && *c != '\t') {
            sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: line: a control or non-ASCII character",
                       ps->where, line);
            return 0;
        }
    if (!ps->have_format) {
        size_t len = strlen(s);
        while (len && isspace((unsigned char)s[len - 1])) s[--len] = 0;
        if (strcmp(s, SML_PLAN_FORMAT)) {
            sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: format: the first line must be '%s'",
                       ps->where, line, SML_PLAN_FORMAT);
            return 0;
        }
        ps->have_format = 1;
        return 1;
    }
    if (!strncmp(s, "gpu.", 4)) {
        char *sp = s + strcspn(s, " \t");
        const char *value = *sp ? sp + 1 + strspn(sp + 1, " \t") : sp;
        *sp = 0;
        if (strcmp(s, "gpu.name") && strcmp(s, "gpu.sms") && strcmp(s, "gpu.dram")) {
            sml_errorf(SML_ERR_FORMAT, err, errlen,
                       "%s:%d: %.40s: unknown GPU key field (gpu.name, gpu.sms, gpu.dram)",
                       ps->where, line, s);
            return 0;
        }
        if (ps->n) {
            sml_errorf(SML_ERR_FORMAT, err, errlen,
                       "%s:%d: %s: the GPU key comes before the entries", ps->where, line, s);
            return 0;
        }
        return parse_key_line(ps, s, value, line, err, errlen);
    }
    if (!ps->have_name || !ps->have_sms || !ps->have_dram) {
        sml_errorf(SML_ERR_FORMAT, err, errlen,
                   "%s:%d: %s: missing before the first entry (the GPU key)", ps->where, line,
                   !ps->have_name  ? "gpu.name"
                   : !ps->have_sms ? "gpu.sms"
                                   : "gpu.dram");
        return 0;
    }
    if (ps->n == SML_PLAN_MAX_ENTRIES) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: entries: more than %d", ps->where, line,
                   SML_PLAN_MAX_ENTRIES);
        return 0;
    }
    char *tok[MAX_TOKENS];
    const int n = tokenize(s, tok);
    if (n < 0) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: line: more than %d fields", ps->where, line,
                   MAX_TOKENS);
        return 0;
    }
    return parse_entry(tok, n, ps->where, line, &ps->e[ps->n++], err, errlen);
}

/* ---- order, overlaps, the index ------------------------------------------------------ */

static int before(const sml_plan_entry *a, const sml_plan_entry *b) {
    if (a->op != b->op) return a->op < b->op;
    if (a->dtype != b->dtype) return a->dtype < b->dtype;
    if (a->cols_lo != b->cols_lo) return a->cols_lo < b->cols_lo;
    return a->rows_lo < b->rows_lo;
}

static int overlap(const sml_plan_entry *a, const sml_plan_entry *b) {
    return a->op == b->op && a->dtype == b->dtype && a->cols_lo <= b->cols_hi &&
           b->cols_lo <= a->cols_hi && a->rows_lo <= b->rows_hi && b->rows_lo <= a->rows_hi;
}

/* Sorted, no two bands of one op and dtype overlapping; then the index per op and dtype. */
static sml_status check_and_index(sml_plan_table *t, const char *where, char *err, size_t errlen) {
    for (size_t i = 0; i < t->n; i++) {
        const sml_plan_entry *e = &t->e[i];
        if ((unsigned)e->op >= SML_OP_COUNT || (unsigned)e->dtype >= SML_DTYPE_COUNT ||
            e->cols_lo < 1 || e->cols_lo > e->cols_hi || e->rows_lo < 1 ||
            e->rows_lo > e->rows_hi || e->cols_hi > SML_PLAN_MAX_BAND ||
            e->rows_hi > SML_PLAN_MAX_BAND)
            return sml_errorf(SML_ERR_FORMAT, err, errlen,
                              "%s:%d: entry: op, dtype or band out of range", where, e->line);
        if (!plan_ok(&e->plan, where, e->line, err, errlen)) return SML_ERR_FORMAT;
        if (i && !before(&t->e[i - 1], e))
            return sml_errorf(
                SML_ERR_FORMAT, err, errlen,
                "%s:%d: order: entries must be sorted by op, dtype, cols, rows (after line %d)",
                where, e->line, t->e[i - 1].line);
        for (size_t j = t->first[e->op][e->dtype]; j < i; j++)
            if (overlap(&t->e[j], e))
                return sml_errorf(SML_ERR_FORMAT, err, errlen,
                                  "%s:%d: cols/rows: the bands overlap line %d's", where, e->line,
                                  t->e[j].line);
        if (!i || t->e[i - 1].op != e->op || t->e[i - 1].dtype != e->dtype)
            t->first[e->op][e->dtype] = i;
        t->end[e->op][e->dtype] = i + 1;
    }
    return SML_OK;
}

static void table_clear(sml_plan_table *t) {
    free(t->e);
    memset(t, 0, sizeof *t);
}

void sml_plan_table_free(sml_plan_table *t) {
    if (t) table_clear(t);
}

sml_status sml_plan_table_adopt(sml_plan_table *t, const sml_plan_key *key, sml_plan_entry *e,
                                size_t n, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    t->key = *key;
    t->e = e;
    t->n = n;
    const sml_status s = n > SML_PLAN_MAX_ENTRIES
                             ? sml_errorf(SML_ERR_FORMAT, err, errlen,
                                          "plans: more than %d entries", SML_PLAN_MAX_ENTRIES)
                             : check_and_index(t, "plans", err, errlen);
    if (s != SML_OK) table_clear(t);
    return s;
}

/* ---- the whole text ------------------------------------------------------------------ */

sml_status sml_plan_table_parse(const char *text, size_t len, const char *where, sml_plan_table *t,
                                char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.where = where ? where : "plans";
    size_t cap = 16;
    ps.e = malloc(cap * sizeof *ps.e);
    if (!ps.e) return sml_errorf(SML_ERR_OUT_OF_MEMORY, err, errlen, "%s: out of memory", ps.where);
    char line[SML_PLAN_MAX_LINE + 2];
    size_t pos = 0;
    int lineno = 0, ok = 1;
    while (ok && pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        lineno++;
        size_t ll = end - pos;
        if (ll && text[pos + ll - 1] == '\r') ll--;
        if (ll > SML_PLAN_MAX_LINE || memchr(text + pos, 0, ll)) {
            ok = 0;
            sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: line: %s", ps.where, lineno,
                       ll > SML_PLAN_MAX_LINE ? "longer than 512 characters" : "a NUL byte");
            break;
        }
        memcpy(line, text + pos, ll);
        line[ll] = 0;
        pos = end + 1;
        if (ps.n == cap && cap < SML_PLAN_MAX_ENTRIES) {
            sml_plan_entry *ne = realloc(ps.e, 2 * cap * sizeof *ne);
            if (!ne) {
                ok = 0;
                sml_errorf(SML_ERR_OUT_OF_MEMORY, err, errlen, "%s: out of memory", ps.where);
                break;
            }
            ps.e = ne;
            cap *= 2;
        }
        ok = parse_line(&ps, line, lineno, err, errlen);
    }
    if (ok && !ps.have_format)
        ok = !sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:1: format: the first line must be '%s'",
                         ps.where, SML_PLAN_FORMAT);
    if (ok && (!ps.have_name || !ps.have_sms || !ps.have_dram))
        ok = !sml_errorf(SML_ERR_FORMAT, err, errlen, "%s:%d: %s: missing (the GPU key)", ps.where,
                         lineno,
                         !ps.have_name  ? "gpu.name"
                         : !ps.have_sms ? "gpu.sms"
                                        : "gpu.dram");
    if (!ok) {
        free(ps.e);
        return SML_ERR_FORMAT;
    }
    t->key = ps.key;
    t->e = ps.e;
    t->n = ps.n;
    const sml_status s = check_and_index(t, ps.where, err, errlen);
    if (s != SML_OK) table_clear(t);
    return s;
}

sml_status sml_plan_table_load(const char *path, sml_plan_table *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sml_errorf(SML_ERR_IO, err, errlen, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(SML_PLAN_MAX_FILE + 1);
    if (!buf) {
        fclose(f);
        return sml_errorf(SML_ERR_OUT_OF_MEMORY, err, errlen, "%s: out of memory", path);
    }
    const size_t got = fread(buf, 1, SML_PLAN_MAX_FILE + 1, f);
    const int rerr = ferror(f);
    fclose(f);
    sml_status s;
    if (rerr)
        s = sml_errorf(SML_ERR_IO, err, errlen, "%s: read error", path);
    else if (got > SML_PLAN_MAX_FILE)
        s = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: file: larger than %u bytes", path,
                       SML_PLAN_MAX_FILE);
    else
        s = sml_plan_table_parse(buf, got, path, t, err, errlen);
    free(buf);
    return s;
}

/* ---- writing, describing, finding ---------------------------------------------------- */

static void band(char *buf, size_t n, int64_t lo, int64_t hi, int star) {
    if (star && lo == 1 && hi == SML_PLAN_MAX_BAND)
        snprintf(buf, n, "*");
    else if (hi == SML_PLAN_MAX_BAND)
        snprintf(buf, n, "%lld-max", (long long)lo);
    else
        snprintf(buf, n, "%lld-%lld", (long long)lo, (long long)hi);
}

const char *sml_plan_describe(const sml_plan *p, char *buf, size_t n) {
    size_t used = (size_t)snprintf(buf, n, "%s", sml_plan_family_name(p->family));
    for (size_t k = 0; k < NKNOBS && used < n; k++) {
        const int v = knob_get(p, k);
        if (v) used += (size_t)snprintf(buf + used, n - used, " %s=%d", KNOBS[k].name, v);
    }
    return buf;
}

int sml_plan_table_write(const sml_plan_table *t, const char *comment, FILE *f) {
    if (comment)
        for (const char *c = comment; *c;) {
            const size_t l = strcspn(c, "\n");
            fprintf(f, "# %.*s\n", (int)l, c);
            c += l + (c[l] == '\n');
        }
    fprintf(f, "%s\ngpu.name %s\ngpu.sms %d\ngpu.dram %.1f\n", SML_PLAN_FORMAT, t->key.name,
            t->key.sms, t->key.dram);
    fprintf(f, "# op dtype cols rows plan\n");
    for (size_t i = 0; i < t->n; i++) {
        const sml_plan_entry *e = &t->e[i];
        char c[48], r[48], p[160];
        band(c, sizeof c, e->cols_lo, e->cols_hi, 0);
        band(r, sizeof r, e->rows_lo, e->rows_hi, 1);
        fprintf(f, "%s %s %s %s %s\n", sml_op_name(e->op), sml_dtype_name(e->dtype), c, r,
                sml_plan_describe(&e->plan, p, sizeof p));
    }
    return ferror(f) ? -1 : 0;
}

const sml_plan_entry *sml_plan_table_find(const sml_plan_table *t, sml_op op, sml_dtype dt,
                                          int64_t rows, int64_t cols) {
    if (!t || (unsigned)op >= SML_OP_COUNT || (unsigned)dt >= SML_DTYPE_COUNT) return NULL;
    for (size_t i = t->first[op][dt]; i < t->end[op][dt]; i++) {
        const sml_plan_entry *e = &t->e[i];
        if (cols < e->cols_lo) break; /* sorted by cols_lo */
        if (cols <= e->cols_hi && rows >= e->rows_lo && rows <= e->rows_hi) return e;
    }
    return NULL;
}

static long tenths(double d) { return lround(d * 10.0); }

const char *sml_plan_key_mismatch(const sml_plan_key *table, const sml_plan_key *gpu) {
    if (strcmp(table->name, gpu->name)) return "gpu.name";
    if (table->sms != gpu->sms) return "gpu.sms";
    if (tenths(table->dram) != tenths(gpu->dram)) return "gpu.dram";
    return NULL;
}

int sml_plan_key_matches(const sml_plan_key *table, const sml_plan_key *gpu) {
    return sml_plan_key_mismatch(table, gpu) == NULL;
}
