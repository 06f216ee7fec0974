/* test_plugins: kernels from shared libraries (softmax_lab_plugin.h) through the CLI, as a
 * user runs it. One part per ctest entry:
 *
 *   --part refusals  every bad plugin (tests/plugins/CMakeLists.txt) and every unusable path
 *                    exits 2 with a message naming the library and the problem, nothing run
 *                    and nothing written; every command that takes a kernel refuses alike,
 *                    through --load and through SML_LOAD
 *   --part suite     list shows a plugin kernel with its library; SML_LOAD; loading twice is
 *                    harmless; a plugin built against ABI version 1 loads and runs; the
 *                    property suite (--kernel K and --kernel all) and check --input run it
 *                    like a built-in kernel
 *   --part planted   the no-max plugin is caught by check --load, shrunk, saved (in a temp
 *                    dir), and replayed from the saved file with the command printed, exactly
 *                    as printed, from another directory; replay loads the recorded library
 *                    itself; --load overrides it (a fixed build passes); a recorded library
 *                    that is gone exits 2
 *   --part deviation a declared deviation is a bound, never a pass: garbage under a label or
 *                    a declaration FAILs (the label's note printed); an fp16 kernel 1 to 1.4
 *                    ulp off passes within 1.5 ulp (the largest excused error asserted), FAILs
 *                    with 1.0 ulp, with nothing declared and under --strict; in the bench it
 *                    is KNOWN-DEV within 1.5 ulp and WRONG with 1.0 ulp; the named exceptions
 *                    (an all -inf row's 0, log_softmax's shift bits) pass where declared, fail
 *                    where not, and a shifted output far off fails under the exception
 *   --part bench     bench --load P --backend K gives the plugin kernel a row and evaluates its
 *                    claim; a line marked SML_KERNEL_FRAMEWORK is "framework": true in the ledger; a claim it misses fails --gate, and so does a kernel LESS ACCURATE
 *                    than its baseline (unless --allow-less-accurate); --margin is bounded
 *   --part gpu       the CUDA plugin: check --load and bench on a GPU (77 without one)
 *
 * Every failure prints the shell command that shows it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "io/npy.h"
#include "json/json_read.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif
#ifndef SML_PLUGIN_DIR
#define SML_PLUGIN_DIR "./build/tests/plugins/lib"
#endif

static sml_tally T = {"test_plugins", 0, 0, 0};
static char TMP[256];
static char CMD[8192];
static char OUT[1 << 17];

/* Run a shell command (stdout and stderr into OUT, the command line into CMD); returns its
 * exit code. */
#define run(...)        sml_shell(CMD, sizeof CMD, OUT, sizeof OUT, 0, __VA_ARGS__)
/* A check; a failure prints the message, the output and the last command run. */
#define expect(ok, ...) sml_expect(&T, (ok), CMD, 1024, OUT, 4000, __VA_ARGS__)

static const char *plugin(const char *name) {
    static char buf[8][600];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s.so", SML_PLUGIN_DIR, name);
    return b;
}

static int entries(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = -1;
        pclose(p);
    }
    return n;
}

static void empty_tmp(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/.[!.]*", TMP, TMP);
    if (system(cmd) != 0) printf("note: could not empty %s\n", TMP);
}

/* ---- refusals ---------------------------------------------------------------------------- */

static const struct {
    const char *lib, *want;
} BAD[] = {
    {"plug_bad_abi", "plugin ABI version 4, this softmax-lab takes versions 1 to 3"},
    {"plug_bad_no_symbol", "no symbol sml_plugin_kernels"},
    {"plug_bad_taken_builtin",
     "kernel 0 'cpu_naive': the name is taken by a registered kernel (built into softmax-lab)"},
    {"plug_bad_twin_line", "kernel 0 'plug_ok': the name is also kernel 1's in the same table"},
    {"plug_bad_null_launch", "kernel 0 'plug_ok': launch is NULL"},
    {"plug_bad_null_name", "kernel 0: name is NULL"},
    {"plug_bad_empty_name", "kernel 0: name is empty"},
    {"plug_bad_name_chars", "kernel 0: name has a character outside [A-Za-z0-9_.-]"},
    {"plug_bad_ops_zero", "kernel 0 'plug_ok': ops is 0"},
    {"plug_bad_ops_bits", "kernel 0 'plug_ok': ops 0x4f has bits outside SML_OPS_ALL (0xf)"},
    {"plug_bad_dtypes_zero", "kernel 0 'plug_ok': dtypes is 0"},
    {"plug_bad_dtypes_bits",
     "kernel 0 'plug_ok': dtypes 0x11 has bits outside SML_DTYPES_ALL (0x7)"},
    {"plug_bad_min_cols", "kernel 0 'plug_ok': min_cols 0 < 1"},
    {"plug_bad_min_gt_max", "kernel 0 'plug_ok': min_cols 100 > max_cols 10"},
    {"plug_bad_device",
     "kernel 0 'plug_ok': device 7 is neither SML_DEVICE_CPU (0) nor SML_DEVICE_GPU (1)"},
    {"plug_bad_claim_baseline",
     "kernel 0 'plug_ok': the claim's baseline 'nonesuch' is not a registered kernel"},
    {"plug_bad_claim_shapes",
     "kernel 0 'plug_ok': the claim's shapes 'tiny' is not all, short, mid or long"},
    {"plug_bad_empty_table", "the kernel table is empty (count 0)"},
    {"plug_bad_claim_later",
     "kernel 0 'plug_ok': the claim's baseline 'plug_ok_b' is a later line of the table"},
    {"plug_bad_flags",
     "kernel 0 'plug_ok': flags 0x80 has bits outside SML_KERNEL_FLAGS_ALL (0x1)"},
};

/* The refusal of `lib` (a path), with `want` in the message, exit 2, the library named in the
 * message, nothing run (check's header line never printed) and nothing written. */
