/* test_isolation.c: planted kernels that crash, exit, hang or write past their buffers
 * (planted_cpu.c) run by `softmax-lab check` beside a right kernel (plug_ok). For each:
 * exit 1, a FAIL line naming the kernel and the cause, the case shrunk to 1x8 (each candidate
 * that ends its worker runs the next in a fresh one), a reproducer, `replay` of it exiting 1
 * with the same cause, and plug_ok passing with the case count it has alone. A hang is
 * confirmed alone under ten times --case-timeout and is not shrunk. cudaerr (a kernel
 * returning SML_ERR_CUDA) is an ERROR; its worker takes no launch after it, so the case
 * shrinks in fresh workers to 1x8, and its reproducer replays that case. slow (3.7 s a case,
 * --seconds 1: launches are stopped at 3 s) is INCOMPLETE (exit 4), never a pass or a FAIL.
 *
 * --command: the same plants in the commands that run kernels outside the suite's jobs
 * (check --input, check --against, bench, softmax-lab-edge-shapes): exit 1 and a FAIL line
 * naming the kernel and the cause; the bench still writes its ledger, the plant's rows
 * saying why and plug_ok's measured; the edge harness goes on without the kernel.
 *
 *   test_isolation --plant NAME      (exit0 uexit0 abort segv loop write4k write1m readx
 *                                     cudaerr slow ctor)
 *   test_isolation --command NAME    (exit0 segv loop forger) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "softmax_lab.h"
#include "test_support.h"

static sml_tally T = {"test_isolation", 0, 0, 0};
static char TMP[256];
static char CMD[8192];
static char OUT[1 << 17];

#define run(...)        sml_shell(CMD, sizeof CMD, OUT, sizeof OUT, 0, __VA_ARGS__)
#define expect(ok, ...) sml_expect(&T, (ok), CMD, 1024, OUT, 6000, __VA_ARGS__)

static const struct {
    const char *plant, *cause;
} PLANTS[] = {
    {"exit0", "exited with status 0 during case "},
    {"uexit0", "exited with status 0 during case "},
    {"abort", "SIGABRT during case "},
    {"segv", "SIGSEGV during case "},
    {"loop", "did not finish case "},
    {"write4k", "wrote past the end of out by 4096 bytes (SIGSEGV) during case "},
    {"write1m", "wrote past the end of out by 1048576 bytes (SIGSEGV) during case "},
    {"readx", "read past the end of x by 4096 bytes (SIGSEGV) during case "},
};

#define CASES "40"

/* The value after `key` on its line of OUT, into buf. */
static int after(const char *key, char *buf, size_t n) {
    const char *p = strstr(OUT, key);
    if (!p) return 0;
    p += strlen(key);
    size_t i = 0;
    while (p[i] && p[i] != '\n' && p[i] != ' ' && i + 1 < n) buf[i] = p[i], i++;
    buf[i] = 0;
    return i > 0;
}

static void plant_test(const char *plant, const char *cause) {
    char lib[600], ok[600], name[64], want[256], repro[1024];
    snprintf(lib, sizeof lib, "%s/planted_%s.so", SML_ISOLATION_DIR, plant);
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    snprintf(name, sizeof name, "planted_%s", plant);
    /* A hang costs its deadline and ten times it alone: a short deadline keeps the test short. */
    const char *timeout = strcmp(plant, "loop") ? "" : " --case-timeout 0.5";
    int rc = run("cd '%s' && rm -rf saved && %s check --load %s --load %s --kernel %s,plug_ok --op "
                 "softmax --dtype fp32 "
                 "--cases " CASES " --seconds 60 --regressions none --save saved%s",
                 TMP, SML_CLI_PATH, lib, ok, name, timeout);
    expect(rc == 1, "%s: check exit %d, want 1", name, rc);
    snprintf(want, sizeof want, "FAIL %s softmax fp32: the kernel's worker %s", name, cause);
    expect(strstr(OUT, want) != NULL, "%s: no line '%s'", name, want);
    snprintf(want, sizeof want, "plug_ok    cpu        " CASES " ");
    expect(strstr(OUT, want) && strstr(strstr(OUT, want), "pass"),
           "%s: plug_ok did not pass with " CASES " cases", name);
    /* The plants misbehave on 8 columns or more: 1x8 is the least. A hang is not shrunk (each
     * candidate would cost a deadline). */
    if (strcmp(plant, "loop"))
        expect(strstr(OUT, " to 1x8, ending the same way") != NULL, "%s: not shrunk to 1x8", name);
    expect(after("  reproducer: ", repro, sizeof repro), "%s: no reproducer printed", name);
    if (!repro[0]) return;
    /* A reproducer is data: without --load it names the library and the command, exit 2. */
    rc = run("cd '%s' && %s replay %s", TMP, SML_CLI_PATH, repro);
    expect(rc == 2 && strstr(OUT, lib) && strstr(OUT, "replay --load"),
           "%s: replay without --load: exit %d (want 2, the library and the command named)", name,
           rc);
    rc = run("cd '%s' && %s replay --load %s %s%s", TMP, SML_CLI_PATH, lib, repro, timeout);
    expect(rc == 1, "%s: replay exit %d, want 1", name, rc);
    /* The replay names the same cause, for "the replayed case". */
    char stem[128];
    snprintf(stem, sizeof stem, "%s", cause);
    char *during = strstr(stem, "during case");
    if (during) *during = 0;
    if (!strncmp(stem, "did not finish case", 19))
        snprintf(stem, sizeof stem, "did not finish the replayed case");
    expect(strstr(OUT, "STILL FAILS") && strstr(OUT, stem), "%s: replay does not fail with '%s'",
           name, stem);
}

