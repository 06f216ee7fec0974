/* cpu_softmax.h: the CPU backends' engine, for the library's insides (not the registry).
 * The registry runs SML_CPU_NAIVE and SML_CPU_ONLINE as `cpu_naive` and `cpu_online`; the
 * property engine's self-test runs the planted mutant to prove it catches a real bug. */
#ifndef SML_CPU_SOFTMAX_H
#define SML_CPU_SOFTMAX_H

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sml_cpu_variant {
    SML_CPU_NAIVE = 0,     /* max, sum of exp, divide; pairwise sums */
    SML_CPU_ONLINE,        /* running max and rescaled sum, merged as a tree */
    SML_CPU_MUTANT_NO_MAX, /* planted bug: forward ops skip the max subtraction, so exp
                              overflows for logits above ~88.7 (backward ops as naive) */
    SML_CPU_VARIANT_COUNT
} sml_cpu_variant;

/* Run problem p (host pointers, already validated) with variant v, in fp32 with fp32
 * accumulation, outputs rounded to nearest-even into p->dtype. */
sml_status sml_cpu_softmax(sml_cpu_variant v, const sml_problem *p);

/* The class of a backward op's sum of the n terms v, which does not depend on the order
 * (docs/NUMERICS.md section 2): 1 with *cls NaN (a NaN term, or both infinities) or the
 * infinity that appears, 0 when every term is finite and their sum decides. */
int sml_cpu_sum_class(const float *v, int64_t n, float *cls);

/* A launch function for the mutant, to put in an sml_kernel outside the registry. */
sml_status sml_launch_cpu_mutant_no_max(sml_handle *h, const sml_problem *p);

#ifdef __cplusplus
}
#endif
#endif
