/* ledger_save.c: the ledger's files, each written whole or not at all (io/out_file.h). */
#include "report/ledger_write.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/out_file.h"

sml_status sml_ledger_save_file(const sml_bench_run *run, const sml_ledger *l, const char *path,
                                int json, char *err, size_t errlen) {
    sml_out_file o;
    if (sml_out_open(&o, path, err, errlen) != SML_OK) return SML_ERR_IO;
    if (json ? sml_ledger_write_json(run, l, o.f) : sml_ledger_write_md(run, l, o.f)) {
        sml_out_abort(&o);
        snprintf(err, errlen, "%s: write failed", path);
        return SML_ERR_IO;
    }
    return sml_out_commit(&o, err, errlen);
}

sml_status sml_ledger_save(const sml_bench_run *run, const sml_ledger *l, const char *dir,
                           const char *stem, char *json_path, char *md_path, size_t path_len,
                           char *err, size_t errlen) {
    if (sml_mkdir_p(dir) != SML_OK) {
        snprintf(err, errlen, "cannot create the ledger directory %s: %s", dir, strerror(errno));
        return SML_ERR_IO;
    }
    snprintf(json_path, path_len, "%s/%s.json", dir, stem);
    snprintf(md_path, path_len, "%s/%s.md", dir, stem);
    sml_status s = sml_ledger_save_file(run, l, json_path, 1, err, errlen);
    if (s == SML_OK) s = sml_ledger_save_file(run, l, md_path, 0, err, errlen);
    return s;
}
