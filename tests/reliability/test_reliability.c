/* test_reliability.c: one kernel, one seed, one verdict. `softmax-lab check` runs kernels that
 * are slow, unlucky or hostile (planted_reliability.c) on an idle machine and again with a
 * busy loop on every core (tests/support/cpu_load.h); each run must end with the exit status
 * the verdict rules give, whatever the load, and print the same case set digest ("case set
 * digest 0x" and 16 hex digits) both times, since the same kernels, seed and case count draw
 * the same cases on any load and any --threads.
 *
 * The exit statuses: 0 PASS, 1 FAIL, 2 usage, 3 nothing checked / ERROR, 4 INCOMPLETE (the
 * --seconds cap stopped the run before its cases were done, nothing failed), 5 FLAKY (a
 * failure a rerun in a fresh worker did not reproduce, nothing failed for good).
 *
 *   --test slow_wrong  rel_slow_wrong (1 ms a call, wrong from 1,000 columns on), 1,200 cases,
 *                      no --seconds: exit 1 and a FAIL line, idle and loaded (no time budget of
 *                      its own may cut the run before the large shapes). Then 3,000 cases with
 *                      --seconds 2, which stops it before most of its cases: never a pass;
 *                      exit 4, INCOMPLETE and "ran N of 3000" with N < 3000, or, when one of
 *                      the job's parts reached a case of 1,000 columns before the cap, exit 1
 *                      and its FAIL line.
 *   --test slow_right  rel_slow_right (right; 50 ms a call from 64 columns on, 4 to 7 calls a
 *                      case), --case-timeout 0.1: its cases pass their deadline, are confirmed
 *                      alone under 10x that (1 s; they take at most 0.35 s and their
 *                      arithmetic) and are slow, not failed: exit 0, all its cases run.
 *   --test slow_start  rel_slow_start (right; its worker takes 3 s to start), --case-timeout
 *                      0.2: a worker's start is not a launch's time (the deadline starts when
 *                      the worker says it has started), so no case is late: exit 0, all its
 *                      cases run. Were the start counted, every first case of a worker would
 *                      be late, and late again alone (3 s > 10 x 0.2 s): a hang.
 *   --test flaky       rel_flaky (wrong on 1 call in 50, from getrandom): never exit 0; exit 1
 *                      or 5 with a FAIL or FLAKY line naming it.
 *   --test stateful    rel_stateful (wrong from its 201st call in a process): the failing case
 *                      passes in a fresh worker, so exit 5 and a "FLAKY rel_stateful" line.
 *   --test forger      rel_forger writes "pass" result frames on every socket it can find and
 *                      _exit(0)s, beside plug_ok, with --threads 1 and the default threads:
 *                      exit 1, a FAIL line naming rel_forger, plug_ok passing with its 40 cases
 *                      (nothing a kernel writes decides a verdict, its own or another's).
 *   --test hang        rel_hang never returns from 8 columns on, beside plug_ok, with
 *                      --case-timeout 0.2: exit 1 with "did not finish" on its FAIL line within
 *                      20 s, plug_ok passing with its 40 cases.
 *   --test digest      cpu_naive and plug_ok, 1,200 cases (each job split in 2 parts,
 *                      src/prop/parts.h), --threads 1 and 2, idle and loaded: exit 0, the same
 *                      digest all four times, 1,200 cases per job every time.
 *   --test incomplete  rel_sleepy (right, 50 ms a call), 300 cases, --seconds 2: exit 4,
 *                      INCOMPLETE, "ran N of 300" with N < 300, not a pass, within the cap.
 *
 *   --test parsers     the readers of check's output above, on outputs written here.
 *
 *   --under-load 'COMMAND'  runs COMMAND with sh -c under the same load and exits with its
 *                      status: the reproduce line of every loaded run's failure.
 *
 * Each check command runs under timeout(1) (90 s; 30 s for rel_hang), so that one that never
 * ends fails with its output. Every failure prints the one command that reproduces it: the
 * check command line for an idle run, test_reliability --under-load '...' for a loaded one,
 * test_reliability --test NAME for a comparison across runs. The scratch directory the
 * commands run in is kept when something failed. */
