/* prop.h: the property-based engine. It draws seeded random problems (shapes and logits
 * chosen to hit edge cases), runs a kernel on each, checks the properties every softmax
 * kernel must have, shrinks a failing problem to a small one that still fails, and saves it
 * as a reproducer that `softmax-lab replay` re-runs. docs/PROPERTIES.md is the manual.
 *
 * The engine takes any sml_kernel, registered or not, so the mutation test (tests/mutants)
 * can run it on planted-bug kernels and read back which property killed each one, after how
 * many cases, and where the shrunk reproducer is. */
#ifndef SML_PROP_PROP_H
#define SML_PROP_PROP_H

#include <stdint.h>
#include <stdio.h>

#include "core/opt.h"
#include "prop/accuracy.h"
#include "prop/case.h"
#include "prop/exec.h"
#include "prop/shard.h"
#include "prop/verdict.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every property, in the order they are checked and numbered: one line each,
 *   X(ID, name, ops, help)
 * ID names the enum value SML_PROP_<ID>; name is what --props, reports and reproducers say,
 * the function p_<name> in props.c that checks it, and the name of its row in
 * docs/PROPERTIES.md's table (row n for the n-th line: test_properties_cpu checks it); ops
 * is FWD, BWD or ALL, the ops it is checked for; help is its line in --props' help. A new
 * property is one line here, its function, and its docs row (CONTRIBUTING.md). */
#define SML_PROP_LIST(X)                                                                           \
    X(AGREEMENT, agreement, ALL, "within the numerics contract of the reference")                  \
    X(ROW_SUM, row_sum, FWD, "forward rows sum to 1 (exp of log-softmax too)")                     \
    X(RANGE, range, FWD, "0 <= softmax <= 1, log-softmax <= 0")                                    \
    X(SHIFT, shift, FWD, "integer logits + integer constant: identical bits")                      \
    X(MONOTONIC, monotonic, FWD, "x_i >= x_j implies y_i >= y_j")                                  \
    X(PERMUTATION, permutation, ALL, "permuted columns give the permuted output")                  \
    X(ROW_INDEPENDENCE, row_independence, ALL, "a row's output does not depend on the other rows") \
    X(DETERMINISM, determinism, ALL, "two runs, identical bits")                                   \
    X(CANARIES, canaries, ALL, "nothing written outside the output")                               \
    X(SPECIAL_VALUES, special_values, ALL,                                                         \
      "NaN, inf and exact zeros as the contract's table says")                                     \
    X(BWD_SUM, bwd_sum, BWD, "backward rows sum to what the reference's sum to (~0)")

#define SML_PROP_ENUM_(id, name, ops, help) SML_PROP_##id,
typedef enum sml_prop_id { SML_PROP_LIST(SML_PROP_ENUM_) SML_PROP_COUNT } sml_prop_id;
#undef SML_PROP_ENUM_

#define SML_PROPS_ALL ((1u << SML_PROP_COUNT) - 1u)

const char *sml_prop_name(sml_prop_id p); /* "agreement", "row_sum", ... */
sml_status sml_prop_parse(const char *s, sml_prop_id *out);
int sml_prop_applies(sml_prop_id p, sml_op op); /* 1 if p is checked for op */

typedef enum sml_prop_outcome {
    SML_PROP_PASS = 0,
    SML_PROP_FAIL, /* the kernel broke the property */
    SML_PROP_SKIP, /* not applicable to this case, or the kernel cannot run here */
    SML_PROP_ERROR /* the kernel returned an error for a valid problem, or the engine failed */
} sml_prop_outcome;
const char *sml_prop_outcome_name(sml_prop_outcome o); /* "pass", "fail", "skip", "error" */

/* How large cases get. Ordinary cases are capped at an element count that ramps from
 * small_min_elems to small_max_elems over the run; a growing fraction (up to big_prob at
 * the end) are big cases: long rows, dispatch thresholds past small_max_elems, more than
 * 65,535 rows, capped at big_max_elems. A fixed fraction tall_prob, at any level, are tall
 * cases: more rows than a persistent or cluster kernel keeps resident, of rows long enough for
 * split's unbounded whole steps or cut over clusters, capped at tall_max_elems (gen.c, "Tall
 * cases"); 0 in the CI profile, whose case sequence then draws no extra random number. The double-precision
 * reference is the cost. */
typedef struct sml_prop_sizes {
    int64_t small_min_elems, small_max_elems;
    double big_prob;
    int64_t big_max_elems;
    int64_t max_cols;
    double tall_prob;
    int64_t tall_max_elems;
} sml_prop_sizes;

