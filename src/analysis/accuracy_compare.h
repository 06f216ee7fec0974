/* accuracy_compare.h: `softmax-lab compare` on accuracy. Reads the per kernel, op and dtype
 * accuracy summaries (prop/accuracy.h) of two documents, check JSON (`check --json`: runs[]
 * with "accuracy") or ledger JSON (`bench`: records[].accuracy[]), matches them by kernel, op
 * and dtype (by op and dtype alone when each document holds one kernel under another name)
 * and judges each pair by the rule of docs/NUMERICS.md, section 8. */
#ifndef SML_ANALYSIS_ACCURACY_COMPARE_H
#define SML_ANALYSIS_ACCURACY_COMPARE_H

#include <stddef.h>

#include "json/json_read.h"
#include "prop/accuracy_json.h"

typedef struct sml_acc_row {
    char old_kernel[64], new_kernel[64], op[24], dtype[8];
    /* What a rerun of a NEW case needs besides kernel, op, dtype, seed, case and level, as
     * recorded in NEW (check JSON): " --long", " --strict", " --load LIBRARY" ("" for none). */
    char new_flags[1200];
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

/* SML_ERR_FORMAT with the field's path in err on a malformed document. */
sml_status sml_acc_compare_docs(const sml_json *old_doc, const sml_json *new_doc,
                                sml_acc_report *out, char *err, size_t errlen);
void sml_acc_report_free(sml_acc_report *r);

#endif
