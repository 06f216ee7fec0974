/* check_report.h: what both forms of `check --input` share: reading the files a user hands
 * in (refusing a mismatch by file and field), N-d index tuples, the worst elements as text
 * and JSON, the JSON report's head, and the exit codes. */
#ifndef SML_CLI_CHECK_REPORT_H
#define SML_CLI_CHECK_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json/json_write.h"
#include "io/npy.h"
#include "reference/check.h"
#include "io/out_file.h"

/* Exit codes of `check --input` (and commands.h): */
#define SML_EXIT_HOLDS    0 /* everything checked meets the contract */
#define SML_EXIT_BROKEN   1 /* something breaks it (or a kernel errored) */
#define SML_EXIT_UNUSABLE 2 /* bad usage or input, or a failed write */
#define SML_EXIT_UNCHECKED \
    3 /* nothing was checked: a named kernel could not run, an empty tensor */

/* How many violations are listed, worst first. */
#define SML_CHECK_SHOW_WORST 5

/* The JSON report's schema, bumped when a field changes meaning. */
#define SML_CHECK_INPUT_SCHEMA "softmax-lab-check-input/1"

/* Read `path` (given with `flag`, e.g. "--output") as the companion of x (read from xpath):
 * same dtype and shape, or a message naming both files and the differing header field
 * ('descr' or 'shape') on stderr and -1. want: the dtype asked for with --dtype, or -1; raw
 * 16-bit data with neither a sidecar nor --dtype takes x's 16-bit dtype. */
int sml_read_companion(const char *path, const char *flag, const sml_npy *x, const char *xpath,
                       int want, sml_npy *out);

/* "(i, j, k)": the element at (row, col) of the rows x cols view, as an index into x's shape. */
void sml_index_tuple(const sml_npy *x, int64_t row, int64_t col, char *buf, size_t n);
/* "(4, 2, 37)" */
void sml_shape_text(const sml_npy *x, char *buf, size_t n);

/* The report's worst element (bound from error / ratio where both are finite, else NaN). */
sml_check_elem sml_report_worst(const sml_check_report *r);

/* The worst violations as a table, one line each: index, got, want, error and bound in ulps,
 * error / bound. */
void sml_print_worst(FILE *f, const char *indent, const sml_npy *x, const sml_check_elem *w, int n);

/* JSON: "schema" and "softmax_lab_version" (call first inside the top object); one element
 * as an inline object; the worst violations as an array under `key`. */
void sml_jw_check_head(sml_jw *w);
void sml_jw_elem(sml_jw *w, const sml_npy *x, const sml_check_elem *e);
void sml_jw_worst(sml_jw *w, const char *key, const sml_npy *x, const sml_check_elem *e, int n);
/* "shape": [..] of x; "worst": the report's worst element, or null when nothing was compared. */
void sml_jw_shape(sml_jw *w, const sml_npy *x);
void sml_jw_report_worst(sml_jw *w, const sml_npy *x, const sml_check_report *r);
/* Finish the document w wrote into the --json file jf (named `path`) and put it in place:
 * 0, or -1 after a message (nothing written). */
int sml_check_json_close(sml_out_file *jf, sml_jw *w, const char *path);

#endif
