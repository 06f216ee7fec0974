/* file_read.h: how every reader of a user's file opens it. Only a regular file is read: a
 * FIFO would block the reader forever, a directory or device is no input; each is refused
 * with one line saying what the path is. Messages put the path first, shortened from the
 * front when it would push the reason out of the caller's buffer. */
#ifndef SML_FILE_READ_H
#define SML_FILE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open a regular file for binary reading without ever blocking on open. On success *out
 * is the stream and *size its size in bytes. On failure why[n] says what the path is
 * ("cannot open: No such file or directory", "a directory, not a file", ...) with no path,
 * and the status is SML_ERR_IO. */
sml_status sml_file_open_read(const char *path, FILE **out, int64_t *size, char *why, size_t n);

/* The whole regular file, NUL-terminated, into a malloc'd *buf of *len bytes (NUL not
 * counted). SML_ERR_FORMAT when it holds more than max bytes (why says the size). */
sml_status sml_file_read_all(const char *path, size_t max, char **buf, size_t *len, char *why,
                             size_t n);

/* err := "<path>: <reason>", the path cut to "...<its end>" so that the reason fits. */
sml_status sml_file_errorf(sml_status s, char *err, size_t n, const char *path, const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));

#ifdef __cplusplus
}
#endif
#endif
