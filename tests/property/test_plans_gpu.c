/* test_plans_gpu: a plan table changes what `auto` runs, never what it computes. On the GPU
 * at hand (77 without one):
 *   1. a deliberately bad table keyed by this GPU (every band a plan that is slow, such as 32
 *      threads for long rows, or one the kernel refuses, such as warp K=8 R=2), with row
 *      bands: sml_auto_explain must report the table's plan (the mechanism is live), and the
 *      property suite on `auto` under it (softmax-lab check --kernel auto --plans T) passes;
 *   2. every shipped table (the .plans files of data/plans), re-keyed to this GPU so that it applies
 *      here, the same way. With no shipped table, 1 alone runs the mechanism.
 * Flags: --cases N (each suite run's cases per op and dtype, default 3000), --only bad|shipped.
 * Planted check: with the table lookup in kernels/auto_choice.c returning NULL, step 1 fails
 * on the explain check; with sml_plan_run's warp case passing K * 2 (a plan the kernel then
 * runs on rows it does not hold), the suite fails. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "core/plan_cache.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif
#ifndef SML_SOURCE_DIR
#define SML_SOURCE_DIR "."
#endif

static sml_tally T = {"test_plans_gpu", 0, 0, 0};
static char TMP[256], LOG[1 << 16], REPRO[512];
static const char *CASES = "3000";

/* The bad table's bands for one op and dtype. */
static void bad_entries(FILE *f, const char *op, const char *dt) {
    fprintf(f, "%s %s 1-64 * block threads=1024 K=1\n", op, dt);
    fprintf(f, "%s %s 65-1024 1-1000 warp K=8 R=2 blocks=1\n", op, dt);
    fprintf(f, "%s %s 65-1024 1001-max online threads=32 blocks=1\n", op, dt);
    fprintf(f, "%s %s 1025-32768 * split C=16 threads=32\n", op, dt);
    fprintf(f, "%s %s 32769-max * coop threads=32 stages=2 blocks=1 slices=2\n", op, dt);
}

static int write_bad(const char *path, const sml_plan_key *k) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "softmax-lab-plans 1\ngpu.name %s\ngpu.sms %d\ngpu.dram %.1f\n", k->name, k->sms,
            k->dram);
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
            bad_entries(f, sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt));
    return fclose(f) == 0;
}

/* A shipped table with its GPU key replaced by this GPU's, at out. */
static int rekey(const char *in, const char *out, const sml_plan_key *k, char *err, size_t n) {
    sml_plan_table t;
    if (sml_plan_table_load(in, &t, err, n) != SML_OK) return 0;
    t.key = *k;
    FILE *f = fopen(out, "w");
    int ok = f && sml_plan_table_write(&t, "re-keyed by test_plans_gpu", f) == 0;
    if (f && fclose(f) != 0) ok = 0;
    sml_plan_table_free(&t);
    if (!ok) snprintf(err, n, "cannot write %s", out);
    return ok;
}

/* The mechanism is live for table `path`: auto's explanation of a shape the table holds
 * names the table. Then the suite on auto under it. */