#define _GNU_SOURCE /* strcasestr */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"
#include "cpu_load.h"
#include "softmax_lab.h"
#include "test_support.h"

#define DIGEST_KEY "case set digest 0x"

static sml_tally T = {"test_reliability", 0, 0, 0};
static char TMP[256];
static char SELF[4096];
static char OUT[1 << 20];

/* One run of check: its command line, how it ended and what it printed that outlives OUT. */
typedef struct run {
    char phase[64];   /* "idle" or "loaded", and what else tells the run apart */
    char cmd[4096];   /* the check command line */
    char repro[8400]; /* the one command that reproduces this run */
    int rc;
    double seconds;
    char digest[17]; /* "" when none was printed */
    int shown;       /* its output was printed with a failure already */
} run;

static const char *NAME;       /* the test: slow_wrong, ... */
static const char *LABEL = ""; /* after "idle" or "loaded" in messages: " --threads 1" */
static char WHOLE[4200];       /* test_reliability --test NAME: the reproducer of comparisons */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The last 6000 characters of OUT: the table and the summary are at the end. */
static const char *tail(void) {
    size_t n = strlen(OUT);
    return n > 6000 ? OUT + n - 6000 : OUT;
}

/* One check on run r, just after it ran (OUT is its output): a failure prints the message,
 * the end of the output (once per run) and the command that reproduces the run. */
