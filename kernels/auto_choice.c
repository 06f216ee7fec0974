/* auto_choice.c: which kernel `auto` runs. The decision is sml_auto_pick
 * (kernels/auto_dispatch.h); this asks the device for the facts it reads, only where it reads
 * them (each query costs the host per launch), for both the launcher (kernels/softmax_auto.cu)
 * and the public sml_auto_choice, so the two cannot disagree. */
#include "core/internal.h"
#include "kernels/auto_dispatch.h"
#include "kernels/vector_width.h"

sml_status sml_auto_decide(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int vectors,
                           sml_auto_path *out) {
    sml_gpu_facts g = {0, 0, 0, 0, 0, 0.0f};
    if (sml_auto_needs_sms(op, dt, cols) || sml_auto_needs_clusters(op, dt, cols, vectors)) {
        const sml_status s = sml_gpu_facts_get(h, &g);
        if (s != SML_OK) return s;
    }
    *out = sml_auto_pick(op, dt, rows, cols, vectors, g.sms, g.clusters, g.dram);
    return SML_OK;
}

sml_status sml_auto_choice(sml_handle *h, sml_op op, sml_dtype dtype, int64_t rows, int64_t cols,
                           const char **kernel) {
    if (!kernel) return SML_ERR_NULL_POINTER;
    *kernel = NULL;
    sml_status s = sml_validate_kind(op, dtype, rows, cols);
    if (s != SML_OK) return s;
    sml_auto_path a;
    /* Dense rows (row stride = cols) at allocator-aligned pointers. */
    s = sml_auto_decide(h, op, dtype, rows, cols, sml_stride_takes_vectors(cols, dtype), &a);
    if (s != SML_OK) return sml_gpu_available() ? s : SML_ERR_NO_DEVICE; /* not a CUDA error */
    *kernel = sml_auto_path_name(a);
    return SML_OK;
}

size_t sml_auto_col_thresholds(int64_t *out, size_t cap) {
    for (int i = 0; i < SML_AUTO_N_COL_THRESHOLDS && (size_t)i < cap; i++) out[i] = sml_auto_col_threshold(i);
    return SML_AUTO_N_COL_THRESHOLDS;
}
