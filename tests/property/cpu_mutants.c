/* cpu_mutants.c: one correct fp32 row softmax (the "control": tree sums of 16-element
 * leaves, like per-thread partials and a block reduction) and the same code with one bug
 * switched on per mutant. Bugs are written the way they appear in real kernels; each
 * comment says what the GPU form of the bug is. */
#include "cpu_mutants.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_softmax.h"
#include "core/dtype.h"

typedef enum bug {
    B_NONE,
    B_ONLINE,         /* none either: the online path the two online bugs are planted in */
    B_SUM16,          /* the sum accumulated in the input's 16-bit type */
    B_NO_RESCALE,     /* online softmax: exp(m_old - m_new) rescale of the running sum dropped */
    B_INF_MERGE,      /* online merge of two fully masked partials: exp(-inf - -inf) = NaN */
    B_PAD_ZERO,       /* vector tail padded with 0 instead of -inf */
    B_LOG_OF_SOFTMAX, /* log-softmax as log(softmax): -inf once softmax underflows */
    B_NO_DOT,         /* backward without the dot term */
    B_PAST_ROW,       /* writes one element past the end of each row */
    B_NONDET,         /* summation order depends on the call (e.g. atomics): bits vary */
    B_STALE_MAX,      /* the running max is not reset between rows */
    B_TAIL_EXP,       /* the scalar tail uses a different exp than the vector body */
    B_FIRST32,        /* the max is taken over the first 32 columns only (one warp's loads) */
    B_GRID65535,      /* only the first 65,535 rows are processed (grid y limit) */
    B_SHIFT_EXP2,     /* exp2(x * log2e - max * log2e): the max is not subtracted first */
    B_IGNORE_LD,      /* the output is written with stride cols instead of ld */
    B_SUM_OFF_BY_ONE, /* the sum loop stops one element short */
    B_REFUSE_WRITES,  /* refuses padded strides with SML_ERR_UNSUPPORTED, after writing */
    B_REFUSE_DENSE,   /* refuses rows over 100 columns that its registry line promises */
    B_PLAIN_BWD_SUM   /* the backward sum added plainly: a partial sum of huge finite terms
                       * overflows to -inf before it meets a +inf term, -inf + inf = NaN where
                       * the exact sum is +inf (a GPU kernel's lanes adding in fp32) */
} bug;

#define LEAF 16
#define L2E  1.4426950408889634f

static float ld_f(sml_dtype dt, const void *b, int64_t i) { return (float)sml_load(dt, b, i); }
static void st_f(sml_dtype dt, void *b, int64_t i, float v) { sml_store(dt, b, i, (double)v); }

static float tree(const float *v, int64_t n) {
    if (n <= LEAF) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += v[i];
        return s;
    }
    int64_t h = n / 2;
    return tree(v, h) + tree(v + h, n - h);
}

typedef struct part {
    float m, d;
} part;

/* Online softmax over tiles of 4 merged as a tree; the merge guard is what B_INF_MERGE drops,
 * the rescale is what B_NO_RESCALE drops. */
static part online(bug b, const float *x, int64_t n) {
    if (n <= 4) {
        part s = {-INFINITY, 0.0f};
        for (int64_t i = 0; i < n; i++) {
            if (x[i] == -INFINITY) continue;
            float mn = x[i] > s.m ? x[i] : s.m;
            if (mn != s.m) {
                if (b != B_NO_RESCALE) s.d *= expf(s.m - mn);
                s.m = mn;
            }
            s.d += expf(x[i] - s.m);
        }
        return s;
    }
    int64_t h = n / 2;
    part a = online(b, x, h), c = online(b, x + h, n - h);
    float m = a.m > c.m ? a.m : c.m;
    if (m == -INFINITY && b != B_INF_MERGE) return (part){m, 0.0f};
    return (part){m, a.d * expf(a.m - m) + c.d * expf(c.m - m)};
}

