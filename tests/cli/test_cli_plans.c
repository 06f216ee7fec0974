/* test_cli_plans.c: --plans and SML_PLANS as a user meets them (cpu label): a bad table is
 * refused with exit 2, the field named and nothing run; a good one is taken; `tune` without
 * a GPU exits 3 and says so, and bad tune flags exit 2 before anything runs.
 * Planted check: with sml_cli_take_plans returning 0 at once, cases 1-3 fail (the suite runs
 * and exits 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "softmax_lab.h"
#include "test_support.h"

static sml_tally T = {"test_cli_plans", 0, 0, 0};
static const char *CLI = "./build/softmax-lab";
static char TMP[256], LOG[1 << 15], REPRO[512];

static void expect(int n, int ok, const char *what) {
    if (ok)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, REPRO, "case %d: %s\n--- output:\n%s", n, what, LOG);
}

static int run(const char *const *a) { return sml_run_cli(CLI, TMP, a, LOG, sizeof LOG); }

static int write_file(const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", TMP, name);
    FILE *f = fopen(p, "w");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--cli")) CLI = argv[++i];
    snprintf(REPRO, sizeof REPRO, "%s --cli %s", argv[0], CLI);
    if (sml_cli_setup(T.test, CLI, TMP, sizeof TMP)) return 1;
    const int gpu = sml_gpu_available();
    int ok =
        write_file("bad.plans", "softmax-lab-plans 1\ngpu.name X\ngpu.sms 132\ngpu.dram 12.8\n"
                                "softmax fp32 1-128 * block threads=48\n") &&
        write_file("good.plans", "softmax-lab-plans 1\ngpu.name X\ngpu.sms 132\ngpu.dram 12.8\n"
                                 "softmax fp32 1-128 * warp K=1\n");
    if (!ok) {
        printf("FAIL %s: cannot write the tables into %s\n", T.test, TMP);
        return 1;
    }
    unsetenv("SML_PLANS");
    const char *suite[] = {"check",   "--kernel", "cpu_naive", "--op", "softmax",
                           "--dtype", "fp32",     "--cases",   "2",    "--regressions",
                           "none",    NULL,       NULL,        NULL};
    /* 1. --plans with a bad table: 2, the line and the field named, no suite run. */
    suite[11] = "--plans";
    suite[12] = "bad.plans";
    int rc = run(suite);
    expect(1,
           rc == 2 && strstr(LOG, "--plans: bad.plans:5: threads: 48 not a multiple of 32") &&
               !strstr(LOG, "passed"),
           "check --plans bad.plans exits 2 naming line 5's threads, and runs nothing");
    /* 2. The same table from SML_PLANS. */
    suite[11] = NULL;
    setenv("SML_PLANS", "bad.plans", 1);
    rc = run(suite);
    unsetenv("SML_PLANS");
    expect(2, rc == 2 && strstr(LOG, "SML_PLANS: bad.plans:5: threads"),
           "SML_PLANS=bad.plans exits 2 naming it");
    /* 3. --plans without a value, and a file that is not there. */
    const char *noval[] = {"bench", "--plans", NULL};
    rc = run(noval);
    const char *missing[] = {"replay", "--plans", "none.plans", "x.json", NULL};
    int rc2 = run(missing);
    expect(3, rc == 2 && rc2 == 2 && strstr(LOG, "none.plans: cannot open"),
           "--plans with no value or no file exits 2");
    /* 4. A good table (for another GPU than none at all) and `off` are taken on a CPU host. */
    if (!gpu) {
        suite[11] = "--plans";
        suite[12] = "good.plans";
        rc = run(suite);
        suite[12] = "off";
        rc2 = run(suite);
        expect(4, rc == 0 && rc2 == 0, "check --plans good.plans and --plans off run the suite");
    }
    /* 5. tune: no GPU exits 3 saying so; a bad flag exits 2 first, writing nothing. */
    const char *tune[] = {"tune", "--sweep", "short", "--out", "t.plans", NULL};
    const char *badtune[] = {"tune", "--op", "softmaxx", "--out", "t2.plans", NULL};
    char t1[512], t2[512];
    snprintf(t1, sizeof t1, "%s/t.plans", TMP);
    snprintf(t2, sizeof t2, "%s/t2.plans", TMP);
    if (!gpu) {
        rc = run(tune);
        expect(5, rc == 3 && strstr(LOG, "no GPU") && access(t1, F_OK) != 0,
               "tune without a GPU exits 3");
    }
    rc2 = run(badtune);
    expect(6, rc2 == 2 && access(t2, F_OK) != 0, "tune --op softmaxx exits 2 and writes nothing");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", TMP);
    if (system(cmd) != 0) printf("note: could not remove %s\n", TMP);
    return sml_tally_finish(&T);
}