typedef enum sml_prop_profile {
    SML_PROP_PROFILE_CI = 0, /* CPU kernels in CI: seconds for the whole registry */
    SML_PROP_PROFILE_GPU,    /* GPU kernels: >= 10,000 cases per kernel, op and dtype */
    SML_PROP_PROFILE_LONG    /* nightly: 10x the cases, bigger shapes */
} sml_prop_profile;

/* The nightly profile's cases per op and dtype for a CPU kernel (a driver's choice: the
 * profile itself names 100,000). A long case costs a CPU kernel about 10 ms of a core, the
 * kernel's own run included, so 100,000 for each of the two CPU kernels' 24 jobs would take
 * longer than all the GPU kernels together; 10,000 still reach the biggest shapes (the sizes
 * ramp over the job's own cases). */
#define SML_PROP_LONG_CPU_CASES 10000

/* Hooks a driver gives a run, each called with `ctx` where set: the engine knows nothing of
 * who drives it. A suite (suite.h) sets them to count cases for its one progress line and to
 * keep each multi-line failure report in one piece among runs on other threads. */
typedef struct sml_prop_hooks {
    void (*case_done)(void *ctx, int failed); /* after each random case; failed: some property
                                                 failed or errored on it */
    void (*report_begin)(void *ctx);          /* before a failure report's lines; with
                                                 report_end NULL or not both set, the engine
                                                 locks the log stream itself */
    void (*report_end)(void *ctx);            /* after them */
    /* before the kernel runs on a case: the phase (SML_PROP_PHASE_*), the case's index (in
       the regressions phase: the reproducer's index in the sorted list), its size level,
       the property about to be checked and the case's elements. A worker process announces
       it to its supervisor (src/worker), which names the case if the worker never returns. */
    void (*case_begin)(void *ctx, int phase, int64_t index, int level, int prop, double elements);
    void *ctx;
} sml_prop_hooks;

enum {
    SML_PROP_PHASE_IDLE = 0,
    SML_PROP_PHASE_CASE,
    SML_PROP_PHASE_SHRINK,
    SML_PROP_PHASE_REGRESSION,
    SML_PROP_PHASE_RERUN, /* a failure's case run again in a fresh worker */
    SML_PROP_PHASE_INPUT  /* a user's own tensor (check --input) */
};

/* Where a job's kernel runs when not in the engine's own process (src/worker sets it): open
 * gives the job a launcher (exec.h) to the kernel's worker, or, with `fresh`, to a worker of
 * its own that no other case has run in (the rerun of a failure); close gives it back. NULL
 * open: the kernel runs in the engine's process. */
typedef struct sml_prop_runner {
    sml_status (*open)(void *ctx, const sml_kernel *k, int fresh, sml_prop_launcher *out);
    void (*close)(void *ctx, sml_prop_launcher *l);
    void *ctx;
} sml_prop_runner;

/* Part `index` (0-based) of `count` of a job's cases (parts.h); count <= 1: the whole job. */
typedef struct sml_prop_part {
    int index, count;
} sml_prop_part;
typedef struct sml_prop_part_share sml_prop_part_share;
/* Host buffers kept from case to case and run to run (props.h): one per thread, never shared
 * by two threads at once. sml_prop_pool_new gives an empty one (NULL without memory), and
 * sml_prop_pool_free frees it with everything it holds. */
typedef struct sml_prop_pool sml_prop_pool;
sml_prop_pool *sml_prop_pool_new(void);
void sml_prop_pool_free(sml_prop_pool *p);
typedef struct sml_prop_case_log sml_prop_case_log;

