/* sm_limits.h: what one Hopper SM holds at once, for the launchers that size persistent grids
 * without an occupancy query (a runtime call per launch that short rows cannot hide): `block`
 * (kernels/block_plan.h) and `warp`. Plain C, so the CPU tests of the plans see the same values. */
#ifndef SML_KERNELS_SM_LIMITS_H
#define SML_KERNELS_SM_LIMITS_H

#define SML_SM_THREADS 2048 /* resident threads per SM */
#define SML_SM_BLOCKS  32   /* resident blocks per SM */

#endif
