/* case.c: allocation, copies and the backward input derivation of a test case. */
#include "prop/case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "reference/reference.h"

int64_t sml_prop_case_elems(const sml_prop_case *c) { return c->rows * c->cols; }

sml_op sml_prop_forward_of(sml_op op) {
    return op == SML_LOG_SOFTMAX_BWD || op == SML_LOG_SOFTMAX ? SML_LOG_SOFTMAX : SML_SOFTMAX;
}

void *sml_prop_case_source(const sml_prop_case *c) {
    return sml_op_is_backward(c->op) ? c->logits : c->x;
}

int sml_prop_case_in_bounds(const sml_prop_case *c, char *why, size_t n) {
    const long long max = (long long)SML_PROP_MAX_ELEMS;
    if (c->rows < 1 || c->rows > max)
        return snprintf(why, n, "rows: %lld is not in [1, %lld]", (long long)c->rows, max), 0;
    if (c->cols < 1 || c->cols > max)
        return snprintf(why, n, "cols: %lld is not in [1, %lld]", (long long)c->cols, max), 0;
    if (c->offset < 0 || c->offset > SML_PROP_MAX_OFFSET)
        return snprintf(why, n, "offset: %lld is not in [0, %d]", (long long)c->offset,
                        SML_PROP_MAX_OFFSET),
               0;
    if (c->rows > max / c->cols)
        return snprintf(why, n, "rows x cols: %lld x %lld is more than %lld elements",
                        (long long)c->rows, (long long)c->cols, max),
               0;
    const long long span_max = (long long)SML_PROP_MAX_SPAN;
    if (c->ld < c->cols || c->ld > span_max)
        return snprintf(why, n, "ld: %lld is not in [cols, %lld] (cols %lld)", (long long)c->ld,
                        span_max, (long long)c->cols),
               0;
    /* offset + cols <= 2^31 + 4096 < span_max, and (rows - 1) x ld is compared by division, so
     * nothing here overflows. */
    if (c->rows > 1 && c->rows - 1 > (span_max - c->offset - c->cols) / c->ld)
        return snprintf(why, n, "ld: %lld rows at stride %lld span more than %lld elements",
                        (long long)c->rows, (long long)c->ld, span_max),
               0;
    return 1;
}

sml_status sml_prop_case_alloc(sml_prop_case *c) {
    size_t n = (size_t)(c->rows * c->cols) * sml_dtype_size(c->dtype);
    if (n == 0) n = 1;
    c->x = malloc(n);
    c->dy = NULL;
    c->logits = NULL;
    if (sml_op_is_backward(c->op)) {
        c->dy = malloc(n);
        c->logits = malloc(n);
    }
    if (!c->x || (sml_op_is_backward(c->op) && (!c->dy || !c->logits))) {
        sml_prop_case_free(c);
        return SML_ERR_OUT_OF_MEMORY;
    }
    return SML_OK;
}

void sml_prop_case_free(sml_prop_case *c) {
    if (!c) return;
    if (!c->pooled) {
        free(c->x);
        free(c->dy);
        free(c->logits);
    }
    c->x = c->dy = c->logits = NULL;
    c->pooled = 0;
}

sml_status sml_prop_case_copy(sml_prop_case *dst, const sml_prop_case *src) {
    *dst = *src;
    dst->x = dst->dy = dst->logits = NULL;
    dst->pooled = 0;
    sml_status s = sml_prop_case_alloc(dst);
    if (s != SML_OK) return s;
    size_t n = (size_t)(src->rows * src->cols) * sml_dtype_size(src->dtype);
    if (n) {
        memcpy(dst->x, src->x, n);
        if (src->dy && dst->dy) memcpy(dst->dy, src->dy, n);
        if (src->logits && dst->logits) memcpy(dst->logits, src->logits, n);
    }
    return SML_OK;
}

sml_status sml_prop_case_derive_y(sml_prop_case *c) {
    if (!sml_op_is_backward(c->op)) return SML_OK;
    int64_t n = c->rows * c->cols;
    if (n == 0) return SML_OK;
    double *y = malloc((size_t)n * sizeof *y);
    if (!y) return SML_ERR_OUT_OF_MEMORY;
    sml_status s = sml_ref_run(sml_prop_forward_of(c->op), c->dtype, c->rows, c->cols, c->cols,
                               c->logits, NULL, y);
    if (s == SML_OK) sml_store_n(c->dtype, c->x, 0, n, y);
    free(y);
    return s;
}

void sml_prop_case_shape_str(const sml_prop_case *c, char *buf, size_t n) {
    int k = snprintf(buf, n, "%lldx%lld", (long long)c->rows, (long long)c->cols);
    if (c->ld != c->cols && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " ld %lld", (long long)c->ld);
    if (c->offset && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " offset %lld", (long long)c->offset);
    if (c->inplace && k > 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, " in-place");
}
