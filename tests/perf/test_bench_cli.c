/* test_bench_cli.c: the `bench`, `compare` and `plot` commands as a user runs them: bad
 * flags exit 2 and write nothing; a small CPU run exits 0, says what it could not run, and
 * writes the ledger (JSON + Markdown), --json, --md and --svg; compare exits 0 / 1 / 2 on
 * the fixtures. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json_read.h"
#include "case_filter.h"
#include "cli_run.h"
#include "test_support.h"

static sml_tally T = {"test_bench_cli", 0, 0, 0};
static sml_case_filter F;
static char TMP[256];

/* Runs the CLI with args (NULL-terminated) in TMP, its output into log; returns the exit code. */
static int run_cli(const char *const *args, char *log, size_t loglen) {
    return sml_run_cli(F.cli, TMP, args, log, loglen);
}

static int entries(const char *dir) { return sml_dir_entries(dir); }

static int exists(const char *name) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", TMP, name);
    struct stat st;
    return stat(p, &st) == 0 && st.st_size > 0;
}

static char LOG[1 << 16];

static void expect_rc(int n, const char *what, const char *const *args, int want,
                      int must_be_empty) {
    if (!sml_case_filter_want(&F, n)) return;
    if (must_be_empty) {
        /* Start empty, so one case's leftovers cannot fail the next. */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/.[!.]*", TMP, TMP);
        if (system(cmd) != 0) printf("note: could not empty %s\n", TMP);
    }
    int rc = run_cli(args, LOG, sizeof LOG);
    int files = entries(TMP);
    if (rc == want && (!must_be_empty || files == 0)) {
        sml_tally_pass(&T);
        return;
    }
    sml_tally_fail(&T, F.repro,
                   "case %d: %s: exit %d (want %d), %d files written%s\n--- output ---\n%.2000s", n,
                   what, rc, want, files, must_be_empty ? " (want none)" : "", LOG);
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    if (sml_cli_setup("test_bench_cli", F.cli, TMP, sizeof TMP)) return 1;
    char fx[3][600];
    snprintf(fx[0], sizeof fx[0], "%s/compare_old.json", F.fixtures);
    snprintf(fx[1], sizeof fx[1], "%s/compare_new.json", F.fixtures);
    snprintf(fx[2], sizeof fx[2], "%s/compare_new_ok.json", F.fixtures);
    char badfx[600], plotfx[600];
    snprintf(badfx, sizeof badfx, "%s/bad_field.json", F.fixtures);
    snprintf(plotfx, sizeof plotfx, "%s/plot_ledger.json", F.fixtures);

    /* Bad usage: exit 2, nothing written (the ledger would go to ./L in TMP). */
    const char *const BAD[][12] = {
        {"bench", "--bogus", "--ledger", "L", NULL},
        {"bench", "--rows", "0", "--cols", "8", "--ledger", "L", NULL},
        {"bench", "--rows", "x", "--cols", "8", "--ledger", "L", NULL},
        {"bench", "--rows", "4", "--ledger", "L", NULL},
        {"bench", "--sweep", "seeds", "--rows", "4", "--cols", "4", "--ledger", "L", NULL},
        {"bench", "--op", "softmaxx", "--ledger", "L", NULL},
        {"bench", "--dtype", "fp8", "--ledger", "L", NULL},
        {"bench", "--sweep", "nope", "--ledger", "L", NULL},
        {"bench", "--noise", "2", "--ledger", "L", NULL},
        {"bench", "--min-samples", "0", "--ledger", "L", NULL},
        {"bench", "--backend", "nosuch", "--ledger", "L", NULL},
        {"bench", "--l2", "hot", "--ledger", "L", NULL},
        {"bench", "--json", "/etc/hostname/x.json", "--ledger", "L", NULL},
        {"bench", "--ledger", "/etc/hostname/L", NULL},
        {"bench", "--svg", "out/", "--ledger", "L", NULL},
        {"bench", "--max-seconds", "--ledger", "L", NULL},
        {"compare", fx[0], NULL},
        {"compare", fx[0], fx[1], "--threshold", "-1", NULL},
        {"compare", fx[0], badfx, NULL},
        {"compare", fx[0], "/nonexistent.json", NULL},
        {"plot", badfx, "out.svg", NULL},
        {"plot", plotfx, "out.svg", "--op", "nope", NULL},
        {"bench", "--time-limit", "0", "--ledger", "L", NULL},
        {"bench", "--time-limit", "soon", "--ledger", "L", NULL},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char what[200] = "";
        for (int j = 0; BAD[i][j]; j++) {
            strncat(what, BAD[i][j], sizeof what - strlen(what) - 2);
            strncat(what, " ", sizeof what - strlen(what) - 1);
        }
        expect_rc(1 + (int)i, what, BAD[i], 2, 1);
    }

    /* compare verdicts decide the exit code. */
    const char *const slow[] = {"compare", fx[0], fx[1], NULL};
    expect_rc(40, "compare with a SLOW case", slow, 1, 1);
    sml_test_check_case(&T, &F, LOG, 41,
                        strstr(LOG, "SLOW") && strstr(LOG, "FAST") && strstr(LOG, "SAME") &&
                            strstr(LOG, "UNCLEAR") && strstr(LOG, "check broke: ok -> WRONG"),
                        "compare prints every verdict and the broken check");
    const char *const fine[] = {"compare", fx[0], fx[2], NULL};
    expect_rc(42, "compare with no SLOW case", fine, 0, 1);
    const char *const only_slow[] = {"compare", fx[2], fx[0], NULL};
    expect_rc(43, "compare with one SLOW case and nothing broken", only_slow, 1, 1);

    /* A small real run on the CPU backends. */
    const char *const ok[] = {"bench",   "--backend", "cpu",
                              "--rows",  "32",        "--cols",
                              "256",     "--dtype",   "fp32,bf16",
                              "--op",    "all",       "--max-seconds",
                              "0.02",    "--ledger",  "L",
                              "--json",  "run.json",  "--md",
                              "run.md",  "--svg",     "L/plots/run.svg",
                              "--quiet", NULL};
    expect_rc(50, "a small CPU bench", ok, 0, 0);
    sml_test_check_case(&T, &F, LOG, 51, exists("L/custom_all.json") && exists("L/custom_all.md"),
                        "the ledger directory holds JSON and Markdown");
    sml_test_check_case(&T, &F, LOG, 52,
                        exists("run.json") && exists("run.md") && exists("L/plots/run.svg"),
                        "--json, --md and --svg (into a directory made for it) were written");
    sml_test_check_case(&T, &F, LOG, 53,
                        strstr(LOG, "== softmax_bwd bf16 32x256") && strstr(LOG, "cpu_online") &&
                            strstr(LOG, "decisions"),
                        "a table per case and the decisions are printed");
    if (!sml_gpu_available())
        sml_test_check_case(&T, &F, LOG, 54, strstr(LOG, "GPU backends are unavailable") != NULL,
                            "with no GPU the output says so");
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/run.json", TMP);
    sml_json *doc = NULL;
    sml_test_check_case(
        &T, &F, LOG, 55,
        sml_json_parse_file(path, &doc, err, sizeof err) == SML_OK &&
            sml_json_len(sml_json_get(doc, "records")) >= 2 &&
            sml_json_len(sml_json_get(sml_json_at(sml_json_get(doc, "records"), 0), "evidence")) ==
                8,
        "run.json parses: >= 2 records with 8 evidence rows each (4 ops x 2 dtypes)");
    sml_json_free(doc);
    const char *const self[] = {"compare", "run.json", "run.json", NULL};
    expect_rc(56, "compare a run with itself", self, 0, 0);
    const char *const plot[] = {"plot", "run.json", "again.svg", "--dtype", "bf16", NULL};
    expect_rc(57, "plot a run's ledger", plot, 0, 0);
    sml_test_check_case(&T, &F, LOG, 58, exists("again.svg"), "plot wrote the SVG");
    const char *const dflt[] = {"help", "--reference", NULL};
    expect_rc(59, "help --reference", dflt, 0, 0);
    const char *bench = strstr(LOG, "\n## bench\n");
    sml_test_check_case(&T, &F, LOG, 60,
                        bench && strstr(bench, "\n  standard ") && strstr(bench, "16384x128"),
                        "the reference's bench section lists the sweeps and their shapes");

    /* A time limit the first case outlasts: exit 0, a partial ledger, and the run says so. */
    const char *const part[] = {
        "bench",     "--backend",    "cpu",       "--rows",   "32",  "--cols",
        "256",       "--dtype",      "fp32,bf16", "--op",     "all", "--max-seconds",
        "0.02",      "--time-limit", "0.001",     "--ledger", "L",   "--json",
        "part.json", "--quiet",      NULL};
    expect_rc(61, "a CPU bench cut short by --time-limit", part, 0, 0);
    sml_test_check_case(
        &T, &F, LOG, 62,
        strstr(LOG, "time limit: 0.001 s reached after 1 of 8 cases; the ledger is partial") !=
            NULL,
        "the run says where the time limit stopped it");
    /* A CPU-only run names what it did: no GPU method (launches, the hold kernel, the L2, the
     * copy kernel) in its header. On a GPU host the device line before it names the GPU, its
     * L2 included: that is the machine, not the method. */
    const char *after_device =
        strstr(LOG, "device: ") ? strchr(strstr(LOG, "device: "), '\n') : LOG;
    if (!after_device) after_device = "";
    sml_test_check_case(&T, &F, LOG, 69,
                        strstr(after_device, "method: ") && !strstr(after_device, "launch") &&
                            !strstr(after_device, "hold") && !strstr(after_device, "L2") &&
                            !strstr(after_device, "copy kernel"),
                        "a CPU-only bench's output names no GPU method (launch, hold, L2, copy "
                        "kernel)");
    snprintf(path, sizeof path, "%s/part.json", TMP);
    doc = NULL;
    const sml_json *pj = sml_json_parse_file(path, &doc, err, sizeof err) == SML_OK
                             ? sml_json_get(doc, "partial")
                             : NULL;
    sml_test_check_case(&T, &F, LOG, 63,
                        pj && sml_json_num(sml_json_get(pj, "cases_measured"), -1) == 1 &&
                            sml_json_num(sml_json_get(pj, "cases_planned"), -1) == 8 &&
                            sml_json_len(sml_json_get(sml_json_at(sml_json_get(doc, "records"), 0),
                                                      "evidence")) == 1,
                        "part.json: partial, 1 of 8 cases, one evidence row per record");
    sml_json_free(doc);
    snprintf(path, sizeof path, "%s/run.json", TMP);
    sml_test_check_case(&T, &F, LOG, 64,
                        sml_json_parse_file(path, &doc, err, sizeof err) == SML_OK &&
                            sml_json_get(doc, "partial") &&
                            sml_json_get(doc, "partial")->type == SML_JSON_NULL,
                        "a complete run's ledger has \"partial\": null");
    sml_json_free(doc);
    /* --gate fails a partial run even where no claim was missed: the CPU backends have none. */
    const char *const gated[] = {
        "bench",         "--backend", "cpu",          "--rows", "32",   "--cols", "256",
        "--max-seconds", "0.02",      "--time-limit", "0.001",  "--op", "all",    "--gate",
        "--ledger",      "L",         "--quiet",      NULL};
    expect_rc(65, "--gate on a partial run", gated, 1, 0);
    sml_test_check_case(
        &T, &F, LOG, 66,
        strstr(LOG, "PARTIAL: the time limit (0.001 s) stopped the run after 1 of 4 cases") &&
            strstr(LOG, "gate: a partial run cannot show any claim holds"),
        "stdout says the run is partial and why the gate failed");

    /* With no --ledger the ledger goes beside the binary (the build tree), never into the
     * directory the command runs in (a source checkout). */
    const char *const dfl[] = {"bench",  "--backend", "cpu",  "--rows",          "3",
                               "--cols", "5",         "--op", "log_softmax_bwd", "--max-seconds",
                               "0.01",   "--quiet",   NULL};
    char beside[700];
    snprintf(beside, sizeof beside, "%s", F.cli);
    char *slash = strrchr(beside, '/');
    snprintf(slash ? slash + 1 : beside, sizeof beside - (size_t)(slash ? slash + 1 - beside : 0),
             "ledger/custom_log_softmax_bwd.json");
    remove(beside);
    expect_rc(67, "a CPU bench with no --ledger", dfl, 0, 1);
    struct stat bst;
    sml_test_check_case(
        &T, &F, LOG, 68, entries(TMP) == 0 && stat(beside, &bst) == 0 && bst.st_size > 0,
        "no --ledger: nothing in the working directory, the ledger in ledger/ beside the binary");

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    if (T.failed == 0 && system(cmd) != 0)
        printf("note: could not remove %s\n", TMP);
    else if (T.failed)
        printf("files kept in %s\n", TMP);
    return sml_tally_finish(&T);
}
