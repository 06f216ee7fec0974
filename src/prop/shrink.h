/* shrink.h: reduce a failing case while it still fails the same property the same way:
 * fewer rows (down to 1), fewer columns (halving, then single columns), the plainest
 * layout, then simpler values (0, integers, smaller integers, fewer distinct values, fewer
 * special values). Dtype, op and kernel stay. Greedy to a fixed point, within a budget. */
#ifndef SML_PROP_SHRINK_H
#define SML_PROP_SHRINK_H

#include <stdint.h>

#include "prop/case.h"
#include "prop/props.h"

typedef struct sml_prop_shrink_stats {
    int64_t steps; /* accepted reductions */
    int64_t evals; /* property evaluations tried */
    int exhausted; /* stopped by the budget, not at a fixed point */
} sml_prop_shrink_stats;

/* `failing` fails property p with outcome `want` (FAIL or ERROR) and verdict `first`; out
 * gets the smallest case found (a deep copy, never `failing` itself) and last its verdict. */
sml_status sml_prop_shrink(sml_prop_env *env, sml_prop_id p, sml_prop_outcome want,
                           const sml_prop_case *failing, const sml_prop_verdict *first,
                           int64_t max_evals, double max_seconds, sml_prop_case *out,
                           sml_prop_verdict *last, sml_prop_shrink_stats *st);

/* A failure's shrunk shape and the shrinker's counts, from the case it ended with. */
void sml_prop_failure_shrunk(sml_prop_failure *f, const sml_prop_case *small,
                             const sml_prop_shrink_stats *st);

/* The same with another test of a candidate: it fills v (outcome and message) for property
 * p on case c; the worker layer's runs each candidate in a fresh worker process. */
typedef void (*sml_prop_shrink_test)(void *ctx, sml_prop_id p, const sml_prop_case *c,
                                     sml_prop_verdict *v);
sml_status sml_prop_shrink_by(sml_prop_shrink_test test, void *ctx, sml_prop_id p,
                              sml_prop_outcome want, const sml_prop_case *failing,
                              const sml_prop_verdict *first, int64_t max_evals, double max_seconds,
                              sml_prop_case *out, sml_prop_verdict *last,
                              sml_prop_shrink_stats *st);

#endif
