/* bench: time backends on one shape or a named sweep, check each on the same input, print a
 * table per case, and write the decision ledger. Every flag is validated before anything
 * runs or is written: bad usage exits 2 and leaves no file behind. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "json/json_read.h"
#include "report/ledger_write.h"
#include "report/plot_svg.h"
#include "report/table.h"
#include "commands.h"
#include "masks.h"
#include "options.h"
#include "devices.h"
#include "io/out_file.h"
#include "io/path_same.h"
#include "bench/memneed.h"
#include "worker/worker.h"

static int bad(const char *fmt, const char *a) {
    fprintf(stderr, "softmax-lab bench: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (see softmax-lab bench --help)\n");
    return 2;
}

/* A directory is fine if it exists and is writable, or if its nearest existing ancestor is
 * (it is created after the run, so bad flags leave nothing behind). */
static int dir_ok(const char *dir) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (;;) {
        struct stat st;
        if (stat(buf, &st) == 0) return S_ISDIR(st.st_mode) && access(buf, W_OK) == 0;
        char *slash = strrchr(buf, '/');
        if (!slash) return access(".", W_OK) == 0;
        if (slash == buf) return access("/", W_OK) == 0;
        *slash = 0;
    }
}

static void parent_of(const char *path, char *dir, size_t n) {
    snprintf(dir, n, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == dir)
        slash[1] = 0;
    else
        *slash = 0;
}

/* An output file's directory: as for the ledger directory; a path ending in '/' is refused. */
static int parent_ok(const char *path) {
    char dir[1024];
    size_t len = strlen(path);
    if (!len || path[len - 1] == '/') return 0;
    parent_of(path, dir, sizeof dir);
    return dir_ok(dir);
}

/* Creates an output file's directory (after the run). */
static int make_parent(const char *path, char *err, size_t errlen) {
    char dir[1024];
    parent_of(path, dir, sizeof dir);
    if (sml_mkdir_p(dir) == SML_OK) return 1;
    snprintf(err, errlen, "cannot create the directory %.400s: %s", dir, strerror(errno));
    return 0;
}

/* The default ledger directory: ledger/ beside this binary when the binary sits at the top of
 * a CMake build tree (CMakeCache.txt beside it: ./build/softmax-lab writes build/ledger, never
 * into the sources); ./ledger in the current directory for any other binary (an installed
 * one, or the Python interpreter running python -m softmax_lab). */
static void default_ledger_dir(char *dir, size_t n) {
    char exe[1024], cache[1100];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        *strrchr(exe, '/') = 0; /* the link is an absolute path: it has a '/' */
        snprintf(cache, sizeof cache, "%.1000s/CMakeCache.txt", exe);
        snprintf(dir, n, "%.1000s/ledger", exe);
        if (access(cache, F_OK) == 0 && dir_ok(dir)) return;
    }
    snprintf(dir, n, "ledger");
}

static int write_svg(const sml_bench_run *run, const sml_ledger *l, const char *svg) {
    char *buf = NULL, err[1200], info[160];
    size_t len = 0;
    sml_json *doc = NULL;
    FILE *mem = open_memstream(&buf, &len);
    int bad = !mem || sml_ledger_write_json(run, l, mem) != 0;
    if (mem && fclose(mem) != 0) bad = 1;
    sml_status s = bad ? SML_ERR_OUT_OF_MEMORY : sml_json_parse(buf, len, &doc, err, sizeof err);
    if (bad) snprintf(err, sizeof err, "out of memory");
    free(buf);
    sml_out_file o;
    if (s == SML_OK && (s = sml_out_open(&o, svg, err, sizeof err)) == SML_OK) {
        s = sml_plot_svg(doc, NULL, o.f, info, sizeof info, err, sizeof err);
        if (s == SML_OK)
            s = sml_out_commit(&o, err, sizeof err);
        else
            sml_out_abort(&o);
    }
    sml_json_free(doc);
    if (s != SML_OK) {
        fprintf(stderr, "softmax-lab bench: plot: %s\n", err);
        return 0;
    }
    printf("plot: %s (%s)\n", svg, info);
    return 1;
}