static float ex(bug b, float x, float m, int64_t i, int64_t n) {
    if (b == B_SHIFT_EXP2) return exp2f(x * L2E - m * L2E);
    if (b == B_TAIL_EXP && i >= n - n % 4) return exp2f((x - m) * L2E);
    return expf(x - m);
}

/* B_NONDET only: test-only state standing in for the scheduling that decides the order of
 * atomic additions on a GPU; each call flips a pseudo-random coin. */
static _Atomic uint64_t g_calls; /* atomic: the suite runs mutants on several threads */
static int coin(void) {
    uint64_t z = atomic_load(&g_calls) * 0x9E3779B97F4A7C15ull;
    z ^= z >> 31;
    z *= 0xBF58476D1CE4E5B9ull;
    return (int)(z >> 63);
}

static void forward_row(bug b, sml_op op, sml_dtype dt, const float *x, float *y, float *e,
                        int64_t n, float *stale) {
    float m, d;
    if (b == B_ONLINE || b == B_NO_RESCALE || b == B_INF_MERGE) {
        part p = online(b, x, n);
        m = p.m;
        d = p.d;
    } else {
        m = -INFINITY;
        int64_t lim = b == B_FIRST32 && n > 32 ? 32 : n;
        for (int64_t i = 0; i < lim; i++)
            if (x[i] > m) m = x[i];
        if (b == B_PAD_ZERO && n % 8 && m < 0.0f) m = 0.0f; /* zero pads join the max */
        if (b == B_STALE_MAX) {
            if (*stale > m) m = *stale;
            *stale = m;
        }
        for (int64_t i = 0; i < n; i++) e[i] = ex(b, x[i], m, i, n);
        if (b == B_SUM16) {
            d = 0.0f;
            for (int64_t i = 0; i < n; i++) d = (float)sml_round_to(dt, (double)d + (double)e[i]);
        } else if (b == B_NONDET && coin()) {
            for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
                float t = e[i];
                e[i] = e[j];
                e[j] = t;
            }
            d = tree(e, n);
        } else {
            d = tree(e, b == B_SUM_OFF_BY_ONE ? n - 1 : n);
        }
        if (b == B_PAD_ZERO && n % 8) d += (float)(8 - n % 8) * expf(0.0f - m);
    }
    if (op == SML_SOFTMAX) {
        for (int64_t i = 0; i < n; i++) y[i] = ex(b, x[i], m, i, n) / d;
    } else if (b == B_LOG_OF_SOFTMAX) {
        for (int64_t i = 0; i < n; i++) y[i] = logf(expf(x[i] - m) / d);
    } else {
        float l = logf(d);
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - l;
    }
}

/* A backward op's sum with the exact sum's class whatever the order (docs/NUMERICS.md section
 * 2): NaN if a term is NaN or both infinities appear, else the infinity that appears, else the
 * tree sum of the finite terms (the class from kernels/cpu_softmax.c, the sum this file's
 * own). B_PLAIN_BWD_SUM adds every term in the tree. */
static float bwd_sum(bug b, const float *v, int64_t n) {
    if (b == B_NO_DOT) return 0.0f;
    float cls;
    return b != B_PLAIN_BWD_SUM && sml_cpu_sum_class(v, n, &cls) ? cls : tree(v, n);
}

static void backward_row(bug b, sml_op op, const float *y, const float *dy, float *dx, float *e,
                         int64_t n) {
    if (op == SML_SOFTMAX_BWD) {
        for (int64_t i = 0; i < n; i++) e[i] = dy[i] * y[i];
        float dot = bwd_sum(b, e, n);
        for (int64_t i = 0; i < n; i++) dx[i] = y[i] * (dy[i] - dot);
    } else {
        float s = bwd_sum(b, dy, n);
        for (int64_t i = 0; i < n; i++) dx[i] = dy[i] - expf(y[i]) * s;
    }
}

