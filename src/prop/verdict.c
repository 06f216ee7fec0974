/* verdict.c: the rules of verdict.h, and nothing else. */
#include "prop/verdict.h"

#define WORD_(id, word, exit) word,
static const char *const WORDS[SML_JOB_COUNT] = {SML_JOB_LIST(WORD_)};
#undef WORD_
#define EXIT_(id, word, exit) exit,
static const int EXITS[SML_JOB_COUNT] = {SML_JOB_LIST(EXIT_)};
#undef EXIT_

sml_verdict sml_verdict_decide(const sml_verdict_events *e) {
    const int64_t *n = e->n;
    int64_t fails = n[SML_EV_FAIL];
    if (fails > 0) {
        /* Each failure is rerun at most once; one not rerun, or rerun and failed, stands. */
        int64_t cleared = n[SML_EV_RERUN_PASS] < fails ? n[SML_EV_RERUN_PASS] : fails;
        return cleared < fails ? SML_JOB_FAIL : SML_JOB_FLAKY;
    }
    if (n[SML_EV_NOT_JUDGED] > 0) return SML_JOB_ERROR;
    if (n[SML_EV_SKIP] > 0 && n[SML_EV_CASE] == 0) return SML_JOB_SKIP;
    if (n[SML_EV_CASE] < e->planned) return SML_JOB_INCOMPLETE;
    return SML_JOB_PASS;
}

int sml_verdict_exit(sml_verdict v) {
    return (unsigned)v < SML_JOB_COUNT ? EXITS[v] : EXITS[SML_JOB_ERROR];
}

const char *sml_verdict_name(sml_verdict v) { return (unsigned)v < SML_JOB_COUNT ? WORDS[v] : "?"; }

/* Gravest first: the order of the enum, except that SKIP says less than PASS. */
static int gravity(sml_verdict v) {
    switch (v) {
    case SML_JOB_FAIL: return 5;
    case SML_JOB_FLAKY: return 4;
    case SML_JOB_ERROR: return 3;
    case SML_JOB_INCOMPLETE: return 2;
    case SML_JOB_PASS: return 1;
    default: return 0;
    }
}

sml_verdict sml_verdict_worse(sml_verdict a, sml_verdict b) {
    return gravity(a) >= gravity(b) ? a : b;
}

static int exit_gravity(int rc) {
    switch (rc) {
    case 0: return 0;
    case 4: return 1;
    case 3: return 2;
    case 5: return 3;
    case 1: return 4;
    default: return 5; /* anything else (2: bad usage) is graver still */
    }
}

int sml_verdict_exit_worse(int a, int b) { return exit_gravity(a) >= exit_gravity(b) ? a : b; }
