/* dtype.c: exact conversions between double and the 16-bit formats, element access for
 * every sml_dtype, and ulp arithmetic.
 *
 * One generic encoder serves fp16 and bf16: it scales the value by the quantum of its
 * binade (an exact power-of-two scaling), rounds once with rint() (round-to-nearest-even in
 * the default rounding mode) and rebuilds the bit pattern. Because the rounding happens on
 * the double itself, double -> fp16 never rounds twice, and float -> fp16 is the same path
 * (float -> double is exact). */
#include "core/dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* An IEEE binary format with `mbits` stored mantissa bits and `ebits` exponent bits. */
typedef struct fmt16 {
    int mbits, ebits;
    uint16_t qnan;
} fmt16;

static const fmt16 HALF = {10, 5, 0x7E00};
static const fmt16 BF16 = {7, 8, 0x7FC0};

static int fmt_emin(const fmt16 *f) { return 2 - (1 << (f->ebits - 1)); } /* 1 - bias */

static double decode16(const fmt16 *f, uint16_t bits) {
    int sign = bits >> 15;
    int exp = (bits >> f->mbits) & ((1 << f->ebits) - 1);
    int mant = bits & ((1 << f->mbits) - 1);
    double v;
    if (exp == (1 << f->ebits) - 1)
        v = mant ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp((double)mant, fmt_emin(f) - f->mbits);
    else
        v = ldexp((double)(mant | (1 << f->mbits)), exp - (1 << (f->ebits - 1)) + 1 - f->mbits);
    return sign ? -v : v;
}

static uint16_t encode16(const fmt16 *f, double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    uint16_t inf_bits = (uint16_t)(((1 << f->ebits) - 1) << f->mbits);
    if (isnan(d)) return sign | f->qnan;
    double a = fabs(d);
    if (isinf(a)) return sign | inf_bits;
    if (a == 0.0) return sign;
    int e2;
    (void)frexp(a, &e2); /* a = m * 2^e2, m in [0.5, 1): binade exponent e2 - 1 */
    int e = e2 - 1;
    if (e < fmt_emin(f)) e = fmt_emin(f); /* subnormals share the smallest binade's quantum */
    /* a / quantum is exact (power-of-two scaling of a double far from double's limits). */
    double q = rint(ldexp(a, f->mbits - e));
    /* bits = (e - emin) * 2^mbits + q: a carry out of the mantissa (q = 2^(mbits+1)) moves to
     * the next binade by itself, and q = 2^mbits in the subnormal binade is the smallest
     * normal. */
    double bits = ldexp((double)(e - fmt_emin(f)), f->mbits) + q;
    if (bits >= (double)inf_bits) return sign | inf_bits;
    return sign | (uint16_t)bits;
}

double sml_half_to_double(uint16_t h) { return decode16(&HALF, h); }
double sml_bf16_to_double(uint16_t b) { return decode16(&BF16, b); }
uint16_t sml_double_to_half(double d) { return encode16(&HALF, d); }
uint16_t sml_double_to_bf16(double d) { return encode16(&BF16, d); }
uint16_t sml_float_to_half(float f) { return encode16(&HALF, (double)f); }
uint16_t sml_float_to_bf16(float f) { return encode16(&BF16, (double)f); }

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

static int mant_bits(sml_dtype dt) { return dt == SML_F32 ? 23 : dt == SML_F16 ? 10 : 7; }

static int min_exp(sml_dtype dt) { return dt == SML_F16 ? -14 : -126; }

double sml_ulp(sml_dtype dt, double v) {
    if ((unsigned)dt >= SML_DTYPE_COUNT) return NAN;
    double a = fabs(v);
    double top = sml_dtype_max(dt);
    if (a > top) a = top;
    int e = min_exp(dt);
    if (a >= sml_dtype_min_normal(dt)) {
        int e2;
        (void)frexp(a, &e2);
        e = e2 - 1;
    }
    return ldexp(1.0, e - mant_bits(dt));
}

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
    return (unsigned)dt < SML_DTYPE_COUNT ? ldexp(1.0, -mant_bits(dt)) : NAN;
}
