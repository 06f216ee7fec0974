/* json_read.c: recursive descent over the RFC 8259 grammar, strict (no comments, no
 * trailing commas, no NaN), with a depth limit so a hostile file cannot blow the stack. */
#include "bench/json_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const char *s, *end, *p;
    int depth;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void fail(parser *ps, const char *fmt, ...) {
    if (ps->failed) return;
    ps->failed = 1;
    if (!ps->err || !ps->errlen) return;
    int line = 1, col = 1;
    for (const char *q = ps->s; q < ps->p && q < ps->end; q++) {
        if (*q == '\n') { line++; col = 1; }
        else col++;
    }
    int w = snprintf(ps->err, ps->errlen, "line %d, column %d: ", line, col);
    if (w < 0 || (size_t)w >= ps->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + w, ps->errlen - (size_t)w, fmt, ap);
    va_end(ap);
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static sml_json *new_value(parser *ps, sml_json_type t) {
    sml_json *v = calloc(1, sizeof *v);
    if (!v) fail(ps, "out of memory");
    else v->type = t;
    return v;
}

static int push(parser *ps, sml_json *arr, sml_json *item, char *key) {
    if (arr->n % 16 == 0) {
        size_t cap = arr->n + 16;
        sml_json **ni = realloc(arr->items, cap * sizeof *ni);
        if (!ni) { fail(ps, "out of memory"); return 0; }
        arr->items = ni;
        if (arr->type == SML_JSON_OBJECT) {
            char **nk = realloc(arr->keys, cap * sizeof *nk);
            if (!nk) { fail(ps, "out of memory"); return 0; }
            arr->keys = nk;
        }
    }
    arr->items[arr->n] = item;
    if (arr->type == SML_JSON_OBJECT) arr->keys[arr->n] = key;
    arr->n++;
    return 1;
}

static int hex4(parser *ps, unsigned *out) {
    if (ps->end - ps->p < 4) { fail(ps, "truncated \\u escape"); return 0; }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else { fail(ps, "bad hex digit in \\u escape"); return 0; }
    }
    ps->p += 4;
    *out = v;
    return 1;
}

static size_t utf8_put(char *dst, unsigned cp) {
    if (cp < 0x80) { dst[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At the opening quote; returns a malloc'd string (an escape never grows the text). */
static char *parse_string(parser *ps) {
    ps->p++;
    const char *start = ps->p;
    char *out = malloc((size_t)(ps->end - start) + 1);
    if (!out) { fail(ps, "out of memory"); return NULL; }
    size_t n = 0;
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            out[n] = 0;
            return out;
        }
        if (c < 0x20) { fail(ps, "control character in a string"); break; }
        if (c != '\\') { out[n++] = (char)c; ps->p++; continue; }
        ps->p++;
        if (ps->p >= ps->end) break;
        char e = *ps->p++;
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (!hex4(ps, &cp)) { free(out); return NULL; }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                    fail(ps, "unpaired surrogate in \\u escape");
                    free(out);
                    return NULL;
                }
                ps->p += 2;
                if (!hex4(ps, &lo)) { free(out); return NULL; }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    fail(ps, "unpaired surrogate in \\u escape");
                    free(out);
                    return NULL;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                fail(ps, "unpaired surrogate in \\u escape");
                free(out);
                return NULL;
            } else if (cp == 0) {
                fail(ps, "\\u0000 in a string is not supported");
                free(out);
                return NULL;
            }
            n += utf8_put(out + n, cp);
            break;
        }
        default:
            ps->p--;
            fail(ps, "bad escape '\\%c'", e);
            free(out);
            return NULL;
        }
    }
    if (!ps->failed) fail(ps, "unterminated string");
    free(out);
    return NULL;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static sml_json *parse_number(parser *ps) {
    const char *q = ps->p;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || !is_digit(*q)) { fail(ps, "bad number"); return NULL; }
    if (*q == '0') q++;
    else while (q < ps->end && is_digit(*q)) q++;
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || !is_digit(*q)) { fail(ps, "bad number: digits must follow '.'"); return NULL; }
        while (q < ps->end && is_digit(*q)) q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || !is_digit(*q)) { fail(ps, "bad number: bad exponent"); return NULL; }
        while (q < ps->end && is_digit(*q)) q++;
    }
    char buf[64];
    size_t len = (size_t)(q - ps->p);
    if (len >= sizeof buf) { fail(ps, "number too long"); return NULL; }
    memcpy(buf, ps->p, len);
    buf[len] = 0;
    sml_json *v = new_value(ps, SML_JSON_NUMBER);
    if (!v) return NULL;
    v->number = strtod(buf, NULL);
    ps->p = q;
    return v;
}

static int literal(parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, word, n)) {
        ps->p += n;
        return 1;
    }
    return 0;
}

static sml_json *parse_value(parser *ps);

