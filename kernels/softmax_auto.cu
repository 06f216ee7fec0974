/* softmax_auto.cu: `auto`, what the convenience API runs. One visible decision,
 * sml_auto_pick in kernels/auto_dispatch.h (thresholds and their reasons are documented
 * there), then the chosen kernel's own launcher, which sizes itself from the shape:
 *   warp   cols <= 1,024: sub-warp groups for rows under one vector per lane, K chunks per lane
 *   block  up to 32 KB held per row (y and dy count twice): one block per row, K chunks per
 *          thread, <= 512 threads preferred
 *   split  longer rows: a cluster of 1..16 blocks per row sized so that rows x cluster fills
 *          the SMs; slices kept in shared memory
 *   online longer rows on devices without clusters.
 * Alignment needs no decision here: every path falls back to scalar accesses by itself. */
#include "kernels/auto_dispatch.h"
#include "kernels/common.cuh"
#include "kernels/launchers.h"

extern "C" sml_status sml_launch_auto(sml_handle *h, const sml_problem *p) {
    int dev = 0, clusters = 0;
    sml_status s = sml_cuda_ok(cudaGetDevice(&dev));
    if (s == SML_OK) s = sml_cuda_ok(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, dev));
    if (s != SML_OK) return s;
    switch (sml_auto_pick(p->op, p->dtype, p->cols, clusters)) {
    case SML_AUTO_WARP: return sml_launch_warp(h, p);
    case SML_AUTO_BLOCK: return sml_launch_block(h, p);
    case SML_AUTO_SPLIT: return sml_launch_split(h, p);
    case SML_AUTO_ONLINE: return sml_launch_online(h, p);
    }
    return SML_ERR_INTERNAL;
}