static void expect_refused(const char *lib, const char *want, const char *how) {
    empty_tmp();
    int rc;
    if (!strcmp(how, "env"))
        rc = run("cd '%s' && SML_LOAD='%s' %s check --kernel cpu_naive --op softmax --dtype fp32 "
                 "--cases 3 "
                 "--regressions none --save saved --json out.json",
                 TMP, lib, SML_CLI_PATH);
    else
        rc = run("cd '%s' && %s check --load '%s' --kernel cpu_naive --op softmax --dtype fp32 "
                 "--cases 3 "
                 "--regressions none --save saved --json out.json",
                 TMP, SML_CLI_PATH, lib);
    expect(rc == 2, "%s (%s): exit %d, want 2", lib, how, rc);
    expect(strstr(OUT, want) != NULL, "%s (%s): the message does not say '%s'", lib, how, want);
    expect(strstr(OUT, lib) != NULL, "%s (%s): the message does not name the library", lib, how);
    expect(strstr(OUT, "check: seed") == NULL && strstr(OUT, "cases in") == NULL,
           "%s (%s): the suite ran", lib, how);
    expect(entries(TMP) == 0, "%s (%s): %d files written into %s, want none", lib, how,
           entries(TMP), TMP);
}

static void part_refusals(void) {
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        expect_refused(plugin(BAD[i].lib), BAD[i].want, "--load");
        /* The message ends with where it came from. */
        expect_refused(plugin(BAD[i].lib), "(from SML_LOAD)", "env");
    }
    /* Not a shared library; no such file; a directory. */
    char text[600];
    snprintf(text, sizeof text, "%s.notalib.so", TMP);
    FILE *f = fopen(text, "w");
    if (f) {
        fputs("not an ELF file\n", f);
        fclose(f);
    }
    expect_refused(text, "not a loadable shared library", "--load");
    remove(text);
    expect_refused("/nonexistent/libnone.so", "cannot open: No such file or directory", "--load");
    expect_refused(SML_PLUGIN_DIR, "is a directory, not a shared library", "--load");
    /* A name another plugin took (the same table from another file). */
    empty_tmp();
    int rc =
        run("cd '%s' && %s check --load %s --load %s --kernel plug_ok --cases 3 --regressions none",
            TMP, SML_CLI_PATH, plugin("plug_ok"), plugin("plug_ok_twin"));
    char want[800];
    snprintf(want, sizeof want,
             "%s: kernel 0 'plug_ok': the name is taken by a registered kernel (%s)",
             plugin("plug_ok_twin"), plugin("plug_ok"));
    expect(rc == 2 && strstr(OUT, want) && !strstr(OUT, "check: seed"),
           "a second library with a registered name: exit %d (want 2), message '%s', nothing run",
           rc, want);
    rc = run("%s list --load", SML_CLI_PATH);
    expect(rc == 2 && strstr(OUT, "--load needs a value (valid: the path of a shared library"),
           "--load without a path: exit %d", rc);

    /* Every command that takes a kernel refuses a bad plugin before doing anything. */
    const char *bad = plugin("plug_bad_null_launch");
    const char *const CMDS[] = {
        "list",
        "check --input x.npy --kernel cpu_naive --save saved",
        "bench --backend cpu_naive --rows 4 --cols 8 --ledger L --json b.json",
        "replay nothing.json",
        "compare a.json b.json",
        "targets a.json --kernel cpu_naive",
    };
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) {
        empty_tmp();
        rc = run("cd '%s' && %s %s --load %s", TMP, SML_CLI_PATH, CMDS[i], bad);
        expect(
            rc == 2 && strstr(OUT, "launch is NULL") && entries(TMP) == 0,
            "%s with a bad plugin: exit %d (want 2), message 'launch is NULL', %d files (want 0)",
            CMDS[i], rc, entries(TMP));
        empty_tmp();
        rc = run("cd '%s' && SML_LOAD=%s %s %s", TMP, bad, SML_CLI_PATH, CMDS[i]);
        /* compare and targets run no kernel: SML_LOAD loads nothing for them. */
        int data_only = !strncmp(CMDS[i], "compare", 7) || !strncmp(CMDS[i], "targets", 7);
        expect(rc == 2 && (strstr(OUT, "launch is NULL") == NULL) == data_only && entries(TMP) == 0,
               "%s with a bad plugin in SML_LOAD: exit %d (want 2), %s, %d files (want 0)", CMDS[i],
               rc, data_only ? "the library must not be loaded" : "want 'launch is NULL'",
               entries(TMP));
    }
    /* --help loads nothing (a broken SML_LOAD cannot hide the help) and describes --load. */
    rc = run("SML_LOAD=%s %s check --help", bad, SML_CLI_PATH);
    expect(rc == 0 && strstr(OUT, "--load PATH"),
           "check --help with a bad SML_LOAD: exit %d, want 0 and --load described", rc);
}

/* ---- a correct plugin through everything --------------------------------------------------- */

