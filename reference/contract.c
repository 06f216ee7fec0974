/* contract.c: the numerics contract's tolerances, the one place they live. Every constant
 * and formula here is derived in docs/NUMERICS.md ("Error bounds"); change both together.
 *
 * The model is a kernel that computes in fp32 (u = 2^-24) with these operations:
 *   t = x - max (rounded), exp through exp2(t * log2 e) or expf (<= 2 ulp), a sum whose
 *   every path has at most h(n) roundings, each possibly also an online rescale
 *   (multiply by an approximate exp), a division or reciprocal-multiply (<= 2 ulp), a log
 *   (<= 3 ulp, or 2^-21.41 absolute on [0.5, 2]), and for 16-bit outputs a final
 *   round-to-nearest-even. The bounds are first-order sums of those errors. */
#include <float.h>
#include <math.h>

#include "reference/check.h"
#include "core/dtype.h"
#include "core/dtype_inline.h"

#define U 0x1p-24 /* fp32 unit roundoff */
#define C_ARG \
    2.25               /* exp argument: the subtraction (1), the log2 e scaling (1) and
                              log2 e rounded to fp32 (0.22), per unit of |x - max| */
#define C_SCALE   1.25 /* exp(y) in log_softmax_bwd: the log2 e scaling only */
#define C_EXP     4.0  /* exp / exp2 approximation: 2 ulp = 4 u relative */
#define C_DIV     4.0  /* division, reciprocal + multiply, or __fdividef: 2 ulp */
#define C_LOG_ABS 6.0  /* log on [0.5, 2]: 2^-21.41 absolute ~ 6 u */
#define C_LOG_REL 7.0  /* log elsewhere: 3 ulp (6 u) relative, + 1 for the ln 2 scaling */
#define C_LEVEL \
    (2.0 + C_EXP)                    /* per summation level: the addition, and an online rescale
                              (an approximate exp factor and its multiply) */
#define K_SEQ        32              /* sequential additions a path may have beyond a binary tree */
#define SLACK        (1.0 + 0x1p-10) /* second-order terms: every first-order total used is < 2^-10 */
#define FLUSH        FLT_MIN       /* results below fp32's smallest normal may be flushed to zero */
#define HEADROOM     (FLT_MAX / 2) /* intermediates past this may overflow fp32 after rounding */
#define EXP_OVERFLOW 88.0          /* exp(y) overflows fp32 a little above 88.72 */

int sml_check_sum_depth(int64_t n) {
    if (n <= 1) return 0;
    int lg = 64 - __builtin_clzll((unsigned long long)(n - 1)); /* the least lg with 2^lg >= n */
    int64_t h = K_SEQ + lg;
    return (int)(n - 1 < h ? n - 1 : h);
}

/* fmax(a, b) for a and b that are not -0 (magnitudes): the larger, a NaN ignored (both NaN:
 * a NaN). libm's fmax is a call per element; the facts only compare these maxima with
 * HEADROOM, and which NaN comes out of two is all that could differ. */
static inline double fmax_of(double a, double b) { return isnan(a) || b > a ? b : a; }

void sml_row_facts_compute(sml_op op, sml_dtype dt, const double *x, const double *dy, int64_t n,
                           sml_row_facts *f) {
    sml_row_facts_compute_ex(op, dt, x, dy, NULL, n, f);
}

void sml_row_facts_compute_ex(sml_op op, sml_dtype dt, const double *x, const double *dy,
                              const double *ex, int64_t n, sml_row_facts *f) {
    (void)dt; /* the rules are dtype-independent: fp32 does the work for every dtype */
    f->cols = n;
    f->max = -INFINITY;
    f->sum = f->mean_abs_t = f->dot = f->dot_abs = 0.0;
    f->may_overflow = 0;
    for (int64_t j = 0; j < n; j++)
        if (x[j] > f->max) f->max = x[j];
    if (op == SML_SOFTMAX || op == SML_LOG_SOFTMAX) {
        double weighted = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double t = x[j] - f->max;
            if (t == -INFINITY) continue;
            double e = ex ? ex[j] : exp(t);
            f->sum += e;
            weighted += e * fabs(t);
        }
        f->mean_abs_t = weighted / f->sum;
        return;
    }
    double big = 0.0, worst_out = 0.0;
    if (op == SML_SOFTMAX_BWD) {
        for (int64_t j = 0; j < n; j++) {
            f->sum += x[j];
            f->dot += dy[j] * x[j];
            f->dot_abs += fabs(dy[j] * x[j]);
        }
        for (int64_t j = 0; j < n; j++) {
            double m = fmax_of(fabs(dy[j]), fabs(x[j]));
            big = fmax_of(big, m);
            worst_out = fmax_of(worst_out, fabs(x[j]) * (fabs(dy[j]) + f->dot_abs));
        }
        f->may_overflow =
            f->dot_abs > HEADROOM || big + f->dot_abs > HEADROOM || worst_out > HEADROOM;
    } else {
        for (int64_t j = 0; j < n; j++) {
            f->sum += ex ? ex[j] : exp(x[j]);
            f->dot += dy[j];
            f->dot_abs += fabs(dy[j]);
            big = fmax_of(big, fabs(dy[j]));
        }
        double e_max = exp(f->max);
        f->may_overflow = f->max > EXP_OVERFLOW || f->dot_abs > HEADROOM ||
                          e_max * f->dot_abs > HEADROOM || big + e_max * f->dot_abs > HEADROOM;
    }
}

