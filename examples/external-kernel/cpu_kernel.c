/* cpu_kernel.c: a CPU softmax and log-softmax (fp32) as a softmax-lab plugin.
 *
 * Three passes per row: the max (skipping NaN), the sum of exp(x - max) as a pairwise tree
 * over leaves of 16 (the summation depth the numerics contract allows), then the output.
 * Rows may be updated in place: a row is read whole before it is written. */
#include <math.h>
#include <stdlib.h>

#include <softmax_lab_plugin.h>

#define LEAF 16

static float sum_tree(const float *v, int64_t n) {
    if (n <= LEAF) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += v[i];
        return s;
    }
    int64_t half = n / 2;
    return sum_tree(v, half) + sum_tree(v + half, n - half);
}

static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    int64_t n = p->cols;
    if (p->rows == 0 || n == 0) return SML_OK;
    float *e = malloc((size_t)n * sizeof *e);
    if (!e) return SML_ERR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < p->rows; r++) {
        const float *x = (const float *)p->x + r * p->ld;
        float *y = (float *)p->out + r * p->ld;
        float m = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            if (x[i] > m) m = x[i];
        /* NaN, +inf or an all -inf row make x - max NaN, and so the whole row. */
        for (int64_t i = 0; i < n; i++) e[i] = expf(x[i] - m);
        float d = sum_tree(e, n);
        if (p->op == SML_SOFTMAX) {
            for (int64_t i = 0; i < n; i++) y[i] = e[i] / d;
        } else {
            float l = logf(d);
            for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - l;
        }
    }
    free(e);
    return SML_OK;
}

static const sml_kernel KERNELS[] = {
    {"ext_cpu",
     "examples/external-kernel/cpu_kernel.c",
     SML_DEVICE_CPU,
     SML_OPS_FWD,
     1u << SML_F32,
     1,
     0,
     launch,
     "example plugin, CPU fp32: max, pairwise sum of exp, divide",
     {NULL, 0.0, NULL},
     NULL,
     0,
     NULL},
};

const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