static void part_suite(void) {
    const char *ok = plugin("plug_ok");
    int rc = run("%s list --load %s", SML_CLI_PATH, ok);
    char want[800];
    snprintf(want, sizeof want, "plugin kernel plug_ok from %s", ok);
    expect(rc == 0 && strstr(OUT, want) && strstr(OUT, "\nplug_ok    cpu  ready"),
           "list --load: exit %d, want 0, the kernel's row and '%s'", rc, want);
    rc = run("%s list --json --load=%s", SML_CLI_PATH, ok);
    snprintf(want, sizeof want, "\"origin\": \"%s\"", ok);
    expect(
        rc == 0 && strstr(OUT, want) && strstr(OUT, "\"origin\": null") &&
            strstr(OUT, "\"name\": \"plug_ok_b\", \"device\": \"cpu\"") &&
            strstr(OUT, "\"file\": null"),
        "list --json --load=: exit %d, want the origin, null for built-ins and a NULL file as null",
        rc);
    /* A line marked SML_KERNEL_FRAMEWORK is listed as a framework baseline, beside cudnn. */
    rc = run("%s list --load %s", SML_CLI_PATH, plugin("plug_fw"));
    expect(
        rc == 0 &&
            strstr(
                OUT,
                "framework baselines (targets measures the others against them): cudnn, plug_fw\n"),
        "list --load plug_fw: exit %d, want cudnn and plug_fw listed as framework baselines", rc);
    rc = run("%s list --json --load %s", SML_CLI_PATH, plugin("plug_fw"));
    expect(rc == 0 && strstr(OUT, "\"name\": \"cudnn\"") &&
               strstr(strstr(OUT, "\"name\": \"cudnn\""), "\"framework\": true}") &&
               strstr(OUT, "\"name\": \"plug_fw\"") && strstr(OUT, "\"name\": \"plug_fw_b\"") &&
               strstr(strstr(OUT, "\"name\": \"plug_fw\""), "\"framework\": true}") &&
               strstr(strstr(OUT, "\"name\": \"plug_fw_b\""), "\"framework\": false}"),
           "list --json --load plug_fw: exit %d, want \"framework\": true for cudnn and plug_fw, "
           "false for plug_fw_b",
           rc);
    rc = run("SML_LOAD=%s::%s %s list", ok, plugin("plug_nomax"), SML_CLI_PATH);
    expect(rc == 0 && strstr(OUT, "plugin kernel plug_ok from") &&
               strstr(OUT, "plugin kernel plug_nomax from"),
           "SML_LOAD with two libraries: exit %d", rc);
    /* The same library twice (env and flag, flag twice, via a relative path): loaded once. */
    rc = run("SML_LOAD=%s %s list --load %s --load %s/../lib/plug_ok.so", ok, SML_CLI_PATH, ok,
             SML_PLUGIN_DIR);
    const char *first = strstr(OUT, "plugin kernel plug_ok from");
    expect(rc == 0 && first && !strstr(first + 1, "plugin kernel plug_ok from"),
           "the same library loaded three ways: exit %d, want 0 and one plug_ok", rc);

    /* A plugin built against ABI version 1 (no flags in its lines) still loads and runs. */
    rc = run("%s check --load %s --kernel all --op softmax --dtype fp32 --cases 20", SML_CLI_PATH,
             plugin("plug_abi1"));
    expect(rc == 0 && strstr(OUT, "\nplug_abi1  cpu ") && strstr(OUT, "\nplug_abi1_b cpu "),
           "check --load of an ABI version 1 plugin: exit %d, want 0 and rows for both its lines",
           rc);

    /* The property suite on the plugin kernel: every property of every op. */
    rc = run("%s check --load %s --kernel plug_ok --cases 400 --seed 7", SML_CLI_PATH, ok);
    expect(rc == 0 && strstr(OUT, "\nplug_ok    cpu ") && strstr(OUT, "check: every property held"),
           "check --load --kernel plug_ok: exit %d, want 0 and its row", rc);
    /* --kernel all takes the plugin's kernels too (both lines of its table). */
    rc = run("%s check --load %s --kernel all --op softmax --dtype fp32 --cases 40", SML_CLI_PATH,
             ok);
    expect(rc == 0 && strstr(OUT, "\ncpu_naive  cpu ") && strstr(OUT, "\nplug_ok    cpu ") &&
               strstr(OUT, "\nplug_ok_b  cpu "),
           "check --kernel all --load: exit %d, want rows for cpu_naive, plug_ok and plug_ok_b",
           rc);

    /* check --input: the contract check on a user's tensor, with overflow-prone logits. */
    char x[600];
    snprintf(x, sizeof x, "%s/x.npy", TMP);
    enum { R = 4, C = 37 };
    float v[R * C];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < C; j++)
            v[r * C + j] = r == 0 ? 90.0f + 30.0f * sinf((float)(j * 7)) : (float)(j % 5) - 2.0f;
    char err[512];
    if (sml_npy_write_2d(x, SML_F32, R, C, v, err, sizeof err) != SML_OK) printf("note: %s\n", err);
    rc = run("%s check --input %s --load %s --kernel plug_ok --op softmax", SML_CLI_PATH, x, ok);
    expect(rc == 0 && strstr(OUT, "\nplug_ok    softmax         PASS"),
           "check --input --load plug_ok: exit %d, want 0", rc);
    rc = run("%s check --input %s --load %s --kernel plug_nomax --op softmax", SML_CLI_PATH, x,
             plugin("plug_nomax"));
    expect(rc == 1 && strstr(OUT, "\nplug_nomax softmax         FAIL"),
           "check --input --load plug_nomax on logits past 88.72: exit %d, want 1 and FAIL", rc);
}

/* ---- the planted bug, caught, shrunk, saved, replayed ------------------------------------- */

/* The text after `key` up to the end of its line, into buf. */
static int line_after(const char *key, char *buf, size_t n) {
    const char *p = strstr(OUT, key);
    if (!p) return 0;
    p += strlen(key);
    size_t k = 0;
    while (p[k] && p[k] != '\n' && k + 1 < n) {
        buf[k] = p[k];
        k++;
    }
    buf[k] = 0;
    return k > 0;
}

/* A command softmax-lab printed, run exactly as printed, from another directory, with the
 * softmax-lab under test first on PATH; its exit status. */
static int run_printed(const char *cmd) {
    char bindir[600];
    snprintf(bindir, sizeof bindir, "%s", SML_CLI_PATH);
    char *slash = strrchr(bindir, '/');
    if (slash) *slash = 0;
    return run("cd / && PATH='%s':\"$PATH\" %s", bindir, cmd);
}

/* The rerun line a failing run printed, run as printed: it fails again (exit 1, `fail` in its
 * output). `what` says which run printed it. */
static void rerun_fails_again(const char *rerun, const char *fail, const char *what) {
    int rc = run_printed(rerun);
    expect(rc == 1 && strstr(OUT, fail),
           "the printed rerun command%s: exit %d, want 1 and the FAIL again ('%s')", what, rc,
           fail);
}

/* A bug only the long profile's rows show a CPU kernel (plug_longrow): a --long run's rerun line
 * names --long, and as printed it fails again (without --long the same index and level draw a
 * case of six elements, which passes). */
