/* path_same.h: whether two paths a command was given name the same file, so that no output
 * of a command overwrites one of its inputs or another of its outputs. */
#ifndef SML_IO_PATH_SAME_H
#define SML_IO_PATH_SAME_H

#include <stddef.h>

/* One path of a command, with the flag (or role) that gave it, for the message. */
typedef struct sml_path_arg {
    const char *flag; /* "--json", "the ledger", ... */
    const char *path; /* NULL: not given (skipped) */
    int output;       /* 1: the command writes it */
} sml_path_arg;

/* 1 when a and b name the same file: the same file after symbolic links (device and inode)
 * where it exists, else the same real directory and name. "-" and character devices
 * (/dev/null) are never the same as anything: writing one twice loses nothing. */
int sml_path_same(const char *a, const char *b);

/* 0 when no output among args names an input or another output; else 1, with err saying
 * "--json 'x.npy' is also --input: ..." for the first such pair. */
int sml_paths_clash(const sml_path_arg *args, size_t n, char *err, size_t errlen);

#endif
