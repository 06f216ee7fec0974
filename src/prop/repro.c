/* repro.c: saving and loading reproducers. Reading one back bounds every field and names
 * the first one that is missing or bad. */
#include "prop/repro.h"
#include "softmax_lab_plugin.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "json/json_read.h"
#include "io/file_read.h"
#include "io/npy.h"
#include "io/out_file.h"

#ifndef SML_VERSION
#define SML_VERSION "unknown"
#endif

/* Copy with truncation (snprintf("%s") trips -Wformat-truncation on fixed-size fields). */
static void cpy(char *d, size_t n, const char *s) {
    size_t L = strlen(s);
    if (L >= n) L = n - 1;
    memcpy(d, s, L);
    d[L] = 0;
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

const char *sml_prop_replay_prefix(const char *library, const char *replay_cmd) {
    if (sml_source_is_python(library)) return SML_PYTHON_REPLAY;
    return replay_cmd ? replay_cmd : "softmax-lab replay";
}

void sml_prop_case_flags(const sml_prop_config *cfg, char *buf, size_t n) {
    if (!n) return;
    int k = snprintf(buf, n, "%s%s", cfg->profile == SML_PROP_PROFILE_LONG ? " --long" : "",
                     cfg->strict ? " --strict" : "");
    if (cfg->case_timeout > 0 && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " --case-timeout %g", cfg->case_timeout);
}

void sml_prop_load_arg(const char *library, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    if (!library || !library[0]) return;
    int plain = 1;
    for (const char *c = library; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("/._-+=:,@%", *c)) plain = 0;
    if (plain) {
        snprintf(buf, n, " --load %s", library);
        return;
    }
    size_t k = (size_t)snprintf(buf, n, " --load '");
    for (const char *c = library; *c && k + 5 < n; c++) {
        if (*c == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else
            buf[k++] = *c;
    }
    if (k + 2 <= n) {
        buf[k++] = '\'';
        buf[k] = 0;
    } else {
        buf[0] = 0; /* too long to print whole: print none rather than a wrong one */
    }
}

void sml_prop_repro_describe(sml_prop_repro *m, const char *kernel, sml_prop_id prop,
                             sml_prop_outcome outcome, const char *message, uint64_t run_seed,
                             int64_t case_index, int level, const sml_prop_case *original,
                             int64_t shrink_steps) {
    memset(m, 0, sizeof *m);
    snprintf(m->kernel, sizeof m->kernel, "%s", kernel);
    m->prop = prop;
    snprintf(m->verdict, sizeof m->verdict, "%s", sml_prop_outcome_name(outcome));
    snprintf(m->message, sizeof m->message, "%s", message);
    m->run_seed = run_seed;
    m->case_index = case_index;
    m->level = level;
    m->orig = sml_prop_case_layout(original);
    m->shrink_steps = shrink_steps;
    snprintf(m->family, sizeof m->family, "%s", original->family);
}

/* The reproducer's .json (the inputs' file names are xp, dyp, lp; path is its own). */
static void write_repro_json(FILE *f, const sml_prop_case *c, const sml_prop_repro *m,
                             const char *replay_cmd, const char *path, const char *xp,
                             const char *dyp, const char *lp) {
    int bwd = sml_op_is_backward(c->op);
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": \"%s\",\n  \"kernel\": ",
            SML_PROP_REPRO_FORMAT, SML_VERSION);
    json_str(f, m->kernel);
    fprintf(f, ",\n  \"op\": \"%s\",\n  \"dtype\": \"%s\",\n", sml_op_name(c->op),
            sml_dtype_name(c->dtype));
    fprintf(f,
            "  \"rows\": %lld,\n  \"cols\": %lld,\n  \"ld\": %lld,\n  \"offset\": %lld,\n  "
            "\"inplace\": %s,\n",
            (long long)c->rows, (long long)c->cols, (long long)c->ld, (long long)c->offset,
            c->inplace ? "true" : "false");
    fprintf(f, "  \"property\": \"%s\",\n  \"verdict\": ", sml_prop_name(m->prop));
    json_str(f, m->verdict);
    fprintf(f, ",\n  \"message\": ");
    json_str(f, m->message);
    fprintf(f, ",\n  \"load\": ");
    if (m->load[0])
        json_str(f, m->load);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"strict\": %s", m->strict ? "true" : "false");
    fprintf(f, ",\n  \"x\": ");
    json_str(f, base_name(xp));
    fprintf(f, ",\n  \"dy\": ");
    if (bwd)
        json_str(f, base_name(dyp));
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"logits\": ");
    if (bwd && c->logits)
        json_str(f, base_name(lp));
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"case_seed\": \"0x%016" PRIx64 "\",\n  \"run_seed\": \"0x%016" PRIx64 "\",\n",
            c->seed, m->run_seed);
    fprintf(f, "  \"case\": %lld,\n  \"level\": %d,\n  \"family\": ", (long long)m->case_index,
            m->level);
    json_str(f, m->family);
    fprintf(f,
            ",\n  \"original_rows\": %lld,\n  \"original_cols\": %lld,\n  \"original_ld\": %lld,\n"
            "  \"original_offset\": %lld,\n  \"shrink_steps\": %lld,\n  \"replay\": ",
            (long long)m->orig.rows, (long long)m->orig.cols, (long long)m->orig.ld,
            (long long)m->orig.offset, (long long)m->shrink_steps);
    char cmd[8192], load[4400];
    sml_prop_load_arg(m->load, load, sizeof load);
    snprintf(cmd, sizeof cmd, "%s%s %s", sml_prop_replay_prefix(m->load, replay_cmd), load, path);
    json_str(f, cmd);
    fprintf(f, "\n}\n");
}

