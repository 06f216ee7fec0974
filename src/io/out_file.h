/* out_file.h: how every file softmax-lab writes is written, so that a failed write leaves the
 * old file (or none), never half a file, and exits non-zero.
 *
 *   sml_out_file o;
 *   if (sml_out_open(&o, path, err, errlen) != SML_OK) ...   nothing was created
 *   fprintf(o.f, ...);                                       write freely, errors are kept
 *   if (sml_out_commit(&o, err, errlen) != SML_OK) ...       the old file is untouched
 *   sml_out_abort(&o);                                       instead of commit: drop it all
 *
 * What the target is decides how it is written:
 *   - a path that does not exist, or a regular file: written to a temporary file beside it
 *     (".NAME.PID.N.tmp"), flushed, fsync'ed, closed and renamed over it, every step
 *     checked; on any failure the temporary is removed. A replaced file keeps its mode.
 *   - a symbolic link to a regular file: the file it points to is replaced that way, and the
 *     link stays a link;
 *   - a character device or a FIFO (/dev/null, /dev/full, a terminal, /dev/stdout on a pipe),
 *     and the names of open files (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/...): written
 *     in place, nothing is replaced; a failed write, flush or close is still an error. A
 *     path under /proc/ that does not exist is refused;
 *   - a directory, a block device, a socket, or a symbolic link to nothing: refused.
 * err receives "PATH: what went wrong". */
#ifndef SML_UTIL_OUT_FILE_H
#define SML_UTIL_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "softmax_lab.h"

typedef struct sml_out_file {
    FILE *f;          /* write here between open and commit (NULL once closed) */
    const char *name; /* the path as given, for messages (the caller's string) */
    char path[4096];  /* the file the temporary replaces (a symlink's target) */
    char tmp[4096];   /* the temporary; "" when writing in place */
} sml_out_file;

sml_status sml_out_open(sml_out_file *o, const char *path, char *err, size_t errlen);
sml_status sml_out_commit(sml_out_file *o, char *err, size_t errlen);
void sml_out_abort(sml_out_file *o);

/* mkdir -p: SML_OK when dir exists as a directory afterwards, SML_ERR_INVALID_ARG for a path
 * too long, SML_ERR_IO otherwise (errno says why). */
sml_status sml_mkdir_p(const char *dir);

/* open + one write of buf + commit. */
sml_status sml_out_write(const char *path, const void *buf, size_t len, char *err, size_t errlen);

#endif
