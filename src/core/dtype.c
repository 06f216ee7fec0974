/* dtype.c: exact conversions between double and the 16-bit formats, element access for
 * every sml_dtype, and ulp arithmetic.
 *
 * One generic encoder serves fp16 and bf16: it takes the double's 53-bit significand and
 * binade from its bit pattern, shifts the significand down to the target's quantum and
 * rounds once, to nearest with ties to even, from the bits shifted out, then rebuilds the
 * bit pattern. Because the rounding happens on the double itself, double -> fp16 never
 * rounds twice, and float -> fp16 is the same path (float -> double is exact). Decoding
 * builds the double's bit pattern directly. Both are integer work only: they run once per
 * element of every case the suite judges, and libm's frexp/ldexp cost several times more. */
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

#define D_MANT ((uint64_t)1 << 52) /* the double's implicit bit */
#define D_QNAN 0x7FF8000000000000ull
#define D_INF  0x7FF0000000000000ull
#define D_MAG  0x7FFFFFFFFFFFFFFFull

static int fmt_emin(const fmt16 *f) { return 2 - (1 << (f->ebits - 1)); } /* 1 - bias */

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* 2^k for k in double's normal range [-1022, 1023]. */
static double pow2(int k) { return from_bits((uint64_t)(k + 1023) << 52); }

static inline double decode16(const fmt16 *f, uint16_t bits) {
    uint64_t sign = (uint64_t)(bits >> 15) << 63;
    unsigned exp = (bits >> f->mbits) & ((1u << f->ebits) - 1);
    uint64_t mant = bits & ((1u << f->mbits) - 1);
    if (exp == (1u << f->ebits) - 1) return from_bits(sign | (mant ? D_QNAN : D_INF));
    if (exp == 0) { /* subnormal (or zero): mant quanta of the smallest binade, exactly */
        double v = (double)mant * pow2(fmt_emin(f) - f->mbits);
        return sign ? -v : v;
    }
    int e = (int)exp + fmt_emin(f) - 1; /* the binade: value = 1.mant * 2^e */
    return from_bits(sign | (uint64_t)(e + 1023) << 52 | mant << (52 - f->mbits));
}

static inline uint16_t encode16(const fmt16 *f, double d) {
    uint64_t b = to_bits(d), mag = b & D_MAG;
    uint16_t sign = b >> 63 ? 0x8000 : 0;
    uint16_t inf_bits = (uint16_t)(((1 << f->ebits) - 1) << f->mbits);
    if (mag > D_INF) return sign | f->qnan;
    if (mag == D_INF) return sign | inf_bits;
    /* A double subnormal (or zero) is far below half the smallest 16-bit subnormal. */
    if (mag < D_MANT) return sign;
    int e = (int)(mag >> 52) - 1023; /* |d| = m * 2^(e - 52), m in [2^52, 2^53) */
    uint64_t m = (mag & (D_MANT - 1)) | D_MANT;
    int emin = fmt_emin(f), eq = e < emin ? emin : e; /* subnormals share emin's quantum */
    /* q = |d| / 2^(eq - mbits) = m / 2^shift, rounded to nearest, ties to even. */
    int shift = 52 - f->mbits + (eq - e);
    if (shift > 54) return sign; /* below half the smallest subnormal: rounds to zero */
    uint64_t q = m >> shift, rest = m & (((uint64_t)1 << shift) - 1),
             half = (uint64_t)1 << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) q++;
    /* bits = (eq - emin) * 2^mbits + q: a carry out of the mantissa (q = 2^(mbits+1)) moves to
     * the next binade by itself, and q = 2^mbits in the subnormal binade is the smallest
     * normal. */
    uint64_t out = ((uint64_t)(eq - emin) << f->mbits) + q;
    if (out >= inf_bits) return sign | inf_bits;
    return sign | (uint16_t)out;
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

void sml_load_n(sml_dtype dt, const void *base, int64_t i, int64_t n, double *out) {
    switch (dt) {
    case SML_F32: {
        const float *p = (const float *)base + i;
        for (int64_t k = 0; k < n; k++) out[k] = (double)p[k];
        break;
    }
    case SML_F16: {
        const uint16_t *p = (const uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) out[k] = decode16(&HALF, p[k]);
        break;
    }
    case SML_BF16: {
        const uint16_t *p = (const uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) out[k] = decode16(&BF16, p[k]);
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
        for (int64_t k = 0; k < n; k++) p[k] = encode16(&HALF, v[k]);
        break;
    }
    case SML_BF16: {
        uint16_t *p = (uint16_t *)base + i;
        for (int64_t k = 0; k < n; k++) p[k] = encode16(&BF16, v[k]);
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
        for (int64_t k = 0; k < n; k++) v[k] = decode16(&HALF, encode16(&HALF, v[k]));
        break;
    case SML_BF16:
        for (int64_t k = 0; k < n; k++) v[k] = decode16(&BF16, encode16(&BF16, v[k]));
        break;
    default:
        for (int64_t k = 0; k < n; k++) v[k] = NAN;
        break;
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
    if (a >= sml_dtype_min_normal(dt)) e = (int)(to_bits(a) >> 52) - 1023; /* a's binade */
    return pow2(e - mant_bits(dt));
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
    return (unsigned)dt < SML_DTYPE_COUNT ? pow2(-mant_bits(dt)) : NAN;
}
