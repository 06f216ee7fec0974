/* repro.c: saving and loading reproducers, and the small JSON subset they use (one flat
 * object of strings, numbers, booleans and null), so replay needs nothing but libc. */
#include "prop/repro.h"
#include "softmax_lab_plugin.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "prop/npy.h"
#include "util/out_file.h"

#ifndef SML_VERSION
#define SML_VERSION "unknown"
#endif


sml_status sml_prop_mkdirs(const char *dir) {
    char buf[2048];
    if (!dir || strlen(dir) >= sizeof buf) return SML_ERR_INVALID_ARG;
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return SML_ERR_IO;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return SML_ERR_IO;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? SML_OK : SML_ERR_IO;
}

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
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

const char *sml_prop_replay_prefix(const char *library, const char *replay_cmd) {
    if (library && !strncmp(library, SML_PYTHON_SOURCE_PREFIX, strlen(SML_PYTHON_SOURCE_PREFIX)))
        return SML_PYTHON_REPLAY;
    return replay_cmd ? replay_cmd : "softmax-lab replay";
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
        if (*c == '\'') { memcpy(buf + k, "'\\''", 4); k += 4; }
        else buf[k++] = *c;
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
    m->orig_rows = original->rows;
    m->orig_cols = original->cols;
    m->orig_ld = original->ld;
    m->orig_offset = original->offset;
    m->shrink_steps = shrink_steps;
    snprintf(m->family, sizeof m->family, "%s", original->family);
}

sml_status sml_prop_repro_save(const char *dir, const sml_prop_case *c, const sml_prop_repro *m,
                               const char *replay_cmd, char *json_path, size_t n, char *err,
                               size_t errlen) {
    if (sml_prop_mkdirs(dir) != SML_OK)
        return sml_errorf(SML_ERR_IO, err, errlen, "%s: cannot create the directory", dir);
    char stem[1024], path[1200], xp[1200], dyp[1200], lp[1200];
    snprintf(stem, sizeof stem, "%s/%s-%s-%s-%s-%08" PRIx64, dir, m->kernel, sml_op_name(c->op),
             sml_dtype_name(c->dtype), sml_prop_name(m->prop), (uint64_t)(c->seed & 0xFFFFFFFFu));
    snprintf(path, sizeof path, "%s.json", stem);
    snprintf(xp, sizeof xp, "%s.x.npy", stem);
    snprintf(dyp, sizeof dyp, "%s.dy.npy", stem);
    snprintf(lp, sizeof lp, "%s.logits.npy", stem);
    int bwd = sml_op_is_backward(c->op);
    sml_status s = sml_npy_write_2d(xp, c->dtype, c->rows, c->cols, c->x, err, errlen);
    if (s == SML_OK && bwd) s = sml_npy_write_2d(dyp, c->dtype, c->rows, c->cols, c->dy, err, errlen);
    if (s == SML_OK && bwd && c->logits)
        s = sml_npy_write_2d(lp, c->dtype, c->rows, c->cols, c->logits, err, errlen);
    if (s != SML_OK) return s;
    sml_out_file out;
    if (sml_out_open(&out, path, err, errlen) != SML_OK) return SML_ERR_IO;
    FILE *f = out.f;
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": \"%s\",\n  \"kernel\": ", SML_PROP_REPRO_FORMAT,
            SML_VERSION);
    json_str(f, m->kernel);
    fprintf(f, ",\n  \"op\": \"%s\",\n  \"dtype\": \"%s\",\n", sml_op_name(c->op), sml_dtype_name(c->dtype));
    fprintf(f, "  \"rows\": %lld,\n  \"cols\": %lld,\n  \"ld\": %lld,\n  \"offset\": %lld,\n  \"inplace\": %s,\n",
            (long long)c->rows, (long long)c->cols, (long long)c->ld, (long long)c->offset,
            c->inplace ? "true" : "false");
    fprintf(f, "  \"property\": \"%s\",\n  \"verdict\": ", sml_prop_name(m->prop));
    json_str(f, m->verdict);
    fprintf(f, ",\n  \"message\": ");
    json_str(f, m->message);
    fprintf(f, ",\n  \"load\": ");
    if (m->load[0]) json_str(f, m->load);
    else fprintf(f, "null");
    fprintf(f, ",\n  \"x\": ");
    json_str(f, base_name(xp));
    fprintf(f, ",\n  \"dy\": ");
    if (bwd) json_str(f, base_name(dyp));
    else fprintf(f, "null");
    fprintf(f, ",\n  \"logits\": ");
    if (bwd && c->logits) json_str(f, base_name(lp));
    else fprintf(f, "null");
    fprintf(f, ",\n  \"case_seed\": \"0x%016" PRIx64 "\",\n  \"run_seed\": \"0x%016" PRIx64 "\",\n",
            c->seed, m->run_seed);
    fprintf(f, "  \"case\": %lld,\n  \"level\": %d,\n  \"family\": ", (long long)m->case_index, m->level);
    json_str(f, m->family);
    fprintf(f, ",\n  \"original_rows\": %lld,\n  \"original_cols\": %lld,\n  \"original_ld\": %lld,\n"
               "  \"original_offset\": %lld,\n  \"shrink_steps\": %lld,\n  \"replay\": ",
            (long long)m->orig_rows, (long long)m->orig_cols, (long long)m->orig_ld,
            (long long)m->orig_offset, (long long)m->shrink_steps);
    char cmd[8192], load[4400];
    sml_prop_load_arg(m->load, load, sizeof load);
    snprintf(cmd, sizeof cmd, "%s%s %s", sml_prop_replay_prefix(m->load, replay_cmd), load, path);
    json_str(f, cmd);
    fprintf(f, "\n}\n");
    if (sml_out_commit(&out, err, errlen) != SML_OK) return SML_ERR_IO;
    if (json_path) snprintf(json_path, n, "%s", path);
    return SML_OK;
}