static void planted_long_rows(void) {
    const char *bug = plugin("plug_longrow");
    int rc = run("%s check --long --load %s --kernel plug_longrow --op softmax --dtype fp32 "
                 "--cases 700 --seed 11 --props agreement --regressions none --no-shrink",
                 SML_CLI_PATH, bug);
    char rerun[4096] = "";
    line_after("  rerun: ", rerun, sizeof rerun);
    expect(rc == 1 && strstr(OUT, "FAIL plug_longrow softmax fp32") && strstr(rerun, " --long "),
           "check --long --load plug_longrow: exit %d, want 1, a FAIL and a rerun line naming "
           "--long ('%s')",
           rc, rerun);
    rerun_fails_again(rerun, "FAIL plug_longrow softmax fp32", " of a --long run");
}

/* A --strict failure within the kernel's declaration (h14_15: fp16 1 to 1.4 ulp off, declaring
 * 1.5): its rerun line names --strict and, as printed, fails again; its reproducer records the
 * judgment, so its printed replay and a check without --strict that replays it fail too. */
static void strict_rerun(void) {
    char saved[400];
    snprintf(saved, sizeof saved, "%s/strict", TMP);
    int rc =
        run("%s check --strict --load %s --kernel h14_15 --op softmax --dtype fp16 --cases 300 "
            "--seed 1 --props agreement --regressions none --no-shrink --save %s",
            SML_CLI_PATH, plugin("plug_h14_15"), saved);
    char rerun[4096] = "", replay[4096] = "";
    line_after("  rerun: ", rerun, sizeof rerun);
    line_after("  replay: ", replay, sizeof replay);
    expect(rc == 1 && strstr(rerun, " --strict "),
           "check --strict --load plug_h14_15: exit %d, want 1 and a rerun line naming --strict "
           "('%s')",
           rc, rerun);
    rerun_fails_again(rerun, "FAIL h14_15 softmax fp16", " of a --strict run");
    rc = run_printed(replay);
    expect(rc == 1 && strstr(OUT, "STILL FAILS") &&
               strstr(OUT, "as the --strict run that saved it"),
           "the printed replay command of a --strict run's reproducer ('%s'): exit %d, want 1, "
           "STILL FAILS and the strict judgment named",
           replay, rc);
    rc = run("%s check --load %s --kernel h14_15 --op softmax --dtype fp16 --cases 20 --seed 1 "
             "--regressions %s",
             SML_CLI_PATH, plugin("plug_h14_15"), saved);
    expect(rc == 1 && strstr(OUT, "by a --strict run, judged so) fails agreement again"),
           "check (not --strict) replaying a --strict run's reproducer: exit %d, want 1 and the "
           "reproducer failing as judged strictly",
           rc);
}

/* check --against under --long on a plugin LESS ACCURATE than its base (plug_sloppy against
 * cpu_naive): the printed "keep it" command loads the plugin and names --long, and as printed
 * (DIR given) it saves the reproducer. */
static void against_keep_it(void) {
    int rc = run("%s check --long --load %s --kernel plug_sloppy --against cpu_naive --op softmax "
                 "--dtype fp32 --cases 300 --seed 11 --regressions none",
                 SML_CLI_PATH, plugin("plug_sloppy"));
    char keep[4096] = "", want[800];
    line_after("keep it: ", keep, sizeof keep);
    snprintf(want, sizeof want, "softmax-lab check --load %s --long ", plugin("plug_sloppy"));
    expect(rc == 1 && strstr(OUT, "LESS ACCURATE") && strstr(keep, want) == keep,
           "check --long --against on plug_sloppy: exit %d, want 1, LESS ACCURATE and a keep-it "
           "command starting '%s' ('%s')",
           rc, want, keep);
    char *dir = strstr(keep, "--save DIR");
    if (!dir) return;
    char saved[400];
    snprintf(saved, sizeof saved, "%s/kept", TMP);
    snprintf(dir, sizeof keep - (size_t)(dir - keep), "--save %s", saved); /* DIR given */
    rc = run_printed(keep);
    expect(entries(saved) > 0,
           "the printed keep-it command (DIR: %s): exit %d, no reproducer saved", saved, rc);
}

