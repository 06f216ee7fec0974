/* test_cli_outputs.c: every file the CLI writes is whole, or the old one is left (or none):
 * a full device, a file-size limit, a symbolic link, a device node or a /proc path given as
 * an output must never leave half a file, replace what it names, or exit 0.
 *
 * Device nodes are made in the scratch directory (mknod, as root), never /dev itself: a
 * writer that renames over its target must not be able to break the machine running it. */
#define _XOPEN_SOURCE 700 /* mknod */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "case_filter.h"
#include "cli_exec.h"
#include "prop/case.h"
#include "io/npy.h"
#include "io/out_file.h"
#include "prop/repro.h"
#include "test_support.h"

static sml_tally T = {"test_cli_outputs", 0, 0, 0};
static sml_case_filter F;
static char TMP[256], LOG[1 << 16];

static void path(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", TMP, name); }

static int is_chr(const char *p) {
    struct stat st;
    return lstat(p, &st) == 0 && S_ISCHR(st.st_mode);
}

/* A fresh sub-directory of TMP for one case, so its leftovers are countable. */
static void subdir(char *buf, size_t n, int c) {
    snprintf(buf, n, "%s/case%d", TMP, c);
    mkdir(buf, 0755);
}

/* Device nodes like /dev/full (1,7) and /dev/null (1,3) in TMP; 0 if mknod is not allowed. */
static int make_node(const char *name, int minor) {
    char p[512];
    path(p, sizeof p, name);
    unlink(p);
    return mknod(p, S_IFCHR | 0666, makedev(1, minor)) == 0;
}

static int run(const char *dir, const char *const *args, long fsize) {
    return sml_run_cli_limit(F.cli, dir, args, fsize, LOG, sizeof LOG);
}

static void skip(int n, const char *why) {
    printf("skip case %d: %s\n", n, why);
    T.skipped++;
}

static const char *CHECK1[] = {"check",   "--kernel", "cpu_naive", "--op", "softmax",
                               "--dtype", "fp32",     "--cases",   "2",    "--regressions",
                               "none",    "--json",   NULL,        NULL};

/* A temporary open when SIGTERM or SIGINT arrives is removed: the writer's handler unlinks it
 * and the process still ends by the signal. */
static void signal_case(int n, int sig) {
    if (!sml_case_filter_want(&F, n)) return;
    char d[300];
    subdir(d, sizeof d, n);
    pid_t pid = fork();
    if (pid == 0) {
        char p[400], err[512];
        snprintf(p, sizeof p, "%s/out.json", d);
        sml_out_file o;
        if (sml_out_open(&o, p, err, sizeof err) != SML_OK) _exit(3);
        fputs("{\"half\": ", o.f);
        fflush(o.f);
        raise(sig);
        _exit(4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    LOG[0] = 0;
    char what[160];
    snprintf(what, sizeof what,
             "a writer killed by signal %d mid-write leaves no temporary (and dies by it)", sig);
    sml_test_check_case(&T, &F, LOG, n,
                        WIFSIGNALED(status) && WTERMSIG(status) == sig && sml_dir_entries(d) == 0,
                        what);
}

/* 20. A reproducer's files appear together or not at all: under a 600-byte file-size limit a
 * 1x1 case's .x.npy (132 bytes) fits and its .json (about 1 KiB) does not; none is left (an
 * .x.npy without its .json was). */
static void repro_together(int n) {
    if (!sml_case_filter_want(&F, n)) return;
    char d[300];
    subdir(d, sizeof d, n);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {600, 600};
        if (chdir(d) != 0) _exit(5);
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
        sml_prop_case c;
        memset(&c, 0, sizeof c);
        c.op = SML_SOFTMAX;
        c.dtype = SML_F32;
        c.rows = c.cols = c.ld = 1;
        c.seed = 1;
        if (sml_prop_case_alloc(&c) != SML_OK) _exit(4);
        memset(c.x, 0, sizeof(float));
        sml_prop_repro m;
        sml_prop_repro_describe(
            &m, "cpu_naive", SML_PROP_AGREEMENT, SML_PROP_FAIL,
            "planted: a message long enough that the reproducer's .json passes 600 bytes, "
            "while its 1x1 input .npy stays far below that limit",
            1, 0, 0, &c, 0);
        char jp[2048], err[1024];
        sml_status st = sml_prop_repro_save(".", &c, &m, NULL, jp, sizeof jp, err, sizeof err);
        _exit(st == SML_OK ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    LOG[0] = 0;
    sml_test_check_case(
        &T, &F, LOG, n, WIFEXITED(status) && WEXITSTATUS(status) == 0 && sml_dir_entries(d) == 0,
        "sml_prop_repro_save with room for the .x.npy but not the .json fails and leaves neither");
}

/* Outputs that must be refused before anything is written, outputs that are not regular
 * files, and the writer's temporaries on signals. */
static void more_cases(int nodes) {
    char d[300], p[600], q[600], buf[8192], fx[1200], cmd[2400];
    snprintf(fx, sizeof fx, "%s/targets_ledger.json", F.fixtures);
    /* 12. A FIFO nothing reads: refused at once (it blocked forever). */
    if (sml_case_filter_want(&F, 12)) {
        subdir(d, sizeof d, 12);
        snprintf(p, sizeof p, "%s/fifo", d);
        if (mkfifo(p, 0644) != 0)
            skip(12, "mkfifo failed");
        else {
            int rc = sml_shell(cmd, sizeof cmd, LOG, sizeof LOG, SML_SHELL_ECHO_RC,
                               "cd '%s' && timeout 20 '%s' targets '%s' --json fifo", d, F.cli, fx);
            sml_test_check_case(&T, &F, LOG, 12, rc == 2 && strstr(LOG, "fifo: is a FIFO"),
                                "targets --json FIFO exits 2 at once, naming it");
        }
    }
    /* 13. "-" is stdout. */
    if (sml_case_filter_want(&F, 13)) {
        subdir(d, sizeof d, 13);
        const char *a[] = {"targets", fx, "--json", "-", NULL};
        int rc = run(d, a, 0);
        sml_test_check_case(&T, &F, LOG, 13,
                            rc == 1 && strstr(LOG, "\"schema\"") && sml_dir_entries(d) == 0,
                            "targets --json - writes the JSON to stdout and no file named '-'");
    }
    signal_case(14, SIGTERM);
    signal_case(15, SIGINT);
    repro_together(20);
    /* 16-18. An output naming an input or another output is refused, nothing written. */
    if (sml_case_filter_want(&F, 16)) {
        subdir(d, sizeof d, 16);
        snprintf(p, sizeof p, "%s/L.json", d);
        snprintf(cmd, sizeof cmd, "cp '%s/plot_ledger.json' '%s'", F.fixtures, p);
        if (system(cmd) != 0) printf("test_cli_outputs: %s failed\n", cmd);
        cli_slurp(p, buf, sizeof buf);
        const char *a[] = {"plot", "L.json", "./L.json", NULL};
        int rc = run(d, a, 0);
        char now[8192];
        sml_test_check_case(&T, &F, LOG, 16,
                            rc == 2 && !strcmp(cli_slurp(p, now, sizeof now), buf) &&
                                strstr(LOG, "L.json"),
                            "plot L.json ./L.json exits 2 and leaves the ledger as it was");
    }
    if (sml_case_filter_want(&F, 17)) {
        subdir(d, sizeof d, 17);
        snprintf(p, sizeof p, "%s/x.npy", d);
        float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        char err[512];
        sml_npy_write_2d(p, SML_F32, 2, 4, x, err, sizeof err);
        cli_slurp(p, buf, sizeof buf);
        snprintf(q, sizeof q, "%s/alias.npy", d);
        if (symlink("x.npy", q) != 0) perror("symlink");
        const char *a[] = {"check",     "--input", "x.npy",     "--kernel",
                           "cpu_naive", "--json",  "alias.npy", NULL};
        int rc = run(d, a, 0);
        const char *b[] = {"check", "--input", "x.npy", "--output",
                           "x.npy", "--json",  "x.npy", NULL};
        int rc2 = run(d, b, 0);
        char now[8192];
        sml_test_check_case(&T, &F, LOG, 17,
                            rc == 2 && rc2 == 2 &&
                                !memcmp(cli_slurp(p, now, sizeof now), buf, 64) &&
                                sml_dir_entries(d) == 2,
                            "check --input x.npy --json (a link to x.npy), and --output x.npy "
                            "--json x.npy, exit 2 and keep x.npy");
    }
    if (sml_case_filter_want(&F, 18)) {
        subdir(d, sizeof d, 18);
        const char *a[] = {"bench",   "--backend", "cpu_naive", "--rows", "4",   "--cols", "64",
                           "--quiet", "--json",    "F",         "--md",   "./F", NULL};
        int rc = run(d, a, 0);
        sml_test_check_case(&T, &F, LOG, 18,
                            rc == 2 && sml_dir_entries(d) == 0 && strstr(LOG, "--md"),
                            "bench --json F --md ./F exits 2 naming --md, nothing written");
    }
    /* 19. "nothing written" is true: --save outputs appear only after the --json report. */
    if (sml_case_filter_want(&F, 19)) {
        if (!nodes)
            skip(19, "mknod not permitted");
        else {
            subdir(d, sizeof d, 19);
            snprintf(p, sizeof p, "%s/x.npy", d);
            float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
            char err[512], full[400];
            sml_npy_write_2d(p, SML_F32, 2, 4, x, err, sizeof err);
            path(full, sizeof full, "full");
            const char *a[] = {"check",  "--input", "x.npy",  "--kernel", "cpu_naive",
                               "--save", "D",       "--json", full,       NULL};
            int rc = run(d, a, 0);
            const char *b[] = {"check",  "--input", "x.npy",  "--output", "x.npy",
                               "--save", "D",       "--json", full,       NULL};
            int rc2 = run(d, b, 0);
            sml_test_check_case(&T, &F, LOG, 19, rc == 2 && rc2 == 2 && sml_dir_entries(d) == 1,
                                "check --input x.npy [--output x.npy] --save D --json FULL-DEVICE "
                                "exits 2 and writes nothing");
        }
    }
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    if (sml_cli_setup(T.test, F.cli, TMP, sizeof TMP)) return 1;
    char p[600], q[600], d[300], buf[8192], fx[1200];
    const int nodes = make_node("full", 7) && make_node("null", 3);
    snprintf(fx, sizeof fx, "%s/targets_ledger.json", F.fixtures);

    /* 1. check --json onto a full device: a failed write is not a pass. */
    if (sml_case_filter_want(&F, 1)) {
        if (!nodes)
            skip(1, "mknod not permitted");
        else {
            path(p, sizeof p, "full");
            CHECK1[12] = p;
            int rc = run(TMP, CHECK1, 0);
            sml_test_check_case(&T, &F, LOG, 1, rc != 0 && is_chr(p),
                                "check --json FULL-DEVICE exits non-zero and leaves the device");
        }
    }
    /* 2. check --json under a file-size limit: the old file stays, no temporary is left. */
    if (sml_case_filter_want(&F, 2)) {
        subdir(d, sizeof d, 2);
        snprintf(p, sizeof p, "%s/out.json", d);
        cli_write(p, "OLD\n");
        CHECK1[12] = "out.json";
        int rc = run(d, CHECK1, 200);
        sml_test_check_case(&T, &F, LOG, 2,
                            rc != 0 && !strcmp(cli_slurp(p, buf, sizeof buf), "OLD\n") &&
                                sml_dir_entries(d) == 1,
                            "check --json past a 200-byte file-size limit exits non-zero, keeps "
                            "the old out.json, leaves "
                            "nothing else");
    }
    /* 3. check --json into /proc, which holds no files of ours. */
    if (sml_case_filter_want(&F, 3)) {
        CHECK1[12] = "/proc/sml-no-such-dir/x.json";
        sml_test_check_case(&T, &F, LOG, 3, run(TMP, CHECK1, 0) != 0,
                            "check --json /proc/sml-no-such-dir/x.json exits non-zero");
    }
    /* 4-5. targets --json onto device nodes: written through, never replaced. */
    if (sml_case_filter_want(&F, 4)) {
        if (!nodes)
            skip(4, "mknod not permitted");
        else {
            path(p, sizeof p, "full");
            const char *a[] = {"targets", fx, "--json", p, NULL};
            int rc = run(TMP, a, 0);
            sml_test_check_case(
                &T, &F, LOG, 4, rc == 2 && is_chr(p),
                "targets --json FULL-DEVICE exits 2 and the device is still a device");
        }
    }
    if (sml_case_filter_want(&F, 5)) {
        if (!nodes)
            skip(5, "mknod not permitted");
        else {
            path(p, sizeof p, "null");
            const char *a[] = {"targets", fx, "--json", p, "--md", "/proc/self/fd/1", NULL};
            int rc = run(TMP, a, 0);
            sml_test_check_case(&T, &F, LOG, 5, rc == 1 && is_chr(p) && strstr(LOG, "# ") != NULL,
                                "targets --json NULL-DEVICE --md /proc/self/fd/1 writes through "
                                "both (exit 1: the fixture "
                                "misses a target) and leaves the device");
        }
    }
    /* 6. A symbolic link stays a link; the file it names gets the new contents. */
    if (sml_case_filter_want(&F, 6)) {
        subdir(d, sizeof d, 6);
        snprintf(p, sizeof p, "%s/real.json", d);
        snprintf(q, sizeof q, "%s/link.json", d);
        cli_write(p, "OLD\n");
        chmod(p, 0640);
        if (symlink("real.json", q) != 0)
            perror("test_cli_outputs: symlink (the case below will fail)");
        const char *a[] = {"targets", fx, "--json", "link.json", NULL};
        int rc = run(d, a, 0);
        struct stat ls, rs;
        int link_kept = lstat(q, &ls) == 0 && S_ISLNK(ls.st_mode);
        int mode_kept = stat(p, &rs) == 0 && (rs.st_mode & 0777) == 0640;
        sml_test_check_case(&T, &F, LOG, 6,
                            rc == 1 && link_kept && mode_kept &&
                                cli_slurp(p, buf, sizeof buf)[0] == '{' && sml_dir_entries(d) == 2,
                            "targets --json LINK keeps the link and the target's mode, and "
                            "rewrites the file it points to");
    }
    /* 7. bench: a failed ledger write keeps the previous ledger of that name. */
    if (sml_case_filter_want(&F, 7)) {
        subdir(d, sizeof d, 7);
        snprintf(p, sizeof p, "%s/led", d);
        mkdir(p, 0755);
        snprintf(q, sizeof q, "%s/led/custom_softmax.json", d);
        cli_write(q, "OLD LEDGER\n");
        const char *a[] = {"bench",  "--backend", "cpu_naive",     "--rows", "4",
                           "--cols", "64",        "--min-samples", "2",      "--max-seconds",
                           "0.01",   "--quiet",   "--ledger",      "led",    NULL};
        int rc = run(d, a, 2048);
        sml_test_check_case(&T, &F, LOG, 7,
                            rc != 0 && !strcmp(cli_slurp(q, buf, sizeof buf), "OLD LEDGER\n") &&
                                cli_count(p, ".tmp") == 0 && cli_count(p, ".json") == 1,
                            "bench past a 2 KiB file-size limit exits non-zero and keeps "
                            "led/custom_softmax.json as it was");
    }
    /* 8. bench --json FILE writes FILE, and leaves ./ledger alone. */
    if (sml_case_filter_want(&F, 8)) {
        subdir(d, sizeof d, 8);
        const char *a[] = {"bench",  "--backend", "cpu_naive",     "--rows",    "4",
                           "--cols", "64",        "--min-samples", "2",         "--max-seconds",
                           "0.01",   "--quiet",   "--json",        "mine.json", NULL};
        int rc = run(d, a, 0);
        snprintf(p, sizeof p, "%s/ledger", d);
        snprintf(q, sizeof q, "%s/mine.json", d);
        struct stat st;
        sml_test_check_case(&T, &F, LOG, 8,
                            rc == 0 && stat(p, &st) != 0 &&
                                strstr(cli_slurp(q, buf, sizeof buf), "softmax-lab-ledger/"),
                            "bench --json mine.json writes mine.json and creates no ./ledger");
    }
    /* 9. plot past a file-size limit keeps the old SVG. */
    if (sml_case_filter_want(&F, 9)) {
        subdir(d, sizeof d, 9);
        snprintf(p, sizeof p, "%s/out.svg", d);
        cli_write(p, "OLD\n");
        char led[1200];
        snprintf(led, sizeof led, "%s/plot_ledger.json", F.fixtures);
        const char *a[] = {"plot", led, "out.svg", NULL};
        int rc = run(d, a, 300);
        sml_test_check_case(
            &T, &F, LOG, 9,
            rc != 0 && !strcmp(cli_slurp(p, buf, sizeof buf), "OLD\n") && sml_dir_entries(d) == 1,
            "plot past a 300-byte file-size limit exits non-zero and keeps the old out.svg");
    }
    /* 10. A directory where a file is expected, and a path ending in '/'. */
    if (sml_case_filter_want(&F, 10)) {
        subdir(d, sizeof d, 10);
        CHECK1[12] = ".";
        int rc1 = run(d, CHECK1, 0);
        const char *a[] = {"targets", fx, "--json", "sub/", NULL};
        int rc2 = run(d, a, 0);
        sml_test_check_case(&T, &F, LOG, 10, rc1 != 0 && rc2 == 2 && sml_dir_entries(d) == 0,
                            "check --json . and targets --json sub/ are refused and write nothing");
    }
    /* 11. A reproducer saved past a file-size limit: no half-written .npy or .json is left. */
    if (sml_case_filter_want(&F, 11)) {
        subdir(d, sizeof d, 11);
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit rl = {3000, 3000};
            if (chdir(d) != 0) _exit(5);
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
            sml_prop_case c;
            memset(&c, 0, sizeof c);
            c.op = SML_SOFTMAX;
            c.dtype = SML_F32;
            c.rows = 16;
            c.cols = 64;
            c.ld = 64;
            c.seed = 1;
            if (sml_prop_case_alloc(&c) != SML_OK) _exit(4);
            memset(c.x, 0, (size_t)(c.rows * c.cols) * sizeof(float));
            sml_prop_repro m;
            sml_prop_repro_describe(&m, "cpu_naive", SML_PROP_AGREEMENT, SML_PROP_FAIL, "planted",
                                    1, 0, 0, &c, 0);
            char jp[2048], err[1024];
            sml_status s = sml_prop_repro_save(".", &c, &m, NULL, jp, sizeof jp, err, sizeof err);
            _exit(s == SML_OK ? 1 : 0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        LOG[0] = 0;
        sml_test_check_case(&T, &F, LOG, 11,
                            WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                                sml_dir_entries(d) == 0,
                            "sml_prop_repro_save past a 3000-byte limit fails and leaves no file "
                            "(a 4 KiB x.npy would be cut)");
    }
    more_cases(nodes);
    path(p, sizeof p, "full"); /* no device nodes left lying around in /tmp */
    unlink(p);
    path(p, sizeof p, "null");
    unlink(p);
    return sml_tally_finish(&T);
}