static sml_json *parse_container(parser *ps, int object) {
    if (++ps->depth > MAX_DEPTH) { fail(ps, "nested deeper than %d", MAX_DEPTH); return NULL; }
    sml_json *v = new_value(ps, object ? SML_JSON_OBJECT : SML_JSON_ARRAY);
    if (!v) return NULL;
    ps->p++;
    skip_ws(ps);
    char close = object ? '}' : ']';
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"') { fail(ps, "expected a member name in quotes"); break; }
            key = parse_string(ps);
            if (!key) break;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') { free(key); fail(ps, "expected ':' after a member name"); break; }
            ps->p++;
        }
        sml_json *item = parse_value(ps);
        if (!item) { free(key); break; }
        if (!push(ps, v, item, key)) { free(key); sml_json_free(item); break; }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return v;
        }
        fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
    }
    sml_json_free(v);
    return NULL;
}

static sml_json *parse_value(parser *ps) {
    skip_ws(ps);
    if (ps->p >= ps->end) { fail(ps, "unexpected end of input"); return NULL; }
    char c = *ps->p;
    if (c == '{') return parse_container(ps, 1);
    if (c == '[') return parse_container(ps, 0);
    if (c == '"') {
        char *s = parse_string(ps);
        if (!s) return NULL;
        sml_json *v = new_value(ps, SML_JSON_STRING);
        if (!v) { free(s); return NULL; }
        v->string = s;
        return v;
    }
    if (c == '-' || is_digit(c)) return parse_number(ps);
    if (literal(ps, "true")) { sml_json *v = new_value(ps, SML_JSON_BOOL); if (v) v->boolean = 1; return v; }
    if (literal(ps, "false")) return new_value(ps, SML_JSON_BOOL);
    if (literal(ps, "null")) return new_value(ps, SML_JSON_NULL);
    fail(ps, "unexpected character '%c'", c);
    return NULL;
}

sml_status sml_json_parse(const char *text, size_t len, sml_json **out, char *err, size_t errlen) {
    if (!text || !out) return SML_ERR_NULL_POINTER;
    *out = NULL;
    if (err && errlen) err[0] = 0;
    parser ps = {text, text + len, text, 0, err, errlen, 0};
    sml_json *v = parse_value(&ps);
    if (v) {
        skip_ws(&ps);
        if (ps.p != ps.end) {
            fail(&ps, "unexpected text after the document");
            sml_json_free(v);
            v = NULL;
        }
    }
    if (!v) {
        if (!ps.failed) fail(&ps, "malformed JSON");
        return SML_ERR_FORMAT;
    }
    *out = v;
    return SML_OK;
}

sml_status sml_json_parse_file(const char *path, sml_json **out, char *err, size_t errlen) {
    if (!path || !out) return SML_ERR_NULL_POINTER;
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err && errlen) snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return SML_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        if (err && errlen) snprintf(err, errlen, "%s", bad ? "read error" : "out of memory");
        return bad ? SML_ERR_IO : SML_ERR_OUT_OF_MEMORY;
    }
    sml_status s = sml_json_parse(buf, n, out, err, errlen);
    free(buf);
    return s;
}

void sml_json_free(sml_json *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        sml_json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

const sml_json *sml_json_get(const sml_json *obj, const char *key) {
    if (!obj || obj->type != SML_JSON_OBJECT || !key) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}

const sml_json *sml_json_at(const sml_json *arr, size_t i) {
    if (!arr || (arr->type != SML_JSON_ARRAY && arr->type != SML_JSON_OBJECT) || i >= arr->n) return NULL;
    return arr->items[i];
}

size_t sml_json_len(const sml_json *arr) {
    return arr && (arr->type == SML_JSON_ARRAY || arr->type == SML_JSON_OBJECT) ? arr->n : 0;
}

const char *sml_json_str(const sml_json *v) { return v && v->type == SML_JSON_STRING ? v->string : NULL; }

int sml_json_is_num(const sml_json *v) { return v && v->type == SML_JSON_NUMBER; }

double sml_json_num(const sml_json *v, double fallback) {
    if (v && v->type == SML_JSON_STRING) { /* how the writers spell what JSON has no number for */
        if (!strcmp(v->string, "inf")) return INFINITY;
        if (!strcmp(v->string, "-inf")) return -INFINITY;
        if (!strcmp(v->string, "nan")) return NAN;
    }
    return v && v->type == SML_JSON_NUMBER ? v->number : fallback;
}

int sml_json_req_str(const sml_json *o, const char *key, char *dst, size_t n, const char *where, char *err,
                     size_t errlen) {
    const char *s = sml_json_str(sml_json_get(o, key));
    if (!s || !s[0] || strlen(s) >= n) {
        snprintf(err, errlen, "%s: '%s' missing, not a string or too long", where, key);
        return 0;
    }
    memcpy(dst, s, strlen(s) + 1);
    return 1;
}

int sml_json_req_int(const sml_json *o, const char *key, int64_t *dst, const char *where, char *err,
                     size_t errlen) {
    const sml_json *v = sml_json_get(o, key);
    if (!sml_json_is_num(v) || v->number < 0 || v->number != floor(v->number) || v->number > 9e15) {
        snprintf(err, errlen, "%s: '%s' missing or not a non-negative integer", where, key);
        return 0;
    }
    *dst = (int64_t)v->number;
    return 1;
}
