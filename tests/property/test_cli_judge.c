/* test_cli_judge: `softmax-lab check --input x.npy --output y.npy` as a user runs it on an
 * output made elsewhere: a correct output passes (exit 0); planted errors fail (exit 1) with
 * their count and N-d index tuples, text and JSON; a shape or dtype that differs between the
 * files exits 2 naming the file and the header field; backward ops take --dy; bf16 comes as
 * raw bits with the sidecar or --dtype; --save writes the reference rounded to the dtype; a
 * failed write exits non-zero and leaves no file; an empty tensor is not a pass (exit 3, and
 * the JSON says so); and in the kernel form, a named kernel that cannot run exits 3.
 * Every file is made here with the project's own .npy writer. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "cli_run.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif

static sml_tally T = {"test_cli_judge", 0, 0, 0};
static char D[256];
static char OUT[65536];
static const char *CLI = SML_CLI_PATH;

/* Run a shell command; stdout and stderr land in OUT; returns the exit code. */
#define run(...)             sml_shell(NULL, 4096, OUT, sizeof OUT, 0, __VA_ARGS__)
/* A check; a failure prints the message, the output and cmd to reproduce it. */
#define expect(ok, cmd, ...) sml_expect(&T, (ok), (cmd), 1024, OUT, 4000, __VA_ARGS__)

static int has(const char *needle) { return strstr(OUT, needle) != NULL; }

