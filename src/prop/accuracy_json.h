/* accuracy_json.h: an accuracy summary (prop/accuracy.h) as JSON, written into ledgers, check
 * reports and reproducers, and read back by `compare`. */
#ifndef SML_PROP_ACCURACY_JSON_H
#define SML_PROP_ACCURACY_JSON_H

#include <stddef.h>

#include "json/json_read.h"
#include "json/json_write.h"
#include "prop/accuracy.h"

/* The summary's fields into the object open in w: "seed": "0x..", "cases", "judged",
 * "digest": "0x..", "worst", "p99", "median", "worst_ulps" (null when nothing was judged),
 * "worst_case" and "worst_level" (when something was). sml_acc_read reads them back. */
void sml_acc_write_fields(sml_jw *w, const sml_accuracy *a);
/* The same as the value of `key`, one object on one line. */
void sml_acc_write(sml_jw *w, const char *key, const sml_accuracy *a);

/* 1 when doc holds accuracy summaries compare can read (a check JSON, or a ledger with them). */
int sml_acc_doc_has_accuracy(const sml_json *doc);
/* One summary from its JSON object (sml_acc_write_fields's form): 0 with "<where>: '<key>'
 * ..." in err when a field is missing or out of range. */
int sml_acc_read(const sml_json *o, const char *where, sml_accuracy *a, char *err, size_t errlen);

#endif
