/* check: the property suite from the command line (docs/PROPERTIES.md), or, with --input,
 * every kernel on a user's own .npy logits (check_input.c).
 *
 *   softmax-lab check [--kernel K|all] [--op OP|all] [--dtype D|all] [--cases N]
 *                     [--seconds S] [--seed S] [--save DIR] [--json FILE] [engine flags]
 *   softmax-lab check --kernel K --against BASE [--allow-less-accurate] [suite options]
 *   softmax-lab check --input logits.npy [--kernel K|all] [--op OP] [--dy grad.npy]
 *                     [--dtype bf16] [--save DIR] [--json FILE]
 *   softmax-lab check --input x.npy --output y.npy [--op OP] [--dy dy.npy] [--dtype bf16]
 *                     [--save DIR] [--json FILE]
 *
 * Exit: 0 every property held on what ran (kernels that cannot run here, under --kernel all,
 * are listed as skipped), 1 a kernel failed, 2 bad usage, 3 a kernel named with --kernel
 * could not run here or nothing at all was checked (check_input.h for --input). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "prop/accuracy_json.h"
#include "json/json_write.h"
#include "prop/deviation.h"
#include "check_against.h"
#include "check_input.h"
#include "check_report.h"
#include "masks.h"
#include "options.h"
#include "regressions.h"
#include "commands.h"
#include "devices.h"
#include "prop/prop.h"
#include "prop/repro.h"
#include "prop/shard_json.h"
#include "prop/suite.h"
#include "worker/worker.h"
#include "softmax_lab.h"
#include "io/out_file.h"

#define ME "softmax-lab check"

typedef struct ksum {
    int64_t cases, planned, failed, regressions, runs, skipped, errors, deviations, slow;
    int64_t excused[SML_PROP_COUNT];    /* checks outside the contract, within the declaration */
    double excused_ulps, excused_ratio; /* the largest error the declaration excused */
    double worst_ratio, worst_ulps, seconds;
    sml_verdict verdict; /* the gravest of its jobs' */
    int exit;            /* the gravest of its jobs' exit statuses */
    char skip_note[192];
    char error_note[256]; /* the first job that could not be judged: why */
    char short_note[256]; /* the first job its cap stopped: which, and how far it got */
} ksum;

static size_t registry_index(const sml_kernel *k) {
    size_t i = 0;
    while (sml_kernel_at(i) && sml_kernel_at(i) != k) i++;
    return i;
}

#define SML_CHECK_SCHEMA "softmax-lab-check/1"

/* "a,b,c" or "all" (default) into the kernels chosen, and those named one by one. */
static int parse_kernels(const char *spec, size_t nk, unsigned char *chosen, unsigned char *named) {
    char buf[512];
    if (!spec) spec = "all";
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) {
        fprintf(stderr, ME ": --kernel list too long\n");
        return 0;
    }
    int any = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        any = 1;
        if (!strcmp(t, "all")) {
            memset(chosen, 1, nk);
            continue;
        }
        const sml_kernel *k = sml_kernel_find(t);
        if (!k) {
            char names[2048];
            fprintf(
                stderr,
                ME ": bad value for --kernel: no kernel '%s' in the registry (valid: %s, or all)\n",
                t, sml_cli_kernel_names(names, sizeof names));
            return 0;
        }
        size_t i = registry_index(k);
        if (i < nk) chosen[i] = named[i] = 1;
    }
    if (!any) fprintf(stderr, ME ": --kernel needs a kernel name or all\n");
    return any;
}

static void json_run(sml_jw *w, const sml_prop_job *job) {
    const sml_kernel *k = job->k;
    sml_op op = job->op;
    sml_dtype dt = job->dtype;
    const sml_prop_result *res = &job->res;
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "kernel", k->name);
    /* The plugin library the kernel came from (null: built in): a rerun line loads it. */
    sml_jw_kstr(w, "library", sml_kernel_library(k));
    sml_jw_kstr(w, "op", sml_op_name(op));
    sml_jw_kstr(w, "dtype", sml_dtype_name(dt));
    sml_jw_kstr(w, "outcome", sml_prop_outcome_name(res->outcome));
    sml_jw_kstr(w, "verdict", sml_verdict_name(res->verdict));
    sml_jw_kstr(w, "note",
                res->outcome == SML_PROP_SKIP || res->outcome == SML_PROP_ERROR ||
                        res->verdict == SML_JOB_INCOMPLETE
                    ? res->note
                    : NULL);
    sml_jw_kint(w, "cases", res->cases);
    sml_jw_kint(w, "planned", res->events.planned);
    sml_jw_kint(w, "slow", res->events.n[SML_EV_SLOW]);
    sml_jw_kint(w, "failed_cases", res->failed_cases);
    sml_jw_kint(w, "regressions", res->regressions);
    sml_jw_kint(w, "regressions_failed", res->regressions_failed);
    sml_jw_knum(w, "worst_ratio", res->worst_ratio);
    sml_jw_knum(w, "worst_ulps", res->worst_ulps);
    sml_jw_knum(w, "seconds", res->seconds);
    sml_jw_kint(w, "ramp", res->last_level);
    sml_jw_kint(w, "slowest_case", res->slowest_case);
    sml_jw_knum(w, "slowest_case_elements", res->slowest_elements);
    sml_jw_knum(w, "slowest_case_seconds", res->slowest_seconds);
    sml_acc_write(w, "accuracy", &res->accuracy);
    /* The kernel's declared deviation for this op and dtype (null: the contract), as applied
     * (strict: not applied), and the checks it excused. */
    sml_dev_terms t;
    int decl = sml_dev_terms_get(k->deviation, op, dt, &t);
    sml_jw_kstr(w, "declared_deviation", decl ? t.text : NULL);
    int64_t excused = 0;
    for (int p = 0; p < SML_PROP_COUNT; p++) excused += res->deviations[p];
    sml_jw_kint(w, "excused", excused);
    sml_jw_knum(w, "excused_worst_ulps", res->excused_ulps);
    sml_jw_knum(w, "excused_worst_ratio", res->excused_ratio);
    sml_jw_key(w, "failures");
    sml_jw_array_inline(w);
    for (int f = 0; f < res->nfail; f++) {
        const sml_prop_failure *fl = &res->failures[f];
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "property", sml_prop_name(fl->prop));
        sml_jw_kstr(w, "outcome", sml_prop_outcome_name(fl->outcome));
        sml_jw_kint(w, "case", fl->case_index);
        sml_jw_kint(w, "level", fl->level);
        sml_jw_kint(w, "rows", fl->rows);
        sml_jw_kint(w, "cols", fl->cols);
        sml_jw_kint(w, "shrunk_rows", fl->s_rows);
        sml_jw_kint(w, "shrunk_cols", fl->s_cols);
        sml_jw_kstr(w, "message", fl->message);
        sml_jw_kstr(w, "rerun",
                    fl->confirmed == 1   ? "failed again"
                    : fl->confirmed == 0 ? "passed (flaky)"
                                         : "not rerun");
        sml_jw_kstr(w, "reproducer", fl->repro);
        sml_jw_end(w);
    }
    sml_jw_end(w);
    if (job->cfg.shard.count) sml_shard_json_run(w, job);
    sml_jw_end(w);
}