/* Run the CLI with the arguments; the command (for messages) lands in cmd. */
static int cli(char *cmd, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int cli(char *cmd, size_t n, const char *fmt, ...) {
    char args[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, n, "%s %s", CLI, args);
    return run("%s", cmd);
}

static void save(const char *name, sml_dtype dt, int ndim, const int64_t *shape, const void *data) {
    char p[512], err[512];
    snprintf(p, sizeof p, "%s/%s", D, name);
    if (sml_npy_write(p, dt, ndim, shape, data, err, sizeof err) != SML_OK) {
        printf("FAIL test_cli_judge: cannot write the fixture %s: %s\n", p, err);
        exit(1);
    }
}

static int64_t count(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* Logits with some spread, a large row and a -inf mask. */
static void *make_logits(sml_dtype dt, int64_t n, int64_t cols) {
    void *x = malloc((size_t)n * sml_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i / cols, j = i % cols;
        double v =
            r % 3 == 1 ? 95.0 + 20.0 * sin((double)(i * 7)) : 3.0 * sin((double)(i * 13 + 1));
        if (r % 5 == 2 && j % 4 == 3) v = -INFINITY;
        sml_store(dt, x, i, v);
    }
    return x;
}

/* The reference for op on (x, dy), rounded to dt: what a correct framework gives. */
static void *reference(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, const void *x,
                       const void *dy) {
    int64_t n = rows * cols;
    double *want = malloc((size_t)n * sizeof *want);
    void *y = malloc((size_t)n * sml_dtype_size(dt));
    sml_ref_run(op, dt, rows, cols, cols, x, dy, want);
    for (int64_t i = 0; i < n; i++) sml_store(dt, y, i, want[i]);
    free(want);
    return y;
}

/* The value k steps (of the dtype) away from element i. */
static void nudge(sml_dtype dt, void *y, int64_t i, int k) {
    double v = sml_load(dt, y, i);
    sml_store(dt, y, i, v + k * sml_ulp(dt, v));
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static void json_of(const char *name) { run("cat %s/%s", D, name); }

/* 1-3: fp32, 3-D: correct, wrong at planted elements, and files that do not go together. */
static void fp32_forward(void) {
    char cmd[4096];
    int64_t sh[3] = {3, 4, 37}, rows = 12, cols = 37, n = count(3, sh);
    float *x = make_logits(SML_F32, n, cols);
    float *y = reference(SML_SOFTMAX, SML_F32, rows, cols, x, NULL);
    save("x.npy", SML_F32, 3, sh, x);
    save("y.npy", SML_F32, 3, sh, y);
    int rc =
        cli(cmd, sizeof cmd,
            "check --input %s/x.npy --output %s/y.npy --op softmax --json %s/ok.json", D, D, D);
    expect(rc == 0 && has("PASS"), cmd, "a correct fp32 output: exit %d, expected 0 and PASS", rc);
    json_of("ok.json");
    expect(has("\"schema\": \"softmax-lab-check-input/1\"") && has("\"verdict\": \"PASS\"") &&
               has("\"bad\": 0"),
           cmd, "the JSON of a pass: schema, verdict PASS, bad 0");

    /* Plant: NaN at (2, 1, 36); 5000 ulps at (1, 2, 5); 6% at (0, 3, 0); one ulp (inside the
     * bound) at (0, 0, 1). */
    float *w = malloc((size_t)n * sizeof *w);
    memcpy(w, y, (size_t)n * sizeof *w);
    int64_t i_nan = (2 * 4 + 1) * 37 + 36, i_ulp = (1 * 4 + 2) * 37 + 5,
            i_rel = (0 * 4 + 3) * 37 + 0;
    w[i_nan] = NAN;
    nudge(SML_F32, w, i_ulp, 5000);
    w[i_rel] *= 1.06f;
    nudge(SML_F32, w, 1, 1);
    save("wrong.npy", SML_F32, 3, sh, w);
    rc = cli(cmd, sizeof cmd, "check --input %s/x.npy --output %s/wrong.npy --json %s/bad.json", D,
             D, D);
    expect(rc == 1, cmd, "a wrong fp32 output: exit %d, expected 1", rc);
    expect(has("FAIL: 3 of 444 elements"), cmd, "the FAIL line counts the 3 bad elements of 444");
    const char *nan_at = strstr(OUT, "(2, 1, 36)"), *rel_at = strstr(OUT, "(0, 3, 0)"),
               *ulp_at = strstr(OUT, "(1, 2, 5)");
    expect(nan_at && rel_at && ulp_at && nan_at < rel_at && rel_at < ulp_at, cmd,
           "the worst three by index tuple, worst first: (2, 1, 36) NaN, (0, 3, 0), (1, 2, 5)");
    expect(!has("(0, 0, 1)"), cmd, "an element within its bound is not listed");
    char *line = strstr(OUT, "(1, 2, 5)");
    double got = 0, want = 0, ulps = 0;
    if (line) sscanf(line + 9, "%lf %lf %lf", &got, &want, &ulps);
    expect((float)got == w[i_ulp] && fabs(want - y[i_ulp]) <= 0.5 * sml_ulp(SML_F32, want) &&
               ulps == 5000.0,
           cmd, "(1, 2, 5): got %.9g want %.9g at 5000 ulp, listed %.9g %.9g %.3g",
           (double)w[i_ulp], (double)y[i_ulp], got, want, ulps);
    json_of("bad.json");
    expect(has("\"verdict\": \"FAIL\"") && has("\"bad\": 3") && has("\"nan_mismatch\": 1") &&
               has("\"index\": [2, 1, 36]") && has("\"index\": [1, 2, 5]") &&
               (has("\"error_ulps\": 5000") || has("\"error_ulps\": 4999")),
           cmd, "the JSON of a fail: verdict, count, NaN count, index arrays, ulps");

    /* Files that do not go together: exit 2, naming the file and the field. */
    int64_t sh2[3] = {3, 4, 36};
    save("short.npy", SML_F32, 3, sh2, y);
    rc = cli(cmd, sizeof cmd,
             "check --input %s/x.npy --output %s/short.npy --save %s/no1 --json %s/no1.json", D, D,
             D, D);
    expect(rc == 2 && has("'shape'") && has("short.npy") && has("(3, 4, 36)") && has("(3, 4, 37)"),
           cmd, "a shape mismatch: exit %d, expected 2 naming short.npy, 'shape' and both shapes",
           rc);
    uint16_t *h = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++) sml_store(SML_F16, h, i, y[i]);
    save("half.npy", SML_F16, 3, sh, h);
    rc = cli(cmd, sizeof cmd,
             "check --input %s/x.npy --output %s/half.npy --save %s/no2 --json %s/no2.json", D, D,
             D, D);
    expect(rc == 2 && has("'descr'") && has("half.npy") && has("fp16") && has("fp32"), cmd,
           "a dtype mismatch: exit %d, expected 2 naming half.npy, 'descr', fp16 and fp32", rc);
    rc = cli(cmd, sizeof cmd, "check --input %s/x.npy --output %s/y.npy --kernel cpu_naive", D, D);
    expect(rc == 2, cmd, "--output with --kernel: exit %d, expected 2", rc);
    rc = cli(cmd, sizeof cmd, "check --input %s/x.npy --output %s/y.npy --op all", D, D);
    expect(rc == 2, cmd, "--output with --op all: exit %d, expected 2", rc);
    char p[600];
    for (int i = 1; i <= 2; i++) {
        snprintf(p, sizeof p, "%s/no%d", D, i);
        expect(!exists(p), cmd, "a refused run created %s", p);
        snprintf(p, sizeof p, "%s/no%d.json", D, i);
        expect(!exists(p), cmd, "a refused run wrote %s", p);
    }

    /* --save: the reference rounded to fp32, in x's shape, equal to what a correct output is. */
    rc = cli(cmd, sizeof cmd, "check --input %s/x.npy --output %s/wrong.npy --save %s/ref32", D, D,
             D);
    snprintf(p, sizeof p, "%s/ref32/reference.softmax.npy", D);
    sml_npy r;
    char err[512];
    int ok = rc == 1 && sml_npy_read(p, -1, &r, err, sizeof err) == SML_OK;
    expect(ok && r.dtype == SML_F32 && r.ndim == 3 && r.shape[0] == 3 && r.shape[2] == 37 &&
               memcmp(r.data, y, (size_t)n * 4) == 0,
           cmd, "--save: %s is the fp32 reference in shape (3, 4, 37)", p);
    if (ok) sml_npy_free(&r);
    free(x);
    free(y);
    free(w);
    free(h);
}

/* 4: backward: x is the forward output y, --dy the gradient, --output the dx. */
static void backward(void) {
    char cmd[4096];
    int64_t sh[2] = {6, 50}, rows = 6, cols = 50, n = rows * cols;
    for (int opi = 0; opi < 2; opi++) {
        sml_op fwd = opi ? SML_LOG_SOFTMAX : SML_SOFTMAX,
               bwd = opi ? SML_LOG_SOFTMAX_BWD : SML_SOFTMAX_BWD;
        float *logits = make_logits(SML_F32, n, cols);
        float *y = reference(fwd, SML_F32, rows, cols, logits, NULL);
        float *dy = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) dy[i] = (float)(2.0 * cos((double)i * 0.7));
        float *dx = reference(bwd, SML_F32, rows, cols, y, dy);
        save("by.npy", SML_F32, 2, sh, y);
        save("bdy.npy", SML_F32, 2, sh, dy);
        save("bdx.npy", SML_F32, 2, sh, dx);
        const char *name = sml_op_name(bwd);
        int rc = cli(cmd, sizeof cmd,
                     "check --input %s/by.npy --dy %s/bdy.npy --output %s/bdx.npy --op %s", D, D, D,
                     name);
        expect(rc == 0 && has("PASS"), cmd, "%s, correct dx: exit %d, expected 0", name, rc);
        nudge(SML_F32, dx, 3 * cols + 7, 5000);
        save("bdx.npy", SML_F32, 2, sh, dx);
        rc = cli(cmd, sizeof cmd,
                 "check --input %s/by.npy --dy %s/bdy.npy --output %s/bdx.npy --op %s", D, D, D,
                 name);
        expect(rc == 1 && has("FAIL: 1 of 300") && has("(3, 7)"), cmd,
               "%s, dx off by 5000 ulp at (3, 7): exit %d, expected 1 naming (3, 7)", name, rc);
        rc =
            cli(cmd, sizeof cmd, "check --input %s/by.npy --output %s/bdx.npy --op %s", D, D, name);
        expect(rc == 2 && has("--dy"), cmd, "%s without --dy: exit %d, expected 2", name, rc);
        int64_t sh2[2] = {5, 50};
        save("bdy5.npy", SML_F32, 2, sh2, dy);
        rc = cli(cmd, sizeof cmd,
                 "check --input %s/by.npy --dy %s/bdy5.npy --output %s/bdx.npy --op %s", D, D, D,
                 name);
        expect(rc == 2 && has("--dy") && has("bdy5.npy") && has("'shape'"), cmd,
               "%s, --dy of another shape: exit %d, expected 2 naming --dy bdy5.npy 'shape'", name,
               rc);
        free(logits);
        free(y);
        free(dy);
        free(dx);
    }
}

/* 5: bf16 as raw bits: with the sidecar, an output without one, --dtype (PyTorch's name). */
static void bf16(void) {
    char cmd[4096], p[600], err[512];
    int64_t sh[3] = {2, 3, 64}, rows = 6, cols = 64, n = count(3, sh);
    uint16_t *x = make_logits(SML_BF16, n, cols);
    uint16_t *y = reference(SML_LOG_SOFTMAX, SML_BF16, rows, cols, x, NULL);
    save("xb.npy", SML_BF16, 3, sh, x);
    save("yb.npy", SML_BF16, 3, sh, y);
    int rc =
        cli(cmd, sizeof cmd,
            "check --input %s/xb.npy --output %s/yb.npy --op log_softmax --save %s/refbf", D, D, D);
    expect(rc == 0 && has("PASS") && has("bf16"), cmd, "bf16 with sidecars: exit %d, expected 0",
           rc);
    snprintf(p, sizeof p, "%s/refbf/reference.log_softmax.npy", D);
    sml_npy r;
    int ok = sml_npy_read(p, -1, &r, err, sizeof err) == SML_OK;
    expect(ok && r.dtype == SML_BF16 && r.raw_bits && memcmp(r.data, y, (size_t)n * 2) == 0, cmd,
           "--save bf16: %s holds the reference's bf16 bits with its sidecar", p);
    if (ok) sml_npy_free(&r);
    run("rm -f %s/yb.npy.dtype", D);
    rc = cli(cmd, sizeof cmd, "check --input %s/xb.npy --output %s/yb.npy --op log_softmax", D, D);
    expect(rc == 0, cmd,
           "a bf16 output without its sidecar takes the input's dtype: exit %d, expected 0", rc);
    run("rm -f %s/xb.npy.dtype", D);
    rc = cli(cmd, sizeof cmd, "check --input %s/xb.npy --output %s/yb.npy --op log_softmax", D, D);
    expect(rc == 2 && has("--dtype bf16"), cmd,
           "raw bits and no dtype anywhere: exit %d, expected 2", rc);
    rc = cli(cmd, sizeof cmd,
             "check --input %s/xb.npy --output %s/yb.npy --op log_softmax --dtype bf16", D, D);
    expect(rc == 0, cmd, "bf16 with --dtype bf16: exit %d, expected 0", rc);
    nudge(SML_BF16, y, 1 * cols + 10, 3);
    save("yb.npy", SML_BF16, 3, sh, y);
    run("rm -f %s/yb.npy.dtype", D);
    rc = cli(cmd, sizeof cmd,
             "check --input %s/xb.npy --output %s/yb.npy --op log_softmax --dtype torch.bfloat16",
             D, D);
    expect(rc == 1 && has("FAIL: 1 of 384") && has("(0, 1, 10)"), cmd,
           "bf16 3 ulp off at (0, 1, 10), --dtype torch.bfloat16: exit %d, expected 1 naming it",
           rc);
    free(x);
    free(y);
}

/* 6: failed writes: non-zero, and no file (or the old one) left. */
static void failed_writes(void) {
    char cmd[4096], p[600];
    int64_t sh[2] = {64, 64}, n = 64 * 64;
    float *x = make_logits(SML_F32, n, 64);
    float *y = reference(SML_SOFTMAX, SML_F32, 64, 64, x, NULL);
    save("bx.npy", SML_F32, 2, sh, x);
    save("byy.npy", SML_F32, 2, sh, y);
    /* 16 KiB of reference under a 1-block (512 B) file-size limit. */
    snprintf(p, sizeof p, "%s/lim", D);
    mkdir(p, 0755);
    snprintf(cmd, sizeof cmd,
             "sh -c 'ulimit -f 1; exec %s check --input %s/bx.npy --output %s/byy.npy --save %s'",
             CLI, D, D, p);
    int rc = run("%s", cmd);
    expect(rc != 0 && rc != 1 && has("cannot write"), cmd,
           "--save past the file-size limit: exit %d, expected 2", rc);
    expect(sml_dir_entries(p) == 0, cmd, "--save past the file-size limit left %d files in %s",
           sml_dir_entries(p), p);
    /* The kernel form runs cpu_naive in a worker, whose shared board (4 KiB of memfd) the
     * file-size limit holds too: 16 blocks leave it room, not the 16.5 KB output. */
    snprintf(cmd, sizeof cmd,
             "sh -c 'ulimit -f 16; exec %s check --input %s/bx.npy --kernel cpu_naive --save %s'",
             CLI, D, p);
    rc = run("%s", cmd);
    expect(rc != 0 && rc != 1 && has("cannot write"), cmd,
           "kernel form: --save past the limit: exit %d, expected 2", rc);
    expect(sml_dir_entries(p) == 0, cmd, "kernel form: --save past the limit left %d files in %s",
           sml_dir_entries(p), p);
    if (exists("/dev/full")) {
        int rc2 = cli(cmd, sizeof cmd,
                      "check --input %s/bx.npy --output %s/byy.npy --json /dev/full", D, D);
        expect(rc2 == 2 && has("cannot write"), cmd, "--json /dev/full: exit %d, expected 2", rc2);
        rc2 =
            cli(cmd, sizeof cmd, "check --input %s/bx.npy --kernel cpu_naive --json /dev/full", D);
        expect(rc2 == 2 && has("cannot write"), cmd,
               "kernel form: --json /dev/full: exit %d, expected 2", rc2);
    }
    /* An existing report is kept whole when the new one cannot be written. */
    snprintf(p, sizeof p, "%s/keep.json", D);
    FILE *f = fopen(p, "w");
    fputs("{\"old\": true}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "sh -c 'ulimit -f 0; exec %s check --input %s/bx.npy --output %s/byy.npy --json %s'",
             CLI, D, D, p);
    rc = run("%s", cmd);
    expect(rc == 2, cmd, "--json past the file-size limit: exit %d, expected 2", rc);
    run("cat %s", p);
    expect(has("{\"old\": true}"), cmd, "--json past the limit must leave the old report");
    snprintf(cmd, sizeof cmd,
             "sh -c 'ulimit -f 0; exec %s check --input %s/bx.npy --kernel cpu_naive --json %s'",
             CLI, D, p);
    rc = run("%s", cmd);
    expect(rc == 2, cmd, "kernel form: --json past the file-size limit: exit %d, expected 2", rc);
    run("cat %s", p);
    expect(has("{\"old\": true}"), cmd,
           "kernel form: --json past the limit must leave the old report");
    free(x);
    free(y);
}

/* 7: nothing to check is not a pass: an empty tensor (both forms), a named kernel that cannot
 * run here; `--kernel all` says what it skipped and passes. */
static void nothing_checked(void) {
    char cmd[4096];
    int64_t sh[3] = {2, 0, 8};
    float dummy = 0;
    save("empty.npy", SML_F32, 3, sh, &dummy);
    save("empty_y.npy", SML_F32, 3, sh, &dummy);
    int rc = cli(cmd, sizeof cmd,
                 "check --input %s/empty.npy --output %s/empty_y.npy --json %s/e1.json", D, D, D);
    expect(rc == 3, cmd, "--output on an empty tensor: exit %d, expected 3", rc);
    json_of("e1.json");
    expect(has("\"verdict\": \"NOTHING_CHECKED\"") && has("\"checked\": 0"), cmd,
           "the JSON of an empty tensor says nothing was checked");
    rc = cli(cmd, sizeof cmd, "check --input %s/empty.npy --kernel all --json %s/e2.json", D, D);
    expect(rc == 3, cmd, "kernels on an empty tensor: exit %d, expected 3", rc);
    json_of("e2.json");
    expect(has("\"verdict\": \"NOTHING_CHECKED\""), cmd,
           "the kernel form's JSON of an empty tensor");

    const sml_kernel *k = sml_kernel_find("auto");
    int runs_here = k && k->launch && sml_gpu_available();
    rc = cli(cmd, sizeof cmd, "check --input %s/x.npy --kernel auto --json %s/auto.json", D, D);
    if (runs_here) {
        expect(rc == 0, cmd, "--kernel auto on a GPU: exit %d, expected 0", rc);
    } else {
        expect(rc == 3 && has("could not run"), cmd,
               "--kernel auto with no GPU: exit %d, expected 3 and why", rc);
        json_of("auto.json");
        expect(has("\"verdict\": \"NOTHING_CHECKED\"") && has("\"verdict\": \"SKIP\""), cmd,
               "the JSON says auto was skipped and nothing was checked");
    }
    rc = cli(cmd, sizeof cmd, "check --input %s/x.npy --kernel all", D);
    expect(rc == 0, cmd, "--kernel all: exit %d, expected 0", rc);
    if (!runs_here) expect(has("skipped"), cmd, "--kernel all with no GPU says what it skipped");
    /* The kernel form's table: the worst element by its full index tuple. */
    const char *row = strstr(OUT, "\ncpu_naive ");
    int a, b, c, three = 0;
    for (const char *q = row ? row + 1 : NULL; q && *q && *q != '\n' && !three; q++)
        three = *q == '(' && sscanf(q, "(%d, %d, %d):", &a, &b, &c) == 3;
    expect(three, cmd,
           "the kernel table names cpu_naive's worst element by its 3-D index (i, j, k)");
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--cli")) CLI = argv[i + 1];
    if (access(CLI, X_OK) != 0) {
        printf("FAIL test_cli_judge: no softmax-lab binary at %s (pass --cli PATH)\n", CLI);
        return 1;
    }
    snprintf(D, sizeof D, "/tmp/sml_test_cli_judge_%d", (int)getpid());
    if (run("rm -rf %s && mkdir -p %s", D, D) != 0) return 1;
    fp32_forward();
    backward();
    bf16();
    failed_writes();
    nothing_checked();
    if (!T.failed)
        run("rm -rf %s", D);
    else
        printf("(files kept in %s)\n", D);
    return sml_tally_finish(&T);
}
