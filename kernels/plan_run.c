/* plan_run.c: a plan of a plan table (core/plan_table.h) run through its family's
 * explicit-configuration entry point (kernels/tuning.h): what `auto` runs for a table's entry
 * and what `softmax-lab tune` times for each candidate, so the two are the same launch. */
#include "kernels/tuning.h"

sml_status sml_plan_run(sml_handle *h, const sml_problem *p, const sml_plan *plan) {
#ifdef SML_HAVE_CUDA
    switch (plan->family) {
    case SML_PLAN_WARP: return sml_warp_run(h, p, plan->K, plan->R, plan->blocks);
    case SML_PLAN_BLOCK: return sml_block_run(h, p, plan->threads, plan->K, plan->blocks);
    case SML_PLAN_SPLIT: return sml_split_run(h, p, plan->C, plan->threads, plan->blocks, NULL);
    case SML_PLAN_ONLINE: return sml_online_run(h, p, plan->threads, plan->blocks);
    case SML_PLAN_COOP:
        return sml_coop_run(h, p, plan->threads, plan->stages, plan->blocks, plan->slices, NULL);
    case SML_PLAN_FAMILY_COUNT: break;
    }
    return SML_ERR_INVALID_ARG;
#else
    (void)h;
    (void)p;
    (void)plan;
    return SML_ERR_NO_DEVICE;
#endif
}
