/* accuracy_compare.h: `softmax-lab compare` on accuracy. Reads the per kernel, op and dtype
 * accuracy summaries (prop/accuracy.h) of two documents, check JSON (`check --json`: runs[]
 * with "accuracy") or ledger JSON (`bench`: records[].accuracy[]), matches them by kernel, op
 * and dtype (by op and dtype alone when each document holds one kernel under another name)
 * and judges each pair by the rule of docs/NUMERICS.md, section 8. */
#ifndef SML_BENCH_ACCURACY_COMPARE_H
#define SML_BENCH_ACCURACY_COMPARE_H

#include <stddef.h>

#include "bench/json_read.h"
#include "bench/json_write.h"
#include "prop/accuracy.h"

typedef struct sml_acc_row {
    char old_kernel[64], new_kernel[64], op[24], dtype[8];
    sml_accuracy old_a, new_a;
    sml_acc_verdict verdict;
    char why[512];
} sml_acc_row;

typedef struct sml_acc_report {
    sml_acc_row *rows;
    size_t n;
    int count[4]; /* by sml_acc_verdict */
    int only_old, only_new;
} sml_acc_report;

/* The summary's fields into the object open in w: "seed": "0x..", "cases", "judged",
 * "digest": "0x..", "worst", "p99", "median", "worst_ulps" (null when nothing was judged),
 * "worst_case" and "worst_level" (when something was). sml_acc_read reads them back. */
void sml_acc_write_fields(sml_jw *w, const sml_accuracy *a);
/* The same as the value of `key`, one object on one line. */
void sml_acc_write(sml_jw *w, const char *key, const sml_accuracy *a);

/* 1 when doc holds accuracy summaries compare can read (a check JSON, or a ledger with them). */
int sml_acc_doc_has_accuracy(const sml_json *doc);
/* One summary from its JSON object (sml_accuracy_write_json's form): 0 with "<where>: '<key>'
 * ..." in err when a field is missing or out of range. */
int sml_acc_read(const sml_json *o, const char *where, sml_accuracy *a, char *err, size_t errlen);
/* SML_ERR_FORMAT with the field's path in err on a malformed document. */
sml_status sml_acc_compare_docs(const sml_json *old_doc, const sml_json *new_doc, sml_acc_report *out,
                                char *err, size_t errlen);
void sml_acc_report_free(sml_acc_report *r);

#endif