static void run_under(const char *path, const char *what, int64_t rows, int64_t cols, sml_op op,
                      sml_dtype dt) {
    char expl[512] = "";
    setenv("SML_PLANS", path, 1);
    sml_handle *h = NULL;
    sml_status s = sml_handle_create(&h);
    if (s == SML_OK) s = sml_auto_explain(h, op, dt, rows, cols, expl, sizeof expl);
    sml_handle_destroy(h);
    unsetenv("SML_PLANS");
    snprintf(REPRO, sizeof REPRO, "%s check --kernel auto --plans %s --cases %s", SML_CLI_PATH,
             path, CASES);
    sml_expect(&T, s == SML_OK && strstr(expl, path) != NULL, REPRO, 600, NULL, 0,
               "%s: auto on %s %s %lldx%lld does not read the table: '%s' (%s)", what,
               sml_op_name(op), sml_dtype_name(dt), (long long)rows, (long long)cols, expl,
               sml_strerror(s));
    printf("%s: %s %s %lldx%lld: %s\n", what, sml_op_name(op), sml_dtype_name(dt), (long long)rows,
           (long long)cols, expl);
    const char *args[] = {"check", "--kernel", "auto", "--plans", path, "--cases", CASES, NULL};
    const int rc = sml_run_cli(SML_CLI_PATH, ".", args, LOG, sizeof LOG);
    const char *tail = strlen(LOG) > 6000 ? LOG + strlen(LOG) - 6000 : LOG;
    sml_expect(&T, rc == 0, REPRO, 600, tail, 6000,
               "%s: the property suite on auto under %s exits %d", what, path, rc);
    printf("%s: the property suite on auto exits %d\n", what, rc);
    fflush(stdout);
}

static void shipped(const sml_plan_key *k) {
    DIR *d = opendir(SML_SOURCE_DIR "/data/plans");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".plans")) continue;
        char in[1024], out[600], err[1024];
        snprintf(in, sizeof in, "%s/data/plans/%s", SML_SOURCE_DIR, e->d_name);
        snprintf(out, sizeof out, "%s/%s", TMP, e->d_name);
        n++;
        if (!rekey(in, out, k, err, sizeof err)) {
            sml_tally_fail(&T, REPRO, "shipped table %s: %s", in, err);
            continue;
        }
        sml_plan_table t;
        if (sml_plan_table_load(out, &t, err, sizeof err) != SML_OK || !t.n) {
            sml_tally_fail(&T, REPRO,
                           "shipped table %s: re-keyed, it does not load or is empty: %s", in, err);
            continue;
        }
        const sml_plan_entry first = t.e[0];
        sml_plan_table_free(&t);
        /* A shape the first entry holds, on rows that take 16-byte vectors. */
        const int64_t cols = (first.cols_lo + 7) / 8 * 8 <= first.cols_hi
                                 ? (first.cols_lo + 7) / 8 * 8
                                 : first.cols_lo;
        run_under(out, e->d_name, first.rows_lo, cols, first.op, first.dtype);
    }
    if (d) closedir(d);
    printf("test_plans_gpu: %d shipped table%s%s\n", n, n == 1 ? "" : "s",
           n ? "" : " (none yet: the generated table alone runs the mechanism)");
}

int main(int argc, char **argv) {
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cases"))
            CASES = argv[i + 1];
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else {
            fprintf(stderr, "usage: %s [--cases N] [--only bad|shipped]\n", argv[0]);
            return 2;
        }
    }
    const int rc = sml_test_require_gpu(T.test);
    if (rc) return rc;
    snprintf(REPRO, sizeof REPRO, "%s --cases %s", argv[0], CASES);
    if (sml_cli_setup(T.test, SML_CLI_PATH, TMP, sizeof TMP)) return 1;
    sml_plan_key k;
    if (sml_gpu_plan_key(sml_gpu_current(), &k) != SML_OK) {
        printf("FAIL %s: cannot read this GPU's key\n", T.test);
        return 1;
    }
    printf("test_plans_gpu: %s, %d SMs, %.1f DRAM bytes per SM clock\n", k.name, k.sms, k.dram);
    if (!only || !strcmp(only, "bad")) {
        char bad[512];
        snprintf(bad, sizeof bad, "%s/bad.plans", TMP);
        if (!write_bad(bad, &k))
            sml_tally_fail(&T, REPRO, "cannot write %s", bad);
        else {
            run_under(bad, "bad table", 5000, 512, SML_SOFTMAX, SML_F32);
            run_under(bad, "bad table", 4, 512, SML_SOFTMAX_BWD, SML_BF16);
        }
    }
    if (!only || !strcmp(only, "shipped")) shipped(&k);
    return sml_tally_finish(&T);
}