/* The backends named one by one in --backend that cannot run here (a GPU kernel without a GPU,
 * a backend not built), as "a, b"; the classes all/gpu/cpu name none. */
static void named_unrunnable(const char *spec, int gpu, char *out, size_t n) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    out[0] = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const sml_kernel *k = sml_kernel_find(t);
        if (!k || (k->launch && (k->device == SML_DEVICE_CPU || gpu))) continue;
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", used ? ", " : "", k->name);
    }
}

typedef struct print_ctx {
    int header_done;
} print_ctx;

static void on_case(const sml_bench_run *run, size_t c, void *user) {
    print_ctx *p = user;
    if (!p->header_done) {
        sml_bench_print_header(stdout, run);
        p->header_done = 1;
    }
    sml_bench_print_case(stdout, run, c);
    fflush(stdout);
}

/* ---- parse ---- */

typedef struct bench_opts {
    const char *backend, *sweep, *json, *md, *ledger, *versus, *svg;
    unsigned ops, dtypes;
    int dtypes_given, no_shrink, gate, quiet, allow_less, to_dir, in_process;
    int64_t rows, cols;
    sml_shard shard;
    sml_bench_config cfg;
    char ledger_default[1100];
} bench_opts;

static int parse_seed(const char *v, uint64_t *out) {
    char *end;
    errno = 0;
    /* strtoull takes "-1" as 2^64 - 1: a sign is refused, never wrapped. */
    if (!*v || strchr(v, '-') || strchr(v, '+')) return 0;
    unsigned long long s = strtoull(v, &end, 0);
    if (*end || errno) return 0;
    *out = s;
    return 1;
}

enum {
    B_BACKEND,
    B_OP,
    B_SWEEP,
    B_ROWS,
    B_COLS,
    B_DTYPE,
    B_JSON,
    B_MD,
    B_LEDGER,
    B_SVG,
    B_MIN_SAMPLES,
    B_MAX_SECONDS,
    B_TIME_LIMIT,
    B_CASE_TIMEOUT,
    B_MIN_BATCH,
    B_IN_PROCESS,
    B_NO_HOLD,
    B_NOISE,
    B_MARGIN,
    B_L2,
    B_SEED,
    B_THREADS,
    B_CHECK_ELEMS,
    B_NO_SHRINK,
    B_VERSUS,
    B_SHARD,
    B_GATE,
    B_ALLOW_LESS,
    B_QUIET
};