typedef struct sml_prop_config {
    sml_prop_profile profile; /* the profile it was made from (sml_prop_config_init, --long) */
    uint64_t seed;            /* the run seed; each case's seed is sml_derive_seed(seed, index) */
    int seed_given;           /* 1 once --seed set it: --long keeps it, never draws afresh */
    int64_t max_cases;        /* per kernel, op and dtype: the profile is a number of cases */
    int64_t level_cases;      /* the case count the size ramp spreads over; 0: max_cases */
    /* Caps, never part of a profile (the same seed runs the same cases at any speed): a job a
       cap stops before max_cases is INCOMPLETE (verdict.h). */
    double max_seconds;   /* per kernel, op and dtype (the mutation tests' drivers); 0: none */
    double total_seconds; /* the whole run's cap (--seconds); 0: none */
    double deadline;      /* total_seconds as a monotonic time (sml_prop_now), set by the
                               driver when the run starts; 0: none */
    double case_timeout;  /* the seconds a case's launch may take in a worker before it is
                               confirmed alone (--case-timeout); 0: derived from the case */
    int ramp_by_time;     /* sizes ramp with time spent too: only for drivers that want big
                               shapes from a per-job cap and do not need the same cases at
                               every speed (the GPU mutation test); no profile sets it */
    unsigned props;       /* mask of sml_prop_id bits to check */
    sml_prop_sizes sizes;
    int shrink; /* shrink failures before reporting them */
    int64_t shrink_max_evals;
    double shrink_max_seconds;
    int stop_on_failure;         /* end a kernel/op/dtype run at its first failure */
    int strict;                  /* a kernel's declared deviation excuses nothing: every
                                    kernel is held to the contract itself */
    const char *save_dir;        /* write reproducers of failures here; NULL: do not */
    const char *regressions_dir; /* replay every reproducer under it first (several folders:
                                    separated by ':'); NULL: none */
    const char
        *replay_cmd;       /* prefix of the printed replay command ("./build/softmax-lab replay") */
    const char *rerun_cmd; /* prefix of the printed rerun-one-case command, or NULL */
    int64_t only_case;     /* >= 0: run just this case index (with only_level) */
    int64_t first_case;    /* the first case index of the run (a slice of the seeded
                               sequence: cases first_case .. max_cases - 1); 0: all */
    int only_level;        /* 0..100: the size ramp's position for only_case */
    FILE *log;             /* failure reports; NULL: stdout */
    FILE *progress;        /* progress line; NULL: none */
    int threads;           /* drivers (suite.h): host threads running kernel/op/dtype runs side
                               by side; 0: one per online core, at most SML_PROP_MAX_THREADS */
    struct sml_prop_tally *tally; /* set by a suite for its runs: live counts for its progress
                               line, and the lock its output shares; NULL: none */
    sml_prop_hooks hooks;         /* what the run tells its driver; all NULL: nothing */
    float *case_ratio;            /* when set (case_cap entries): each case's agreement err/bound by
                               case index, NaN where not judged (the accuracy gate's pairing) */
    int64_t case_cap;
    unsigned char *case_counted;    /* when set (case_cap entries): 1 at each case index the run
                                       counted (judged or not), 0 elsewhere */
    const unsigned char *case_only; /* when set (case_cap entries): run only the case indices
                                       marked here (a base on a capped candidate's cases) */
    sml_shard shard;                /* run only this slice of the case indices (shard.h); the saved
                               reproducers are replayed by slice 1 only, and sizes ramp by case
                               count only (ramp_by_time is ignored): a slice's cases must be
                               those of the whole run. {0, 0}: the whole run */
    sml_prop_runner runner;         /* where the kernel runs (above); all NULL: in this process */
    /* A part of a job split to run side by side (parts.h; a suite sets these): */
    sml_prop_part part;                /* this part; {0, 0}: the whole job */
    sml_prop_part_share *share;        /* what the job's parts share; NULL: none */
    sml_prop_case_log *log_out;        /* the run's per-case figures are moved here, for the join;
                                   NULL: freed */
    struct sml_prop_case_cache *cases; /* a suite's big cases and their references, shared by
                                   every kernel judged on them (case_cache.h); NULL: none */
    sml_prop_pool *pool; /* the host buffers the run keeps its cases' arrays in, kept for the
                            next run of the same thread (a suite gives each thread one); NULL:
                            the run keeps its own, freed as it ends */
} sml_prop_config;

#define SML_PROP_MAX_THREADS 16

/* Defaults for a profile, then SML_PROP_SEED, SML_PROP_CASES, SML_PROP_SECONDS (the whole
 * run), SML_PROP_THREADS, SML_PROP_LONG=1 (long profile) from the environment. */
void sml_prop_config_init(sml_prop_config *cfg, sml_prop_profile profile);
void sml_prop_config_env(sml_prop_config *cfg);
/* The engine's flags (--seed S, --cases N, --seconds S, --threads N, --long, --props a,b,
 * --case I, --level L, --no-shrink, --strict, --save DIR, --regressions DIR[:DIR], --shard K/N,
 * --case-timeout S) as one table: what every driver parses and prints in its help. */
extern const sml_opt sml_prop_flags[];
extern const size_t sml_prop_nflags;
/* Sets flag o of that table from its value v (NULL for a flag without one): 0, or -1 for a
 * bad value, with what is wrong in why when more than o->values says it. */
