/* gpu_kernel.cu: a CUDA softmax and log-softmax (fp32, rows of up to 1,024 columns) as a
 * softmax-lab plugin: one warp per row, the row held in registers (32 values per lane), the
 * max and the sum reduced across the warp with shuffles. One read and one write of global
 * memory, so it claims twice the speed of softmax-lab's unfused `naive` kernel on short rows.
 *
 * Each lane reads and writes only its own columns, so rows may be updated in place. */
#include <math.h>

#include <cuda_runtime.h>
#include <softmax_lab_plugin.h>

#define MAX_COLS       1024
#define PER_LANE       (MAX_COLS / 32)
#define ROWS_PER_BLOCK 4

__global__ void ext_warp_kernel(const float *x, float *y, int64_t rows, int64_t cols, int64_t ld,
                                int log_out) {
    int64_t row = (int64_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float *xr = x + row * ld;
    float *yr = y + row * ld;
    float v[PER_LANE];
    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        int64_t c = lane + 32 * j;
        v[j] = c < cols ? xr[c] : -INFINITY;
        m = fmaxf(m, v[j]); /* skips NaN */
    }
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    /* NaN, +inf or an all -inf row make x - max NaN, and so the whole row. */
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < PER_LANE; j++)
        if (lane + 32 * j < cols) s += expf(v[j] - m);
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    float l = logf(s);
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        int64_t c = lane + 32 * j;
        if (c < cols) yr[c] = log_out ? (v[j] - m) - l : expf(v[j] - m) / s;
    }
}

static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->rows == 0) return SML_OK;
    int64_t blocks = (p->rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    if (blocks > 0x7fffffff) return SML_ERR_UNSUPPORTED;
    ext_warp_kernel<<<(unsigned)blocks, 32 * ROWS_PER_BLOCK, 0, (cudaStream_t)p->stream>>>(
        (const float *)p->x, (float *)p->out, p->rows, p->cols, p->ld, p->op == SML_LOG_SOFTMAX);
    return cudaGetLastError() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
}

static const sml_kernel KERNELS[] = {
    {"ext_warp",
     "examples/external-kernel/gpu_kernel.cu",
     SML_DEVICE_GPU,
     SML_OPS_FWD,
     1u << SML_F32,
     1,
     MAX_COLS,
     launch,
     "example plugin, CUDA fp32: one warp per row, row in registers, shuffle reductions",
     {"naive", 2.0, "short"},
     NULL,
     0,
     NULL},
};

extern "C" const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