static const sml_opt OPTS[] = {
    {"backend", "B[,B]", "all, gpu, cpu or registered kernel names, comma-separated",
     "the backends (default all: the GPU kernels, or the CPU ones without a GPU)",
     "cudnn and naive (cpu_naive) are added as baselines, marked *", B_BACKEND},
    {"op", "OP[,OP]", SML_CLI_OP_LIST, "the ops (default softmax)", NULL, B_OP},
    {"sweep", "NAME", SML_SWEEP_NAMES,
     "a named sweep of shapes (default seeds; docs/CLI.md lists their shapes)", NULL, B_SWEEP},
    {"rows", "R", "1 to 2^31", "one shape instead of a sweep: R rows (with --cols)", NULL, B_ROWS},
    {"cols", "C", "1 to 2^31", "... of C columns (with --rows)", NULL, B_COLS},
    {"dtype", "D[,D]", SML_CLI_DTYPE_LIST, "the dtypes (default: each shape's own)", NULL, B_DTYPE},
    {"json", "FILE", "a file name (its folder is made), or - for standard output",
     "write the ledger as JSON", NULL, B_JSON},
    {"md", "FILE", "a file name (its folder is made), or - for standard output",
     "write the ledger as Markdown", NULL, B_MD},
    {"ledger", "DIR", "a folder name (made when needed)",
     "also write DIR/SWEEP_OPS.json and .md (default: docs/CLI.md)",
     "the default is build/ledger for a build tree's ./build/softmax-lab, else ./ledger in the "
     "current directory; none when --json or --md is given",
     B_LEDGER},
    {"svg", "FILE", "a file name (its folder is made)", "plot GB/s against cols from the ledger",
     NULL, B_SVG},
    {"min-samples", "N", "1 to 100000", "at least N samples per measurement (default 10)", NULL,
     B_MIN_SAMPLES},
    {"max-seconds", "S", "0 to 3600", "per measurement, once N samples are in (default 0.5)", NULL,
     B_MAX_SECONDS},
    {"case-timeout", "S", "0.001 to 1e6 seconds",
     "a kernel call's deadline in the worker process: past it slow, past 10 x S a hang",
     "only a call that does not finish within ten times its deadline is a FAIL (default: from "
     "the call's size, at least 4 s)",
     B_CASE_TIMEOUT},
    {"time-limit", "S", "0.001 to 1e6 seconds",
     "start no case after S seconds (the ledger is then partial)",
     "the first case always runs and a started one finishes: leave headroom. A partial ledger "
     "says which cases ran, calls no claim Supported, and --gate fails",
     B_TIME_LIMIT},
    {"min-batch", "N", "1 to 1000", "GPU launches per sample, at least N (default 4)", NULL,
     B_MIN_BATCH},
    {"in-process", NULL, NULL, "run the kernels in this process (for a debugger), not a worker",
     "by default the bench runs in a worker process, and a kernel that crashes, exits or hangs "
     "there is a FAIL naming it",
     B_IN_PROCESS},
    {"no-hold", NULL, NULL, "GPU launches start as made, not queued behind the hold kernel",
     "this times the host's launch calls too", B_NO_HOLD},
    {"noise", "X", "0 to 1", "stop sampling when IQR/median <= X (default 0.02)", NULL, B_NOISE},
    {"margin", "X", "0 to 0.10 (a tolerance for timing noise, not a discount on a claim)",
     "the decisions' noise floor (default 0.03)", NULL, B_MARGIN},
    {"l2", "MODE", "cold or warm",
     "cold: rotate buffers past 4x L2 (default); warm: the same buffers", NULL, B_L2},
    {"seed", "S", "0 to 2^64 - 1, decimal or 0x hex",
     "the inputs' seed (default 0x5eedbe4c5eedbe4c)", NULL, B_SEED},
    {"threads", "N", "1 to 64", "host threads for inputs and checks (default: every core)", NULL,
     B_THREADS},
    {"check-elems", "N", "a count of at least 1, or all",
     "check each kernel on at most N elements per case (default 16777216)",
     "whole rows in 64 blocks spread over the tensor, the first and last row included; all: "
     "every element",
     B_CHECK_ELEMS},
    {"no-shrink", NULL, NULL, "keep the sweep's full shapes on a CPU-only run", NULL, B_NO_SHRINK},
    {"versus", "K", "a registered kernel name",
     "decide every claim as '>= 1.00x K on all shapes' (K is timed too)",
     "e.g. --versus torch: each backend against PyTorch, the seeds' decision matrix", B_VERSUS},
    {"shard", "K/N", "K/N with 1 <= K <= N",
     "measure the K-th of N slices of the cases, for merge (env SML_SHARD)",
     "slice K holds every N-th case from K-1", B_SHARD},
    {"gate", NULL, NULL, "exit 1 if a claim is not Supported or a kernel is LESS ACCURATE", NULL,
     B_GATE},
    {"allow-less-accurate", NULL, NULL, "with --gate: report LESS ACCURATE without failing", NULL,
     B_ALLOW_LESS},
    {"quiet", NULL, NULL, "no progress line", NULL, B_QUIET},
};

/* Each sweep of SML_SWEEP_NAMES with its shapes. */
static void sweeps(FILE *f) {
    char names[] = SML_SWEEP_NAMES;
    fprintf(f, "\nSweeps (--sweep):\n");
    for (char *save = NULL, *t = strtok_r(names, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        char d[1024];
        sml_sweep_describe(t, d, sizeof d);
        fprintf(f, "  %-16s ", t);
        sml_cli_wrap(f, 19, 19, d);
    }
}

static const sml_cli_spec SPEC = {
    "bench",
    "[--backend B] [--op OP] [--sweep NAME | --rows R --cols C] [--json FILE] [options]",
    "Times the backends on each case of a sweep (or one shape) by docs/BENCHMARKING.md's method, "
    "checks each on the same input, prints a table per case and decides each kernel's claim; "
    "writes the decision ledger. Every flag is checked before anything runs or is written.",
    {SML_OPT_GROUP(NULL, OPTS), SML_OPT_GROUP(NULL, sml_cli_devices_opts)},
    "exit: 0 done, 1 a kernel was WRONG or failed, a write failed, or --gate missed, 2 bad usage "
    "or a case that cannot fit in memory (nothing written), 3 a backend named in --backend "
    "could not run here, nothing was measured, or memory ran out mid-run",
    NULL,
    sweeps};

const sml_cli_spec *sml_spec_bench(void) { return &SPEC; }

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (!*s || *end || errno || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int parse_dbl(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi)) return 0;
    *out = v;
    return 1;
}

