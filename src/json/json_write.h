/* json_write.h: a small streaming JSON writer (RFC 8259) for the benchmark's documents.
 * Commas, indentation and string escaping are its job; the caller only nests calls. */
#ifndef SML_BENCH_JSON_WRITE_H
#define SML_BENCH_JSON_WRITE_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SML_JW_MAX_DEPTH 32

typedef struct sml_jw {
    FILE *f;
    int depth;
    int count[SML_JW_MAX_DEPTH];   /* values written so far in each open container */
    int inline_[SML_JW_MAX_DEPTH]; /* 1: this container is written on one line */
    int array[SML_JW_MAX_DEPTH];   /* 1: array, 0: object */
    int after_key;
    int error;    /* set on misuse (unbalanced calls, too deep); the output is then invalid */
    int nan_null; /* NaN and the infinities as null (SML_JSON_NAN=null), else "nan"/"inf"/"-inf" */
} sml_jw;

void sml_jw_init(sml_jw *w, FILE *f);
/* Containers; the *_inline forms keep the whole container on one line. */
void sml_jw_object(sml_jw *w);
void sml_jw_object_inline(sml_jw *w);
void sml_jw_array(sml_jw *w);
void sml_jw_array_inline(sml_jw *w);
void sml_jw_end(sml_jw *w); /* closes the innermost open container */
void sml_jw_key(sml_jw *w, const char *key);
void sml_jw_str(sml_jw *w, const char *s); /* NULL writes null */
/* NaN and infinities, which JSON has no number for, are written as the strings "nan", "inf"
 * and "-inf" (docs/BENCHMARKING.md, "JSON conventions"); sml_json_num reads them back. */
void sml_jw_num(sml_jw *w, double v);
void sml_jw_int(sml_jw *w, int64_t v);
void sml_jw_bool(sml_jw *w, int v);
void sml_jw_null(sml_jw *w);
/* key + value in one call. */
void sml_jw_kstr(sml_jw *w, const char *key, const char *s);
void sml_jw_knum(sml_jw *w, const char *key, double v);
void sml_jw_kint(sml_jw *w, const char *key, int64_t v);
void sml_jw_kbool(sml_jw *w, const char *key, int v);
/* Ends the document with a newline; returns 0 when the calls balanced and nothing failed. */
int sml_jw_finish(sml_jw *w);

#ifdef __cplusplus
}
#endif
#endif
