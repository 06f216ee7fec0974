/* check.h: the numerics contract's checker. Compares a kernel's output (host memory, the
 * problem's dtype and stride) with the double-precision reference under the tolerances of
 * docs/NUMERICS.md, and says where the worst error is. The tolerances are implemented in
 * reference/contract.c and nowhere else; this header exposes them for tests and docs. */
#ifndef SML_REFERENCE_CHECK_H
#define SML_REFERENCE_CHECK_H

#include <stdint.h>
#include "softmax_lab.h"

/* From this many columns a failure with finite errors names the summation-depth rule: a
 * serial sum stays within the bound on shorter rows. */
#define SML_CHECK_LONG_ROW 65536

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sml_check_report {
    int pass;             /* 1: every element within the contract */
    int64_t checked;      /* elements compared */
    int64_t bad;          /* elements outside their bound (special-value mismatches included) */
    int64_t nan_mismatch; /* NaN where the reference has none, or the reverse */
    int64_t inf_mismatch; /* +-inf where the reference has none, or the reverse / wrong sign */
    double worst_ratio;   /* max over elements of |got - want| / allowed (>1 fails) */
    double worst_ulps;    /* at the worst element: error in ulps of the output dtype */
    double worst_rel;     /* at the worst element: |got - want| / |want| (inf if want == 0) */
    double worst_abs;
    int64_t worst_row, worst_col; /* -1 when nothing was compared */
    double got, want;             /* at the worst element */
    double row_max, row_sum;      /* of the worst row's input: forward: max and sum of exp(x - max);
                                backward: max of y and sum of y (softmax_bwd) or exp(y) */
    char message[320];            /* one line a person can read: verdict, worst error and where; on
                               a row of SML_CHECK_LONG_ROW columns or more with finite errors,
                               the summation-depth rule (docs/NUMERICS.md, section 4.1) */
    int64_t overflow_ok;          /* non-finite outputs accepted because fp32 intermediates of the
                               row can overflow (backward ops on huge values; see NUMERICS.md) */
} sml_check_report;

/* x, dy and out are host buffers of dtype dt with stride ld, as in sml_problem. */
sml_status sml_check(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld, const void *x,
                     const void *dy, const void *out, sml_check_report *r);

/* The same, against a reference already computed (dense rows*cols doubles from
 * sml_ref_run), for callers that check several kernels on one input. */
sml_status sml_check_against(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                             const void *x, const void *dy, const double *want, const void *out,
                             sml_check_report *r);

/* One element outside its bound: where it is (row of the rows x cols view, column), what
 * it is, and how far off. */
typedef struct sml_check_elem {
    int64_t row, col;
    double got, want;
    double ratio;   /* |got - want| / allowed; inf for a special-value mismatch */
    double ulps;    /* |got - want| in ulps of the dtype at want; inf if either is not finite */
    double allowed; /* the bound on |got - want| (sml_check_allowed); NaN for a special value */
    double allowed_ulps; /* the same in ulps of the dtype at want; NaN for a special value */
} sml_check_elem;

/* sml_check_against, also listing the k worst elements outside their bound in worst[]
 * (worst first; equal ratios in row-major order) and their number in *nworst (at most k,
 * at most r->bad). */
sml_status sml_check_against_worst(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                                   const void *x, const void *dy, const double *want,
                                   const void *out, sml_check_report *r, sml_check_elem *worst,
                                   int k, int *nworst);

/* sml_check_against, also calling miss(ctx, e) for every element outside its bound, in
 * row-major order, as sml_check_against_worst lists it (ratio inf and allowed NaN for a
 * special-value mismatch): the hook a second judgment (a kernel's declared deviation,
 * src/prop/deviation.h) uses without a tolerance of its own here. The report is the
 * contract's, whatever miss does. */
typedef void (*sml_check_miss_fn)(void *ctx, const sml_check_elem *e);
sml_status sml_check_against_each(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                                  const void *x, const void *dy, const double *want,
                                  const void *out, sml_check_report *r, sml_check_miss_fn miss,
                                  void *ctx);

/* A dense problem already widened to doubles, for a caller that checks several outputs on one
 * input and keeps what they share (the property engine): x and dy (backward; else NULL), rows
 * x cols, dense; ex: NULL, or every row's sml_ref_exp_row (reference.h); facts: NULL, or every
 * row's sml_row_facts_compute; want: the reference; out: the output in dt, dense; got: NULL,
 * or out widened to doubles. Whatever is given must be what would be computed from x and dy.
 * perm: NULL, or the problem is x's with the columns of every row permuted, column j holding
 * x's column perm[j] (and so dy's, ex's and want's; out and got are the permuted problem's
 * own; facts are not read): the permuted problem checked without being laid out whole. */