static void part_planted(void) {
    const char *bug = plugin("plug_nomax");
    char saved[400];
    snprintf(saved, sizeof saved, "%s/saved", TMP);
    int corpus = entries("tests/regressions");
    int rc = run(
        "%s check --load %s --kernel plug_nomax --op softmax --dtype fp32 --cases 2000 --seed 1 "
        "--regressions none --save %s",
        SML_CLI_PATH, bug, saved);
    expect(rc == 1 && strstr(OUT, "FAIL plug_nomax softmax fp32: property") &&
               strstr(OUT, "shrunk in"),
           "check --load plug_nomax: exit %d, want 1 and a shrunk failure", rc);
    char replay[4096] = "", rerun[4096] = "", repro[2048] = "";
    line_after("  replay: ", replay, sizeof replay);
    line_after("  rerun: ", rerun, sizeof rerun);
    line_after("  reproducer: ", repro, sizeof repro);
    char want[800];
    snprintf(want, sizeof want, "softmax-lab replay --load %s %s/", bug, saved);
    expect(strstr(replay, want) == replay, "the printed replay command '%s' does not start '%s'",
           replay, want);
    snprintf(want, sizeof want, "softmax-lab check --load %s --kernel plug_nomax", bug);
    expect(strstr(rerun, want) == rerun, "the printed rerun command '%s' does not start '%s'",
           rerun, want);
    /* Saved where asked, never into the source tree; the reproducer records the library. */
    struct stat st;
    expect(repro[0] && strncmp(repro, saved, strlen(saved)) == 0 && stat(repro, &st) == 0,
           "the reproducer '%s' is not a file under %s", repro, saved);
    FILE *f = fopen(repro, "r");
    char json[16384] = "";
    if (f) {
        size_t n = fread(json, 1, sizeof json - 1, f);
        json[n] = 0;
        fclose(f);
    }
    snprintf(want, sizeof want, "\"load\": \"%s\"", bug);
    expect(strstr(json, want) != NULL, "the reproducer %s does not record %s", repro, want);
    expect(entries("tests/regressions") == corpus,
           "the run changed tests/regressions (%d entries, were %d)", entries("tests/regressions"),
           corpus);

    /* The printed commands, exactly as printed, from another directory, softmax-lab on PATH. */
    rc = run_printed(replay);
    expect(rc == 1 && strstr(OUT, "STILL FAILS"),
           "the printed replay command: exit %d, want 1 (STILL FAILS)", rc);
    rerun_fails_again(rerun, "FAIL plug_nomax softmax fp32", "");
    /* A reproducer is data: alone, replay names the library and the command, exit 2. */
    rc = run("cd / && %s replay %s", SML_CLI_PATH, repro);
    snprintf(want, sizeof want, "softmax-lab replay --load %.380s %.380s", bug, repro);
    expect(rc == 2 && strstr(OUT, want) && !strstr(OUT, "STILL FAILS"),
           "replay without --load: exit %d, want 2, nothing run and the command '%s'", rc, want);
    /* With --trust-reproducer it loads the library the reproducer records. */
    rc = run("cd / && %s replay --trust-reproducer %s", SML_CLI_PATH, repro);
    snprintf(want, sizeof want, "kernel plug_nomax from %s", bug);
    expect(rc == 1 && strstr(OUT, "STILL FAILS") && strstr(OUT, want),
           "replay --trust-reproducer: exit %d, want 1, STILL FAILS and '%s'", rc, want);
    /* --load overrides it: the fixed build of the same kernel passes. */
    rc = run("%s replay --load %s %s", SML_CLI_PATH, plugin("plug_nomax_fixed"), repro);
    snprintf(want, sizeof want, "kernel plug_nomax from %s", plugin("plug_nomax_fixed"));
    expect(rc == 0 && strstr(OUT, "passes now") && strstr(OUT, want),
           "replay --load the fixed plugin: exit %d, want 0, passes now and '%s'", rc, want);
    /* A recorded library that is gone: exit 2 with the field named. */
    char moved[2100];
    snprintf(moved, sizeof moved, "%s/moved.json", saved);
    run("sed 's|\"load\": \"[^\"]*\"|\"load\": \"/nonexistent/plug_nomax.so\"|' %s > %s", repro,
        moved);
    rc = run("%s replay --trust-reproducer %s", SML_CLI_PATH, moved);
    expect(
        rc == 2 &&
            strstr(
                OUT,
                "the library the reproducer names (load): /nonexistent/plug_nomax.so: cannot open"),
        "replay of a reproducer whose library is gone: exit %d, want 2 and the load field named",
        rc);
    planted_long_rows();
    strict_rerun();
    against_keep_it();
}

/* ---- bench ------------------------------------------------------------------------------- */

