/* rng.h: the project's one random generator: SplitMix64 for seeding and deriving per-case
 * seeds, xoshiro256** for streams. Header-only and stateless apart from the struct the
 * caller owns, so every random draw is reproducible from a printed seed. */
#ifndef SML_RNG_H
#define SML_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct sml_rng {
    uint64_t s[4];
} sml_rng;

static inline uint64_t sml_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Seed for case `index` of a run seeded with `run_seed`: independent of every other case. */
static inline uint64_t sml_derive_seed(uint64_t run_seed, uint64_t index) {
    uint64_t s = run_seed ^ (index * 0xD1B54A32D192ED03ull);
    return sml_splitmix64(&s);
}

static inline void sml_rng_seed(sml_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = sml_splitmix64(&seed);
}

static inline uint64_t sml_rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sml_rng_u64(sml_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = sml_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sml_rotl64(s[3], 45);
    return result;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double sml_rng_unit(sml_rng *r) { return (double)(sml_rng_u64(r) >> 11) * 0x1.0p-53; }

/* Uniform integer in [0, n), n > 0 (Lemire's nearly divisionless method would be faster;
 * the modulo bias here is below 2^-40 for every n the project uses). */
static inline uint64_t sml_rng_below(sml_rng *r, uint64_t n) { return sml_rng_u64(r) % n; }

/* Standard normal (Box-Muller; one value per call, the other discarded for simplicity). */
static inline double sml_rng_normal(sml_rng *r) {
    double u1 = sml_rng_unit(r), u2 = sml_rng_unit(r);
    if (u1 < 0x1.0p-60) u1 = 0x1.0p-60;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
