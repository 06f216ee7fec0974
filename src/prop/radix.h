/* radix.h: sorting 64-bit keys in linear time, for the properties that order a row (monotonic
 * orders each row's outputs by its inputs: a comparison sort through qsort's callback was a
 * sixth of the suite's host time). */
#ifndef SML_PROP_RADIX_H
#define SML_PROP_RADIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Sort a[0..n) ascending; tmp holds n keys of scratch. */
void sml_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* The same for keys whose low 32 bits are already ascending (an index: a[i] & 0xFFFFFFFF ==
 * i, as monotonic builds them): the passes over the low half, which would only put the
 * indices back in the order they are in, are not made. The same result as
 * sml_radix_sort_u64 on such keys. */
void sml_radix_sort_u64_hi(uint64_t *a, uint64_t *tmp, size_t n);

/* A float's value as a key that sorts as the values do (-0 as +0; no NaN): 2^31 plus the
 * magnitude's bits, or less them below zero. Values with few significant bits (integers,
 * 16-bit values, a constant) give keys whose low bytes are all zero, of either sign, so the
 * radix sort skips those passes. */
static inline uint32_t sml_radix_float_key(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    uint32_t mag = b & 0x7FFFFFFFu;
    return b >> 31 ? 0x80000000u - mag : 0x80000000u | mag;
}

/* The same for an fp16 or bf16 value's bits (sign, then magnitude: both formats order their
 * magnitudes as their values): a 16-bit key, equal for equal values (-0 as +0) and ordered as
 * they are (no NaN), so it sorts a row of 16-bit values exactly as sml_radix_float_key of
 * their floats does, in two byte passes. */
static inline uint32_t sml_radix_half_key(uint16_t bits) {
    uint32_t mag = bits & 0x7FFFu;
    return bits & 0x8000u ? 0x8000u - mag : 0x8000u + mag;
}

#endif
