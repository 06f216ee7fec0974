/* targets.h: the bandwidth targets T1-T6 (each a row of the ledger, every dtype, all four
 * ops; docs/BENCHMARKING.md, "Targets") evaluated for one kernel of a ledger written by `softmax-lab bench
 * --json`. The thresholds and row sets live here and in targets.c only, so `softmax-lab
 * targets` and tests/perf/test_targets.c cannot drift apart. No GPU is needed. */
#ifndef SML_BENCH_TARGETS_H
#define SML_BENCH_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "json/json_read.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SML_TARGETS_SCHEMA "softmax-lab-targets/1"

/* The targets' numbers. T1's floor is 64 MiB (2^26 bytes) and inclusive: ten rows of the standard
 * sweep (fp32 4096x2048 and 16-bit 4096x4096 forward) move exactly 2^26 bytes and are in. */
#define SML_TGT_FRAC_MEMCPY     0.90               /* T1, T2: fraction of device memcpy GB/s */
#define SML_TGT_BIG_BYTES       ((int64_t)1 << 26) /* T1: rows moving at least this many bytes */
#define SML_TGT_VS_CUDNN        1.20               /* T3: speedup over cuDNN on every row */
#define SML_TGT_SHORT_MIN_COLS  128                /* T5: the short rows, both ends included */
#define SML_TGT_SHORT_MAX_COLS  512
#define SML_TGT_SHORT_FRAC_COPY (1.0 / 1.3) /* T5: within 1.3x of the copy kernel's time */
#define SML_TGT_STATUS          "Supported" /* T6: the kernel's record status */
/* Against the field, in the same run: the framework baselines are the records that say so
 * ("framework": true; in a version 1 ledger, by name: sml_ledger_record_framework). */
#define SML_TGT_FIELD_SPEEDUP \
    1.00                        /* time of the fastest framework baseline / time, on every cell */
#define SML_TGT_FRAC_LIMIT 0.97 /* limit time / time on cells of >= SML_TGT_BIG_BYTES */

typedef enum sml_target_id {
    SML_TGT_BANDWIDTH = 0, /* T1 */
    SML_TGT_LONG,          /* T2 */
    SML_TGT_CUDNN,         /* T3 */
    SML_TGT_BEST,          /* T4 */
    SML_TGT_SHORT,         /* T5 */
    SML_TGT_STATE,         /* T6 */
    SML_TGT_VS_FIELD,      /* cells >= 64 MiB: >= 1.00x the fastest framework baseline */
    SML_TGT_AT_LIMIT,      /* cells >= 64 MiB: >= 0.97 of the traffic-matched limit */
    SML_TGT_SHORT_FIELD,   /* cells < 64 MiB: >= 1.00x the fastest framework baseline */
    SML_TGT_COUNT
} sml_target_id;

/* One evidence row as the targets read it. Metrics are NaN where a row that is not "ok"
 * left them out (such a row fails every target it is in, so it needs none). */
typedef struct sml_tgt_row {
    char op[24], dtype[8], check[16], best_other[32];
    char auto_path[16]; /* the kernel `auto` ran on the row (absent in older ledgers: "") */
    int64_t rows, cols, bytes;
    double gbps, frac_memcpy, frac_copy_kernel, vs_cudnn, vs_best_other;
    double median_ms;  /* NaN where the row was not timed (or the ledger left it out) */
    double frac_limit; /* NaN where the row was not timed */
    int has_limit;     /* the cell's traffic-matched limit is in the ledger (limit_gbps) */
    char field[32];    /* the fastest framework baseline timed on the cell, "" if none */
    double field_ms;   /* its median; NaN if none */
    double vs_field;   /* field_ms / median_ms; NaN if either is missing */
    /* The other kernels on the cell whose measurement was not held (the ledger's `held`: 0,
     * the launch hold lost): their times include the host's launch calls, so they may read
     * slower than the kernel is; field_unheld: those of them that are framework baselines.
     * "" when every one was held. */
    char unheld[96], field_unheld[64];
} sml_tgt_row;

/* What became of a target: every row in it measured and met; a row missed; or no row missed
 * but some row (or every row) had nothing to be measured against: NOT MEASURED, never met. */
typedef enum sml_tgt_state { SML_TGT_MET = 0, SML_TGT_MISSED, SML_TGT_NOT_MEASURED } sml_tgt_state;
/* "met", "missed", "NOT MEASURED" */
const char *sml_tgt_state_name(sml_tgt_state s);

