/* ledger.h: the decision ledger. One record per kernel and sweep: its claim, its status by
 * the decision rule (decide.h), where it met or missed the claim, and the evidence per shape
 * with the environment. Written as JSON (read back by `compare` and `plot`) and Markdown.
 * A Rejected kernel keeps its record and its numbers. */
#ifndef SML_BENCH_LEDGER_H
#define SML_BENCH_LEDGER_H

#include <stdio.h>

#include "bench/bench.h"
#include "bench/decide.h"
#include "json/json_read.h"
#include "prop/accuracy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version this build writes. Version 2 added each record's "framework"; version 1
 * ledgers (records without it) are still read (ledger_schema.c). */
#define SML_LEDGER_SCHEMA  "softmax-lab-ledger/2"
#define SML_LEDGER_VERSION 2

/* The version of a ledger this build reads (1 or 2); else 0, with err saying what was found
 * (another version, or no ledger at all). Every ledger reader (compare, targets, plot, merge)
 * asks this one function, or sml_ledger_schema_ok (version != 0). */
int sml_ledger_schema_version(const char *schema, char *err, size_t errlen);
int sml_ledger_schema_ok(const char *schema, char *err, size_t errlen);

/* Whether a record of a ledger of `version` is a framework baseline's (SML_KERNEL_FRAMEWORK
 * on the kernel that was measured): 1 or 0. Version 2: the record's "framework", which must
 * be true or false (else -1, with err naming `where` and the field). Version 1 ledgers have
 * no such field: the record's kernel name decides, by the one compatibility table of the
 * names those ledgers' framework baselines had (sml_ledger_v1_framework). */
int sml_ledger_record_framework(int version, const sml_json *rec, const char *where, char *err,
                                size_t errlen);
/* 1 when `kernel` was a framework baseline in version 1 ledgers (the compatibility table). */
int sml_ledger_v1_framework(const char *kernel);
/* The table's names joined by ", ", the last by `last` (", " or " or "), into buf. */
void sml_ledger_v1_framework_list(const char *last, char *buf, size_t n);

/* A kernel's accuracy on one op and dtype of the run (prop/accuracy.h): err/bound over the
 * cases, and against its baseline (the claim's, else cudnn) on the cases both judged. */
typedef struct sml_ledger_accuracy {
    sml_op op;
    sml_dtype dtype;
    sml_accuracy a;
    char baseline[32];       /* "" when there is none in the run */
    sml_accuracy mine, base; /* over the cases both judged */
    sml_acc_verdict verdict; /* this kernel against the baseline */
    char why[512];
} sml_ledger_accuracy;

typedef struct sml_ledger_record {
    char kernel[32];
    sml_device device;
    const char *file;
    const char *origin; /* where a kernel from outside the build came from (plugin library, or
                           Python module with the versions it ran on); NULL: built in */
    int baseline_only;
    int framework; /* the kernel is a framework baseline (SML_KERNEL_FRAMEWORK) */
    sml_claim claim;
    sml_decision decision;
    size_t n;                 /* evidence rows */
    size_t *result;           /* index into run->results per row */
    sml_row_outcome *outcome; /* per row */
    double *vs_baseline;      /* per row: the claim baseline's time / this kernel's; NaN if none */
    int baseline_wrong;       /* counted rows where the baseline failed its own check */
    char reason[1024];        /* the status in one paragraph, with where it won and lost */
    sml_ledger_accuracy *acc; /* per op and dtype measured */
    size_t nacc;
} sml_ledger_record;

typedef struct sml_ledger {
    sml_ledger_record *rec;
    size_t n;
} sml_ledger;

sml_status sml_ledger_build(const sml_bench_run *run, sml_ledger *out);
void sml_ledger_free(sml_ledger *l);
/* The record of a kernel, or NULL. */
const sml_ledger_record *sml_ledger_find(const sml_ledger *l, const char *kernel);

/* The traffic-matched limit's access pattern: "1 read + 1 write" (reads 1) or
 * "2 reads + 1 write" (reads 2). */
const char *sml_ledger_limit_pattern(int reads);

/* "softmax fp16 4096x8192" */
void sml_case_label(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, char *buf, size_t n);

/* The verdict a record's accuracy rows add up to (LESS if any, else MORE if any, else SAME;
 * NOT COMPARABLE with no baseline), and the row that decided it (NULL: none). */
sml_acc_verdict sml_ledger_accuracy_verdict(const sml_ledger_record *r,
                                            const sml_ledger_accuracy **row);

/* The two numbers a gate reader wants beside each other: "1.31x to 2.07x vs naive" (the
 * claim's speedups, "-" without a claim) and "SAME vs naive (softmax fp32: worst 0.4 -> 0.41)". */
void sml_ledger_side_by_side(const sml_ledger_record *r, char *speed, size_t sn, char *acc,
                             size_t an);

#ifdef __cplusplus
}
#endif
#endif