/* What the bound takes of a row besides each element: the same for every element of it, so
 * computed once a row where a whole row is bounded (sml_check_allowed_row). */
typedef struct row_terms {
    double h;       /* the summation depth */
    double sum_rel; /* the sum's relative error (forward) */
    double l;       /* log of the row's sum (log_softmax) */
    double n;       /* the row's length */
} row_terms;

static row_terms terms_of(sml_op op, const sml_row_facts *row) {
    row_terms k;
    k.h = sml_check_sum_depth(row->cols);
    k.sum_rel = U * (C_ARG * row->mean_abs_t + C_EXP + C_LEVEL * k.h);
    k.l = op == SML_LOG_SOFTMAX ? log(row->sum) : 0.0;
    k.n = (double)row->cols;
    return k;
}

/* e_i: exp(x_i), for log_softmax_bwd only. */
static inline double compute_bound_k(sml_op op, const sml_row_facts *row, const row_terms *k,
                                     double x_i, double dy_i, double want, double e_i) {
    const double h = k->h, sum_rel = k->sum_rel;
    switch (op) {
    case SML_SOFTMAX: {
        double t = x_i - row->max;
        double rel = U * (C_ARG * fabs(t) + C_EXP + C_DIV) + sum_rel;
        return fabs(want) * rel * (1.0 + rel) * SLACK + FLUSH;
    }
    case SML_LOG_SOFTMAX: {
        double t = fabs(x_i - row->max), l = k->l;
        return (U * (2.0 * t + (1.0 + C_LOG_REL) * l + C_LOG_ABS) + sum_rel) * SLACK + FLUSH;
    }
    case SML_SOFTMAX_BWD: {
        double y = fabs(x_i), n = k->n;
        return U * y * (2.0 * (fabs(dy_i) + fabs(row->dot)) + (h + 1.0) * row->dot_abs) * SLACK +
               FLUSH * (1.0 + y * (n + 1.0));
    }
    case SML_LOG_SOFTMAX_BWD: {
        double e = e_i, n = k->n;
        double b = U * fabs(dy_i) + FLUSH;
        if (e > 0.0)
            b += U * e * ((C_SCALE * fabs(x_i) + C_EXP + 2.0) * fabs(row->dot) + h * row->dot_abs) +
                 FLUSH * e * n;
        return b * SLACK;
    }
    default: return NAN;
    }
}

static inline sml_bound bound_parts_k(sml_op op, sml_dtype dt, const sml_row_facts *row,
                                      const row_terms *k, double x_i, double dy_i, double want,
                                      double e_i) {
    sml_bound b = {0.0, 0.0};
    /* A -inf logit's softmax is exactly 0 in every correct kernel: exp(-inf) = 0. */
    if (op == SML_SOFTMAX && x_i == -INFINITY) return b;
    b.compute = compute_bound_k(op, row, k, x_i, dy_i, want, e_i);
    /* fp32 work rounded once to a 16-bit output: at most half an ulp of where it lands. */
    if (dt != SML_F32) b.rounding = 0.5 * sml_ulp16_of(dt, fabs(want) + b.compute);
    return b;
}

static double exp_for(sml_op op, double x_i) { return op == SML_LOG_SOFTMAX_BWD ? exp(x_i) : 0.0; }

sml_bound sml_check_bound_parts(sml_op op, sml_dtype dt, const sml_row_facts *row, double x_i,
                                double dy_i, double want) {
    row_terms k = terms_of(op, row);
    return bound_parts_k(op, dt, row, &k, x_i, dy_i, want, exp_for(op, x_i));
}