/* A kernel that returns SML_ERR_CUDA (as one does after a fault that may have lost the
 * context): the engine stops its job there without shrinking; the supervisor shrinks the case
 * in fresh workers to the least that ends in the same error, and the reproducer replays it. */
static void cuda_error_test(void) {
    char lib[600], ok[600], repro[1024];
    snprintf(lib, sizeof lib, "%s/planted_cudaerr.so", SML_ISOLATION_DIR);
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    int rc = run("cd '%s' && rm -rf saved && %s check --load %s --load %s --kernel "
                 "planted_cudaerr,plug_ok --op softmax --dtype fp32 --cases " CASES
                 " --seconds 60 --regressions none --save saved",
                 TMP, SML_CLI_PATH, lib, ok);
    expect(rc == 1 && strstr(OUT, "ERROR planted_cudaerr softmax fp32: property "),
           "cudaerr: check exit %d (want 1) and an ERROR line naming it", rc);
    expect(strstr(OUT, " to 1x8: planted_cudaerr returned ") != NULL,
           "cudaerr: not shrunk in fresh workers to 1x8 (its least)");
    expect(strstr(OUT, "plug_ok    cpu        " CASES " ") &&
               strstr(strstr(OUT, "plug_ok    cpu        " CASES " "), "pass"),
           "cudaerr: plug_ok did not pass with " CASES " cases");
    const char *last = NULL;
    for (const char *p = strstr(OUT, "  reproducer: "); p; p = strstr(p + 1, "  reproducer: "))
        last = p;
    expect(last != NULL, "cudaerr: no reproducer printed");
    if (!last) return;
    size_t i = 0;
    for (last += 14; last[i] && last[i] != '\n' && i + 1 < sizeof repro; i++) repro[i] = last[i];
    repro[i] = 0;
    rc = run("cd '%s' && %s replay --load %s %s", TMP, SML_CLI_PATH, lib, repro);
    expect(rc == 1 && strstr(OUT, "1x8") && strstr(OUT, "a CUDA call or kernel launch failed"),
           "cudaerr: the reproducer does not replay a 1x8 case to the same error (exit %d)", rc);
}

/* A kernel slower than the run's cap but within its case's deadline (3.7 s a case of 8
 * columns or more; --seconds 1): the worker is stopped at the cap, and the case in flight is
 * no verdict; the run did not do its cases, so it is INCOMPLETE (exit 4), not a pass. */
static void budget_test(void) {
    char lib[600], ok[600];
    snprintf(lib, sizeof lib, "%s/planted_slow.so", SML_ISOLATION_DIR);
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    int rc = run("cd '%s' && %s check --load %s --load %s --kernel planted_slow,plug_ok --op "
                 "softmax --dtype fp32 --cases " CASES " --seconds 1 --regressions none",
                 TMP, SML_CLI_PATH, lib, ok);
    expect(rc == 4, "slow: check exit %d, want 4 (INCOMPLETE: the cap's end is no verdict)", rc);
    expect(strstr(OUT, "INCOMPLETE: ran ") &&
               strstr(OUT, "the run's time cap ended it during case "),
           "slow: no INCOMPLETE line naming the case the cap ended");
    expect(strstr(OUT, "FAIL") == NULL, "slow: a FAIL line");
}

