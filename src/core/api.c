/* api.c: the checks every call passes before any kernel runs (so bad input writes nothing),
 * and the convenience API over the `auto` kernel. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"
#include "core/plan_cache.h"
#include "softmax_lab.h"

/* Bytes spanned by a [rows, cols] tensor with stride ld: (rows - 1) * ld + cols elements. */
static int span_bytes(const sml_problem *p, uint64_t *out) {
    uint64_t rows = (uint64_t)p->rows, ld = (uint64_t)p->ld, cols = (uint64_t)p->cols;
    uint64_t esz = sml_dtype_size(p->dtype);
    if (rows > 1 && ld > (UINT64_MAX / 2) / (rows - 1)) return 0;
    uint64_t elems = (rows - 1) * ld + cols;
    if (elems > (UINT64_MAX / 4) / esz) return 0;
    *out = elems * esz;
    return 1;
}

static int overlaps(const void *a, const void *b, uint64_t n) {
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + n && pb < pa + n;
}

sml_status sml_validate_kind(sml_op op, sml_dtype dt, int64_t rows, int64_t cols) {
    if ((unsigned)op >= SML_OP_COUNT) return SML_ERR_BAD_OP;
    if ((unsigned)dt >= SML_DTYPE_COUNT) return SML_ERR_BAD_DTYPE;
    if (rows < 0 || cols < 0) return SML_ERR_BAD_SHAPE;
    return SML_OK;
}

sml_status sml_validate(const sml_kernel *k, const sml_problem *p) {
    if (!k) return SML_ERR_UNKNOWN_KERNEL;
    if (!p) return SML_ERR_NULL_POINTER;
    const sml_status s = sml_validate_kind(p->op, p->dtype, p->rows, p->cols);
    if (s != SML_OK) return s;
    if (p->ld < p->cols) return SML_ERR_BAD_STRIDE;
    if (!(k->ops & (1u << p->op)) || !(k->dtypes & (1u << p->dtype))) return SML_ERR_UNSUPPORTED;
    /* An empty tensor is a successful no-op, whatever its pointers. */
    if (p->rows == 0 || p->cols == 0) return SML_OK;
    int bwd = sml_op_is_backward(p->op);
    if (!p->x || !p->out || (bwd && !p->dy)) return SML_ERR_NULL_POINTER;
    uint64_t span;
    if (!span_bytes(p, &span)) return SML_ERR_BAD_SHAPE;
    if (p->x != p->out && overlaps(p->x, p->out, span)) return SML_ERR_BAD_ALIAS;
    if (bwd && (p->x == p->out || overlaps(p->dy, p->out, span))) return SML_ERR_BAD_ALIAS;
    if (p->cols < k->min_cols || (k->max_cols > 0 && p->cols > k->max_cols))
        return SML_ERR_UNSUPPORTED;
    if (!k->launch) return SML_ERR_NO_DEVICE;
    if (k->device == SML_DEVICE_GPU && !sml_gpu_available()) return SML_ERR_NO_DEVICE;
    return SML_OK;
}

sml_status sml_run(const sml_kernel *k, sml_handle *h, const sml_problem *p) {
    sml_status s = sml_validate(k, p);
    if (s != SML_OK) return s;
    if (p->rows == 0 || p->cols == 0) return SML_OK;
    if (!h) return SML_ERR_NULL_POINTER;
    if (k->device == SML_DEVICE_GPU) sml_gpu_forget_error();
    sml_call_watch(k, p);
    return k->launch(h, p);
}

sml_status sml_handle_create(sml_handle **out) {
    if (!out) return SML_ERR_NULL_POINTER;
    *out = calloc(1, sizeof **out);
    return *out ? SML_OK : SML_ERR_OUT_OF_MEMORY;
}

void sml_handle_destroy(sml_handle *h) {
    if (!h) return;
    if (h->cudnn && h->cudnn_release) h->cudnn_release(h->cudnn);
    if (h->coop && h->coop_release) h->coop_release(h->coop);
    sml_plan_cache_free(h->plans);
    if (h->scratch) {
        sml_buffer b = {SML_DEVICE_GPU, h->scratch, h->scratch_bytes};
        sml_buffer_free(&b);
    }
    free(h);
}

sml_status sml_handle_scratch(sml_handle *h, size_t bytes, void **out) {
    if (!h || !out) return SML_ERR_NULL_POINTER;
    if (h->scratch_bytes < bytes) {
        if (h->scratch) {
            sml_buffer old = {SML_DEVICE_GPU, h->scratch, h->scratch_bytes};
            sml_buffer_free(&old);
            h->scratch = NULL;
            h->scratch_bytes = 0;
        }
        sml_buffer b;
        sml_status s = sml_buffer_alloc(&b, SML_DEVICE_GPU, bytes);
        if (s != SML_OK) return s;
        h->scratch = b.ptr;
        h->scratch_bytes = b.bytes;
    }
    *out = h->scratch;
    return SML_OK;
}
