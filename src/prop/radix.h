/* radix.h: sorting 64-bit keys in linear time, for the properties that order a row (monotonic
 * orders each row's outputs by its inputs: a comparison sort through qsort's callback was a
 * sixth of the suite's host time). */
#ifndef SML_PROP_RADIX_H
#define SML_PROP_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Sort a[0..n) ascending; tmp holds n keys of scratch. */
void sml_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* The same for keys whose low 32 bits are already ascending (an index: a[i] & 0xFFFFFFFF ==
 * i, as monotonic builds them): the passes over the low half, which would only put the
 * indices back in the order they are in, are not made. The same result as
 * sml_radix_sort_u64 on such keys. */
void sml_radix_sort_u64_hi(uint64_t *a, uint64_t *tmp, size_t n);

/* A float's value as a key that sorts as the values do (-0 as +0; no NaN). */
uint32_t sml_radix_float_key(float x);

#endif
