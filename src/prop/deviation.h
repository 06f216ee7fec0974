/* deviation.h: a kernel's declared deviation from the numerics contract (sml_deviation,
 * include/softmax_lab.h), applied as a second judgment after the contract's own: the checker
 * (reference/check.h) decides which elements are outside the contract, and only those are
 * judged here, each against the declared terms of its op and dtype. A miss within them is
 * excused and counted; any other is a failure that names the terms it broke. Nothing here
 * loosens the contract, and a label (sml_kernel.known_deviation) is never read.
 *
 * The property engine (props.c), the edge-shape harness (src/edge) and the bench's check
 * (src/bench) all judge through these functions, so a declaration means the same everywhere. */
#ifndef SML_PROP_DEVIATION_H
#define SML_PROP_DEVIATION_H

#include <stddef.h>
#include <stdint.h>

#include "reference/check.h"
#include "softmax_lab.h"

/* What a declaration says about one op and dtype. */
typedef struct sml_dev_terms {
    sml_op op;
    sml_dtype dt;
    double ulps, factor; /* the declared value bound; 0: the contract's */
    unsigned exceptions; /* the declared SML_DEV_* exceptions that can apply to op and dtype */
    char text[200];      /* the terms in words, as messages name them */
} sml_dev_terms;

/* The terms d declares for op and dtype into t: 1 when there are any, 0 when there are none
 * (d NULL, or nothing for this op and dtype: the contract; t->text says "the contract"). */
int sml_dev_terms_get(const sml_deviation *d, sml_op op, sml_dtype dt, sml_dev_terms *t);

/* 1 when d declares anything at all (a bound or an exception). */
int sml_dev_declared(const sml_deviation *d);

/* The whole declaration in words, for verdict lines: "softmax fp16,bf16 <= 1.5 ulp; all -inf
 * rows give 0 / -inf; log_softmax shift bits"; "none" for NULL or an empty one. */
void sml_dev_describe(const sml_deviation *d, char *buf, size_t n);

/* The warning for a kernel whose known_deviation label is all it declares (an ABI version 1
 * or 2 plugin, or a Python registration with words only): the words excuse nothing, and how
 * to declare bounds. Written into buf, which is returned. */
const char *sml_dev_words_only_note(const char *label, char *buf, size_t n);

/* What t's row exceptions add to the bound of every element of a row with inputs x (logits;
 * cols long), as an absolute error: one fp32 ulp of |max x| + log(cols) under
 * SML_DEV_LOG_SOFTMAX_LSE_ROUNDED, infinity in a row SML_DEV_LOWEST_MAX_ROW covers, else 0. */
double sml_dev_row_slack(const sml_dev_terms *t, const double *x, int64_t cols);

/* The bound an element near `want` may be off by under t: the contract's (`allowed`), or
 * where the declaration is looser, t->ulps ulps of dt at want, t->factor x allowed, or
 * allowed + `slack` (sml_dev_row_slack of its row). */
double sml_dev_allowed(const sml_dev_terms *t, sml_dtype dt, double allowed, double want,
                       double slack);

/* What the exceptions of t need to know of a whole row to judge its special values: found
 * once per row (one pass over it), then asked per element, so that a row of n mismatches
 * costs n, not n^2 (a long backward row whose every output is NaN where the contract wants an
 * infinity has a mismatch in every column). */
typedef struct sml_dev_row {
    int all_neg_inf;       /* every logit is -inf (SML_DEV_ALL_NEG_INF_ROW) */
    int magnitude_too_big; /* max|dy| + sum|dy y| (or |dy|) reaches the dtype's largest value
                               (SML_DEV_BWD_16BIT_OVERFLOW) */
    int class_can_be_lost; /* a plain sum of the terms can overflow before an infinity
                               (SML_DEV_BWD_SUM_CLASS) */
} sml_dev_row;

/* The facts of the row with inputs x (logits, or y) and dy (backward; else NULL) as doubles,
 * cols long; only those t's exceptions use are looked for. */
void sml_dev_row_of(const sml_dev_terms *t, const double *x, const double *dy, int64_t cols,
                    sml_dev_row *r);

/* 1 when the named exceptions of t cover a special-value mismatch (got where the contract
 * wants `want`) in a row with facts r (sml_dev_row_of) and dy (backward) or not. */
int sml_dev_special_excused_in(const sml_dev_terms *t, const sml_dev_row *r, int backward,
                               double got, double want);

/* The same for one element of the row x, dy (a pass over the row each call). */
int sml_dev_special_excused(const sml_dev_terms *t, const double *x, const double *dy, int64_t cols,
                            double got, double want);

/* The second judgment of one output. */
typedef struct sml_dev_report {
    int64_t misses;  /* elements outside the contract (the checker's `bad`) */
    int64_t excused; /* of those, within the declared terms */
    double worst_ulps,
        worst_ratio;  /* among the excused: ulps of dt at want, x the contract's bound */
    int64_t row, col; /* the worst miss the terms do not cover (a special value first); -1: none */
    double got, want, ulps, ratio;
    int special; /* that miss is a NaN or infinity mismatch */
} sml_dev_report;

/* The judgment in words, naming the terms t (NULL: the contract): "outside its declared
 * deviation (softmax fp16 <= 1 ulp): row 0 col 3: got ... want ..., 1.39 ulp, 2.6 x the
 * contract's bound", or "within its declared deviation (...): N of N misses excused". */
void sml_dev_report_why(const sml_dev_report *d, const sml_dev_terms *t, char *buf, size_t n);

/* 1 when every miss was excused (also when there were none). */
int sml_dev_report_pass(const sml_dev_report *d);

/* The contract's checker (sml_check_against: r is its report, unchanged), then each element
 * outside the contract judged against t (NULL: none excused) into d. */
sml_status sml_dev_check_against(const sml_dev_terms *t, sml_op op, sml_dtype dt, int64_t rows,
                                 int64_t cols, int64_t ld, const void *x, const void *dy,
                                 const double *want, const void *out, sml_check_report *r,
                                 sml_dev_report *d);

/* The same on a problem already widened to doubles (reference/check.h): the same reports. */
sml_status sml_dev_check_dense(const sml_dev_terms *t, const sml_check_dense *p,
                               sml_check_report *r, sml_dev_report *d);

/* Merge b (a later chunk of rows, row_offset rows further on) into a. */
void sml_dev_report_merge(sml_dev_report *a, const sml_dev_report *b, int64_t row_offset);

#endif