/* The command line, parsed. */
/* A regression corpus that cannot be read is no pass: 1 after the message naming the first
 * bad reproducer, unless --skip-bad-regressions (then a warning, and they are skipped). */
static int regressions_unreadable(const sml_prop_config *cfg, int skip_bad) {
    char err[1024];
    size_t bad =
        cfg->regressions_dir ? sml_prop_repro_unreadable(cfg->regressions_dir, err, sizeof err) : 0;
    if (!bad) return 0;
    fprintf(stderr,
            ME ": %s%zu reproducer(s) under --regressions cannot be read; the first: %s%s\n",
            skip_bad ? "warning: skipping " : "", bad, err,
            skip_bad ? "" : " (fix or remove them, or --skip-bad-regressions)");
    return !skip_bad;
}

typedef struct check_args {
    const char *kernel, *op_s, *dt_s, *json, *input, *dy, *output, *against, *sanitize;
    int allow_less, in_process, gpu_only, skip_bad;
    const char *const *wrap; /* the tool workers run under (--sanitize), or NULL */
    int64_t cases_given;     /* one count for every kernel; 0: the profile's, per device */
    const char *cases_from; /* what gave it: "--cases" (the flag or SML_PROP_CASES), "--sanitize" */
    unsigned ops, dts;      /* --op and --dtype: every one by default */
    sml_prop_config cfg;
    const char *regressions_from; /* what chose cfg.regressions_dir, as check says it */
    char regressions[8192];       /* the default corpus (regressions.h) */
} check_args;

enum {
    O_KERNEL,
    O_OP,
    O_DTYPE,
    O_JSON,
    O_AGAINST,
    O_ALLOW_LESS,
    O_SKIP_BAD,
    O_SANITIZE,
    O_IN_PROCESS,
    O_INPUT,
    O_OUTPUT,
    O_DY
};

static const sml_opt OPTS[] = {
    {"kernel", "K[,K]", "registered kernel names (softmax-lab list), comma-separated, or all",
     "the kernels to check (default all)", NULL, O_KERNEL},
    {"op", "OP[,OP]", SML_CLI_OP_LIST, "the ops (default all; with --input: softmax)", NULL, O_OP},
    {"dtype", "D[,D]", SML_CLI_DTYPE_LIST " (numpy and PyTorch names too: float32, torch.bfloat16)",
     "the dtypes (default all); with --input: what 16-bit raw data holds", NULL, O_DTYPE},
    {"json", "FILE", "a file name, or - for standard output",
     "write the results as JSON (softmax-lab-check/1)",
     "with each run's accuracy: err/bound worst, p99, median, worst ulps, seed, cases and the "
     "cases' digest",
     O_JSON},
    {"against", "BASE", "a registered kernel name",
     "with --kernel K: is K MORE / LESS ACCURATE than BASE, on the very same cases",
     "judged per op and dtype (docs/NUMERICS.md, section 8); --save DIR keeps the case of the "
     "largest loss as a reproducer; exit 1 on LESS ACCURATE. K stops at --seconds and BASE runs "
     "the same cases; with a GPU kernel and no --seconds, the GPU profile's 10,000 cases and "
     "540 s budget",
     O_AGAINST},
    {"allow-less-accurate", NULL, NULL, "report LESS ACCURATE without failing the run", NULL,
     O_ALLOW_LESS},
    {"skip-bad-regressions", NULL, NULL, "skip saved reproducers that cannot be read (else exit 2)",
     NULL, O_SKIP_BAD},
    {"sanitize", "T[,T]", "memcheck, racecheck, synccheck, initcheck, comma-separated",
     "GPU kernels' first 20 cases under compute-sanitizer --tool T",
     "per op and dtype (or --cases), in worker processes: a reported hazard is a FAIL with the "
     "tool's report; exit 77 where compute-sanitizer is absent",
     O_SANITIZE},
    {"in-process", NULL, NULL, "run the kernels in this process (for a debugger), not in workers",
     "by default each kernel runs in a worker process, and a crash, an exit, a hang past the "
     "case's deadline or the run's --seconds is a FAIL of that kernel",
     O_IN_PROCESS},
};

static const sml_opt INPUT_OPTS[] = {
    {"input", "FILE", "a .npy file (numpy.save): fp32, fp16, or bf16 bits as uint16",
     "run the kernels on these logits (softmax over the last axis)",
     "each kernel is judged against the double-precision reference; --save DIR writes each "
     "kernel's output as .npy. For backward ops --input holds the logits: y is the reference "
     "forward output of them, rounded to the dtype",
     O_INPUT},
    {"output", "FILE", "a .npy file of --input's dtype and shape",
     "judge this output of --op on --input, made elsewhere (PyTorch, JAX)",
     "forward: --input holds the logits; backward: --input holds the forward output y, --dy the "
     "upstream gradient and --output the dx. Prints the verdict, the count of elements outside "
     "the contract and the worst ones (index, got, want, error, bound in ulps); --save DIR writes "
     "the reference rounded to the dtype as DIR/reference.OP.npy",
     O_OUTPUT},
    {"dy", "FILE", "a .npy file of --input's dtype and shape",
     "the upstream gradient, for backward ops", NULL, O_DY},
};

