/* test_dtype.c: the conversions and ulp arithmetic of src/core/dtype.c, exhaustively where
 * that is possible: every fp16 and bf16 bit pattern round-trips, every rounding tie between
 * neighbouring 16-bit values goes to the even one (from double and from float), and random
 * values agree with an independent oracle (a search over the sorted table of all values),
 * and every pattern decodes to the value the float bits or the compiler's _Float16 give. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/dtype_inline.h"
#include "unit_case.h"

typedef struct fmt {
    const char *name;
    sml_dtype dt;
    double (*to_double)(uint16_t);
    uint16_t (*from_double)(double);
    uint16_t (*from_float)(float);
    uint16_t max_bits, inf_bits;
    double beyond; /* the value infinity stands for in rounding: 2^(emax + 1) */
} fmt;

static const fmt FMTS[2] = {
    {"fp16", SML_F16, sml_half_to_double, sml_double_to_half, sml_float_to_half, 0x7BFF, 0x7C00,
     65536.0},
    {"bf16", SML_BF16, sml_bf16_to_double, sml_double_to_bf16, sml_float_to_bf16, 0x7F7F, 0x7F80,
     0x1p128},
};

static int is_nan_bits(const fmt *f, uint16_t b) { return (b & 0x7FFF) > f->inf_bits; }

/* Round |d| by search over the table of non-negative values: nearest, ties to even bits. */
static uint16_t oracle(const fmt *f, double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d)) return 0xFFFF;
    if (a >= f->beyond) return sign | f->inf_bits;
    int lo = 0, hi = f->max_bits; /* largest k with value(k) <= a */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (f->to_double((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    double below = f->to_double((uint16_t)lo);
    double above = lo == f->max_bits ? f->beyond : f->to_double((uint16_t)(lo + 1));
    uint16_t k = (uint16_t)lo;
    if (a - below > above - a || (a - below == above - a && (k & 1))) k++;
    return sign | k;
}

static int same_bits(const fmt *f, uint16_t got, uint16_t want) {
    if (want == 0xFFFF) return is_nan_bits(f, got);
    return got == want;
}

static void roundtrip(unit_run *u, const fmt *f) {
    int64_t bad = 0;
    uint32_t first = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double d = f->to_double((uint16_t)b);
        uint16_t back = f->from_double(d), backf = f->from_float((float)d);
        int ok = is_nan_bits(f, (uint16_t)b)
                     ? isnan(d) && is_nan_bits(f, back) && is_nan_bits(f, backf) &&
                           (back & 0x8000) == (b & 0x8000)
                     : back == b && backf == b;
        if (!ok && bad++ == 0) first = b;
    }
    UNIT_EXPECT(u, bad == 0, "%s: %lld of 65536 bit patterns do not round-trip (first 0x%04x)",
                f->name, (long long)bad, (unsigned)first);
}

/* Every midpoint between neighbours (both signs, through the overflow midpoint) rounds to
 * the even neighbour, and the next double/float either side rounds to the nearer one. */
static void ties(unit_run *u, const fmt *f) {
    int64_t bad = 0;
    uint32_t first = 0;
    for (uint32_t k = 0; k <= f->max_bits; k++) {
        double a = f->to_double((uint16_t)k);
        double b = k == f->max_bits ? f->beyond : f->to_double((uint16_t)(k + 1));
        double mid = 0.5 * (a + b); /* exact: at most 12 significant bits */
        uint16_t lo = (uint16_t)k, hi = (uint16_t)(k + 1), even = (k & 1) ? hi : lo;
        for (int s = 0; s < 2; s++) {
            double m = s ? -mid : mid;
            uint16_t sg = s ? 0x8000 : 0;
            float mf = (float)m;
            int ok = (double)mf == m && f->from_double(m) == (sg | even) &&
                     f->from_float(mf) == (sg | even) &&
                     f->from_double(nextafter(m, 0.0)) == (sg | lo) &&
                     f->from_double(nextafter(m, s ? -INFINITY : INFINITY)) == (sg | hi) &&
                     f->from_float(nextafterf(mf, 0.0f)) == (sg | lo) &&
                     f->from_float(nextafterf(mf, s ? -INFINITY : INFINITY)) == (sg | hi);
            if (!ok && bad++ == 0) first = k | sg;
        }
    }
    UNIT_EXPECT(u, bad == 0,
                "%s: %lld ties rounded wrongly (first between 0x%04x and its successor)", f->name,
                (long long)bad, (unsigned)first);
}

static void specials(unit_run *u, const fmt *f) {
    double min_sub = f->to_double(1);
    struct {
        double in;
        uint16_t want;
    } CASES[] = {
        {0.0, 0x0000},
        {-0.0, 0x8000},
        {INFINITY, f->inf_bits},
        {-INFINITY, 0x8000 | f->inf_bits},
        {NAN, 0xFFFF},
        {-NAN, 0xFFFF},
        {0.5 * min_sub, 0x0000},  /* tie between 0 and min_sub: even is 0 */
        {-0.5 * min_sub, 0x8000}, /* ... keeping the sign */
        {nextafter(0.5 * min_sub, 1.0), 0x0001},
        {1.5 * min_sub, 0x0002}, /* tie between 1 and 2: even is 2 */
        {0x1p-1074, 0x0000},
        {-0x1p-1074, 0x8000}, /* double subnormals */
        {1e300, f->inf_bits},
        {-1e300, 0x8000 | f->inf_bits},
        {f->to_double(f->max_bits), f->max_bits},
        {sml_dtype_min_normal(f->dt), (uint16_t)(1u << (f->dt == SML_F16 ? 10 : 7))},
        {1.0, f->dt == SML_F16 ? 0x3C00 : 0x3F80},
    };
    int64_t bad = 0;
    int first = -1;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        uint16_t got = f->from_double(CASES[i].in);
        int ok =
            same_bits(f, got, CASES[i].want) && same_bits(f, oracle(f, CASES[i].in), CASES[i].want);
        if (!isnan(CASES[i].in) && (double)(float)CASES[i].in == CASES[i].in)
            ok = ok && same_bits(f, f->from_float((float)CASES[i].in), CASES[i].want);
        if (!ok && bad++ == 0) first = (int)i;
    }
    /* NaN payloads and signs from float: any NaN stays a NaN. */
    uint32_t payloads[] = {0x7F800001u, 0x7FC00000u, 0xFFC00001u, 0x7FFFFFFFu, 0xFF800001u};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        float nf;
        memcpy(&nf, &payloads[i], sizeof nf);
        if (!is_nan_bits(f, f->from_float(nf)) && bad++ == 0) first = 100 + (int)i;
    }
    UNIT_EXPECT(u, bad == 0, "%s: %lld special-value conversions wrong (first: entry %d)", f->name,
                (long long)bad, first);
}

