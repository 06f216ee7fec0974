/* json_read.h: a minimal JSON reader (RFC 8259) for what `compare` and `plot` read back: the
 * benchmark's own ledger documents. Parses into a tree; errors say line and column. */
#ifndef SML_BENCH_JSON_READ_H
#define SML_BENCH_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sml_json_type {
    SML_JSON_NULL = 0,
    SML_JSON_BOOL,
    SML_JSON_NUMBER,
    SML_JSON_STRING,
    SML_JSON_ARRAY,
    SML_JSON_OBJECT
} sml_json_type;

typedef struct sml_json {
    sml_json_type type;
    int boolean;
    double number;
    char *string;            /* STRING: NUL-terminated UTF-8 (a \u0000 escape is refused) */
    size_t n;                /* ARRAY, OBJECT: number of members */
    struct sml_json **items; /* ARRAY, OBJECT: the members' values */
    char **keys;             /* OBJECT: the members' names */
    void *arena;             /* the document's root: where the whole tree lives */
} sml_json;

/* Parse len bytes. On error returns SML_ERR_FORMAT and writes "line L, column C: why" to err. */
sml_status sml_json_parse(const char *text, size_t len, sml_json **out, char *err, size_t errlen);
/* Read and parse a regular file of at most SML_JSON_MAX_FILE bytes: SML_ERR_IO if unreadable
 * or not a regular file (a FIFO is refused, never waited on), SML_ERR_FORMAT if malformed or
 * larger. Memory is a small multiple of the file's size. */
#define SML_JSON_MAX_FILE ((size_t)64 << 20)
sml_status sml_json_parse_file(const char *path, sml_json **out, char *err, size_t errlen);
/* Free a document: the root a parse gave, and with it every value in it. */
void sml_json_free(sml_json *v);

/* Lookups that tolerate NULL and wrong types, so readers can chain them. */
const sml_json *sml_json_get(const sml_json *obj, const char *key); /* NULL if absent */
const sml_json *sml_json_at(const sml_json *arr, size_t i);
size_t sml_json_len(const sml_json *arr);    /* 0 unless an array or object */
const char *sml_json_str(const sml_json *v); /* NULL unless a string */
int sml_json_is_num(const sml_json *v);
/* A number, or the strings "inf", "-inf", "nan" the writers use for the non-finite values
 * JSON cannot hold (json_write.h); else fallback. */
double sml_json_num(const sml_json *v, double fallback);
/* 1 with *out set when v is a whole number in [lo, hi], else 0 (no cast of an out-of-range
 * double, which would be undefined). */
int sml_json_int(const sml_json *v, int64_t lo, int64_t hi, int64_t *out);

/* Bytes of the one UTF-8 sequence at p (RFC 3629: no overlong form, no surrogate, at most
 * U+10FFFF), 0 when the bytes before end are not one. The reader refuses a string that is
 * not UTF-8; writers of other formats (SVG) use it to replace what is not. */
size_t sml_utf8_len(const unsigned char *p, const unsigned char *end);

/* Required fields of a document's reader: 1 when o[key] is a non-empty string shorter than n
 * (copied to dst, made printable) or a non-negative whole number (to dst); else 0 with
 * "<where>: '<key>' ..." in err, so a reader can refuse a file naming the field it lacks. */
/* Control characters (below 0x20, and 0x7f) in s become '?', in place, so that a name read
 * from a file cannot move the cursor, clear the screen or forge a line when it is printed.
 * Returns s. */
char *sml_printable(char *s);
int sml_json_req_str(const sml_json *o, const char *key, char *dst, size_t n, const char *where,
                     char *err, size_t errlen);
int sml_json_req_int(const sml_json *o, const char *key, int64_t *dst, const char *where, char *err,
                     size_t errlen);
/* An optional string field: absent or null gives "" in dst and 1; anything else is read as
 * sml_json_req_str reads it (a non-string, empty or too long value refused naming the key). */
int sml_json_opt_str(const sml_json *o, const char *key, char *dst, size_t n, const char *where,
                     char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