static void reference(FILE *f) {
    fprintf(f, "\nThe default corpus of saved regressions, replayed first (`check` prints "
               "how many cases it replayed, and from where):\n\n");
    sml_cli_wrap(f, 0, 0,
                 "1. the corpus installed with softmax-lab (share/softmax_lab/regressions and "
                 "share/softmax_lab/mutants-corpus beside its library; in a build tree, the "
                 "checkout's tests/regressions and tests/mutants/corpus);\n"
                 "2. tests/regressions and tests/mutants/corpus under the current directory, "
                 "where they exist (a checkout, or a project's own corpus).\n"
                 "--regressions DIR[:DIR] or SML_REGRESSIONS=DIR[:DIR] replays those folders "
                 "instead; none replays nothing.");
}

static const sml_cli_spec SPEC = {
    "check",
    "[--kernel K|all] [--op OP|all] [--dtype D|all] [--cases N] [options]\n"
    "--kernel K --against BASE [--allow-less-accurate] [options]\n"
    "--input x.npy [--kernel K|all] [--op OP|all] [--dy dy.npy] [options]\n"
    "--input x.npy --output y.npy [--op OP] [--dy dy.npy] [options]",
    "The property suite (11 properties, shrinking, a reproducer per failure) on each kernel, op "
    "and dtype, after replaying the saved regressions; a kernel's accuracy against another's on "
    "the same cases; kernels on your own tensor; an output made elsewhere, judged against the "
    "double-precision reference. More: docs/CLI.md, docs/PROPERTIES.md.",
    {SML_OPT_GROUP(NULL, OPTS),
     SML_OPT_GROUP("Your own tensors", INPUT_OPTS),
     {"Suite (engine) options", sml_prop_flags, 0},
     SML_OPT_GROUP(NULL, sml_cli_devices_opts)},
    "exit: 0 every planned case of every kernel that ran held (under --kernel all, kernels "
    "that cannot run here are listed as skipped), 1 a kernel FAILED, 5 FLAKY (a failure a fresh "
    "worker did not reproduce), 4 INCOMPLETE (the --seconds cap stopped it), 3 a kernel named "
    "with --kernel could not run here, a job could not be judged, or nothing was checked, 2 bad "
    "usage or input, or --json could not be written (the old file, or none, is left)",
    NULL,
    reference};

static int in(const sml_opt *o, const sml_opt *table, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (o == &table[i]) return 1;
    return 0;
}

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    check_args *a = ctx;
    if (in(o, sml_prop_flags, sml_prop_nflags)) {
        if (!strcmp(o->name, "regressions")) a->regressions_from = "--regressions";
        int rc = sml_prop_config_set(&a->cfg, o, v, why, n);
        if (!rc && !strcmp(o->name, "cases")) {
            a->cases_given = a->cfg.max_cases;
            a->cases_from = "--cases";
        }
        return rc;
    }
    if (in(o, sml_cli_devices_opts, 1)) return 0; /* taken by sml_cli_devices */
    if (in(o, INPUT_OPTS, 3)) {
        *(o->id == O_INPUT ? &a->input : o->id == O_OUTPUT ? &a->output : &a->dy) = v;
        return 0;
    }
    switch (o->id) {
    case O_KERNEL: a->kernel = v; return 0;
    case O_OP: a->op_s = v; return sml_cli_parse_mask(v, 1, &a->ops, why, n) ? 0 : -1;
    case O_DTYPE: a->dt_s = v; return sml_cli_parse_mask(v, 0, &a->dts, why, n) ? 0 : -1;
    case O_JSON: a->json = v; return 0;
    case O_AGAINST: a->against = v; return 0;
    case O_SANITIZE: a->sanitize = v; return 0;
    case O_ALLOW_LESS: a->allow_less = 1; return 0;
    case O_SKIP_BAD: a->skip_bad = 1; return 0;
    case O_IN_PROCESS: a->in_process = 1; return 0;
    default: return -1;
    }
}

/* The help of check, and its section of the reference. */
const sml_cli_spec *sml_spec_check(void) {
    static sml_cli_spec spec;
    if (!spec.name) {
        spec = SPEC;
        spec.groups[2].n = sml_prop_nflags;
    }
    return &spec;
}

/* The reproducers of real bugs, and the inputs that killed the mutants, replayed first:
 * SML_REGRESSIONS, else the default corpus (regressions.h); neither is read after
 * --regressions. 0, or 2 after the message for a bad SML_REGRESSIONS. */
static int default_regressions(check_args *a) {
    const char *env = getenv("SML_REGRESSIONS");
    const sml_opt *flag = NULL;
    for (size_t i = 0; i < sml_prop_nflags; i++)
        if (!strcmp(sml_prop_flags[i].name, "regressions")) flag = &sml_prop_flags[i];
    if (env && *env) {
        char why[256] = "";
        if (sml_prop_config_set(&a->cfg, flag, env, why, sizeof why) != 0) {
            fprintf(stderr, ME ": bad SML_REGRESSIONS '%.200s' (%s%svalid: %s)\n", env, why,
                    why[0] ? "; " : "", flag->values);
            return 2;
        }
        a->regressions_from = "SML_REGRESSIONS";
        return 0;
    }
    sml_cli_default_regressions(a->regressions, sizeof a->regressions);
    a->cfg.regressions_dir = a->regressions[0] ? a->regressions : NULL;
    a->regressions_from = "the default corpus: docs/CLI.md, \"check\"";
    return 0;
}

/* What was replayed before the cases, and from where. */
static void print_regressions(const check_args *a, const sml_prop_job *jobs, int njobs) {
    int64_t n = 0;
    for (int j = 0; j < njobs; j++) n += jobs[j].res.regressions;
    if (!a->cfg.regressions_dir)
        printf("check: no saved regression replayed (%s)\n",
               a->wrap ? "--sanitize"
               : !strcmp(a->regressions_from, "--regressions")
                   ? "--regressions none"
                   : "none found: docs/CLI.md, \"check\"");
    else
        printf("check: %lld saved regression case%s replayed, from %s (%s)\n", (long long)n,
               n == 1 ? "" : "s", a->cfg.regressions_dir, a->regressions_from);
}

