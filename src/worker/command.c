/* command.c: a whole command in a worker process, for the command that runs kernels outside
 * the property suite's jobs and judges them there (bench). The supervisor runs this program again with the same command line plus
 * --in-process (or, where SML_COMMAND_ARGV names a program, that program with the command
 * line given to sml_cli_main: the Python binding's `python3 -m softmax_lab`). The child
 * announces each kernel call on a pipe (sml_call_watch: one write a call, a fixed-size
 * record) and, when its command returns, its exit code. The child's exit status is the
 * command's only when that code was announced and matches: a kernel that ends the process
 * (exit(0) included), crashes it or hangs it turns into a FAIL naming the kernel and the
 * call, never into the command's verdict. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "io/per_device.h"
#include "worker/ending.h"
#include "worker/worker.h"

/* What the child writes on the pipe: a kernel call it is about to make, or its exit code. */
typedef struct cmd_note {
    int32_t done; /* 1: the command returned with rc */
    int32_t rc;
    double elements; /* the call's input elements */
    char kernel[64]; /* its kernel */
    char what[96];   /* "softmax fp32 512x1024" */
} cmd_note;

/* What the supervisor knows of the child. */
typedef struct cmd_board {
    int done, rc;
    long long calls, slow;
    double start; /* when the last call was announced (sml_prop_now) */
    double elements;
    char kernel[64];
    char what[96];
} cmd_board;

static int child_fd = -1; /* the child's end of the pipe: set once at its start */

static void send_note(const cmd_note *n) {
    const char *p = (const char *)n;
    size_t left = sizeof *n;
    while (left) {
        ssize_t k = write(child_fd, p, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        p += k;
        left -= (size_t)k;
    }
}

static void announce(const sml_kernel *k, const sml_problem *p) {
    cmd_note n;
    memset(&n, 0, sizeof n);
    snprintf(n.kernel, sizeof n.kernel, "%s", k->name);
    snprintf(n.what, sizeof n.what, "%s %s %lldx%lld", sml_op_name(p->op), sml_dtype_name(p->dtype),
             (long long)p->rows, (long long)p->cols);
    n.elements = (double)p->rows * (double)p->cols;
    send_note(&n);
}

int sml_worker_command_child(void) {
    const char *v = getenv("SML_CMD_FD");
    if (!v || !*v) return 0;
    child_fd = atoi(v);
    unsetenv("SML_CMD_FD");
    /* A fault ends the child by its signal, which the supervisor names (a sanitizer's or a
     * runtime's handler would turn it into an exit status of its own). */
    const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
    sml_call_watch_set(announce);
    return 1;
}

void sml_worker_command_done(int rc) {
    if (child_fd < 0) return;
    cmd_note n;
    memset(&n, 0, sizeof n);
    n.done = 1;
    n.rc = rc;
    send_note(&n);
}

/* SML_COMMAND_ARGV where it names a program by its absolute path, else NULL. */
static const char *command_program(void) {
    const char *pre = getenv("SML_COMMAND_ARGV");
    return pre && pre[0] == '/' ? pre : NULL;
}

int sml_worker_command_available(void) {
    char exe[PATH_MAX];
    return child_fd < 0 && (command_program() || sml_self_exe_is(exe, sizeof exe, "softmax-lab") ||
                            sml_self_exe_is(exe, sizeof exe, "softmax-lab-edge-shapes"));
}

/* The child's argv (malloc'd; one block): SML_COMMAND_ARGV's words (tab-separated) or
 * line[0], then `line` past its program name, then --in-process. NULL without memory. */
static char **child_argv(char *const *line) {
    const char *pre = command_program(), *head = pre ? pre : line[0];
    size_t words = 1, text = strlen(head) + 1;
    for (const char *c = pre; c && *c; c++) words += *c == '\t';
    for (char *const *a = line + 1; *a; a++) words++, text += strlen(*a) + 1;
    char **argv = malloc((words + 2) * sizeof *argv + text);
    if (!argv) return NULL;
    char *store = (char *)(argv + words + 2);
    memcpy(store, head, strlen(head) + 1);
    size_t n = 0;
    if (pre)
        for (char *save = NULL, *t = strtok_r(store, "\t", &save); t;
             t = strtok_r(NULL, "\t", &save))
            argv[n++] = t;
    else
        argv[n++] = store;
    store += strlen(head) + 1;
    for (char *const *a = line + 1; *a; a++) {
        size_t k = strlen(*a) + 1;
        memcpy(store, *a, k);
        argv[n++] = store;
        store += k;
    }
    argv[n++] = "--in-process";
    argv[n] = NULL;
    return argv;
}

static pid_t start(const char *exe, char **argv, int wfd, int out) {
    char var[32];
    snprintf(var, sizeof var, "%d", wfd);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        fcntl(wfd, F_SETFD, 0);
        if (out >= 0) dup2(out, 1);
        setenv("SML_CMD_FD", var, 1);
        execv(exe, argv);
        _exit(127);
    }
    return pid;
}

