/* test_radix.c: src/prop/radix.c, the sort the monotonic property orders rows with, against
 * qsort on random keys (short and long arrays, many equal keys, keys differing only in one
 * byte), and its float keys against the floats' own order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "prop/radix.h"
#include "unit_case.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t p = *(const uint64_t *)a, q = *(const uint64_t *)b;
    return (p > q) - (p < q);
}

/* Random arrays of each length: mode 0 any key, 1 few distinct keys, 2 one byte varying. */
static void against_qsort(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    static const size_t LEN[] = {0, 1, 2, 63, 64, 65, 1000, 65537};
    int64_t bad = 0;
    char first[96] = "";
    for (size_t li = 0; li < sizeof LEN / sizeof LEN[0]; li++)
        for (int mode = 0; mode < 3; mode++) {
            size_t n = LEN[li];
            uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b),
                     *tmp = malloc((n + 1) * sizeof *tmp);
            if (!a || !b || !tmp) {
                free(a), free(b), free(tmp);
                UNIT_EXPECT(u, 0, "out of memory");
                return;
            }
            int shift = (int)sml_rng_below(&r, 8) * 8;
            for (size_t i = 0; i < n; i++) {
                uint64_t v = sml_rng_u64(&r);
                if (mode == 1) v = sml_rng_below(&r, 5) << 40 | 7;
                if (mode == 2) v = 0x0123456789ABCDEFull ^ (sml_rng_below(&r, 256) << shift);
                a[i] = b[i] = v;
            }
            sml_radix_sort_u64(a, tmp, n);
            qsort(b, n, sizeof *b, cmp_u64);
            if (n && memcmp(a, b, n * sizeof *a) && bad++ == 0)
                snprintf(first, sizeof first, "length %zu, mode %d", n, mode);
            free(a), free(b), free(tmp);
        }
    UNIT_EXPECT(u, bad == 0, "%lld arrays sorted differently from qsort (first: %s)",
                (long long)bad, first);
}

/* Keys whose low halves are their indices (as monotonic builds them) sort by the high halves
 * alone as by the whole keys: random, few distinct and one-byte-varying high halves. */
static void high_halves(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    static const size_t LEN[] = {0, 1, 2, 63, 64, 65, 1000, 65537};
    int64_t bad = 0;
    char first[96] = "";
    for (size_t li = 0; li < sizeof LEN / sizeof LEN[0]; li++)
        for (int mode = 0; mode < 3; mode++) {
            size_t n = LEN[li];
            uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b),
                     *tmp = malloc((n + 1) * sizeof *tmp);
            if (!a || !b || !tmp) {
                free(a), free(b), free(tmp);
                UNIT_EXPECT(u, 0, "out of memory");
                return;
            }
            int shift = (int)sml_rng_below(&r, 4) * 8;
            for (size_t i = 0; i < n; i++) {
                uint64_t v = sml_rng_u64(&r) >> 32;
                if (mode == 1) v = sml_rng_below(&r, 5) << 20 | 7;
                if (mode == 2) v = 0x01234567u ^ (sml_rng_below(&r, 256) << shift);
                a[i] = b[i] = v << 32 | (uint64_t)i;
            }
            sml_radix_sort_u64_hi(a, tmp, n);
            sml_radix_sort_u64(b, tmp, n);
            if (n && memcmp(a, b, n * sizeof *a) && bad++ == 0)
                snprintf(first, sizeof first, "length %zu, mode %d", n, mode);
            free(a), free(b), free(tmp);
        }
    UNIT_EXPECT(u, bad == 0, "%lld arrays sorted by their high halves differ (first: %s)",
                (long long)bad, first);
}

/* The keys order random floats of every magnitude, both signs, zeros and infinities as their
 * values (equal keys exactly for equal values): every pair of 4,096 of them. */
