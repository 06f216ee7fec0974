/* softmax_auto.cu: `auto`, what the convenience API runs. One visible decision,
 * sml_auto_pick in kernels/auto_dispatch.h (the thresholds, per op and dtype, and the
 * measurements behind them are there), then the chosen kernel's own launcher, which sizes
 * itself from the shape:
 *   warp   short rows (and forward rows of up to 256 fp32 / 512 16-bit columns when every
 *          row gets a warp): sub-warp groups for rows under one vector per lane, K chunks per lane
 *   block  rows to 16,384 columns: one block per row, K chunks per thread (forward past
 *          1,024 columns: up to 16 per thread, one block per row in the grid)
 *   online long rows without clusters
 *   split  long rows: a cluster of 1..16 blocks per row sized so that rows x cluster fills
 *          the SMs; slices kept in shared memory.
 *   coop   long backward rows (y and dy of 2 MiB or more): slices over every block of a
 *          cooperative grid, partials exchanged through L2.
 * Alignment needs no decision here: every path falls back to scalar accesses by itself. */
#include "kernels/auto_dispatch.h"
#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/tuning.h"

/* The rows from `first` on, as a problem of their own. */
static sml_problem rows_from(const sml_problem *p, int64_t first) {
    sml_problem q = *p;
    const size_t off = (size_t)first * (size_t)p->ld * sml_dtype_size(p->dtype);
    q.rows = p->rows - first;
    q.x = (const char *)p->x + off;
    q.dy = p->dy ? (const char *)p->dy + off : NULL;
    q.out = (char *)p->out + off;
    return q;
}

extern "C" sml_status sml_split_tail_run(sml_handle *h, const sml_problem *p, int max_rounds) {
    int64_t plan[4];
    sml_status s = sml_split_plan(h, p, plan);
    if (s != SML_OK) return sml_launch_split(h, p); /* no cluster launch: split's own fallback */
    const int64_t tail = sml_auto_split_tail(p->rows, plan[3], max_rounds);
    if (tail == 0) return sml_launch_split(h, p);
    const int64_t head = p->rows - tail;
    if (head > 0) {
        sml_problem q = *p;
        q.rows = head;
        s = sml_launch_split(h, &q);
        if (s != SML_OK) return s;
    }
    const sml_problem t = rows_from(p, head);
    return sml_launch_coop(h, &t);
}

extern "C" sml_status sml_launch_auto(sml_handle *h, const sml_problem *p) {
    const int need_sms = sml_auto_needs_sms(p->op, p->dtype, p->cols), need_clusters = sml_auto_needs_clusters(p->cols);
    sml_gpu_facts g = {0, 0, 0, 0, 0};
    if (need_sms || need_clusters) {
        const sml_status s = sml_gpu_facts_get(h, &g);
        if (s != SML_OK) return s;
    }
    switch (sml_auto_pick(p->op, p->dtype, p->rows, p->cols, g.sms, g.clusters)) {
    case SML_AUTO_WARP: return sml_launch_warp(h, p);
    case SML_AUTO_BLOCK: return sml_launch_block(h, p);
    case SML_AUTO_SPLIT:
        return sml_op_is_backward(p->op) ? sml_launch_split(h, p) : sml_split_tail_run(h, p, SML_AUTO_TAIL_MAX_ROUNDS);
    case SML_AUTO_ONLINE: return sml_launch_online(h, p);
    case SML_AUTO_COOP: return sml_launch_coop(h, p);
    }
    return SML_ERR_INTERNAL;
}