static sml_status run(bug b, const sml_problem *p) {
    int64_t n = p->cols, rows = p->rows;
    if (b == B_REFUSE_DENSE && n > 100) return SML_ERR_UNSUPPORTED;
    if (b == B_REFUSE_WRITES && p->ld != n && rows > 1) {
        sml_status s = run(B_NONE, p);
        return s == SML_OK ? SML_ERR_UNSUPPORTED : s;
    }
    if (b == B_GRID65535 && rows > 65535) rows = 65535;
    if (b == B_NONDET) atomic_fetch_add(&g_calls, 1);
    float *buf = malloc((size_t)n * 4 * sizeof *buf);
    if (!buf) return SML_ERR_OUT_OF_MEMORY;
    float *x = buf, *dy = buf + n, *e = buf + 2 * n, *y = buf + 3 * n;
    float stale = -INFINITY;
    int bwd = sml_op_is_backward(p->op);
    for (int64_t r = 0; r < rows; r++) {
        int64_t in = r * p->ld, out = r * (b == B_IGNORE_LD ? n : p->ld);
        for (int64_t i = 0; i < n; i++) x[i] = ld_f(p->dtype, p->x, in + i);
        if (bwd) {
            for (int64_t i = 0; i < n; i++) dy[i] = ld_f(p->dtype, p->dy, in + i);
            backward_row(b, p->op, x, dy, y, e, n);
        } else {
            forward_row(b, p->op, p->dtype, x, y, e, n, &stale);
        }
        for (int64_t i = 0; i < n; i++) st_f(p->dtype, p->out, out + i, y[i]);
        if (b == B_PAST_ROW) st_f(p->dtype, p->out, out + n, y[n - 1]);
    }
    free(buf);
    return SML_OK;
}

#define LAUNCHER(fn, b)                                         \
    static sml_status fn(sml_handle *h, const sml_problem *p) { \
        (void)h;                                                \
        return run(b, p);                                       \
    }
LAUNCHER(l_control, B_NONE)
LAUNCHER(l_control_online, B_ONLINE)
LAUNCHER(l_sum16, B_SUM16)
LAUNCHER(l_no_rescale, B_NO_RESCALE)
LAUNCHER(l_inf_merge, B_INF_MERGE)
LAUNCHER(l_pad_zero, B_PAD_ZERO)
LAUNCHER(l_log_of_softmax, B_LOG_OF_SOFTMAX)
LAUNCHER(l_no_dot, B_NO_DOT)
LAUNCHER(l_past_row, B_PAST_ROW)
LAUNCHER(l_nondet, B_NONDET)
LAUNCHER(l_stale_max, B_STALE_MAX)
LAUNCHER(l_tail_exp, B_TAIL_EXP)
LAUNCHER(l_first32, B_FIRST32)
LAUNCHER(l_grid65535, B_GRID65535)
LAUNCHER(l_shift_exp2, B_SHIFT_EXP2)
LAUNCHER(l_ignore_ld, B_IGNORE_LD)
LAUNCHER(l_sum_off_by_one, B_SUM_OFF_BY_ONE)
LAUNCHER(l_refuse_writes, B_REFUSE_WRITES)
LAUNCHER(l_refuse_dense, B_REFUSE_DENSE)
LAUNCHER(l_plain_bwd_sum, B_PLAIN_BWD_SUM)

#define F16S ((1u << SML_F16) | (1u << SML_BF16))
#define M(name, ops, dts, fn, bug, survive) \
    {                                       \
        {name,                              \
         "tests/property/cpu_mutants.c",    \
         SML_DEVICE_CPU,                    \
         ops,                               \
         dts,                               \
         1,                                 \
         0,                                 \
         fn,                                \
         bug,                               \
         {NULL, 0.0, NULL},                 \
         NULL,                              \
         0,                                 \
         NULL},                             \
            bug, survive                    \
    }

