/* test_cli_check: `softmax-lab check` and `softmax-lab replay` as a user runs them. Writes
 * .npy files of overflow-prone logits (values past exp's fp32 limit of 88.72, -inf masks)
 * in every dtype and rank, runs the CPU backends on them, and checks the exit codes, the
 * saved outputs (dtype, shape, values against the reference) and the JSON; then every bad
 * input exits 2 with nothing written; then the suite form and replay of a saved reproducer.
 * (Exit 1 needs a registered kernel that breaks the contract; the engine's path to it is
 * proved with mutants in test_property_mutants_cpu.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prop/case.h"
#include "io/npy.h"
#include "prop/repro.h"
#include "reference/check.h"
#include "core/dtype.h"
#include "cli_run.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif

static sml_tally T = {"test_cli_check", 0, 0, 0};
static char D[256];
static char OUT[65536];

/* Run a shell command; its stdout and stderr land in OUT; returns the exit code. */
#define run(...)                  sml_shell(NULL, 4096, OUT, sizeof OUT, 0, __VA_ARGS__)
/* A check; a failure prints the message, the output and cmd_hint to reproduce it. */
#define expect(ok, cmd_hint, ...) sml_expect(&T, (ok), (cmd_hint), 1024, OUT, 3000, __VA_ARGS__)

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* Overflow-prone logits: rows around 90..120 (exp overflows fp32 past 88.72), a row with
 * -inf masks, a row of equal values, one dominant. */
static void make_logits(sml_dtype dt, int64_t rows, int64_t cols, void *data) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) {
            double v;
            switch (r % 4) {
            case 0: v = 90.0 + 30.0 * sin((double)(j * 7 + r)); break;
            case 1: v = j % 3 ? -INFINITY : 100.0 + (double)j; break;
            case 2: v = 95.5; break;
            default: v = j == cols / 2 ? 1e4 : -(double)j; break;
            }
            sml_store(dt, data, r * cols + j, v);
        }
}

/* The saved output of one kernel: dtype, shape, and within the contract of the reference. */
static void check_output(const char *path, sml_op op, sml_dtype dt, int ndim, const int64_t *shape,
                         const void *x, const void *dy, const char *cmd) {
    sml_npy o;
    char err[512];
    if (sml_npy_read(path, -1, &o, err, sizeof err) != SML_OK) {
        expect(0, cmd, "%s not readable: %s", path, err);
        return;
    }
    int same = o.dtype == dt && o.ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = o.shape[i] == shape[i];
    expect(same, cmd, "%s: dtype %s ndim %d, expected the input's %s and shape", path,
           sml_dtype_name(o.dtype), o.ndim, sml_dtype_name(dt));
    if (same) {
        sml_check_report rep;
        sml_status s = sml_check(op, dt, o.rows, o.cols, o.cols, x, dy, o.data, &rep);
        expect(s == SML_OK && rep.pass, cmd, "%s: saved output fails the contract: %s", path,
               rep.message);
        int64_t nonfinite = 0;
        for (int64_t i = 0; i < o.rows * o.cols; i++)
            nonfinite += !isfinite(sml_load(dt, o.data, i));
        if (op == SML_SOFTMAX)
            expect(nonfinite == 0, cmd,
                   "%s: %lld non-finite softmax outputs on overflow-prone logits", path,
                   (long long)nonfinite);
    }
    sml_npy_free(&o);
}

