/* test_verdict.c: the one verdict function (src/prop/verdict.c), one row per rule: what a
 * job's counted events must give, and the exit status of it. Every driver (the engine, the
 * worker pool, the supervisor's channels) only counts events, so these rows are the whole of
 * what decides a verdict. */
#include <stdio.h>
#include <string.h>

#include "prop/verdict.h"
#include "test_support.h"

typedef struct row {
    const char *what;
    int64_t planned;
    int64_t n[SML_EV_COUNT];
    sml_verdict want;
    int exit;
} row;

#define EV(k) [SML_EV_##k]

static const row ROWS[] = {
    {"every planned case judged, nothing failed: PASS", 300, {EV(CASE) = 300}, SML_JOB_PASS, 0},
    {"a failure reproduced in a fresh worker: FAIL",
     300,
     {EV(CASE) = 12, EV(FAIL) = 1, EV(RERUN_FAIL) = 1},
     SML_JOB_FAIL,
     1},
    {"a failure, rerun in a fresh worker, passes: FLAKY, never PASS",
     300,
     {EV(CASE) = 40, EV(FAIL) = 1, EV(RERUN_PASS) = 1},
     SML_JOB_FLAKY,
     5},
    {"a failure not rerun (in-process, a saved reproducer) stands: FAIL",
     300,
     {EV(CASE) = 300, EV(FAIL) = 1},
     SML_JOB_FAIL,
     1},
    {"two failures, one reproduced and one not: FAIL",
     300,
     {EV(CASE) = 50, EV(FAIL) = 2, EV(RERUN_FAIL) = 1, EV(RERUN_PASS) = 1},
     SML_JOB_FAIL,
     1},
    {"the cap ended the job before its planned cases: INCOMPLETE",
     300,
     {EV(CASE) = 212, EV(CAP) = 1},
     SML_JOB_INCOMPLETE,
     4},
    {"a failure, then the cap: FAIL (a cap never clears a failure)",
     300,
     {EV(CASE) = 90, EV(FAIL) = 1, EV(RERUN_FAIL) = 1, EV(CAP) = 1},
     SML_JOB_FAIL,
     1},
    {"a shrink cut short by its limits: the failure stands, FAIL",
     300,
     {EV(CASE) = 7, EV(FAIL) = 1, EV(RERUN_FAIL) = 1, EV(SHRINK_CUT) = 1},
     SML_JOB_FAIL,
     1},
    {"the worker died during a case (a crash after earlier results): FAIL",
     300,
     {EV(CASE) = 3, EV(FAIL) = 1, EV(RERUN_FAIL) = 1},
     SML_JOB_FAIL,
     1},
    {"a forged frame: FAIL",
     300,
     {EV(CASE) = 3, EV(FAIL) = 1, EV(RERUN_FAIL) = 1},
     SML_JOB_FAIL,
     1},
    {"cases past their deadline that finished alone: slow, not failed, PASS",
     300,
     {EV(CASE) = 300, EV(SLOW) = 14},
     SML_JOB_PASS,
     0},
    {"cases run again alone after another job's crash in a shared worker: PASS",
     300,
     {EV(CASE) = 300, EV(BYSTANDER) = 3},
     SML_JOB_PASS,
     0},
    {"the engine could not judge (out of memory, no kernel in the worker): ERROR",
     300,
     {EV(CASE) = 20, EV(NOT_JUDGED) = 1},
     SML_JOB_ERROR,
     3},
    {"a kernel that cannot run here: SKIP", 300, {EV(SKIP) = 1}, SML_JOB_SKIP, 0},
    {"fewer cases than planned with no event saying why: not a PASS (INCOMPLETE)",
     300,
     {EV(CASE) = 299},
     SML_JOB_INCOMPLETE,
     4},
    {"more failures than reruns that passed: FAIL",
     300,
     {EV(CASE) = 10, EV(FAIL) = 3, EV(RERUN_PASS) = 2},
     SML_JOB_FAIL,
     1},
    {"a saved reproducer fails again: FAIL",
     300,
     {EV(CASE) = 300, EV(REGRESSION) = 4, EV(FAIL) = 1},
     SML_JOB_FAIL,
     1},
};

int main(void) {
    sml_tally T = {"test_verdict", 0, 0, 0};
    const char *again = "build/tests/unit/test_verdict";
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        const row *r = &ROWS[i];
        sml_verdict_events e;
        memset(&e, 0, sizeof e);
        e.planned = r->planned;
        memcpy(e.n, r->n, sizeof e.n);
        sml_verdict got = sml_verdict_decide(&e);
        sml_test_check(&T, got == r->want && sml_verdict_exit(got) == r->exit, again,
                       "%s: got %s (exit %d), want %s (exit %d)", r->what, sml_verdict_name(got),
                       sml_verdict_exit(got), sml_verdict_name(r->want), r->exit);
    }
    /* A run of several jobs: the gravest verdict and exit. */
    static const struct {
        sml_verdict a, b, want;
    } WORSE[] = {{SML_JOB_PASS, SML_JOB_FAIL, SML_JOB_FAIL},
                 {SML_JOB_FLAKY, SML_JOB_FAIL, SML_JOB_FAIL},
                 {SML_JOB_INCOMPLETE, SML_JOB_FLAKY, SML_JOB_FLAKY},
                 {SML_JOB_PASS, SML_JOB_INCOMPLETE, SML_JOB_INCOMPLETE},
                 {SML_JOB_ERROR, SML_JOB_INCOMPLETE, SML_JOB_ERROR},
                 {SML_JOB_SKIP, SML_JOB_PASS, SML_JOB_PASS}};
    for (size_t i = 0; i < sizeof WORSE / sizeof WORSE[0]; i++) {
        sml_verdict got = sml_verdict_worse(WORSE[i].a, WORSE[i].b);
        sml_verdict got2 = sml_verdict_worse(WORSE[i].b, WORSE[i].a);
        sml_test_check(&T, got == WORSE[i].want && got2 == WORSE[i].want, again,
                       "worse(%s, %s): got %s / %s, want %s", sml_verdict_name(WORSE[i].a),
                       sml_verdict_name(WORSE[i].b), sml_verdict_name(got), sml_verdict_name(got2),
                       sml_verdict_name(WORSE[i].want));
    }
    static const int EXITS[][3] = {{0, 1, 1}, {5, 1, 1}, {4, 5, 5}, {0, 4, 4},
                                   {3, 4, 3}, {3, 5, 5}, {2, 1, 2}};
    for (size_t i = 0; i < sizeof EXITS / sizeof EXITS[0]; i++) {
        int got = sml_verdict_exit_worse(EXITS[i][0], EXITS[i][1]);
        sml_test_check(&T, got == EXITS[i][2], again, "exit_worse(%d, %d): got %d, want %d",
                       EXITS[i][0], EXITS[i][1], got, EXITS[i][2]);
    }
    return sml_tally_finish(&T);
}
