/* tune: measure `auto`'s candidate plans on the GPU at hand and write a plan table keyed by
 * this GPU (src/tune/tune.h). Flags are checked before anything runs (bad usage: exit 2,
 * nothing written); without a GPU it exits 3. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/sweeps.h"
#include "commands.h"
#include "masks.h"
#include "options.h"
#include "io/out_file.h"
#include "tune/tune.h"

#define ME "softmax-lab tune"

typedef struct tune_args {
    sml_tune_opts o;
    const char *out;
} tune_args;

enum { T_SWEEP, T_OP, T_DTYPE, T_OUT, T_MIN_GAIN, T_QUIET };

static const sml_opt OPTS[] = {
    {"sweep", "S", SML_SWEEP_NAMES, "the cells to time (default standard; bench --help lists them)",
     NULL, T_SWEEP},
    {"op", "OP[,OP]", SML_CLI_OP_LIST, "the ops (default all)", NULL, T_OP},
    {"dtype", "D[,D]", SML_CLI_DTYPE_LIST, "the dtypes (default: each shape's own)", NULL, T_DTYPE},
    {"out", "FILE", "a file name", "write the table here (default: standard output)", NULL, T_OUT},
    {"min-gain", "X", "0 or more, under 0.5",
     "keep the rules' plan unless the best is X faster (default 0.01)", NULL, T_MIN_GAIN},
    {"quiet", NULL, NULL, "no progress lines on standard error", NULL, T_QUIET},
};

static const sml_cli_spec SPEC = {
    "tune",
    "[--sweep S] [--op OP[,OP]|all] [--dtype D[,D]|all] [--out FILE] [--min-gain X] [--quiet]",
    "Times the candidate plans of `auto` (each kernel family's launcher default and a small grid "
    "of its knobs: threads, K, R, grid size, cluster size C, stages) on every cell of the sweep on "
    "the GPU at hand, with the bench's method (CUDA events, warm-up, medians, cold L2), keeps the "
    "fastest per cell (the rules' own plan unless another is faster by --min-gain), merges "
    "neighbouring cells into column and row bands, and writes a plan table keyed by this GPU "
    "(name, SMs, DRAM bytes per SM clock). `auto` reads it with --plans FILE or SML_PLANS=FILE; "
    "copied into data/plans/ it ships with the library.",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0 written, 1 a measurement or the write failed (the old file, or none, is left), or a "
    "candidate's launch failed other than as unsupported (the table is written without it), 2 "
    "bad usage (nothing written), 3 no GPU (nothing measured)",
    NULL,
    NULL};

const sml_cli_spec *sml_spec_tune(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    tune_args *a = ctx;
    sml_sweep sw;
    char *end;
    switch (o->id) {
    case T_QUIET: a->o.progress = 0; return 0;
    case T_SWEEP:
        if (sml_sweep_get(v, &sw) != SML_OK) return -1;
        a->o.sweep = v;
        return 0;
    case T_OP: return sml_cli_parse_mask(v, 1, &a->o.ops, why, n) ? 0 : -1;
    case T_DTYPE: return sml_cli_parse_mask(v, 0, &a->o.dtypes, why, n) ? 0 : -1;
    case T_OUT:
        if (!*v || v[strlen(v) - 1] == '/') return -1;
        a->out = v;
        return 0;
    case T_MIN_GAIN:
        errno = 0;
        a->o.min_gain = strtod(v, &end);
        return !*v || *end || errno || !(a->o.min_gain >= 0 && a->o.min_gain < 0.5) ? -1 : 0;
    default: return -1;
    }
}

/* -1 parsed, else the exit status (0 after --help, 2 bad usage). */
static int parse(int argc, char **argv, tune_args *a) {
    memset(a, 0, sizeof *a);
    a->o.sweep = "standard";
    a->o.ops = SML_OPS_ALL;
    a->o.dtypes = SML_DTYPES_ALL;
    a->o.min_gain = 0.01;
    a->o.progress = 1;
    int npos;
    return sml_cli_parse(&SPEC, argc, argv, on_option, a, NULL, 0, &npos, NULL);
}

/* The table into a.out (or stdout), whole or not at all. */
static int write_table(const tune_args *a, const sml_plan_table *t, size_t ncells) {
    char comment[512], when[32], err[1024];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(comment, sizeof comment,
             "softmax-lab tune %s, %s: sweep %s, %zu cells, min gain %g.\n"
             "Each band's plan was the fastest measured in its cells (the rules' own where within "
             "the gain).",
             SML_VERSION, when, a->o.sweep, ncells, a->o.min_gain);
    if (!a->out) return sml_plan_table_write(t, comment, stdout) ? 1 : 0;
    sml_out_file o;
    if (sml_out_open(&o, a->out, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 1;
    }
    if (sml_plan_table_write(t, comment, o.f) != 0) {
        sml_out_abort(&o);
        fprintf(stderr, ME ": writing %s failed\n", a->out);
        return 1;
    }
    if (sml_out_commit(&o, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 1;
    }
    printf("plans: %s (%zu entries)\n", a->out, t->n);
    return 0;
}

int sml_cmd_tune(int argc, char **argv) {
    tune_args a;
    const int rc = parse(argc, argv, &a);
    if (rc >= 0) return rc;
    char err[1024];
    sml_out_file
        probe; /* an --out that cannot be written is bad usage, found before minutes of timing */
    if (a.out && sml_out_open(&probe, a.out, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": --out: %s\n", err);
        return 2;
    }
    if (a.out) sml_out_abort(&probe);
    sml_tune_cell *cells = NULL;
    size_t n = 0;
    sml_plan_key key;
    int failed = 0;
    sml_status s = sml_tune_run(&a.o, &cells, &n, &key, &failed, err, sizeof err);
    if (s != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return s == SML_ERR_NO_DEVICE ? 3 : 1;
    }
    sml_plan_table t;
    s = sml_tune_bands(cells, n, &key, &t, err, sizeof err);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += memcmp(&cells[i].best, &cells[i].rules, sizeof cells[i].best) != 0;
    free(cells);
    if (s != SML_OK) {
        fprintf(stderr, ME ": the bands: %s\n", err);
        return 1;
    }
    fprintf(stderr, ME ": %zu cells, %zu where the table's plan is not the rules' own\n", n,
            differ);
    const int wrc = write_table(&a, &t, n);
    sml_plan_table_free(&t);
    if (failed)
        fprintf(stderr, ME ": %d candidate launches failed (above); the table holds none of them\n",
                failed);
    return wrc ? wrc : failed ? 1 : 0;
}
