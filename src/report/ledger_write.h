/* ledger_write.h: the ledger (bench/ledger.h) written out: JSON (read back by `compare`,
 * `targets` and `plot`), Markdown, and the two files of a run. */
#ifndef SML_REPORT_LEDGER_WRITE_H
#define SML_REPORT_LEDGER_WRITE_H

#include <stdio.h>

#include "bench/ledger.h"

int sml_ledger_write_json(const sml_bench_run *run, const sml_ledger *l, FILE *f);
int sml_ledger_write_md(const sml_bench_run *run, const sml_ledger *l, FILE *f);
/* Writes <dir>/<stem>.json and <dir>/<stem>.md (dir made if missing); the paths written go
 * to json_path / md_path. SML_ERR_IO with the reason in err. */
sml_status sml_ledger_save(const sml_bench_run *run, const sml_ledger *l, const char *dir,
                           const char *stem, char *json_path, char *md_path, size_t path_len,
                           char *err, size_t errlen);
/* Writes one file (JSON if the name ends in .json, else Markdown). */
sml_status sml_ledger_save_file(const sml_bench_run *run, const sml_ledger *l, const char *path,
                                int json, char *err, size_t errlen);

#endif
