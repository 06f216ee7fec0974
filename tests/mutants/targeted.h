/* targeted.h: the one thing the mutation test needs that the property engine has no hook
 * for: running the property suite on cases drawn at a fixed shape (a mutant's shape hint,
 * mutants.h) instead of the generators' random shapes. Values still come from the engine's
 * logit families, the properties, shrinker and reproducer writer are the engine's own; only
 * the choice of rows, cols, ld and offset is taken over. The engine hook that would make
 * this file unnecessary: a shape override in sml_prop_config (or sml_prop_sizes) that
 * sml_prop_gen_case honours. */
#ifndef SML_TESTS_MUTANTS_TARGETED_H
#define SML_TESTS_MUTANTS_TARGETED_H

#include <stdint.h>

#include "prop/prop.h"
#include "tests/mutants/mutants.h"

/* What killed a mutant (or that nothing did), from a standard or a targeted run. */
typedef struct sml_mut_kill {
    int killed;
    sml_prop_id prop;
    sml_prop_outcome outcome; /* FAIL, or ERROR raised by the kernel itself */
    int64_t cases;            /* cases run until the kill (1-based); all cases if none */
    double seconds;
    int64_t rows, cols, ld, offset;         /* the case as drawn */
    int64_t s_rows, s_cols, s_ld, s_offset; /* as shrunk */
    int64_t shrink_steps;
    char family[64];
    char message[384];
    char repro[1024]; /* the reproducer's .json, "" if none was saved */
} sml_mut_kill;

/* 1 when an ERROR verdict's message is the kernel's own failure (it returned an error or
 * faulted), not the engine's (allocation, reference, checker). Only those kill a mutant. */
int sml_mut_error_is_kernels(const sml_kernel *k, const char *message);

/* Run up to h->cases cases of k at h->shape (forward ops only), every property of cfg->props
 * in the engine's order, stopping at the first failure: shrink it for h->shrink_seconds
 * (none when 0 or when the kernel left a CUDA error behind), save the reproducer into
 * cfg->save_dir, fill *out. Case i's values come from sml_derive_seed(cfg->seed ^ salt, i). */
sml_status sml_mut_targeted_run(const sml_kernel *k, const sml_mut_hint *h,
                                const sml_prop_config *cfg, sml_mut_kill *out);

#endif
