/* json_write.c: see json_write.h. Numbers are written with 17 significant digits only when
 * fewer would not read back to the same double, so files stay short and exact. */
#include "json/json_write.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sml_jw_init(sml_jw *w, FILE *f) {
    memset(w, 0, sizeof *w);
    w->f = f;
    const char *nan = getenv("SML_JSON_NAN"); /* --json-nan (cli/main.c) */
    w->nan_null = nan && !strcmp(nan, "null");
}

static int in_inline(const sml_jw *w) {
    for (int d = 1; d <= w->depth; d++)
        if (w->inline_[d]) return 1;
    return 0;
}

/* Separator and indentation before a value or a key at the current depth. */
static void before_value(sml_jw *w) {
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth == 0) {
        if (w->count[0]++) w->error = 1; /* a document holds one value */
        return;
    }
    if (w->count[w->depth]++) fputc(',', w->f);
    if (in_inline(w)) {
        if (w->count[w->depth] > 1) fputc(' ', w->f);
    } else {
        fputc('\n', w->f);
        for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
    }
}

static void open_container(sml_jw *w, char c, int inl) {
    before_value(w);
    if (w->depth + 1 >= SML_JW_MAX_DEPTH) {
        w->error = 1;
        return;
    }
    fputc(c, w->f);
    w->depth++;
    w->count[w->depth] = 0;
    w->inline_[w->depth] = inl;
    w->array[w->depth] = c == '[';
}

void sml_jw_object(sml_jw *w) { open_container(w, '{', 0); }
void sml_jw_object_inline(sml_jw *w) { open_container(w, '{', 1); }
void sml_jw_array(sml_jw *w) { open_container(w, '[', 0); }
void sml_jw_array_inline(sml_jw *w) { open_container(w, '[', 1); }

void sml_jw_end(sml_jw *w) {
    if (w->depth == 0 || w->after_key) {
        w->error = 1;
        return;
    }
    int had = w->count[w->depth];
    int inl = in_inline(w);
    int kind = w->array[w->depth];
    w->depth--;
    if (had && !inl) {
        fputc('\n', w->f);
        for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
    }
    fputc(kind ? ']' : '}', w->f);
}

static void write_escaped(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void sml_jw_key(sml_jw *w, const char *key) {
    if (w->depth == 0 || w->after_key || w->array[w->depth]) {
        w->error = 1; /* keys only inside objects */
        return;
    }
    before_value(w);
    write_escaped(w->f, key ? key : "");
    fputs(": ", w->f);
    w->after_key = 1;
}

static void check_in_object_needs_key(sml_jw *w) {
    /* A value directly inside an object must follow a key. */
    if (w->depth > 0 && !w->array[w->depth] && !w->after_key) w->error = 1;
}

void sml_jw_str(sml_jw *w, const char *s) {
    check_in_object_needs_key(w);
    before_value(w);
    if (s)
        write_escaped(w->f, s);
    else
        fputs("null", w->f);
}

void sml_jw_num(sml_jw *w, double v) {
    check_in_object_needs_key(w);
    before_value(w);
    if (!isfinite(v)) {
        fputs(w->nan_null ? "null" : isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"", w->f);
        return;
    }
    char buf[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, w->f);
}

void sml_jw_int(sml_jw *w, int64_t v) {
    check_in_object_needs_key(w);
    before_value(w);
    fprintf(w->f, "%" PRId64, v);
}

void sml_jw_bool(sml_jw *w, int v) {
    check_in_object_needs_key(w);
    before_value(w);
    fputs(v ? "true" : "false", w->f);
}

void sml_jw_null(sml_jw *w) {
    check_in_object_needs_key(w);
    before_value(w);
    fputs("null", w->f);
}

void sml_jw_kstr(sml_jw *w, const char *key, const char *s) {
    sml_jw_key(w, key);
    sml_jw_str(w, s);
}
void sml_jw_knum(sml_jw *w, const char *key, double v) {
    sml_jw_key(w, key);
    sml_jw_num(w, v);
}
void sml_jw_kint(sml_jw *w, const char *key, int64_t v) {
    sml_jw_key(w, key);
    sml_jw_int(w, v);
}
void sml_jw_kbool(sml_jw *w, const char *key, int v) {
    sml_jw_key(w, key);
    sml_jw_bool(w, v);
}

int sml_jw_finish(sml_jw *w) {
    if (w->depth != 0 || w->after_key || w->count[0] != 1) w->error = 1;
    fputc('\n', w->f);
    if (ferror(w->f)) w->error = 1;
    return w->error ? -1 : 0;
}
