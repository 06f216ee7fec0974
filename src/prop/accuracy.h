/* accuracy.h: accuracy as a gate. A run's accuracy is the distribution, over its cases, of
 * each case's worst error relative to the contract's bound (the checker's worst_ratio,
 * reference/check.h): worst, 99th percentile and median, with the worst in ulps. Two runs
 * are judged against each other only on the same cases: same seed, same case count, same
 * digest of the cases' shapes and inputs (a sum of per-case hashes: order-free). The rule and its constants are stated in
 * docs/NUMERICS.md, section 8 ("Accuracy as a gate"); they live here and nowhere else. */
#ifndef SML_PROP_ACCURACY_H
#define SML_PROP_ACCURACY_H

#include <stddef.h>
#include <stdint.h>

#include "prop/case.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A summary is LESS ACCURATE than another when its worst or its p99 err/bound exceeds the
 * other's by more than this factor, MORE ACCURATE when neither is above and one is below by
 * as much. */
#define SML_ACC_FACTOR 1.25
/* Both sides' figures are raised to this before they are divided: errors under 5% of the
 * bound are too small to call a change (a factor of 3 between 0.001 and 0.003 of the bound
 * is no loss a user can see, and the ratio would flap). */
#define SML_ACC_FLOOR  0.05

typedef struct sml_accuracy {
    uint64_t seed;             /* the run seed (check) or the input seed (bench) */
    int64_t cases;             /* cases drawn */
    int64_t judged;            /* of them, cases whose output the checker judged */
    uint64_t digest;           /* of every case drawn: shape, layout, inputs (0: none recorded) */
    double worst, p99, median; /* err/bound over the judged cases (per case: its worst element) */
    double worst_ulps; /* the largest error in ulps of the output dtype at a case's worst element */
    int64_t worst_case; /* the case with the worst err/bound (-1: none) */
    int worst_level;    /* its size level (check: --case I --level L redraws it) */
} sml_accuracy;

typedef enum sml_acc_verdict {
    SML_ACC_SAME = 0,
    SML_ACC_MORE,          /* more accurate */
    SML_ACC_LESS,          /* less accurate */
    SML_ACC_NOT_COMPARABLE /* not the same cases, or nothing judged */
} sml_acc_verdict;

/* "SAME", "MORE ACCURATE", "LESS ACCURATE", "NOT COMPARABLE" */
const char *sml_acc_verdict_name(sml_acc_verdict v);

/* The summary of n per-case figures (ratio[i], ulps[i]; NaN: case i not judged). ulps may
 * be NULL. seed, cases, digest and the level are left for the caller. */
void sml_accuracy_summarize(const float *ratio, const float *ulps, int64_t n, sml_accuracy *a);

/* The q-quantile (0..1, nearest rank) of the non-NaN values of v[0..n); NaN when none. */
double sml_accuracy_quantile(const float *v, int64_t n, double q);

/* The rule of docs/NUMERICS.md section 8: NEW against OLD. NOT COMPARABLE, with the reason in
 * why, when the seeds, case counts, digests or judged counts differ, or nothing was judged.
 * why (may be NULL) gets one line: the figures and the ratios. */
sml_acc_verdict sml_accuracy_judge(const sml_accuracy *old_a, const sml_accuracy *new_a, char *why,
                                   size_t why_n);

/* The worst and p99 ratios the rule looks at, floors applied: new / old. */
double sml_accuracy_ratio(double old_v, double new_v);

/* The digest of a run's cases is a sum (mod 2^64) of one hash per case, so it says which
 * cases a run drew and not in what order or how they were split: the runs of the shards of a
 * run (--shard, one worker per GPU) join to the digest of the whole run.
 * sml_accuracy_digest_case adds one case (op, dtype, shape, layout, case seed and the input
 * bytes) to a digest (start from 0); sml_accuracy_digest_join adds two digests of disjoint
 * sets of cases. Two runs with equal digests drew the same cases. */
uint64_t sml_accuracy_digest_case(uint64_t h, const sml_prop_case *c);
uint64_t sml_accuracy_digest_join(uint64_t a, uint64_t b);
/* Fold one number into a hash (for cases that are a function of a few numbers, as the
 * benchmark's are of the shape and the seed: chain a case's numbers from 0, then join the
 * cases' hashes). */
uint64_t sml_accuracy_digest_u64(uint64_t h, uint64_t v);

#ifdef __cplusplus
}
#endif
#endif
