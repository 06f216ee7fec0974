/* json_read.c: recursive descent over the RFC 8259 grammar, strict (no comments, no
 * trailing commas, no NaN), with a depth limit so a hostile file cannot blow the stack. */
#include "json/json_read.h"
#include "io/file_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

/* The tree lives in blocks of one arena, freed together: a value costs its node and its
 * text, not a heap allocation each (whose bookkeeping doubles the cost of short strings).
 * Members are gathered on one stack shared by every container and copied out at the
 * closing bracket, so each array is exactly its size. */
typedef struct block {
    struct block *next;
    size_t used, cap;
    double data[]; /* aligned for every member of sml_json */
} block;

#define BLOCK_BYTES ((size_t)64 << 10)

typedef struct parser {
    const char *s, *end, *p;
    int depth;
    char *err;
    size_t errlen;
    int failed;
    block *blocks;
    sml_json **items; /* the member stack */
    char **keys;
    size_t sp, cap;
} parser;

static void fail(parser *ps, const char *fmt, ...) {
    if (ps->failed) return;
    ps->failed = 1;
    if (!ps->err || !ps->errlen) return;
    int line = 1, col = 1;
    for (const char *q = ps->s; q < ps->p && q < ps->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else
            col++;
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

static void *alloc(parser *ps, size_t n) {
    n = (n + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    block *b = ps->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        b = malloc(sizeof *b + cap);
        if (!b) {
            fail(ps, "out of memory");
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        b->next = ps->blocks;
        ps->blocks = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

static void free_blocks(block *b) {
    while (b) {
        block *next = b->next;
        free(b);
        b = next;
    }
}

static sml_json *new_value(parser *ps, sml_json_type t) {
    sml_json *v = alloc(ps, sizeof *v);
    if (v) {
        memset(v, 0, sizeof *v);
        v->type = t;
    }
    return v;
}

static int push(parser *ps, sml_json *item, char *key) {
    if (ps->sp == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        sml_json **ni = realloc(ps->items, cap * sizeof *ni);
        if (ni) ps->items = ni;
        char **nk = ni ? realloc(ps->keys, cap * sizeof *nk) : NULL;
        if (nk) ps->keys = nk;
        if (!ni || !nk) {
            fail(ps, "out of memory");
            return 0;
        }
        ps->cap = cap;
    }
    ps->items[ps->sp] = item;
    ps->keys[ps->sp++] = key;
    return 1;
}

/* The members pushed since `base` become v's own arrays. */
static int pop_members(parser *ps, sml_json *v, size_t base) {
    v->n = ps->sp - base;
    if (v->n) {
        if (!(v->items = alloc(ps, v->n * sizeof *v->items))) return 0;
        memcpy(v->items, ps->items + base, v->n * sizeof *v->items);
        if (v->type == SML_JSON_OBJECT) {
            if (!(v->keys = alloc(ps, v->n * sizeof *v->keys))) return 0;
            memcpy(v->keys, ps->keys + base, v->n * sizeof *v->keys);
        }
    }
    ps->sp = base;
    return 1;
}

static int hex4(parser *ps, unsigned *out) {
    if (ps->end - ps->p < 4) {
        fail(ps, "truncated \\u escape");
        return 0;
    }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else {
            fail(ps, "bad hex digit in \\u escape");
            return 0;
        }
    }
    ps->p += 4;
    *out = v;
    return 1;
}

static size_t utf8_put(char *dst, unsigned cp) {
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
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

size_t sml_utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if ((size_t)(end - p) < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

/* At the opening quote; returns the string, in the arena. The closing quote is found first,
 * so the allocation is the string's own length (an escape never grows the text). */
static char *parse_string(parser *ps) {
    ps->p++;
    const char *start = ps->p, *q = start;
    while (q < ps->end && *q != '"') q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
    if (q >= ps->end) {
        ps->p = ps->end;
        fail(ps, "unterminated string");
        return NULL;
    }
    char *out = alloc(ps, (size_t)(q - start) + 1);
    if (!out) return NULL;
    size_t n = 0;
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            out[n] = 0;
            return out;
        }
        if (c >= 0x80) {
            size_t k = sml_utf8_len((const unsigned char *)ps->p, (const unsigned char *)ps->end);
            if (!k) {
                fail(ps, "invalid UTF-8 in a string");
                break;
            }
            memcpy(out + n, ps->p, k);
            n += k;
            ps->p += k;
            continue;
        }
        if (c < 0x20) {
            fail(ps, "control character in a string");
            break;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            ps->p++;
            continue;
        }
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
            if (!hex4(ps, &cp)) return NULL;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                    fail(ps, "unpaired surrogate in \\u escape");
                    return NULL;
                }
                ps->p += 2;
                if (!hex4(ps, &lo)) return NULL;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    fail(ps, "unpaired surrogate in \\u escape");
                    return NULL;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                fail(ps, "unpaired surrogate in \\u escape");
                return NULL;
            } else if (cp == 0) {
                fail(ps, "\\u0000 in a string is not supported");
                return NULL;
            }
            n += utf8_put(out + n, cp);
            break;
        }
        default:
            ps->p--;
            fail(ps, "bad escape '\\%c'", e);
            return NULL;
        }
    }
    if (!ps->failed) fail(ps, "unterminated string");
    return NULL;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static sml_json *parse_number(parser *ps) {
    const char *q = ps->p;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || !is_digit(*q)) {
        fail(ps, "bad number");
        return NULL;
    }
    if (*q == '0')
        q++;
    else
        while (q < ps->end && is_digit(*q)) q++;
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || !is_digit(*q)) {
            fail(ps, "bad number: digits must follow '.'");
            return NULL;
        }
        while (q < ps->end && is_digit(*q)) q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || !is_digit(*q)) {
            fail(ps, "bad number: bad exponent");
            return NULL;
        }
        while (q < ps->end && is_digit(*q)) q++;
    }
    char buf[64];
    size_t len = (size_t)(q - ps->p);
    if (len >= sizeof buf) {
        fail(ps, "number too long");
        return NULL;
    }
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
    if (++ps->depth > MAX_DEPTH) {
        fail(ps, "nested deeper than %d", MAX_DEPTH);
        return NULL;
    }
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
    size_t base = ps->sp;
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, "expected a member name in quotes");
                return NULL;
            }
            if (!(key = parse_string(ps))) return NULL;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                fail(ps, "expected ':' after a member name");
                return NULL;
            }
            ps->p++;
        }
        sml_json *item = parse_value(ps);
        if (!item || !push(ps, item, key)) return NULL;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return pop_members(ps, v, base) ? v : NULL;
        }
        fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
        return NULL;
    }
}