/* A double spread over every binade of the format and past both ends. */
static double random_double(sml_rng *r, const fmt *f) {
    double v;
    if (sml_rng_below(r, 4) == 0) { /* at or a few doubles away from a midpoint */
        uint16_t k = (uint16_t)sml_rng_below(r, (uint64_t)f->max_bits + 1);
        double a = f->to_double(k);
        double b = k == f->max_bits ? f->beyond : f->to_double((uint16_t)(k + 1));
        double mid = 0.5 * (a + b);
        int steps = (int)sml_rng_below(r, 5) - 2;
        v = mid;
        for (; steps > 0; steps--) v = nextafter(v, INFINITY);
        for (; steps < 0; steps++) v = nextafter(v, 0.0);
    } else { /* log-uniform over every binade, past zero and past overflow */
        double e =
            f->dt == SML_F16 ? -30.0 + 50.0 * sml_rng_unit(r) : -170.0 + 300.0 * sml_rng_unit(r);
        v = ldexp(1.0 + sml_rng_unit(r), (int)floor(e));
    }
    return (sml_rng_u64(r) & 1) ? -v : v;
}

static void random_vs_oracle(unit_run *u, const fmt *f, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    int64_t bad = 0;
    double first = 0;
    for (int i = 0; i < 200000; i++) {
        double d = random_double(&r, f);
        float fl = (float)d;
        int ok = same_bits(f, f->from_double(d), oracle(f, d)) &&
                 same_bits(f, f->from_float(fl), oracle(f, (double)fl));
        if (!ok && bad++ == 0) first = d;
    }
    UNIT_EXPECT(u, bad == 0,
                "%s: %lld of 200000 random values differ from the oracle (first %.17g)", f->name,
                (long long)bad, first);
}

/* float -> fp16 against the compiler's own conversion, over a spread of float bit patterns. */
static void float_vs_compiler(unit_run *u) {
#ifdef __FLT16_MAX__
    int64_t bad = 0;
    uint32_t first = 0;
    for (uint64_t b = 0; b < 0x100000000ull; b += 997) {
        uint32_t bits = (uint32_t)b;
        float fl;
        memcpy(&fl, &bits, sizeof fl);
        volatile float vf = fl;
        _Float16 h = (_Float16)vf;
        uint16_t hb;
        memcpy(&hb, &h, sizeof hb);
        uint16_t got = sml_float_to_half(fl);
        int ok = isnan(fl) ? is_nan_bits(&FMTS[0], got) : got == hb;
        if (!ok && bad++ == 0) first = bits;
    }
    UNIT_EXPECT(u, bad == 0, "fp16: %lld floats convert differently from _Float16 (first 0x%08x)",
                (long long)bad, (unsigned)first);
#else
    (void)u;
    u->tally.skipped++;
#endif
}

