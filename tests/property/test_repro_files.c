/* test_repro_files: reproducers as hostile input. Every field is bounded and a refusal
 * names the field (the reader, `replay`, and `check --regressions` alike), layouts whose
 * sizes would overflow are refused before anything is laid out, valid JSON of any size
 * or key count is read, a long path leaves the reason readable, `check --regressions`
 * refuses a folder that does not exist, and a layout larger than this machine's memory is
 * not replayed, the reason named. Planted: without exec.c's host-memory check the last
 * replay fails with a bare "out of memory" (here: realloc refusing 96 GiB), and this fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prop/exec.h"
#include "io/npy.h"
#include "prop/prop.h"
#include "prop/repro.h"
#include "cli_run.h"
#include "test_support.h"

#ifndef SML_CLI_PATH
#define SML_CLI_PATH "./build/softmax-lab"
#endif

static sml_tally T = {"test_repro_files", 0, 0, 0};
static const char *REPRO = "./build/tests/property/test_repro_files";
static char D[256];
static char OUT[16384];

/* A check; a failure prints the message and the test's own command to reproduce it. */
#define expect(ok, ...) sml_expect(&T, (ok), REPRO, 2048, NULL, 0, __VA_ARGS__)

/* Run a shell command, output into OUT; its exit code, or 128 + the signal that killed it. */
#define run(...) sml_shell(NULL, 8192, OUT, sizeof OUT, SML_SHELL_ECHO_RC, __VA_ARGS__)

/* A forward fp32 reproducer of a 3x1 x.npy, with `fields` replacing or adding members: each
 * "key": value pair given there wins over the default (the key is dropped when the value
 * is the word DROP). */
static void write_repro(const char *name, const char *fields) {
    static const char *const DEF[][2] = {
        {"format", "\"softmax-lab reproducer 1\""},
        {"kernel", "\"cpu_naive\""},
        {"op", "\"softmax\""},
        {"dtype", "\"fp32\""},
        {"rows", "3"},
        {"cols", "1"},
        {"ld", "1"},
        {"offset", "0"},
        {"inplace", "false"},
        {"property", "\"agreement\""},
        {"verdict", "\"fail\""},
        {"message", "\"m\""},
        {"x", "\"r.x.npy\""},
        {"dy", "null"},
        {"logits", "null"},
        {"case_seed", "\"0x00000000deadbeef\""},
        {"run_seed", "\"0x1\""},
        {"case", "3"},
        {"level", "7"},
    };
    char path[512];
    snprintf(path, sizeof path, "%s/%s", D, name);
    FILE *f = fopen(path, "w");
    fputs("{", f);
    int first = 1;
    for (size_t i = 0; i < sizeof DEF / sizeof DEF[0]; i++) {
        char key[48];
        snprintf(key, sizeof key, "\"%s\":", DEF[i][0]);
        const char *over = strstr(fields, key);
        if (over) {
            const char *v = over + strlen(key);
            while (*v == ' ') v++;
            if (!strncmp(v, "DROP", 4)) continue;
            const char *e = v;
            int q = 0;
            while (*e && (q || (*e != ',' && *e != '|'))) q ^= *e++ == '"';
            fprintf(f, "%s\n  \"%s\": %.*s", first ? "" : ",", DEF[i][0], (int)(e - v), v);
        } else {
            fprintf(f, "%s\n  \"%s\": %s", first ? "" : ",", DEF[i][0], DEF[i][1]);
        }
        first = 0;
    }
    /* Members of `fields` that are not defaults ("|"-separated "key": value). */
    const char *extra = strstr(fields, "EXTRA|");
    if (extra) fprintf(f, ",\n  %s", extra + 6);
    fputs("\n}\n", f);
    fclose(f);
}

/* Load D/name: expect a refusal whose message starts with `field` followed by ':'. */
static void expect_field(const char *name, const char *field) {
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", D, name);
    sml_prop_case c;
    sml_prop_repro m;
    sml_status s = sml_prop_repro_load(path, &c, &m, err, sizeof err);
    if (s == SML_OK) sml_prop_case_free(&c);
    size_t fl = strlen(field);
    expect(s != SML_OK && !strncmp(err, field, fl) && err[fl] == ':',
           "%s: should be refused naming '%s' first; got %s: \"%s\"", name, field, sml_strerror(s),
           err);
}

