/* test_cli_conventions.c: the command line follows the GNU conventions users expect from
 * other tools: --name=value for every option, -- before file names that start with '-',
 * --version after any subcommand, a usage line naming the program as it was called, --json -
 * and --md - on standard output, and an installed binary's bench ledger in the current
 * directory (never beside the binary). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case_filter.h"
#include "cli_exec.h"
#include "softmax_lab_version.h"
#include "test_support.h"

static sml_tally T = {"test_cli_conventions", 0, 0, 0};
static sml_case_filter F;
static char TMP[256], LOG[1 << 16];

static void check(int n, int ok, const char *what) {
    if (ok)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s\n--- output:\n%s", n, what, LOG);
}

static int run(const char *const *args) { return sml_run_cli(F.cli, TMP, args, LOG, sizeof LOG); }

/* A copy of the binary outside the build tree (as installed), run in a directory of its own:
 * bench's default ledger goes to that directory's ./ledger. */
static void installed_ledger(int n) {
    char bin[512], work[512], exe[600], cmd[2048], out[4096];
    snprintf(bin, sizeof bin, "%s/bin", TMP);
    snprintf(work, sizeof work, "%s/work", TMP);
    snprintf(exe, sizeof exe, "%s/softmax-lab", bin);
    mkdir(bin, 0755);
    mkdir(work, 0755);
    int rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0, "cp '%s' '%s'", F.cli, exe);
    if (rc != 0) {
        snprintf(LOG, sizeof LOG, "%s", out);
        check(n, 0, "copying the binary");
        return;
    }
    const char *a[] = {"bench", "--backend", "cpu_naive", "--rows",        "4", "--cols",
                       "64",    "--dtype",   "fp32",      "--min-samples", "2", "--max-seconds",
                       "0.01",  "--quiet",   NULL};
    rc = sml_run_cli(exe, work, a, LOG, sizeof LOG);
    char here[600], beside[600];
    snprintf(here, sizeof here, "%s/ledger", work);
    snprintf(beside, sizeof beside, "%s/ledger", bin);
    check(n, rc == 0 && cli_count(here, ".json") == 1 && cli_count(beside, ".json") < 0,
          "an installed binary's bench writes ./ledger in its working directory, nothing beside "
          "itself");
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    if (sml_cli_setup(T.test, F.cli, TMP, sizeof TMP)) return 1;
    char want[64];
    snprintf(want, sizeof want, "softmax-lab %s\n", SML_VERSION_STRING);

    /* 1. --name=value, as getopt_long takes it. */
    if (sml_case_filter_want(&F, 1)) {
        const char *a[] = {"check",
                           "--kernel=cpu_naive",
                           "--op=softmax",
                           "--dtype=fp32",
                           "--cases=2",
                           "--regressions=none",
                           NULL};
        int rc = run(a);
        check(1, rc == 0 && strstr(LOG, "\ncpu_naive ") && !strstr(LOG, "\ncpu_online "),
              "check --kernel=cpu_naive --op=softmax ... runs cpu_naive alone");
    }
    /* 2. --version after a subcommand. */
    if (sml_case_filter_want(&F, 2)) {
        const char *a[] = {"bench", "--version", NULL};
        const char *b[] = {"check", "--kernel", "cpu_naive", "--version", NULL};
        int rc = run(a);
        int ok = rc == 0 && !strcmp(LOG, want);
        rc = run(b);
        check(2, ok && rc == 0 && !strcmp(LOG, want),
              "bench --version and check ... --version print the version, exit 0");
    }
    /* 3. -- ends the options: a file named -x.json is a file, not an unknown option. */
    if (sml_case_filter_want(&F, 3)) {
        const char *a[] = {"replay", "--", "-no-such.json", NULL};
        int rc = run(a);
        check(3, rc == 2 && strstr(LOG, "./-no-such.json") && !strstr(LOG, "unknown option"),
              "replay -- -no-such.json reads the file ./-no-such.json (exit 2: it is not there)");
    }
    /* 4. A bad --name=value is refused as the split form is. */
    if (sml_case_filter_want(&F, 4)) {
        const char *a[] = {"check", "--cases=0", NULL};
        int rc = run(a);
        check(4, rc == 2 && strstr(LOG, "--cases"), "check --cases=0 exits 2 naming --cases");
    }
    /* 5. The usage line names the program as called. */
    if (sml_case_filter_want(&F, 5)) {
        const char *a[] = {"--help", NULL};
        int rc = run(a);
        check(5, rc == 0 && strstr(LOG, "usage: softmax-lab COMMAND"),
              "--help: usage: softmax-lab COMMAND");
    }
    if (sml_case_filter_want(&F, 6)) installed_ledger(6);
    /* 7. --json - : the document alone on standard output, the report on standard error. */
    if (sml_case_filter_want(&F, 7)) {
        char cmd[2048], out[1 << 15];
        int rc = sml_shell(
            cmd, sizeof cmd, out, sizeof out, 0,
            "(cd '%s' && '%s' check --kernel cpu_naive --op softmax --dtype fp32 --cases 2 "
            "--regressions none --json - 2>/dev/null)",
            TMP, F.cli);
        snprintf(LOG, sizeof LOG, "%s", out);
        check(7,
              rc == 0 && out[0] == '{' && strstr(out, "\"schema\": \"softmax-lab-check/1\"") &&
                  !strstr(out, "every property held"),
              "check ... --json - prints the JSON alone on stdout");
        rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
                       "(cd '%s' && '%s' bench --backend cpu_naive --rows 4 --cols 64 --dtype fp32 "
                       "--min-samples 2 "
                       "--max-seconds 0.01 --md - 2>/dev/null)",
                       TMP, F.cli);
        snprintf(LOG, sizeof LOG, "%s", out);
        check(7, rc == 0 && out[0] == '#' && !strstr(out, "ledger: /dev/fd"),
              "bench ... --md - prints the Markdown alone");
    }
    /* 8. --json-nan null: NaN (vs_cudnn with no cuDNN in the run) as null, not "nan"; a bad
     *    value exits 2 naming the flag. */
    if (sml_case_filter_want(&F, 8)) {
        char cmd[2048], out[1 << 16];
        const char *bench =
            "bench --backend cpu_naive --rows 4 --cols 64 --dtype fp32 --min-samples 2 "
            "--max-seconds 0.01 --json -";
        int rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0, "(cd '%s' && '%s' %s 2>/dev/null)",
                           TMP, F.cli, bench);
        int strings = rc == 0 && strstr(out, "\"nan\"") != NULL;
        rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
                       "(cd '%s' && '%s' %s --json-nan null 2>/dev/null)", TMP, F.cli, bench);
        snprintf(LOG, sizeof LOG, "%s", out);
        check(8, strings && rc == 0 && !strstr(out, "\"nan\"") && strstr(out, "\"vs_cudnn\": null"),
              "bench --json - --json-nan null writes null where the default writes \"nan\"");
        rc = sml_shell(cmd, sizeof cmd, LOG, sizeof LOG, SML_SHELL_ECHO_RC,
                       "'%s' check --json-nan nope 2>&1", F.cli);
        check(8, rc == 2 && strstr(LOG, "--json-nan"),
              "check --json-nan nope exits 2 naming the flag");
    }
    return sml_tally_finish(&T);
}
