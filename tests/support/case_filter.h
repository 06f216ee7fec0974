/* case_filter.h: the `--case N` flag the perf and CLI tests accept, so a failure's reproduce
 * command re-runs exactly that case, and the check of one numbered case. Header-only: each
 * test is one small executable. */
#ifndef SML_TEST_CASE_FILTER_H
#define SML_TEST_CASE_FILTER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_support.h"

typedef struct sml_case_filter {
    const char *argv0;
    int only;             /* -1: every case */
    const char *fixtures; /* --fixtures DIR: tests/perf/fixtures */
    const char *cli;      /* --cli PATH: the softmax-lab binary */
    char repro[2048];     /* the reproduce command of the case being run */
    char fixtures_abs[1024], cli_abs[1024];
} sml_case_filter;

/* A relative *path becomes cwd/path in buf (left as given if it does not fit). */
static inline void sml_case_filter_abs(char *buf, size_t n, const char **path) {
    char cwd[1024];
    if ((*path)[0] == '/' || !getcwd(cwd, sizeof cwd)) return;
    const int w = snprintf(buf, n, "%s/%s", cwd, *path);
    if (w > 0 && (size_t)w < n) *path = buf;
}

/* Parses --case N, --fixtures DIR, --cli PATH; returns 0, or 2 after printing usage. */
static inline int sml_case_filter_init(sml_case_filter *f, int argc, char **argv) {
    f->argv0 = argv[0];
    f->only = -1;
    f->fixtures = "tests/perf/fixtures";
    f->cli = "./build/softmax-lab";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            f->only = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--fixtures") && i + 1 < argc) {
            f->fixtures = argv[++i];
        } else if (!strcmp(argv[i], "--cli") && i + 1 < argc) {
            f->cli = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--case N] [--fixtures DIR] [--cli PATH]\n", argv[0]);
            return 2;
        }
    }
    /* Absolute paths: the CLI tests run the binary in a scratch directory, and a reproduce
     * line must work from wherever it is pasted. */
    sml_case_filter_abs(f->fixtures_abs, sizeof f->fixtures_abs, &f->fixtures);
    sml_case_filter_abs(f->cli_abs, sizeof f->cli_abs, &f->cli);
    return 0;
}

/* 1 when case n should run; sets the reproduce command for it. */
static inline int sml_case_filter_want(sml_case_filter *f, int n) {
    snprintf(f->repro, sizeof f->repro, "%s --fixtures %s --cli %s --case %d", f->argv0,
             f->fixtures, f->cli, n);
    return f->only < 0 || f->only == n;
}

/* Case n's check: nothing when f does not select n; ok is a pass; otherwise a failure
 * "case N: what", followed by the first 2,000 characters of log when log is not NULL, with
 * f's reproduce command for the case. */
static inline void sml_test_check_case(sml_tally *t, sml_case_filter *f, const char *log, int n,
                                       int ok, const char *what) {
    if (!sml_case_filter_want(f, n)) return;
    if (ok)
        sml_tally_pass(t);
    else if (log)
        sml_tally_fail(t, f->repro, "case %d: %s\n--- output ---\n%.2000s\n---", n, what, log);
    else
        sml_tally_fail(t, f->repro, "case %d: %s", n, what);
}

#endif