static void expect_loads(const char *name, const char *what) {
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", D, name);
    sml_prop_case c;
    sml_prop_repro m;
    sml_status s = sml_prop_repro_load(path, &c, &m, err, sizeof err);
    if (s == SML_OK) sml_prop_case_free(&c);
    expect(s == SML_OK, "%s (%s) should load; got %s: %s", name, what, sml_strerror(s), err);
}

int main(void) {
    snprintf(D, sizeof D, "/tmp/sml_test_repro_files_XXXXXX");
    if (!mkdtemp(D)) {
        printf("FAIL test_repro_files: cannot make a temporary folder\n");
        return 1;
    }
    float x[3] = {1, 2, 3};
    char p[512], err[512];
    snprintf(p, sizeof p, "%s/r.x.npy", D);
    sml_npy_write_2d(p, SML_F32, 3, 1, x, err, sizeof err);

    /* Strides outside the bounds: 2^61 + 1 wrapped the byte count to 12 (SIGSEGV), 2^62
     * overflowed a signed product; 2^32 + 1 makes 3 rows span 2^33 + 3 elements, just past
     * SML_PROP_MAX_SPAN. */
    static const char *const LD[] = {"2305843009213693953", "4611686018427387904", "4294967297"};
    for (int i = 0; i < 3; i++) {
        char name[64], fields[96];
        snprintf(name, sizeof name, "ld%d/r.json", i);
        snprintf(p, sizeof p, "%s/ld%d", D, i);
        mkdir(p, 0777);
        snprintf(p, sizeof p, "%s/ld%d/r.x.npy", D, i);
        sml_npy_write_2d(p, SML_F32, 3, 1, x, err, sizeof err);
        snprintf(fields, sizeof fields, "\"ld\": %s", LD[i]);
        write_repro(name, fields);
        expect_field(name, "ld");
        int rc = run("%s replay %s/%s", SML_CLI_PATH, D, name);
        expect(rc == 2 && strstr(OUT, ": ld: "), "replay of ld %s: exit %d (want 2) naming ld\n%s",
               LD[i], rc, OUT);
        /* A corpus that cannot be read fails the run, naming the file; skipped only when asked. */
        rc = run("cd %s && %s check --kernel cpu_naive --op softmax --dtype fp32 --cases 3 "
                 "--regressions %s/ld%d",
                 D, SML_CLI_PATH, D, i);
        expect(rc == 2 && strstr(OUT, "r.json: ld: ") && strstr(OUT, "--skip-bad-regressions"),
               "check --regressions with ld %s: exit %d (want 2 naming the file)\n%s", LD[i], rc,
               OUT);
        rc = run("cd %s && %s check --kernel cpu_naive --op softmax --dtype fp32 --cases 3 "
                 "--regressions %s/ld%d "
                 "--skip-bad-regressions",
                 D, SML_CLI_PATH, D, i);
        expect(rc == 0 && strstr(OUT, "r.json: ld: "),
               "check --regressions with ld %s --skip-bad-regressions: exit %d (want 0: the file "
               "refused, every "
               "case run)\n%s",
               LD[i], rc, OUT);
    }

    /* A layout inside the bounds that this machine cannot hold (here: a 1.5 GB address
     * space for 1 GiB regions) is no verdict on the kernel: not replayed, exit 2. It was
     * "STILL ERRORS", exit 1. (AddressSanitizer needs more address space than that.) */
#if !defined(__SANITIZE_ADDRESS__)
    {
        snprintf(p, sizeof p, "%s/oom", D);
        mkdir(p, 0777);
        snprintf(p, sizeof p, "%s/oom/r.x.npy", D);
        sml_npy_write_2d(p, SML_F32, 2, 1, x, err, sizeof err);
        write_repro("oom/r.json", "\"rows\": 2, \"ld\": 268435456");
        int rc = run("ulimit -v 1500000; %s replay %s/oom/r.json", SML_CLI_PATH, D);
        expect(rc == 2 && strstr(OUT, "not replayed") && !strstr(OUT, "STILL"),
               "replay of a case too large for this machine: exit %d (want 2, not replayed)\n%s",
               rc, OUT);
    }
#endif

    /* The largest layout the bounds allow (3 rows at stride 2^32 - 1, 2 x 32 GiB of fp32) on a
     * machine with less than twice that in physical memory is refused before anything is
     * allocated, not left to the OOM killer: not replayed, exit 2, and quickly. (A machine
     * with 128 GiB or more would lay it out; there the check is skipped.) */
    {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0 && (double)pages * (double)page < 128.0 * (1u << 30)) {
            snprintf(p, sizeof p, "%s/phys", D);
            mkdir(p, 0777);
            snprintf(p, sizeof p, "%s/phys/r.x.npy", D);
            sml_npy_write_2d(p, SML_F32, 3, 1, x, err, sizeof err);
            write_repro("phys/r.json", "\"ld\": 4294967295");
            expect_loads("phys/r.json", "span 2^33 - 1, inside the bounds");
            int rc = run("%s replay %s/phys/r.json", SML_CLI_PATH, D);
            expect(rc == 2 && strstr(OUT, "not replayed") && strstr(OUT, "GiB of host memory") &&
                       !strstr(OUT, "STILL"),
                   "replay of a layout larger than this machine's memory: exit %d (want 2, not "
                   "replayed, naming the "
                   "host memory)\n%s",
                   rc, OUT);
        }
    }

    /* The engine's executor refuses a layout outside the bounds before sizing anything (in
     * a child: what it did before was a SIGSEGV). */
    {
        pid_t pid = fork();
        if (pid == 0) {
            sml_prop_case c = {0};
            c.op = SML_SOFTMAX;
            c.dtype = SML_F32;
            c.rows = 3;
            c.cols = 1;
            c.ld = (int64_t)2305843009213693953LL;
            c.x = x;
            sml_prop_exec e;
            sml_prop_run_report rep;
            float out[3];
            sml_status s = sml_prop_exec_init(&e, SML_DEVICE_CPU);
            if (s == SML_OK)
                s = sml_prop_exec_run(&e, sml_kernel_find("cpu_naive"), NULL, &c, 1, out, &rep);
            _exit(s == SML_ERR_INVALID_ARG && strstr(rep.where, "ld") ? 0 : 1);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
               "sml_prop_exec_run with ld 2^61+1 must return SML_ERR_INVALID_ARG naming ld (%s %d)",
               WIFSIGNALED(st) ? "killed by signal" : "exit",
               WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    }

    /* Each required field, dropped, is named. */
    static const char *const REQ[] = {"format", "kernel", "op", "dtype",  "property",
                                      "rows",   "cols",   "ld", "offset", "x"};
    for (size_t i = 0; i < sizeof REQ / sizeof REQ[0]; i++) {
        char name[64], fields[64];
        snprintf(name, sizeof name, "no_%s.json", REQ[i]);
        snprintf(fields, sizeof fields, "\"%s\": DROP", REQ[i]);
        write_repro(name, fields);
        expect_field(name, REQ[i]);
    }
    /* Each bad value is named. */
    static const char *const BAD[][3] = {
        {"bad_op.json", "\"op\": \"softmax2\"", "op"},
        {"bad_dtype.json", "\"dtype\": \"fp64\"", "dtype"},
        {"bad_property.json", "\"property\": \"speed\"", "property"},
        {"bad_kernel.json", "\"kernel\": 7", "kernel"},
        {"bad_rows0.json", "\"rows\": 0", "rows"},
        {"bad_rows_frac.json", "\"rows\": 2.5", "rows"},
        {"bad_rows_str.json", "\"rows\": \"3\"", "rows"},
        {"bad_cols_huge.json", "\"cols\": 1e300", "cols"},
        {"bad_ld_small.json", "\"cols\": 2, \"ld\": 1", "ld"},
        {"bad_offset.json", "\"offset\": 4097", "offset"},
        {"bad_offset_neg.json", "\"offset\": -1", "offset"},
        {"bad_inplace.json", "\"inplace\": \"yes\"", "inplace"},
        {"bad_seed.json", "\"case_seed\": \"0xZZ\"", "case_seed"},
        {"bad_level.json", "\"level\": 101", "level"},
        {"bad_x.json", "\"x\": 5", "x"},
        {"bad_x_missing_file.json", "\"x\": \"nothere.npy\"", "x"},
        {"bad_format.json", "\"format\": \"softmax-lab reproducer 2\"", "format"},
        {"bad_rows_shape.json", "\"rows\": 2", "x"},
        {"bad_rows_twice.json", "EXTRA|\"rows\": 1", "rows"},
        {"bad_load_empty.json", "EXTRA|\"load\": \"\"", "load"},
        {"bad_load_number.json", "EXTRA|\"load\": 3", "load"},
        {"bad_strict.json", "EXTRA|\"strict\": 1", "strict"},
        {"bad_strict_str.json", "EXTRA|\"strict\": \"yes\"", "strict"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        write_repro(BAD[i][0], BAD[i][1]);
        expect_field(BAD[i][0], BAD[i][2]);
    }
    write_repro("bwd_no_dy.json", "\"op\": \"softmax_bwd\"");
    expect_field("bwd_no_dy.json", "dy");
    /* `replay` prints that name, not a list of every field. */
    int rc = run("%s replay %s/bad_offset.json", SML_CLI_PATH, D);
    expect(rc == 2 && strstr(OUT, "bad_offset.json: offset: 4097"),
           "replay names the bad field: exit %d\n%s", rc, OUT);

    /* Valid JSON past 16 KB, or with more than 48 members, is a reproducer like any other. */
    {
        static char big[24000];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = 0;
        char *fields = malloc(sizeof big + 32);
        snprintf(fields, sizeof big + 32, "\"message\": \"%s\"", big);
        write_repro("long_message.json", fields);
        free(fields);
        expect_loads("long_message.json", "a 24 KB message");
        char many[4096] = "EXTRA|";
        for (int i = 0; i < 60; i++) {
            size_t l = strlen(many);
            snprintf(many + l, sizeof many - l, "%s\"extra_%d\": %d", i ? ", " : "", i, i);
        }
        write_repro("many_keys.json", many);
        expect_loads("many_keys.json", "79 members");
        write_repro("nested.json", "EXTRA|\"notes\": {\"a\": [1, 2, {\"b\": null}]}");
        expect_loads("nested.json", "a nested member it does not read");
    }

    /* A path of some 4,000 characters still leaves the reason in the message. */
    {
        char longp[4096];
        int n = snprintf(longp, sizeof longp, "%s/ld0", D);
        while (n < 3900) n += snprintf(longp + n, sizeof longp - (size_t)n, "/.");
        snprintf(longp + n, sizeof longp - (size_t)n, "/r.json");
        sml_prop_replay_result r;
        sml_status s = sml_prop_replay(longp, NULL, NULL, NULL, &r);
        expect(s == SML_ERR_FORMAT && strstr(r.message, "ld:"),
               "a %zu-character path: %s, message \"%s\"", strlen(longp), sml_strerror(s),
               r.message);
        /* Past PATH_MAX: the open fails, and the message must say so, not show a cut path. */
        char longer[5200];
        n = snprintf(longer, sizeof longer, "%s/ld0", D);
        while (n < 5000) n += snprintf(longer + n, sizeof longer - (size_t)n, "/.");
        snprintf(longer + n, sizeof longer - (size_t)n, "/r.json");
        s = sml_prop_replay(longer, NULL, NULL, NULL, &r);
        expect(s == SML_ERR_IO && strstr(r.message, "cannot open"),
               "a %zu-character path: %s, message \"%s\"", strlen(longer), sml_strerror(s),
               r.message);
        rc = run("%s replay %s", SML_CLI_PATH, longer);
        expect(rc == 2 && strstr(OUT, "too long"),
               "replay of a %zu-character path: exit %d, want 2 saying why", strlen(longer), rc);
    }

    /* check --regressions with a folder that is not there says so instead of replaying nothing. */
    rc = run("%s check --kernel cpu_naive --cases 1 --regressions %s/nonexistent", SML_CLI_PATH, D);
    expect(rc == 2 && strstr(OUT, "no such directory"),
           "check --regressions DIR/nonexistent: exit %d\n%s", rc, OUT);
    rc = run("%s check --kernel cpu_naive --cases 1 --regressions %s/r.x.npy", SML_CLI_PATH, D);
    expect(rc == 2 && strstr(OUT, "not a directory"), "check --regressions FILE: exit %d\n%s", rc,
           OUT);
    rc = run("%s check --kernel cpu_naive --cases 1 --regressions %s/ld0:%s/nonexistent",
             SML_CLI_PATH, D, D);
    expect(rc == 2 && strstr(OUT, "nonexistent: no such directory"),
           "check --regressions DIR:MISSING: exit %d\n%s", rc, OUT);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", D);
    if (system(cmd) != 0) printf("note: could not remove %s\n", D);
    return sml_tally_finish(&T);
}
