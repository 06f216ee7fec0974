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
#include "devices.h"
#include "io/out_file.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: softmax-lab bench [options]\n"
        "  --backend all|gpu|cpu|K[,K...]  backends (default all: the GPU kernels, or the CPU\n"
        "                          backends when there is no GPU); cudnn and naive (cpu_naive)\n"
        "                          are added as baselines, marked *\n"
        "  --op OP[,OP...]|all     softmax (default), log_softmax, softmax_bwd, log_softmax_bwd\n"
        "  --sweep NAME            %s (default seeds)\n"
        "  --rows R --cols C       one shape instead of a sweep\n"
        "  --dtype D[,D...]|all    fp32, fp16, bf16 (default: each shape's own dtypes)\n"
        "  --json FILE --md FILE   write the ledger to these files (directories are made)\n"
        "  --ledger DIR            also write DIR/<sweep>_<ops>.json and .md (default: build/ledger\n"
        "                          for a build tree's ./build/softmax-lab, else ./ledger in the\n"
        "                          current directory; none when --json or --md is given)\n"
        "  --svg FILE              plot GB/s against cols from this run's ledger\n"
        "  --min-samples N         at least N samples per measurement (default 10)\n"
        "  --max-seconds S         per measurement, once N samples are in (default 0.5)\n"
        "  --time-limit S          start no case after S seconds of the run (the first case always\n"
        "                          runs, a started one finishes: leave headroom); the ledger is\n"
        "                          then partial, says which cases ran, calls no claim Supported,\n"
        "                          and --gate fails (default: none)\n"
        "  --min-batch N           GPU launches per sample at least N (default 4; 1: single launches)\n"
        "  --no-hold               start each GPU sample's launches as they are made, not queued\n"
        "                          behind the hold kernel (times the host's launch calls too)\n"
        "  --noise X               stop when IQR/median <= X (default 0.02)\n"
        "  --margin X              decision noise floor (default 0.03)\n"
        "  --l2 cold|warm          cold: rotate buffers past 4x L2 (default); warm: same buffers\n"
        "  --seed S                run seed (default 0x5eedbe4c5eedbe4c)\n"
        "  --threads N             host threads for inputs and checks (default: all cores)\n"
        "  --check-elems N|all     check each kernel on at most N elements per case: whole rows\n"
        "                          in 64 blocks spread over the tensor, first and last row\n"
        "                          included (default 16777216); all: every element\n"
        "  --no-shrink             keep full sweep shapes on a CPU-only run\n"
        "  --versus K              decide every backend's claim as '>= 1.00x K on all shapes'\n"
        "                          (K is timed too), e.g. --versus torch: each backend against\n"
        "                          PyTorch, the seeds' decision matrix\n"
        "  --shard K/N             measure the K-th of N slices of the cases (every N-th case\n"
        "                          from K-1), for softmax-lab merge; env SML_SHARD\n"
        "  --devices D[,D]         the GPUs to use (default: every visible GPU): with several, one\n"
        "                          worker process per GPU measures its slice of the cases (never\n"
        "                          two measurements on one GPU at once) and the slices' ledgers are\n"
        "                          merged into one\n"
        "  --gate                  exit 1 if a kernel with a claim is not Supported\n"
        "  --quiet                 no progress line\n"
        "exit: 0 done, 1 a kernel was WRONG or failed, a write failed, or --gate missed, 2 bad\n"
        "      usage (nothing written), 3 a backend named in --backend could not run here, or\n"
        "      nothing was measured\n"
        "sweeps:\n", sml_sweep_names());
    const char *names[] = {"seeds", "seed-row-fusion", "seed-cutedsl", "cols", "long", "short", "standard"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char d[1024];
        sml_sweep_describe(names[i], d, sizeof d);
        fprintf(f, "  %-16s %s\n", names[i], d);
    }
}

static int bad(const char *fmt, const char *a) {
    fprintf(stderr, "softmax-lab bench: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (see softmax-lab bench --help)\n");
    return 2;
}

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