/* The supervisor of `check`, and the edge-shape harness, never load a plugin's library (its
 * table is read in a child, the workers load it): the constructor of planted_ctor logs every
 * process id it runs in, and the supervisor's (the shell's $$, which exec keeps) is not among
 * them; with --in-process it is, which shows the log would see it. */
static void ctor_test(void) {
    char lib[600], log[300];
    snprintf(lib, sizeof lib, "%s/planted_ctor.so", SML_ISOLATION_DIR);
    snprintf(log, sizeof log, "%s/ctor.log", TMP);
    for (int run_no = 0; run_no < 4; run_no++) {
        int in_process = run_no & 1, edge = run_no >= 2;
        unlink(log);
        char cmd[1400];
        if (edge)
            snprintf(cmd, sizeof cmd,
                     "%s --cpu --load %s --kernel planted_ctor --rows 3 --cols 40 --seed 1",
                     SML_EDGE_PATH, lib);
        else
            snprintf(cmd, sizeof cmd,
                     "%s check --load %s --kernel planted_ctor --op softmax --dtype fp32 --cases "
                     "20 --regressions none",
                     SML_CLI_PATH, lib);
        int rc = run("sh -c 'echo supervisor $$; SML_TEST_CTOR_LOG=%s exec %s%s'", log, cmd,
                     in_process ? " --in-process" : "");
        long sup = 0, pid, n = 0, seen = 0;
        const char *s = strstr(OUT, "supervisor ");
        if (s) sup = atol(s + 11);
        FILE *f = fopen(log, "r");
        while (f && fscanf(f, "%ld", &pid) == 1) n++, seen |= pid == sup;
        if (f) fclose(f);
        expect(rc == 0 && sup > 0, "ctor: check%s exit %d (want 0)",
               in_process ? " --in-process" : "", rc);
        if (in_process)
            expect(seen,
                   "ctor: --in-process: the supervisor (%ld) is not among the %ld processes "
                   "that loaded the library: the test cannot see a load",
                   sup, n);
        else
            expect(n > 0 && !seen,
                   "ctor: the supervisor (%ld) loaded the plugin's library, or nothing did (%ld "
                   "loads logged)",
                   sup, n);
    }
}

/* The edge-shape harness beside a kernel that writes forged frames on every socket it finds
 * and exits (tests/reliability, rel_forger): a FAIL of that kernel, never a pass. */
static void edge_forger_test(void) {
    char lib[600], want[256];
    snprintf(lib, sizeof lib, "%s/rel_forger.so", SML_RELIABILITY_DIR);
    int rc = run("%s --cpu --load %s --kernel rel_forger --no-huge", SML_EDGE_PATH, lib);
    snprintf(want, sizeof want, "rel_forger softmax fp32 rows=");
    expect(rc == 1 && strstr(OUT, "FAIL softmax-lab-edge-shapes: ") && strstr(OUT, want) &&
               strstr(OUT, "ended its worker"),
           "edge forger: exit %d (want 1) and a FAIL of rel_forger", rc);
}