typedef struct sml_tgt_result {
    const char *name; /* "T1" */
    char title[96];   /* ">= 90% of memcpy, traffic >= 64 MiB" */
    char rule[160];   /* the rule in the ledger's field names */
    double threshold; /* T6: 1 (the status must match) */
    int counted, met;
    int at_parity;    /* T4 only: rows at vs_best_other >= 1.00 with an ok check */
    int own_kernel;   /* T4 only: misses whose best other is the kernel auto ran there */
    int not_measured; /* rows in the target with nothing to measure them against (no
                          framework baseline timed on the cell, or no limit in the ledger) */
    sml_tgt_state state;
    size_t *miss; /* indexes into sml_tgt_report.rows, furthest miss first */
    size_t nmiss;
    /* Rows at or past the threshold while a kernel they are compared with on their cell was
     * timed unheld (sml_tgt_undecided): neither met nor missed, and not counted. */
    size_t *undecided;
    size_t nundecided;
} sml_tgt_result;

typedef struct sml_tgt_report {
    char sweep[64], ops[128], gpu[128], kernel[32], status[16];
    char auto_plans[128]; /* the ledger's environment.auto_plans: a table's file name, or "rules" */
    double memcpy_gbps;   /* NaN when the ledger has none (a CPU-only run) */
    double margin;        /* config.decision_margin */
    int version;          /* the ledger's schema version (1: framework baselines by name) */
    char field[96];       /* the framework baselines with a record in the ledger: "torch, cudnn" */
    /* The ledger's "partial" block: 0 and 0 when every planned case was measured (or the
     * ledger predates the field). Counts of a partial ledger are of the rows present. */
    int64_t cases_measured, cases_planned;
    sml_tgt_row *rows;
    size_t n;
    sml_tgt_result t[SML_TGT_COUNT];
} sml_tgt_report;

/* The rules, one row at a time (T1-T5; T6 is sml_tgt_status_met). */
int sml_tgt_in(sml_target_id id, const sml_tgt_row *r);       /* is the row one of the target's? */
double sml_tgt_value(sml_target_id id, const sml_tgt_row *r); /* the number the rule compares */
double sml_tgt_threshold(sml_target_id id, double margin);
int sml_tgt_met(sml_target_id id, const sml_tgt_row *r,
                double margin); /* in, check ok, value >= threshold */
int sml_tgt_status_met(const char *status);
/* The row's result passed its check: only such a row can meet a target. */
int sml_tgt_row_ok(const sml_tgt_row *r);
/* The row's best other kernel is the one `auto` ran there: a T4 miss of such a row is two
 * timings of one kernel in one run, not a dispatch that chose the slower kernel. */
int sml_tgt_own_kernel(const sml_tgt_row *r);
/* The row has what the target measures it against: a framework baseline timed on the cell
 * (the field targets), the cell's limit (the limit target); 1 for the other targets. */
int sml_tgt_measured(sml_target_id id, const sml_tgt_row *r);
/* A row that would meet the target while a kernel it is compared with on its cell was timed
 * without the launch hold (the field targets: a framework baseline; T3: cuDNN; T4: any other
 * kernel): the pass may be the host's launch calls in that kernel's time, so it is not
 * decided. A row below the threshold is a miss whatever the unheld times (the true ones can
 * only be shorter). 0 for the targets measured against the bench's own references (memcpy,
 * the copy kernel, the limit). */
int sml_tgt_undecided(sml_target_id id, const sml_tgt_row *r, double margin);
/* The kernels timed unheld that make a row of the target undecided (a list of names). */
const char *sml_tgt_unheld_for(sml_target_id id, const sml_tgt_row *r);

/* Evaluate the targets for `kernel` in a parsed ledger. SML_ERR_FORMAT with the bad field's
 * path in err ("records[7].evidence[3]: 'frac_memcpy' missing or not a number") when the
 * document is not a ledger, the kernel has no record, or a needed field is missing. */
sml_status sml_targets_doc(const sml_json *doc, const char *kernel, sml_tgt_report *out, char *err,
                           size_t errlen);
/* The same from a file; err starts with the file's name. */
sml_status sml_targets_file(const char *path, const char *kernel, sml_tgt_report *out, char *err,
                            size_t errlen);
void sml_tgt_report_free(sml_tgt_report *r);
/* 1 when every target's state is met (a NOT MEASURED target is not). */
int sml_tgt_all_met(const sml_tgt_report *r);
/* 1 when some target was missed. */
int sml_tgt_any_missed(const sml_tgt_report *r);

#ifdef __cplusplus
}
#endif
#endif