static sml_json *parse_value(parser *ps) {
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end of input");
        return NULL;
    }
    char c = *ps->p;
    if (c == '{') return parse_container(ps, 1);
    if (c == '[') return parse_container(ps, 0);
    if (c == '"') {
        char *s = parse_string(ps);
        sml_json *v = s ? new_value(ps, SML_JSON_STRING) : NULL;
        if (v) v->string = s;
        return v;
    }
    if (c == '-' || is_digit(c)) return parse_number(ps);
    if (literal(ps, "true")) {
        sml_json *v = new_value(ps, SML_JSON_BOOL);
        if (v) v->boolean = 1;
        return v;
    }
    if (literal(ps, "false")) return new_value(ps, SML_JSON_BOOL);
    if (literal(ps, "null")) return new_value(ps, SML_JSON_NULL);
    const unsigned char u = (unsigned char)c;
    if (u == 0xEF && ps->end - ps->p >= 3 && (unsigned char)ps->p[1] == 0xBB &&
        (unsigned char)ps->p[2] == 0xBF)
        fail(ps, "a UTF-8 byte order mark (EF BB BF): JSON has none; save the file without it");
    else if (u < 0x20 || u >= 0x7f)
        fail(ps, "unexpected byte 0x%02X",
             u); /* never the raw byte: it could be half a character */
    else
        fail(ps, "unexpected character '%c'", c);
    return NULL;
}