/* The options that take a number: 0 or -1 (bad value). */
static int number_option(bench_opts *o, int id, const char *v) {
    sml_bench_config *cfg = &o->cfg;
    int64_t n;
    double d;
    switch (id) {
    case B_ROWS: return parse_i64(v, 1, (int64_t)1 << 31, &o->rows) ? 0 : -1;
    case B_COLS: return parse_i64(v, 1, (int64_t)1 << 31, &o->cols) ? 0 : -1;
    case B_MIN_SAMPLES:
        if (!parse_i64(v, 1, 100000, &n)) return -1;
        cfg->stop.min_samples = (int)n;
        return 0;
    case B_MIN_BATCH:
        if (!parse_i64(v, 1, 1000, &n)) return -1;
        cfg->gpu_min_batch = (int)n;
        return 0;
    case B_THREADS:
        if (!parse_i64(v, 1, 64, &n)) return -1;
        cfg->threads = (int)n;
        return 0;
    case B_MAX_SECONDS: return parse_dbl(v, 0, 3600, &cfg->stop.max_seconds) ? 0 : -1;
    case B_TIME_LIMIT: return parse_dbl(v, 1e-3, 1e6, &cfg->time_limit_s) ? 0 : -1;
    case B_CASE_TIMEOUT: { /* the worker's supervisor reads it (src/worker/command.c) */
        double d;
        return parse_dbl(v, 1e-3, 1e6, &d) ? 0 : -1;
    }
    case B_NOISE: return parse_dbl(v, 0, 1, &cfg->stop.noise) ? 0 : -1;
    case B_MARGIN:
        if (!parse_dbl(v, 0, SML_MAX_MARGIN, &d) || !sml_margin_ok(d)) return -1;
        cfg->margin = d;
        return 0;
    case B_SEED: return parse_seed(v, &cfg->seed) ? 0 : -1;
    case B_CHECK_ELEMS: return sml_bench_parse_check_elems(v, &cfg->check_max_elems) ? 0 : -1;
    default: return -1;
    }
}

/* Each name of --backend a class (all, gpu, cpu) or a registered kernel; else 0 with the
 * unknown one and the registry's names in why. */
static int backends_known(const char *spec, char *why, size_t n) {
    char buf[512], names[2048];
    if (!*spec || snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) return 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "all") || !strcmp(t, "gpu") || !strcmp(t, "cpu") || sml_kernel_find(t))
            continue;
        snprintf(why, n, "unknown backend '%.40s'; the registry: %.190s", t,
                 sml_cli_kernel_names(names, sizeof names));
        return 0;
    }
    return 1;
}

static int on_option(void *ctx, const sml_opt *opt, const char *v, char *why, size_t n) {
    bench_opts *o = ctx;
    if (opt == sml_cli_devices_opts) return 0; /* taken by sml_cli_devices */
    switch (opt->id) {
    case B_BACKEND: o->backend = v; return backends_known(v, why, n) ? 0 : -1;
    case B_OP: return sml_cli_parse_mask(v, 1, &o->ops, why, n) ? 0 : -1;
    case B_DTYPE: o->dtypes_given = 1; return sml_cli_parse_mask(v, 0, &o->dtypes, why, n) ? 0 : -1;
    case B_SWEEP: o->sweep = v; return 0;
    case B_JSON: o->json = v; return 0;
    case B_MD: o->md = v; return 0;
    case B_LEDGER: o->ledger = v; return 0;
    case B_SVG: o->svg = v; return 0;
    case B_VERSUS: o->versus = v; return 0;
    case B_L2:
        if (strcmp(v, "cold") && strcmp(v, "warm")) return -1;
        o->cfg.l2_warm = !strcmp(v, "warm");
        return 0;
    case B_SHARD: return sml_shard_parse(v, &o->shard, why, n) ? 0 : -1;
    case B_NO_SHRINK: o->no_shrink = 1; return 0;
    case B_GATE: o->gate = 1; return 0;
    case B_ALLOW_LESS: o->allow_less = 1; return 0;
    case B_QUIET: o->quiet = 1; return 0;
    case B_NO_HOLD: o->cfg.gpu_hold = 0; return 0;
    case B_IN_PROCESS: o->in_process = 1; return 0;
    default: return number_option(o, opt->id, v);
    }
}