/* -1: parsed; else the exit status (help printed, or a bad argument reported). */
static int parse_args(int argc, char **argv, check_args *a) {
    memset(a, 0, sizeof *a);
    sml_prop_config_init(&a->cfg, SML_PROP_PROFILE_CI);
    sml_prop_config_env(&a->cfg);
    if (sml_shard_env(ME, &a->cfg.shard) < 0) return 2;
    const char *env_cases = getenv("SML_PROP_CASES");
    sml_prop_config plain;
    sml_prop_config_init(&plain, a->cfg.profile);
    if (env_cases && *env_cases && a->cfg.max_cases != plain.max_cases) {
        a->cases_given = a->cfg.max_cases;
        a->cases_from = "--cases";
    }
    a->cfg.replay_cmd = "softmax-lab replay";
    a->ops = SML_OPS_ALL;
    a->dts = SML_DTYPES_ALL;
    int npos;
    int rc = sml_cli_parse(sml_spec_check(), argc, argv, on_option, a, NULL, 0, &npos, NULL);
    if (rc >= 0) return rc;
    if (a->cases_given) a->cfg.max_cases = a->cases_given; /* --long after --cases keeps it */
    if (!a->regressions_from && default_regressions(a) != 0) return 2;
    if (a->cfg.shard.count && (a->input || a->against || a->cfg.only_case >= 0)) {
        fprintf(stderr, ME ": --shard (or SML_SHARD) goes with the suite, not with %s\n",
                a->input     ? "--input"
                : a->against ? "--against"
                             : "--case");
        return 2;
    }
    if (a->input && (a->against || a->allow_less)) {
        fprintf(stderr,
                ME ": --against and --allow-less-accurate go with the suite, not with --input\n");
        return 2;
    }
    return -1;
}

static int run_input(check_args *a, int isolated) {
    int dt = -1;
    if (a->dts != SML_DTYPES_ALL && !sml_cli_mask_one(a->dts, &dt)) {
        fprintf(stderr, ME ": --input takes one --dtype (valid: %s), not '%s'\n", SML_CLI_DTYPES,
                a->dt_s);
        return 2;
    }
    sml_check_input_args ia = {
        a->input,        a->output, a->dy,    a->kernel,          a->op_s, a->ops, dt,
        a->cfg.save_dir, a->json,   isolated, a->cfg.case_timeout};
    return sml_check_input(&ia);
}

/* The cases per op and dtype of a kernel on `device`: --cases (or SML_PROP_CASES) for every
 * kernel; else the GPU profile's for a GPU kernel and the CI profile's for a CPU one, or under
 * --long the long profile's for a GPU kernel and SML_PROP_LONG_CPU_CASES for a CPU one. */
static int64_t job_cases(const check_args *a, sml_device device) {
    if (a->cases_given) return a->cases_given;
    int gpu = device == SML_DEVICE_GPU;
    if (a->cfg.profile == SML_PROP_PROFILE_LONG)
        return gpu ? a->cfg.max_cases : SML_PROP_LONG_CPU_CASES;
    if (!gpu) return a->cfg.max_cases;
    sml_prop_config g;
    sml_prop_config_init(&g, SML_PROP_PROFILE_GPU);
    return g.max_cases;
}

static int run_against(check_args *a, int isolated) {
    const sml_kernel *cand = a->kernel ? sml_kernel_find(a->kernel) : NULL;
    if (!a->against || !cand) {
        fprintf(stderr,
                ME
                ": --against BASE goes with --kernel K (one registered kernel, the candidate)%s\n",
                a->against ? "" : "; --allow-less-accurate with --against");
        return 2;
    }
    const sml_kernel *b = sml_kernel_find(a->against);
    if (cand->device == SML_DEVICE_GPU || (b && b->device == SML_DEVICE_GPU)) {
        /* The GPU profile's sizes, and its case count where none was given. */
        sml_prop_config gp;
        sml_prop_config_init(&gp, SML_PROP_PROFILE_GPU);
        a->cfg.sizes = gp.sizes;
        a->cfg.max_cases = job_cases(a, SML_DEVICE_GPU);
    }
    sml_check_against_args x = {cand,    a->against, a->ops,        a->dts,
                                &a->cfg, a->json,    a->allow_less, isolated};
    return sml_check_against_cli(&x);
}

/* The jobs of the chosen kernels, ops and dtypes: those that can run here first (their
 * count in *runnable), then the rest, which only report why they are skipped. */
static int build_jobs(const check_args *a, const unsigned char *chosen, size_t nk,
                      sml_prop_job *jobs, int *runnable) {
    /* GPU kernels get the GPU profile's sizes (and its case count unless --cases was given). */
    sml_prop_config gcfg;
    sml_prop_config_init(&gcfg, SML_PROP_PROFILE_GPU);
    int njobs = 0, gpu = sml_gpu_available();
    *runnable = 0;
    for (size_t i = 0; i < nk; i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (!chosen[i] || (a->gpu_only && k->device != SML_DEVICE_GPU)) continue;
        for (int op = 0; op < SML_OP_COUNT; op++) {
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
                if (!(a->ops >> op & 1) || !(a->dts >> dt & 1) || !(k->ops >> op & 1) ||
                    !(k->dtypes >> dt & 1))
                    continue;
                sml_prop_config c = a->cfg;
                if (k->device == SML_DEVICE_GPU) c.sizes = gcfg.sizes;
                c.max_cases = job_cases(a, k->device);
                jobs[njobs++] =
                    (sml_prop_job){.k = k, .op = (sml_op)op, .dtype = (sml_dtype)dt, .cfg = c};
                /* Kernels that cannot run here go last and outside the suite: they must not
                 * take a share of the time budget. */
                if (k->launch && (k->device == SML_DEVICE_CPU || gpu)) {
                    sml_prop_job tmp = jobs[*runnable];
                    jobs[*runnable] = jobs[njobs - 1];
                    jobs[njobs - 1] = tmp;
                    (*runnable)++;
                }
            }
        }
    }
    return njobs;
}

static void print_header(const check_args *a, int threads) {
    const sml_prop_config *cfg = &a->cfg;
    if (a->cases_given)
        printf("check: seed 0x%016llx, %lld cases per kernel, op and dtype (%s), ",
               (unsigned long long)cfg->seed, (long long)a->cases_given, a->cases_from);
    else
        printf("check: seed 0x%016llx, the %s profile: %lld cases per op and dtype for a CPU "
               "kernel, %lld for a GPU kernel; ",
               (unsigned long long)cfg->seed,
               cfg->profile == SML_PROP_PROFILE_LONG ? "long" : "default",
               (long long)job_cases(a, SML_DEVICE_CPU), (long long)job_cases(a, SML_DEVICE_GPU));
    if (cfg->total_seconds > 0)
        printf("capped at %.0f s (a run the cap stops is INCOMPLETE)", cfg->total_seconds);
    else
        printf("no time cap");
    printf(", %d host thread%s", threads, threads == 1 ? "" : "s");
    if (cfg->shard.count) printf(", shard %d/%d", cfg->shard.index, cfg->shard.count);
    if (cfg->regressions_dir)
        printf(", replaying the reproducers under %s first", cfg->regressions_dir);
    printf("\n");
    fflush(stdout);
}