static void expect(run *r, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expect(run *r, int ok, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sml_expect(&T, ok, r->repro, sizeof msg, r->shown ? NULL : tail(), 6000, "%s", msg);
    if (!ok) r->shown = 1;
}
#define expect_all(ok, ...) sml_expect(&T, (ok), WHOLE, 2048, NULL, 0, __VA_ARGS__)

/* The 16 hex digits after "case set digest 0x" in OUT, into d ("" when absent). */
static void find_digest(char d[17]) {
    d[0] = 0;
    const char *p = strstr(OUT, DIGEST_KEY);
    if (!p) return;
    p += strlen(DIGEST_KEY);
    for (int i = 0; i < 16; i++)
        if (!isxdigit((unsigned char)p[i])) return;
    if (isxdigit((unsigned char)p[16])) return;
    memcpy(d, p, 16);
    d[16] = 0;
}

/* A run past this is stopped (timeout(1): exit 124, or 137 after SIGKILL), so that a check
 * that never ends fails its assertions with its output rather than the whole test. */
static int LIMIT_S = 90;

/* Run `check ARGS` in TMP under timeout(1), idle or with every core busy, into OUT; prints one
 * line saying how it ended, for the log. */
static void check(run *r, int loaded, const char *fmt, ...) {
    char args[3500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(r->phase, sizeof r->phase, "%s%s", loaded ? "loaded" : "idle", LABEL);
    r->shown = 0;
    snprintf(r->cmd, sizeof r->cmd, "cd %s && timeout -k 5 %d %s check %s", TMP, LIMIT_S,
             SML_CLI_PATH, args);
    if (loaded)
        snprintf(r->repro, sizeof r->repro, "%s --under-load '%s'", SELF, r->cmd);
    else
        snprintf(r->repro, sizeof r->repro, "%s", r->cmd);
    sml_cpu_load load = {0};
    if (loaded && sml_cpu_load_start(&load, 0) != 0)
        sml_tally_fail(&T, r->repro, "cannot start the CPU load (fork failed)");
    double t0 = now_s();
    r->rc = sml_shell(NULL, 8192, OUT, sizeof OUT, 0, "%s", r->cmd);
    r->seconds = now_s() - t0;
    sml_cpu_load_stop(&load);
    find_digest(r->digest);
    printf("  %-6s exit %d in %5.1f s, digest %s: check %s\n", r->phase, r->rc, r->seconds,
           r->digest[0] ? r->digest : "(none)", args);
    fflush(stdout);
}

/* The line of OUT that starts with `prefix` (case-insensitive), copied into line; 0: none. */
static int line_starting(const char *prefix, char *line, size_t n) {
    size_t k = strlen(prefix);
    for (const char *p = OUT; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len >= k && !strncasecmp(p, prefix, k)) {
            snprintf(line, n, "%.*s", (int)len, p);
            return 1;
        }
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Some line of OUT starts with `prefix` and contains `word` (both case-insensitive). */
static int line_with(const char *prefix, const char *word) {
    size_t k = strlen(prefix);
    for (const char *p = OUT; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (len >= k && !strncasecmp(line, prefix, k) && strcasestr(line, word)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Case-insensitive: `word` is one of the line's whitespace-separated words (ignoring a
 * trailing ':' or ','). */
static int has_word(const char *line, const char *word) {
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", line);
    for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        size_t n = strlen(t);
        while (n && (t[n - 1] == ':' || t[n - 1] == ',')) t[--n] = 0;
        if (!strcasecmp(t, word)) return 1;
    }
    return 0;
}

/* The result table's row of `kernel` (the line whose first word is its name) and its case
 * count (the first all-digit word after the name); -1 when there is no such row. */
static long long row_of(const char *kernel, char *line, size_t n) {
    size_t k = strlen(kernel);
    line[0] = 0;
    for (const char *p = OUT; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > k && !strncmp(p, kernel, k) && (p[k] == ' ' || p[k] == '\t')) {
            snprintf(line, n, "%.*s", (int)len, p);
            char buf[2048];
            snprintf(buf, sizeof buf, "%s", line + k);
            for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t;
                 t = strtok_r(NULL, " \t", &save)) {
                size_t d = strspn(t, "0123456789");
                if (d && !t[d]) return atoll(t);
            }
            return -1;
        }
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

/* A bystander's row says pass with the full case count. */
static void expect_passed(run *r, const char *kernel, long long cases) {
    char row[2048];
    long long got = row_of(kernel, row, sizeof row);
    expect(r, got == cases && has_word(row, "pass"),
           "%s (%s): %s did not pass with its %lld cases (its row: '%s', %lld cases)", NAME,
           r->phase, kernel, cases, row, got);
}

/* "ran N of M" somewhere in OUT: N, or -1. */
static long long ran_of(long long m) {
    for (const char *p = strstr(OUT, "ran "); p; p = strstr(p + 1, "ran ")) {
        long long n, of;
        char tail_[8];
        if (sscanf(p, "ran %lld of %lld%7s", &n, &of, tail_) >= 2 && of == m) return n;
    }
    return -1;
}

static void expect_rc(run *r, int want, const char *what) {
    expect(r, r->rc == want, "%s (%s): check exit %d, want %d (%s)%s", NAME, r->phase, r->rc, want,
           what, r->rc == 124 || r->rc == 137 ? "; timeout(1) stopped it, still running" : "");
}

static void expect_digest(run *r) {
    expect(r, r->digest[0] != 0, "%s (%s): no '" DIGEST_KEY "' followed by 16 hex digits", NAME,
           r->phase);
}

/* The same digest in runs a and b (both printed one). */
static void expect_same_digest(const run *a, const run *b) {
    if (!a->digest[0] || !b->digest[0]) return; /* said already, run by run */
    expect_all(!strcmp(a->digest, b->digest),
               "the same kernels, seed and cases gave two case sets: digest %s (%s: %s) and %s "
               "(%s: %s)",
               a->digest, a->phase, a->cmd, b->digest, b->phase, b->cmd);
}

static void lib(char *buf, size_t n, const char *plant) {
    snprintf(buf, n, "%s/rel_%s.so", SML_RELIABILITY_DIR, plant);
}

#define SUITE "--op softmax --dtype fp32 --regressions none"

/* rel_slow_wrong: FAIL on any load with no cap; never PASS when --seconds stops it. With the
 * default seed its first case of 1,000 columns or more is case 310 of 1,200 and case 656 of
 * 3,000 (4 to 7 calls a case, over 1 ms each). The 1,200 cases take 6 s or more: a time budget
 * of the job's own (6 s in the CI profile) would stop them at 980 cases idle and at 700 under
 * load. The 3,000 run with --seconds 2 is split in parts (parts.h) that interleave over the
 * cases, so how far the ramp got when the cap came depends on the load: INCOMPLETE when no
 * wrong case was reached, FAIL when one was; either is right, and PASS never is. */
static void test_slow_wrong(void) {
    char l[600];
    lib(l, sizeof l, "slow_wrong");
    run r[2];
    for (int loaded = 0; loaded < 2; loaded++) {
        run *x = &r[loaded];
        check(x, loaded, "--load %s --kernel rel_slow_wrong " SUITE " --cases 1200 --no-shrink", l);
        expect_rc(x, 1, "FAIL: wrong from 1000 columns on, and nothing may cut the run short");
        expect(x, line_with("FAIL rel_slow_wrong softmax fp32", ""),
               "%s (%s): no line 'FAIL rel_slow_wrong softmax fp32: ...'", NAME, x->phase);
        expect_digest(x);
    }
    expect_same_digest(&r[0], &r[1]);
    for (int loaded = 0; loaded < 2; loaded++) {
        run x;
        check(&x, loaded,
              "--load %s --kernel rel_slow_wrong " SUITE " --cases 3000 --seconds 2 --no-shrink",
              l);
        expect(&x, x.rc == 4 || x.rc == 1,
               "%s (%s): check exit %d, want 4 (INCOMPLETE: the --seconds cap stopped it) or 1 "
               "(FAIL: a wrong case came before the cap)",
               NAME, x.phase, x.rc);
        long long n = ran_of(3000);
        if (x.rc == 4)
            expect(&x, strcasestr(OUT, "incomplete") && n >= 0 && n < 3000,
                   "%s (%s): exit 4 with no INCOMPLETE and 'ran N of 3000' (N < 3000; N found: "
                   "%lld)",
                   NAME, x.phase, n);
        if (x.rc == 1)
            expect(&x, line_with("FAIL rel_slow_wrong softmax fp32", ""),
                   "%s (%s): exit 1 with no line 'FAIL rel_slow_wrong softmax fp32: ...'", NAME,
                   x.phase);
        char row[2048];
        row_of("rel_slow_wrong", row, sizeof row);
        expect(&x, !has_word(row, "pass"), "%s (%s): a run stopped by --seconds says pass: '%s'",
               NAME, x.phase, row);
        expect_digest(&x);
    }
}

/* rel_<plant>, right and slow, 20 cases under --case-timeout <timeout>: PASS, idle and loaded,
 * with the same cases. */
static void slow_passes(const char *plant, const char *timeout, const char *why) {
    char l[600], k[64];
    lib(l, sizeof l, plant);
    snprintf(k, sizeof k, "rel_%s", plant);
    run r[2];
    for (int loaded = 0; loaded < 2; loaded++) {
        run *x = &r[loaded];
        check(x, loaded, "--load %s --kernel %s " SUITE " --cases 20 --no-shrink --case-timeout %s",
              l, k, timeout);
        expect_rc(x, 0, why);
        expect_passed(x, k, 20);
        expect_digest(x);
    }
    expect_same_digest(&r[0], &r[1]);
}

/* rel_slow_start: 3 s to start its worker, 0.2 s deadlines: PASS. */
static void test_slow_start(void) {
    slow_passes("slow_start", "0.2", "PASS: a worker's start is not a launch's time");
}

/* rel_slow_right: over its deadline, right when confirmed alone: PASS. */
static void test_slow_right(void) {
    slow_passes("slow_right", "0.1", "PASS: slow is not hung, and right when confirmed alone");
}

/* rel_flaky: a failure, reproduced or not, is never a pass. */
static void test_flaky(void) {
    char l[600];
    lib(l, sizeof l, "flaky");
    run r[2];
    for (int loaded = 0; loaded < 2; loaded++) {
        run *x = &r[loaded];
        check(x, loaded, "--load %s --kernel rel_flaky " SUITE " --cases 300", l);
        expect(x, x->rc == 1 || x->rc == 5,
               "%s (%s): check exit %d, want 1 (FAIL) or 5 (FLAKY): wrong on 1 call in 50", NAME,
               x->phase, x->rc);
        expect(x,
               line_with("FAIL rel_flaky softmax fp32", "") ||
                   line_with("FLAKY rel_flaky softmax fp32", ""),
               "%s (%s): no line 'FAIL rel_flaky softmax fp32: ...' or 'FLAKY rel_flaky softmax "
               "fp32: ...'",
               NAME, x->phase);
        expect_digest(x);
    }
    expect_same_digest(&r[0], &r[1]);
}

/* rel_stateful: fails in its warm worker, passes the same case in a fresh one: FLAKY. */
static void test_stateful(void) {
    char l[600];
    lib(l, sizeof l, "stateful");
    run r[2];
    for (int loaded = 0; loaded < 2; loaded++) {
        run *x = &r[loaded];
        check(x, loaded, "--load %s --kernel rel_stateful " SUITE " --cases 100", l);
        expect_rc(x, 5, "FLAKY: its failing case passes in a fresh worker");
        char line[2048];
        expect(x, line_starting("FLAKY rel_stateful softmax fp32:", line, sizeof line),
               "%s (%s): no line 'FLAKY rel_stateful softmax fp32: ...'", NAME, x->phase);
        expect_digest(x);
    }
    expect_same_digest(&r[0], &r[1]);
}

/* rel_forger beside plug_ok: its forged frames neither pass it nor touch plug_ok's verdict. */
static void test_forger(void) {
    char l[600], ok[600];
    lib(l, sizeof l, "forger");
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    run r[4];
    for (int i = 0; i < 4; i++) {
        run *x = &r[i];
        int loaded = i & 1;
        const char *threads = i < 2 ? " --threads 1" : ""; /* then the default: one per job */
        LABEL = threads;
        check(x, loaded,
              "--load %s --load %s --kernel rel_forger,plug_ok " SUITE " --cases 40 --no-shrink%s",
              l, ok, threads);
        expect_rc(x, 1, "FAIL: a kernel that writes on its worker's socket and exits");
        expect(x, line_with("FAIL rel_forger softmax fp32", ""),
               "%s (%s): no line 'FAIL rel_forger softmax fp32: ...'", NAME, x->phase);
        char row[2048];
        row_of("rel_forger", row, sizeof row);
        expect(x, !has_word(row, "pass"), "%s (%s): the forger's row says pass: '%s'", NAME,
               x->phase, row);
        expect_passed(x, "plug_ok", 40);
        expect_digest(x);
    }
    LABEL = "";
    for (int i = 1; i < 4; i++) expect_same_digest(&r[0], &r[i]);
}

/* rel_hang beside plug_ok: a case that never ends is a FAIL "did not finish", soon. */
static void test_hang(void) {
    char l[600], ok[600];
    lib(l, sizeof l, "hang");
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    run r[2];
    LIMIT_S = 30;
    for (int loaded = 0; loaded < 2; loaded++) {
        run *x = &r[loaded];
        check(x, loaded,
              "--load %s --load %s --kernel rel_hang,plug_ok " SUITE
              " --cases 40 --no-shrink --case-timeout 0.2",
              l, ok);
        expect_rc(x, 1, "FAIL: it never returns from 8 columns on");
        expect(x, line_with("FAIL rel_hang softmax fp32", "did not finish"),
               "%s (%s): no line 'FAIL rel_hang softmax fp32: ...' saying 'did not finish'", NAME,
               x->phase);
        expect(x, x->seconds < 20.0,
               "%s (%s): took %.1f s (want < 20 s: 0.2 s a case, 2 s to confirm a hang)", NAME,
               x->phase, x->seconds);
        expect_passed(x, "plug_ok", 40);
        expect_digest(x);
    }
    expect_same_digest(&r[0], &r[1]);
}

/* Right kernels: one case set whatever the threads and the load, every case run. */
static void test_digest(void) {
    char ok[600];
    snprintf(ok, sizeof ok, "%s/plug_ok.so", SML_PLUGIN_DIR);
    run r[4];
    for (int i = 0; i < 4; i++) {
        run *x = &r[i];
        int threads = i < 2 ? 1 : 2;
        LABEL = threads == 1 ? " --threads 1" : " --threads 2";
        check(x, i & 1, "--load %s --kernel cpu_naive,plug_ok " SUITE " --cases 1200 --threads %d",
              ok, threads);
        expect_rc(x, 0, "PASS: right kernels");
        expect_passed(x, "cpu_naive", 1200);
        expect_passed(x, "plug_ok", 1200);
        expect_digest(x);
    }
    LABEL = "";
    for (int i = 1; i < 4; i++) expect_same_digest(&r[0], &r[i]);
}

/* The --seconds cap: INCOMPLETE, its own exit status, the count it ran, never a pass. */
static void test_incomplete(void) {
    char l[600];
    lib(l, sizeof l, "sleepy");
    for (int loaded = 0; loaded < 2; loaded++) {
        run x;
        check(&x, loaded, "--load %s --kernel rel_sleepy " SUITE " --cases 300 --seconds 2", l);
        expect_rc(&x, 4, "INCOMPLETE: 300 cases of 0.25 s do not fit in 2 s");
        long long n = ran_of(300);
        expect(&x, strcasestr(OUT, "incomplete") && n >= 0 && n < 300,
               "%s (%s): no INCOMPLETE and 'ran N of 300' (N < 300; N found: %lld)", NAME, x.phase,
               n);
        char row[2048];
        row_of("rel_sleepy", row, sizeof row);
        expect(&x, !has_word(row, "pass"), "%s (%s): a run stopped by --seconds says pass: '%s'",
               NAME, x.phase, row);
        expect(&x, x.seconds < 15.0, "%s (%s): --seconds 2 and the run took %.1f s", NAME, x.phase,
               x.seconds);
        expect_digest(&x);
    }
}

/* The readers of check's output on outputs written here, each of the shape the rules ask for
 * and a near miss: a reader that always agrees would make the tests above unable to fail. */
static void test_parsers(void) {
    run r = {.phase = "parsers"};
    snprintf(r.repro, sizeof r.repro, "%s", WHOLE);
    char d[17], row[2048];
    snprintf(OUT, sizeof OUT,
             "kernel     dev     cases failures   regr  worst/bound  worst ulp  seconds  status\n"
             "cpu_naive  cpu       200        0      0        0.282         52      0.0  pass\n"
             "plug_ok    cpu       200        0      0        0.282         52      0.0  PASS\n"
             "rel_sleepy cpu         8        0      0       0.0142      0.409      2.3  "
             "INCOMPLETE: ran 8 of 300 cases\n"
             "FAIL rel_hang softmax fp32: the kernel's worker did not finish case 3\n"
             "FLAKY rel_stateful softmax fp32: failed at case 41, passed in a fresh worker\n"
             "\n408 cases in 2.3 s; case set digest 0x0123456789abcDEF\n");
    find_digest(d);
    expect(&r, !strcmp(d, "0123456789abcDEF"), "digest read as '%s'", d);
    expect(&r, row_of("plug_ok", row, sizeof row) == 200 && has_word(row, "pass"),
           "plug_ok's row: %lld cases, '%s'", row_of("plug_ok", row, sizeof row), row);
    expect(&r, row_of("plug", row, sizeof row) == -1, "a row found for a prefix of a name");
    expect(&r, row_of("rel_sleepy", row, sizeof row) == 8 && !has_word(row, "pass"),
           "rel_sleepy's row: '%s'", row);
    expect(&r, ran_of(300) == 8 && ran_of(3000) == -1, "ran_of: %lld %lld", ran_of(300),
           ran_of(3000));
    expect(&r,
           line_with("FAIL rel_hang softmax fp32", "did not finish") &&
               !line_with("FAIL rel_hang softmax fp32", "hung") &&
               !line_with("FAIL rel_han softmax fp32", "") &&
               line_starting("flaky REL_STATEFUL softmax fp32:", row, sizeof row) &&
               !line_starting("FAIL rel_stateful", row, sizeof row),
           "line_with / line_starting");
    expect(&r, !has_word("x passed y", "pass") && has_word("x pass: y", "pass"), "has_word");
    snprintf(OUT, sizeof OUT, "case set digest 0x0123456789abcde\ncase set digest 0x%s1\n",
             "0123456789abcdef");
    find_digest(d);
    expect(&r, d[0] == 0, "a digest of 15 or 17 digits read as '%s'", d);
}

/* --under-load 'COMMAND': COMMAND under a busy loop on every core; its exit status. */
static int under_load(const char *command) {
    sml_cpu_load load = {0};
    if (sml_cpu_load_start(&load, 0) != 0) {
        fprintf(stderr, "test_reliability: cannot start the CPU load\n");
        return 2;
    }
    printf("test_reliability: %d busy loops; running: %s\n", load.n, command);
    fflush(stdout);
    int st = system(command);
    sml_cpu_load_stop(&load);
    int rc = st == -1 ? 127 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    printf("test_reliability: exit %d\n", rc);
    return rc;
}

static const struct {
    const char *name;
    void (*fn)(void);
} TESTS[] = {
    {"slow_wrong", test_slow_wrong},
    {"slow_right", test_slow_right},
    {"slow_start", test_slow_start},
    {"flaky", test_flaky},
    {"stateful", test_stateful},
    {"forger", test_forger},
    {"hang", test_hang},
    {"digest", test_digest},
    {"incomplete", test_incomplete},
    {"parsers", test_parsers},
};

int main(int argc, char **argv) {
    ssize_t n = readlink("/proc/self/exe", SELF, sizeof SELF - 1);
    snprintf(SELF + (n > 0 ? n : 0), sizeof SELF - (size_t)(n > 0 ? n : 0), "%s",
             n > 0 ? "" : argv[0]);
    if (argc == 3 && !strcmp(argv[1], "--under-load")) return under_load(argv[2]);
    void (*fn)(void) = NULL;
    for (size_t i = 0; argc == 3 && !strcmp(argv[1], "--test") && i < sizeof TESTS / sizeof *TESTS;
         i++)
        if (!strcmp(argv[2], TESTS[i].name)) fn = TESTS[i].fn;
    if (!fn) {
        fprintf(
            stderr,
            "usage: %s --test slow_wrong|slow_right|slow_start|flaky|stateful|forger|hang|digest|"
            "incomplete|parsers\n       %s --under-load 'COMMAND'\n",
            argv[0], argv[0]);
        return 2;
    }
    if (sml_cli_setup("test_reliability", SML_CLI_PATH, TMP, sizeof TMP)) return 1;
    NAME = argv[2];
    snprintf(WHOLE, sizeof WHOLE, "%s --test %s", SELF, NAME);
    printf("test_reliability --test %s: %d cores; each check run idle, then with %d busy loops\n",
           argv[2], sml_cpu_online(), sml_cpu_online());
    fflush(stdout);
    double t0 = now_s();
    fn();
    printf("test_reliability --test %s: %.1f s\n", argv[2], now_s() - t0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    if (!T.failed && system(cmd) != 0) printf("note: could not remove %s\n", TMP);
    if (T.failed) printf("note: kept %s (the commands above run in it)\n", TMP);
    return sml_tally_finish(&T);
}