/* A 64x256 fp32 .npy of small values at path: 0 ok. */
static int write_npy(const char *path) {
    char head[128];
    int n = snprintf(head, sizeof head,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (64, 256), }");
    while ((10 + n + 1) % 64) head[n++] = ' ';
    head[n++] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(head, 1, (size_t)n, f) == (size_t)n;
    for (int i = 0; i < 64 * 256 && ok; i++) {
        float v = (float)((i * 37) % 101) * 0.05f - 2.5f;
        ok = fwrite(&v, sizeof v, 1, f) == 1;
    }
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* cause: the words of the plant's end in a command that runs it in a worker of its own;
 * on_input: in check --input, which runs it in a worker and judges it itself. */
static const struct {
    const char *plant, *cause, *on_input;
} COMMAND_PLANTS[] = {
    {"exit0", "exited with status 0 during softmax fp32 ", "exited with status 0 on the input"},
    {"segv", "SIGSEGV during softmax fp32 ", "SIGSEGV on the input"},
    {"loop", "did not finish softmax fp32 ", "did not finish on the input in 0.3 s"},
};

static void command_test(const char *plant, const char *cause, const char *on_input) {
    char lib[600], ok[600], name[64], want[256], npy[300];
    snprintf(lib, sizeof lib, "%s/planted_%s.so", SML_ISOLATION_DIR, plant);
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    snprintf(name, sizeof name, "planted_%s", plant);
    snprintf(npy, sizeof npy, "%s/x.npy", TMP);
    snprintf(want, sizeof want, "FAIL %s: the kernel's worker %s", name, cause);
    expect(write_npy(npy) == 0, "cannot write %s", npy);
    /* A hang is killed at ten times its call's deadline: a short one keeps the test short. */
    const char *tmo = strcmp(plant, "loop") ? "" : " --case-timeout 0.3";
    int rc = run("%s check --load %s --kernel %s --input %s%s", SML_CLI_PATH, lib, name, npy, tmo);
    char row[256];
    snprintf(row, sizeof row, "FAIL    the kernel's worker %s", on_input);
    expect(rc == 1 && strstr(OUT, row) && strstr(OUT, name),
           "%s: check --input: exit %d (want 1) and '%s'", name, rc, row);
    /* The suite's words (check --against judges as the suite does). */
    const char *suite_cause = !strcmp(plant, "loop")   ? "did not finish "
                              : !strcmp(plant, "segv") ? "SIGSEGV during "
                                                       : "exited with status 0 during ";
    char fail[256];
    snprintf(fail, sizeof fail, "FAIL %s softmax fp32: ", name);
    snprintf(row, sizeof row, "the kernel's worker %s", suite_cause);
    rc = run("%s check --load %s --load %s --kernel %s --against plug_ok --cases 20 --op softmax "
             "--dtype fp32 --regressions none%s",
             SML_CLI_PATH, lib, ok, name, tmo);
    expect(rc == 1 && strstr(OUT, fail) && strstr(OUT, row),
           "%s: check --against: exit %d (want 1) and '%s...%s'", name, rc, fail, row);
    rc = run("cd '%s' && rm -f l.json && %s bench --load %s --load %s --backend %s,plug_ok --rows "
             "64 --cols 256 "
             "--quiet --json l.json%s; echo \"worker=$(grep -c 'the kernel.s worker' l.json) "
             "ok=$(grep -c 'check.: .ok.' l.json)\"",
             TMP, SML_CLI_PATH, lib, ok, name, tmo);
    expect(strstr(OUT, want) && strstr(OUT, "bench: FAILED (exit 1)"),
           "%s: bench: no '%s' and FAILED", name, want);
    /* ok: plug_ok and cpu_naive, the baseline it is measured against */
    expect(strstr(OUT, "worker=1 ok=2") != NULL,
           "%s: bench: the ledger lacks the plant's row saying why or plug_ok's row", name);
    /* The edge harness drives a worker that holds its buffers and runs the kernels: the FAIL of
     * the case names the kernel and the cause, and the harness goes on without the kernel. */
    snprintf(want, sizeof want, ": the kernel's worker %s%s softmax fp32 ", suite_cause, name);
    rc = run("%s --cpu --load %s --kernel %s --no-huge%s", SML_EDGE_PATH, lib, name, tmo);
    expect(rc == 1 && strstr(OUT, want) &&
               strstr(OUT, "ended its worker: it runs on no later case"),
           "%s: softmax-lab-edge-shapes: exit %d (want 1) and '%s'", name, rc, want);
}

/* GPU plants beside plug_cuda: the fault as a CUDA error of that kernel (illegal), a changed
 * device guard zone (write1m), the stream check (defstream), or compute-sanitizer's hazard
 * (race: racecheck; uninit: initcheck). Where the cause is the engine's own words, the check
 * and the reproducer's replay both print it. */
static const struct {
    const char *plant, *cause;
} GPU_CAUSES[] = {
    {"write1m", "wrote past the end of out: bytes 1048576..1048579 after it changed"},
    {"defstream", "ran outside the stream it was given"},
};
static int gpu_plant_test(const char *plant) {
    if (!sml_gpu_available()) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    char lib[600], ok[600], name[64], want[256];
    snprintf(lib, sizeof lib, "%s/planted_gpu_%s.so", SML_ISOLATION_DIR, plant);
    snprintf(ok, sizeof ok, "%s/plug_cuda.so", SML_PLUGIN_DIR);
    snprintf(name, sizeof name, "planted_gpu_%s", plant);
    const char *tool = !strcmp(plant, "race")     ? "racecheck"
                       : !strcmp(plant, "uninit") ? "initcheck"
                                                  : NULL;
    const char *cause = NULL;
    for (size_t i = 0; i < sizeof GPU_CAUSES / sizeof GPU_CAUSES[0]; i++)
        if (!strcmp(plant, GPU_CAUSES[i].plant)) cause = GPU_CAUSES[i].cause;
    char extra[64] = "";
    if (tool) snprintf(extra, sizeof extra, "--sanitize %s", tool);
    /* An off-stream launch shows in the suite as a race with the read-back: more cases. The
     * uninit plant reads its unwritten scratch in every launch, so check's own sanitizer count
     * (20 cases) shows it; initcheck makes each launch slow enough that 200 cost minutes. */
    const char *cases = !strcmp(plant, "defstream") ? "2000"
                        : !strcmp(plant, "uninit")  ? "20"
                                                    : "200";
    int rc = run("cd '%s' && rm -rf saved && %s check --load %s --load %s --kernel %s,plug_cuda "
                 "--op softmax "
                 "--dtype fp32 --cases %s --regressions none --save saved %s",
                 TMP, SML_CLI_PATH, lib, ok, name, cases, extra);
    if (rc == 77) return 77;
    expect(rc == 1, "%s: check exit %d, want 1", name, rc);
    snprintf(want, sizeof want, " %s softmax fp32: ", name);
    expect(strstr(OUT, want) != NULL, "%s: no FAIL/ERROR line naming it", name);
    if (tool) {
        snprintf(want, sizeof want, "compute-sanitizer %s reported a hazard", tool);
        expect(strstr(OUT, want) != NULL, "%s: no '%s'", name, want);
    }
    if (cause) {
        snprintf(want, sizeof want, "FAIL %s softmax fp32: property canaries failed at case ",
                 name);
        expect(strstr(OUT, want) != NULL, "%s: no line '%s'", name, want);
        expect(strstr(OUT, cause) != NULL, "%s: the cause '%s' is not printed", name, cause);
    }
    expect(strstr(OUT, "plug_cuda") && strstr(strstr(OUT, "\nplug_cuda "), "pass"),
           "%s: plug_cuda did not pass", name);
    char repro[1024];
    if (!tool && after("  reproducer: ", repro, sizeof repro)) {
        rc = run("cd '%s' && %s replay --load %s %s", TMP, SML_CLI_PATH, lib, repro);
        expect(rc == 1, "%s: replay exit %d, want 1", name, rc);
        if (cause)
            expect(strstr(OUT, "STILL FAILS") && strstr(OUT, cause),
                   "%s: replay does not fail with '%s'", name, cause);
    } else if (!tool) {
        expect(0, "%s: no reproducer printed", name);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--gpu-plant")) {
        snprintf(TMP, sizeof TMP, "/tmp/sml_test_isolation_XXXXXX");
        if (!mkdtemp(TMP)) return 1;
        int r = gpu_plant_test(argv[2]);
        return r ? r : sml_tally_finish(&T);
    }
    int command = argc == 3 && !strcmp(argv[1], "--command");
    const char *which = argc == 3 && (command || !strcmp(argv[1], "--plant")) ? argv[2] : NULL;
    if (!which) {
        fprintf(stderr, "usage: %s --plant NAME | --command NAME | --gpu-plant NAME\n", argv[0]);
        return 2;
    }
    snprintf(TMP, sizeof TMP, "/tmp/sml_test_isolation_XXXXXX");
    if (!mkdtemp(TMP)) {
        printf("FAIL test_isolation: mkdtemp failed\n");
        return 1;
    }
    int found = 0;
    for (size_t i = 0; command && i < sizeof COMMAND_PLANTS / sizeof COMMAND_PLANTS[0]; i++)
        if (!strcmp(COMMAND_PLANTS[i].plant, which)) {
            command_test(COMMAND_PLANTS[i].plant, COMMAND_PLANTS[i].cause,
                         COMMAND_PLANTS[i].on_input);
            found = 1;
        }
    if (!command && !strcmp(which, "slow")) {
        budget_test();
        found = 1;
    }
    if (!command && !strcmp(which, "ctor")) {
        ctor_test();
        found = 1;
    }
    if (command && !strcmp(which, "forger")) {
        edge_forger_test();
        found = 1;
    }
    if (!command && !strcmp(which, "cudaerr")) {
        cuda_error_test();
        found = 1;
    }
    for (size_t i = 0; !command && i < sizeof PLANTS / sizeof PLANTS[0]; i++)
        if (!strcmp(PLANTS[i].plant, which)) {
            plant_test(PLANTS[i].plant, PLANTS[i].cause);
            found = 1;
        }
    if (!found) {
        fprintf(stderr, "%s: unknown plant '%s'\n", argv[0], which);
        return 2;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    if (!T.failed && system(cmd) != 0) printf("note: could not remove %s\n", TMP);
    return sml_tally_finish(&T);
}