/* Run the suite's jobs (in worker processes unless --in-process): SML_OK, or the suite
 * could not start. The wall time in *wall. */
static sml_status run_jobs(const check_args *a, sml_prop_job *jobs, int njobs, int runnable,
                           int threads, double *wall) {
    sml_prop_suite suite = {.threads = threads,
                            .total_seconds = a->cfg.total_seconds,
                            .label = "check",
                            .progress = stderr};
    /* SML_SHARE_CASES=off: each job draws and references its own cases, as before the jobs
     * shared their big ones; the same verdicts, for measuring what sharing saves. */
    const char *share = getenv("SML_SHARE_CASES");
    suite.own_cases = share && !strcmp(share, "off");
    /* Kernels run in worker processes (src/worker) and are judged here: a crash, an exit or a
     * hang is a FAIL of that kernel, never the end of the check. --in-process: in this process
     * (gdb). */
    sml_worker_pool *pool = NULL;
    if ((!a->in_process || a->wrap) && sml_worker_available()) {
        pool = sml_worker_pool_new(a->cfg.case_timeout, threads, -1, a->wrap);
        if (!pool) return SML_ERR_OUT_OF_MEMORY;
        suite.run = sml_worker_suite_run;
        suite.cap = sml_worker_suite_cap;
        suite.run_ctx = pool;
    }
    double t0 = sml_prop_now();
    sml_status srun = sml_prop_suite_run(&suite, jobs, runnable);
    sml_worker_pool_close(pool, jobs, runnable);
    *wall = sml_prop_now() - t0;
    for (int j = runnable; j < njobs && srun == SML_OK;
         j++) /* each answers SKIP at once, with the reason */
        jobs[j].status =
            sml_prop_run(jobs[j].k, jobs[j].op, jobs[j].dtype, &jobs[j].cfg, &jobs[j].res);
    return srun;
}

/* Per kernel sums of the jobs, each job into the JSON (w NULL: none); the exit status of
 * their verdicts (verdict.h), the gravest of all. */
static int sum_jobs(const sml_prop_job *jobs, int njobs, ksum *sum, sml_jw *w) {
    int rc = 0;
    for (int j = 0; j < njobs; j++) {
        const sml_kernel *k = jobs[j].k;
        const sml_prop_result *res = &jobs[j].res;
        ksum *s = &sum[registry_index(k)];
        if (!s->runs) s->verdict = SML_JOB_SKIP;
        s->runs++;
        s->verdict = sml_verdict_worse(s->verdict, res->verdict);
        s->exit = sml_verdict_exit_worse(s->exit, sml_verdict_exit(res->verdict));
        rc = sml_verdict_exit_worse(rc, sml_verdict_exit(res->verdict));
        if (res->verdict == SML_JOB_SKIP) {
            s->skipped++;
            snprintf(s->skip_note, sizeof s->skip_note, "%s", res->note);
        }
        if (res->verdict == SML_JOB_ERROR && !s->errors++)
            snprintf(s->error_note, sizeof s->error_note, "%s %s: %s", sml_op_name(res->op),
                     sml_dtype_name(res->dtype), res->note[0] ? res->note : "no reason given");
        if (res->verdict == SML_JOB_INCOMPLETE && !s->short_note[0])
            snprintf(s->short_note, sizeof s->short_note, "%s %s ran %lld of %lld cases%s%.150s",
                     sml_op_name(res->op), sml_dtype_name(res->dtype), (long long)res->cases,
                     (long long)res->events.planned, res->note[0] ? ": " : "", res->note);
        for (int p = 0; p < SML_PROP_COUNT; p++) {
            s->deviations += res->deviations[p];
            s->excused[p] += res->deviations[p];
        }
        if (res->excused_ulps > s->excused_ulps) s->excused_ulps = res->excused_ulps;
        if (res->excused_ratio > s->excused_ratio) s->excused_ratio = res->excused_ratio;
        s->cases += res->cases;
        s->planned += res->verdict == SML_JOB_SKIP ? 0 : res->events.planned;
        s->slow += res->events.n[SML_EV_SLOW];
        s->failed += res->failed_cases + res->regressions_failed;
        s->regressions += res->regressions;
        s->seconds += res->seconds;
        if (!(res->worst_ratio <= s->worst_ratio)) {
            s->worst_ratio = res->worst_ratio;
            s->worst_ulps = res->worst_ulps;
        }
        if (w) json_run(w, &jobs[j]);
    }
    return rc;
}

/* The words of a kernel's status column. */
static const char *status_word(const ksum *s) {
    switch (s->verdict) {
    case SML_JOB_FAIL: return "FAIL";
    case SML_JOB_FLAKY: return "FLAKY";
    case SML_JOB_ERROR: return "ERROR";
    case SML_JOB_INCOMPLETE: return "INCOMPLETE";
    case SML_JOB_SKIP: return "skipped";
    default: return "pass";
    }
}

/* The verdict line of a kernel with a declared deviation (or a label that declares none). */
static void print_declaration(const sml_kernel *k, const ksum *s, const char *status, int strict) {
    char dev[512], note[640];
    sml_dev_describe(k->deviation, dev, sizeof dev);
    if (!sml_dev_declared(k->deviation)) {
        if (k->known_deviation)
            printf("%-10s      note: %s\n", "",
                   sml_dev_words_only_note(k->known_deviation, note, sizeof note));
        return;
    }
    if (strict) {
        printf(
            "%-10s      STRICT: held to the contract itself; its declared deviation (%s) was not "
            "applied\n",
            "", dev);
        return;
    }
    if (!strcmp(status, "FAIL")) {
        printf("%-10s      FAIL: its declared deviation (%s) does not cover what the FAIL lines "
               "above name\n",
               "", dev);
        return;
    }
    if (strcmp(status, "pass")) {
        printf("%-10s      declared deviation: %s\n", "", dev);
        return;
    }
    char by[256] = "";
    for (int p = 0; p < SML_PROP_COUNT; p++)
        if (s->excused[p]) {
            size_t used = strlen(by);
            snprintf(by + used, sizeof by - used, "%s%s %lld", used ? ", " : "",
                     sml_prop_name((sml_prop_id)p), (long long)s->excused[p]);
        }
    char largest[96] = "";
    if (s->excused_ulps > 0 || s->excused_ratio > 0)
        snprintf(largest, sizeof largest,
                 "; largest value error excused %.3g ulp, %.3g x the bound", s->excused_ulps,
                 s->excused_ratio);
    if (s->deviations)
        printf("%-10s      PASS within its declared deviation: %s (%lld checks outside the "
               "contract and within it: %s%s)\n",
               "", dev, (long long)s->deviations, by, largest);
    else
        printf("%-10s      PASS within the contract itself (its declared deviation, %s, was not "
               "needed)\n",
               "", dev);
}

