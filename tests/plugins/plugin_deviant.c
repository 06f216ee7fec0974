/* plugin_deviant.c: test plugins that miss the numerics contract on purpose, to show what a
 * declared deviation (sml_deviation, softmax_lab.h) excuses and what it does not. One source,
 * several libraries (tests/plugins/CMakeLists.txt), by -D defines:
 *
 *   -DDEV_GARBAGE     kernel writing 0.5 into every output (fp32 softmax): garbage, whatever
 *                     it declares
 *   -DDEV_HALF_OFF    a 16-bit softmax (fp16) one ulp below a correct one on about 40% of its
 *                     outputs, never more than 1.4 ulp from the exact value (below)
 *   -DDEV_SHIFTVAR=F  an fp32 log_softmax whose bits depend on the row's first logit: the
 *                     correctly rounded result where floor(x_0) is even, else (F = 1) the fp32
 *                     value below it, under 3 ulp from the exact value, or (F > 1) that
 *                     result times 1 + F 2^-23, far off; so integer logits shifted by an odd
 *                     integer change its output bits
 *   -DDEV_NEGINF      an fp32 softmax in double, right but for a row of -inf logits: 0 there,
 *                     not NaN (as cuDNN gives)
 *   -DDEV_ROWBITS=F   an fp32 softmax in double whose bits depend on the output row's address:
 *                     where (address / 4) is odd, each finite output is moved by F 2^-23 of
 *                     itself (F = 1: about an ulp; F = 4096: far off), so the same row at
 *                     another place in the batch gives other bits (as torch's backward does
 *                     past 1,024 columns)
 *   -DDEV_ULPS=U      declares its op <= U ulp for its dtype (sml_kernel.deviation)
 *   -DDEV_EXC=B       declares the exceptions B (SML_DEV_* bits: 1 all -inf rows, 2 shift bits)
 *   -DDEV_ABI2        built as a plugin of ABI version 2 was: no `deviation` field at all, so
 *                     its known_deviation label (below) is all it says, and excuses nothing
 *   -DDEV_NAME="..."  the kernel's name
 *
 * The 16-bit kernel: y, the softmax in double with the contract's special values (NaN rows for
 * a NaN, a +inf or all -inf; exactly 0 at a -inf), is cut to F, the largest fp16 <= y. Where y
 * is within 0.4 ulp above F it writes the fp16 value below F instead (1 to 1.4 ulp from y:
 * outside the contract's 0.5 ulp + compute bound), else F (up to 1 ulp below y, within the
 * contract from 0.4 up to about 0.5 ulp). Both choices grow with y, so the kernel is monotonic,
 * and the same logits shifted give the same y, so it is shift-invariant: only its values are
 * off, by at most 1.4 ulp of the output at the exact value, the figure the test asserts.
 *
 * It includes only the public headers and links nothing of softmax-lab, as a user's plugin. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "softmax_lab_plugin.h"

#ifndef DEV_NAME
#define DEV_NAME "deviant"
#endif
/* The known_deviation labels: words for people, which excuse nothing. */
#ifdef DEV_GARBAGE
#define DEV_LABEL "fp32 results not correctly rounded (<= 2 ulp)"
#elif defined(DEV_SHIFTVAR)
#define DEV_LABEL "log_softmax bits depend on the logits' parity"
#elif defined(DEV_NEGINF)
#define DEV_LABEL "all -inf rows give 0"
#elif defined(DEV_ROWBITS)
#define DEV_LABEL "a row's bits depend on its address"
#else
#define DEV_LABEL "fp16 softmax one ulp below a correct one on some outputs"
#endif

