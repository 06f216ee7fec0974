/* test_cli_gates.c: the exit status says what was checked. A kernel or backend named on the
 * command line that could not run, a run of zero cases or properties, a comparison that
 * compared nothing: none of them exits 0. And the conventions a user expects of the CLI:
 * --version, -h and `help CMD` on every command with its exit codes, --kernel a,b, a
 * schema and version in check --json, and a --seconds budget that check --against keeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "case_filter.h"
#include "io/npy.h"
#include "cli_exec.h"
#include "softmax_lab.h"
#include "test_support.h"

static sml_tally T = {"test_cli_gates", 0, 0, 0};
static sml_case_filter F;
static char TMP[256], LOG[1 << 16];

static int run(const char *const *args) { return sml_run_cli(F.cli, TMP, args, LOG, sizeof LOG); }

static void skip(int n, const char *why) {
    printf("skip case %d: %s\n", n, why);
    T.skipped++;
}

/* A .npy file of `descr` ("<f4", "<i2") and `shape` ("(2, 4)") holding n bytes of data. */
/* An accuracy verdict in check --against's table: SAME, MORE ACCURATE or LESS ACCURATE (which
 * one depends on the cases a cap let run), and no NOT COMPARABLE. */
static int acc_verdict(const char *log) {
    return (strstr(log, " SAME ") || strstr(log, "MORE ACCURATE") ||
            strstr(log, "LESS ACCURATE")) &&
           !strstr(log, "NOT COMPARABLE");
}

static void write_npy(const char *path, const char *descr, const char *shape, const void *data,
                      size_t n) {
    char dict[128], head[128];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       descr, shape);
    int total = (10 + len + 1 + 63) / 64 * 64; /* the header padded to 64 bytes, '\n' last */
    memset(head, ' ', sizeof head);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)((total - 10) & 0xff);
    head[9] = (char)((total - 10) >> 8);
    memcpy(head + 10, dict, (size_t)len);
    head[total - 1] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(head, 1, (size_t)total, f);
    fwrite(data, 1, n, f);
    fclose(f);
}

/* A ledger with no evidence at all, and one whose first "records" is empty. */
static const char *EMPTY =
    "{\"schema\": \"softmax-lab-ledger/1\", \"environment\": {\"gpu\": {\"name\": "
    "\"Fixture GPU\"}}, \"records\": []}\n";