/* The distance from got (a finite 16-bit value) to its neighbour on want's side (the next
 * 16-bit value up when want > got, else down): got is the rounding of exactly the values
 * within half of it. Past the largest finite value the neighbour is infinity, which rounding
 * treats as 2^(emax+1): the gap is the top binade's quantum. So the gap is the quantum of
 * got's binade (of the subnormals', below the normals; of the smallest subnormal at 0), but
 * half of it toward zero from a power of two that is not the smallest normal, whose neighbour
 * below lies in the binade under it. test_check compares this with the neighbour computed
 * from the bits (encode, step, decode) for every finite value of both formats. */
static inline double gap_toward(sml_dtype dt, double got, double want) {
    const sml_fmt16 *f = dt == SML_F16 ? &SML_FMT_HALF : &SML_FMT_BF16;
    const int emin = sml_fmt_emin(f);
    uint64_t b = sml_to_bits(got) & SML_D_MAG;
    int e = (int)(b >> 52) - 1023; /* got's binade (a 16-bit subnormal is a normal double) */
    /* A zero's e is -1023, below emin: its gap is the smallest subnormal's quantum, and it is
     * no power of two above emin. No branches: which way each test goes changes from element
     * to element of a row, and a mispredicted branch costs more than this whole function. */
    int ge = e > emin ? e : emin;
    int away = (want > got) == (got > 0.0);
    int half = !away & (e > emin) & ((b & (SML_D_MANT - 1)) == 0);
    return sml_pow2(ge - f->mbits - half); /* half of 2^k is 2^(k-1), k - 1 still normal */
}

/* sml_check_allowed with the row's terms k and e_i = exp(x_i) (log_softmax_bwd) given. The
 * 16-bit rounding part of the bound is not needed: it is never 0 (an ulp is positive), so
 * `compute == 0 && rounding == 0` holds exactly where bound_parts_k returns both 0, a -inf
 * logit's softmax. */
static inline double allowed_k(sml_op op, sml_dtype dt, const sml_row_facts *row,
                               const row_terms *k, double x_i, double dy_i, double want, double got,
                               double e_i) {
    if (op == SML_SOFTMAX && x_i == -INFINITY) return 0.0;
    double compute = compute_bound_k(op, row, k, x_i, dy_i, want, e_i);
    if (dt == SML_F32) return compute;
    /* compute, or where got != want compute + half the gap: the half gap masked to +0 rather
     * than a branch (compute is at least FLUSH, NaN or inf, so adding +0 leaves its bits) */
    uint64_t keep = (uint64_t)0 - (uint64_t)(got != want);
    return compute + sml_from_bits(sml_to_bits(0.5 * gap_toward(dt, got, want)) & keep);
}

double sml_check_allowed(sml_op op, sml_dtype dt, const sml_row_facts *row, double x_i, double dy_i,
                         double want, double got) {
    row_terms k = terms_of(op, row);
    return allowed_k(op, dt, row, &k, x_i, dy_i, want, got, exp_for(op, x_i));
}

double sml_check_bound(sml_op op, sml_dtype dt, const sml_row_facts *row, double x_i, double dy_i,
                       double want) {
    sml_bound b = sml_check_bound_parts(op, dt, row, x_i, dy_i, want);
    return b.compute + b.rounding;
}

/* The row loops below, one copy per op and dtype: with both constant the compiler folds each
 * element's switches and tests away (the same operations on the same values). */
static inline void allowed_loop(sml_op op, sml_dtype dt, const sml_row_facts *row,
                                const row_terms *k, const double *x, const double *dy,
                                const double *ex, const double *want, const double *got, int64_t n,
                                double *allowed) {
    for (int64_t j = 0; j < n; j++) {
        double e_j = op != SML_LOG_SOFTMAX_BWD ? 0.0 : ex ? ex[j] : exp(x[j]);
        allowed[j] = allowed_k(op, dt, row, k, x[j], dy ? dy[j] : 0.0, want[j], got[j], e_j);
    }
}

static inline void bound_loop(sml_op op, sml_dtype dt, const sml_row_facts *row, const row_terms *k,
                              const double *x, const double *dy, const double *ex,
                              const double *want, int64_t n, double *bound) {
    for (int64_t j = 0; j < n; j++) {
        double e_j = op != SML_LOG_SOFTMAX_BWD ? 0.0 : ex ? ex[j] : exp(x[j]);
        sml_bound b = bound_parts_k(op, dt, row, k, x[j], dy ? dy[j] : 0.0, want[j], e_j);
        bound[j] = b.compute + b.rounding;
    }
}

