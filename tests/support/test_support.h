/* test_support.h: the few helpers every test executable shares. No framework: a test is a
 * C program that exits 0 (pass), 77 (skip) or anything else (fail), prints one line per
 * failure with the one command that reproduces it, and closes with "N passed, N failed". */
#ifndef SML_TEST_SUPPORT_H
#define SML_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "softmax_lab.h"

#define SML_TEST_SKIP 77

typedef struct sml_tally {
    const char *test; /* the executable's name, for messages */
    int64_t passed, failed, skipped;
} sml_tally;

/* For GPU tests: returns 0 when a CUDA device is usable (selecting the one ctest assigned
 * through CTEST_RESOURCE_GROUP_0_GPUS, if any), else prints why and returns SML_TEST_SKIP. */
int sml_test_require_gpu(const char *test);

void sml_tally_pass(sml_tally *t);
/* Record a failure: prints "FAIL <test>: <message>" then "  reproduce: <command>". */
void sml_tally_fail(sml_tally *t, const char *reproduce, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One check: ok is tallied as a pass; otherwise a failure with fmt's message (any length)
 * and reproduce as the command to run. Returns ok != 0. */
int sml_test_check(sml_tally *t, int ok, const char *reproduce, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* One check: ok is tallied as a pass; otherwise a failure whose message is fmt's text cut to
 * msgmax - 1 characters, followed, when out is not NULL, by "--- output ---", the first
 * outmax characters of out and "---", with reproduce as the command to run. */
void sml_expect(sml_tally *t, int ok, const char *reproduce, size_t msgmax, const char *out,
                int outmax, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Print "N passed, N failed[, N skipped]" and return the exit code (0 / 1). */
int sml_tally_finish(const sml_tally *t);

#endif
