/* softmax_auto.cu: `auto`, what the convenience API runs. One visible decision,
 * sml_auto_pick in kernels/auto_dispatch.h (the thresholds, per op and dtype, and the
 * measurements behind them are there), then the chosen kernel's own launcher, which sizes
 * itself from the shape:
 *   warp   short rows (and forward rows of up to 256 fp32 / 512 16-bit columns when every
 *          row gets a warp): sub-warp groups for rows under one vector per lane, K chunks per lane
 *   block  rows to 16,384 columns (fp32 forward and 16-bit backward: 32,768):
 *          one block per row, K chunks per thread (forward past 1,024 columns: up to 16 per
 *          thread, one block per row in the grid; backward from 8,192: 32 elements)
 *   online long rows without clusters
 *   split  long rows: a cluster of 1..16 blocks per row sized so that rows x cluster fills
 *          the SMs; slices kept in shared memory.
 *   coop   long backward rows (y and dy of 2 MiB or more; 16-bit ones stay with split on a
 *          GPU whose DRAM moves 15 or more bytes per SM clock): slices over every block of a
 *          cooperative grid, partials exchanged through L2.
 * The device facts the decision reads are asked for in kernels/auto_choice.c (sml_auto_decide),
 * which sml_auto_choice reports from as well (for dense rows at aligned pointers). Alignment
 * decides one thing only, the longest row `block` takes (a misaligned row is scalar there, and
 * a block holds 16,384 scalars); every path falls back to scalar accesses by itself.
 * Before the rules, the device's plan table, where it has one (docs/KERNELS.md, "Plan tables"). */
#include "kernels/auto_dispatch.h"
#include "kernels/launchers.h"
#include "kernels/tuning.h"
#include "kernels/vector_width.h"

extern "C" sml_status sml_launch_auto(sml_handle *h, const sml_problem *p) {
    /* The device's plan table first (kernels/auto_choice.c); a plan the kernel cannot run
     * launches nothing and leaves the shape to the rules. */
    const int vectors = sml_vec_elems(p) > 1;
    sml_plan plan;
    if (sml_auto_table_plan(h, p->op, p->dtype, p->rows, p->cols, vectors, &plan)) {
        const sml_status st = sml_plan_run(h, p, &plan);
        if (st != SML_ERR_UNSUPPORTED) return st;
    }
    sml_auto_path path;
    const sml_status s = sml_auto_decide(h, p->op, p->dtype, p->rows, p->cols, vectors, &path);
    if (s != SML_OK) return s;
    switch (path) {
    case SML_AUTO_WARP: return sml_launch_warp(h, p);
    case SML_AUTO_BLOCK: return sml_launch_block(h, p);
    case SML_AUTO_SPLIT: return sml_launch_split(h, p);
    case SML_AUTO_ONLINE: return sml_launch_online(h, p);
    case SML_AUTO_COOP: return sml_launch_coop(h, p);
    }
    return SML_ERR_INTERNAL;
}