static void part_bench(void) {
    empty_tmp();
    int rc =
        run("cd '%s' && %s bench --load %s --backend plug_ok --rows 256 --cols 4096 --dtype fp32 "
            "--min-samples 10 --max-seconds 0.3 --ledger L --quiet",
            TMP, SML_CLI_PATH, plugin("plug_ok"));
    expect(rc == 0 && strstr(OUT, "\n  plug_ok ") && strstr(OUT, "cpu_naive*"),
           "bench --load --backend plug_ok: exit %d, want 0, its row and cpu_naive as baseline",
           rc);
    /* The decision names the claim from the plugin's table and decides it. */
    expect(strstr(OUT, "Claim: >= 0.25x over cpu_naive on all shapes") &&
               !strstr(OUT, "plug_ok      Measured"),
           "bench: the claim '>= 0.25x cpu_naive' is not evaluated");
    char ledger[400];
    snprintf(ledger, sizeof ledger, "%s/L", TMP);
    expect(entries(ledger) > 0, "bench wrote no ledger under %s", ledger);
    /* A kernel whose table line leaves file NULL: the ledger names its library instead. */
    empty_tmp();
    rc = run("cd '%s' && %s bench --load %s --backend plug_ok_b --rows 8 --cols 64 --dtype fp32 "
             "--min-samples 3 --max-seconds 0.02 --ledger L --quiet && cat L/custom_softmax.md",
             TMP, SML_CLI_PATH, plugin("plug_ok"));
    char want[700];
    snprintf(want, sizeof want, "## plug_ok_b: Measured\n\n`%s`.", plugin("plug_ok"));
    expect(rc == 0 && strstr(OUT, want) && !strstr(OUT, "(null)"),
           "bench of a kernel with a NULL file: exit %d, want 0 and the ledger naming '%s'", rc,
           plugin("plug_ok"));

    /* A line marked SML_KERNEL_FRAMEWORK: its ledger record says "framework": true, and the
     * other kernels' records false. */
    empty_tmp();
    rc = run(
        "cd '%s' && %s bench --load %s --backend plug_fw,plug_fw_b --rows 8 --cols 64 --dtype fp32 "
        "--min-samples 3 --max-seconds 0.02 --json L.json --quiet",
        TMP, SML_CLI_PATH, plugin("plug_fw"));
    char lpath[400], err[256];
    snprintf(lpath, sizeof lpath, "%s/L.json", TMP);
    sml_json *doc = NULL;
    int fw = -1, other = -1, naive = -1;
    if (sml_json_parse_file(lpath, &doc, err, sizeof err) == SML_OK) {
        const sml_json *recs = sml_json_get(doc, "records");
        for (size_t i = 0; i < sml_json_len(recs); i++) {
            const char *k = sml_json_str(sml_json_get(sml_json_at(recs, i), "kernel"));
            const sml_json *f = sml_json_get(sml_json_at(recs, i), "framework");
            int *dst = !k                        ? NULL
                       : !strcmp(k, "plug_fw")   ? &fw
                       : !strcmp(k, "plug_fw_b") ? &other
                       : !strcmp(k, "cpu_naive") ? &naive
                                                 : NULL;
            if (dst && f && f->type == SML_JSON_BOOL) *dst = f->boolean;
        }
    }
    const char *schema = sml_json_str(sml_json_get(doc, "schema"));
    expect(rc == 0 && fw == 1 && other == 0 && naive == 0 && schema &&
               !strcmp(schema, "softmax-lab-ledger/2"),
           "bench of a framework-baseline plugin: exit %d, want 0, a softmax-lab-ledger/2 ledger "
           "with plug_fw "
           "\"framework\": true, plug_fw_b and cpu_naive false (got %d, %d, %d)",
           rc, fw, other, naive);
    sml_json_free(doc);

    /* A claim it misses fails --gate (however noisy the timing: noise never turns a row below
     * the claim into a pass, bench/decide.c). */
    empty_tmp();
    rc = run(
        "cd '%s' && %s bench --load %s --backend plug_boast --rows 256 --cols 4096 --dtype fp32 "
        "--min-samples 10 --max-seconds 0.3 --ledger L --quiet --gate",
        TMP, SML_CLI_PATH, plugin("plug_boast"));
    expect(rc == 1 &&
               (strstr(OUT, "plug_boast   Rejected   Claim: >= 1000.00x over cpu_naive") ||
                strstr(OUT, "plug_boast   Caveated   Claim: >= 1000.00x over cpu_naive")) &&
               strstr(OUT, "gate: 1 kernel(s) miss their claim"),
           "bench --gate on a claim of 1000x: exit %d, want 1, the claim Rejected or Caveated and "
           "missed",
           rc);

    /* A kernel the run calls LESS ACCURATE fails --gate though its claim is Supported, as
     * check --against does; --allow-less-accurate reports it without failing. */
    empty_tmp();
    rc = run(
        "cd '%s' && %s bench --load %s --backend plug_sloppy --rows 64 --cols 1024 --dtype fp32 "
        "--min-samples 3 --max-seconds 0.05 --ledger L --quiet --gate",
        TMP, SML_CLI_PATH, plugin("plug_sloppy"));
    expect(rc == 1 && strstr(OUT, "LESS ACCURATE vs cpu_naive") &&
               strstr(OUT, "gate: plug_sloppy is LESS ACCURATE"),
           "bench --gate on a kernel LESS ACCURATE than its baseline: exit %d, want 1", rc);
    empty_tmp();
    rc = run(
        "cd '%s' && %s bench --load %s --backend plug_sloppy --rows 64 --cols 1024 --dtype fp32 "
        "--min-samples 3 --max-seconds 0.05 --ledger L --quiet --gate --allow-less-accurate",
        TMP, SML_CLI_PATH, plugin("plug_sloppy"));
    /* (A machine loaded enough to miss the 0.25x claim fails the gate for that reason only.) */
    expect((rc == 0 || (rc == 1 && strstr(OUT, "gate: 1 kernel(s) miss their claim"))) &&
               strstr(OUT, "allowed by --allow-less-accurate"),
           "bench --gate --allow-less-accurate on a LESS ACCURATE kernel: exit %d, want 0", rc);

    /* A margin is a tolerance for noise, not a discount: bounded by the rule targets uses. */
    empty_tmp();
    rc = run("cd '%s' && %s bench --load %s --backend plug_boast --rows 8 --cols 64 --margin 0.9 "
             "--gate --ledger L",
             TMP, SML_CLI_PATH, plugin("plug_boast"));
    expect(rc == 2 && strstr(OUT, "bad value for --margin: '0.9' (valid: 0 to 0.10") &&
               entries(TMP) == 0,
           "bench --margin 0.9: exit %d, want 2 naming --margin, nothing written", rc);
}

/* ---- the CUDA plugin on a GPU --------------------------------------------------------------- */

static int part_gpu(void) {
#if !SML_HAVE_CUDA_PLUGIN
    printf("SKIP test_plugins: built without CUDA, no CUDA plugin\n");
    return SML_TEST_SKIP;
#else
    int rc = sml_test_require_gpu("test_plugins");
    if (rc) return rc;
    const char *cu = plugin("plug_cuda");
    rc = run("%s list --load %s", SML_CLI_PATH, cu);
    expect(rc == 0 && strstr(OUT, "\nplug_cuda  gpu  ready"),
           "list --load plug_cuda: exit %d, want a ready row", rc);
    rc = run("%s check --load %s --kernel plug_cuda --cases 3000 --save %s/saved", SML_CLI_PATH, cu,
             TMP);
    expect(rc == 0 && strstr(OUT, "\nplug_cuda  gpu ") && strstr(OUT, "check: every property held"),
           "check --load plug_cuda: exit %d, want 0", rc);
    empty_tmp();
    rc = run("cd '%s' && %s bench --load %s --backend plug_cuda --sweep seeds --dtype fp32 "
             "--ledger L --quiet",
             TMP, SML_CLI_PATH, cu);
    expect(rc == 0 && strstr(OUT, "\n  plug_cuda ") &&
               strstr(OUT, "Claim: >= 1.00x over naive on all shapes") &&
               !strstr(OUT, "plug_cuda    Measured"),
           "bench --load plug_cuda: exit %d, want 0, its rows and its claim evaluated", rc);
    return 0;
#endif
}

/* ---- declared deviations ------------------------------------------------------------------ */

/* The check JSON's first run's field `key` (a number), or NaN. */
static double run_number(const char *json_path, const char *key) {
    sml_json *doc = NULL;
    char err[256];
    double v = NAN;
    if (sml_json_parse_file(json_path, &doc, err, sizeof err) == SML_OK)
        v = sml_json_num(sml_json_get(sml_json_at(sml_json_get(doc, "runs"), 0), key), NAN);
    sml_json_free(doc);
    return v;
}