/* -1: go on; else the exit code (0 after --help). */
static int parse_args(bench_opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->backend = "all";
    o->ops = 1u << SML_SOFTMAX;
    o->dtypes = SML_DTYPES_ALL;
    sml_bench_config_default(&o->cfg);
    if (sml_shard_env("softmax-lab bench", &o->shard) < 0) return 2;
    int npos;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, o, NULL, 0, &npos, NULL);
    if (rc >= 0) return rc;
    if (o->cfg.stop.max_samples < o->cfg.stop.min_samples)
        o->cfg.stop.max_samples = o->cfg.stop.min_samples;
    o->cfg.progress = !o->quiet;
    o->cfg.ended = getenv("SML_WORKER_ENDED"); /* set by the supervisor of this worker only */
    return -1;
}

/* The shapes, and where the outputs go: -1, or the exit code after the message. */
static int plan_shapes_and_outputs(bench_opts *o, sml_bench_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if (o->rows || o->cols) {
        if (o->sweep) return bad("%s", "--rows/--cols and --sweep exclude each other");
        if (!o->rows || !o->cols) return bad("%s", "give both --rows and --cols");
        snprintf(plan->sweep, sizeof plan->sweep, "custom");
        plan->shapes.n = 1;
        plan->shapes.shape[0] = (sml_sweep_shape){o->rows, o->cols, SML_DTYPES_ALL, 0};
        if (!o->dtypes_given) o->dtypes = 1u << SML_F32;
    } else {
        if (!o->sweep) o->sweep = "seeds";
        if (sml_sweep_get(o->sweep, &plan->shapes) != SML_OK)
            return bad("bad value for --sweep: '%s' (valid: " SML_SWEEP_NAMES ")", o->sweep);
        snprintf(plan->sweep, sizeof plan->sweep, "%s", o->sweep);
    }
    plan->ops = o->ops;
    plan->dtypes = o->dtypes;
    plan->shard = o->shard;
    if (o->json && !parent_ok(o->json)) return bad("cannot write --json '%s'", o->json);
    if (o->md && !parent_ok(o->md)) return bad("cannot write --md '%s'", o->md);
    if (o->svg && !parent_ok(o->svg)) return bad("cannot write --svg '%s'", o->svg);
    char err[1024];
    const sml_path_arg paths[] = {{"--json", o->json, 1}, {"--md", o->md, 1}, {"--svg", o->svg, 1}};
    if (sml_paths_clash(paths, 3, err, sizeof err)) return bad("%s", err);
    /* --json/--md name where the ledger goes: the default directory is then left alone, so a
     * ledger kept there is never overwritten by a run meant for elsewhere. */
    o->to_dir = o->ledger != NULL || (!o->json && !o->md);
    if (!o->ledger) {
        default_ledger_dir(o->ledger_default, sizeof o->ledger_default);
        o->ledger = o->ledger_default;
    }
    if (o->to_dir && !dir_ok(o->ledger))
        return bad("cannot create or write the --ledger directory '%s'", o->ledger);
    return -1;
}

static int versus_unknown(const char *name) {
    char names[2048];
    fprintf(stderr,
            "softmax-lab bench: bad value for --versus: no kernel '%s' in the registry (valid: "
            "%s)\n",
            name, sml_cli_kernel_names(names, sizeof names));
    return 2;
}

