/* test_accuracy_compare: `softmax-lab compare` on accuracy (docs/NUMERICS.md, section 8), on
 * check JSON fixtures: a fast exp's 0.40 -> 0.73 of the bound is LESS ACCURATE and fails (exit
 * 1), --allow-less-accurate lets it pass, 0.40 -> 0.42 is SAME, other seeds or case counts are
 * NOT COMPARABLE and said so (exit 3), a malformed figure, digest, count or order of figures is
 * refused naming the field (exit 2); the worst case's rerun line names the --long, --strict and
 * plugin library NEW ran with; check --against refuses what is not one candidate and a
 * registered base (exit 2), runs, and its JSON reads back through compare.
 * Flags: --fixtures DIR, --cli PATH. */
#include <stdio.h>
#include <string.h>

#include "cli_run.h"
#include "test_support.h"

static const char *TEST = "test_accuracy_compare";

typedef struct tcase {
    const char *old_f, *new_f, *flag;
    int rc;
    const char *want; /* in the output */
} tcase;

int main(int argc, char **argv) {
    const char *fx = "tests/perf/fixtures", *cli = "build/softmax-lab";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--fixtures"))
            fx = argv[i + 1];
        else if (!strcmp(argv[i], "--cli"))
            cli = argv[i + 1];
    }
    char tmp[128];
    if (sml_cli_setup(TEST, cli, tmp, sizeof tmp)) return 1;
    static const tcase C[] = {
        {"acc_old.json", "acc_new_less.json", NULL, 1,
         "fp32  LESS ACCURATE   worst 0.4 -> 0.73 (1.82x)"},
        {"acc_old.json", "acc_new_less.json", NULL, 1, "worst case in NEW: case 4711 at level 47"},
        {"acc_old.json", "acc_new_less.json", NULL, 1,
         "--level 47 --props agreement --regressions none"},
        /* NEW ran --long --strict on a plugin's kernel: its rerun line says so and loads it. */
        {"acc_old.json", "acc_new_less_flags.json", NULL, 1,
         "--level 47 --props agreement --long --strict --load '/opt/my plugins/libblock.so' "
         "--regressions none"},
        {"acc_old.json", "acc_bad_library.json", NULL, 2, "NEW: runs[0]: 'library'"},
        {"acc_old.json", "acc_new_less.json", "--allow-less-accurate", 0,
         "allowed by --allow-less-accurate"},
        {"acc_old.json", "acc_new_same.json", NULL, 0, "0 LESS ACCURATE, 0 MORE ACCURATE, 2 SAME"},
        {"acc_new_less.json", "acc_old.json", NULL, 0, "fp32  MORE ACCURATE"},
        {"acc_old.json", "acc_new_seed.json", NULL, 3, "NOT COMPARABLE  different seeds"},
        {"acc_old.json", "acc_new_cases.json", NULL, 3,
         "different case counts (old 10000, new 9000)"},
        {"acc_bad_median.json", "acc_old.json", NULL, 2, "OLD: runs[0].accuracy: 'median' missing"},
        {"acc_old.json", "acc_bad_order.json", NULL, 2,
         "NEW: runs[0].accuracy: 'median' <= 'p99' <= 'worst'"},
        {"acc_old.json", "acc_bad_digest.json", NULL, 2,
         "NEW: runs[0].accuracy: 'digest' missing or not a 0x hex"},
        {"acc_bad_judged.json", "acc_old.json", NULL, 2,
         "OLD: runs[0].accuracy: 'judged' (10001) is more than"},
    };
    sml_tally t = {TEST, 0, 0, 0};
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        char o[512], n[512], log[16384], cmd[1400];
        snprintf(o, sizeof o, "%s/%s", fx, C[i].old_f);
        snprintf(n, sizeof n, "%s/%s", fx, C[i].new_f);
        const char *args[] = {"compare", o, n, C[i].flag, NULL};
        snprintf(cmd, sizeof cmd, "%s compare %s %s %s", cli, o, n, C[i].flag ? C[i].flag : "");
        int rc = sml_run_cli(cli, tmp, args, log, sizeof log);
        if (rc != C[i].rc)
            sml_tally_fail(&t, cmd, "exit %d, want %d; output:\n%s", rc, C[i].rc, log);
        else if (!strstr(log, C[i].want))
            sml_tally_fail(&t, cmd, "output lacks \"%s\":\n%s", C[i].want, log);
        else
            sml_tally_pass(&t);
    }
    if (sml_dir_entries(tmp) == 0)
        sml_tally_pass(&t); /* compare reads; it writes nothing */
    else
        sml_tally_fail(&t, cli, "compare wrote files into %s", tmp);

    /* check --against from the command line: usage refusals, a run, its JSON through compare. */
    static const char *const BAD[][6] = {
        {"check", "--against", "cpu_online", NULL},
        {"check", "--kernel", "cpu_naive", "--allow-less-accurate", NULL},
        {"check", "--kernel", "cpu_naive", "--against", "nope", NULL},
        {"check", "--kernel", "cpu_naive,cpu_online", "--against", "cpu_online", NULL},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char log[4096];
        int rc = sml_run_cli(cli, tmp, (const char *const *)BAD[i], log, sizeof log);
        if (rc == 2 && strstr(log, "--against"))
            sml_tally_pass(&t);
        else
            sml_tally_fail(&t, cli,
                           "check usage %zu: exit %d, want 2 with a word on --against:\n%s", i, rc,
                           log);
    }
    const char *run[] = {"check",      "--kernel", "cpu_naive", "--against",
                         "cpu_online", "--op",     "softmax",   "--dtype",
                         "fp32",       "--cases",  "40",        "--regressions",
                         "none",       "--json",   "ag.json",   NULL};
    char log[16384];
    int rc = sml_run_cli(cli, tmp, run, log, sizeof log);
    char cmd[600];
    snprintf(
        cmd, sizeof cmd,
        "%s check --kernel cpu_naive --against cpu_online --op softmax --dtype fp32 --cases 40 "
        "--regressions none --json ag.json",
        cli);
    if (rc == 0 &&
        strstr(log, "cpu_naive  cpu_online softmax          fp32       40     PASS  SAME"))
        sml_tally_pass(&t);
    else
        sml_tally_fail(&t, cmd, "exit %d, want 0 and a SAME line for 40 cases:\n%s", rc, log);
    const char *cmp[] = {"compare", "ag.json", "ag.json", NULL};
    rc = sml_run_cli(cli, tmp, cmp, log, sizeof log);
    if (rc == 0 && strstr(log, "0 LESS ACCURATE, 0 MORE ACCURATE, 1 SAME"))
        sml_tally_pass(&t);
    else
        sml_tally_fail(&t, cmd, "compare of the --against JSON with itself: exit %d:\n%s", rc, log);
    return sml_tally_finish(&t);
}