/* bf16 from float against the integer rounding trick (independent of dtype.c). */
static void bf16_vs_bits(unit_run *u) {
    int64_t bad = 0;
    uint32_t first = 0;
    for (uint64_t b = 0; b < 0x100000000ull; b += 991) {
        uint32_t bits = (uint32_t)b;
        float fl;
        memcpy(&fl, &bits, sizeof fl);
        if (isnan(fl)) continue;
        uint16_t want = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        if (sml_float_to_bf16(fl) != want && bad++ == 0) first = bits;
    }
    UNIT_EXPECT(u, bad == 0,
                "bf16: %lld floats round differently from the bit trick (first 0x%08x)",
                (long long)bad, (unsigned)first);
}

/* Every 16-bit pattern decoded against what does not use dtype.c: bf16 is the top half of a
 * float, and fp16 the compiler's _Float16 where it has one. */
static void decode_vs_independent(unit_run *u) {
    int64_t bad = 0;
    uint32_t first = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        uint32_t fbits = b << 16;
        float fl;
        memcpy(&fl, &fbits, sizeof fl);
        double got = sml_bf16_to_double((uint16_t)b);
        int ok = isnan(fl) ? isnan(got) && !signbit(got) == !signbit(fl)
                           : memcmp(&got, &(double){fl}, sizeof got) == 0;
#ifdef __FLT16_MAX__
        _Float16 h;
        uint16_t hb = (uint16_t)b;
        memcpy(&h, &hb, sizeof h);
        double hd = (double)h, hgot = sml_half_to_double(hb);
        ok = ok && (isnan(hd) ? isnan(hgot) && !signbit(hgot) == !signbit(hd)
                              : memcmp(&hgot, &hd, sizeof hd) == 0);
#endif
        if (!ok && bad++ == 0) first = b;
    }
    UNIT_EXPECT(u, bad == 0,
                "%lld of 65536 bit patterns decode differently from the float / _Float16 "
                "value (first 0x%04x)",
                (long long)bad, (unsigned)first);
}

static void ulps(unit_run *u) {
    int64_t bad = 0;
    const char *what = "";
    for (int fi = 0; fi < 2; fi++) {
        const fmt *f = &FMTS[fi];
        for (uint32_t k = 0; k < f->max_bits; k++) {
            double a = f->to_double((uint16_t)k), b = f->to_double((uint16_t)(k + 1));
            if (sml_ulp_distance(f->dt, a, b) != 1 || sml_ulp_distance(f->dt, -a, -b) != 1 ||
                sml_ulp(f->dt, a) != b - a) {
                if (bad++ == 0) what = f->name;
            }
        }
        /* The branch-free ulp agrees with sml_ulp_of on every value, the points between
         * neighbours, both signs, and past the largest value, inf and NaN. */
        for (uint32_t k = 0; k <= f->max_bits; k++) {
            double a = f->to_double((uint16_t)k);
            double mid = k < f->max_bits ? 0.5 * (a + f->to_double((uint16_t)(k + 1))) : a;
            const double pts[] = {a, -a, mid, -mid};
            for (int j = 0; j < 4; j++)
                if (sml_ulp16_of(f->dt, pts[j]) != sml_ulp_of(f->dt, pts[j]) && bad++ == 0)
                    what = "sml_ulp16_of";
        }
        const double far[] = {f->beyond, 2.0 * f->beyond, 1e300, INFINITY, -INFINITY, NAN, 1e-300};
        for (int j = 0; j < 7; j++)
            if (sml_ulp16_of(f->dt, far[j]) != sml_ulp_of(f->dt, far[j]) && bad++ == 0)
                what = "sml_ulp16_of past the finite values";
        double ms = f->to_double(1);
        if (sml_ulp_distance(f->dt, ms, -ms) != 2 || sml_ulp_distance(f->dt, 0.0, -0.0) != 0 ||
            sml_ulp(f->dt, 0.0) != ms || sml_ulp(f->dt, 1.0) != sml_dtype_eps(f->dt))
            if (bad++ == 0) what = "16-bit special points";
    }
    float one = 1.0f;
    if (sml_ulp_distance(SML_F32, 1.0, nextafterf(one, 2.0f)) != 1 ||
        sml_ulp_distance(SML_F32, 0x1p-149, -0x1p-149) != 2 ||
        sml_ulp_distance(SML_F32, 0.0, -0.0) != 0 || sml_ulp(SML_F32, 1.0) != FLT_EPSILON ||
        sml_ulp(SML_F32, 0.0) != 0x1p-149 || sml_ulp(SML_F32, 1e-40) != 0x1p-149 ||
        sml_ulp(SML_F32, FLT_MAX) != 0x1p104 || sml_ulp(SML_F32, 1.5) != FLT_EPSILON ||
        sml_ulp(SML_F32, 0.75) != FLT_EPSILON / 2 ||
        sml_ulp_distance(SML_F32, 1.0, 2.0) != (1 << 23))
        if (bad++ == 0) what = "fp32";
    UNIT_EXPECT(u, bad == 0, "ulp arithmetic wrong in %lld places (first in %s)", (long long)bad,
                what);
}

