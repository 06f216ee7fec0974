/* props.h: the eleven properties, evaluated on one case. An evaluation computes the
 * reference and the kernel's main run at most once and shares them among the properties
 * that need them; properties that need more runs (shifted, permuted, reordered, repeated
 * inputs) make them through the same exec, with the same layout. */
#ifndef SML_PROP_PROPS_H
#define SML_PROP_PROPS_H

#include <stdint.h>

#include "prop/case.h"
#include "prop/case_cache.h"
#include "prop/exec.h"
#include "prop/prop.h"
#include "reference/check.h"

/* What stays the same over a run: the kernel, its handle, its buffers. stream_check (0 from
 * sml_prop_env_init): the main run of the cases evaluated now is followed by the stream check
 * (exec.h; GPU kernels only), which the canaries property reports. The engine sets it while
 * shrinking and on a reproducer replayed by itself (replay), not on the suite's cases or its
 * regression corpus: a held stream in a context that many suite threads share stalls their
 * device-wide work (a kernel's first, lazy load waits for the device to idle), which made the
 * suite 3 to 4 times slower on an H100. A kernel that launches elsewhere races the read-back
 * of the suite's cases and fails some property there; its shrinking and its reproducer then
 * name the cause. */
/* Buffers evaluations keep from case to case (props.c: the case's widened inputs, reference
 * and output, and the properties' own arrays), so that a big case's arrays are not mapped,
 * faulted in and zeroed again for every property and every case: that churn cost a third of
 * the host time of the big cases. A pool (prop.h, sml_prop_pool) holds a set for each of
 * SML_PROP_SCRATCH_LEVELS evaluations alive at once (a failure's checks and its shrinking run
 * inside the evaluation of the case that failed; more nested evaluations get sets of their
 * own, freed as they end); after each evaluation its set keeps at most SML_PROP_SCRATCH_KEEP
 * bytes (the largest buffers freed first), which holds the GPU profile's tall cases (2^23
 * elements). A suite gives each of its threads a pool for all the runs it makes (a job's parts
 * are runs of their own, each drawing about one big case); a run without one keeps its own,
 * freed with its environment. */
#define SML_PROP_SCRATCH_SLOTS  12
#define SML_PROP_SCRATCH_LEVELS 2
#define SML_PROP_SCRATCH_KEEP   ((size_t)640 << 20)
typedef struct sml_prop_scratch {
    void *p[SML_PROP_SCRATCH_SLOTS];
    size_t cap[SML_PROP_SCRATCH_SLOTS];
} sml_prop_scratch;

struct sml_prop_pool {
    sml_prop_scratch set[SML_PROP_SCRATCH_LEVELS];
    int depth;              /* the evaluations alive on it (sml_prop_eval_begin .. end) */
    sml_prop_scratch cases; /* the arrays of the case drawn last (gen.h, sml_prop_gen_case_in) */
};

/* Slot `slot` (< SML_PROP_SCRATCH_SLOTS) of p's set for drawn cases, at least `bytes` bytes,
 * contents undefined (NULL without memory); first, the set is trimmed to SML_PROP_SCRATCH_KEEP
 * when slot is 0 (a new case's first array: the last case is done with). */
void *sml_prop_pool_case_buf(sml_prop_pool *p, int slot, size_t bytes);

typedef struct sml_prop_env {
    const sml_kernel *k;
    sml_handle *h;
    sml_prop_exec ex;
    int stream_check;
    int strict; /* the kernel's declared deviation is not applied (sml_prop_config.strict) */
    sml_prop_host_time *clock; /* where the reference, runs and copies add their time (NULL:
                                  nowhere, as while shrinking, which counts as a whole) */
    sml_prop_pool *pool;       /* where its evaluations keep their arrays: own_pool (after
                            sml_prop_env_init), or a pool of the caller's (sml_prop_config.pool) */
    sml_prop_pool own_pool;
} sml_prop_env;