static void print_table(const ksum *sum, const unsigned char *chosen, size_t nk, int strict) {
    printf("\n%-10s %-4s %8s %8s %6s %12s %10s %8s  %s\n", "kernel", "dev", "cases", "failures",
           "regr", "worst/bound", "worst ulp", "seconds", "status");
    for (size_t i = 0; i < nk; i++) {
        const sml_kernel *k = sml_kernel_at(i);
        const ksum *s = &sum[i];
        if (!chosen[i] || !s->runs) continue;
        int skip = s->verdict == SML_JOB_SKIP;
        printf("%-10s %-4s %8lld %8lld %6lld %12.3g %10.3g %8.1f  %s%s%s\n", k->name,
               k->device == SML_DEVICE_GPU ? "gpu" : "cpu", (long long)s->cases,
               (long long)s->failed, (long long)s->regressions, s->worst_ratio, s->worst_ulps,
               s->seconds, status_word(s), skip ? ": " : "", skip ? s->skip_note : "");
        if (s->errors)
            printf("%-10s      ERROR: %s%s\n", "", s->error_note,
                   s->errors > 1 ? " (and other jobs of this kernel)" : "");
        if (s->verdict == SML_JOB_INCOMPLETE)
            printf("%-10s      INCOMPLETE: ran %lld of %lld cases (%s)\n", "", (long long)s->cases,
                   (long long)s->planned, s->short_note);
        if (s->slow)
            printf("%-10s      slow, not failed: %lld launch%s passed the deadline and finished "
                   "when run again alone\n",
                   "", (long long)s->slow, s->slow == 1 ? "" : "es");
        if (s->runs > s->skipped) print_declaration(k, s, status_word(s), strict);
    }
}

/* The digest of the whole run's case set: each job's digest (a sum over its cases, order-free)
 * tied to its kernel's name, summed. The same kernels, seed and profile give the same digest
 * on any load, --threads or GPU count. */
static uint64_t run_digest(const sml_prop_job *jobs, int njobs) {
    uint64_t d = 0;
    for (int j = 0; j < njobs; j++) {
        if (jobs[j].res.verdict == SML_JOB_SKIP) continue;
        uint64_t h = 1469598103934665603ull;
        for (const char *c = jobs[j].k->name; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h ^= jobs[j].res.accuracy.digest;
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        d += h ^ (h >> 31);
    }
    return d;
}

/* What was not checked: a kernel named with --kernel that could not run (or ran nothing
 * but skips) goes into unrun (exit 3); under --kernel all into skipped. 1 if any was checked. */
static int not_checked(const ksum *sum, const unsigned char *chosen, const unsigned char *named,
                       size_t nk, char *unrun, char *skipped, size_t n) {
    int any_checked = 0;
    for (size_t i = 0; i < nk; i++) {
        if (!chosen[i]) continue;
        const ksum *s = &sum[i];
        int checked = s->runs > s->skipped;
        any_checked |= checked;
        if (checked || !s->runs) continue;
        char *dst = named[i] ? unrun : skipped;
        size_t used = strlen(dst);
        snprintf(dst + used, n - used, "%s%s", used ? ", " : "", sml_kernel_at(i)->name);
    }
    return any_checked;
}

/* The JSON document's end, committed into place; 0, or the exit status of a failed write. */
static int json_finish(sml_jw *w, sml_out_file *jout, const char *json, const ksum *sum,
                       const unsigned char *chosen, size_t nk, int rc, uint64_t digest) {
    char werr[1200];
    sml_jw_end(w);
    sml_jw_key(w, "not_run");
    sml_jw_array_inline(w);
    for (size_t i = 0; i < nk; i++)
        if (chosen[i] && sum[i].runs && sum[i].runs == sum[i].skipped)
            sml_jw_str(w, sml_kernel_at(i)->name);
    sml_jw_end(w);
    sml_jw_kstr(w, "result",
                rc == 1   ? "failed"
                : rc == 5 ? "flaky"
                : rc == 4 ? "incomplete"
                : rc == 3 ? "not-checked"
                          : "passed");
    char dg[24];
    snprintf(dg, sizeof dg, "0x%016llx", (unsigned long long)digest);
    sml_jw_kstr(w, "digest", dg);
    sml_jw_kbool(w, "passed", rc == 0);
    sml_jw_kint(w, "exit", rc);
    sml_jw_end(w);
    int bad = sml_jw_finish(w) != 0;
    if (bad) sml_out_abort(jout);
    if (bad || sml_out_commit(jout, werr, sizeof werr) != SML_OK) {
        if (bad) snprintf(werr, sizeof werr, "%s: write failed", json);
        fprintf(stderr, ME ": %s\n", werr);
        return rc == 1 ? 1 : 2;
    }
    return 0;
}

static void json_begin(sml_jw *w, sml_out_file *jout, const check_args *a, int threads) {
    sml_jw_init(w, jout->f);
    sml_jw_object(w);
    sml_jw_kstr(w, "schema", SML_CHECK_SCHEMA);
    sml_jw_kstr(w, "version", SML_VERSION);
    char seed[24];
    snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)a->cfg.seed);
    sml_jw_kstr(w, "seed", seed);
    sml_jw_kint(w, "threads", threads);
    sml_jw_kbool(w, "strict", a->cfg.strict);
    sml_jw_kbool(w, "long", a->cfg.profile == SML_PROP_PROFILE_LONG);
    if (a->cfg.shard.count) sml_shard_json_head(w, &a->cfg.shard);
    sml_jw_key(w, "runs");
    sml_jw_array(w);
}

/* Jobs the engine itself could not run (out of memory for a case: sml_prop_run's status),
 * each named with the reason; how many. They are no verdict on their kernel. */
