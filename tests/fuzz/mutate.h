/* mutate.h: the plain driver's mutator: deterministic for a seed, structure-blind but fed
 * with the format's tokens and the numbers that break size arithmetic. */
#ifndef SML_FUZZ_MUTATE_H
#define SML_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"

typedef struct sml_fuzz_corpus {
    uint8_t **items;
    size_t *lens;
    size_t n;
} sml_fuzz_corpus;

typedef struct sml_fuzz_mutator {
    sml_rng rng;
    const char *const *dict;
    size_t ndict;
    const sml_fuzz_corpus *corpus;
} sml_fuzz_mutator;

void sml_fuzz_mutator_init(sml_fuzz_mutator *m, uint64_t seed, const char *const *dict,
                           const sml_fuzz_corpus *corpus);
/* A corpus entry with 1 to 8 mutations stacked, into buf (at most cap bytes); its length. */
size_t sml_fuzz_mutate(sml_fuzz_mutator *m, uint8_t *buf, size_t cap);

#endif