/* The backends (with --versus's baseline): -1, or the exit code after the message. */
static int plan_kernels(bench_opts *o, int gpu, sml_bench_plan *plan, const sml_kernel **kernels,
                        int *baseline_only, char *notes, size_t notes_len) {
    char err[512];
    size_t nk = 0;
    sml_status s = sml_bench_select(o->backend, gpu, kernels, baseline_only, &nk, notes, notes_len,
                                    err, sizeof err);
    if (s != SML_OK) {
        /* With no GPU and only GPU backends asked for, say so and do nothing: not a usage
         * error, and not a pass either (3: nothing was checked). */
        if (!gpu && s == SML_ERR_INVALID_ARG) {
            printf(
                "GPU backends are unavailable on this machine (no CUDA device, or built without "
                "CUDA); nothing to run for --backend %s. The CPU backends run with --backend cpu.\n"
                "NOTHING CHECKED: no ledger written%s; exit 3\n",
                o->backend, o->gate ? ", and --gate cannot pass what did not run" : "");
            return 3;
        }
        return bad("%s", err);
    }
    if (o->versus) {
        /* The claims' common baseline is timed like the other baselines. */
        const sml_kernel *v = sml_kernel_find(o->versus);
        if (!v) return versus_unknown(o->versus);
        size_t i = 0;
        while (i < nk && kernels[i] != v) i++;
        if (i == nk) {
            if (nk >= SML_MAX_KERNELS) return bad("--versus %s: too many backends", o->versus);
            if (!v->launch || (v->device == SML_DEVICE_GPU && !gpu))
                return bad("--versus: kernel '%s' cannot run here", o->versus);
            kernels[nk] = v;
            baseline_only[nk++] = 1;
        }
        plan->versus = v->name;
    }
    plan->kernels = kernels;
    plan->baseline_only = baseline_only;
    plan->nkernels = nk;
    return -1;
}

/* A CPU-only run keeps each shape's cols (its class) and cuts rows to time in seconds. */
static void shrink_for_cpu(const bench_opts *o, sml_bench_plan *plan, char *notes,
                           size_t notes_len) {
    int any_gpu = 0;
    for (size_t i = 0; i < plan->nkernels; i++)
        any_gpu |= plan->kernels[i]->device == SML_DEVICE_GPU;
    if (any_gpu || o->no_shrink || o->rows || o->cols) return;
    int cut = 0;
    for (size_t i = 0; i < plan->shapes.n; i++) {
        sml_sweep_shape *sh = &plan->shapes.shape[i];
        int64_t r = sml_sweep_shrink_rows(sh->rows, sh->cols, SML_CPU_MAX_ELEMS);
        if (r != sh->rows) {
            cut = 1;
            sh->requested_rows = sh->rows;
            sh->rows = r;
        }
    }
    if (!cut) return;
    plan->shrunk = 1;
    size_t used = strlen(notes);
    snprintf(notes + used, notes_len - used,
             "%sCPU-only run: sweep shapes shrunk to at most 2^20 elements (rows cut, cols "
             "kept; --no-shrink keeps them).",
             used ? " " : "");
}

/* ---- report ---- */

