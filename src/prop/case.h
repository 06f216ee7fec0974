/* case.h: one test problem as data. A case is what the generator draws, what the shrinker
 * edits and what a reproducer stores: op, dtype, shape, layout, and the input values dense
 * (rows x cols, no padding) in the dtype, so every value is one the dtype can represent.
 * The layout (ld, offset, in place) is applied only when the case is run (exec.h). */
#ifndef SML_PROP_CASE_H
#define SML_PROP_CASE_H

#include <stdint.h>

#include "softmax_lab.h"

/* Where a tensor's rows lie: rows x cols elements, rows ld elements apart, the first offset
 * elements past an aligned allocation. What a case, a failure and a reproducer record of a
 * layout, as one value. */
typedef struct sml_layout {
    int64_t rows, cols;
    int64_t ld;     /* >= cols */
    int64_t offset; /* elements between an aligned allocation and the tensor's start */
} sml_layout;

typedef struct sml_prop_case {
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols;
    int64_t ld;      /* >= cols */
    int64_t offset;  /* elements between an aligned allocation and the tensor's start */
    int inplace;     /* forward only: out == x */
    uint64_t seed;   /* the case's own seed: properties draw their choices from it */
    void *x;         /* the kernel's x: logits (forward) or y (backward), dense */
    void *dy;        /* backward: the upstream gradient, dense; NULL for forward */
    void *logits;    /* backward: the logits y came from (y = rounded reference forward) */
    char family[64]; /* how the values were drawn, for reports */
    int tall;        /* drawn as a tall case (gen.c): counted in the run's result */
    int pooled;      /* x, dy and logits belong to a pool (gen.h, sml_prop_gen_case_in), which
                        keeps them for its next case: sml_prop_case_free lets them go, no more */
} sml_prop_case;

/* The bounds of every case the engine lays out and of every reproducer it reads: rows and
 * cols at least 1, ld at least cols, offset in [0, SML_PROP_MAX_OFFSET], the elements (rows x
 * cols, the values a case holds) at most SML_PROP_MAX_ELEMS, and ld and the laid-out span
 * (offset + (rows - 1) x ld + cols) at most SML_PROP_MAX_SPAN, so no size computed from them
 * overflows. The span may pass 2^31 elements: a row stride past 2^31 is the shape that shows
 * 32-bit element offsets (the mutation test's 2 x 8 at ld 2^32 + 8, 16 GiB of fp16). Such a
 * case lays out its whole span on the GPU and on the host; where memory is short it fails
 * with out-of-memory. */
#define SML_PROP_MAX_ELEMS  ((int64_t)1 << 31)
#define SML_PROP_MAX_SPAN   ((int64_t)1 << 33)
#define SML_PROP_MAX_OFFSET 4096
/* 1 when c is inside them; else 0 and why[n] names the first field that is not
 * ("ld: ..."). */
int sml_prop_case_in_bounds(const sml_prop_case *c, char *why, size_t n);

/* Allocate the arrays for c's op, dtype, rows and cols (contents undefined). */
sml_status sml_prop_case_alloc(sml_prop_case *c);
void sml_prop_case_free(sml_prop_case *c);
/* Deep copy (into arrays of its own, whatever src's are). */
sml_status sml_prop_case_copy(sml_prop_case *dst, const sml_prop_case *src);
/* Backward cases: y := the reference forward of logits, rounded to the dtype. Forward: no-op. */
sml_status sml_prop_case_derive_y(sml_prop_case *c);
/* The array the shrinker and generator edit: x (forward) or logits (backward). */
void *sml_prop_case_source(const sml_prop_case *c);
/* The forward op whose output a backward op's y is. */
sml_op sml_prop_forward_of(sml_op op);
int64_t sml_prop_case_elems(const sml_prop_case *c);
/* c's rows, cols, ld and offset. */
static inline sml_layout sml_prop_case_layout(const sml_prop_case *c) {
    sml_layout l = {c->rows, c->cols, c->ld, c->offset};
    return l;
}
/* "7x1000 ld 1003 +2 inplace" */
void sml_prop_case_shape_str(const sml_prop_case *c, char *buf, size_t n);

#endif