sml_status sml_prop_repro_save(const char *dir, const sml_prop_case *c, const sml_prop_repro *m,
                               const char *replay_cmd, char *json_path, size_t n, char *err,
                               size_t errlen) {
    if (sml_mkdir_p(dir) != SML_OK)
        return sml_errorf(SML_ERR_IO, err, errlen, "%s: cannot create the directory", dir);
    char stem[1024], path[1200], xp[1200], dyp[1200], lp[1200];
    snprintf(stem, sizeof stem, "%s/%s-%s-%s-%s-%08" PRIx64, dir, m->kernel, sml_op_name(c->op),
             sml_dtype_name(c->dtype), sml_prop_name(m->prop), (uint64_t)(c->seed & 0xFFFFFFFFu));
    snprintf(path, sizeof path, "%s.json", stem);
    snprintf(xp, sizeof xp, "%s.x.npy", stem);
    snprintf(dyp, sizeof dyp, "%s.dy.npy", stem);
    snprintf(lp, sizeof lp, "%s.logits.npy", stem);
    int bwd = sml_op_is_backward(c->op);
    /* Every file is written whole into a temporary first, and only then are they all put in
     * place: a full disk leaves none of them, never an .x.npy without its .json. */
    sml_npy_staged *st =
        calloc(3, sizeof *st); /* large (two out files each): not on a worker's stack */
    if (!st) return sml_errorf(SML_ERR_OUT_OF_MEMORY, err, errlen, "%s: out of memory", path);
    int64_t shape[2] = {c->rows, c->cols};
    int ns = 0;
    sml_status s = sml_npy_stage(&st[ns++], xp, c->dtype, 2, shape, c->x, err, errlen);
    if (s == SML_OK && bwd)
        s = sml_npy_stage(&st[ns++], dyp, c->dtype, 2, shape, c->dy, err, errlen);
    if (s == SML_OK && bwd && c->logits)
        s = sml_npy_stage(&st[ns++], lp, c->dtype, 2, shape, c->logits, err, errlen);
    sml_out_file out;
    memset(&out, 0, sizeof out);
    if (s == SML_OK && (s = sml_out_open(&out, path, err, errlen)) == SML_OK) {
        write_repro_json(out.f, c, m, replay_cmd, path, xp, dyp, lp);
        s = sml_out_finish(&out, err, errlen);
    }
    for (int i = 0; i < ns && s == SML_OK; i++) s = sml_npy_stage_place(&st[i], err, errlen);
    if (s == SML_OK) s = sml_out_place(&out, err, errlen);
    if (s != SML_OK) {
        for (int i = 0; i < ns; i++) sml_npy_stage_abort(&st[i]);
        sml_out_abort(&out);
    }
    free(st);
    if (s != SML_OK) return SML_ERR_IO;
    if (json_path) snprintf(json_path, n, "%s", path);
    return SML_OK;
}