static void float_key_pairs(unit_run *u, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    enum { N = 4096 };
    static float v[N];
    static const float S[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1.0f, -1.0f, 1e-45f, -1e-45f};
    for (int i = 0; i < N; i++) {
        uint32_t b = (uint32_t)sml_rng_u64(&r);
        if (i < 8) {
            v[i] = S[i];
            continue;
        }
        if (i % 3 == 0) b &= 0xFFFFE000u; /* few significant bits, as 16-bit values have */
        memcpy(&v[i], &b, sizeof b);
        if (isnan(v[i])) v[i] = (float)i;
    }
    int64_t bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            uint32_t a = sml_radix_float_key(v[i]), b = sml_radix_float_key(v[j]);
            int want = (v[i] > v[j]) - (v[i] < v[j]), got = (a > b) - (a < b);
            if (want != got) bad++;
        }
    UNIT_EXPECT(u, bad == 0, "%lld pairs of float keys out of the values' order", (long long)bad);
}

/* The keys of neighbouring floats (and of the specials) keep their order; -0 keys as +0. */
static void float_keys(unit_run *u) {
    static const float V[] = {-INFINITY, -3.4e38f, -1.0f, -1e-45f, -0.0f,
                              0.0f,      1e-45f,   1.0f,  3.4e38f, INFINITY};
    int bad = 0;
    for (size_t i = 1; i < sizeof V / sizeof V[0]; i++) {
        uint32_t a = sml_radix_float_key(V[i - 1]), b = sml_radix_float_key(V[i]);
        if (V[i - 1] < V[i] ? !(a < b) : a != b) bad++;
    }
    for (float x = 1e-3f; x < 1e3f; x = nextafterf(x, INFINITY) * 1.0001f)
        if (!(sml_radix_float_key(-x) < sml_radix_float_key(-x * 0.5f)) ||
            !(sml_radix_float_key(x * 0.5f) < sml_radix_float_key(x)))
            bad++;
    UNIT_EXPECT(u, bad == 0, "%d float keys out of the floats' order", bad);
}

/* The 16-bit keys order every fp16 and bf16 value (NaN aside) as the float keys of their values
 * do, -0 and +0 alike: for every pair of patterns, the two keys compare as the float keys. */
static void half_keys(unit_run *u) {
    int64_t bad = 0;
    char first[96] = "";
    for (int dt = SML_F16; dt <= SML_BF16; dt++) {
        static uint32_t fk[65536], hk[65536];
        static int ok[65536];
        for (uint32_t b = 0; b < 65536; b++) {
            double v =
                dt == SML_F16 ? sml_half_to_double((uint16_t)b) : sml_bf16_to_double((uint16_t)b);
            ok[b] = !isnan(v);
            fk[b] = sml_radix_float_key((float)v);
            hk[b] = sml_radix_half_key((uint16_t)b);
        }
        for (uint32_t a = 0; a < 65536; a += 7)
            for (uint32_t b = 0; b < 65536; b++) {
                if (!ok[a] || !ok[b]) continue;
                int want = (fk[a] > fk[b]) - (fk[a] < fk[b]),
                    got = (hk[a] > hk[b]) - (hk[a] < hk[b]);
                if (want != got && bad++ == 0)
                    snprintf(first, sizeof first, "%s 0x%04x vs 0x%04x",
                             dt == SML_F16 ? "fp16" : "bf16", a, b);
            }
    }
    UNIT_EXPECT(u, bad == 0, "%lld pairs of 16-bit keys out of the values' order (first: %s)",
                (long long)bad, first);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_radix", argc, argv)) return 2;
    uint64_t s;
    if (unit_case(&u, 0, &s)) against_qsort(&u, s);
    if (unit_case(&u, 1, NULL)) float_keys(&u);
    if (unit_case(&u, 2, &s)) high_halves(&u, s);
    if (unit_case(&u, 3, NULL)) half_keys(&u);
    if (unit_case(&u, 4, &s)) float_key_pairs(&u, s);
    return sml_tally_finish(&u.tally);
}
