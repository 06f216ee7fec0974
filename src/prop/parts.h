/* parts.h: one kernel/op/dtype job run as several parts side by side, and their results
 * joined into the job's.
 *
 * Why: a suite's threads take jobs, and a job's cases ran on one thread, so a run's last
 * jobs left threads idle, and the jobs of the next kernel started while the previous
 * kernel's still ran. On a GPU that second part is the costly one when kernels run in
 * workers: two processes are two CUDA contexts, which take turns on the GPU, and every launch
 * then waits for the other context's turn. Split into parts, a kernel's jobs keep every
 * thread busy until that kernel is done, and the next kernel's start only at its end.
 *
 * The parts of a job are a function of its profile (never of --threads or the load): part q
 * of P holds the cases whose position k in the run's slice (k = i for the whole run, i / N
 * for shard K/N) has k mod P == q, so every part gets its share of the size ramp's big
 * cases. Together they run exactly the job's cases, and the joined result is the job's:
 *   - counts and events add up (verdict.h decides from them as for any job);
 *   - the accuracy summary is made from every part's per-case figures in case order, as
 *     one run would (same worst case, p99, median, digest);
 *   - each property keeps the failure at the lowest case index: the first failing case, as
 *     one run finds it; killed_at counts the cases up to it.
 * The parts of a job share what one run would know: a property that failed at case i is not
 * checked on the cases after i by any part (one run retires it there), and a part that
 * stops for the job (the worker's death, a lost context) stops the others. What that sharing
 * changes with timing is only how many cases after a failure were still checked (and so, for
 * a job whose every property failed, which stops drawing then, how many cases it drew and its
 * digest); the verdict and the failure reported do not (a failure found out of order is
 * reported as well, and is its property's only when its index is the lowest). A job that
 * passes draws and judges every planned case, in parts or not. Only the first part replays
 * the saved reproducers. */
#ifndef SML_PROP_PARTS_H
#define SML_PROP_PARTS_H

#include <stdint.h>

#include "prop/prop.h"

/* A job is split only when it has at least this many cases per part. */
#define SML_PROP_PART_CASES 500

/* 1 when case index i belongs to cfg's part (always, when the job is not split). */
int sml_prop_part_has(const sml_prop_config *cfg, int64_t i);
/* The cases the profile names for the job: [first, max_cases) in its shard and part, or the
 * one case --case asks for. */
int64_t sml_prop_planned(const sml_prop_config *cfg);
/* How many parts the job of cfg (not yet split) runs as: 1 for a single case (--case), a
 * driver's per-job cap or stop at first failure (whose first failure must be found in case
 * order), a time-ramped size; else one per SML_PROP_PART_CASES planned cases, at most
 * SML_PROP_MAX_THREADS. */
int sml_prop_parts_for(const sml_prop_config *cfg);

/* What the parts of one job share (the engine reads and writes it through cfg->share). */
sml_prop_part_share *sml_prop_part_share_new(void);
void sml_prop_part_share_free(sml_prop_part_share *s);
/* 1 when some part found property p failing at a case before index i. */
int sml_prop_part_failed_before(const sml_prop_part_share *s, int p, int64_t i);
/* Property p failed at case i. */
void sml_prop_part_failed(sml_prop_part_share *s, int p, int64_t i);
/* A part ended the job (a worker's death, a lost context): the others stop too. */
void sml_prop_part_stop(sml_prop_part_share *s);
int sml_prop_part_stopped(const sml_prop_part_share *s);

/* The engine's per-case figures of a run, in case order (accuracy.h). */
struct sml_prop_case_log {
    float *ratio, *ulps;  /* agreement err/bound and ulps; NaN: not judged */
    unsigned char *level; /* the size level */
    int64_t *index;       /* the case index */
    int64_t n, cap;
};
void sml_prop_case_log_free(sml_prop_case_log *l);
/* The accuracy summary of a run's cases from its log (res->accuracy; its digest is kept),
 * and each case's err/bound into cfg->case_ratio where the driver asked for it. */
void sml_prop_case_log_summarize(const sml_prop_case_log *l, const sml_prop_config *cfg,
                                 sml_prop_result *res);

/* Join the results of the n parts of a job (part q: *res[q], its case log logs[q], run under
 * cfg with cfg->part {q, n}) into *out, which none of them is; cfg is the job's (unsplit)
 * config. Without the memory to join the per-case figures the job is not judged (note says
 * so). */
void sml_prop_parts_join(const sml_prop_config *cfg, const sml_prop_result *const *res,
                         const sml_prop_case_log *logs, int n, sml_prop_result *out);

#endif
