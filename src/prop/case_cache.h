/* case_cache.h: one drawn case and its reference, shared by every kernel a suite judges on it.
 *
 * A case is a function of its op, dtype, seed, size level, the profile's sizes and the judged
 * kernel's column limits (gen.c): kernels whose limits agree draw the same case at the same
 * index, and its double-precision inputs, exponentials, reference and row facts (props.c) are
 * the same bits whoever computes them. For a big case those are most of the host's work on it,
 * so the first job to reach such a case draws it and computes them, and the jobs of the other
 * kernels take them from here, read-only. Nothing judged changes: the values are the ones each
 * job would have computed for itself, and a job that finds no room here computes its own.
 *
 * The suite runs kernel after kernel (a GPU's contexts of separate processes take turns), so
 * an entry waits for the jobs of the kernels after the one that drew it: it stays until every
 * job announced for its kind of case has taken it (it is spent: the next case drawn reuses its
 * buffers), or to the end of the run. A case that does not fit the budget beside the entries
 * still wanted is not shared. A job that asks for a case another job is still drawing (two
 * kernels' jobs overlap where one kernel ends and the next begins) waits for it. */
#ifndef SML_PROP_CASE_CACHE_H
#define SML_PROP_CASE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "prop/case.h"
#include "prop/prop.h"
#include "reference/check.h"

/* Cases of at least this many elements are shared; smaller ones cost less to draw and
 * reference than to look up. */
#define SML_PROP_SHARE_MIN_ELEMS ((int64_t)1 << 18)

/* What identifies a drawn case (gen.c draws from nothing else). */
typedef struct sml_prop_case_key {
    int op, dtype, level;
    uint64_t seed;
    int64_t min_cols, max_cols; /* the kernel's declared limits */
    sml_prop_sizes sizes;
} sml_prop_case_key;

/* A case's arrays in double precision, as props.c's evaluation computes them: x and dy
 * widened, each row's exponentials (NULL for softmax_bwd), the reference and the row facts. */
typedef struct sml_prop_derived {
    double *xd, *dyd, *ex, *want;
    sml_row_facts *facts;
} sml_prop_derived;

/* The key of case `seed` at `level` for kernel k's job of op and dtype with these sizes. */
sml_prop_case_key sml_prop_case_key_of(const sml_kernel *k, sml_op op, sml_dtype dt,
                                       const sml_prop_sizes *sizes, uint64_t seed, int level);

typedef struct sml_prop_case_cache sml_prop_case_cache;

/* A cache that may hold up to `budget` bytes; NULL without memory. */
sml_prop_case_cache *sml_prop_case_cache_new(size_t budget);
void sml_prop_case_cache_free(sml_prop_case_cache *cc);
/* One more job will draw cases of this key's kind (its seed and level aside): once as many
 * jobs as were announced have taken a case, its entry is spent, and the next case drawn
 * reuses its buffers first; a kind announced for one job is not shared. Before any acquire;
 * 0 without memory. */
int sml_prop_case_cache_expect(sml_prop_case_cache *cc, const sml_prop_case_key *kind);

typedef struct sml_prop_case_entry sml_prop_case_entry;

typedef enum sml_prop_share_role {
    SML_PROP_SHARE_NONE = 0, /* no room: the caller draws and computes its own */
    SML_PROP_SHARE_READY,    /* the case and its arrays are there to read */
    SML_PROP_SHARE_MINE      /* the caller draws and computes them, then publishes */
} sml_prop_share_role;

/* The entry for key, held by the caller until sml_prop_case_cache_release: READY (waiting
 * for another job that is computing it), or MINE (a new entry, `bytes` of the budget taken
 * for it), or NONE (*out NULL: it does not fit, or fewer than two jobs were announced for its
 * kind, so no other would take it). */
sml_prop_share_role sml_prop_case_cache_acquire(sml_prop_case_cache *cc,
                                                const sml_prop_case_key *key, size_t bytes,
                                                sml_prop_case_entry **out);
/* The entry's case and arrays (READY, or MINE once filled). */
sml_prop_case *sml_prop_case_entry_case(sml_prop_case_entry *en);
sml_prop_derived *sml_prop_case_entry_derived(sml_prop_case_entry *en);
/* MINE: the host buffers the case and its arrays go to (gen.h's and sml_prop_derive's pool);
 * they are kept from case to case as the entry is made over. */
sml_prop_pool *sml_prop_case_entry_pool(sml_prop_case_entry *en);
/* MINE: the case and arrays are filled (ok 1: waiting jobs read them), or could not be (ok 0:
 * the entry is dropped, the caller's hold with it, and every job computes its own). */
void sml_prop_case_cache_publish(sml_prop_case_cache *cc, sml_prop_case_entry *en, int ok);
/* The caller is done with the entry's case. */
void sml_prop_case_cache_release(sml_prop_case_cache *cc, sml_prop_case_entry *en);

/* The bytes a case of this op, dtype and shape takes with its arrays (an entry's room). */
size_t sml_prop_case_share_bytes(const sml_prop_case *shape);

#endif