/* ---- reading one back ------------------------------------------------------------------ */

/* A reproducer is a few hundred bytes; anything past this is not one. */
#define MAX_REPRO_BYTES ((size_t)1 << 20)

/* The member `key` of o; a key given twice is refused (which value would count?). */
static int field(const sml_json *o, const char *key, const sml_json **v, char *err, size_t n) {
    *v = NULL;
    for (size_t i = 0; i < o->n; i++) {
        if (strcmp(o->keys[i], key)) continue;
        if (*v) {
            sml_errorf(SML_ERR_FORMAT, err, n, "%s: given twice", key);
            return 0;
        }
        *v = o->items[i];
    }
    return 1;
}

/* A required string (copied, at most dn - 1 bytes, into dst when dst is not NULL). */
static int req_str(const sml_json *o, const char *key, char *dst, size_t dn, const char **val,
                   char *err, size_t n) {
    const sml_json *v;
    if (!field(o, key, &v, err, n)) return 0;
    if (!v) return sml_errorf(SML_ERR_FORMAT, err, n, "%s: missing", key), 0;
    const char *str = sml_json_str(v);
    if (!str || !str[0])
        return sml_errorf(SML_ERR_FORMAT, err, n, "%s: not a non-empty string", key), 0;
    if (dst && strlen(str) >= dn)
        return sml_errorf(SML_ERR_FORMAT, err, n, "%s: longer than %zu characters", key, dn - 1), 0;
    if (dst) cpy(dst, dn, str);
    if (val) *val = str;
    return 1;
}

/* An optional string: absent or null leaves dst empty; else truncated into it. */
static int opt_str(const sml_json *o, const char *key, char *dst, size_t dn, char *err, size_t n) {
    const sml_json *v;
    if (!field(o, key, &v, err, n)) return 0;
    dst[0] = 0;
    if (!v || v->type == SML_JSON_NULL) return 1;
    if (!sml_json_str(v)) return sml_errorf(SML_ERR_FORMAT, err, n, "%s: not a string", key), 0;
    cpy(dst, dn, sml_json_str(v));
    return 1;
}

/* A whole number in [lo, hi]: required, or optional (absent or null keeps *dst). */
static int num(const sml_json *o, const char *key, int required, int64_t lo, int64_t hi,
               int64_t *dst, char *err, size_t n) {
    const sml_json *v;
    if (!field(o, key, &v, err, n)) return 0;
    if (!v || (!required && v->type == SML_JSON_NULL)) {
        if (required) sml_errorf(SML_ERR_FORMAT, err, n, "%s: missing", key);
        return !required;
    }
    if (!sml_json_is_num(v)) return sml_errorf(SML_ERR_FORMAT, err, n, "%s: not a number", key), 0;
    if (sml_json_int(v, lo, hi, dst)) return 1;
    if (v->number != floor(v->number))
        return sml_errorf(SML_ERR_FORMAT, err, n, "%s: %.6g is not a whole number", key, v->number),
               0;
    if (fabs(v->number) < 1e18)
        return sml_errorf(SML_ERR_FORMAT, err, n, "%s: %.0f is not in [%lld, %lld]", key, v->number,
                          (long long)lo, (long long)hi),
               0;
    return sml_errorf(SML_ERR_FORMAT, err, n, "%s: %.6g is not in [%lld, %lld]", key, v->number,
                      (long long)lo, (long long)hi),
           0;
    return 1;
}