static int engine_failures(const sml_prop_job *jobs, int njobs) {
    int n = 0;
    for (int j = 0; j < njobs; j++) {
        if (jobs[j].status == SML_OK) continue;
        printf("check: %s %s %s not checked: %s%s%s\n", jobs[j].k->name, sml_op_name(jobs[j].op),
               sml_dtype_name(jobs[j].dtype), sml_strerror(jobs[j].status),
               jobs[j].res.note[0] ? ": " : "", jobs[j].res.note);
        n++;
    }
    return n;
}

/* The host CPU the run cost, user + system, this process's and its reaped workers' (the pool
 * has stopped them by now), in seconds. */
static double cpu_of(int who) {
    struct rusage ru;
    if (getrusage(who, &ru) != 0) return 0.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Where the jobs' host threads spent their time (sml_prop_host_time), summed over the jobs:
 * what to make faster when the host, not the GPU, sets the pace; then the host CPU per case. */
static void print_host_time(const sml_prop_job *jobs, int njobs, int64_t cases) {
    sml_prop_host_time t = {0, 0, 0, 0, 0, 0};
    double total = 0.0;
    for (int j = 0; j < njobs; j++) {
        const sml_prop_result *r = &jobs[j].res;
        total += r->seconds;
        sml_prop_host_time_add(&t, &r->host);
    }
    if (!(total > 0.0)) return;
    double other = total - t.gen - t.ref - t.run - t.copy - t.check - t.shrink;
    printf("host time by stage, %.3g thread-seconds over the jobs: generation %.0f%%, reference "
           "%.0f%%, kernel runs %.0f%%, copies %.0f%%, comparison %.0f%%, shrink %.0f%%, other "
           "%.0f%%\n",
           total, 100 * t.gen / total, 100 * t.ref / total, 100 * t.run / total,
           100 * t.copy / total, 100 * t.check / total, 100 * t.shrink / total,
           100 * (other > 0 ? other : 0) / total);
    /* This process (the engine, the reference, the comparisons) and its reaped workers (the
     * kernels' launches, their copies and waits for the GPU): which side to make cheaper. */
    double own = cpu_of(RUSAGE_SELF), workers = cpu_of(RUSAGE_CHILDREN), cpu = own + workers;
    int64_t shared = 0;
    for (int j = 0; j < njobs; j++) shared += jobs[j].res.shared;
    if (cases > 0 && cpu > 0.0)
        printf("host CPU %.1f s (user + system, workers included): %.3f ms per case; check's own "
               "process %.2f s, its workers %.2f s; %lld big cases judged on another kernel's "
               "drawing and reference\n",
               cpu, 1e3 * cpu / (double)cases, own, workers, (long long)shared);
    /* The one case that took longest: where a long run's time went, after the fact. */
    const sml_prop_job *slow = NULL;
    for (int j = 0; j < njobs; j++)
        if (jobs[j].res.slowest_seconds > 0.0 &&
            (!slow || jobs[j].res.slowest_seconds > slow->res.slowest_seconds))
            slow = &jobs[j];
    if (slow)
        printf("slowest case: %s %s %s case %lld (%.0f elements), %.3g s from drawing to "
               "verdict\n",
               slow->k->name, sml_op_name(slow->op), sml_dtype_name(slow->dtype),
               (long long)slow->res.slowest_case, slow->res.slowest_elements,
               slow->res.slowest_seconds);
}

/* The verdict: the table, the JSON, the last lines; the exit status. */
static int report(const check_args *a, const sml_prop_job *jobs, int njobs,
                  const unsigned char *chosen, const unsigned char *named, size_t nk, ksum *sum,
                  sml_out_file *jout, int threads, double wall) {
    sml_jw w;
    if (a->json) json_begin(&w, jout, a, threads);
    int rc = sum_jobs(jobs, njobs, sum, a->json ? &w : NULL);
    int engine = engine_failures(jobs, njobs);
    print_table(sum, chosen, nk, a->cfg.strict);
    int64_t all = 0, planned = 0;
    for (size_t i = 0; i < nk; i++) all += sum[i].cases, planned += sum[i].planned;
    char unrun[512] = "", skipped[512] = "";
    int any_checked = not_checked(sum, chosen, named, nk, unrun, skipped, sizeof unrun);
    char within[512] = ""; /* the kernels that passed only within their declared deviation */
    for (size_t i = 0; i < nk; i++)
        if (chosen[i] && sum[i].deviations) {
            size_t used = strlen(within);
            snprintf(within + used, sizeof within - used, "%s%s", used ? ", " : "",
                     sml_kernel_at(i)->name);
        }
    if (unrun[0] || !any_checked || engine) rc = sml_verdict_exit_worse(rc, 3);
    uint64_t digest = run_digest(jobs, njobs);
    if (a->json) {
        int bad = json_finish(&w, jout, a->json, sum, chosen, nk, rc, digest);
        if (bad) return bad;
    }
    printf("\n%lld of %lld planned cases in %.1f s of wall time on %d host thread%s (the seconds "
           "column adds up each kernel's runs); case set digest 0x%016llx\n",
           (long long)all, (long long)planned, wall, threads, threads == 1 ? "" : "s",
           (unsigned long long)digest);
    print_host_time(jobs, njobs, all);
    if (skipped[0]) printf("check: not run here (skipped): %s\n", skipped);
    if (rc == 1)
        printf("check: FAILED (see the FAIL and ERROR lines above; each FAIL names the command "
               "that replays it)\n");
    else if (rc == 5)
        printf("check: FLAKY: a failure did not reproduce in a fresh worker (see the FLAKY lines "
               "above); no pass; exit 5\n");
    else if (engine)
        printf("check: NOT CHECKED: the engine could not run %d job%s (above); no verdict on %s; "
               "exit 3\n",
               engine, engine == 1 ? "" : "s", engine == 1 ? "its kernel" : "their kernels");
    else if (unrun[0])
        printf("check: NOT CHECKED: %s could not run here (see the status column); exit 3\n",
               unrun);
    else if (rc == 3)
        printf("check: NOT CHECKED: no selected kernel ran on this machine, or a job could not be "
               "judged (see the ERROR lines); exit 3\n");
    else if (rc == 4)
        printf("check: INCOMPLETE: the --seconds cap stopped the run after %lld of %lld planned "
               "cases; nothing failed, and that is no pass; exit 4\n",
               (long long)all, (long long)planned);
    else if (within[0])
        printf("check: every property held on every planned case of every kernel that ran, on %s "
               "within its declared deviation (above; --strict holds it to the contract itself)\n",
               within);
    else
        printf("check: every property held on every planned case of every kernel that ran%s\n",
               a->cfg.strict ? " (strict: no declared deviation applied)" : "");
    return rc;
}

/* The property suite over the chosen kernels. */
static int run_suite(check_args *a) {
    size_t nk = sml_kernel_count();
    /* Which kernels run (chosen) and which were asked for by name (named). */
    unsigned char *chosen = calloc(2 * nk + 1, 1), *named = chosen ? chosen + nk : NULL;
    if (!chosen || !parse_kernels(a->kernel, nk, chosen, named)) {
        if (!chosen) fprintf(stderr, ME ": out of memory\n");
        free(chosen);
        return 2;
    }
    /* Opened now, so an unwritable path is refused before anything runs; renamed into place
     * only once the whole document is written (io/out_file.h). */
    sml_out_file jout;
    char werr[1200];
    if (a->json && sml_out_open(&jout, a->json, werr, sizeof werr) != SML_OK) {
        fprintf(stderr, ME ": %s\n", werr);
        free(chosen);
        return 2;
    }
    a->cfg.rerun_cmd = "softmax-lab check";
    sml_prop_job *jobs = calloc(nk * SML_OP_COUNT * SML_DTYPE_COUNT, sizeof *jobs);
    ksum *sum = calloc(nk, sizeof *sum);
    int rc = 2, runnable = 0;
    double wall = 0.0;
    if (!jobs || !sum) {
        fprintf(stderr, ME ": out of memory\n");
        if (a->json) sml_out_abort(&jout);
    } else {
        int njobs = build_jobs(a, chosen, nk, jobs, &runnable);
        if (a->cfg.shard.count && sml_shard_jobs_prepare(jobs, njobs) != 0) {
            fprintf(stderr, ME ": out of memory\n");
            if (a->json) sml_out_abort(&jout);
        } else {
            int threads = sml_prop_threads(&a->cfg, sml_prop_suite_tasks(jobs, runnable));
            print_header(a, threads);
            if (run_jobs(a, jobs, njobs, runnable, threads, &wall) != SML_OK) {
                fprintf(stderr, ME ": cannot start the runs (out of memory)\n");
                if (a->json) sml_out_abort(&jout);
            } else {
                print_regressions(a, jobs, njobs);
                rc = report(a, jobs, njobs, chosen, named, nk, sum, &jout, threads, wall);
            }
        }
        sml_shard_jobs_free(jobs, njobs);
    }
    free(jobs);
    free(sum);
    free(chosen);
    return rc;
}

/* compute-sanitizer on PATH, or under CUDA_HOME or /usr/local/cuda; 0 if none. */
static int find_sanitizer(char *path, size_t n) {
    const char *env = getenv("PATH");
    char dirs[8192];
    const char *home = getenv("CUDA_HOME");
    snprintf(dirs, sizeof dirs, "%s:%s/bin:/usr/local/cuda/bin", env ? env : "",
             home ? home : "/nonexistent");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(path, n, "%s/compute-sanitizer", d);
        if (access(path, X_OK) == 0) return 1;
    }
    return 0;
}

