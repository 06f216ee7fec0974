/* cpu_softmax.c: the CPU backends, computed in fp32 the way a GPU kernel computes, so that
 * the property suite and the numerics contract run on every commit without a GPU.
 *
 * Sums are trees over leaves of LEAF sequential additions, like per-thread partial sums
 * followed by a shared-memory tree, which keeps every summation path within the contract's
 * depth (docs/NUMERICS.md). Special values come out of plain IEEE arithmetic: the max skips
 * NaN, and NaN, +inf or an all -inf row turn the sum into NaN through x - max. */
#include "kernels/cpu_softmax.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/launchers.h"
#include "core/dtype.h"

#define LEAF 16

static float load_f(sml_dtype dt, const void *base, int64_t i) {
    switch (dt) {
    case SML_F32: return ((const float *)base)[i];
    case SML_F16: return (float)sml_half_to_double(((const uint16_t *)base)[i]);
    default: return (float)sml_bf16_to_double(((const uint16_t *)base)[i]);
    }
}

static void store_f(sml_dtype dt, void *base, int64_t i, float v) {
    switch (dt) {
    case SML_F32: ((float *)base)[i] = v; break;
    case SML_F16: ((uint16_t *)base)[i] = sml_float_to_half(v); break;
    default: ((uint16_t *)base)[i] = sml_float_to_bf16(v); break;
    }
}

static float sum_tree(const float *v, int64_t n) {
    if (n <= LEAF) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += v[i];
        return s;
    }
    int64_t half = n / 2;
    return sum_tree(v, half) + sum_tree(v + half, n - half);
}

/* See cpu_softmax.h. */
int sml_cpu_sum_class(const float *v, int64_t n, float *cls) {
    int pinf = 0, ninf = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) {
            *cls = NAN;
            return 1;
        }
        if (v[i] == INFINITY) pinf = 1;
        if (v[i] == -INFINITY) ninf = 1;
    }
    if (!pinf && !ninf) return 0;
    *cls = pinf && ninf ? NAN : pinf ? INFINITY : -INFINITY;
    return 1;
}

/* The sum of a backward op: its class is the exact sum's, whatever the order (docs/NUMERICS.md
 * section 2): NaN if a term is NaN or both infinities appear, else the infinity that appears,
 * else the tree sum of the finite terms. A plain tree sum can overflow a partial sum of huge
 * finite terms to -inf before it meets a +inf term, and -inf + inf = NaN. */
static float sum_exact_class(const float *v, int64_t n) {
    float cls;
    return sml_cpu_sum_class(v, n, &cls) ? cls : sum_tree(v, n);
}

static float row_max(const float *x, int64_t n) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}

/* Online softmax state: the max seen and the sum of exp(x - max). */
typedef struct online {
    float m, d;
} online;

static online online_leaf(const float *x, int64_t n) {
    online s = {-INFINITY, 0.0f};
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        /* Adds exactly 0, and would otherwise make -inf - -inf = NaN while m is still -inf. */
        if (v == -INFINITY) continue;
        float mn = v > s.m ? v : s.m;
        if (mn != s.m) {
            s.d *= expf(s.m - mn);
            s.m = mn;
        }
        s.d += expf(v - s.m); /* +inf: inf - inf = NaN, the row's NaN as in the naive form */
    }
    return s;
}

static online online_merge(online a, online b) {
    float m = a.m > b.m ? a.m : b.m;
    if (m == -INFINITY) return (online){m, a.d + b.d};
    return (online){m, a.d * expf(a.m - m) + b.d * expf(b.m - m)};
}

static online online_tree(const float *x, int64_t n) {
    if (n <= LEAF) return online_leaf(x, n);
    int64_t half = n / 2;
    return online_merge(online_tree(x, half), online_tree(x + half, n - half));
}

/* Forward row: x in, y out (may alias), e is scratch. */
static void forward_row(sml_cpu_variant v, sml_op op, const float *x, float *y, float *e,
                        int64_t n) {
    float m, d;
    if (v == SML_CPU_ONLINE) {
        online s = online_tree(x, n);
        m = s.m;
        d = s.d;
    } else {
        m = v == SML_CPU_MUTANT_NO_MAX ? 0.0f : row_max(x, n);
        for (int64_t i = 0; i < n; i++) e[i] = expf(x[i] - m);
        d = sum_tree(e, n);
    }
    if (op == SML_SOFTMAX) {
        for (int64_t i = 0; i < n; i++) y[i] = expf(x[i] - m) / d;
    } else {
        float l = logf(d);
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - l;
    }
}

static void backward_row(sml_op op, const float *y, const float *dy, float *dx, float *e,
                         int64_t n) {
    if (op == SML_SOFTMAX_BWD) {
        for (int64_t i = 0; i < n; i++) e[i] = dy[i] * y[i];
        float dot = sum_exact_class(e, n);
        for (int64_t i = 0; i < n; i++) dx[i] = y[i] * (dy[i] - dot);
    } else {
        float s = sum_exact_class(dy, n);
        for (int64_t i = 0; i < n; i++) dx[i] = dy[i] - expf(y[i]) * s;
    }
}

sml_status sml_cpu_softmax(sml_cpu_variant v, const sml_problem *p) {
    if (!p) return SML_ERR_NULL_POINTER;
    if ((unsigned)v >= SML_CPU_VARIANT_COUNT) return SML_ERR_INVALID_ARG;
    if (p->rows == 0 || p->cols == 0) return SML_OK;
    int64_t n = p->cols;
    int bwd = sml_op_is_backward(p->op);
    float *buf = malloc((size_t)n * 4 * sizeof *buf);
    if (!buf) return SML_ERR_OUT_OF_MEMORY;
    float *x = buf, *dy = buf + n, *e = buf + 2 * n, *y = buf + 3 * n;
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t base = r * p->ld;
        for (int64_t i = 0; i < n; i++) x[i] = load_f(p->dtype, p->x, base + i);
        if (bwd) {
            for (int64_t i = 0; i < n; i++) dy[i] = load_f(p->dtype, p->dy, base + i);
            backward_row(p->op, x, dy, y, e, n);
        } else {
            forward_row(v, p->op, x, y, e, n);
        }
        for (int64_t i = 0; i < n; i++) store_f(p->dtype, p->out, base + i, y[i]);
    }
    free(buf);
    return SML_OK;
}

sml_status sml_launch_cpu_naive(sml_handle *h, const sml_problem *p) {
    (void)h;
    return sml_cpu_softmax(SML_CPU_NAIVE, p);
}

sml_status sml_launch_cpu_online(sml_handle *h, const sml_problem *p) {
    (void)h;
    return sml_cpu_softmax(SML_CPU_ONLINE, p);
}

sml_status sml_launch_cpu_mutant_no_max(sml_handle *h, const sml_problem *p) {
    (void)h;
    return sml_cpu_softmax(SML_CPU_MUTANT_NO_MAX, p);
}
