/* acc_pair_gpu.h: the accuracy gate's planted GPU pair (acc_pair_gpu.cu), test-only. */
#ifndef SML_TESTS_ACC_PAIR_GPU_H
#define SML_TESTS_ACC_PAIR_GPU_H

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

sml_status sml_acc_gpu_launch_expf(sml_handle *h, const sml_problem *p);
sml_status sml_acc_gpu_launch_fast_exp(sml_handle *h, const sml_problem *p);

#ifdef __cplusplus
}
#endif
#endif