#define FOR_OP_DTYPE(CALL)                                                                    \
    switch (op * SML_DTYPE_COUNT + dt) {                                                      \
    case SML_SOFTMAX *SML_DTYPE_COUNT + SML_F32: CALL(SML_SOFTMAX, SML_F32); break;           \
    case SML_SOFTMAX *SML_DTYPE_COUNT + SML_F16: CALL(SML_SOFTMAX, SML_F16); break;           \
    case SML_SOFTMAX *SML_DTYPE_COUNT + SML_BF16: CALL(SML_SOFTMAX, SML_BF16); break;         \
    case SML_LOG_SOFTMAX *SML_DTYPE_COUNT + SML_F32: CALL(SML_LOG_SOFTMAX, SML_F32); break;   \
    case SML_LOG_SOFTMAX *SML_DTYPE_COUNT + SML_F16: CALL(SML_LOG_SOFTMAX, SML_F16); break;   \
    case SML_LOG_SOFTMAX *SML_DTYPE_COUNT + SML_BF16: CALL(SML_LOG_SOFTMAX, SML_BF16); break; \
    case SML_SOFTMAX_BWD *SML_DTYPE_COUNT + SML_F32: CALL(SML_SOFTMAX_BWD, SML_F32); break;   \
    case SML_SOFTMAX_BWD *SML_DTYPE_COUNT + SML_F16: CALL(SML_SOFTMAX_BWD, SML_F16); break;   \
    case SML_SOFTMAX_BWD *SML_DTYPE_COUNT + SML_BF16: CALL(SML_SOFTMAX_BWD, SML_BF16); break; \
    case SML_LOG_SOFTMAX_BWD *SML_DTYPE_COUNT + SML_F32: CALL(SML_LOG_SOFTMAX_BWD, SML_F32);  \
        break;                                                                                \
    case SML_LOG_SOFTMAX_BWD *SML_DTYPE_COUNT + SML_F16: CALL(SML_LOG_SOFTMAX_BWD, SML_F16);  \
        break;                                                                                \
    case SML_LOG_SOFTMAX_BWD *SML_DTYPE_COUNT + SML_BF16:                                     \
        CALL(SML_LOG_SOFTMAX_BWD, SML_BF16);                                                  \
        break;                                                                                \
    default: CALL(op, dt); break;                                                             \
    }

void sml_check_allowed_row(sml_op op, sml_dtype dt, const sml_row_facts *row, const double *x,
                           const double *dy, const double *ex, const double *want,
                           const double *got, int64_t n, double *allowed) {
    row_terms k = terms_of(op, row);
#define ALLOWED_(OP, DT) allowed_loop(OP, DT, row, &k, x, dy, ex, want, got, n, allowed)
    FOR_OP_DTYPE(ALLOWED_)
#undef ALLOWED_
}

void sml_check_bound_row(sml_op op, sml_dtype dt, const sml_row_facts *row, const double *x,
                         const double *dy, const double *ex, const double *want, int64_t n,
                         double *bound) {
    row_terms k = terms_of(op, row);
#define BOUND_(OP, DT) bound_loop(OP, DT, row, &k, x, dy, ex, want, n, bound)
    FOR_OP_DTYPE(BOUND_)
#undef BOUND_
}

int sml_check_inf_allowed(sml_dtype dt, const sml_row_facts *row, double want, const sml_bound *b,
                          double got) {
    if (row->may_overflow) return 1;
    if (!isinf(got) || signbit(got) != signbit(want)) return 0;
    /* Values at or past max + ulp(max)/2 round to infinity (the tie goes to the even, inf). */
    double top = sml_dtype_max(dt), threshold = top + 0.5 * sml_ulp(dt, top);
    return fabs(want) + b->compute >= threshold;
}

int sml_check_nan_allowed(sml_op op, const sml_row_facts *row, double x_i) {
    /* log_softmax_bwd with an infinite S: dx_i = dy_i - exp(y_i) * S is -+inf in exact
     * arithmetic, but exp(y_i) is 0 in fp32 once it falls below FLT_MIN (flush) or the
     * smallest subnormal, and 0 * inf is NaN. fp32 work cannot tell these apart, so NaN is
     * accepted there (PyTorch gives NaN too). */
    return op == SML_LOG_SOFTMAX_BWD && isinf(row->dot) && exp(x_i) < FLUSH;
}