/* A 64-bit seed: a string ("0x..." or decimal, as saved) or a whole number; absent is 0. */
static int seed(const sml_json *o, const char *key, uint64_t *dst, char *err, size_t n) {
    const sml_json *v;
    if (!field(o, key, &v, err, n)) return 0;
    *dst = 0;
    if (!v || v->type == SML_JSON_NULL) return 1;
    const char *str = sml_json_str(v);
    if (str) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(str, &end, 0);
        if (!isdigit((unsigned char)str[0]) || errno || *end)
            return sml_errorf(SML_ERR_FORMAT, err, n, "%s: '%.40s' is not a 64-bit number", key,
                              str),
                   0;
        *dst = x;
        return 1;
    }
    int64_t x;
    if (!sml_json_int(v, 0, (int64_t)1 << 53, &x))
        return sml_errorf(SML_ERR_FORMAT, err, n, "%s: not a seed (a string such as \"0x1f\")",
                          key),
               0;
    *dst = (uint64_t)x;
    return 1;
}

/* Read an .npy named in the reproducer (relative to the .json's folder) into dst. */
static sml_status load_array(const char *json_path, const char *key, const char *name,
                             const sml_prop_case *c, void *dst, char *err, size_t errlen) {
    char path[4096];
    const char *slash = strrchr(json_path, '/');
    int w = name[0] == '/' || !slash
                ? snprintf(path, sizeof path, "%s", name)
                : snprintf(path, sizeof path, "%.*s/%s", (int)(slash - json_path), json_path, name);
    if (w < 0 || (size_t)w >= sizeof path)
        return sml_errorf(SML_ERR_FORMAT, err, errlen,
                          "%s: the file's path is longer than %zu characters", key,
                          sizeof path - 1);
    sml_npy a;
    char why[512];
    sml_status s = sml_npy_read(path, (int)c->dtype, &a, why, sizeof why);
    if (s != SML_OK) return sml_errorf(s, err, errlen, "%s: %s", key, why);
    if (a.rows != c->rows || a.cols != c->cols) {
        sml_npy_free(&a);
        return sml_errorf(SML_ERR_FORMAT, err, errlen,
                          "%s: %s holds %lldx%lld, the reproducer says %lldx%lld", key,
                          base_name(path), (long long)a.rows, (long long)a.cols, (long long)c->rows,
                          (long long)c->cols);
    }
    memcpy(dst, a.data, a.bytes);
    sml_npy_free(&a);
    return SML_OK;
}