#if !defined(DEV_GARBAGE) && !defined(DEV_SHIFTVAR) && !defined(DEV_NEGINF) && !defined(DEV_ROWBITS)
/* IEEE half <-> double, exact for every half; the rounding of double to half is to nearest
 * even. */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t double_to_half(double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d)) return 0x7E00;
    if (a >= 65520.0) return sign | 0x7C00; /* rounds to inf */
    int e;
    (void)frexp(a, &e);                     /* a = f * 2^e, f in [0.5, 1) */
    int q = e - 1 < -14 ? -24 : e - 1 - 10; /* the exponent of the ulp at a */
    double n = nearbyint(ldexp(a, -q));     /* ties to even in the default rounding mode */
    double r = ldexp(n, q);
    /* the bits: r is a half */
    if (r == 0) return sign;
    (void)frexp(r, &e);
    if (e - 1 < -14) return sign | (uint16_t)ldexp(r, 24);
    return sign | (uint16_t)((e - 1 + 15) << 10) | ((uint16_t)ldexp(r, 10 - (e - 1)) & 0x3FF);
}

/* The output for an exact probability y >= 0 (see the header). */
static uint16_t off_by_up_to_1_4_ulp(double y) {
    uint16_t f = double_to_half(y);
    if (half_to_double(f) > y) f--; /* the largest half <= y (positive halves order as ints) */
    double F = half_to_double(f);
    if (F == 0.0) return f;
    int e;
    (void)frexp(y, &e);
    double ulp = e - 1 < -14 ? ldexp(1.0, -24) : ldexp(1.0, e - 1 - 10);
    return (y - F) <= 0.4 * ulp ? (uint16_t)(f - 1) : f;
}

static void softmax_row(const double *x, double *y, int64_t n) {
    double m = -INFINITY;
    int nan = 0;
    for (int64_t i = 0; i < n; i++) {
        nan |= isnan(x[i]) || x[i] == INFINITY;
        if (x[i] > m) m = x[i];
    }
    if (nan || m == -INFINITY) {
        for (int64_t i = 0; i < n; i++) y[i] = NAN;
        return;
    }
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += y[i] = exp(x[i] - m);
    for (int64_t i = 0; i < n; i++) y[i] /= s;
}
#endif

#if defined(DEV_NEGINF) || defined(DEV_ROWBITS) || defined(DEV_SHIFTVAR)
/* One fp32 row's output from its logits x[0..n) (widened), their max m and s, the sum of
 * exp(x - m). A NaN, a +inf or an all -inf row makes s NaN (x - max is NaN somewhere). */
#if defined(DEV_NEGINF)
#define F32_OP SML_SOFTMAX
static void finish_row(const double *x, int64_t n, double m, double s, float *out) {
    int all_ninf = 1;
    for (int64_t i = 0; i < n; i++) all_ninf &= x[i] == -INFINITY;
    for (int64_t i = 0; i < n; i++) out[i] = all_ninf ? 0.0f : (float)(exp(x[i] - m) / s);
}
#elif defined(DEV_ROWBITS)
#define F32_OP SML_SOFTMAX
static void finish_row(const double *x, int64_t n, double m, double s, float *out) {
    int odd = ((uintptr_t)out / sizeof(float)) & 1u;
    for (int64_t i = 0; i < n; i++) {
        float y = (float)(exp(x[i] - m) / s);
        out[i] = odd && isfinite(y) ? y * (1.0f + (float)(DEV_ROWBITS)*0x1p-23f) : y;
    }
}
#else
#define F32_OP SML_LOG_SOFTMAX
static void finish_row(const double *x, int64_t n, double m, double s, float *out) {
    double l = log(s), f0 = floor(x[0]);
    int odd = isfinite(f0) && fmod(fabs(f0), 2.0) == 1.0;
    for (int64_t i = 0; i < n; i++) {
        float y = (float)((x[i] - m) - l);
        if (odd && isfinite(y))
            y = DEV_SHIFTVAR == 1 ? nextafterf(y, -INFINITY)
                                  : y * (1.0f + (float)(DEV_SHIFTVAR)*0x1p-23f);
        out[i] = y;
    }
}
#endif