static int save_file(const sml_bench_run *run, const sml_ledger *l, const char *path, int json,
                     const char *lead) {
    char err[1200];
    if (sml_ledger_save_file(run, l, path, json, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab bench: %s\n", err);
        return 1;
    }
    printf("%sledger: %s\n", lead, path);
    return 0;
}

/* The ledger into --ledger's directory, --json, --md and --svg: 0, or 1 after a message. */
static int write_outputs(const bench_opts *o, const sml_bench_run *run, const sml_ledger *l) {
    char stem[sizeof run->plan.sweep + 80 + 1], jp[1200], mp[1200], err[1200];
    char opstag[80] = "";
    if (o->ops == SML_OPS_ALL)
        snprintf(opstag, sizeof opstag, "all");
    else
        for (int op = 0; op < SML_OP_COUNT; op++)
            if (o->ops & (1u << op)) {
                if (opstag[0]) strncat(opstag, "-", sizeof opstag - strlen(opstag) - 1);
                strncat(opstag, sml_op_name((sml_op)op), sizeof opstag - strlen(opstag) - 1);
            }
    snprintf(stem, sizeof stem, "%s_%s", run->plan.sweep, opstag);
    if (o->to_dir) {
        if (sml_ledger_save(run, l, o->ledger, stem, jp, mp, sizeof jp, err, sizeof err) !=
            SML_OK) {
            fprintf(stderr, "softmax-lab bench: %s\n", err);
            return 1;
        }
        printf("\nledger: %s and %s\n", jp, mp);
    }
    if ((o->json && !make_parent(o->json, err, sizeof err)) ||
        (o->md && !make_parent(o->md, err, sizeof err)) ||
        (o->svg && !make_parent(o->svg, err, sizeof err))) {
        fprintf(stderr, "softmax-lab bench: %s\n", err);
        return 1;
    }
    if (o->json && save_file(run, l, o->json, 1, o->to_dir ? "" : "\n")) return 1;
    if (o->md && save_file(run, l, o->md, 0, o->to_dir || o->json ? "" : "\n")) return 1;
    if (o->svg && !write_svg(run, l, o->svg)) return 1;
    return 0;
}

/* Kernels asked for (not baselines) that this run calls LESS ACCURATE than their baseline. */
static int less_accurate(const sml_ledger *l) {
    int n = 0;
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_accuracy *row = NULL;
        if (l->rec[j].baseline_only ||
            sml_ledger_accuracy_verdict(&l->rec[j], &row) != SML_ACC_LESS)
            continue;
        printf("gate: %s is LESS ACCURATE than %s (%s)\n", l->rec[j].kernel,
               row ? row->baseline : "its baseline", row ? row->why : "");
        n++;
    }
    return n;
}

/* The gate over the ledger: rc, or 1 where it fails. */
static int gate_status(const bench_opts *o, const sml_bench_run *run, const sml_ledger *l, int rc) {
    int missed = 0;
    for (size_t j = 0; j < l->n; j++)
        missed += l->rec[j].claim.baseline && l->rec[j].decision.status != SML_DECISION_SUPPORTED &&
                  l->rec[j].decision.status != SML_DECISION_MEASURED;
    if (missed) {
        printf("gate: %d kernel(s) miss their claim\n", missed);
        rc = 1;
    } else if (sml_bench_partial(run)) {
        /* Kernels whose claimed shapes were never reached are Measured, not missed: a gate
         * that only counted misses would pass a run that measured nothing it gates. */
        printf("gate: a partial run cannot show any claim holds\n");
        rc = 1;
    }
    /* A faster kernel that got less accurate is no pass, as with check --against. */
    int less = less_accurate(l);
    if (less && !o->allow_less)
        rc = 1;
    else if (less)
        printf("gate: LESS ACCURATE allowed by --allow-less-accurate\n");
    return rc;
}

/* The exit status after the outputs were written (rc: 1 if one failed). */
static int run_status(const bench_opts *o, const sml_bench_run *run, const sml_ledger *l,
                      const char *unrun, int rc) {
    /* Exit 1 for a kernel that was asked for and broke the contract; baselines added only for
     * the speedup columns are reported but do not fail the run. */
    int broken = 0, broken_baselines = 0;
    for (size_t i = 0; i < run->nresults; i++) {
        if (!sml_bench_verdict_failed(run->results[i].verdict)) continue;
        if (run->results[i].baseline_only)
            broken_baselines++;
        else
            broken++;
    }
    if (broken_baselines)
        printf("%d measurement(s) of baselines added for the speedup columns were WRONG or failed "
               "(reported, not counted in the exit status)\n",
               broken_baselines);
    if (broken) {
        printf("%d measurement(s) WRONG or failed: see the check column\n", broken);
        rc = 1;
    }
    if (sml_bench_partial(run)) {
        char part[128];
        printf("PARTIAL: %s; no kernel with a claim is called Supported on it\n",
               sml_bench_partial_text(run, part, sizeof part));
    }
    if (o->gate) rc = gate_status(o, run, l, rc);
    /* Green only for what ran: a backend named with --backend that could not run here, or a
     * run that measured nothing, is exit 3 (a failure above keeps its 1). */
    if (rc == 0 && unrun[0]) {
        printf("NOT CHECKED: %s could not run on this machine; exit 3\n", unrun);
        rc = 3;
    } else if (rc == 0 && run->nresults == 0) {
        printf("NOTHING CHECKED: no measurement was made; exit 3\n");
        rc = 3;
    }
    return rc;
}