/* An enum field: its text parsed by `parse`; `what` lists the accepted names. */
#define ENUM_FIELD(o, key, parse, dst, what)                                                 \
    do {                                                                                     \
        const char *t_;                                                                      \
        if (!req_str(o, key, NULL, 0, &t_, err, errlen)) goto bad;                           \
        if (parse(t_, dst) != SML_OK) {                                                      \
            sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: '%.40s' is not one of %s", key, t_, \
                       what);                                                                \
            goto bad;                                                                        \
        }                                                                                    \
    } while (0)

sml_status sml_prop_repro_load(const char *json_path, sml_prop_case *c, sml_prop_repro *m,
                               char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    memset(m, 0, sizeof *m);
    if (!json_path) return SML_ERR_NULL_POINTER;
    char *text;
    size_t len;
    sml_status s = sml_file_read_all(json_path, MAX_REPRO_BYTES, &text, &len, err, errlen);
    if (s != SML_OK) return s;
    sml_json *o = NULL;
    char why[256];
    s = sml_json_parse(text, len, &o, why, sizeof why);
    free(text);
    if (s != SML_OK)
        return sml_errorf(s, err, errlen, "not a reproducer: the JSON does not parse (%s)", why);
    const sml_json *v, *x, *dy, *lg;
    const char *fmt;
    int64_t lv = 0;
    if (o->type != SML_JSON_OBJECT) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "not a reproducer: the JSON is not an object");
        goto bad;
    }
    if (!req_str(o, "format", NULL, 0, &fmt, err, errlen)) goto bad;
    if (strcmp(fmt, SML_PROP_REPRO_FORMAT)) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "format: '%.40s' is not \"%s\"", fmt,
                   SML_PROP_REPRO_FORMAT);
        goto bad;
    }
    if (!req_str(o, "kernel", m->kernel, sizeof m->kernel, NULL, err, errlen)) goto bad;
    ENUM_FIELD(o, "op", sml_op_parse, &c->op, "softmax, log_softmax, softmax_bwd, log_softmax_bwd");
    ENUM_FIELD(o, "dtype", sml_dtype_parse, &c->dtype, "fp32, fp16, bf16");
    ENUM_FIELD(o, "property", sml_prop_parse, &m->prop, "the properties of docs/PROPERTIES.md");
    if (!num(o, "rows", 1, 1, SML_PROP_MAX_ELEMS, &c->rows, err, errlen) ||
        !num(o, "cols", 1, 1, SML_PROP_MAX_ELEMS, &c->cols, err, errlen) ||
        !num(o, "ld", 1, 1, SML_PROP_MAX_SPAN, &c->ld, err, errlen) ||
        !num(o, "offset", 1, 0, SML_PROP_MAX_OFFSET, &c->offset, err, errlen))
        goto bad;
    if (!sml_prop_case_in_bounds(c, err, errlen)) goto bad;
    if (!field(o, "inplace", &v, err, errlen)) goto bad;
    if (v && v->type != SML_JSON_BOOL && v->type != SML_JSON_NULL) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "inplace: not true or false");
        goto bad;
    }
    c->inplace = v && v->type == SML_JSON_BOOL && v->boolean && !sml_op_is_backward(c->op);
    m->case_index = -1;
    if (!seed(o, "case_seed", &c->seed, err, errlen) ||
        !seed(o, "run_seed", &m->run_seed, err, errlen) ||
        !num(o, "case", 0, -1, INT64_MAX / 2, &m->case_index, err, errlen) ||
        !num(o, "level", 0, 0, 100, &lv, err, errlen) ||
        !num(o, "original_rows", 0, 0, INT64_MAX / 2, &m->orig.rows, err, errlen) ||
        !num(o, "original_cols", 0, 0, INT64_MAX / 2, &m->orig.cols, err, errlen) ||
        !num(o, "original_ld", 0, 0, INT64_MAX / 2, &m->orig.ld, err, errlen) ||
        !num(o, "original_offset", 0, 0, INT64_MAX / 2, &m->orig.offset, err, errlen) ||
        !num(o, "shrink_steps", 0, 0, INT64_MAX / 2, &m->shrink_steps, err, errlen) ||
        !opt_str(o, "verdict", m->verdict, sizeof m->verdict, err, errlen) ||
        !opt_str(o, "message", m->message, sizeof m->message, err, errlen) ||
        !opt_str(o, "family", m->family, sizeof m->family, err, errlen))
        goto bad;
    m->level = (int)lv;
    /* The plugin library the kernel came from: absent or null for a built-in kernel. */
    if (!field(o, "load", &v, err, errlen)) goto bad;
    if (v && v->type != SML_JSON_NULL) {
        const char *lib = sml_json_str(v);
        if (!lib || !lib[0] || strlen(lib) >= sizeof m->load) {
            sml_errorf(SML_ERR_FORMAT, err, errlen, "load: %s",
                       !lib      ? "not a library path or null"
                       : !lib[0] ? "empty"
                                 : "a library path longer than 4095 characters");
            goto bad;
        }
        cpy(m->load, sizeof m->load, lib);
    }
    /* Saved by a --strict run (absent in reproducers written before the field: false). */
    if (!field(o, "strict", &v, err, errlen)) goto bad;
    if (v && v->type != SML_JSON_BOOL && v->type != SML_JSON_NULL) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "strict: not true or false");
        goto bad;
    }
    m->strict = v && v->type == SML_JSON_BOOL && v->boolean;
    cpy(c->family, sizeof c->family, m->family);
    if (!field(o, "x", &x, err, errlen) || !field(o, "dy", &dy, err, errlen) ||
        !field(o, "logits", &lg, err, errlen))
        goto bad;
    if (!sml_json_str(x) || !x->string[0]) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "x: %s", x ? "not a file name" : "missing");
        goto bad;
    }
    int bwd = sml_op_is_backward(c->op);
    if (bwd && (!sml_json_str(dy) || !dy->string[0])) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "dy: %s (a backward reproducer needs the gradient)",
                   dy && dy->type != SML_JSON_NULL ? "not a file name" : "missing");
        goto bad;
    }
    if (bwd && lg && lg->type != SML_JSON_NULL && (!sml_json_str(lg) || !lg->string[0])) {
        sml_errorf(SML_ERR_FORMAT, err, errlen, "logits: not a file name or null");
        goto bad;
    }
    if ((s = sml_prop_case_alloc(c)) != SML_OK) {
        sml_errorf(s, err, errlen, "out of memory for %lldx%lld", (long long)c->rows,
                   (long long)c->cols);
        goto out;
    }
    if ((s = load_array(json_path, "x", x->string, c, c->x, err, errlen)) != SML_OK) goto out_case;
    if (bwd) {
        if ((s = load_array(json_path, "dy", dy->string, c, c->dy, err, errlen)) != SML_OK)
            goto out_case;
        if (sml_json_str(lg)) {
            if ((s = load_array(json_path, "logits", lg->string, c, c->logits, err, errlen)) !=
                SML_OK)
                goto out_case;
        } else {
            free(c->logits); /* y stands on its own; the shrinker is not used on replays */
            c->logits = NULL;
        }
    }
    goto out;
