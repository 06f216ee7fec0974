/* decide.h: the three judgements the performance suite makes, each in one function:
 *   sml_shape_class    which class ("short", "mid", "long") a row length belongs to;
 *   sml_decide         a kernel's ledger status on a sweep (Supported / Caveated /
 *                      Rejected / Measured) from its claim and the per-shape evidence;
 *   sml_compare_verdict  whether one timing moved against another (FAST / SLOW / SAME /
 *                      UNCLEAR), used by `softmax-lab compare`.
 * docs/BENCHMARKING.md states the same rules in prose; this file is their only code. */
#ifndef SML_BENCH_DECIDE_H
#define SML_BENCH_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shape classes by row length: short cols <= 1024 (a row fits a warp's registers),
 * long cols >= 131072 (a row no longer fits one SM's on-chip memory in fp32), mid between. */
#define SML_SHORT_MAX_COLS 1024
#define SML_LONG_MIN_COLS  131072
const char *sml_shape_class(int64_t cols);
/* 1 when a row of `cols` columns is in claim class `cls` ("all" matches every row);
 * 0 otherwise, and for an unknown class name. */
int sml_shape_in_class(int64_t cols, const char *cls);
/* sml_shape_class_valid (internal.h): 1 for "all", "short", "mid", "long". */

/* The relative noise margin never drops below this, however quiet both timings were. */
#define SML_DEFAULT_MARGIN 0.03
/* The largest floor a run may set (bench --margin) or a ledger may carry (targets). A margin
 * is a tolerance for timing noise, not a discount: with a floor of 0.9 a kernel at 0.31x would
 * "meet" a 1.0x claim. Noisier timings than that widen each row's own margin (sml_row_margin),
 * which makes a row unclear, never met. */
#define SML_MAX_MARGIN     0.10
/* 1 when m is a valid floor: 0 <= m <= SML_MAX_MARGIN. The one rule for bench and targets. */
int sml_margin_ok(double m);

/* One shape (op, dtype, rows, cols) of a kernel's evidence, as the decision rule sees it. */
typedef struct sml_decision_row {
    int64_t cols;
    int kernel_ok;        /* 1: the kernel passed the correctness check on this input */
    int baseline_ok;      /* 1: the claim's baseline ran and was timed on the same input. Its
                               own check does not matter here: a baseline that misses the
                               contract (cuDNN's 16-bit outputs do) is still the time to beat;
                               the ledger flags such rows. */
    double speedup;       /* median time of the baseline / median time of the kernel */
    double kernel_spread; /* relative spread (IQR / median) of each timing */
    double baseline_spread;
} sml_decision_row;

typedef enum sml_row_outcome {
    SML_ROW_NOT_COUNTED = 0, /* outside the claim's shape class, or no usable baseline */
    SML_ROW_MEETS,           /* speedup >= min_speedup * (1 - floor margin) */
    SML_ROW_ABOVE_PARITY,    /* short of the claim, but faster than the baseline beyond noise */
    SML_ROW_LOSS,            /* at or below parity within noise, or the kernel is wrong */
    SML_ROW_UNCLEAR          /* below the claim, but within the timings' noise of it: measure
                                again with more samples. Never counted as meeting the claim. */
} sml_row_outcome;

typedef enum sml_decision_status {
    SML_DECISION_SUPPORTED = 0, /* meets its claim on every counted shape */
    SML_DECISION_CAVEATED,      /* wins somewhere, misses somewhere */
    SML_DECISION_REJECTED,      /* at or below parity against its baseline on every counted shape */
    SML_DECISION_MEASURED       /* no claim, or nothing on this sweep could test it */
} sml_decision_status;

const char *sml_decision_name(sml_decision_status s); /* "Supported", ... */
const char *sml_row_outcome_name(sml_row_outcome o);  /* "meets", "above-parity", ... */

typedef struct sml_decision {
    sml_decision_status status;
    int counted, meets, above_parity, losses, wrong, no_baseline, unclear;
    double worst_speedup, best_speedup; /* over counted rows where the kernel was correct */
} sml_decision;

/* The noise margin of a row: max(floor, 2 * sqrt(ks^2 + bs^2)). It only ever widens the
 * UNCLEAR band below the claim; a row meets the claim at min_speedup * (1 - floor) or more. */
double sml_row_margin(double floor_margin, double kernel_spread, double baseline_spread);

/* THE decision rule. claim: the kernel's claim (baseline NULL: no claim). rows/n: its
 * evidence on one sweep. margin: the noise floor (SML_DEFAULT_MARGIN). outcome (may be
 * NULL): receives each row's outcome, so the ledger can say where it won and lost. */
void sml_decide(const sml_claim *claim, const sml_decision_row *rows, size_t n, double margin,
                sml_decision *out, sml_row_outcome *outcome);

/* The compare rule between an old and a new timing of the same case. */
typedef enum sml_compare_result {
    SML_CMP_SAME = 0, /* change within the threshold and both runs quiet enough to say so */
    SML_CMP_FAST,     /* new is faster by more than the threshold and the noise */
    SML_CMP_SLOW,     /* new is slower by more than the threshold and the noise */
    SML_CMP_UNCLEAR   /* the noise is too large to tell */
} sml_compare_result;

const char *sml_compare_name(sml_compare_result r); /* "SAME", "FAST", "SLOW", "UNCLEAR" */

/* old_ms/new_ms: medians; *_spread: relative spreads (IQR / median); threshold: the
 * smallest relative change worth reporting (e.g. 0.03). */
sml_compare_result sml_compare_verdict(double old_ms, double old_spread, double new_ms,
                                       double new_spread, double threshold);

#ifdef __cplusplus
}
#endif
#endif