static void part_deviation(void) {
    /* Garbage (0.5 everywhere) under a label only (an ABI 2 plugin): the words excuse nothing,
     * and check says so and how to declare bounds. */
    int rc = run("%s check --load %s --kernel kd_half --op softmax --dtype fp32 --cases 100",
                 SML_CLI_PATH, plugin("plug_kd_half"));
    expect(rc == 1 && strstr(OUT, "FAIL kd_half softmax fp32") &&
               strstr(OUT, "note: its known_deviation text (\"fp32 results not correctly rounded "
                           "(<= 2 ulp)\") declares nothing the checker can apply, so it excuses "
                           "nothing: declare the deviation's bounds in sml_kernel.deviation") &&
               !strstr(OUT, "every property held"),
           "garbage with a known_deviation label: exit %d, want 1, FAIL and the label's note", rc);
    rc = run("%s list --load %s", SML_CLI_PATH, plugin("plug_kd_half"));
    expect(rc == 0 && strstr(OUT, "kd_half: its known_deviation text (\"fp32 results"),
           "list of a label-only plugin: exit %d, want the note", rc);
    /* The same garbage declaring a bound it cannot keep: a FAIL naming the declaration. */
    rc = run("%s check --load %s --kernel kd_half3 --op softmax --dtype fp32 --cases 100",
             SML_CLI_PATH, plugin("plug_kd_half3"));
    expect(rc == 1 && strstr(OUT, "outside its declared deviation (softmax fp32 <= 2 ulp): row ") &&
               strstr(OUT, "FAIL: its declared deviation (softmax fp32 <= 2 ulp) does not cover"),
           "garbage declaring 2 ulp: exit %d, want 1 and a FAIL naming the declaration", rc);

    /* A 16-bit softmax 1 to 1.4 ulp off: passes within a 1.5-ulp declaration, and the largest
     * error it excused is that 1 to 1.4 ulp. */
    char json[400];
    snprintf(json, sizeof json, "%s/h14.json", TMP);
    rc = run("%s check --load %s --kernel h14_15 --cases 300 --json %s", SML_CLI_PATH,
             plugin("plug_h14_15"), json);
    double worst = run_number(json, "excused_worst_ulps");
    expect(rc == 0 &&
               strstr(OUT, "PASS within its declared deviation: softmax fp16 <= 1.5 ulp (") &&
               strstr(OUT, "check: every property held on every planned case of every kernel that "
                           "ran, on h14_15 "
                           "within its declared deviation") &&
               worst > 1.3 && worst <= 1.4 + 1e-6 && run_number(json, "excused") > 0,
           "1.4 ulp off, 1.5 declared: exit %d, want 0, the verdict line naming the declaration "
           "and the largest excused error in (1.3, 1.4] ulp (got %.9g)",
           rc, worst);
    rc = run("%s list --json --load %s", SML_CLI_PATH, plugin("plug_h14_15"));
    expect(rc == 0 && strstr(OUT, "\"deviation\": \"softmax fp16 <= 1.5 ulp\""),
           "list --json: exit %d, want the declaration", rc);
    /* Strict: the contract itself, by flag or environment. */
    rc = run("%s check --load %s --kernel h14_15 --cases 100 --strict", SML_CLI_PATH,
             plugin("plug_h14_15"));
    expect(rc == 1 && strstr(OUT, "STRICT: held to the contract itself; its declared deviation "
                                  "(softmax fp16 <= 1.5 ulp) was not applied"),
           "--strict on a 1.5-ulp declaration: exit %d, want 1", rc);
    rc = run("SML_PROP_STRICT=1 %s check --load %s --kernel h14_15 --cases 100", SML_CLI_PATH,
             plugin("plug_h14_15"));
    expect(rc == 1, "SML_PROP_STRICT=1 on a 1.5-ulp declaration: exit %d, want 1", rc);
    /* No declaration, or one tighter than the kernel: FAIL. */
    rc = run("%s check --load %s --kernel h14_none --cases 100", SML_CLI_PATH,
             plugin("plug_h14_none"));
    expect(rc == 1 && strstr(OUT, "FAIL h14_none softmax fp16"),
           "1.4 ulp off, nothing declared: exit %d, want 1", rc);
    rc = run("%s check --load %s --kernel h14_10 --cases 100", SML_CLI_PATH, plugin("plug_h14_10"));
    expect(rc == 1 && strstr(OUT, "outside its declared deviation (softmax fp16 <= 1 ulp): row "),
           "1.4 ulp off, 1.0 declared: exit %d, want 1 and a FAIL naming the declaration", rc);
    /* Each judgment on its own: the elements (agreement) and the row sums. */
    rc = run("%s check --load %s --kernel h14_10 --cases 100 --props agreement", SML_CLI_PATH,
             plugin("plug_h14_10"));
    expect(rc == 1 && strstr(OUT, "outside its declared deviation (softmax fp16 <= 1 ulp): row ") &&
               strstr(OUT, " ulp, ") && strstr(OUT, " x the contract's bound"),
           "1.4 ulp off, 1.0 declared, agreement: exit %d, want 1 naming the element's ulps", rc);
    rc = run("%s check --load %s --kernel h14_10 --cases 100 --props row_sum", SML_CLI_PATH,
             plugin("plug_h14_10"));
    expect(rc == 1 && strstr(OUT, "outside its declared deviation (softmax fp16 <= 1 ulp): row ") &&
               strstr(OUT, "softmax sums to"),
           "1.4 ulp off, 1.0 declared, row_sum: exit %d, want 1 naming the row's sum", rc);
    rc = run("%s check --load %s --kernel h14_15 --cases 100 --props agreement,row_sum",
             SML_CLI_PATH, plugin("plug_h14_15"));
    expect(rc == 0 && strstr(OUT, "agreement ") && strstr(OUT, "row_sum "),
           "1.4 ulp off, 1.5 declared, agreement and row_sum: exit %d, want 0, both excused", rc);
    /* Named exceptions: each covers its rule, within the value bound; none, nothing. */
    rc = run("%s check --load %s --kernel neginf_exc --cases 300", SML_CLI_PATH,
             plugin("plug_neginf_exc"));
    expect(rc == 0 &&
               strstr(OUT, "PASS within its declared deviation: all -inf rows give 0 / -inf (") &&
               strstr(OUT, "special_values "),
           "0 for an all -inf row, declared: exit %d, want 0 with special_values excused", rc);
    rc = run("%s check --load %s --kernel neginf --cases 300", SML_CLI_PATH, plugin("plug_neginf"));
    expect(rc == 1 && strstr(OUT, "FAIL neginf softmax fp32: property special_values failed"),
           "0 for an all -inf row, undeclared: exit %d, want 1 and special_values failed", rc);
    rc = run("%s check --load %s --kernel shiftvar_exc --cases 300 --props shift", SML_CLI_PATH,
             plugin("plug_shiftvar_exc"));
    expect(rc == 0 &&
               strstr(OUT, "PASS within its declared deviation: log_softmax fp32 <= 3 ulp; "
                           "log_softmax not bitwise shift-invariant (") &&
               strstr(OUT, ": shift "),
           "shift bits declared, 1 ulp off: exit %d, want 0 with shift excused", rc);
    rc = run("%s check --load %s --kernel shiftvar --cases 300 --props shift", SML_CLI_PATH,
             plugin("plug_shiftvar"));
    expect(rc == 1 && strstr(OUT, "change the output bits"),
           "shift bits undeclared: exit %d, want 1 and shift failed", rc);
    rc = run("%s check --load %s --kernel shiftfar_exc --cases 300 --props shift", SML_CLI_PATH,
             plugin("plug_shiftfar_exc"));
    expect(
        rc == 1 && strstr(OUT, "change the output bits") &&
            strstr(OUT, "output: outside its declared deviation (log_softmax fp32 <= 3 ulp; "),
        "shift bits declared, the shifted output far off: exit %d, want 1 naming the value bound",
        rc);
    /* Row bits by address: excused only with the exception, and only within the value bound. */
    rc = run("%s check --load %s --kernel rowbits_exc --cases 300 --props row_independence",
             SML_CLI_PATH, plugin("plug_rowbits_exc"));
    expect(rc == 0 &&
               strstr(OUT, "PASS within its declared deviation: softmax fp32 <= 3 ulp; a "
                           "row's bits depend on its place in the batch (") &&
               strstr(OUT, "row_independence "),
           "row bits by address declared, an ulp off: exit %d, want 0 with row_independence "
           "excused",
           rc);
    rc = run("%s check --load %s --kernel rowbits --cases 300 --props row_independence",
             SML_CLI_PATH, plugin("plug_rowbits"));
    expect(rc == 1 && strstr(OUT, "in reverse order gives different bits"),
           "row bits by address undeclared: exit %d, want 1 and row_independence failed", rc);
    rc = run("%s check --load %s --kernel rowfar_exc --cases 300 --props row_independence",
             SML_CLI_PATH, plugin("plug_rowfar_exc"));
    expect(rc == 1 && strstr(OUT, "in reverse order gives different bits") &&
               strstr(OUT, "outside its declared deviation (softmax fp32 <= 3 ulp; "),
           "row bits declared, the moved rows far off: exit %d, want 1 naming the value bound", rc);
    /* The bench: KNOWN-DEV within the declaration; WRONG (exit 1) outside it, naming it. */
    rc = run("%s bench --load %s --backend h14_15 --rows 64 --cols 1000 --dtype fp16 --op softmax "
             "--ledger %s",
             SML_CLI_PATH, plugin("plug_h14_15"), TMP);
    expect(rc == 0 && strstr(OUT, " KNOWN-DEV\n") &&
               strstr(OUT, "within its declared deviation (softmax fp16 <= 1.5 ulp): "),
           "bench, 1.4 ulp off, 1.5 declared: exit %d, want 0 and KNOWN-DEV naming it", rc);
    rc = run("%s bench --load %s --backend h14_10 --rows 64 --cols 1000 --dtype fp16 --op softmax "
             "--ledger %s",
             SML_CLI_PATH, plugin("plug_h14_10"), TMP);
    expect(rc == 1 && strstr(OUT, " WRONG\n") &&
               strstr(OUT, "outside its declared deviation (softmax fp16 <= 1 ulp): row "),
           "bench, 1.4 ulp off, 1.0 declared: exit %d, want 1 and WRONG naming the declaration",
           rc);
    rc = run("%s check --load %s --kernel kd_half3 --op softmax --dtype fp32 --cases 100 --props "
             "agreement",
             SML_CLI_PATH, plugin("plug_kd_half3"));
    expect(rc == 1 && strstr(OUT, "outside its declared deviation (softmax fp32 <= 2 ulp): row ") &&
               strstr(OUT, " x the contract's bound"),
           "garbage declaring 2 ulp, agreement: exit %d, want 1 naming the element", rc);
}

