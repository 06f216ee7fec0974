/* accuracy_pair.h: the planted pair of the accuracy gate, test-only (never in the registry).
 * Two fp32-computing CPU forward softmax kernels with the same sums and the same division,
 * one with expf, one with a fast exp: exp2f of the fp32 product t * log2(e), the way
 * __expf computes on a GPU. The fast one stays inside the numerics contract (its error has
 * the shape of the contract's exp-argument term) but loses accuracy the accurate one has. */
#ifndef SML_TESTS_ACCURACY_PAIR_H
#define SML_TESTS_ACCURACY_PAIR_H

#include "softmax_lab.h"

extern const sml_kernel sml_acc_accurate_exp; /* "acc_expf" */
extern const sml_kernel sml_acc_fast_exp;     /* "acc_fast_exp" */
/* "acc_narrow_sum": expf, but the sum adds exp values cut to 16 significant bits, as a sum kept
 * in a narrower type would: inside the contract on rows of hundreds of columns and more
 * (where the contract's summation term is large), over it on short rows. For the ledger test,
 * whose N(0, 1) inputs keep the fast exp's loss under the rule's floor. */
extern const sml_kernel sml_acc_narrow_sum;
/* By name, for replaying a reproducer of either (sml_prop_lookup_fn), or NULL. */
const sml_kernel *sml_acc_pair_find(const char *name, void *unused);

#endif
