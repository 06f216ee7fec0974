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
 *   - "-": this process's stdout;
 *   - a character device (/dev/null, /dev/full, a terminal), this process's own stdout or
 *     stderr under any name (/dev/stdout on a pipe too), and the names of open files
 *     (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/...): written in place, nothing is
 *     replaced; a failed write, flush or close is still an error. A path under /proc/ that
 *     does not exist is refused;
 *   - any other FIFO (opening one blocks until something reads it; a pipe named as an open
 *     descriptor, /dev/fd/N, is written in place), a directory, a block
 *     device, a socket, or a symbolic link to nothing: refused.
 * A temporary that is still open is removed at exit() and on SIGINT, SIGTERM, SIGHUP, SIGQUIT
 * and the crash signals (where those are at their default action), so no ".NAME.PID.N.tmp"
 * outlives an interrupted run.
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
    int live;         /* its slot among the temporaries removed at exit or on a signal */
} sml_out_file;

sml_status sml_out_open(sml_out_file *o, const char *path, char *err, size_t errlen);
sml_status sml_out_commit(sml_out_file *o, char *err, size_t errlen);
/* Drop it all: also after sml_out_finish, while the temporary is not yet placed. */
void sml_out_abort(sml_out_file *o);

/* sml_out_commit in two steps, for files that must appear together or not at all:
 * sml_out_finish flushes, syncs and closes (where a full disk or a size limit shows; on
 * failure the temporary is removed), sml_out_place renames the temporary over the target
 * (a file written in place is already there). */
sml_status sml_out_finish(sml_out_file *o, char *err, size_t errlen);
sml_status sml_out_place(sml_out_file *o, char *err, size_t errlen);
/* Finish every file still open, then place them all; if any step fails, every file not yet
 * placed is dropped (with finish failing, none is placed: nothing is written). */
sml_status sml_out_commit_all(sml_out_file *const *files, size_t n, char *err, size_t errlen);

/* mkdir -p: SML_OK when dir exists as a directory afterwards, SML_ERR_INVALID_ARG for a path
 * too long, SML_ERR_IO otherwise (errno says why). */
sml_status sml_mkdir_p(const char *dir);

/* open + one write of buf + commit. */
sml_status sml_out_write(const char *path, const void *buf, size_t len, char *err, size_t errlen);

#endif
