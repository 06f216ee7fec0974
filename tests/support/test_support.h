/* test_support.h: the few helpers every test executable shares. No framework: a test is a
 * C program that exits 0 (pass), 77 (skip) or anything else (fail), prints one line per
 * failure with the one command that reproduces it, and closes with "N passed, N failed". */
#ifndef SML_TEST_SUPPORT_H
#define SML_TEST_SUPPORT_H

#include <stdarg.h>
#include <stdint.h>

#include "softmax_lab.h"

#define SML_TEST_SKIP 77

typedef struct sml_tally {
    const char *test;   /* the executable's name, for messages */
    int64_t passed, failed, skipped;
} sml_tally;

/* For GPU tests: returns 0 when a CUDA device is usable (selecting the one ctest assigned
 * through CTEST_RESOURCE_GROUP_0_GPUS, if any), else prints why and returns SML_TEST_SKIP. */
int sml_test_require_gpu(const char *test);

void sml_tally_pass(sml_tally *t);
/* Record a failure: prints "FAIL <test>: <message>" then "  reproduce: <command>". */
void sml_tally_fail(sml_tally *t, const char *reproduce, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Print "N passed, N failed[, N skipped]" and return the exit code (0 / 1). */
int sml_tally_finish(const sml_tally *t);

#endif
