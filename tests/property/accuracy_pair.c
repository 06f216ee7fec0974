/* accuracy_pair.c: see accuracy_pair.h. One row at a time, in fp32: the max, e_i = exp(x_i -
 * max), the sum as a tree over 16-element leaves, y_i = e_i / sum (softmax) or
 * (x_i - max) - log(sum) (log_softmax). Only the exp differs between the two. */
#include "accuracy_pair.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

#define LOG2E 1.4426950408889634f

typedef float (*exp_fn)(float);

static float exp_accurate(float t) { return expf(t); }
/* __expf: ex2.approx of the product rounded to fp32; the rounding of t * log2(e) costs
 * |t| * 2^-24 relative, on top of the subtraction's. */
static float exp_fast(float t) { return exp2f(t * LOG2E); }

static float tree(const float *v, int64_t n) {
    if (n <= 16) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += v[i];
        return s;
    }
    int64_t h = n / 2;
    return tree(v, h) + tree(v + h, n - h);
}

/* The narrow sum's addend: x with its significand cut to 16 bits (toward zero). */
static float narrow16(float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    b &= 0xFFFFFF00u;
    memcpy(&x, &b, 4);
    return x;
}

static sml_status run(exp_fn ex, int narrow, const sml_problem *p) {
    int64_t n = p->cols;
    float *buf = malloc((size_t)(n ? n : 1) * 2 * sizeof *buf);
    if (!buf) return SML_ERR_OUT_OF_MEMORY;
    float *x = buf, *e = buf + n;
    for (int64_t r = 0; r < p->rows; r++) {
        for (int64_t i = 0; i < n; i++) x[i] = (float)sml_load(p->dtype, p->x, r * p->ld + i);
        float m = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            if (x[i] > m) m = x[i];
        for (int64_t i = 0; i < n; i++) e[i] = narrow ? narrow16(ex(x[i] - m)) : ex(x[i] - m);
        float d = tree(e, n);
        if (narrow)
            for (int64_t i = 0; i < n; i++) e[i] = ex(x[i] - m);
        for (int64_t i = 0; i < n; i++) {
            float y = p->op == SML_SOFTMAX ? e[i] / d : (x[i] - m) - logf(d);
            sml_store(p->dtype, p->out, r * p->ld + i, (double)y);
        }
    }
    free(buf);
    return SML_OK;
}

static sml_status l_accurate(sml_handle *h, const sml_problem *p) {
    (void)h;
    return run(exp_accurate, 0, p);
}
static sml_status l_fast(sml_handle *h, const sml_problem *p) {
    (void)h;
    return run(exp_fast, 0, p);
}
static sml_status l_narrow(sml_handle *h, const sml_problem *p) {
    (void)h;
    return run(exp_accurate, 1, p);
}

#define PAIR(name, fn, what)                                                                       \
    {                                                                                              \
        name, "tests/property/accuracy_pair.c", SML_DEVICE_CPU, SML_OPS_FWD, SML_DTYPES_ALL, 1, 0, \
            fn, what, {NULL, 0.0, NULL}, NULL, 0, NULL                                             \
    }

const sml_kernel sml_acc_accurate_exp =
    PAIR("acc_expf", l_accurate, "fp32 forward softmax with expf");
const sml_kernel sml_acc_fast_exp =
    PAIR("acc_fast_exp", l_fast, "the same with a fast exp: exp2f(t * log2 e), as __expf");

const sml_kernel sml_acc_narrow_sum =
    PAIR("acc_narrow_sum", l_narrow,
         "the same with expf, summing exp values cut to 16 significant bits");

const sml_kernel *sml_acc_pair_find(const char *name, void *unused) {
    (void)unused;
    if (name && !strcmp(name, sml_acc_accurate_exp.name)) return &sml_acc_accurate_exp;
    if (name && !strcmp(name, sml_acc_fast_exp.name)) return &sml_acc_fast_exp;
    if (name && !strcmp(name, sml_acc_narrow_sum.name)) return &sml_acc_narrow_sum;
    return NULL;
}