typedef struct sml_check_dense {
    sml_op op;
    sml_dtype dt;
    int64_t rows, cols;
    const double *x, *dy, *ex;
    const struct sml_row_facts *facts;
    const double *want;
    const void *out;
    const double *got;
    const int64_t *perm;
} sml_check_dense;

/* sml_check_against_each on such a problem (miss may be NULL): the same report, bit for bit,
 * as sml_check_against_each on x, dy and out in dt with ld = cols. */
sml_status sml_check_dense_run(const sml_check_dense *p, sml_check_report *r,
                               sml_check_miss_fn miss, void *ctx);

/* What the contract's bound needs to know about a row besides its length; computed from
 * the row's inputs (as doubles) by sml_row_facts_compute. */
typedef struct sml_row_facts {
    int64_t cols;
    double max;        /* forward: the row's max logit; backward: max of y */
    double sum;        /* forward: sum of exp(x - max); softmax_bwd: sum of y;
                          log_softmax_bwd: sum of exp(y) (the last two are 1 for valid y) */
    double mean_abs_t; /* forward: sum_j softmax_j * |x_j - max| (the exp arguments' size) */
    double dot;        /* softmax_bwd: sum dy_j y_j; log_softmax_bwd: sum dy_j */
    double dot_abs;    /* softmax_bwd: sum |dy_j y_j|; log_softmax_bwd: sum |dy_j| */
    int may_overflow;  /* backward: fp32 intermediates can overflow, so non-finite outputs
                          are accepted in this row (docs/NUMERICS.md, "Overflow") */
} sml_row_facts;

void sml_row_facts_compute(sml_op op, sml_dtype dt, const double *x, const double *dy, int64_t cols,
                           sml_row_facts *f);
/* The same with the row's exponentials already computed: ex is sml_ref_exp_row of the row
 * (reference.h; NULL: computed here). The same bits. */
void sml_row_facts_compute_ex(sml_op op, sml_dtype dt, const double *x, const double *dy,
                              const double *ex, int64_t cols, sml_row_facts *f);

/* The two parts of the bound on |got - want| for one element: `compute` for the fp32
 * computation (floor for flushed subnormals included), `rounding` for the final rounding to
 * a 16-bit output (0 for fp32). x_i is the logit (forward) or y_i (backward). want must be
 * finite. */
typedef struct sml_bound {
    double compute, rounding;
} sml_bound;
sml_bound sml_check_bound_parts(sml_op op, sml_dtype dt, const sml_row_facts *row, double x_i,
                                double dy_i, double want);
/* compute + rounding: the absolute amount an element near `want` may be off by (the nominal
 * bound; the checker's exact rule is sml_check_allowed). Exposed for the property engine,
 * the unit tests and the docs' worked examples. */
double sml_check_bound(sml_op op, sml_dtype dt, const sml_row_facts *row, double x_i, double dy_i,
                       double want);
/* What the checker allows for a finite output `got`: compute + half the gap from got to its
 * neighbour on want's side, for 16-bit outputs. That accepts got exactly when some value
 * within the compute bound of want rounds to got (tighter than compute + ulp(want)/2 at
 * binade edges). For fp32 outputs: compute. */
double sml_check_allowed(sml_op op, sml_dtype dt, const sml_row_facts *row, double x_i, double dy_i,
                         double want, double got);
/* A whole row at once, element j as the one-element function gives it, the row's own terms
 * computed once: allowed[j] = sml_check_allowed(..., x[j], dy[j], want[j], got[j]) (any value
 * where want[j] or got[j] is not finite, which the checker does not use) and bound[j] =
 * sml_check_bound(..., x[j], dy[j], want[j]). dy: NULL for forward ops (0 each); ex: NULL, or
 * the row's sml_ref_exp_row (reference.h), whose exp(y_j) log_softmax_bwd's bound takes. */
void sml_check_allowed_row(sml_op op, sml_dtype dt, const sml_row_facts *row, const double *x,
                           const double *dy, const double *ex, const double *want,
                           const double *got, int64_t n, double *allowed);
void sml_check_bound_row(sml_op op, sml_dtype dt, const sml_row_facts *row, const double *x,
                         const double *dy, const double *ex, const double *want, int64_t n,
                         double *bound);
/* 1 when an infinite output is acceptable for a finite reference value: the allowed
 * interval reaches the dtype's overflow threshold (same sign), or the row may overflow. */
int sml_check_inf_allowed(sml_dtype dt, const sml_row_facts *row, double want, const sml_bound *b,
                          double got);
/* 1 when a NaN output is allowed where the reference is infinite: log_softmax_bwd with an
 * infinite sum(dy) at an element whose exp(y_i) underflows fp32 (docs/NUMERICS.md, 2). */
int sml_check_nan_allowed(sml_op op, const sml_row_facts *row, double x_i);
/* The summation depth the contract allows for a row of n: min(n - 1, 32 + ceil(log2 n)). */
int sml_check_sum_depth(int64_t n);

#ifdef __cplusplus
}
#endif
#endif