static void load_store(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    int64_t bad = 0;
    double first = 0;
    unsigned char buf[8];
    for (int i = 0; i < 20000; i++) {
        double v = (sml_rng_unit(&r) - 0.5) * ldexp(1.0, (int)sml_rng_below(&r, 60) - 30);
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            sml_store((sml_dtype)dt, buf, 1, v);
            double back = sml_load((sml_dtype)dt, buf, 1);
            double want =
                dt == SML_F32 ? (double)(float)v : FMTS[dt - 1].to_double(oracle(&FMTS[dt - 1], v));
            if ((back != want || sml_round_to((sml_dtype)dt, v) != want) && bad++ == 0) first = v;
        }
    }
    /* fp32 ties from double go to even as well. */
    double tie = 1.0 + 0x1p-24, tie2 = 1.0 + 3 * 0x1p-24;
    if (sml_round_to(SML_F32, tie) != 1.0 || sml_round_to(SML_F32, tie2) != 1.0 + 0x1p-22) bad++;
    UNIT_EXPECT(u, bad == 0, "load/store/round_to: %lld mismatches (first %.17g)", (long long)bad,
                first);
}

/* The row-at-a-time conversions give the one-element functions' bits: every 16-bit pattern
 * loaded, and random doubles of every magnitude (specials, subnormals, past the dtype's range)
 * stored and rounded, at an offset into the buffer. */
