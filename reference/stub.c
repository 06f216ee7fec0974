/* Placeholder so the tree links until the reference lands (issue: foundation). */
#include <math.h>
#include "reference/check.h"
#include "reference/dtype.h"
#include "reference/reference.h"
double sml_half_to_double(uint16_t h) { return h; }
double sml_bf16_to_double(uint16_t b) { return b; }
uint16_t sml_double_to_half(double d) { return (uint16_t)d; }
uint16_t sml_double_to_bf16(double d) { return (uint16_t)d; }
uint16_t sml_float_to_half(float f) { return (uint16_t)f; }
uint16_t sml_float_to_bf16(float f) { return (uint16_t)f; }
double sml_load(sml_dtype dt, const void *base, int64_t i) { (void)dt; (void)base; (void)i; return NAN; }
void sml_store(sml_dtype dt, void *base, int64_t i, double v) { (void)dt; (void)base; (void)i; (void)v; }
double sml_round_to(sml_dtype dt, double v) { (void)dt; return v; }
double sml_ulp(sml_dtype dt, double v) { (void)dt; (void)v; return NAN; }
int64_t sml_ulp_distance(sml_dtype dt, double a, double b) { (void)dt; (void)a; (void)b; return -1; }
double sml_dtype_max(sml_dtype dt) { (void)dt; return NAN; }
double sml_dtype_min_normal(sml_dtype dt) { (void)dt; return NAN; }
double sml_dtype_eps(sml_dtype dt) { (void)dt; return NAN; }
sml_status sml_ref_run(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                       const void *x, const void *dy, double *out) {
    (void)op; (void)dt; (void)rows; (void)cols; (void)ld; (void)x; (void)dy; (void)out;
    return SML_ERR_INTERNAL;
}
sml_status sml_check(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                     const void *x, const void *dy, const void *out, sml_check_report *r) {
    (void)op; (void)dt; (void)rows; (void)cols; (void)ld; (void)x; (void)dy; (void)out; (void)r;
    return SML_ERR_INTERNAL;
}
sml_status sml_check_against(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                             const void *x, const void *dy, const double *want,
                             const void *out, sml_check_report *r) {
    (void)op; (void)dt; (void)rows; (void)cols; (void)ld; (void)x; (void)dy; (void)want; (void)out; (void)r;
    return SML_ERR_INTERNAL;
}