static const sml_mutant MUTANTS[] = {
    M("mut_control", SML_OPS_ALL, SML_DTYPES_ALL, l_control,
      "none: the correct code every mutant is a copy of", 1),
    M("mut_control_online", SML_OPS_FWD, SML_DTYPES_ALL, l_control_online,
      "none: the correct online path", 1),
    M("mut_no_max", SML_OPS_FWD, SML_DTYPES_ALL, sml_launch_cpu_mutant_no_max,
      "no max subtraction: exp overflows past ~88.7 (kernels/cpu_softmax.c's planted mutant)", 0),
    M("mut_sum16", SML_OPS_FWD, F16S, l_sum16, "the sum accumulated in the input's 16-bit type", 0),
    M("mut_no_rescale", SML_OPS_FWD, SML_DTYPES_ALL, l_no_rescale,
      "online: running sum not rescaled when the max grows", 0),
    M("mut_inf_merge", SML_OPS_FWD, SML_DTYPES_ALL, l_inf_merge,
      "online merge of two all -inf partials gives exp(-inf - -inf) = NaN", 0),
    M("mut_pad_zero", SML_OPS_FWD, SML_DTYPES_ALL, l_pad_zero,
      "vector tail padded with 0 instead of -inf", 0),
    M("mut_log_of_softmax", 1u << SML_LOG_SOFTMAX, SML_DTYPES_ALL, l_log_of_softmax,
      "log-softmax as log(softmax)", 0),
    M("mut_bwd_no_dot", (1u << SML_SOFTMAX_BWD) | (1u << SML_LOG_SOFTMAX_BWD), SML_DTYPES_ALL,
      l_no_dot, "backward without the dot / sum term", 0),
    M("mut_past_row", SML_OPS_ALL, SML_DTYPES_ALL, l_past_row, "writes one element past each row",
      0),
    M("mut_nondet", SML_OPS_ALL, SML_DTYPES_ALL, l_nondet,
      "summation order changes from call to call", 0),
    M("mut_stale_max", SML_OPS_FWD, SML_DTYPES_ALL, l_stale_max,
      "the max is not reset between rows", 0),
    M("mut_tail_exp", 1u << SML_SOFTMAX, SML_DTYPES_ALL, l_tail_exp,
      "the scalar tail's exp differs from the vector body's", 0),
    M("mut_first32", SML_OPS_FWD, SML_DTYPES_ALL, l_first32,
      "the max covers the first 32 columns only", 0),
    M("mut_grid65535", SML_OPS_ALL, SML_DTYPES_ALL, l_grid65535,
      "rows past 65,535 are never computed", 0),
    M("mut_shift_exp2", SML_OPS_FWD, SML_DTYPES_ALL, l_shift_exp2,
      "exp2(x*log2e - max*log2e): max not subtracted first", 0),
    M("mut_ignore_ld", SML_OPS_ALL, SML_DTYPES_ALL, l_ignore_ld,
      "output written with stride cols, not ld", 0),
    M("mut_sum_off_by_one", SML_OPS_FWD, SML_DTYPES_ALL, l_sum_off_by_one,
      "the sum skips the last element", 0),
    M("mut_refuse_writes", SML_OPS_ALL, SML_DTYPES_ALL, l_refuse_writes,
      "refuses a padded stride with SML_ERR_UNSUPPORTED after writing the output", 0),
    M("mut_refuse_dense", SML_OPS_FWD, SML_DTYPES_ALL, l_refuse_dense,
      "refuses rows its registry line promises (over 100 columns)", 0),
    M("mut_plain_bwd_sum", (1u << SML_SOFTMAX_BWD) | (1u << SML_LOG_SOFTMAX_BWD), SML_DTYPES_ALL,
      l_plain_bwd_sum, "the backward sum added plainly, without the exact sum's class", 0),
};

size_t sml_mutant_count(void) { return sizeof MUTANTS / sizeof MUTANTS[0]; }
const sml_mutant *sml_mutant_at(size_t i) { return i < sml_mutant_count() ? &MUTANTS[i] : NULL; }

const sml_kernel *sml_mutant_find(const char *name, void *unused) {
    (void)unused;
    for (size_t i = 0; i < sml_mutant_count(); i++)
        if (!strcmp(MUTANTS[i].kernel.name, name)) return &MUTANTS[i].kernel;
    return NULL;
}