/* "a,b,c" of ops or dtypes into a mask; "all" sets every bit. */
static int parse_mask(const char *s, int ops, unsigned *mask) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "all")) {
            *mask |= ops ? SML_OPS_ALL : SML_DTYPES_ALL;
            continue;
        }
        if (ops) {
            sml_op o;
            if (sml_op_parse(t, &o) != SML_OK) return 0;
            *mask |= 1u << o;
        } else {
            sml_dtype d;
            if (sml_dtype_parse(t, &d) != SML_OK) return 0;
            *mask |= 1u << d;
        }
    }
    return *mask != 0;
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
    if (!slash) snprintf(dir, n, ".");
    else if (slash == dir) slash[1] = 0;
    else *slash = 0;
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

/* The plot of this run's ledger, from the ledger JSON as a reader sees it. */
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
        if (s == SML_OK) s = sml_out_commit(&o, err, sizeof err);
        else sml_out_abort(&o);
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

int sml_cmd_bench(int argc, char **argv) {
    const char *backend = "all", *sweep = NULL, *json = NULL, *md = NULL, *ledger = NULL;
    const char *versus = NULL;
    const char *svg = NULL;
    unsigned ops = 1u << SML_SOFTMAX, dtypes = SML_DTYPES_ALL;
    int dtypes_given = 0, no_shrink = 0, gate = 0, quiet = 0;
    int64_t rows = 0, cols = 0;
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    int split = sml_cli_devices("bench", &argc, argv); /* several GPUs: one worker each */
    if (split >= 0) return split;
    sml_shard shard = {0, 0};
    if (sml_shard_env("softmax-lab bench", &shard) < 0) return 2;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-shrink")) { no_shrink = 1; continue; }
        if (!strcmp(a, "--gate")) { gate = 1; continue; }
        if (!strcmp(a, "--quiet")) { quiet = 1; continue; }
        if (!strcmp(a, "--no-hold")) { cfg.gpu_hold = 0; continue; }
        if (strncmp(a, "--", 2) != 0) return bad("unexpected argument '%s'", a);
        if (i + 1 >= argc) return bad("%s needs a value", a);
        const char *v = argv[++i];
        int64_t n;
        double d;
        if (!strcmp(a, "--backend")) backend = v;
        else if (!strcmp(a, "--op")) {
            if (!parse_mask(v, 1, &ops)) return bad("bad --op '%s'", v);
        } else if (!strcmp(a, "--dtype")) {
            if (!parse_mask(v, 0, &dtypes)) return bad("bad --dtype '%s'", v);
            dtypes_given = 1;
        } else if (!strcmp(a, "--sweep")) sweep = v;
        else if (!strcmp(a, "--rows")) {
            if (!parse_i64(v, 1, (int64_t)1 << 31, &rows)) return bad("bad --rows '%s' (1 to 2^31)", v);
        } else if (!strcmp(a, "--cols")) {
            if (!parse_i64(v, 1, (int64_t)1 << 31, &cols)) return bad("bad --cols '%s' (1 to 2^31)", v);
        } else if (!strcmp(a, "--json")) json = v;
        else if (!strcmp(a, "--md")) md = v;
        else if (!strcmp(a, "--ledger")) ledger = v;
        else if (!strcmp(a, "--svg")) svg = v;
        else if (!strcmp(a, "--versus")) versus = v;
        else if (!strcmp(a, "--min-samples")) {
            if (!parse_i64(v, 1, 100000, &n)) return bad("bad --min-samples '%s' (1 to 100000)", v);
            cfg.stop.min_samples = (int)n;
        } else if (!strcmp(a, "--min-batch")) {
            if (!parse_i64(v, 1, 1000, &n)) return bad("bad --min-batch '%s' (1 to 1000)", v);
            cfg.gpu_min_batch = (int)n;
        } else if (!strcmp(a, "--max-seconds")) {
            if (!parse_dbl(v, 0, 3600, &d)) return bad("bad --max-seconds '%s' (0 to 3600)", v);
            cfg.stop.max_seconds = d;
        } else if (!strcmp(a, "--time-limit")) {
            if (!parse_dbl(v, 1e-3, 1e6, &d)) return bad("bad --time-limit '%s' (0.001 to 1e6 seconds)", v);
            cfg.time_limit_s = d;
        } else if (!strcmp(a, "--noise")) {
            if (!parse_dbl(v, 0, 1, &d)) return bad("bad --noise '%s' (0 to 1)", v);
            cfg.stop.noise = d;
        } else if (!strcmp(a, "--margin")) {
            if (!parse_dbl(v, 0, 1, &d)) return bad("bad --margin '%s' (0 to 1)", v);
            cfg.margin = d;
        } else if (!strcmp(a, "--l2")) {
            if (!strcmp(v, "cold")) cfg.l2_warm = 0;
            else if (!strcmp(v, "warm")) cfg.l2_warm = 1;
            else return bad("bad --l2 '%s' (cold or warm)", v);
        } else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 0);
            if (!*v || *end || errno) return bad("bad --seed '%s'", v);
            cfg.seed = s;
        } else if (!strcmp(a, "--check-elems")) {
            if (!sml_bench_parse_check_elems(v, &cfg.check_max_elems))
                return bad("bad --check-elems '%s' (N >= 1 or all)", v);
        } else if (!strcmp(a, "--shard")) {
            char why[128];
            if (!sml_shard_parse(v, &shard, why, sizeof why)) {
                fprintf(stderr, "softmax-lab bench: bad value for --shard: '%.40s' (%s)\n", v, why);
                return 2;
            }
        } else if (!strcmp(a, "--threads")) {
            if (!parse_i64(v, 1, 64, &n)) return bad("bad --threads '%s' (1 to 64)", v);
            cfg.threads = (int)n;
        } else return bad("unknown option '%s'", a);
    }
    if (cfg.stop.max_samples < cfg.stop.min_samples) cfg.stop.max_samples = cfg.stop.min_samples;
    cfg.progress = !quiet;

    sml_bench_plan plan;
    memset(&plan, 0, sizeof plan);
    if (rows || cols) {
        if (sweep) return bad("%s", "--rows/--cols and --sweep exclude each other");
        if (!rows || !cols) return bad("%s", "give both --rows and --cols");
        snprintf(plan.sweep, sizeof plan.sweep, "custom");
        plan.shapes.n = 1;
        plan.shapes.shape[0] = (sml_sweep_shape){rows, cols, SML_DTYPES_ALL, 0};
        if (!dtypes_given) dtypes = 1u << SML_F32;
    } else {
        if (!sweep) sweep = "seeds";
        if (sml_sweep_get(sweep, &plan.shapes) != SML_OK)
            return bad("unknown --sweep '%s' (softmax-lab bench --help lists the sweeps)", sweep);
        snprintf(plan.sweep, sizeof plan.sweep, "%s", sweep);
    }
    plan.ops = ops;
    plan.dtypes = dtypes;
    plan.shard = shard;
    if (json && !parent_ok(json)) return bad("cannot write --json '%s'", json);
    if (md && !parent_ok(md)) return bad("cannot write --md '%s'", md);
    if (svg && !parent_ok(svg)) return bad("cannot write --svg '%s'", svg);
    /* --json/--md name where the ledger goes: the default directory is then left alone, so a
     * ledger kept there is never overwritten by a run meant for elsewhere. */
    const int to_dir = ledger != NULL || (!json && !md);
    char ledger_default[1100];
    if (!ledger) {
        default_ledger_dir(ledger_default, sizeof ledger_default);
        ledger = ledger_default;
    }
    if (to_dir && !dir_ok(ledger)) return bad("cannot create or write the --ledger directory '%s'", ledger);

    int gpu = sml_gpu_available();
    char notes[512] = "", err[512];
    const sml_kernel *kernels[SML_MAX_KERNELS];
    int baseline_only[SML_MAX_KERNELS];
    size_t nk = 0;
    sml_status s = sml_bench_select(backend, gpu, kernels, baseline_only, &nk, notes, sizeof notes,
                                    err, sizeof err);
    if (s != SML_OK) {
        /* With no GPU and only GPU backends asked for, say so and do nothing: not a usage
         * error, and not a pass either (3: nothing was checked). */
        if (!gpu && s == SML_ERR_INVALID_ARG) {
            printf("GPU backends are unavailable on this machine (no CUDA device, or built without "
                   "CUDA); nothing to run for --backend %s. The CPU backends run with --backend cpu.\n"
                   "NOTHING CHECKED: no ledger written%s; exit 3\n",
                   backend, gate ? ", and --gate cannot pass what did not run" : "");
            return 3;
        }
        return bad("%s", err);
    }
    if (versus) {
        /* The claims' common baseline is timed like the other baselines. */
        const sml_kernel *v = sml_kernel_find(versus);
        if (!v) return bad("--versus: no kernel '%s' in the registry (softmax-lab list)", versus);
        size_t i = 0;
        while (i < nk && kernels[i] != v) i++;
        if (i == nk) {
            if (nk >= SML_MAX_KERNELS) return bad("--versus %s: too many backends", versus);
            if (!v->launch || (v->device == SML_DEVICE_GPU && !gpu))
                return bad("--versus: kernel '%s' cannot run here", versus);
            kernels[nk] = v;
            baseline_only[nk++] = 1;
        }
        plan.versus = v->name;
    }
    char unrun[256] = "";
    named_unrunnable(backend, gpu, unrun, sizeof unrun);
    plan.kernels = kernels;
    plan.baseline_only = baseline_only;
    plan.nkernels = nk;
    int any_gpu = 0;
    for (size_t i = 0; i < nk; i++) any_gpu |= kernels[i]->device == SML_DEVICE_GPU;

    /* A CPU-only run keeps each shape's cols (its class) and cuts rows to time in seconds. */
    if (!any_gpu && !no_shrink && !(rows || cols)) {
        int cut = 0;
        for (size_t i = 0; i < plan.shapes.n; i++) {
            int64_t r = sml_sweep_shrink_rows(plan.shapes.shape[i].rows, plan.shapes.shape[i].cols,
                                              SML_CPU_MAX_ELEMS);
            if (r != plan.shapes.shape[i].rows) {
                cut = 1;
                plan.shapes.shape[i].requested_rows = plan.shapes.shape[i].rows;
                plan.shapes.shape[i].rows = r;
            }
        }
        if (cut) {
            plan.shrunk = 1;
            size_t used = strlen(notes);
            snprintf(notes + used, sizeof notes - used,
                     "%sCPU-only run: sweep shapes shrunk to at most 2^20 elements (rows cut, cols "
                     "kept; --no-shrink keeps them).",
                     used ? " " : "");
        }
    }
    if (shard.count) {
        size_t used = strlen(notes);
        snprintf(notes + used, sizeof notes - used,
                 "%sShard %d/%d: this ledger holds the sweep's cases i with i mod %d = %d and "
                 "decides on those alone; softmax-lab merge joins the shards' ledgers.",
                 used ? " " : "", shard.index, shard.count, shard.count, shard.index - 1);
    }
    sml_bench_estimate est;
    sml_bench_estimate_plan(&plan, &cfg, gpu, &est);
    if (!quiet)
        fprintf(stderr, "plan: sweep %s, %zu cases (%zu runnable), %zu measurements; timing at most "
                        "%.0f s (%.2f s each), host work ~%.0f s on %d threads (inputs, reference, "
                        "checks)\n",
                plan.sweep, est.cases, est.cases_run, est.measurements, est.timing_bound_s,
                cfg.stop.max_seconds, est.host_s, est.threads);

    plan.notes = notes;
    sml_bench_run run;
    print_ctx pc = {0};
    s = sml_bench_execute(&plan, &cfg, on_case, &pc, &run, err, sizeof err);
    if (s != SML_OK) {
        fprintf(stderr, "softmax-lab bench: %s\n", err);
        sml_bench_run_free(&run);
        return 1;
    }
    if (!pc.header_done) sml_bench_print_header(stdout, &run);
    if (run.nresults == 0) printf("\nnothing was measured: no selected backend supports these shapes\n");

    sml_ledger l;
    int rc = 0;
    if (sml_ledger_build(&run, &l) != SML_OK) {
        fprintf(stderr, "softmax-lab bench: out of memory building the ledger\n");
        sml_bench_run_free(&run);
        return 1;
    }
    sml_bench_print_decisions(stdout, &run, &l);
    char stem[sizeof run.plan.sweep + 80 + 1], jp[1200], mp[1200];
    char opstag[80] = "";
    if (ops == SML_OPS_ALL) snprintf(opstag, sizeof opstag, "all");
    else
        for (int o = 0; o < SML_OP_COUNT; o++)
            if (ops & (1u << o)) {
                if (opstag[0]) strncat(opstag, "-", sizeof opstag - strlen(opstag) - 1);
                strncat(opstag, sml_op_name((sml_op)o), sizeof opstag - strlen(opstag) - 1);
            }
    snprintf(stem, sizeof stem, "%s_%s", run.plan.sweep, opstag);
    if (to_dir) {
        s = sml_ledger_save(&run, &l, ledger, stem, jp, mp, sizeof jp, err, sizeof err);
        if (s != SML_OK) {
            fprintf(stderr, "softmax-lab bench: %s\n", err);
            rc = 1;
        } else {
            printf("\nledger: %s and %s\n", jp, mp);
        }
    }
    if (rc == 0 && ((json && !make_parent(json, err, sizeof err)) || (md && !make_parent(md, err, sizeof err)) ||
                    (svg && !make_parent(svg, err, sizeof err)))) {
        fprintf(stderr, "softmax-lab bench: %s\n", err);
        rc = 1;
    }
    if (rc == 0 && json) {
        if (sml_ledger_save_file(&run, &l, json, 1, err, sizeof err) != SML_OK) {
            fprintf(stderr, "softmax-lab bench: %s\n", err);
            rc = 1;
        } else {
            printf("%sledger: %s\n", to_dir ? "" : "\n", json);
        }
    }
    if (rc == 0 && md) {
        if (sml_ledger_save_file(&run, &l, md, 0, err, sizeof err) != SML_OK) {
            fprintf(stderr, "softmax-lab bench: %s\n", err);
            rc = 1;
        } else {
            printf("%sledger: %s\n", to_dir || json ? "" : "\n", md);
        }
    }
    if (rc == 0 && svg && !write_svg(&run, &l, svg)) rc = 1;
    /* Exit 1 for a kernel that was asked for and broke the contract; baselines added only for
     * the speedup columns are reported but do not fail the run. */
    int broken = 0, missed = 0, broken_baselines = 0;
    for (size_t i = 0; i < run.nresults; i++) {
        if (!sml_bench_verdict_failed(run.results[i].verdict)) continue;
        if (run.results[i].baseline_only) broken_baselines++;
        else broken++;
    }
    if (broken_baselines)
        printf("%d measurement(s) of baselines added for the speedup columns were WRONG or failed "
               "(reported, not counted in the exit status)\n", broken_baselines);
    for (size_t j = 0; j < l.n; j++)
        missed += l.rec[j].claim.baseline && l.rec[j].decision.status != SML_DECISION_SUPPORTED &&
                  l.rec[j].decision.status != SML_DECISION_MEASURED;
    if (broken) {
        printf("%d measurement(s) WRONG or failed: see the check column\n", broken);
        rc = 1;
    }
    if (sml_bench_partial(&run)) {
        char part[128];
        printf("PARTIAL: %s; no kernel with a claim is called Supported on it\n",
               sml_bench_partial_text(&run, part, sizeof part));
    }
    if (gate && missed) {
        printf("gate: %d kernel(s) miss their claim\n", missed);
        rc = 1;
    } else if (gate && sml_bench_partial(&run)) {
        /* Kernels whose claimed shapes were never reached are Measured, not missed: a gate
         * that only counted misses would pass a run that measured nothing it gates. */
        printf("gate: a partial run cannot show any claim holds\n");
        rc = 1;
    }
    /* Green only for what ran: a backend named with --backend that could not run here, or a
     * run that measured nothing, is exit 3 (a failure above keeps its 1). */
    if (rc == 0 && unrun[0]) {
        printf("NOT CHECKED: %s could not run on this machine; exit 3\n", unrun);
        rc = 3;
    } else if (rc == 0 && run.nresults == 0) {
        printf("NOTHING CHECKED: no measurement was made; exit 3\n");
        rc = 3;
    }
    sml_ledger_free(&l);
    sml_bench_run_free(&run);
    return rc;
}
