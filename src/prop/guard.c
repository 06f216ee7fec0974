/* guard.c: the guard-zone table (guard.h) and its description of a fault, without stdio
 * (it runs in a signal handler). */
#include "prop/guard.h"

#include <stdatomic.h>
#include <string.h>

typedef struct zone {
    char name[8];
    uintptr_t lo, start, end, hi;
} zone;

/* Each engine thread has its own table: a worker runs several jobs at once, each on its own
 * thread, and a fault's handler runs in the thread that faulted. */
static _Thread_local zone zones[SML_PROP_GUARD_ZONES];
static _Thread_local atomic_int nzones;
static atomic_int enabled;

void sml_prop_guard_enable(void) { atomic_store(&enabled, 1); }

void sml_prop_guard_set(int i, const char *name, const void *lo, const void *start, const void *end,
                        const void *hi) {
    if (!atomic_load(&enabled) || i < 0 || i >= SML_PROP_GUARD_ZONES) return;
    zone z = {{0}, (uintptr_t)lo, (uintptr_t)start, (uintptr_t)end, (uintptr_t)hi};
    strncpy(z.name, name, sizeof z.name - 1);
    zones[i] = z;
    if (atomic_load(&nzones) <= i) atomic_store(&nzones, i + 1);
}

void sml_prop_guard_clear(void) {
    if (atomic_load(&enabled)) atomic_store(&nzones, 0);
}

static size_t put(char *buf, size_t at, size_t n, const char *s) {
    while (*s && at + 1 < n) buf[at++] = *s++;
    if (at < n) buf[at] = 0;
    return at;
}

static size_t put_u(char *buf, size_t at, size_t n, uint64_t v) {
    char d[24];
    int k = 0;
    do d[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 23);
    char s[24];
    for (int i = 0; i < k; i++) s[i] = d[k - 1 - i];
    s[k] = 0;
    return put(buf, at, n, s);
}

int sml_prop_guard_describe(const void *addr, int write, char *buf, size_t n) {
    uintptr_t a = (uintptr_t)addr;
    int nz = atomic_load(&nzones), best = -1;
    uintptr_t dist = 0;
    /* A fault between two tensors is charged to the nearer one. */
    for (int i = 0; i < nz; i++) {
        const zone *z = &zones[i];
        int after = a >= z->end && a < z->hi, before = a >= z->lo && a < z->start;
        if (!after && !before) continue;
        uintptr_t d = after ? a - z->end : z->start - a;
        if (best < 0 || d < dist) best = i, dist = d;
    }
    if (best >= 0) {
        const zone *z = &zones[best];
        int after = a >= z->end;
        size_t at = put(buf, 0, n,
                        write == 1   ? "wrote "
                        : write == 0 ? "read "
                                     : "touched memory ");
        at = put(buf, at, n, after ? "past the end of " : "before the start of ");
        at = put(buf, at, n, z->name);
        at = put(buf, at, n, " by ");
        at = put_u(buf, at, n, after ? a - z->end : z->start - a);
        put(buf, at, n, " bytes");
        return 1;
    }
    return 0;
}
