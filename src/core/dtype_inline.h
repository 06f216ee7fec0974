/* dtype_inline.h: the exact fp16/bf16 conversions and the ulp of core/dtype.c as inline
 * functions, for the host code that runs them on every element of every case (the checker,
 * the contract's bounds, the property engine): dtype.c's exported functions are these, so
 * there is one implementation. Internal to the project (not installed). */
#ifndef SML_CORE_DTYPE_INLINE_H
#define SML_CORE_DTYPE_INLINE_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "softmax_lab.h"

/* An IEEE binary format with `mbits` stored mantissa bits and `ebits` exponent bits. */
typedef struct sml_fmt16 {
    int mbits, ebits;
    uint16_t qnan;
} sml_fmt16;

static const sml_fmt16 SML_FMT_HALF = {10, 5, 0x7E00};
static const sml_fmt16 SML_FMT_BF16 = {7, 8, 0x7FC0};

#define SML_D_MANT ((uint64_t)1 << 52) /* the double's implicit bit */
#define SML_D_QNAN 0x7FF8000000000000ull
#define SML_D_INF  0x7FF0000000000000ull
#define SML_D_MAG  0x7FFFFFFFFFFFFFFFull

static inline int sml_fmt_emin(const sml_fmt16 *f) {
    return 2 - (1 << (f->ebits - 1));
} /* 1 - bias */

static inline double sml_from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static inline uint64_t sml_to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* 2^k for k in double's normal range [-1022, 1023]. */
static inline double sml_pow2(int k) { return sml_from_bits((uint64_t)(k + 1023) << 52); }

static inline double sml_decode16(const sml_fmt16 *f, uint16_t bits) {
    uint64_t sign = (uint64_t)(bits >> 15) << 63;
    unsigned exp = (bits >> f->mbits) & ((1u << f->ebits) - 1);
    uint64_t mant = bits & ((1u << f->mbits) - 1);
    if (exp == (1u << f->ebits) - 1) return sml_from_bits(sign | (mant ? SML_D_QNAN : SML_D_INF));
    if (exp == 0) { /* subnormal (or zero): mant quanta of the smallest binade, exactly */
        double v = (double)mant * sml_pow2(sml_fmt_emin(f) - f->mbits);
        return sign ? -v : v;
    }
    int e = (int)exp + sml_fmt_emin(f) - 1; /* the binade: value = 1.mant * 2^e */
    return sml_from_bits(sign | (uint64_t)(e + 1023) << 52 | mant << (52 - f->mbits));
}

static inline uint16_t sml_encode16(const sml_fmt16 *f, double d) {
    uint64_t b = sml_to_bits(d), mag = b & SML_D_MAG;
    uint16_t sign = b >> 63 ? 0x8000 : 0;
    uint16_t inf_bits = (uint16_t)(((1 << f->ebits) - 1) << f->mbits);
    if (mag > SML_D_INF) return sign | f->qnan;
    if (mag == SML_D_INF) return sign | inf_bits;
    /* A double subnormal (or zero) is far below half the smallest 16-bit subnormal. */
    if (mag < SML_D_MANT) return sign;
    int e = (int)(mag >> 52) - 1023; /* |d| = m * 2^(e - 52), m in [2^52, 2^53) */
    uint64_t m = (mag & (SML_D_MANT - 1)) | SML_D_MANT;
    int emin = sml_fmt_emin(f), eq = e < emin ? emin : e; /* subnormals share emin's quantum */
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

/* sml_encode16, faster where |d| lies in the format's normal binades (or past its largest
 * value, up to 2^(emax+1)): there the rounding's shift is fixed, and round-to-nearest-even is
 * one addition (half the quantum less one, plus the kept part's last bit) before the shift.
 * The same bits as sml_encode16 (test_dtype: every tie and its neighbours, both formats). */
static inline uint16_t sml_encode16_fast(const sml_fmt16 *f, double d) {
    uint64_t b = sml_to_bits(d), mag = b & SML_D_MAG;
    const int emin = sml_fmt_emin(f), emax = (1 << (f->ebits - 1)) - 1, shift = 52 - f->mbits;
    const uint64_t lo = (uint64_t)(emin + 1023) << 52, hi = (uint64_t)(emax + 1 + 1023) << 52;
    if (mag - lo >= hi - lo) return sml_encode16(f, d);
    uint64_t m = mag & (SML_D_MANT - 1);
    uint64_t q = (m + ((uint64_t)1 << (shift - 1)) - 1 + ((m >> shift) & 1)) >> shift;
    uint64_t e = (mag >> 52) - (uint64_t)(emin + 1023) + 1; /* the format's biased exponent */
    uint64_t out = (e << f->mbits) + q; /* a carry out of q moves to the next binade */
    uint16_t sign = b >> 63 ? 0x8000 : 0, inf_bits = (uint16_t)(((1 << f->ebits) - 1) << f->mbits);
    return sign | (out >= inf_bits ? inf_bits : (uint16_t)out);
}

static inline int sml_mant_bits(sml_dtype dt) {
    return dt == SML_F32 ? 23 : dt == SML_F16 ? 10 : 7;
}

static inline int sml_min_exp(sml_dtype dt) { return dt == SML_F16 ? -14 : -126; }

/* sml_ulp (core/dtype.h). */
static inline double sml_ulp_of(sml_dtype dt, double v) {
    if ((unsigned)dt >= SML_DTYPE_COUNT) return NAN;
    double a = fabs(v);
    double top = dt == SML_F32 ? FLT_MAX : dt == SML_F16 ? 65504.0 : 0x1.FEp127;
    if (a > top) a = top;
    int e = sml_min_exp(dt);
    double min_normal = dt == SML_F32 ? FLT_MIN : dt == SML_F16 ? 0x1p-14 : 0x1p-126;
    if (a >= min_normal) e = (int)(sml_to_bits(a) >> 52) - 1023; /* a's binade */
    return sml_pow2(e - sml_mant_bits(dt));
}

/* sml_ulp_of for fp16 and bf16 (dt) with no branches, for per-element loops whose values
 * straddle the smallest normal unpredictably: the binade of |v| clamped to the format's normal
 * binades; below them (a subnormal or zero) the smallest's, past the largest finite value (to
 * inf) the largest's, and for NaN, which sml_ulp_of compares as neither, the smallest's.
 * test_dtype compares it with sml_ulp_of. */
static inline double sml_ulp16_of(sml_dtype dt, double v) {
    const sml_fmt16 *f = dt == SML_F16 ? &SML_FMT_HALF : &SML_FMT_BF16;
    const int emin = sml_fmt_emin(f), emax = (1 << (f->ebits - 1)) - 1;
    uint64_t mag = sml_to_bits(v) & SML_D_MAG;
    int e = (int)(mag >> 52) - 1023;
    e = e < emin ? emin : e;
    e = e > emax ? emax : e;
    e = mag > SML_D_INF ? emin : e;
    return sml_pow2(e - f->mbits);
}

#endif
