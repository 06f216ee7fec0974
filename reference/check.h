/* check.h: the numerics contract's checker. Compares a kernel's output (host memory, the
 * problem's dtype and stride) with the double-precision reference under the tolerances of
 * docs/NUMERICS.md, and says where the worst error is. The tolerances live here and only
 * here. */
#ifndef SML_REFERENCE_CHECK_H
#define SML_REFERENCE_CHECK_H

#include <stdint.h>
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sml_check_report {
    int pass;               /* 1: every element within the contract */
    int64_t checked;        /* elements compared */
    int64_t bad;            /* elements outside their bound (special-value mismatches included) */
    int64_t nan_mismatch;   /* NaN where the reference has none, or the reverse */
    int64_t inf_mismatch;   /* +-inf where the reference has none, or the reverse / wrong sign */
    double worst_ratio;     /* max over elements of |got - want| / allowed (>1 fails) */
    double worst_ulps;      /* at the worst element: error in ulps of the output dtype */
    double worst_rel;       /* at the worst element: |got - want| / |want| (inf if want == 0) */
    double worst_abs;
    int64_t worst_row, worst_col; /* -1 when nothing was compared */
    double got, want;       /* at the worst element */
    double row_max, row_sum; /* of the worst row's input: max and sum of exp(x - max) */
    char message[320];      /* one line a person can read: verdict, worst error and where */
} sml_check_report;

/* x, dy and out are host buffers of dtype dt with stride ld, as in sml_problem. */
sml_status sml_check(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                     const void *x, const void *dy, const void *out, sml_check_report *r);

/* The same, against a reference already computed (dense rows*cols doubles from
 * sml_ref_run), for callers that check several kernels on one input. */
sml_status sml_check_against(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, int64_t ld,
                             const void *x, const void *dy, const double *want,
                             const void *out, sml_check_report *r);

/* The bound (absolute) an output element may be off by, given everything the contract
 * uses: the reference value, the input element and its row's max, the row length.
 * Exposed for the unit tests and the docs' worked examples. */
double sml_check_bound(sml_op op, sml_dtype dt, int64_t cols, double want, double x_i,
                       double row_max, double row_aux);

#ifdef __cplusplus
}
#endif
#endif