/* ---- the JSON subset -------------------------------------------------------------------- */

#define MAX_KEYS 48
typedef struct kv { char key[32]; char val[4200]; int is_null, truncated; } kv;
typedef struct obj { kv items[MAX_KEYS]; int n; } obj;

static const char *skip_ws(const char *p) {
    while (isspace((unsigned char)*p)) p++;
    return p;
}

static const char *parse_string(const char *p, char *out, size_t n, int *truncated) {
    if (*p != '"') return NULL;
    p++;
    size_t k = 0;
    if (truncated) *truncated = 0;
    while (*p && *p != '"') {
        char ch = *p++;
        if (ch == '\\') {
            ch = *p++;
            if (ch == 'n') ch = '\n';
            else if (ch == 't') ch = '\t';
            else if (ch == 'u') {
                unsigned v = 0;
                for (int i = 0; i < 4 && isxdigit((unsigned char)*p); i++, p++)
                    v = v * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
                ch = v < 0x80 ? (char)v : '?';
            } else if (!ch) return NULL;
        }
        if (k + 1 < n) out[k++] = ch;
        else if (truncated) *truncated = 1;
    }
    if (*p != '"') return NULL;
    out[k] = 0;
    return p + 1;
}

static int parse_obj(const char *text, obj *o) {
    o->n = 0;
    const char *p = skip_ws(text);
    if (*p++ != '{') return 0;
    p = skip_ws(p);
    if (*p == '}') return 1;
    for (;;) {
        if (o->n == MAX_KEYS) return 0;
        kv *it = &o->items[o->n];
        memset(it, 0, sizeof *it);
        p = parse_string(skip_ws(p), it->key, sizeof it->key, NULL);
        if (!p) return 0;
        p = skip_ws(p);
        if (*p++ != ':') return 0;
        p = skip_ws(p);
        if (*p == '"') {
            p = parse_string(p, it->val, sizeof it->val, &it->truncated);
            if (!p) return 0;
        } else {
            size_t k = 0;
            while (*p && *p != ',' && *p != '}' && !isspace((unsigned char)*p))
                if (k + 1 < sizeof it->val) it->val[k++] = *p++;
                else p++;
            it->val[k] = 0;
            if (!k) return 0;
            it->is_null = !strcmp(it->val, "null");
        }
        o->n++;
        p = skip_ws(p);
        if (*p == ',') { p++; continue; }
        if (*p == '}') return 1;
        return 0;
    }
}

static const kv *get(const obj *o, const char *key) {
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->items[i].key, key)) return &o->items[i];
    return NULL;
}

static int get_i64(const obj *o, const char *key, int64_t *v) {
    const kv *it = get(o, key);
    if (!it || it->is_null) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(it->val, &end, 0);
    if (errno || *end) return 0;
    *v = x;
    return 1;
}

static int get_u64(const obj *o, const char *key, uint64_t *v) {
    const kv *it = get(o, key);
    if (!it || it->is_null) return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(it->val, &end, 0);
    if (errno || *end) return 0;
    *v = x;
    return 1;
}

/* Read an .npy named in the reproducer (relative to the .json's folder) into dst. */
static sml_status load_array(const char *json_path, const char *name, const sml_prop_case *c,
                             void *dst, char *err, size_t errlen) {
    char path[2048];
    const char *slash = strrchr(json_path, '/');
    if (name[0] == '/' || !slash) snprintf(path, sizeof path, "%s", name);
    else snprintf(path, sizeof path, "%.*s/%s", (int)(slash - json_path), json_path, name);
    sml_npy a;
    sml_status s = sml_npy_read(path, (int)c->dtype, &a, err, errlen);
    if (s != SML_OK) return s;
    if (a.rows != c->rows || a.cols != c->cols) {
        sml_npy_free(&a);
        return sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: shape %lldx%lld, the reproducer says %lldx%lld",
                    path, (long long)a.rows, (long long)a.cols, (long long)c->rows, (long long)c->cols);
    }
    memcpy(dst, a.data, a.bytes);
    sml_npy_free(&a);
    return SML_OK;
}

