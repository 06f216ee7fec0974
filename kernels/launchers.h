/* launchers.h: the entry point of every kernel file, with C linkage so that the registry
 * (src/registry/registry.c, plain C) can list them. One line here per file in kernels/ and
 * src/cpu_*.c; each launcher receives a problem that sml_validate has already accepted. */
#ifndef SML_KERNELS_LAUNCHERS_H
#define SML_KERNELS_LAUNCHERS_H

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU backends, computed in fp32 like the GPU kernels (kernels/cpu_softmax.c). */
sml_status sml_launch_cpu_naive(sml_handle *h, const sml_problem *p);
sml_status sml_launch_cpu_online(sml_handle *h, const sml_problem *p);

/* GPU kernels, one file each in kernels/; only built when CUDA is found. */
sml_status sml_launch_gpu_naive(sml_handle *h, const sml_problem *p); /* softmax_naive.cu */
sml_status sml_launch_warp(sml_handle *h, const sml_problem *p);      /* softmax_warp.cu */
sml_status sml_launch_block(sml_handle *h, const sml_problem *p);     /* softmax_block.cu */
sml_status sml_launch_online(sml_handle *h, const sml_problem *p);    /* softmax_online.cu */
sml_status sml_launch_split(sml_handle *h, const sml_problem *p);     /* softmax_split.cu */
sml_status sml_launch_coop(sml_handle *h, const sml_problem *p);      /* softmax_coop.cu */
sml_status sml_launch_cudnn(sml_handle *h, const sml_problem *p);     /* softmax_cudnn.cu */
sml_status sml_launch_auto(sml_handle *h, const sml_problem *p);      /* softmax_auto.cu */

#ifdef __cplusplus
}
#endif
#endif
