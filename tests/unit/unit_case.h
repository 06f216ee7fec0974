/* unit_case.h: the unit tests' shared command line. Every test is a list of numbered cases
 * run with one printed seed; `--case N` re-runs one case and `--seed S` fixes the seed
 * (default: fresh per run, or $SML_SEED), so a failure's reproduce line is exact. */
#ifndef SML_UNIT_CASE_H
#define SML_UNIT_CASE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/rng.h"
#include "test_support.h"

typedef struct unit_run {
    sml_tally tally;
    const char *argv0;
    int64_t only_case; /* -1: all */
    uint64_t seed;
    char repro[256]; /* the reproduce command of the current case */
} unit_run;

static inline int unit_init(unit_run *u, const char *name, int argc, char **argv) {
    memset(u, 0, sizeof *u);
    u->tally.test = name;
    u->argv0 = argv[0];
    u->only_case = -1;
    const char *env = getenv("SML_SEED");
    u->seed = env ? strtoull(env, NULL, 0)
                  : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ 0x5EEDull;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            u->only_case = strtoll(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            u->seed = strtoull(argv[++i], NULL, 0);
        } else {
            fprintf(stderr, "usage: %s [--case N] [--seed S]\n", argv[0]);
            return 2;
        }
    }
    printf("%s: seed 0x%llx\n", name, (unsigned long long)u->seed);
    return 0;
}

/* 1 if case i should run; also prepares its reproduce command and its own seed. */
static inline int unit_case(unit_run *u, int64_t i, uint64_t *case_seed) {
    if (u->only_case >= 0 && u->only_case != i) return 0;
    snprintf(u->repro, sizeof u->repro, "%s --case %lld --seed 0x%llx", u->argv0, (long long)i,
             (unsigned long long)u->seed);
    if (case_seed) *case_seed = sml_derive_seed(u->seed, (uint64_t)i);
    return 1;
}

/* Record a case's outcome: ok != 0 passes; otherwise prints the message and the command. */
#define UNIT_EXPECT(u, ok, ...)                                   \
    do {                                                          \
        if (ok)                                                   \
            sml_tally_pass(&(u)->tally);                          \
        else                                                      \
            sml_tally_fail(&(u)->tally, (u)->repro, __VA_ARGS__); \
    } while (0)

#endif
