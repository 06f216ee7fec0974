/* compare.h: `softmax-lab compare OLD.json NEW.json` as a library function: matches the
 * evidence of two ledger documents by (kernel, op, dtype, rows, cols) and applies the compare
 * rule of decide.h to each pair. */
#ifndef SML_BENCH_COMPARE_H
#define SML_BENCH_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "bench/decide.h"
#include "json/json_read.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sml_cmp_presence {
    SML_CMP_BOTH = 0,
    SML_CMP_ONLY_OLD,
    SML_CMP_ONLY_NEW
} sml_cmp_presence;

typedef struct sml_cmp_row {
    char kernel[32], op[24], dtype[8];
    int64_t rows, cols;
    sml_cmp_presence presence;
    int old_timed, new_timed;
    double old_ms, old_spread, new_ms, new_spread;
    char old_check[16], new_check[16]; /* "ok", "WRONG", "ERROR", "KNOWN-DEV" */
    int broke;                         /* the check went from ok to WRONG or ERROR */
    sml_compare_result verdict;        /* meaningful when presence == BOTH */
} sml_cmp_row;

typedef struct sml_cmp_report {
    sml_cmp_row *rows;
    size_t n;
    int count[4]; /* by sml_compare_result, over rows present in both */
    int only_old, only_new, broke;
    int compared; /* cases in both files timed on both sides: 0 means nothing was compared */
    char old_gpu[128], new_gpu[128];
} sml_cmp_report;

/* The evidence of one ledger document, validated: SML_ERR_FORMAT with a path to the bad
 * field ("records[2].evidence[0]: 'cols' missing or not a number") in err. */
sml_status sml_compare_docs(const sml_json *old_doc, const sml_json *new_doc, double threshold,
                            sml_cmp_report *out, char *err, size_t errlen);
/* The same from files; err starts with the file's name. */
sml_status sml_compare_files(const char *old_path, const char *new_path, double threshold,
                             sml_cmp_report *out, char *err, size_t errlen);
void sml_cmp_report_free(sml_cmp_report *r);
/* 1 when CI should fail: any SLOW, or any check that broke. */
int sml_cmp_failed(const sml_cmp_report *r);

#ifdef __cplusplus
}
#endif
#endif
