/* command.c: a whole command in a worker process, for the commands that run kernels outside
 * the property suite's jobs (check --input, check --against, bench, the edge-shape
 * harness). The supervisor runs this program again with the same command line plus
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
    long long calls;
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

/* This process's command line, NUL-separated, as an argv (malloc'd; one block). */
static char **own_argv(void) {
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ssize_t k;
    while (buf && (k = read(fd, buf + n, cap - n - 1)) > 0) {
        n += (size_t)k;
        if (n + 1 >= cap) {
            char *q = realloc(buf, cap *= 2);
            if (!q) free(buf);
            buf = q;
        }
    }
    close(fd);
    if (!buf || n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    size_t argc = 0;
    for (size_t i = 0; i < n; i++) argc += buf[i] == 0;
    char **argv = malloc((argc + 3) * sizeof *argv + n + 1);
    if (argv) {
        char *text = (char *)(argv + argc + 3);
        memcpy(text, buf, n + 1);
        size_t a = 0;
        for (size_t i = 0; i < n; i += strlen(text + i) + 1) argv[a++] = text + i;
        argv[a++] = "--in-process";
        argv[a] = NULL;
    }
    free(buf);
    return argv;
}

int sml_worker_command_available(void) {
    char exe[PATH_MAX];
    const char *pre = getenv("SML_COMMAND_ARGV");
    return child_fd < 0 && ((pre && *pre) || sml_self_exe_is(exe, sizeof exe, "softmax-lab") ||
                            sml_self_exe_is(exe, sizeof exe, "softmax-lab-edge-shapes"));
}

/* SML_COMMAND_ARGV's program (tab-separated, its first word an absolute path), then `line`
 * past its program name, then --in-process (malloc'd; one block). NULL where there is none. */
static char **prefixed_argv(char *const *line) {
    const char *pre = getenv("SML_COMMAND_ARGV");
    if (!pre || pre[0] != '/' || !line || !line[0]) return NULL;
    size_t words = 1, text = strlen(pre) + 1;
    for (const char *c = pre; *c; c++) words += *c == '\t';
    for (char *const *a = line + 1; *a; a++) words++, text += strlen(*a) + 1;
    char **argv = malloc((words + 2) * sizeof *argv + text);
    if (!argv) return NULL;
    char *store = (char *)(argv + words + 2);
    memcpy(store, pre, strlen(pre) + 1);
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(store, "\t", &save); t; t = strtok_r(NULL, "\t", &save))
        argv[n++] = t;
    store += strlen(pre) + 1;
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

/* Wait for the child, killing it when the kernel call it announced last overran its
 * deadline (`slow` times the suite's) or the run's time (deadline, 0: none) ran out.
 * Its wait status; *killed 1 at the call's deadline, 2 at the run's end; *limit. */
static int watch(pid_t pid, int fd, cmd_board *b, double slow, double deadline, int *killed,
                 double *limit) {
    int status = 0;
    cmd_note part;
    size_t have = 0;
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
        double now = sml_prop_now();
        if (!*killed && b->calls > 0 && !b->done) {
            double d = slow * sml_worker_case_deadline(b->elements);
            if (now - b->start > d) *killed = 1, *limit = d;
        }
        if (!*killed && deadline > 0 && now > deadline) *killed = 2, *limit = now - b->start;
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
    if (killed)
        snprintf(cause, n, "did not finish %s in %.1f s (killed)", what, limit);
    else if (WIFSIGNALED(status)) {
        const char *name = sml_wk_signal_name(WTERMSIG(status));
        if (name)
            snprintf(cause, n, "%s during %s", name, what);
        else
            snprintf(cause, n, "signal %d during %s", WTERMSIG(status), what);
    } else if (WIFEXITED(status))
        snprintf(cause, n, "exited with status %d during %s", WEXITSTATUS(status), what);
    else
        snprintf(cause, n, "ended (wait status 0x%x) during %s", (unsigned)status, what);
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
static int run_once(const char *cmd, const char *exe, char **argv, double slow, double deadline,
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
    int status = watch(pid, p[0], &b, slow, deadline, &killed, &limit);
    close(p[0]);
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

/* How many kernels may end their worker before a rerun gives up. */
#define MAX_ENDED 8

int sml_worker_command(const char *cmd, double slow, double seconds, int again, int out,
                       char *const *line) {
    /* SML_COMMAND_ARGV's program by its path, else this very executable (its file may have
     * been replaced since it started). */
    char **argv = prefixed_argv(line);
    const char *exe = argv ? argv[0] : "/proc/self/exe";
    if (!argv) argv = own_argv();
    if (!argv) {
        fprintf(stderr, "softmax-lab %s: cannot read this process's command line\n", cmd);
        return 2;
    }
    double deadline = seconds > 0 ? sml_prop_now() + seconds : 0.0;
    char ended[MAX_ENDED * 300] = "";
    int rc = -1, deaths = 0;
    for (; deaths <= MAX_ENDED; deaths++) {
        size_t before = strlen(ended);
        rc = run_once(cmd, exe, argv, slow, deadline, out, ended, sizeof ended);
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