sml_status sml_json_parse(const char *text, size_t len, sml_json **out, char *err, size_t errlen) {
    if (!text || !out) return SML_ERR_NULL_POINTER;
    *out = NULL;
    if (err && errlen) err[0] = 0;
    parser ps = {.s = text, .end = text + len, .p = text, .err = err, .errlen = errlen};
    sml_json *v = parse_value(&ps);
    if (v) {
        skip_ws(&ps);
        if (ps.p != ps.end) {
            fail(&ps, "unexpected text after the document");
            v = NULL;
        }
    }
    free(ps.items);
    free(ps.keys);
    if (!v) {
        if (!ps.failed) fail(&ps, "malformed JSON");
        free_blocks(ps.blocks);
        return SML_ERR_FORMAT;
    }
    v->arena = ps.blocks;
    *out = v;
    return SML_OK;
}

sml_status sml_json_parse_file(const char *path, sml_json **out, char *err, size_t errlen) {
    if (!path || !out) return SML_ERR_NULL_POINTER;
    *out = NULL;
    char *buf;
    size_t n;
    sml_status s = sml_file_read_all(path, SML_JSON_MAX_FILE, &buf, &n, err, errlen);
    if (s != SML_OK) return s;
    s = sml_json_parse(buf, n, out, err, errlen);
    free(buf);
    return s;
}

void sml_json_free(sml_json *v) {
    if (v) free_blocks(v->arena);
}

const sml_json *sml_json_get(const sml_json *obj, const char *key) {
    if (!obj || obj->type != SML_JSON_OBJECT || !key) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}

const sml_json *sml_json_at(const sml_json *arr, size_t i) {
    if (!arr || (arr->type != SML_JSON_ARRAY && arr->type != SML_JSON_OBJECT) || i >= arr->n)
        return NULL;
    return arr->items[i];
}

size_t sml_json_len(const sml_json *arr) {
    return arr && (arr->type == SML_JSON_ARRAY || arr->type == SML_JSON_OBJECT) ? arr->n : 0;
}

const char *sml_json_str(const sml_json *v) {
    return v && v->type == SML_JSON_STRING ? v->string : NULL;
}

int sml_json_is_num(const sml_json *v) { return v && v->type == SML_JSON_NUMBER; }

double sml_json_num(const sml_json *v, double fallback) {
    if (v && v->type == SML_JSON_STRING) { /* how the writers spell what JSON has no number for */
        if (!strcmp(v->string, "inf")) return INFINITY;
        if (!strcmp(v->string, "-inf")) return -INFINITY;
        if (!strcmp(v->string, "nan")) return NAN;
    }
    return v && v->type == SML_JSON_NUMBER ? v->number : fallback;
}

int sml_json_int(const sml_json *v, int64_t lo, int64_t hi, int64_t *out) {
    /* The range test is done in double before any conversion: a cast of a value out of
     * int64_t's range is undefined. */
    if (!sml_json_is_num(v) || v->number != floor(v->number) || v->number < (double)lo ||
        v->number > (double)hi || v->number >= 9223372036854775808.0)
        return 0;
    int64_t x = (int64_t)v->number;
    if (x < lo || x > hi) return 0; /* lo, hi not exact in double */
    *out = x;
    return 1;
}

int sml_json_req_str(const sml_json *o, const char *key, char *dst, size_t n, const char *where,
                     char *err, size_t errlen) {
    const char *s = sml_json_str(sml_json_get(o, key));
    if (!s || !s[0] || strlen(s) >= n) {
        snprintf(err, errlen, "%s: '%s' missing, not a string or too long", where, key);
        return 0;
    }
    memcpy(dst, s, strlen(s) + 1);
    sml_printable(dst);
    return 1;
}

int sml_json_opt_str(const sml_json *o, const char *key, char *dst, size_t n, const char *where,
                     char *err, size_t errlen) {
    const sml_json *v = sml_json_get(o, key);
    if (!v || v->type == SML_JSON_NULL) {
        if (n) dst[0] = '\0';
        return 1;
    }
    return sml_json_req_str(o, key, dst, n, where, err, errlen);
}

char *sml_printable(char *s) {
    for (unsigned char *p = (unsigned char *)s; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f) *p = '?';
    return s;
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
