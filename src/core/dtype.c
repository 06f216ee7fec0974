/* dtype.c: exact conversions between double and the 16-bit formats, element access for
 * every sml_dtype, and ulp arithmetic.
 *
 * One generic encoder serves fp16 and bf16: it takes the double's 53-bit significand and
 * binade from its bit pattern, shifts the significand down to the target's quantum and
 * rounds once, to nearest with ties to even, from the bits shifted out, then rebuilds the
 * bit pattern. Because the rounding happens on the double itself, double -> fp16 never
 * rounds twice, and float -> fp16 is the same path (float -> double is exact). Decoding
 * builds the double's bit pattern directly. Both are integer work only: they run once per
 * element of every case the suite judges, and libm's frexp/ldexp cost several times more.
 * They live in core/dtype_inline.h, so that the checker and the property engine inline the
 * same code where they run it per element. */
#include "core/dtype.h"
#include "core/dtype_inline.h"

#include <float.h>
#include <math.h>
#include <string.h>

double sml_half_to_double(uint16_t h) { return sml_decode16(&SML_FMT_HALF, h); }
double sml_bf16_to_double(uint16_t b) { return sml_decode16(&SML_FMT_BF16, b); }
uint16_t sml_double_to_half(double d) { return sml_encode16(&SML_FMT_HALF, d); }
uint16_t sml_double_to_bf16(double d) { return sml_encode16(&SML_FMT_BF16, d); }
uint16_t sml_float_to_half(float f) { return sml_encode16_fast(&SML_FMT_HALF, (double)f); }
uint16_t sml_float_to_bf16(float f) { return sml_encode16_fast(&SML_FMT_BF16, (double)f); }

double sml_load(sml_dtype dt, const void *base, int64_t i) {
    switch (dt) {
    case SML_F32: return (double)((const float *)base)[i];
    case SML_F16: return sml_half_to_double(((const uint16_t *)base)[i]);
    case SML_BF16: return sml_bf16_to_double(((const uint16_t *)base)[i]);
    default: return NAN;
    }
}

void sml_store(sml_dtype dt, void *base, int64_t i, double v) {
    switch (dt) {
    case SML_F32: ((float *)base)[i] = (float)v; break; /* C rounds to nearest-even */
    case SML_F16: ((uint16_t *)base)[i] = sml_double_to_half(v); break;
    case SML_BF16: ((uint16_t *)base)[i] = sml_double_to_bf16(v); break;
    default: break;
    }
}

double sml_round_to(sml_dtype dt, double v) {
    switch (dt) {
    case SML_F32: return (double)(float)v;
    case SML_F16: return sml_half_to_double(sml_double_to_half(v));
    case SML_BF16: return sml_bf16_to_double(sml_double_to_bf16(v));
    default: return NAN;
    }
}

void sml_load_n(sml_dtype dt, const void *base, int64_t i, int64_t n, double *out) {
    switch (dt) {
    case SML_F32: {
        const float *p = (const float *)base + i;
        for (int64_t k = 0; k < n; k++) out[k] = (double)p[k];
        break;
    }
    case SML_F16: {
        const uint16_t *p = (const uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) out[k] = sml_decode16(&SML_FMT_HALF, p[k]);
        break;
    }
    case SML_BF16: {
        const uint16_t *p = (const uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) out[k] = sml_decode16(&SML_FMT_BF16, p[k]);
        break;
    }
    default:
        for (int64_t k = 0; k < n; k++) out[k] = NAN;
        break;
    }
}

void sml_store_n(sml_dtype dt, void *base, int64_t i, int64_t n, const double *v) {
    switch (dt) {
    case SML_F32: {
        float *p = (float *)base + i;
        for (int64_t k = 0; k < n; k++) p[k] = (float)v[k];
        break;
    }
    case SML_F16: {
        uint16_t *p = (uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) p[k] = sml_encode16_fast(&SML_FMT_HALF, v[k]);
        break;
    }
    case SML_BF16: {
        uint16_t *p = (uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) p[k] = sml_encode16_fast(&SML_FMT_BF16, v[k]);
        break;
    }
    default: break;
    }
}

void sml_round_n(sml_dtype dt, double *v, int64_t n) {
    switch (dt) {
    case SML_F32:
        for (int64_t k = 0; k < n; k++) v[k] = (double)(float)v[k];
        break;
    case SML_F16:
        for (int64_t k = 0; k < n; k++)
            v[k] = sml_decode16(&SML_FMT_HALF, sml_encode16(&SML_FMT_HALF, v[k]));
        break;
    case SML_BF16:
        for (int64_t k = 0; k < n; k++)
            v[k] = sml_decode16(&SML_FMT_BF16, sml_encode16(&SML_FMT_BF16, v[k]));
        break;
    default:
        for (int64_t k = 0; k < n; k++) v[k] = NAN;
        break;
    }
}

double sml_ulp(sml_dtype dt, double v) { return sml_ulp_of(dt, v); }

/* A signed integer that orders the finite values of dt and counts steps between them. */
static int64_t ordinal(sml_dtype dt, double v) {
    int64_t mag;
    if (dt == SML_F32) {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        mag = b & 0x7FFFFFFFu;
    } else {
        uint16_t b = dt == SML_F16 ? sml_double_to_half(v) : sml_double_to_bf16(v);
        mag = b & 0x7FFF;
    }
    return signbit(v) ? -mag : mag;
}

int64_t sml_ulp_distance(sml_dtype dt, double a, double b) {
    int64_t d = ordinal(dt, a) - ordinal(dt, b);
    return d < 0 ? -d : d;
}

double sml_dtype_max(sml_dtype dt) {
    switch (dt) {
    case SML_F32: return FLT_MAX;
    case SML_F16: return 65504.0;
    case SML_BF16: return 0x1.FEp127;
    default: return NAN;
    }
}

double sml_dtype_min_normal(sml_dtype dt) {
    switch (dt) {
    case SML_F32: return FLT_MIN;
    case SML_F16: return 0x1p-14;
    case SML_BF16: return 0x1p-126;
    default: return NAN;
    }
}

double sml_dtype_eps(sml_dtype dt) {
    return (unsigned)dt < SML_DTYPE_COUNT ? sml_pow2(-sml_mant_bits(dt)) : NAN;
}
