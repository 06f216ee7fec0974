/* registry.c: the one table of every kernel softmax-lab ships. Every test, the property
 * suite and the benchmark iterate it, so a new kernel is one file plus one line here.
 * tests/unit/test_registry.c fails if a file in kernels/ has no line here. */
#include <string.h>

#include "kernels/launchers.h"
#include "softmax_lab.h"

#ifdef SML_HAVE_CUDA
#define GPU(fn) fn
#else
#define GPU(fn) NULL
#endif
#ifdef SML_HAVE_CUDNN
#define CUDNN(fn) fn
#else
#define CUDNN(fn) NULL
#endif

#define NO_CLAIM {NULL, 0.0, NULL}
#define NO_DEVIATION NULL /* the known_deviation of every kernel this project controls */

static const sml_kernel REGISTRY[] = {
    {"cpu_naive", "src/cpu_softmax.c", SML_DEVICE_CPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     sml_launch_cpu_naive, "CPU, fp32: max, sum of exp, divide in three passes (pairwise sums)",
     NO_CLAIM, NO_DEVIATION},
    {"cpu_online", "src/cpu_softmax.c", SML_DEVICE_CPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     sml_launch_cpu_online, "CPU, fp32: one pass with a running max and rescaled sum, then output",
     NO_CLAIM, NO_DEVIATION},
    {"naive", "kernels/softmax_naive.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     GPU(sml_launch_gpu_naive), "unfused: separate max, exp, sum and divide launches (slow baseline)",
     NO_CLAIM, NO_DEVIATION},
    {"warp", "kernels/softmax_warp.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 1024,
     GPU(sml_launch_warp), "one warp (or a 1..16-lane group) per row, row in registers, 16-byte loads",
     {"naive", 2.0, "short"}, NO_DEVIATION},
    {"block", "kernels/softmax_block.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 16384,
     GPU(sml_launch_block), "one block per row, row in registers, global memory read once",
     {"naive", 2.0, "mid"}, NO_DEVIATION},
    {"online", "kernels/softmax_online.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     GPU(sml_launch_online), "online max/sum over tiles, one block per row: any length, two reads",
     {"naive", 1.5, "long"}, NO_DEVIATION},
    {"split", "kernels/softmax_split.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     GPU(sml_launch_split), "a row over a cluster of 1..16 blocks, slices in shared memory, DSMEM merge",
     {"cudnn", 1.2, "long"}, NO_DEVIATION},
    {"coop", "kernels/softmax_coop.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     GPU(sml_launch_coop), "a row over any number of blocks of a cooperative grid, slices in shared memory, partials via L2",
     {"cudnn", 1.2, "long"}, NO_DEVIATION},
    {"cudnn", "kernels/softmax_cudnn.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     CUDNN(sml_launch_cudnn), "cuDNN cudnnSoftmaxForward/Backward, ACCURATE/LOG, MODE_INSTANCE (dense rows only)",
     NO_CLAIM,
     "fp16/bf16 not correctly rounded (<=1.47 ulp); all -inf row gives 0 / -inf, not NaN; log_softmax not bitwise shift-invariant (H100, cuDNN 9.14)"},
    {"auto", "kernels/softmax_auto.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     GPU(sml_launch_auto), "warp to 128 cols (16-bit 256; fwd to 256 / 512 when rows <= 64 x SMs); block to 16384; coop bwd rows of 2 MiB+ (16-bit: not on >= 15 DRAM B/SM-clock GPUs); then split",
     /* 1.0, not 1.2: on fp32 forward 32768x512 and 4096x8192 cuDNN already runs at 0.9 of
        the copy rate on an H200, so 1.2x there would exceed the copy bandwidth. */
     {"cudnn", 1.0, "all"}, NO_DEVIATION},
};

size_t sml_kernel_count(void) { return sizeof REGISTRY / sizeof REGISTRY[0]; }

const sml_kernel *sml_kernel_at(size_t i) {
    return i < sml_kernel_count() ? &REGISTRY[i] : NULL;
}

const sml_kernel *sml_kernel_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sml_kernel_count(); i++)
        if (strcmp(REGISTRY[i].name, name) == 0) return &REGISTRY[i];
    return NULL;
}