/* ---- run ---- */

static int execute(const bench_opts *o, sml_bench_plan *plan, const char *unrun) {
    sml_bench_run run;
    print_ctx pc = {0};
    char err[512];
    sml_status s = sml_bench_execute(plan, &o->cfg, on_case, &pc, &run, err, sizeof err);
    if (s != SML_OK) {
        fprintf(stderr, "softmax-lab bench: %s\n", err);
        sml_bench_run_free(&run);
        return s == SML_ERR_OUT_OF_MEMORY ? 3 : 1;
    }
    if (!pc.header_done) sml_bench_print_header(stdout, &run);
    if (run.nresults == 0)
        printf("\nnothing was measured: no selected backend supports these shapes\n");
    sml_ledger l;
    if (sml_ledger_build(&run, &l) != SML_OK) {
        fprintf(stderr, "softmax-lab bench: out of memory building the ledger\n");
        sml_bench_run_free(&run);
        return 3;
    }
    sml_bench_print_decisions(stdout, &run, &l);
    int rc = write_outputs(o, &run, &l);
    rc = run_status(o, &run, &l, unrun, rc);
    sml_ledger_free(&l);
    sml_bench_run_free(&run);
    return rc;
}

/* The shard this ledger holds, said in its notes. */
static void note_shard(const sml_shard *shard, char *notes, size_t notes_len) {
    if (!shard->count) return;
    size_t used = strlen(notes);
    snprintf(notes + used, notes_len - used,
             "%sShard %d/%d: this ledger holds the sweep's cases i with i mod %d = %d and "
             "decides on those alone; softmax-lab merge joins the shards' ledgers.",
             used ? " " : "", shard->index, shard->count, shard->count, shard->index - 1);
}

int sml_cmd_bench(int argc, char **argv) {
    int split = sml_cli_devices("bench", &argc, argv); /* several GPUs: one worker each */
    if (split >= 0) return split;
    bench_opts o;
    int rc = parse_args(&o, argc, argv);
    if (rc >= 0) return rc;
    sml_bench_plan plan;
    if ((rc = plan_shapes_and_outputs(&o, &plan)) >= 0) return rc;
    int gpu = sml_gpu_available();
    char notes[512] = "", err[1024];
    const sml_kernel *kernels[SML_MAX_KERNELS];
    int baseline_only[SML_MAX_KERNELS];
    if ((rc = plan_kernels(&o, gpu, &plan, kernels, baseline_only, notes, sizeof notes)) >= 0)
        return rc;
    char unrun[256] = "";
    named_unrunnable(o.backend, gpu, unrun, sizeof unrun);
    shrink_for_cpu(&o, &plan, notes, sizeof notes);
    note_shard(&o.shard, notes, sizeof notes);
    /* Before anything is allocated: a case that cannot fit is refused, not killed mid-run. */
    if (!sml_bench_memory_check(&plan, &o.cfg, gpu, err, sizeof err)) return bad("%s", err);
    /* The kernels run in a worker process running this command again (src/worker/command.c):
     * one that crashes, exits or hangs is a FAIL naming it, not the bench's verdict. A kernel
     * call may take 10 times a property case's deadline (a cell is timed many times). */
    if (!o.in_process && sml_worker_command_available())
        return sml_worker_command("bench", 10.0, 1, sml_cli_stdout(), sml_cli_line());
    sml_bench_estimate est;
    sml_bench_estimate_plan(&plan, &o.cfg, gpu, &est);
    if (!o.quiet)
        fprintf(stderr,
                "plan: sweep %s, %zu cases (%zu runnable), %zu measurements; timing at most "
                "%.0f s (%.2f s each), host work ~%.0f s on %d threads (inputs, reference, "
                "checks)\n",
                plan.sweep, est.cases, est.cases_run, est.measurements, est.timing_bound_s,
                o.cfg.stop.max_seconds, est.host_s, est.threads);
    plan.notes = notes;
    return execute(&o, &plan, unrun);
}
