/* cpu_mutants.h: planted-bug CPU kernels, test-only (never in the registry). Each is a
 * correct fp32 row softmax (cpu_mutants.c, "control") with one classic bug switched on, the
 * CPU form of a GPU kernel bug where one exists (docs/MUTANTS.md). The no-max mutant is the
 * library's own (kernels/cpu_softmax.h). */
#ifndef SML_TESTS_CPU_MUTANTS_H
#define SML_TESTS_CPU_MUTANTS_H

#include <stddef.h>

#include "softmax_lab.h"

typedef struct sml_mutant {
    sml_kernel kernel;  /* name, ops and dtypes where the bug can show */
    const char *bug;    /* one line: what is wrong */
    int expect_survive; /* 1 for the control, which must pass everything */
} sml_mutant;

size_t sml_mutant_count(void);
const sml_mutant *sml_mutant_at(size_t i);
/* By kernel name (for replaying a mutant's reproducer), or NULL. */
const sml_kernel *sml_mutant_find(const char *name, void *unused);

#endif
