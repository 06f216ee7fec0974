/* merge.h: the results of the shards of one run (check --json or bench ledgers made with
 * --shard K/N) joined into the result of the whole run, offline: no kernel runs.
 *
 * The shards must be of one run: the same seed, softmax-lab version, kernels, ops and dtypes,
 * the same settings that decide the cases (check) or the same sweep and GPU model (ledger),
 * each shard once, at least two files. A shard that is missing is an error unless `partial`.
 * What the merge gives equals the unsharded run's result: check: per kernel, op and dtype
 * the case counts, the outcome, the first failure of each property (the smallest case index
 * over the shards, as the unsharded run finds it first), the accuracy (worst, p99 and median
 * recomputed over every judged case) and the digest (the sum of the shards'); ledger: every
 * row of every kernel, the decisions and the accuracy rebuilt from them by the bench's own
 * rule (bench/ledger.h). Counts of a failing run are those of the shards: a shard does not
 * stop at another shard's failure, so it may check more cases after it than the unsharded
 * run would. */
#ifndef SML_ANALYSIS_MERGE_H
#define SML_ANALYSIS_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/ledger.h"
#include "json/json_read.h"
#include "prop/accuracy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sml_merge_kind { SML_MERGE_CHECK = 0, SML_MERGE_LEDGER } sml_merge_kind;

/* A failure of one property (check --json's "failures" entry). */
typedef struct sml_merge_failure {
    char property[32], outcome[16];
    int64_t case_index, level, rows, cols, shrunk_rows, shrunk_cols;
    char reproducer[1024];
} sml_merge_failure;

/* One kernel, op and dtype of a check run, joined over the shards. */
typedef struct sml_merge_run {
    char kernel[64], op[32], dtype[16], outcome[16], note[192];
    char library[1024]; /* the plugin library the kernel came from ("": built in) */
    int64_t cases, failed_cases, regressions, regressions_failed, ramp, planned, max_cases;
    double worst_ratio, worst_ulps, seconds;
    sml_accuracy acc;
    uint64_t plan;
    sml_merge_failure failures[16];
    int nfail;
    float *ratios;  /* every case's err/bound over every shard (NaN: not judged) */
    int64_t *index; /* its case index */
    int64_t nratios;
} sml_merge_run;

typedef struct sml_merge {
    sml_merge_kind kind;
    int count;         /* N of K/N */
    int given;         /* shards given */
    char missing[256]; /* "2, 4" of N: the shards not given ("" none) */
    char version[32];
    uint64_t seed;
    int strict, long_profile; /* a check's --strict and --long: 1, 0, or -1 not recorded */
    int exit_code;            /* of the whole run: 0 held, 1 failed, 3 not (all) checked */
    /* check */
    sml_merge_run *runs;
    size_t nruns;
    char not_run[512]; /* kernels every shard skipped, "a, b" */
    int64_t threads;
    /* ledger */
    sml_bench_run run; /* rebuilt from the shards' rows */
    sml_ledger ledger;
    sml_kernel *kernels; /* what the ledger needs of each kernel (name, file, device, claim) */
    int *baseline_only;
    char *strings;   /* storage the kernels' names and claims point into */
    sml_json **docs; /* the shards' documents, kept while the above point into them */
    int ndocs;
} sml_merge;

/* Join the n files. SML_OK with *out filled; SML_ERR_IO / SML_ERR_FORMAT for a file that
 * cannot be read or is not a shard's result, SML_ERR_INVALID_ARG for shards that do not make
 * one run (err names the files and the field that differs), SML_ERR_OUT_OF_MEMORY. */
sml_status sml_merge_files(const char *const *paths, int n, int partial, sml_merge *out, char *err,
                           size_t errlen);
void sml_merge_free(sml_merge *m);

/* A merged check as check --json writes it (softmax-lab-check/1, with "merged": the shards
 * joined and those missing), and as Markdown; 0, or -1 on a write error. */
int sml_merge_check_json(const sml_merge *m, const char *const *paths, FILE *f);
int sml_merge_check_md(const sml_merge *m, FILE *f);
/* The summary on stdout: one line per kernel, op and dtype, and the verdict. */
void sml_merge_print(const sml_merge *m, FILE *f);

/* The parts (merge_check.c, merge_ledger.c). docs[i] is shard i + 1's document (NULL where
 * missing), paths likewise. */
sml_status sml_merge_check_docs(sml_merge *m, const sml_json *const *docs, const char *const *paths,
                                char *err, size_t errlen);
sml_status sml_merge_ledger_docs(sml_merge *m, const sml_json *const *docs,
                                 const char *const *paths, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