int sml_prop_config_set(sml_prop_config *cfg, const sml_opt *o, const char *v, char *why, size_t n);
/* Parse one engine flag at argv[*i] (the table's, written whole): returns 1 and advances *i
 * when consumed, 0 when the flag is not the engine's, -1 on a bad value (message on stderr
 * naming the valid values). */
int sml_prop_config_flag(sml_prop_config *cfg, int argc, char **argv, int *i);
/* The usage text of those flags, one line each, from the table. */
const char *sml_prop_flags_help(void);
/* The seconds a driver should give its next kernel/op/dtype run: max_seconds, or less so
 * that total_seconds is shared evenly by the `remaining` runs not yet started after `spent`
 * seconds, `threads` of them at a time. */
double sml_prop_next_seconds(const sml_prop_config *cfg, double spent, int remaining, int threads);
/* The host threads a driver should use: cfg->threads, or one per online core (at most
 * SML_PROP_MAX_THREADS); never more than `tasks` (sml_prop_suite_tasks: the jobs' parts),
 * never fewer than 1. */
int sml_prop_threads(const sml_prop_config *cfg, int tasks);

/* The first failure of one property in a run, after shrinking. */
typedef struct sml_prop_failure {
    sml_prop_id prop;
    sml_prop_outcome outcome; /* FAIL or ERROR */
    int64_t case_index;       /* 0-based index of the case that first failed */
    int level;                /* the size ramp's position then (for --case/--level) */
    uint64_t case_seed;
    union { /* the case as drawn (rows, cols, ld, offset also name its fields) */
        sml_layout drawn;
        struct {
            int64_t rows, cols, ld, offset;
        };
    };
    union { /* the shrunk case (s_rows, s_cols, s_ld, s_offset also name its fields) */
        sml_layout shrunk;
        struct {
            int64_t s_rows, s_cols, s_ld, s_offset;
        };
    };
    int inplace, s_inplace;
    int64_t shrink_steps, shrink_evals;
    int ended;       /* SML_PROP_ENDED_* (exec.h): the worker gave no answer (died, hung, forged) */
    int confirmed;   /* its rerun in a fresh worker: 1 failed again, 0 passed (FLAKY), -1 none */
    char rerun[256]; /* what the rerun gave, in words */
    char family[64]; /* the logit generator that drew it */
    char message[384]; /* what the shrunk case shows */
    char repro[1024];  /* the reproducer's .json, or "" if not saved */
} sml_prop_failure;

/* Where a job's host thread spent its time, in seconds of wall time: drawing cases, the
 * double reference (with the inputs widened and the row facts), the kernel's runs (with a
 * worker: the round trip to it), laying the image out and reading the output back, the
 * properties' comparisons, and shrinking failures (everything in it). The rest of the job
 * (saved reproducers, reruns, reports) is its seconds less these. */
typedef struct sml_prop_host_time {
    double gen, ref, run, copy, check, shrink;
} sml_prop_host_time;

/* *into += t, stage by stage (the parts of a job, the jobs of a run). */
static inline void sml_prop_host_time_add(sml_prop_host_time *into, const sml_prop_host_time *t) {
    into->gen += t->gen;
    into->ref += t->ref;
    into->run += t->run;
    into->copy += t->copy;
    into->check += t->check;
    into->shrink += t->shrink;
}

typedef struct sml_prop_result {
    const sml_kernel *kernel;
    sml_op op;
    sml_dtype dtype;
    sml_verdict verdict;       /* sml_verdict_decide(&events): what the job's verdict is */
    sml_verdict_events events; /* what happened in the job, counted (verdict.h) */
    sml_prop_outcome outcome;  /* the properties' side of it: PASS (also INCOMPLETE), FAIL (also
                                   FLAKY), SKIP (could not run here: see note), ERROR */
    char note[192];
    int64_t cases;        /* random cases run */
    int64_t failed_cases; /* cases where some property failed or errored */
    int64_t refused;      /* cases the kernel refused (padded stride) and so skipped */
    int64_t regressions, regressions_failed; /* saved reproducers replayed first */
    int64_t checks[SML_PROP_COUNT], fails[SML_PROP_COUNT], skips[SML_PROP_COUNT];
    int64_t deviations[SML_PROP_COUNT];  /* checks outside the contract but within the kernel's
                                           declared deviation (sml_kernel.deviation) */
    double excused_ulps, excused_ratio;  /* the largest error the declaration excused, over the
                                           value comparisons: ulps of the dtype, x the bound */
    int64_t killed_at[SML_PROP_COUNT];   /* cases run when the property first failed; 0: never */
    int64_t killed_case[SML_PROP_COUNT]; /* ... the index of that case (where killed_at > 0) */
    double worst_ratio;                  /* agreement: worst |error| / allowed over all cases */
    double worst_ulps;                   /* ... in ulps of the output dtype, at that element */
    sml_accuracy accuracy;               /* agreement's err/bound over the cases (accuracy.h) */
    double seconds;
    sml_prop_host_time host; /* ... of those seconds */
    double elements;         /* input elements over all cases */
    int64_t tall;            /* cases drawn tall (gen.c), of cases */
    int64_t shared;          /* cases taken as another kernel's job drew and referenced them
                                (case_cache.h), of cases */
    int last_level;          /* the size ramp's position at the last case (100: the
                                      run reached its biggest shapes) */
    /* The random case that took longest, drawing to verdict (host and kernel): its index
       (-1: none), elements and seconds. Timing, not a verdict: it depends on the machine. */
    int64_t slowest_case;
    double slowest_elements, slowest_seconds;
    int nfail;
    sml_prop_failure failures[SML_PROP_COUNT]; /* in the order found */
} sml_prop_result;