sml_status sml_prop_repro_load(const char *json_path, sml_prop_case *c, sml_prop_repro *m,
                               char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    memset(m, 0, sizeof *m);
    FILE *f = fopen(json_path, "r");
    if (!f) return sml_errorf(SML_ERR_IO, err, errlen, "%s: cannot open: %s", json_path, strerror(errno));
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    obj *o = malloc(sizeof *o);
    if (!o) return SML_ERR_OUT_OF_MEMORY;
    sml_status s = SML_OK;
    const kv *it;
    if (!parse_obj(text, o)) {
        s = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: not a reproducer (cannot parse the JSON)", json_path);
        goto out;
    }
    it = get(o, "format");
    if (!it || strcmp(it->val, SML_PROP_REPRO_FORMAT) != 0) {
        s = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: not a reproducer (format is not \"%s\")", json_path,
                 SML_PROP_REPRO_FORMAT);
        goto out;
    }
    const kv *kk = get(o, "kernel"), *op = get(o, "op"), *dt = get(o, "dtype"),
             *pr = get(o, "property"), *x = get(o, "x");
    if (!kk || !op || !dt || !pr || !x || x->is_null || sml_op_parse(op->val, &c->op) != SML_OK ||
        sml_dtype_parse(dt->val, &c->dtype) != SML_OK || sml_prop_parse(pr->val, &m->prop) != SML_OK ||
        !get_i64(o, "rows", &c->rows) || !get_i64(o, "cols", &c->cols) || !get_i64(o, "ld", &c->ld) ||
        !get_i64(o, "offset", &c->offset) || c->rows < 1 || c->cols < 1 || c->ld < c->cols ||
        c->offset < 0 || c->offset > 4096) {
        s = sml_errorf(SML_ERR_FORMAT, err, errlen,
                 "%s: missing or bad field (kernel, op, dtype, property, x, rows, cols, ld, offset)",
                 json_path);
        goto out;
    }
    cpy(m->kernel, sizeof m->kernel, kk->val);
    it = get(o, "inplace");
    c->inplace = it && !strcmp(it->val, "true") && !sml_op_is_backward(c->op);
    if (!get_u64(o, "case_seed", &c->seed)) c->seed = 0;
    if (!get_u64(o, "run_seed", &m->run_seed)) m->run_seed = 0;
    if (!get_i64(o, "case", &m->case_index)) m->case_index = -1;
    int64_t lv = 0;
    m->level = get_i64(o, "level", &lv) ? (int)lv : 0;
    if ((it = get(o, "verdict"))) cpy(m->verdict, sizeof m->verdict, it->val);
    if ((it = get(o, "message"))) cpy(m->message, sizeof m->message, it->val);
    if ((it = get(o, "family"))) cpy(m->family, sizeof m->family, it->val);
    if ((it = get(o, "load")) && !it->is_null) {
        if (it->truncated || strlen(it->val) >= sizeof m->load || !it->val[0]) {
            s = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: field load: %s", json_path,
                           it->val[0] ? "a library path longer than 4095 characters" : "empty");
            goto out;
        }
        cpy(m->load, sizeof m->load, it->val);
    }
    get_i64(o, "original_rows", &m->orig_rows);
    get_i64(o, "original_cols", &m->orig_cols);
    get_i64(o, "original_ld", &m->orig_ld);
    get_i64(o, "original_offset", &m->orig_offset);
    get_i64(o, "shrink_steps", &m->shrink_steps);
    cpy(c->family, sizeof c->family, m->family);
    if (c->rows > ((int64_t)1 << 31) / c->cols) {
        s = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: implausibly large reproducer", json_path);
        goto out;
    }
    if ((s = sml_prop_case_alloc(c)) != SML_OK) goto out;
    if ((s = load_array(json_path, x->val, c, c->x, err, errlen)) != SML_OK) goto out_case;
    if (sml_op_is_backward(c->op)) {
        const kv *dy = get(o, "dy"), *lg = get(o, "logits");
        if (!dy || dy->is_null) {
            s = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: a backward reproducer without dy", json_path);
            goto out_case;
        }
        if ((s = load_array(json_path, dy->val, c, c->dy, err, errlen)) != SML_OK) goto out_case;
        if (lg && !lg->is_null) {
            if ((s = load_array(json_path, lg->val, c, c->logits, err, errlen)) != SML_OK) goto out_case;
        } else {
            free(c->logits); /* y stands on its own; the shrinker is not used on replays */
            c->logits = NULL;
        }
    }
    goto out;
out_case:
    sml_prop_case_free(c);
out:
    free(o);
    return s;
}

/* ---- listing -------------------------------------------------------------------------- */

typedef struct list { char **v; size_t n, cap; } list;

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
        if (S_ISDIR(st.st_mode)) walk(p, l, depth + 1);
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