static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void rows_vs_elements(unit_run *u, uint64_t seed) {
    enum { N = 65536, OFF = 3 };
    static uint16_t bits[N + OFF];
    static double v[N], got[N];
    static unsigned char a[(N + OFF) * 4], b[(N + OFF) * 4];
    int64_t bad = 0;
    char first[96] = "";
    for (int k = 0; k < N; k++) bits[k + OFF] = (uint16_t)k;
    for (int dt = SML_F16; dt <= SML_BF16; dt++) {
        sml_load_n((sml_dtype)dt, bits, OFF, N, got);
        for (int k = 0; k < N; k++)
            if (!same_double(got[k], sml_load((sml_dtype)dt, bits, k + OFF)) && bad++ == 0)
                snprintf(first, sizeof first, "load_n %s 0x%04x", sml_dtype_name((sml_dtype)dt), k);
    }
    sml_rng r;
    sml_rng_seed(&r, seed);
    static const double SPECIAL[] = {0.0,     -0.0,    INFINITY,  -INFINITY,  NAN,       -NAN,
                                     65504.0, 65520.0, 0x1p-24,   0x1p-25,    0x1.8p-25, FLT_MAX,
                                     DBL_MAX, DBL_MIN, 0x1p-1074, 0x1.FEp127, 0x1.FFp127};
    const int ns = (int)(sizeof SPECIAL / sizeof SPECIAL[0]);
    for (int k = 0; k < N; k++) {
        if (k < ns)
            v[k] = SPECIAL[k];
        else if (k < 2 * ns)
            v[k] = -SPECIAL[k - ns];
        else
            v[k] = (sml_rng_unit(&r) - 0.5) * ldexp(1.0, (int)sml_rng_below(&r, 400) - 200);
    }
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
        size_t esz = sml_dtype_size((sml_dtype)dt);
        memset(a, 0x5A, sizeof a);
        memset(b, 0x5A, sizeof b);
        sml_store_n((sml_dtype)dt, a, OFF, N, v);
        for (int k = 0; k < N; k++) sml_store((sml_dtype)dt, b, k + OFF, v[k]);
        if (memcmp(a, b, (N + OFF) * esz) != 0 && bad++ == 0)
            snprintf(first, sizeof first, "store_n %s", sml_dtype_name((sml_dtype)dt));
        memcpy(got, v, sizeof got);
        sml_round_n((sml_dtype)dt, got, N);
        for (int k = 0; k < N; k++)
            if (!same_double(got[k], sml_round_to((sml_dtype)dt, v[k])) && bad++ == 0)
                snprintf(first, sizeof first, "round_n %s %.17g", sml_dtype_name((sml_dtype)dt),
                         v[k]);
    }
    /* Every value of each 16-bit format, the midpoints to its neighbours (the ties) and the
     * doubles next to each, of both signs: sml_store_n's fast path decides them all. */
    for (int dt = SML_F16; dt <= SML_BF16; dt++) {
        int64_t m = 0;
        for (uint32_t k = 0; k < 0x7FFF; k++) {
            uint16_t lo = (uint16_t)k, hi = (uint16_t)(k + 1);
            double p = sml_load((sml_dtype)dt, &lo, 0), q = sml_load((sml_dtype)dt, &hi, 0);
            if (!isfinite(p)) break;
            double mid = isfinite(q) ? p + (q - p) / 2 : p * 2;
            double pts[6] = {p,   nextafter(p, INFINITY),  mid, nextafter(mid, -INFINITY),
                             mid, nextafter(mid, INFINITY)};
            pts[4] = nextafter(p, -INFINITY);
            for (int t = 0; t < 6; t++) {
                v[m++] = pts[t];
                v[m++] = -pts[t];
            }
            if (m + 12 > N || k + 1 == 0x7FFF) {
                sml_store_n((sml_dtype)dt, a, 0, m, v);
                for (int64_t t = 0; t < m; t++) sml_store((sml_dtype)dt, b, t, v[t]);
                if (memcmp(a, b, (size_t)m * 2) != 0 && bad++ == 0)
                    snprintf(first, sizeof first, "store_n %s near 0x%04x",
                             sml_dtype_name((sml_dtype)dt), (unsigned)k);
                m = 0;
            }
        }
        if (m) {
            sml_store_n((sml_dtype)dt, a, 0, m, v);
            for (int64_t t = 0; t < m; t++) sml_store((sml_dtype)dt, b, t, v[t]);
            if (memcmp(a, b, (size_t)m * 2) != 0 && bad++ == 0)
                snprintf(first, sizeof first, "store_n %s ties", sml_dtype_name((sml_dtype)dt));
        }
    }
    UNIT_EXPECT(u, bad == 0,
                "row conversions differ from the element ones in %lld places (first: %s)",
                (long long)bad, first);
}

static void constants(unit_run *u) {
    int ok = sml_dtype_max(SML_F32) == FLT_MAX && sml_dtype_max(SML_F16) == 65504.0 &&
             sml_dtype_max(SML_BF16) == sml_bf16_to_double(0x7F7F) &&
             sml_dtype_min_normal(SML_F32) == FLT_MIN &&
             sml_dtype_min_normal(SML_F16) == sml_half_to_double(0x0400) &&
             sml_dtype_min_normal(SML_BF16) == sml_bf16_to_double(0x0080) &&
             sml_dtype_eps(SML_F32) == FLT_EPSILON && sml_dtype_eps(SML_F16) == 0x1p-10 &&
             sml_dtype_eps(SML_BF16) == 0x1p-7 && isnan(sml_dtype_max((sml_dtype)7));
    UNIT_EXPECT(u, ok, "dtype constants wrong");
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_dtype", argc, argv)) return 2;
    uint64_t s;
    for (int fi = 0; fi < 2; fi++) {
        if (unit_case(&u, 0 + fi, NULL)) roundtrip(&u, &FMTS[fi]);
        if (unit_case(&u, 2 + fi, NULL)) ties(&u, &FMTS[fi]);
        if (unit_case(&u, 4 + fi, NULL)) specials(&u, &FMTS[fi]);
        if (unit_case(&u, 6 + fi, &s)) random_vs_oracle(&u, &FMTS[fi], s);
    }
    if (unit_case(&u, 8, NULL)) float_vs_compiler(&u);
    if (unit_case(&u, 9, NULL)) bf16_vs_bits(&u);
    if (unit_case(&u, 10, NULL)) ulps(&u);
    if (unit_case(&u, 11, &s)) load_store(&u, s);
    if (unit_case(&u, 12, NULL)) constants(&u);
    if (unit_case(&u, 13, NULL)) decode_vs_independent(&u);
    if (unit_case(&u, 14, &s)) rows_vs_elements(&u, s);
    return sml_tally_finish(&u.tally);
}
