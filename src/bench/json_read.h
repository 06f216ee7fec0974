/* json_read.h: a minimal JSON reader (RFC 8259) for what `compare` and `plot` read back: the
 * benchmark's own ledger documents. Parses into a tree; errors say line and column. */
#ifndef SML_BENCH_JSON_READ_H
#define SML_BENCH_JSON_READ_H

#include <stddef.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sml_json_type {
    SML_JSON_NULL = 0, SML_JSON_BOOL, SML_JSON_NUMBER, SML_JSON_STRING, SML_JSON_ARRAY,
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
} sml_json;

/* Parse len bytes. On error returns SML_ERR_FORMAT and writes "line L, column C: why" to err. */
sml_status sml_json_parse(const char *text, size_t len, sml_json **out, char *err, size_t errlen);
/* Read and parse a file: SML_ERR_IO if unreadable, SML_ERR_FORMAT if malformed. */
sml_status sml_json_parse_file(const char *path, sml_json **out, char *err, size_t errlen);
void sml_json_free(sml_json *v);

/* Lookups that tolerate NULL and wrong types, so readers can chain them. */
const sml_json *sml_json_get(const sml_json *obj, const char *key); /* NULL if absent */
const sml_json *sml_json_at(const sml_json *arr, size_t i);
size_t sml_json_len(const sml_json *arr);      /* 0 unless an array or object */
const char *sml_json_str(const sml_json *v);   /* NULL unless a string */
int sml_json_is_num(const sml_json *v);
/* A number, or the strings "inf", "-inf", "nan" the writers use for the non-finite values
 * JSON cannot hold (json_write.h); else fallback. */
double sml_json_num(const sml_json *v, double fallback);

/* Required fields of a document's reader: 1 when o[key] is a non-empty string shorter than n
 * (copied to dst) or a non-negative whole number (to dst); else 0 with "<where>: '<key>' ..."
 * in err, so a reader can refuse a file naming the field it lacks. */
int sml_json_req_str(const sml_json *o, const char *key, char *dst, size_t n, const char *where, char *err,
                     size_t errlen);
int sml_json_req_int(const sml_json *o, const char *key, int64_t *dst, const char *where, char *err,
                     size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
