/* vector_width.h: whether a problem's rows can move in 16-byte vectors, in plain C so that
 * `auto`'s decision (kernels/auto_choice.c) and the kernels (common.cuh) read the same rule. */
#ifndef SML_KERNELS_VECTOR_WIDTH_H
#define SML_KERNELS_VECTOR_WIDTH_H

#include <stdint.h>

#include "softmax_lab.h"

/* Whether a row stride of ld elements keeps every row 16-byte aligned (given an aligned base). */
static inline int sml_stride_takes_vectors(int64_t ld, sml_dtype dt) {
    return ((uint64_t)ld * sml_dtype_size(dt)) % 16u == 0;
}

/* Elements per 16-byte vector when every pointer of the problem and the row stride allow
 * it, else 1 (scalar loads: misaligned base pointers and odd strides are not errors). */
static inline int sml_vec_elems(const sml_problem *p) {
    uintptr_t bits = (uintptr_t)p->x | (uintptr_t)p->out;
    if (sml_op_is_backward(p->op)) bits |= (uintptr_t)p->dy;
    if ((bits & 15u) != 0 || !sml_stride_takes_vectors(p->ld, p->dtype)) return 1;
    return (int)(16 / sml_dtype_size(p->dtype));
}

#endif
