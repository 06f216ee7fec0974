/* bench.h: the benchmark core behind `softmax-lab bench` and tests/perf. A plan (shapes,
 * ops, dtypes, kernels) runs case by case: fresh seeded inputs, the double reference, each
 * kernel checked on that input and then timed, the copy references timed the same way.
 * The run then becomes the decision ledger (ledger.h). */
#ifndef SML_BENCH_BENCH_H
#define SML_BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "bench/measure.h"
#include "bench/sweeps.h"
#include "core/internal.h"
#include "prop/shard.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sml_bench_config {
    sml_stop_rule stop;  /* min 10 samples; noise 0.02; max 0.5 s per measurement */
    double gpu_sample_s; /* a GPU sample batches launches until it lasts about this */
    double cpu_sample_s;
    double warmup_s;
    int max_batch;
    int gpu_min_batch;  /* a GPU sample holds at least this many launches */
    int gpu_hold;       /* 1: a GPU sample's launches are queued behind the launch hold */
    int l2_warm;        /* 1: same buffers every call (small shapes then run from L2) */
    double l2_multiple; /* rotate buffers while the working set < this many L2 sizes */
    int max_sets;
    uint64_t seed;
    double margin;           /* noise floor of the decision rule (decide.h) */
    int threads;             /* host threads for inputs, reference, checks; 0: all cores */
    int64_t check_max_elems; /* check at most this many elements per kernel and case (whole
                                rows, spread over the tensor); <= 0: every element */
    int progress;            /* 1: progress line on stderr */
    double time_limit_s;     /* > 0: start no case once the run has taken this long; the
                               ledger is then partial (sml_bench_run.ncases_planned) */
    const char *ended;       /* kernels whose worker process ended in an earlier run of this
                               bench, a line "kernel<TAB>cause" each: their rows say so and
                               they do not run again (NULL: none; src/worker/command.c) */
} sml_bench_config;

void sml_bench_config_default(sml_bench_config *c);
/* The value of --check-elems: "all" (0: every element) or N >= 1. 0 on anything else. */
int sml_bench_parse_check_elems(const char *s, int64_t *out);

typedef enum sml_bench_verdict {
    SML_VERDICT_OK = 0,         /* passed the correctness check on this input */
    SML_VERDICT_WRONG,          /* ran, but broke the numerics contract: its time never counts */
    SML_VERDICT_ERROR,          /* failed to run (launch error, unsupported at run time) */
    SML_VERDICT_KNOWN_DEVIATION /* outside the contract, every miss within the kernel's declared
                                   deviation (sml_kernel.deviation): reported, not a contract
                                   failure of the run, never a win */
} sml_bench_verdict;
/* "ok", "WRONG", "ERROR", "KNOWN-DEV" */
const char *sml_bench_verdict_name(sml_bench_verdict v);
/* 1 for a verdict that breaks the run: WRONG or ERROR (a known deviation does not). */
int sml_bench_verdict_failed(sml_bench_verdict v);

typedef struct sml_bench_case {
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols;
    int64_t requested_rows; /* before the CPU-only shrink */
    uint64_t seed;          /* inputs are a function of this seed and the shape */
    size_t plan_index;      /* its index in the whole plan's fixed order (every shard's) */
    int64_t checked_rows;   /* rows the correctness check covered (all, or a spread sample) */
    size_t tensor_bytes;    /* rows * cols * element size */
    size_t bytes_moved;     /* forward 2x, backward 3x tensor_bytes */
    int nsets;              /* buffer sets rotated through while timing */
    char cache[64];         /* "cold", "cold (rotating N sets)", "L2-warm", "host" */
    int has_copy;           /* copy reference (same bytes) measured */
    sml_measurement copy;
    double copy_gbps;
    int has_limit;   /* traffic-matched limit measured (copy_ref.h) */
    int limit_reads; /* tensors its kernel reads: 1 forward, 2 backward; it writes one */
    sml_measurement limit;
    double limit_gbps;
} sml_bench_case;

typedef struct sml_bench_result {
    char kernel[32];
    sml_device device;
    int baseline_only; /* not asked for: added because a speedup needs it */
    size_t case_index;
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols;
    sml_bench_verdict verdict;
    char check[448]; /* the checker's one line, or the error */
    double worst_ulps, worst_ratio;
    int timed;
    sml_measurement m; /* seconds per launch */
    double gbps;
    double frac_memcpy;      /* gbps / the device's large-buffer copy bandwidth */
    double frac_copy_kernel; /* time of the copy reference moving the same bytes / time */
    double frac_limit;       /* time of the traffic-matched limit (the op's own reads and
                                write, same bytes) / time; NaN if it was not measured */
    double vs_cudnn, vs_naive, vs_best_other; /* time(other) / time(this); NaN if absent */
    char best_other[32];
    char auto_path[16]; /* `auto` only: the kernel it ran (sml_auto_choice); "" otherwise */
} sml_bench_result;

