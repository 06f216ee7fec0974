/* arena.c: the guarded slots CPU kernels run in (arena.h). */
#define _GNU_SOURCE
#include "prop/arena.h"

#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

void sml_prop_arena_free(sml_prop_arena *a) {
    if (a->map) munmap(a->map, a->bytes);
    a->map = NULL;
    a->bytes = a->cap = 0;
    a->nslots = 0;
}

/* A mapping of 3 slots of cap bytes between guards: all inaccessible, then the slots opened. */
static sml_status arena_grow(sml_prop_arena *a, size_t cap) {
    sml_prop_arena_free(a);
    const int n = 3;
    size_t bytes = (size_t)n * cap + (size_t)(n + 1) * SML_PROP_ARENA_GUARD;
    void *m = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return SML_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < n; i++) {
        unsigned char *slot =
            (unsigned char *)m + SML_PROP_ARENA_GUARD + (size_t)i * (cap + SML_PROP_ARENA_GUARD);
        if (mprotect(slot, cap, PROT_READ | PROT_WRITE) != 0) {
            munmap(m, bytes);
            return SML_ERR_OUT_OF_MEMORY;
        }
    }
    a->map = m;
    a->bytes = bytes;
    a->cap = cap;
    a->nslots = n;
    return SML_OK;
}

unsigned char *sml_prop_arena_slot(const sml_prop_arena *a, int i) {
    return a->map + SML_PROP_ARENA_GUARD + (size_t)i * (a->cap + SML_PROP_ARENA_GUARD);
}

sml_status sml_prop_arena_place(sml_prop_arena *a, size_t region, int n, unsigned char **base) {
    if (n < 1 || n > 3) return SML_ERR_INVALID_ARG;
    size_t pg = page_size(), need = (region + pg - 1) / pg * pg;
    if (!a->map || a->cap < need) {
        sml_status s =
            arena_grow(a, need + need / 2 > need ? (need + need / 2 + pg - 1) / pg * pg : need);
        if (s != SML_OK) return s;
    }
    /* Regions are 256-byte multiples (exec.c), so the end placement keeps 256-byte alignment. */
    int at_end = (a->runs++ & 1u) == 0;
    for (int i = 0; i < n; i++) {
        unsigned char *slot = sml_prop_arena_slot(a, i);
        base[i] = at_end ? slot + a->cap - region : slot;
    }
    return SML_OK;
}