/* Seconds on a monotonic clock (the budgets' clock). */
double sml_prop_now(void);

/* A failure report's lines must not interleave with other runs' output: begin takes the
 * config's report hooks where it has them (a suite's output lock, which also clears its
 * progress line), else the log stream's own lock, and returns the stream to write to (the
 * config's log, else stdout); end gives it back. */
FILE *sml_prop_report_begin(const sml_prop_config *cfg);
void sml_prop_report_end(const sml_prop_config *cfg, FILE *L);

/* 1 for an outcome that a CUDA error ended (ERROR, its message naming CUDA): the context
 * may be lost, so nothing after it in that process can be judged or shrunk. */
int sml_prop_context_lost(sml_prop_outcome outcome, const char *msg);

/* Run the engine on one kernel, op and dtype. SML_OK even when properties fail (see
 * res->outcome); an error status only for a bad argument. */
sml_status sml_prop_run(const sml_kernel *k, sml_op op, sml_dtype dt, const sml_prop_config *cfg,
                        sml_prop_result *res);
/* The size level of case i when sizes ramp by case count (every profile but the long one). */
int sml_prop_case_level(const sml_prop_config *cfg, int64_t i);
/* The property that failed in the fewest cases (the mutation test's "killed by"), or -1. */
int sml_prop_result_killer(const sml_prop_result *res);
/* res->verdict from res->events (verdict.h), and res->outcome in step with it; whoever adds
 * an event after sml_prop_run (a worker's exit status under a tool) calls it again. */
void sml_prop_result_decide(sml_prop_result *res);

/* Reproducers. A kernel named in one that is not in the registry (a mutant) is resolved by
 * `lookup` when given. */
typedef const sml_kernel *(*sml_prop_lookup_fn)(const char *name, void *ctx);

typedef struct sml_prop_replay_result {
    sml_prop_outcome outcome; /* now: FAIL means the bug is still there */
    char kernel[64];
    sml_prop_id prop;
    sml_op op;
    sml_dtype dtype;
    union { /* the reproducer's layout (rows, cols, ld, offset also name its fields) */
        sml_layout layout;
        struct {
            int64_t rows, cols, ld, offset;
        };
    };
    int inplace;
    char recorded[16]; /* the verdict when it was saved */
    char message[384];
    char library[4096]; /* the plugin library the kernel run came from; "" built-in */
    int strict;         /* judged against the contract itself: a --strict run saved it */
} sml_prop_replay_result;

/* Re-run the reproducer at json_path on `k` (NULL: the kernel it names; a plugin kernel not
 * registered yet is loaded from the library the reproducer records). SML_ERR_IO /
 * SML_ERR_FORMAT for an unreadable reproducer, SML_ERR_UNKNOWN_KERNEL for a kernel that
 * cannot be found, SML_ERR_PLUGIN for a recorded library that cannot be loaded; message in
 * r->message. */
sml_status sml_prop_replay(const char *json_path, const sml_kernel *k, sml_prop_lookup_fn lookup,
                           void *lookup_ctx, sml_prop_replay_result *r);
/* The same with the kernel run where `runner` puts it (a fresh worker: src/worker). */
sml_status sml_prop_replay_in(const char *json_path, const sml_kernel *k,
                              const sml_prop_runner *runner, sml_prop_replay_result *r);

#ifdef __cplusplus
}
#endif
#endif