bad:
    s = SML_ERR_FORMAT;
    goto out;
out_case:
    sml_prop_case_free(c);
out:
    sml_json_free(o);
    return s;
}

/* ---- listing -------------------------------------------------------------------------- */

typedef struct list {
    char **v;
    size_t n, cap;
} list;

static void push(list *l, const char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return;
        l->v = v;
        l->cap = cap;
    }
    char *d = malloc(strlen(s) + 1);
    if (!d) return;
    strcpy(d, s);
    l->v[l->n++] = d;
}

static void walk(const char *dir, list *l, int depth) {
    if (depth > 8) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode))
            walk(p, l, depth + 1);
        else {
            size_t L = strlen(e->d_name);
            if (L > 5 && !strcmp(e->d_name + L - 5, ".json")) push(l, p);
        }
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t sml_prop_repro_list(const char *dirs, char ***paths) {
    list l = {NULL, 0, 0};
    for (const char *d = dirs; d && *d;) {
        const size_t n = strcspn(d, ":");
        char dir[2048];
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, d, n);
            dir[n] = 0;
            walk(dir, &l, 0);
        }
        d += n + (d[n] == ':');
    }
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
    *paths = l.v;
    return l.n;
}

void sml_prop_repro_list_free(char **paths, size_t n) {
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

size_t sml_prop_repro_unreadable(const char *dirs, char *err, size_t errlen) {
    char **paths;
    size_t n = sml_prop_repro_list(dirs, &paths), bad = 0;
    for (size_t i = 0; i < n; i++) {
        sml_prop_case c;
        sml_prop_repro m;
        char e[512];
        if (sml_prop_repro_load(paths[i], &c, &m, e, sizeof e) == SML_OK) {
            sml_prop_case_free(&c);
            continue;
        }
        if (!bad++) snprintf(err, errlen, "%s: %s", paths[i], e);
    }
    sml_prop_repro_list_free(paths, n);
    return bad;
}

void sml_prop_replay_describe(const sml_prop_case *c, const sml_prop_repro *m,
                              sml_prop_replay_result *r) {
    r->prop = m->prop;
    r->op = c->op;
    r->dtype = c->dtype;
    r->layout = sml_prop_case_layout(c);
    r->inplace = c->inplace;
    snprintf(r->recorded, sizeof r->recorded, "%s", m->verdict);
}