/* Read what the child wrote (non-blocking) into the board. */
static void drain(int fd, cmd_board *b, cmd_note *part, size_t *have) {
    for (;;) {
        ssize_t k = read(fd, (char *)part + *have, sizeof *part - *have);
        if (k <= 0) return;
        *have += (size_t)k;
        if (*have < sizeof *part) continue;
        *have = 0;
        if (part->done) {
            b->done = 1;
            b->rc = part->rc;
            continue;
        }
        b->calls++;
        b->start = sml_prop_now();
        b->elements = part->elements;
        snprintf(b->kernel, sizeof b->kernel, "%s", part->kernel);
        snprintf(b->what, sizeof b->what, "%s", part->what);
    }
}

/* The deadline of the call the child announced last: --case-timeout where the command line
 * gives one, else `slow` times the suite's for its elements. */
static double call_deadline(const cmd_board *b, double slow, double timeout) {
    return timeout > 0 ? timeout : slow * sml_worker_case_deadline(b->elements);
}

/* Wait for the child. A kernel call past its deadline is slow (counted, once per call); past
 * ten times it, the child is killed: the command runs nothing else while the call runs, so
 * that wait is the call's run alone. Its wait status; *killed 1 when killed, with the time
 * the call had in *limit. */
static int watch(pid_t pid, int fd, cmd_board *b, double slow, double timeout, int *killed,
                 double *limit) {
    int status = 0;
    cmd_note part;
    size_t have = 0;
    long long slow_call = -1;
    *killed = 0;
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, 20);
        drain(fd, b, &part, &have);
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) {
            drain(fd, b, &part, &have);
            return status;
        }
        if (b->calls > 0 && !b->done) {
            double d = call_deadline(b, slow, timeout), t = sml_prop_now() - b->start;
            if (t > d && slow_call != b->calls) slow_call = b->calls, b->slow++;
            if (t > 10.0 * d) *killed = 1, *limit = 10.0 * d;
        }
        if (*killed) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return status;
        }
    }
}

/* Why the child ended before its command returned. */
static void describe(const char *cmd, const cmd_board *b, int status, int killed, double limit,
                     char *cause, size_t n) {
    const char *what = b->calls ? b->what : "its start";
    char how[48];
    sml_wk_status_words(status, how, sizeof how);
    if (killed)
        snprintf(cause, n, "did not finish %s in %.1f s, ten times its deadline (killed)", what,
                 limit);
    else
        snprintf(cause, n, "%s during %s", how, what);
    if (!b->calls)
        snprintf(cause + strlen(cause), n - strlen(cause), " (%s ran no kernel yet)", cmd);
}