int main(int argc, char **argv) {
    const char *part = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--part") && i + 1 < argc)
            part = argv[++i];
        else {
            fprintf(stderr, "usage: %s --part refusals|suite|planted|deviation|bench|gpu\n",
                    argv[0]);
            return 2;
        }
    }
    if (!part) part = "refusals";
    if (access(SML_CLI_PATH, X_OK) != 0) {
        printf("FAIL test_plugins: no softmax-lab binary at %s\n", SML_CLI_PATH);
        return 1;
    }
    snprintf(TMP, sizeof TMP, "/tmp/sml_test_plugins_XXXXXX");
    if (!mkdtemp(TMP)) {
        printf("FAIL test_plugins: mkdtemp failed\n");
        return 1;
    }
    int rc = 0;
    if (!strcmp(part, "refusals"))
        part_refusals();
    else if (!strcmp(part, "suite"))
        part_suite();
    else if (!strcmp(part, "planted"))
        part_planted();
    else if (!strcmp(part, "deviation"))
        part_deviation();
    else if (!strcmp(part, "bench"))
        part_bench();
    else if (!strcmp(part, "gpu"))
        rc = part_gpu();
    else {
        fprintf(stderr, "%s: unknown part '%s'\n", argv[0], part);
        return 2;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    if (!T.failed && system(cmd) != 0) printf("note: could not remove %s\n", TMP);
    if (rc) return rc;
    return sml_tally_finish(&T);
}