int main(void) {
    snprintf(D, sizeof D, "/tmp/sml_test_cli_%d", (int)getpid());
    if (run("rm -rf %s && mkdir -p %s", D, D) != 0) return 1;
    const char *cli = SML_CLI_PATH;
    char p[512], cmd[2048], err[512];

    /* 1. fp32, 3-D: softmax over the last axis, outputs saved in the input's dtype and shape. */
    int64_t sh3[3] = {4, 2, 37};
    int64_t rows = 8, cols = 37;
    float *x32 = malloc((size_t)(rows * cols) * sizeof *x32);
    make_logits(SML_F32, rows, cols, x32);
    snprintf(p, sizeof p, "%s/logits32.npy", D);
    sml_npy_write(p, SML_F32, 3, sh3, x32, err, sizeof err);
    snprintf(cmd, sizeof cmd, "%s check --input %s --kernel all --save %s/out32 --json %s/r32.json",
             cli, p, D, D);
    int rc = run("%s", cmd);
    expect(rc == 0, cmd, "check --input on fp32 overflow-prone logits: exit %d, expected 0", rc);
    expect(strstr(OUT, "cpu_naive") && strstr(OUT, "cpu_online") && strstr(OUT, "PASS"), cmd,
           "the table names both CPU backends and their verdicts");
    expect(strstr(OUT, "88.72") != NULL, cmd,
           "the input summary warns about logits past exp's fp32 limit");
    char o[600];
    for (int k = 0; k < 2; k++) {
        snprintf(o, sizeof o, "%s/out32/%s.softmax.npy", D, k ? "cpu_online" : "cpu_naive");
        check_output(o, SML_SOFTMAX, SML_F32, 3, sh3, x32, NULL, cmd);
    }
    snprintf(o, sizeof o, "%s/r32.json", D);
    rc = run("cat %s", o);
    expect(strstr(OUT, "\"verdict\": \"PASS\"") && strstr(OUT, "\"kernel\": \"cpu_online\""), cmd,
           "the JSON report holds the verdicts");

    /* 2. fp16, every op with an upstream gradient. */
    uint16_t *x16 = malloc((size_t)(rows * cols) * 2), *dy16 = malloc((size_t)(rows * cols) * 2);
    make_logits(SML_F16, rows, cols, x16);
    for (int64_t i = 0; i < rows * cols; i++) sml_store(SML_F16, dy16, i, sin((double)i) * 3.0);
    char pd[512];
    snprintf(p, sizeof p, "%s/logits16.npy", D);
    snprintf(pd, sizeof pd, "%s/grad16.npy", D);
    sml_npy_write_2d(p, SML_F16, rows, cols, x16, err, sizeof err);
    sml_npy_write_2d(pd, SML_F16, rows, cols, dy16, err, sizeof err);
    snprintf(cmd, sizeof cmd,
             "%s check --input %s --dy %s --op all --kernel cpu_naive --save %s/out16", cli, p, pd,
             D);
    rc = run("%s", cmd);
    expect(rc == 0, cmd, "check --input fp16 --op all --dy: exit %d, expected 0", rc);
    int64_t sh2[2] = {rows, cols};
    for (int op = 0; op < SML_OP_COUNT; op++) {
        snprintf(o, sizeof o, "%s/out16/cpu_naive.%s.npy", D, sml_op_name((sml_op)op));
        if (!sml_op_is_backward((sml_op)op)) {
            check_output(o, (sml_op)op, SML_F16, 2, sh2, x16, NULL, cmd);
            continue;
        }
        /* backward: y is the reference forward of the logits, rounded */
        sml_prop_case c;
        memset(&c, 0, sizeof c);
        c.op = (sml_op)op;
        c.dtype = SML_F16;
        c.rows = rows;
        c.cols = cols;
        c.ld = cols;
        sml_prop_case_alloc(&c);
        memcpy(c.logits, x16, (size_t)(rows * cols) * 2);
        memcpy(c.dy, dy16, (size_t)(rows * cols) * 2);
        sml_prop_case_derive_y(&c);
        check_output(o, (sml_op)op, SML_F16, 2, sh2, c.x, c.dy, cmd);
        sml_prop_case_free(&c);
    }

    /* 3. bf16 as raw bits with the sidecar; and with --dtype bf16 and no sidecar. */
    uint16_t *xb = malloc((size_t)(rows * cols) * 2);
    make_logits(SML_BF16, rows, cols, xb);
    snprintf(p, sizeof p, "%s/logitsbf.npy", D);
    sml_npy_write_2d(p, SML_BF16, rows, cols, xb, err, sizeof err);
    snprintf(cmd, sizeof cmd,
             "%s check --input %s --kernel cpu_online --op log_softmax --save %s/outbf", cli, p, D);
    rc = run("%s", cmd);
    expect(rc == 0, cmd, "check --input bf16 (sidecar): exit %d, expected 0", rc);
    snprintf(o, sizeof o, "%s/outbf/cpu_online.log_softmax.npy", D);
    check_output(o, SML_LOG_SOFTMAX, SML_BF16, 2, sh2, xb, NULL, cmd);
    snprintf(o, sizeof o, "%s/outbf/cpu_online.log_softmax.npy.dtype", D);
    expect(exists(o), cmd, "a bf16 output gets its sidecar");
    run("rm -f %s.dtype", p);
    snprintf(cmd, sizeof cmd, "%s check --input %s --kernel cpu_online", cli, p);
    rc = run("%s", cmd);
    expect(rc == 2 && strstr(OUT, "--dtype bf16"), cmd,
           "raw bits without a sidecar: exit %d, expected 2 and a hint", rc);
    snprintf(cmd, sizeof cmd, "%s check --input %s --kernel cpu_online --dtype bf16", cli, p);
    rc = run("%s", cmd);
    expect(rc == 0, cmd, "raw bits with --dtype bf16: exit %d, expected 0", rc);

    /* 4. bad input: exit 2, nothing written. */
    const char *f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }         \n";
    snprintf(p, sizeof p, "%s/f8.npy", D);
    FILE *f = fopen(p, "wb");
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)strlen(f8), 0};
    fwrite(pre, 1, 10, f);
    fputs(f8, f);
    double z[4] = {1, 2, 3, 4};
    fwrite(z, sizeof z[0], 4, f);
    fclose(f);
    struct {
        const char *args, *needle;
    } bad[] = {
        {"check --input %s/f8.npy --save %s/nope1", "float32"},
        {"check --input %s/missing.npy --save %s/nope2", "cannot open"},
        {"check --input %s/logits32.npy --kernel nosuch --save %s/nope3", "no kernel"},
        {"check --input %s/logits32.npy --op softmax_bwd --save %s/nope4", "--dy"},
        {"check --input %s/logits16.npy --dy %s/logits32.npy --op softmax_bwd", "'descr'"},
        {"check --input %s/logits32.npy --dy %s/logits32.npy", "backward ops only"},
        {"check --input %s/logits32.npy --op nosuch --save %s/nope5", "unknown op"},
        {"check --kernel nosuch%s%s", "no kernel"},
        {"check --op nosuch%s%s", "unknown op"},
        {"check --bogus%s%s", "unknown option"},
        {"replay %s/missing.json%s", "no such file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[1024];
        if (strstr(bad[i].args, "%s/") && strstr(strstr(bad[i].args, "%s/") + 3, "%s/"))
            snprintf(args, sizeof args, bad[i].args, D, D);
        else if (strstr(bad[i].args, "%s/"))
            snprintf(args, sizeof args, bad[i].args, D, "");
        else
            snprintf(args, sizeof args, bad[i].args, "", "");
        snprintf(cmd, sizeof cmd, "%s %s", cli, args);
        rc = run("%s", cmd);
        expect(rc == 2, cmd, "bad input: exit %d, expected 2", rc);
        expect(strstr(OUT, bad[i].needle) != NULL, cmd, "bad input: the message should say '%s'",
               bad[i].needle);
    }
    for (int i = 1; i <= 5; i++) {
        snprintf(o, sizeof o, "%s/nope%d", D, i);
        expect(!exists(o), o, "bad input wrote its --save folder %s", o);
    }

    /* 5. the suite form. */
    snprintf(cmd, sizeof cmd,
             "%s check --kernel cpu_naive --op softmax --dtype fp16 --cases 40 --regressions none "
             "--json %s/suite.json",
             cli, D);
    rc = run("%s", cmd);
    expect(rc == 0 && strstr(OUT, "cpu_naive") && strstr(OUT, "every property held"), cmd,
           "check suite on cpu_naive softmax fp16: exit %d, expected 0 and a summary", rc);
    /* The host's time by stage: seven shares that add up to the whole (rounding aside). */
    const char *ht = strstr(OUT, "host time by stage, ");
    double secs = 0, pc[7] = {0};
    int got = ht ? sscanf(ht,
                          "host time by stage, %lf thread-seconds over the jobs: generation %lf%%, "
                          "reference %lf%%, kernel runs %lf%%, copies %lf%%, comparison %lf%%, "
                          "shrink %lf%%, other %lf%%",
                          &secs, &pc[0], &pc[1], &pc[2], &pc[3], &pc[4], &pc[5], &pc[6])
                 : 0;
    double sum = 0;
    for (int i = 0; i < 7; i++) sum += pc[i];
    expect(got == 8 && secs > 0 && sum >= 96 && sum <= 104 && pc[2] > 0 && pc[4] > 0, cmd,
           "the summary's host-time line: %d fields, %.1f s, shares adding up to %.0f%% (want the "
           "line, runs and comparisons above 0%%, about 100%%)",
           got, secs, sum);
    /* The host's CPU: the whole, per case, and its two sides adding up to it (each side is
     * rounded to 0.01 s, the whole to 0.1 s); in-process, the workers' side is 0. */
    for (int inproc = 0; inproc <= 1; inproc++) {
        if (inproc) rc = run("%s --in-process", cmd);
        const char *hc = strstr(OUT, "host CPU ");
        double all = 0, per = 0, own = -1, wk = -1;
        got = hc ? sscanf(hc,
                          "host CPU %lf s (user + system, workers included): %lf ms per case; "
                          "check's own process %lf s, its workers %lf s",
                          &all, &per, &own, &wk)
                 : 0;
        expect(rc == 0 && got == 4 && per > 0 && own >= 0 && wk >= 0 && own + wk > 0 &&
                   fabs(own + wk - all) <= 0.06 && (!inproc || wk == 0),
               cmd,
               "the summary's host-CPU line%s: %d fields, %.1f s = %.2f s own + %.2f s workers "
               "(want 4 fields, the sides adding up%s)",
               inproc ? " with --in-process" : "", got, all, own, wk, inproc ? ", no workers" : "");
    }
    rc = run("cat %s/suite.json", D);
    expect(strstr(OUT, "\"passed\": true") && strstr(OUT, "\"cases\": 40"), cmd,
           "suite JSON: passed, 40 cases");
    /* One job of 1,000 cases runs as two parts: two threads take them, not one per job. */
    snprintf(cmd, sizeof cmd,
             "%s check --kernel cpu_naive --op softmax --dtype fp16 --cases 1000 --threads 2 "
             "--regressions none --props agreement",
             cli);
    rc = run("%s", cmd);
    expect(rc == 0 && strstr(OUT, ", 2 host threads\n"), cmd,
           "one run of 1,000 cases (two parts) with --threads 2: exit %d, want 0 and '2 host "
           "threads' in the first line",
           rc);

    /* Case counts: --cases for every kernel wherever it stands (--long after it too), and
     * SML_PROP_CASES as --cases; the profiles' per-device counts otherwise, the nightly's by
     * --long or by SML_PROP_LONG=1 alike (--seconds 0.01 ends them after a few cases). */
    struct {
        const char *env, *args, *header, *ran;
    } counts[] = {
        {"", "--cases 9 --long", "9 cases per kernel, op and dtype (--cases)", "9 of 9 planned"},
        {"SML_PROP_CASES=7", "", "7 cases per kernel, op and dtype (--cases)", "7 of 7 planned"},
        {"", "--seconds 0.01",
         "the default profile: 300 cases per op and dtype for a CPU kernel, 10000 for a GPU kernel",
         "of 300 planned"},
        {"", "--long --seconds 0.01",
         "the long profile: 10000 cases per op and dtype for a CPU kernel, 100000 for a GPU kernel",
         "of 10000 planned"},
        {"SML_PROP_LONG=1", "--seconds 0.01",
         "the long profile: 10000 cases per op and dtype for a CPU kernel, 100000 for a GPU kernel",
         "of 10000 planned"},
        /* The long profile draws a fresh seed unless one is given: before --long or after it,
         * on the command line or in SML_PROP_SEED, the seed given is the seed run. */
        {"", "--seed 11 --long --seconds 0.01", "check: seed 0x000000000000000b, the long profile",
         "of 10000 planned"},
        {"", "--long --seed 11 --seconds 0.01", "check: seed 0x000000000000000b, the long profile",
         "of 10000 planned"},
        {"SML_PROP_SEED=11 SML_PROP_LONG=1", "--seconds 0.01",
         "check: seed 0x000000000000000b, the long profile", "of 10000 planned"},
        {"SML_PROP_SEED=11", "--long --seconds 0.01",
         "check: seed 0x000000000000000b, the long profile", "of 10000 planned"},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        snprintf(cmd, sizeof cmd,
                 "env %s %s check --kernel cpu_naive --op softmax --dtype fp32 --regressions none "
                 "%s",
                 counts[i].env, cli, counts[i].args);
        rc = run("%s", cmd);
        expect((rc == 0 || rc == 4) && strstr(OUT, counts[i].header) && strstr(OUT, counts[i].ran),
               cmd, "case counts: exit %d, want 0 or 4 with '%s' and '%s'", rc, counts[i].header,
               counts[i].ran);
    }

    /* 6. replay a saved reproducer: passes now (exit 0); unknown kernel (exit 2) unless --kernel. */
    sml_prop_case c;
    memset(&c, 0, sizeof c);
    c.op = SML_SOFTMAX;
    c.dtype = SML_F32;
    c.rows = 2;
    c.cols = 5;
    c.ld = 7;
    c.offset = 3;
    c.seed = 0x1234;
    sml_prop_case_alloc(&c);
    make_logits(SML_F32, 2, 5, c.x);
    sml_prop_repro m;
    memset(&m, 0, sizeof m);
    snprintf(m.kernel, sizeof m.kernel, "cpu_naive");
    m.prop = SML_PROP_AGREEMENT;
    snprintf(m.verdict, sizeof m.verdict, "fail");
    m.case_index = -1;
    char rdir[400], jpath[1024];
    snprintf(rdir, sizeof rdir, "%s/repro", D);
    expect(sml_prop_repro_save(rdir, &c, &m, "softmax-lab replay", jpath, sizeof jpath, err,
                               sizeof err) == SML_OK,
           NULL, "saving a reproducer: %s", err);
    snprintf(cmd, sizeof cmd, "%s replay %s", cli, jpath);
    rc = run("%s", cmd);
    expect(rc == 0 && strstr(OUT, "passes now"), cmd,
           "replay of a passing reproducer: exit %d, expected 0", rc);
    snprintf(cmd, sizeof cmd, "%s replay %s", cli, rdir);
    rc = run("%s", cmd);
    expect(rc == 0, cmd, "replay of a folder: exit %d, expected 0", rc);
    snprintf(m.kernel, sizeof m.kernel, "mut_not_here");
    m.prop = SML_PROP_CANARIES;
    snprintf(rdir, sizeof rdir, "%s/repro2", D);
    sml_prop_repro_save(rdir, &c, &m, "softmax-lab replay", jpath, sizeof jpath, err, sizeof err);
    /* The engine's --regressions takes folders separated by ':' (the reproducers of real bugs,
     * the mutants' corpus): each listed once, a missing folder adding nothing. */
    char dirs[1200];
    snprintf(dirs, sizeof dirs, "%s/repro:%s/repro2:%s/missing", D, D, D);
    char **listed = NULL;
    size_t nlisted = sml_prop_repro_list(dirs, &listed);
    expect(nlisted == 2, NULL, "sml_prop_repro_list(\"%s\") found %zu reproducers, expected 2",
           dirs, nlisted);
    sml_prop_repro_list_free(listed, nlisted);
    snprintf(cmd, sizeof cmd, "%s replay %s", cli, jpath);
    rc = run("%s", cmd);
    expect(rc == 2 && strstr(OUT, "not in the registry"), cmd,
           "replay naming an unknown kernel: exit %d, expected 2", rc);
    snprintf(cmd, sizeof cmd, "%s replay %s --kernel cpu_online", cli, jpath);
    rc = run("%s", cmd);
    expect(rc == 0 && strstr(OUT, "cpu_online"), cmd,
           "replay on another kernel with --kernel: exit %d, expected 0", rc);
    snprintf(o, sizeof o, "%s/corrupt.json", D);
    f = fopen(o, "w");
    fputs("{\"format\": \"softmax-lab reproducer 1\", \"kernel\": ", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s replay %s", cli, o);
    rc = run("%s", cmd);
    expect(rc == 2, cmd, "replay of a corrupt reproducer: exit %d, expected 2", rc);
    sml_prop_case_free(&c);

    free(x32);
    free(x16);
    free(dy16);
    free(xb);
    if (!T.failed)
        run("rm -rf %s", D);
    else
        printf("(files kept in %s)\n", D);
    return sml_tally_finish(&T);
}
