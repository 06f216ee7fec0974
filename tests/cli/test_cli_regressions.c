/* test_cli_regressions.c: `check` replays the saved regressions wherever it runs, and says how
 * many cases it replayed and from where: the corpus installed with softmax-lab (here the build
 * tree's copy, share/softmax_lab/) from a directory that has none; a project's own
 * ./tests/regressions beside it; SML_REGRESSIONS or --regressions instead of both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "case_filter.h"
#include "cli_exec.h"
#include "test_support.h"

static sml_tally T = {"test_cli_regressions", 0, 0, 0};
static sml_case_filter F;
static char TMP[256], LOG[1 << 16];

/* The count in "check: N saved regression case(s) replayed, from DIRS (WHY)", -1 without. */
static long replayed(const char *log) {
    const char *p = strstr(log, "check: ");
    for (; p; p = strstr(p + 1, "check: ")) {
        long n;
        char word[16];
        if (sscanf(p, "check: %ld saved regression %15s replayed", &n, word) == 2) return n;
    }
    return -1;
}

/* check on cpu_naive, 2 cases, in dir (env: a VAR=VALUE prefix or ""), more arguments after. */
static int check_in(const char *dir, const char *env, const char *more) {
    char cmd[2048];
    return sml_shell(cmd, sizeof cmd, LOG, sizeof LOG, 0,
                     "cd '%s' && %s '%s' check --kernel cpu_naive --cases 2 %s", dir, env, F.cli,
                     more);
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    if (sml_cli_setup(T.test, F.cli, TMP, sizeof TMP)) return 1;
    char proj[400], own[600], cmd[2048], out[1024];
    const char *repro = "cpu_naive-log_softmax_bwd-fp32-special_values-8f24d837";
    snprintf(proj, sizeof proj, "%s/project", TMP);
    snprintf(own, sizeof own, "%s/tests/regressions", proj);
    sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
              "mkdir -p '%s' && cp '%s'/../../regressions/%s.* '%s'", own, F.fixtures, repro, own);

    /* 1. From a directory with no corpus: the installed one, replayed and said. */
    long installed = -1;
    if (sml_case_filter_want(&F, 1)) {
        int rc = check_in(TMP, "", "");
        installed = replayed(LOG);
        sml_test_check_case(&T, &F, LOG, 1,
                            rc == 0 && installed >= 10 &&
                                strstr(LOG, "/share/softmax_lab/regressions") &&
                                strstr(LOG, "(the default corpus"),
                            "check in an empty directory replays the installed corpus (10 or "
                            "more cases) and says so");
    }
    /* 2. A project's own ./tests/regressions: replayed beside the installed corpus. */
    if (sml_case_filter_want(&F, 2)) {
        int rc = check_in(proj, "", "");
        long n = replayed(LOG);
        sml_test_check_case(&T, &F, LOG, 2,
                            rc == 0 && n >= 11 && (installed < 0 || n == installed + 1) &&
                                strstr(LOG, "project/tests/regressions (the default corpus"),
                            "check beside a project's tests/regressions replays its reproducer "
                            "too, one case more");
    }
    /* 3. SML_REGRESSIONS instead of the default corpus. */
    if (sml_case_filter_want(&F, 3)) {
        char env[700];
        snprintf(env, sizeof env, "SML_REGRESSIONS='%s'", own);
        int rc = check_in(TMP, env, "");
        sml_test_check_case(&T, &F, LOG, 3,
                            rc == 0 && replayed(LOG) == 1 && strstr(LOG, "(SML_REGRESSIONS)"),
                            "SML_REGRESSIONS=DIR replays DIR's one case, and says it came from it");
        rc = check_in(TMP, "SML_REGRESSIONS=/nonexistent", "");
        sml_test_check_case(&T, &F, LOG, 3,
                            rc == 2 && strstr(LOG, "SML_REGRESSIONS") &&
                                strstr(LOG, "no such directory"),
                            "a SML_REGRESSIONS folder that is not there is refused, exit 2");
    }
    /* 4. --regressions DIR over SML_REGRESSIONS; none replays nothing, and says so. */
    if (sml_case_filter_want(&F, 4)) {
        char more[700];
        snprintf(more, sizeof more, "--regressions '%s'", own);
        int rc = check_in(TMP, "SML_REGRESSIONS=/nonexistent", more);
        sml_test_check_case(&T, &F, LOG, 4,
                            rc == 0 && replayed(LOG) == 1 && strstr(LOG, "(--regressions)"),
                            "--regressions DIR replays DIR (SML_REGRESSIONS is not read)");
        rc = check_in(TMP, "", "--regressions none");
        sml_test_check_case(&T, &F, LOG, 4,
                            rc == 0 && strstr(LOG, "no saved regression replayed (--regressions "
                                                   "none)"),
                            "--regressions none replays nothing and says so");
    }
    sml_shell(cmd, sizeof cmd, out, sizeof out, 0, "rm -rf '%s'", TMP);
    return sml_tally_finish(&T);
}
