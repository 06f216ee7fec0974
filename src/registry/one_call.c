/* one_call.c: the four one-call functions of the public API (sml_softmax_forward and its
 * kin): each runs the registry's `auto` kernel on one problem, so they sit above the
 * registry, not in the core below it. */
#include "core/internal.h"
#include "softmax_lab.h"

static sml_status run_auto(sml_handle *h, sml_op op, const void *x, const void *dy, void *out,
                           int64_t rows, int64_t cols, int64_t ld, sml_dtype dtype, void *stream) {
    sml_problem p = {op, dtype, rows, cols, ld, x, dy, out, stream};
    return sml_run(sml_kernel_find("auto"), h, &p);
}

sml_status sml_softmax_forward(sml_handle *h, const void *x, void *y, int64_t rows, int64_t cols,
                               int64_t ld, sml_dtype dtype, void *stream) {
    return run_auto(h, SML_SOFTMAX, x, NULL, y, rows, cols, ld, dtype, stream);
}

sml_status sml_log_softmax_forward(sml_handle *h, const void *x, void *y, int64_t rows,
                                   int64_t cols, int64_t ld, sml_dtype dtype, void *stream) {
    return run_auto(h, SML_LOG_SOFTMAX, x, NULL, y, rows, cols, ld, dtype, stream);
}

sml_status sml_softmax_backward(sml_handle *h, const void *y, const void *dy, void *dx,
                                int64_t rows, int64_t cols, int64_t ld, sml_dtype dtype,
                                void *stream) {
    return run_auto(h, SML_SOFTMAX_BWD, y, dy, dx, rows, cols, ld, dtype, stream);
}

sml_status sml_log_softmax_backward(sml_handle *h, const void *y, const void *dy, void *dx,
                                    int64_t rows, int64_t cols, int64_t ld, sml_dtype dtype,
                                    void *stream) {
    return run_auto(h, SML_LOG_SOFTMAX_BWD, y, dy, dx, rows, cols, ld, dtype, stream);
}