#define SANITIZE_CASES 20

/* --sanitize TOOL[,TOOL]: the GPU kernels' first SANITIZE_CASES cases (or --cases) per op and
 * dtype in workers under compute-sanitizer, one tool at a time; a hazard is a FAIL. */
static int run_sanitize(check_args *a) {
    static const char *const TOOLS[] = {"memcheck", "racecheck", "synccheck", "initcheck"};
    char list[256], tool_path[4200];
    snprintf(list, sizeof list, "%s", a->sanitize);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int ok = 0;
        for (size_t i = 0; i < sizeof TOOLS / sizeof TOOLS[0]; i++) ok |= !strcmp(t, TOOLS[i]);
        if (!ok) {
            fprintf(stderr,
                    ME
                    ": --sanitize: unknown tool '%s' (memcheck, racecheck, synccheck, initcheck)\n",
                    t);
            return 2;
        }
    }
    if (!sml_worker_available()) {
        fprintf(stderr, ME
                ": --sanitize runs kernels in worker processes, which this program cannot start\n");
        return 2;
    }
    if (!find_sanitizer(tool_path, sizeof tool_path)) {
        printf("check: compute-sanitizer not found (PATH, CUDA_HOME/bin, /usr/local/cuda/bin): not "
               "checked; exit 77\n");
        return 77;
    }
    if (!a->cases_given) {
        a->cases_given = SANITIZE_CASES;
        a->cases_from = "--sanitize";
    }
    a->cfg.max_cases = a->cases_given;
    a->cfg.shrink = 0;
    a->cfg.regressions_dir = NULL;
    a->gpu_only = 1;
    int rc = 0;
    snprintf(list, sizeof list, "%s", a->sanitize);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        /* The first hazards of each kind say what is wrong; thousands of copies of them bury
         * the verdict (and a test's capture of it). */
        const char *wrap[] = {tool_path, "--tool",        t,    "--error-exitcode",
                              "86",      "--print-limit", "12", NULL};
        a->wrap = wrap;
        printf("check --sanitize %s: %lld cases per GPU kernel, op and dtype under %s\n", t,
               (long long)a->cfg.max_cases, tool_path);
        int r = run_suite(a);
        a->wrap = NULL;
        rc = sml_verdict_exit_worse(rc, r);
    }
    return rc;
}

int sml_cmd_check(int argc, char **argv) {
    int split = sml_cli_devices("check", &argc, argv); /* several GPUs: one worker each */
    if (split >= 0) return split;
    check_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    /* --input and --against run each kernel in a worker process and judge it here
     * (check_input.c, check_against.c): a crash, an exit or a hang is a FAIL naming the
     * kernel. Judging an --output made elsewhere runs no kernel. */
    int isolated = !a.in_process && sml_worker_available();
    if (a.input) return run_input(&a, isolated);
    if (a.dy || a.output) {
        fprintf(stderr, ME ": %s goes with --input\n", a.dy ? "--dy" : "--output");
        return 2;
    }
    if (regressions_unreadable(&a.cfg, a.skip_bad)) return 2;
    if (a.sanitize) return run_sanitize(&a);
    if (a.against || a.allow_less) return run_against(&a, isolated);
    return run_suite(&a);
}
