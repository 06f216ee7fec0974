/* dtype.h: exact conversions between double/float and fp16/bf16 bit patterns, element
 * load/store for any sml_dtype, and ulp arithmetic. Used by the reference, the checker,
 * the CPU backends, the property engine and the benchmark (host side only).
 *
 * Rounding is round-to-nearest-even straight from the source precision (double -> fp16
 * rounds once, never through float), with NaN, infinities, subnormals and -0 kept. */
#ifndef SML_REFERENCE_DTYPE_H
#define SML_REFERENCE_DTYPE_H

#include <stdint.h>
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

double sml_half_to_double(uint16_t h);
double sml_bf16_to_double(uint16_t b);
uint16_t sml_double_to_half(double d);
uint16_t sml_double_to_bf16(double d);
uint16_t sml_float_to_half(float f);
uint16_t sml_float_to_bf16(float f);

/* Element i of a buffer of dtype dt, as a double (exact for every dtype). */
double sml_load(sml_dtype dt, const void *base, int64_t i);
/* Store v rounded to nearest-even into element i of a buffer of dtype dt. */
void sml_store(sml_dtype dt, void *base, int64_t i, double v);
/* v rounded to dtype dt and back (the value a kernel should ideally produce). */
double sml_round_to(sml_dtype dt, double v);

/* The same a row at a time: elements [i, i + n) of a buffer of dtype dt as doubles into out
 * (sml_load of each); v[0..n) stored into elements [i, i + n) (sml_store of each); v[0..n)
 * replaced by sml_round_to of each. Bit for bit what the one-element functions give, without a
 * call and a switch per element: the property engine converts every element of every case. */
void sml_load_n(sml_dtype dt, const void *base, int64_t i, int64_t n, double *out);
void sml_store_n(sml_dtype dt, void *base, int64_t i, int64_t n, const double *v);
void sml_round_n(sml_dtype dt, double *v, int64_t n);

/* Size of one unit in the last place of dtype dt at magnitude |v| (for v = 0: the
 * smallest subnormal). Finite v only. */
double sml_ulp(sml_dtype dt, double v);
/* Distance in representable steps between two finite values of dtype dt (both already
 * representable in dt); 0 for +0 vs -0. */
int64_t sml_ulp_distance(sml_dtype dt, double a, double b);

/* Largest finite value, smallest normal, machine epsilon (2^-p+1) of each dtype. */
double sml_dtype_max(sml_dtype dt);
double sml_dtype_min_normal(sml_dtype dt);
double sml_dtype_eps(sml_dtype dt);

#ifdef __cplusplus
}
#endif
#endif
