/* vector_width.h: whether a problem's rows can move in 16-byte vectors, in plain C so that
 * `auto`'s decision (src/auto_choice.c) and the kernels (common.cuh) read the same rule. */
#ifndef SML_KERNELS_VECTOR_WIDTH_H
#define SML_KERNELS_VECTOR_WIDTH_H

#include <stdint.h>

#include "softmax_lab.h"

/* Elements per 16-byte vector when every pointer of the problem and the row stride allow
 * it, else 1 (scalar loads: misaligned base pointers and odd strides are not errors). */
static inline int sml_vec_elems(const sml_problem *p) {
    size_t esz = sml_dtype_size(p->dtype);
    uintptr_t bits = (uintptr_t)p->x | (uintptr_t)p->out;
    if (sml_op_is_backward(p->op)) bits |= (uintptr_t)p->dy;
    if ((bits & 15u) != 0 || ((uint64_t)p->ld * esz) % 16u != 0) return 1;
    return (int)(16 / esz);
}

#endif