/* The verdicts a misuse used to get wrong. */
static void more_gates(const char *old) {
    char p[600], cmd[2400];
    /* 14. compare of two GPUs' ledgers: refused, unless --allow-different-gpu. */
    if (sml_case_filter_want(&F, 14)) {
        snprintf(p, sizeof p, "%s/other_gpu.json", TMP);
        sml_shell(cmd, sizeof cmd, LOG, sizeof LOG, 0, "sed 's/Fixture GPU/Other GPU/' '%s' > '%s'",
                  old, p);
        const char *a[] = {"compare", old, "other_gpu.json", NULL};
        int rc = run(a);
        const char *b[] = {"compare", old, "other_gpu.json", "--allow-different-gpu", NULL};
        int rc2 = run(b);
        sml_test_check_case(&T, &F, LOG, 14,
                            rc == 2 && rc2 != 2 && strstr(LOG, "warning: different devices"),
                            "compare of ledgers from two GPUs exits 2; --allow-different-gpu "
                            "compares them with a warning");
    }
    /* 15. check --input --kernel a,b runs both (the help shows K[,K]). */
    if (sml_case_filter_want(&F, 15)) {
        float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        char err[512];
        snprintf(p, sizeof p, "%s/x.npy", TMP);
        sml_npy_write_2d(p, SML_F32, 2, 4, x, err, sizeof err);
        const char *a[] = {"check", "--input", "x.npy", "--kernel", "cpu_naive,cpu_online", NULL};
        int rc = run(a);
        sml_test_check_case(&T, &F, LOG, 15,
                            rc == 0 && strstr(LOG, "\ncpu_naive ") && strstr(LOG, "\ncpu_online "),
                            "check --input x.npy --kernel cpu_naive,cpu_online runs both kernels");
    }
    /* 16. int16 data with --dtype fp16: refused (only bf16 comes as raw bits). */
    if (sml_case_filter_want(&F, 16)) {
        snprintf(p, sizeof p, "%s/i16.npy", TMP);
        const short i16[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        write_npy(p, "<i2", "(2, 4)", i16, sizeof i16);
        const char *a[] = {"check", "--input", "i16.npy", "--dtype", "fp16", NULL};
        int rc = run(a);
        sml_test_check_case(&T, &F, LOG, 16,
                            rc == 2 && strstr(LOG, "i16.npy") && strstr(LOG, "fp16"),
                            "check --input int16.npy --dtype fp16 exits 2, naming the file");
    }
    /* 19. Escape codes and newlines in a ledger's names are not echoed raw to the terminal. */
    if (sml_case_filter_want(&F, 19)) {
        char q[600];
        snprintf(p, sizeof p, "%s/esc_old.json", TMP);
        snprintf(q, sizeof q, "%s/esc_new.json", TMP);
        sml_shell(cmd, sizeof cmd, LOG, sizeof LOG, 0,
                  "sed 's/\"kernel\": \"warp\"/\"kernel\": \"wa\\\\u001b[2Jrp\\\\nFORGED\"/' '%s' "
                  "> '%s' && cp '%s' '%s'",
                  old, p, p, q);
        const char *a[] = {"compare", "esc_old.json", "esc_new.json", NULL};
        int rc = run(a);
        sml_test_check_case(
            &T, &F, LOG, 19, rc == 0 && !strchr(LOG, 0x1b) && strstr(LOG, "wa?[2Jrp?FORGED"),
            "compare prints a kernel name holding ESC and a newline as 'wa?[2Jrp?FORGED'");
    }
    /* 20. A file starting with a UTF-8 BOM: named as such, no raw byte printed. */
    if (sml_case_filter_want(&F, 20)) {
        snprintf(p, sizeof p, "%s/bom.json", TMP);
        cli_write(p, "\xef\xbb\xbf{\"schema\": \"softmax-lab-ledger/1\"}");
        const char *a[] = {"targets", "bom.json", NULL};
        int rc = run(a);
        sml_test_check_case(
            &T, &F, LOG, 20, rc == 2 && strstr(LOG, "byte order mark") && !strchr(LOG, 0xef),
            "targets on a file with a BOM exits 2 saying so, without printing the raw byte");
    }
    /* 18. The last case index: no signed overflow past it (UBSan stops the sanitizer build). */
    if (sml_case_filter_want(&F, 18)) {
        const char *a[] = {
            "check", "--kernel", "cpu_naive",           "--op",    "softmax", "--dtype",
            "fp32",  "--case",   "9223372036854775807", "--level", "100",     "--regressions",
            "none",  NULL};
        int rc = run(a);
        sml_test_check_case(
            &T, &F, LOG, 18, rc == 0 && strstr(LOG, "every property held"),
            "check --case 9223372036854775807 --level 100 runs that one case and exits 0");
    }
    /* 17. A run that runs out of memory is no FAIL of the kernel: exit 3 with the reason. */
    if (sml_case_filter_want(&F, 17)) {
#if defined(__SANITIZE_ADDRESS__)
        skip(17, "AddressSanitizer reserves more address space than the limit");
        return;
#endif
        snprintf(p, sizeof p, "%s/big.npy", TMP);
        float *ones = malloc(20000 * 512 * sizeof *ones);
        for (int i = 0; ones && i < 20000 * 512; i++) ones[i] = 1.0f;
        if (ones) write_npy(p, "<f4", "(20000, 512)", ones, 20000 * 512 * sizeof *ones);
        free(ones);
        int rc = sml_shell(cmd, sizeof cmd, LOG, sizeof LOG, SML_SHELL_ECHO_RC,
                           "cd '%s' && (ulimit -v 230000; '%s' check --input big.npy --kernel "
                           "cpu_naive)",
                           TMP, F.cli);
        sml_test_check_case(
            &T, &F, LOG, 17, rc == 3 && strstr(LOG, "out of memory") && !strstr(LOG, "FAIL"),
            "check --input under ulimit -v 230000 exits 3 'out of memory', not FAIL");
    }
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    if (sml_cli_setup(T.test, F.cli, TMP, sizeof TMP)) return 1;
    const int gpu = sml_gpu_available();
    char p[600], old[1200], buf[8192];
    snprintf(old, sizeof old, "%s/compare_old.json", F.fixtures);

    /* 1. A named GPU kernel with no GPU: not a pass. */
    if (sml_case_filter_want(&F, 1)) {
        if (gpu)
            skip(1, "a GPU is present: auto can run");
        else {
            const char *a[] = {"check", "--kernel", "auto", "--cases", "2", NULL};
            int rc = run(a);
            sml_test_check_case(&T, &F, LOG, 1, rc == 3 && strstr(LOG, "NOT CHECKED"),
                                "check --kernel auto without a GPU exits 3, NOT CHECKED");
        }
    }
    /* 2. --kernel all without a GPU: 0, and it says what it skipped. */
    if (sml_case_filter_want(&F, 2)) {
        const char *a[] = {"check", "--kernel", "all", "--op",          "softmax", "--dtype",
                           "fp32",  "--cases",  "2",   "--regressions", "none",    NULL};
        int rc = run(a);
        sml_test_check_case(
            &T, &F, LOG, 2, rc == 0 && (gpu || strstr(LOG, "not run here (skipped): ")),
            "check --kernel all exits 0 and, without a GPU, lists the kernels it skipped");
    }
    /* 3. A list of kernels, as bench --backend takes. */
    if (sml_case_filter_want(&F, 3)) {
        const char *a[] = {
            "check",   "--kernel", "cpu_naive,cpu_online", "--op", "softmax", "--dtype", "fp32",
            "--cases", "2",        "--regressions",        "none", NULL};
        int rc = run(a);
        sml_test_check_case(&T, &F, LOG, 3,
                            rc == 0 && strstr(LOG, "\ncpu_naive ") && strstr(LOG, "\ncpu_online "),
                            "check --kernel cpu_naive,cpu_online runs both and exits 0");
    }
    /* 4-5. Zero cases, no property: refused, not "every property held". */
    if (sml_case_filter_want(&F, 4)) {
        const char *a[] = {"check", "--kernel", "cpu_naive", "--cases", "0", NULL};
        sml_test_check_case(&T, &F, LOG, 4, run(a) == 2, "check --cases 0 is refused (exit 2)");
    }
    if (sml_case_filter_want(&F, 5)) {
        const char *a[] = {"check", "--kernel", "cpu_naive", "--props", "", NULL};
        const char *b[] = {"check", "--kernel", "cpu_naive", "--props", ",", NULL};
        sml_test_check_case(&T, &F, LOG, 5, run(a) == 2 && run(b) == 2,
                            "check --props '' and --props , are refused (exit 2)");
    }
    /* 6. check --json: a schema, the version, and the result in words. */
    if (sml_case_filter_want(&F, 6)) {
        const char *a[] = {"check",   "--kernel", "cpu_naive", "--op", "softmax",
                           "--dtype", "fp32",     "--cases",   "2",    "--regressions",
                           "none",    "--json",   "c.json",    NULL};
        int rc = run(a);
        snprintf(p, sizeof p, "%s/c.json", TMP);
        cli_slurp(p, buf, sizeof buf);
        sml_test_check_case(
            &T, &F, LOG, 6,
            rc == 0 && strstr(buf, "\"schema\": \"softmax-lab-check/1\"") &&
                strstr(buf, "\"version\": \"") && strstr(buf, "\"result\": \"passed\""),
            "check --json has schema softmax-lab-check/1, a version and \"result\": \"passed\"");
    }
    /* 7. bench --backend auto --gate without a GPU: nothing ran, so not green. */
    if (sml_case_filter_want(&F, 7)) {
        if (gpu)
            skip(7, "a GPU is present: auto can run");
        else {
            const char *a[] = {"bench", "--backend", "auto", "--gate", "--quiet", NULL};
            sml_test_check_case(&T, &F, LOG, 7, run(a) == 3,
                                "bench --backend auto --gate without a GPU exits 3");
        }
    }
    /* 8-9. compare that compared nothing: no shared case, or a duplicate key hiding them. */
    if (sml_case_filter_want(&F, 8)) {
        snprintf(p, sizeof p, "%s/empty.json", TMP);
        cli_write(p, EMPTY);
        const char *a[] = {"compare", old, "empty.json", NULL};
        int rc = run(a);
        sml_test_check_case(&T, &F, LOG, 8, rc == 3 && strstr(LOG, "NOTHING COMPARED"),
                            "compare OLD EMPTY exits 3: nothing was compared");
    }
    if (sml_case_filter_want(&F, 9)) {
        /* The old ledger's records again, behind an empty first "records": the reader keeps
         * the first of a repeated key, so nothing is compared (never the records behind it). */
        char *text = malloc(1 << 20);
        snprintf(p, sizeof p, "%s/dup.json", TMP);
        FILE *in = fopen(old, "r");
        size_t got = in ? fread(text, 1, (1 << 20) - 1, in) : 0;
        if (in) fclose(in);
        text[got] = 0;
        char *brace = strchr(text, '{');
        FILE *out = fopen(p, "w");
        if (brace && out) fprintf(out, "{\"records\": [], %s", brace + 1);
        if (out) fclose(out);
        free(text);
        const char *a[] = {"compare", old, "dup.json", NULL};
        int rc = run(a);
        sml_test_check_case(
            &T, &F, LOG, 9, rc == 3 && strstr(LOG, "NOTHING COMPARED"),
            "compare OLD DUP (\"records\": [] before the real records) exits 3, NOTHING COMPARED");
    }
    /* 10. The same file twice does compare: 0 (the 3 above is not compare's only answer). */
    if (sml_case_filter_want(&F, 10)) {
        const char *a[] = {"compare", old, old, NULL};
        sml_test_check_case(&T, &F, LOG, 10, run(a) == 0, "compare OLD OLD exits 0");
    }
    /* 11. --version. */
    if (sml_case_filter_want(&F, 11)) {
        const char *a[] = {"--version", NULL};
        int rc = run(a);
        sml_test_check_case(&T, &F, LOG, 11,
                            rc == 0 && !strncmp(LOG, "softmax-lab ", 12) && strchr(LOG, '.'),
                            "--version prints softmax-lab X.Y.Z");
    }
    /* 12. -h and help CMD on every command, each listing its exit codes. */
    if (sml_case_filter_want(&F, 12)) {
        const char *cmds[] = {"bench", "check", "replay", "compare", "plot", "targets", "list"};
        char bad[256] = "";
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            const char *a[] = {cmds[i], "-h", NULL};
            const char *b[] = {"help", cmds[i], NULL};
            int ok = run(a) == 0 && strstr(LOG, "exit");
            char first[sizeof LOG];
            snprintf(first, sizeof first, "%s", LOG);
            ok = ok && run(b) == 0 && !strcmp(first, LOG);
            if (!ok) snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %s", cmds[i]);
        }
        if (bad[0])
            snprintf(LOG, sizeof LOG, "commands without -h / help CMD / exit codes:%s\n", bad);
        sml_test_check_case(
            &T, &F, LOG, 12, !bad[0],
            "CMD -h and help CMD exit 0 with the same text, which lists the exit codes");
    }
    /* 13. check --against on GPU kernels keeps the --seconds cap it was given: the candidate
     * stops there and the base runs the same cases, and a run the cap stopped is INCOMPLETE
     * (exit 4), never a pass. A million cases, so that the cap ends the run on any GPU and
     * load: an H100 ran 9,493 of the profile's 10,000 in the 3 s while the GPU job's other
     * tests ran beside it, so an idle one may finish them. */
    if (sml_case_filter_want(&F, 13)) {
        if (!gpu)
            skip(13, "no GPU: check --against on GPU kernels cannot run");
        else {
            const char *a[] = {"check",     "--kernel",  "block",
                               "--against", "warp",      "--allow-less-accurate",
                               "--op",      "softmax",   "--dtype",
                               "fp32",      "--seconds", "3",
                               "--cases",   "1000000",   "--regressions",
                               "none",      NULL};
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            const int rc = run(a);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            const double took =
                (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            sml_test_check_case(
                &T, &F, LOG, 13,
                rc == 4 && acc_verdict(LOG) && strstr(LOG, "INCOMPLETE") && took < 60.0,
                "check --kernel block --against warp --allow-less-accurate --seconds 3 gives "
                "its accuracy verdict and INCOMPLETE (exit 4) within 60 s");
        }
    }
    /* 21. A cap stops the candidate's parts at different case indices, so the cases it ran
     * need not be the first ones: the base runs exactly those, and the two are compared. The
     * base runs in the same workers after the candidate, uncapped: asked for agreement only,
     * the candidate does per case what the base does, so the base outlasts the grace (2 s)
     * the workers give a launch past the candidate's cap; when the workers kept that cap, the
     * base lost its last cases ("different case counts"; found once on an H100 host). */
    if (sml_case_filter_want(&F, 21)) {
        const char *a[] = {
            "check",   "--kernel", "cpu_online", "--against",     "cpu_naive", "--op", "softmax",
            "--dtype", "fp32",     "--cases",    "1000000",       "--seconds", "3",    "--threads",
            "8",       "--props",  "agreement",  "--regressions", "none",      NULL};
        const int rc = run(a);
        sml_test_check_case(&T, &F, LOG, 21,
                            rc == 4 && strstr(LOG, " SAME ") && strstr(LOG, "INCOMPLETE") &&
                                !strstr(LOG, "NOT COMPARABLE"),
                            "check --kernel cpu_online --against cpu_naive --seconds 3 --threads "
                            "8 compares the cases the cap let the candidate run (SAME, INCOMPLETE, "
                            "exit 4)");
    }
    more_gates(old);
    return sml_tally_finish(&T);
}