/* The FAIL of a command whose worker ended before its command returned. */
static void report(const char *cmd, const cmd_board *b, char **argv, const char *cause) {
    if (b->calls > 0)
        printf("FAIL %s: the kernel's worker %s\n", b->kernel, cause);
    else
        printf("FAIL %s: its worker %s\n", cmd, cause);
    const char *prog = strrchr(argv[0], '/');
    printf("  rerun in one process (for a debugger): %s", prog ? prog + 1 : argv[0]);
    for (char **a = argv + 1; *a; a++) printf(" %s", *a);
    printf("\n");
    fflush(stdout);
}

/* One run of the child; its exit code, or -1 (the FAIL printed, the cause in `ended` as a
 * line "kernel<TAB>cause" when a kernel was running). */
static int run_once(const char *cmd, const char *exe, char **argv, double slow, double timeout,
                    int out, char *ended, size_t n) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "softmax-lab %s: cannot start a worker process (pipe: %s)\n", cmd,
                strerror(errno));
        return 2;
    }
    pid_t pid = start(exe, argv, p[1], out);
    int err = errno;
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        fprintf(stderr, "softmax-lab %s: cannot start a worker process (%s)\n", cmd, strerror(err));
        return 2;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    cmd_board b;
    memset(&b, 0, sizeof b);
    int killed;
    double limit = 0.0;
    int status = watch(pid, p[0], &b, slow, timeout, &killed, &limit);
    close(p[0]);
    if (b.slow)
        fprintf(stderr,
                "note: %lld kernel call%s passed %s deadline and finished within ten times it: "
                "slow, not failed\n",
                b.slow, b.slow == 1 ? "" : "s", b.slow == 1 ? "its" : "their");
    if (!killed && WIFEXITED(status) && b.done && b.rc == WEXITSTATUS(status)) return b.rc;
    /* a ^C reaches both processes: not the kernel's doing */
    if (!killed && WIFSIGNALED(status) &&
        (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
        return 128 + WTERMSIG(status);
    char cause[160];
    describe(cmd, &b, status, killed, limit, cause, sizeof cause);
    report(cmd, &b, argv, cause);
    size_t at = strlen(ended);
    if (b.calls > 0 && at < n) snprintf(ended + at, n - at, "%s\t%s\n", b.kernel, cause);
    return -1;
}

/* --case-timeout S of the command line (0: none given). The child checks the value. */
static double case_timeout(char *const *line) {
    for (char *const *a = line + 1; a[0] && a[1]; a++)
        if (!strcmp(a[0], "--case-timeout")) return strtod(a[1], NULL);
    return 0.0;
}

/* How many kernels may end their worker before a rerun gives up. */
#define MAX_ENDED 8

int sml_worker_command(const char *cmd, double slow, int again, int out, char *const *line) {
    /* SML_COMMAND_ARGV's program by its path, else this very executable (its file may have
     * been replaced since it started). */
    char **argv = child_argv(line);
    if (!argv) {
        fprintf(stderr, "softmax-lab %s: out of memory\n", cmd);
        return 2;
    }
    const char *exe = command_program() ? argv[0] : "/proc/self/exe";
    char ended[MAX_ENDED * 300] = "";
    int rc = -1, deaths = 0;
    for (; deaths <= MAX_ENDED; deaths++) {
        size_t before = strlen(ended);
        rc = run_once(cmd, exe, argv, slow, case_timeout(line), out, ended, sizeof ended);
        if (rc != -1) break;
        /* Rerun without the kernel that ended it (its rows say why), when the command can. */
        if (!again || strlen(ended) == before) break;
        setenv("SML_WORKER_ENDED", ended, 1);
    }
    unsetenv("SML_WORKER_ENDED");
    free(argv);
    if (rc == -1 || deaths > 0) {
        printf("%s: FAILED (exit 1): a kernel ended its worker (the FAIL line%s above)\n", cmd,
               deaths > 1 ? "s" : "");
        return 1;
    }
    return rc;
}
