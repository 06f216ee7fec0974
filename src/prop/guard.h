/* guard.h: the inaccessible zones around the judged host buffers of the case being run, so
 * a worker's fault handler can say which buffer a fault passed the end (or the start) of
 * and by how many bytes. The table is the calling thread's (a fault's signal runs its
 * handler in the thread that faulted, and a worker runs one job per thread); exec.c sets it
 * for each run and clears it after. */
#ifndef SML_PROP_GUARD_H
#define SML_PROP_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define SML_PROP_GUARD_ZONES 3

/* Name zones from now on (a worker process calls it once; elsewhere the tables stay empty
 * and nothing is written to them). */
void sml_prop_guard_enable(void);
/* Zone i: tensor `name` ("x", "dy", "out") occupies [start, end); [lo, start) and [end, hi)
 * are guard (lo == start: no guard before it). */
void sml_prop_guard_set(int i, const char *name, const void *lo, const void *start, const void *end,
                        const void *hi);
void sml_prop_guard_clear(void);
/* Async-signal-safe: 1 and "wrote past the end of out by K bytes" (read/wrote/touched as
 * `write` is 0/1/-1) when addr is in a guard zone, else 0. */
int sml_prop_guard_describe(const void *addr, int write, char *buf, size_t n);

#endif
