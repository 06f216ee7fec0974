/* auto_choice.c: which kernel `auto` runs. First the plan table of the device, where there is
 * one (core/plan_cache.h) and it has an entry for the shape; else the rules, sml_auto_pick
 * (kernels/auto_dispatch.h), for which this asks the device for the facts they read, only where
 * they read them (each query costs the host per launch). Both serve the launcher
 * (kernels/softmax_auto.cu) and the public sml_auto_choice, so the two cannot disagree. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/plan_cache.h"
#include "kernels/auto_dispatch.h"
#include "kernels/vector_width.h"

/* The table entry for the shape on the current device; tmp holds a table loaded for a NULL
 * handle (freed by the caller). Tables are measured on rows that take 16-byte vectors: other
 * rows keep the rules. */
static const sml_plan_entry *table_entry(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows,
                                         int64_t cols, int vectors, sml_plan_slot *tmp,
                                         const char **source) {
    if (source) *source = NULL;
    if (!vectors) return NULL;
    const int dev = sml_gpu_current();
    if (dev < 0) return NULL;
    const sml_plan_table *t = sml_plans_for(h, dev, tmp, source);
    return t ? sml_plan_table_find(t, op, dt, rows, cols) : NULL;
}

int sml_auto_table_plan(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                        int vectors, sml_plan *plan) {
    if (h) { /* a launch: the handle's table, nothing zeroed or freed per call */
        const sml_plan_entry *e = table_entry(h, op, dt, rows, cols, vectors, NULL, NULL);
        if (e) *plan = e->plan;
        return e != NULL;
    }
    sml_plan_slot tmp;
    memset(&tmp, 0, sizeof tmp);
    const sml_plan_entry *e = table_entry(NULL, op, dt, rows, cols, vectors, &tmp, NULL);
    if (e) *plan = e->plan;
    sml_plan_slot_free(&tmp);
    return e != NULL;
}

sml_status sml_auto_decide(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                           int vectors, sml_auto_path *out) {
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
    /* Dense rows (row stride = cols) at allocator-aligned pointers. */
    const int vectors = sml_stride_takes_vectors(cols, dtype);
    sml_plan plan;
    if (sml_auto_table_plan(h, op, dtype, rows, cols, vectors, &plan)) {
        *kernel = sml_plan_family_name(plan.family);
        return SML_OK;
    }
    sml_auto_path a;
    s = sml_auto_decide(h, op, dtype, rows, cols, vectors, &a);
    if (s != SML_OK) return sml_gpu_available() ? s : SML_ERR_NO_DEVICE; /* not a CUDA error */
    *kernel = sml_auto_path_name(a);
    return SML_OK;
}

size_t sml_auto_col_thresholds(int64_t *out, size_t cap) {
    for (int i = 0; i < SML_AUTO_N_COL_THRESHOLDS && (size_t)i < cap; i++)
        out[i] = sml_auto_col_threshold(i);
    return SML_AUTO_N_COL_THRESHOLDS;
}

sml_status sml_auto_explain(sml_handle *h, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                            char *buf, size_t n) {
    if (!buf || !n) return SML_ERR_NULL_POINTER;
    buf[0] = 0;
    sml_status s = sml_validate_kind(op, dt, rows, cols);
    if (s != SML_OK) return s;
    const int vectors = sml_stride_takes_vectors(cols, dt);
    sml_plan_slot tmp;
    memset(&tmp, 0, sizeof tmp);
    const char *source = NULL;
    const sml_plan_entry *e = table_entry(h, op, dt, rows, cols, vectors, &tmp, &source);
    if (e) {
        char d[160];
        snprintf(buf, n, "%s (plans %s, line %d)", sml_plan_describe(&e->plan, d, sizeof d), source,
                 e->line);
        sml_plan_slot_free(&tmp);
        return SML_OK;
    }
    sml_plan_slot_free(&tmp);
    sml_auto_path a;
    s = sml_auto_decide(h, op, dt, rows, cols, vectors, &a);
    if (s != SML_OK) return sml_gpu_available() ? s : SML_ERR_NO_DEVICE;
    snprintf(buf, n, "%s (rules)", sml_auto_path_name(a));
    return SML_OK;
}