typedef struct sml_bench_env {
    sml_gpu_info gpu;
    char host[64];
    char time_utc[32];
    char version[16];
    char auto_plans[128]; /* the plan table `auto` read on this GPU (its file name), "" where it
                             ran its rules (no table for this GPU, or SML_PLANS=off) */
    int threads;
    int has_memcpy, has_host_memcpy;
    size_t memcpy_bytes, host_memcpy_bytes;
    sml_measurement memcpy, host_memcpy;
    double memcpy_gbps, host_memcpy_gbps;
} sml_bench_env;

typedef struct sml_bench_plan {
    char sweep[32]; /* a sweep name, or "custom" */
    sml_sweep shapes;
    unsigned ops;               /* bit per sml_op */
    unsigned dtypes;            /* bit per sml_dtype; filters the shapes' own dtypes */
    const sml_kernel **kernels; /* to measure (registry entries, or a test's own) */
    const int *baseline_only;   /* per kernel, may be NULL */
    size_t nkernels;
    int shrunk;         /* 1: rows were cut for a CPU-only host */
    const char *notes;  /* copied into the run's notes; may be NULL */
    const char *versus; /* non-NULL: every kernel's claim is ">= 1.00x versus, all
                                     shapes" instead of its own (bench --versus) */
    sml_shard shard;    /* measure only this slice of the plan's cases (prop/shard.h:
                                     case i of the fixed order when i mod N == K - 1); {0, 0}:
                                     all of them */
} sml_bench_plan;

typedef struct sml_bench_run {
    sml_bench_plan plan; /* a copy; kernels points at the caller's array */
    sml_bench_config cfg;
    sml_bench_env env;
    sml_bench_case *cases;
    size_t ncases;         /* cases measured */
    size_t ncases_in_plan; /* cases in the whole plan, every slice (bench --shard) */
    size_t ncases_planned; /* cases in the plan (in its slice): more than ncases when the time limit
                                     stopped the run (the ledger says so, and no kernel with
                                     a claim is called Supported on it) */
    sml_bench_result *results;
    size_t nresults, cap;
    double seconds;
    char notes[512]; /* what a reader must know: shrunk sweep, no GPU, ... */
} sml_bench_run;

/* 1 when the time limit stopped the run before every planned case was measured. */
int sml_bench_partial(const sml_bench_run *run);
/* "the time limit (S s) stopped the run after N of M cases", the one wording the ledger, the
 * reasons and stdout share; returns buf. */
const char *sml_bench_partial_text(const sml_bench_run *run, char *buf, size_t n);

/* A timed GPU row of a run with the launch hold on whose holds stopped (SML_HOLD_MAX_LOST
 * samples ran out of time), so that the rest was timed as made (the table's `~`, the .md
 * ledger's "(unheld)"). */
int sml_bench_hold_lost(const sml_bench_run *run, const sml_bench_result *r);

/* Called after each case, for printing as the run goes. */
typedef void (*sml_bench_case_cb)(const sml_bench_run *run, size_t case_index, void *user);

/* Kernel selection: "all" (GPU kernels with a GPU, else CPU backends), "gpu", "cpu", or
 * names separated by commas. Kernels this build or host cannot run are dropped with a note
 * in `notes`; baselines a speedup or a claim needs (cudnn, naive / cpu_naive, claim
 * baselines) are added with baseline_only = 1. Returns SML_ERR_UNKNOWN_KERNEL (name in err)
 * or SML_ERR_INVALID_ARG when nothing is left to run. out/flags hold SML_MAX_KERNELS. */
#define SML_MAX_KERNELS 64
sml_status sml_bench_select(const char *spec, int gpu, const sml_kernel **out, int *baseline_only,
                            size_t *n, char *notes, size_t notes_len, char *err, size_t errlen);

/* 1 when kernel k can run (op, dtype, cols) in this build on this host. */
int sml_bench_supports(const sml_kernel *k, sml_op op, sml_dtype dt, int64_t cols, int gpu);

typedef struct sml_bench_estimate {
    size_t cases, cases_run, measurements; /* cases_run: those some selected kernel supports */
    int threads;                           /* host threads the run will use */
    double timing_bound_s;                 /* measurements x (max seconds + warm-up) */
    double host_s;                         /* rough host time at `threads` threads */
} sml_bench_estimate;
void sml_bench_estimate_plan(const sml_bench_plan *p, const sml_bench_config *c, int gpu,
                             sml_bench_estimate *e);

/* Runs the plan. Returns SML_OK even when kernels were WRONG (that is a result); an error
 * means the run itself could not proceed (err says why). */
sml_status sml_bench_execute(const sml_bench_plan *plan, const sml_bench_config *cfg,
                             sml_bench_case_cb cb, void *user, sml_bench_run *run, char *err,
                             size_t errlen);
void sml_bench_run_free(sml_bench_run *run);

/* The result of `kernel` in case `c`, or NULL. */
const sml_bench_result *sml_bench_find(const sml_bench_run *run, size_t c, const char *kernel);

#ifdef __cplusplus
}
#endif
#endif