/* F32_OP in fp32 only, row by row through finish_row. */
static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->op != F32_OP || p->dtype != SML_F32) return SML_ERR_UNSUPPORTED;
    int64_t n = p->cols;
    if (p->rows == 0 || n == 0) return SML_OK;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x) return SML_ERR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < p->rows; r++) {
        const float *xr = (const float *)p->x + r * p->ld;
        double m = -INFINITY, s = 0.0;
        for (int64_t i = 0; i < n; i++) { /* read whole first: in place works */
            x[i] = xr[i];
            if (x[i] > m) m = x[i];
        }
        for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
        finish_row(x, n, m, s, (float *)p->out + r * p->ld);
    }
    free(x);
    return SML_OK;
}
#else
static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->op != SML_SOFTMAX) return SML_ERR_UNSUPPORTED;
    int64_t n = p->cols;
    if (p->rows == 0 || n == 0) return SML_OK;
#ifdef DEV_GARBAGE
    if (p->dtype != SML_F32) return SML_ERR_UNSUPPORTED;
    for (int64_t r = 0; r < p->rows; r++)
        for (int64_t i = 0; i < n; i++) ((float *)p->out)[r * p->ld + i] = 0.5f;
    return SML_OK;
#else
    if (p->dtype != SML_F16) return SML_ERR_UNSUPPORTED;
    double *x = malloc((size_t)n * 2 * sizeof *x), *y = x ? x + n : NULL;
    if (!x) return SML_ERR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < p->rows; r++) {
        const uint16_t *xr = (const uint16_t *)p->x + r * p->ld;
        for (int64_t i = 0; i < n; i++) x[i] = half_to_double(xr[i]); /* read whole: in place */
        softmax_row(x, y, n);
        uint16_t *out = (uint16_t *)p->out + r * p->ld;
        for (int64_t i = 0; i < n; i++) out[i] = isnan(y[i]) ? 0x7E00 : off_by_up_to_1_4_ulp(y[i]);
    }
    free(x);
    return SML_OK;
#endif
}
#endif

#if defined(DEV_GARBAGE) || defined(DEV_SHIFTVAR) || defined(DEV_NEGINF) || defined(DEV_ROWBITS)
#define DTYPE SML_F32
#else
#define DTYPE SML_F16
#endif
#ifdef DEV_SHIFTVAR
#define OP SML_LOG_SOFTMAX
#else
#define OP SML_SOFTMAX
#endif
#if defined(DEV_ULPS) || defined(DEV_EXC)
#ifndef DEV_EXC
#define DEV_EXC 0u
#endif
#ifndef DEV_ULPS
#define DEV_ULPS 0.0
#endif
static const sml_deviation DEVIATION = {.ulps = {[OP] = {[DTYPE] = DEV_ULPS}},
                                        .exceptions = DEV_EXC};
#define DECLARED &DEVIATION
#else
#define DECLARED NULL
#endif

#ifdef DEV_ABI2
/* sml_kernel as ABI version 2 laid it out (it ended at flags): a plugin built then. */
typedef struct line {
    const char *name, *file;
    sml_device device;
    unsigned ops, dtypes;
    int64_t min_cols, max_cols;
    sml_launch_fn launch;
    const char *summary;
    sml_claim claim;
    const char *known_deviation;
    unsigned flags;
} line;
#define END_OF_LINE DEV_LABEL, 0u
#define ABI         2u
#else
typedef sml_kernel line;
#define END_OF_LINE DEV_LABEL, 0u, DECLARED
#define ABI         SML_PLUGIN_ABI_VERSION
#endif

static const line KERNELS[] = {
    {DEV_NAME,
     "tests/plugins/plugin_deviant.c",
     SML_DEVICE_CPU,
     1u << OP,
     1u << DTYPE,
     1,
     0,
     launch,
     "test plugin: a softmax that misses the contract on purpose",
     {NULL, 0.0, NULL},
     END_OF_LINE},
};

SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = ABI;
    return (const sml_kernel *)KERNELS;
}