/* remote: where the kernel runs (a worker process, src/worker); NULL: in this process. */
sml_status sml_prop_env_init(sml_prop_env *env, const sml_kernel *k,
                             const sml_prop_launcher *remote);
void sml_prop_env_free(sml_prop_env *env);

typedef struct sml_prop_verdict {
    sml_prop_outcome outcome;
    int deviation;      /* PASS only because the kernel's declared deviation covers the miss
                           (docs/PROPERTIES.md, "Declared deviations") */
    double ratio, ulps; /* agreement: the worst error against the bound; else 0 */
    int ended;          /* SML_PROP_ENDED_* (exec.h): the run gave no answer to judge, why in
                           msg (a FAIL: the worker's death, a hang, a forged answer) */
    int64_t row, col;   /* where it broke; -1 when not about one element */
    char msg[384];
    double excused_ulps, excused_ratio; /* a value comparison PASS within the declaration: its
                                           largest excused error, in ulps and x the bound */
} sml_prop_verdict;

typedef struct sml_prop_eval {
    sml_prop_env *env;
    const sml_prop_case *c;
    double *want;         /* the reference, dense */
    double *xd, *dyd;     /* x and dy as doubles, dense */
    double *ex;           /* each row's sml_ref_exp_row (reference.h), which the reference, the
                             row facts and log_softmax_bwd's bounds share; NULL for softmax_bwd */
    sml_row_facts *facts; /* per row, for the contract's bounds */
    void *out;            /* the main run's output, dense, in the dtype */
    double *got;          /* ... as doubles */
    sml_prop_run_report main;
    int want_state, main_state, facts_state, ex_state, got_state; /* 0 not yet, 1 done, -1 failed */
    sml_status engine_status;
    sml_prop_scratch *sc; /* where its arrays live: the environment's set for its level, or own */
    sml_prop_scratch own; /* ... past SML_PROP_SCRATCH_LEVELS evaluations alive: freed at its end */
} sml_prop_eval;

void sml_prop_eval_begin(sml_prop_eval *e, sml_prop_env *env, const sml_prop_case *c);
/* A shared case's arrays (case_cache.h), computed by sml_prop_derive: the evaluation reads
 * them (never writes them) in place of computing its own. Right after begin. */
void sml_prop_eval_use(sml_prop_eval *e, const sml_prop_derived *d);
/* The arrays an evaluation of c computes for its properties (x and dy widened, exponentials,
 * reference, row facts), computed as it computes them into the first set of `pool` (an
 * evaluation of their own: nothing else on that pool may be alive), where they stay until the
 * pool's next use; d points at them. SML_ERR_OUT_OF_MEMORY without memory for them. */
sml_status sml_prop_derive(sml_prop_env *env, sml_prop_pool *pool, const sml_prop_case *c,
                           sml_prop_derived *d);
/* With a worker's launcher: send the case's main run now and compute the reference while the
 * worker runs it (its answer is taken by the first property that needs it, or by any other run
 * of the case). Nothing otherwise. The exec's phase, index and prop name the run. */
void sml_prop_eval_start(sml_prop_eval *e);
void sml_prop_eval_end(sml_prop_eval *e);
/* Evaluate property p on the case (SKIP where it does not apply). */
void sml_prop_eval_check(sml_prop_eval *e, sml_prop_id p, sml_prop_verdict *v);
/* 1 when the case's first run was a refusal the contract allows (SML_ERR_UNSUPPORTED on a
 * padded stride, nothing written): what sml_prop_result.refused counts. */
int sml_prop_eval_refused(const sml_prop_eval *e);

/* How far one row's sum may stray, from the contract's per-element bounds (the one place
 * a sum bound is defined): forward softmax: sum over the row of the bound on each y_i;
 * log-softmax: of exp(want_i) * expm1(bound_i) (the bound carried through exp); backward:
 * of the bound on each dx_i. want, x, dy are the row's reference output and inputs. */
double sml_prop_row_sum_bound(sml_op op, sml_dtype dt, const sml_row_facts *f, const double *x,
                              const double *dy, const double *want, int64_t cols);

#endif
