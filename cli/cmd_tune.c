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
#include "io/out_file.h"
#include "tune/tune.h"

#define ME "softmax-lab tune"

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: softmax-lab tune [--sweep S] [--op OP[,OP]|all] [--dtype D[,D]|all] [--out FILE]\n"
        "                        [--min-gain X] [--quiet]\n\n"
        "Times the candidate plans of `auto` (each kernel family's launcher default and a small\n"
        "grid of its knobs: threads, K, R, cluster size C, stages) on every cell of the sweep on\n"
        "the GPU at hand, with the bench's method (CUDA events, warm-up, medians, cold L2),\n"
        "keeps the fastest per cell (the rules' own plan unless another is faster by --min-gain),\n"
        "merges neighbouring cells into column and row bands, and writes a plan table keyed by\n"
        "this GPU (name, SMs, DRAM bytes per SM clock). `auto` reads it with --plans FILE or\n"
        "SML_PLANS=FILE; copied into data/plans/ it ships with the library.\n\n"
        "  --sweep S        %s (default standard)\n"
        "  --op OP          softmax, log_softmax, softmax_bwd, log_softmax_bwd, or all (default)\n"
        "  --dtype D        fp32, fp16, bf16, or all (default: each shape's own dtypes)\n"
        "  --out FILE       write the table here (default: stdout)\n"
        "  --min-gain X     keep the rules' plan unless the best is X faster (default 0.01)\n"
        "  --quiet          no progress lines on stderr\n"
        "exit: 0 written, 1 a measurement or the write failed (the old file, or none, is left), "
        "or\n"
        "      a candidate's launch failed other than as unsupported (the table is written\n"
        "      without it),\n"
        "      2 bad usage (nothing written), 3 no GPU (nothing measured)\n",
        sml_sweep_names());
}

static int bad(const char *what, const char *v) {
    fprintf(stderr, ME ": %s '%s' (see softmax-lab tune --help)\n", what, v);
    return 2;
}

typedef struct tune_args {
    sml_tune_opts o;
    const char *out;
} tune_args;

/* 0 parsed, 2 bad usage, -1 help printed. */
static int parse(int argc, char **argv, tune_args *a) {
    memset(a, 0, sizeof *a);
    a->o.sweep = "standard";
    a->o.ops = SML_OPS_ALL;
    a->o.dtypes = SML_DTYPES_ALL;
    a->o.min_gain = 0.01;
    a->o.progress = 1;
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(f, "--quiet")) {
            a->o.progress = 0;
            continue;
        }
        if (!v) return bad("a value is missing after", f);
        i++;
        sml_sweep sw;
        char *end;
        if (!strcmp(f, "--sweep")) {
            if (sml_sweep_get(v, &sw) != SML_OK) return bad("unknown sweep", v);
            a->o.sweep = v;
        } else if (!strcmp(f, "--op")) {
            if (!sml_cli_parse_mask(v, 1, &a->o.ops)) return bad("unknown op in --op", v);
        } else if (!strcmp(f, "--dtype")) {
            if (!sml_cli_parse_mask(v, 0, &a->o.dtypes)) return bad("unknown dtype in --dtype", v);
        } else if (!strcmp(f, "--out")) {
            if (!*v || v[strlen(v) - 1] == '/') return bad("--out needs a file name, not", v);
            a->out = v;
        } else if (!strcmp(f, "--min-gain")) {
            errno = 0;
            a->o.min_gain = strtod(v, &end);
            if (!*v || *end || errno || !(a->o.min_gain >= 0 && a->o.min_gain < 0.5))
                return bad("--min-gain takes a number from 0 to 0.5, not", v);
        } else {
            return bad("unknown option", f);
        }
    }
    return 0;
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
    if (rc) return rc < 0 ? 0 : rc;
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
