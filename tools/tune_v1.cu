// tune_v1.cu: the kernels of commit 5a13f2a (build_tune.sh extracts them from git) in a namespace, so that one
// run times old and new side by side.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "softmax_lab.h"

namespace v1 {
#include "v1/common.cuh"
#include "v1/softmax_warp.cu"
#include "v1/softmax_block.cu"
#include "v1/softmax_online.cu"
#include "v1/softmax_split.cu"
#include "v1/softmax_auto.cu"
} // namespace v1

extern "C" sml_status v1_auto(sml_handle *h, const sml_problem *p) {
    return v1::v1_launch_auto(h, p);
}
extern "C" sml_status v1_warp(sml_handle *h, const sml_problem *p) {
    return v1::v1_launch_warp(h, p);
}
extern "C" sml_status v1_block(sml_handle *h, const sml_problem *p) {
    return v1::v1_launch_block(h, p);
}
extern "C" sml_status v1_online(sml_handle *h, const sml_problem *p) {
    return v1::v1_launch_online(h, p);
}
extern "C" sml_status v1_split(sml_handle *h, const sml_problem *p) {
    return v1::v1_launch_split(h, p);
}
