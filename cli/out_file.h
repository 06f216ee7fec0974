/* out_file.h: how the CLI writes the files it produces (JSON reports, saved .npy outputs) so
 * that a failed write never leaves a partial file or destroys the one that was there: a
 * regular file (or a new one) is written to a temporary file in the same folder, checked
 * (every write, fflush, fclose) and renamed over the target; a target that exists and is not
 * a regular file (/dev/stdout, a FIFO, a device, a symlink) is written through in place and
 * never replaced. On failure the temporary file is removed and the caller exits non-zero. */
#ifndef SML_CLI_OUT_FILE_H
#define SML_CLI_OUT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "softmax_lab.h"

typedef struct sml_out_file {
    FILE *f;           /* write here */
    char path[4096];   /* the target */
    char tmp[4160];    /* the temporary file, "" when writing through */
} sml_out_file;

/* Open `path` for writing. 0 on success; -1 with a message in err (nothing created). */
int sml_out_open(sml_out_file *o, const char *path, char *err, size_t errlen);
/* Check the stream, close it and put the file in place. 0 on success; -1 with a message in
 * err, the temporary file removed and the target as it was. */
int sml_out_commit(sml_out_file *o, char *err, size_t errlen);
/* Give up: close and remove the temporary file; the target stays as it was. */
void sml_out_abort(sml_out_file *o);

/* sml_npy_write through a temporary file: `path` (and, for bf16, its .dtype sidecar) is
 * complete or untouched. 0 on success; -1 with a message in err. */
int sml_out_npy(const char *path, sml_dtype dt, int ndim, const int64_t *shape, const void *data,
                char *err, size_t errlen);

#endif
