/* gen.h: the generators. A case is a pure function of (kernel limits, op, dtype, case seed,
 * level, sizes), so `--seed S --case I --level L` redraws exactly the case that failed. */
#ifndef SML_PROP_GEN_H
#define SML_PROP_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "prop/case.h"
#include "prop/prop.h"
#include "core/rng.h"

/* Draw a case. level 0..100 is the size ramp's position. */
sml_status sml_prop_gen_case(const sml_kernel *k, sml_op op, sml_dtype dt, uint64_t case_seed,
                             int level, const sml_prop_sizes *sz, sml_prop_case *out);
/* The same case with its arrays (and the drawing's own scratch) in `pool`'s slots for drawn
 * cases (props.h), which keeps them for its next case instead of mapping a big case's memory
 * afresh: the case's `pooled` is set (sml_prop_case_free lets the arrays go without freeing
 * them), and it lives until the next case drawn from the pool. pool NULL: sml_prop_gen_case. */
sml_status sml_prop_gen_case_in(sml_prop_pool *pool, const sml_kernel *k, sml_op op, sml_dtype dt,
                                uint64_t case_seed, int level, const sml_prop_sizes *sz,
                                sml_prop_case *out);
/* The shape (rows, cols, ld, offset, in place) sml_prop_gen_case draws from the same
 * arguments, with nothing allocated or filled: for tests of the shapes' distribution. */
void sml_prop_gen_shape(const sml_kernel *k, sml_op op, sml_dtype dt, uint64_t case_seed, int level,
                        const sml_prop_sizes *sz, sml_prop_case *out);

/* Every column count the generators treat as an edge, for kernel k (NULL: all): the fixed
 * list in gen.c (vector widths, warp and block sizes, powers of two +-1, 2^20 + 3), every
 * registered kernel's max_cols +-1, and the dispatcher's thresholds +-1. Sorted, unique,
 * within k's [min_cols, max_cols]. Returns how many (at most cap written). */
size_t sml_prop_edge_cols(const sml_kernel *k, int64_t *out, size_t cap);

/* A row of n values of dtype dt, drawn by logit family `family` (or a random one when
 * family < 0) into dense doubles already rounded to dt; writes the family's name. Used by
 * the generator and by the CLI test's input writer. */
void sml_prop_gen_logits(sml_rng *r, sml_dtype dt, int family, double *row, int64_t n, char *name,
                         size_t name_n);

/* Number of logit families and the name of each. */
int sml_prop_family_count(void);
const char *sml_prop_family_name(int family);
/* The family named `name`, or -1 (NULL or unknown). */
int sml_prop_family_find(const char *name);

#endif
