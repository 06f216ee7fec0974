/* arena.h: where a CPU kernel's tensors live while it runs (exec.c). Each region of a case
 * (exec.h's layout: guard, offset, tensor, guard) goes into its own slot of one mapping, and
 * every slot sits between inaccessible zones of SML_PROP_ARENA_GUARD bytes:
 *
 *   [none | slot x | none | slot dy | none | slot out | none]
 *
 * On alternate runs a region sits at the end of its slot (the byte after its trailing
 * canaries is inaccessible) or at its start (the byte before its leading canaries is). A
 * kernel that reads or writes past the canaries, up to 2 MiB away, faults there instead of
 * reaching other memory; in a worker process the fault handler names the tensor and the
 * distance (guard.h). The mapping is kept and grown across runs. */
#ifndef SML_PROP_ARENA_H
#define SML_PROP_ARENA_H

#include <stddef.h>

#include "softmax_lab.h"

#define SML_PROP_ARENA_GUARD ((size_t)2 << 20)

typedef struct sml_prop_arena {
    unsigned char *map;
    size_t bytes; /* the whole mapping */
    size_t cap;   /* bytes of one slot (a multiple of the page size) */
    int nslots;
    unsigned runs; /* end or start placement alternates with it */
} sml_prop_arena;

/* Place n regions of `region` bytes (n <= 3): base[i] is region i's first byte. */
sml_status sml_prop_arena_place(sml_prop_arena *a, size_t region, int n, unsigned char **base);
/* Slot i's first byte (its size is a->cap). */
unsigned char *sml_prop_arena_slot(const sml_prop_arena *a, int i);
void sml_prop_arena_free(sml_prop_arena *a);

#endif
