/* tuning.h: the kernels' explicit-configuration entry points. Each launcher in launchers.h
 * picks its own configuration from the shape and calls one of these; the tuning harness
 * (docs/KERNELS.md, "Versions") calls them directly to measure the alternatives. A value
 * <= 0 means "the launcher's own choice". A configuration that cannot hold the row returns
 * SML_ERR_UNSUPPORTED and launches nothing. */
#ifndef SML_KERNELS_TUNING_H
#define SML_KERNELS_TUNING_H

#include "core/plan_table.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* threads per block, K 16-byte chunks (or K elements when scalar) per thread, resident
 * blocks per SM the persistent grid is sized for. */
sml_status sml_block_run(sml_handle *h, const sml_problem *p, int threads, int K,
                         int blocks_per_sm);
/* K chunks per lane, R rows per lane group in flight, blocks per SM (a grid of
 * sms * blocks_per_sm blocks walks the rows). */
sml_status sml_warp_run(sml_handle *h, const sml_problem *p, int K, int R, int blocks_per_sm);
/* threads per block, blocks per SM of the persistent grid. */
sml_status sml_online_run(sml_handle *h, const sml_problem *p, int threads, int blocks_per_sm);
/* cluster size C (1..16), threads per block, blocks per SM whose shared memory a block's
 * cache is sized for (default one); *plan (may be NULL) receives C, threads, cached chunks per
 * block, active clusters, as chosen. */
sml_status sml_split_run(sml_handle *h, const sml_problem *p, int C, int threads, int blocks_per_sm,
                         int64_t plan[4]);
/* threads per block, copy stages per block (2..4), blocks per SM, slices per row; *plan (may
 * be NULL) receives slices, threads, elements per slice, grid size, as chosen. */
sml_status sml_coop_run(sml_handle *h, const sml_problem *p, int threads, int stages,
                        int blocks_per_sm, int64_t slices, int64_t plan[4]);

/* A plan table's plan (core/plan_table.h) through the entry point of its family above (C,
 * threads, ... as the plan gives them); SML_ERR_UNSUPPORTED, nothing launched, where the
 * family cannot run the plan for this problem. SML_ERR_NO_DEVICE in a build without CUDA. */
sml_status sml_plan_run(sml_handle *h, const sml_problem *p, const sml_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
