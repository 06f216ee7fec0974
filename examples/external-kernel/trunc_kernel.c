/* trunc_kernel.c: an fp16 softmax that declares its deviation from the numerics contract, as a
 * softmax-lab plugin.
 *
 * The softmax is computed in double and its results are cut to fp16 (rounded toward zero)
 * instead of rounded to nearest: each output is up to, never quite, 1 ulp below the exact
 * value, where the contract allows half an ulp (plus the fp32 work's error). A kernel that
 * misses the contract in such a measured way says how in its table line's `deviation`, in
 * terms the checker enforces: here "softmax fp16 <= 1 ulp". softmax-lab then holds it to that
 * looser bound (a miss beyond it still fails, naming the declaration), prints the declaration
 * on the verdict line, and a gate with STRICT holds it to the contract itself, which it fails. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <softmax_lab_plugin.h>

static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The largest fp16 <= y, for y in [0, 1] (a probability), or NaN. */
static uint16_t truncate_to_half(double y) {
    if (isnan(y)) return 0x7E00;
    if (y <= 0.0) return 0;
    int e;
    (void)frexp(y, &e); /* y = f * 2^e, f in [0.5, 1): its exponent is e - 1 */
    if (e - 1 < -14) return (uint16_t)floor(ldexp(y, 24)); /* a subnormal */
    return (uint16_t)(((e - 1 + 15) << 10) | ((uint16_t)floor(ldexp(y, 10 - (e - 1))) & 0x3FF));
}

static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    int64_t n = p->cols;
    if (p->rows == 0 || n == 0) return SML_OK;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x) return SML_ERR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < p->rows; r++) {
        const uint16_t *in = (const uint16_t *)p->x + r * p->ld;
        uint16_t *out = (uint16_t *)p->out + r * p->ld;
        double m = -INFINITY, s = 0.0;
        for (int64_t i = 0; i < n; i++) { /* the whole row read first: in place works */
            x[i] = half_to_double(in[i]);
            if (x[i] > m) m = x[i];
        }
        /* A NaN, a +inf or an all -inf row is NaN everywhere (x - max is NaN somewhere). */
        for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
        for (int64_t i = 0; i < n; i++) out[i] = truncate_to_half(exp(x[i] - m) / s);
    }
    free(x);
    return SML_OK;
}

/* What it declares: softmax fp16 within 1 ulp of the exact value; nothing else. */
static const sml_deviation TRUNCATED = {.ulps = {[SML_SOFTMAX] = {[SML_F16] = 1.0}}};

static const sml_kernel KERNELS[] = {
    {"ext_trunc",
     "examples/external-kernel/trunc_kernel.c",
     SML_DEVICE_CPU,
     1u << SML_SOFTMAX,
     1u << SML_F16,
     1,
     0,
     launch,
     "example plugin, CPU fp16 softmax truncated to fp16 (a declared deviation)",
     {NULL, 0.0, NULL},
     "fp16 results truncated, not rounded to nearest",
     0,
     &TRUNCATED},
};

const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
