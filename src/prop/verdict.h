/* verdict.h: the one place a job's verdict is decided. Whoever runs a kernel/op/dtype job (the
 * engine, the worker pool, the supervisor's channels) only records what happened, as counts of
 * events; sml_verdict_decide turns them into the job's verdict, and sml_verdict_exit into the
 * exit status. Nothing else decides PASS.
 *
 * The rules, in order (the first that applies wins):
 *   1. a failure a fresh rerun reproduced, or one not rerun, stands: FAIL. A failure is final:
 *      no later event (a rerun that passes, a cap, a shrink cut short) makes it PASS;
 *   2. every failure seen was rerun in a fresh worker and none reproduced: FLAKY (it fails
 *      the gate; the report gives both outcomes);
 *   3. the engine could not judge the job (out of memory, the kernel not loadable in its
 *      worker): ERROR, no verdict on the kernel;
 *   4. fewer cases judged than the profile plans: INCOMPLETE (a cap ended it: --seconds), never
 *      PASS;
 *   5. the kernel cannot run here: SKIP;
 *   6. otherwise PASS: every planned case was judged by the supervisor and held.
 * A case past its deadline that finished when run alone is slow, not failed (SML_EV_SLOW is
 * counted and reported, and decides nothing). */
#ifndef SML_PROP_VERDICT_H
#define SML_PROP_VERDICT_H

#include <stdint.h>

#define SML_JOB_LIST(X)            \
    X(PASS, "PASS", 0)             \
    X(FAIL, "FAIL", 1)             \
    X(FLAKY, "FLAKY", 5)           \
    X(ERROR, "ERROR", 3)           \
    X(INCOMPLETE, "INCOMPLETE", 4) \
    X(SKIP, "SKIP", 0)

#define SML_JOB_ENUM_(id, word, exit) SML_JOB_##id,
typedef enum sml_verdict { SML_JOB_LIST(SML_JOB_ENUM_) SML_JOB_COUNT } sml_verdict;
#undef SML_JOB_ENUM_

/* What can happen in a job, counted. */
typedef enum sml_event {
    SML_EV_CASE = 0,   /* a random case judged (every property still standing checked) */
    SML_EV_REGRESSION, /* a saved reproducer replayed and judged */
    SML_EV_FAIL,       /* a property failed or errored: a wrong result, a kernel error, the
                            worker's death, a confirmed hang, a forged frame, a hazard */
    SML_EV_RERUN_FAIL, /* a failure, rerun in a fresh worker, failed again */
    SML_EV_RERUN_PASS, /* a failure, rerun in a fresh worker, passed */
    SML_EV_SLOW,       /* a case past its deadline that finished when run alone */
    SML_EV_BYSTANDER,  /* a case run again alone: the worker it ran in ended for another */
    SML_EV_SHRINK_CUT, /* a shrink stopped by its limits: the smallest case so far stands */
    SML_EV_CAP,        /* the run's cap (--seconds) ended the job */
    SML_EV_NOT_JUDGED, /* the engine could not judge the job */
    SML_EV_SKIP,       /* the kernel cannot run here */
    SML_EV_COUNT
} sml_event;

typedef struct sml_verdict_events {
    int64_t planned; /* random cases the profile names for the job (its slice of them) */
    int64_t n[SML_EV_COUNT];
} sml_verdict_events;

sml_verdict sml_verdict_decide(const sml_verdict_events *e);
/* The exit status of a verdict: PASS and SKIP 0, FAIL 1, ERROR 3, INCOMPLETE 4, FLAKY 5. */
int sml_verdict_exit(sml_verdict v);
/* "PASS", "FAIL", "FLAKY", "ERROR", "INCOMPLETE", "SKIP". */
const char *sml_verdict_name(sml_verdict v);
/* The verdict of a run of several jobs: the gravest of the two (FAIL, FLAKY, ERROR,
 * INCOMPLETE, PASS, SKIP in that order). */
sml_verdict sml_verdict_worse(sml_verdict a, sml_verdict b);
/* The exit status of a run of several jobs from the exit statuses of its parts: the gravest
 * (1, 5, 3, 4, then 0). */
int sml_verdict_exit_worse(int a, int b);

#endif
