/* spawn.c: starting and ending worker processes. The worker command is the running
 * softmax-lab executable (/proc/self/exe) with the hidden command `__worker`, or the argv
 * prefix in SML_WORKER_ARGV (tab-separated; the Python binding sets it to
 * "python3 -m softmax_lab __worker"). Everything the child needs is built before fork: a
 * supervisor with host threads may only call async-signal-safe functions between fork and
 * exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "io/per_device.h"
#include "worker/board.h"
#include "worker/worker.h"

extern char **environ;

/* The executable in buf when it is softmax-lab itself, or softmax-lab-edge-shapes (each serves
 * __worker); else 0. */
static int self_exe(char *buf, size_t n) {
    return sml_self_exe_is(buf, n, "softmax-lab") ||
           sml_self_exe_is(buf, n, "softmax-lab-edge-shapes");
}

int sml_worker_available(void) {
    const char *env = getenv("SML_WORKER_ARGV");
    if (env && *env) return 1;
    char exe[PATH_MAX];
    return self_exe(exe, sizeof exe);
}

/* A worker's argv: a tool's (wrap) and the worker command's words in the first MAX_WORDS, then
 * a Python module's --load, then the C libraries it loads at its start (their kernels' jobs
 * need no dlopen later) and --allow-writable-plugin. */
#define MAX_WORDS 28
#define MAX_LIBS  64
#define MAX_ARGS  (MAX_WORDS + 2 + 2 * MAX_LIBS + 2)

/* The distinct plugin libraries of the registered kernels (at most MAX_LIBS; a job whose
 * library is not among them has it loaded when the job comes). */
static int plugin_libraries(const char **libs) {
    int n = 0;
    for (size_t i = 0; i < sml_kernel_count() && n < MAX_LIBS; i++) {
        const char *lib = sml_kernel_library(sml_kernel_at(i));
        if (!lib || !lib[0] || sml_source_is_python(lib)) continue;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++) seen = !strcmp(libs[j], lib);
        if (!seen) libs[n++] = lib;
    }
    return n;
}

/* argv of the worker (pointers into `store`), NULL-terminated; 0 when there is none. */
static int worker_argv(const sml_worker_opts *o, char *store, size_t n, char **argv) {
    const char *env = getenv("SML_WORKER_ARGV");
    int argc = 0;
    for (const char *const *t = o && o->wrap ? o->wrap : NULL; t && *t && argc < MAX_WORDS / 2; t++)
        argv[argc++] = (char *)*t;
    if (env && *env) {
        if (strlen(env) + 1 > n) return 0;
        strcpy(store, env);
        for (char *save = NULL, *t = strtok_r(store, "\t", &save); t && argc < MAX_WORDS;
             t = strtok_r(NULL, "\t", &save))
            argv[argc++] = t;
    } else {
        if (!self_exe(store, n)) return 0;
        argv[argc++] = store;
        argv[argc++] = "__worker";
    }
    if (o && o->library && sml_source_is_python(o->library)) {
        argv[argc++] = "--load";
        argv[argc++] = (char *)o->library;
    }
    /* Every plugin library this process loaded, loaded by the worker before its slots'
     * threads start: a dlopen in one thread while another runs exit() can run a library's
     * initializers a second time (glibc's exit marks them not run), and a kernel that calls
     * exit() is one the worker must survive judging. This process has checked each library
     * already (--allow-writable-plugin: its decision stands). */
    const char *libs[MAX_LIBS];
    int nlibs = plugin_libraries(libs);
    for (int i = 0; i < nlibs; i++) {
        argv[argc++] = "--load";
        argv[argc++] = (char *)libs[i];
    }
    if (nlibs) argv[argc++] = "--allow-writable-plugin";
    argv[argc] = NULL;
    return argc;
}

/* The environment of the child: ours, without SML_WORKER_FDS, SML_WORKER_KERNEL and (with a
 * device) CUDA_VISIBLE_DEVICES, plus those as the worker needs them. */
static char **child_env(char *fds, char *kernel, char *cvd) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = malloc((n + 4) * sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(environ[i], "SML_WORKER_FDS=", 15)) continue;
        if (!strncmp(environ[i], "SML_WORKER_KERNEL=", 18)) continue;
        if (!strncmp(environ[i], "SML_WORKER_MODE=", 16)) continue;
        if (cvd[0] && !strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21)) continue;
        env[k++] = environ[i];
    }
    env[k++] = fds;
    env[k++] = kernel;
    if (cvd[0]) env[k++] = cvd;
    env[k] = NULL;
    return env;
}

/* CUDA_VISIBLE_DEVICES=<entry `device` of ours> ("" with device < 0). */
static void device_var(int device, char *out, size_t n) {
    out[0] = 0;
    if (device < 0) return;
    char v[256];
    sml_device_env(device, v, sizeof v);
    snprintf(out, n, "CUDA_VISIBLE_DEVICES=%s", v);
}

size_t sml_wk_board_bytes(int nslots) {
    size_t n = sizeof(sml_worker_board) + (size_t)nslots * sizeof(sml_worker_slot);
    return (n + 4095) / 4096 * 4096;
}

static sml_worker_board *board_new(int nslots, size_t bytes, int *fd) {
    *fd = memfd_create("sml-worker-board", MFD_CLOEXEC);
    if (*fd < 0) return NULL;
    if (ftruncate(*fd, (off_t)bytes) != 0) {
        close(*fd);
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) {
        close(*fd);
        return NULL;
    }
    memset(p, 0, bytes);
    sml_worker_board *b = p;
    b->nslots = nslots;
    atomic_store(&b->fault_slot, -1);
    atomic_store(&b->exit_slot, -1);
    return b;
}

static void close_all(int *fds, int n) {
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]), fds[i] = -1;
}

/* The socket pairs of the slots: ours in w->sock, the child's in theirs. */
static int socket_pairs(sml_worker *w, int *theirs) {
    for (int i = 0; i < w->nslots; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
        w->sock[i] = sv[0];
        theirs[i] = sv[1];
    }
    return 0;
}

/* SML_WORKER_FDS=<board fd>,<slots>,<slot 0's socket>,... */
static void fds_var(int bfd, const int *theirs, int n, char *out, size_t cap) {
    size_t at = (size_t)snprintf(out, cap, "SML_WORKER_FDS=%d,%d", bfd, n);
    for (int i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, ",%d", theirs[i]);
}

/* fork and exec; the child's ends of the sockets and the board stay open across exec. */
static pid_t start_child(char **argv, char **env, int bfd, const int *theirs, int n) {
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < n; i++) fcntl(theirs[i], F_SETFD, 0);
        fcntl(bfd, F_SETFD, 0);
        if (strchr(argv[0], '/'))
            execve(argv[0], argv, env);
        else
            execvpe(argv[0], argv, env);
        _exit(127);
    }
    return pid;
}

sml_status sml_worker_spawn(sml_worker *w, const sml_worker_opts *o, char *why, size_t n) {
    memset(w, 0, sizeof *w);
    int theirs[SML_PROP_MAX_THREADS];
    for (int i = 0; i < SML_PROP_MAX_THREADS; i++) w->sock[i] = theirs[i] = -1;
    w->device = o ? o->device : -1;
    w->wrap = o ? o->wrap : NULL;
    w->nslots =
        o && o->slots > 1 ? (o->slots < SML_PROP_MAX_THREADS ? o->slots : SML_PROP_MAX_THREADS) : 1;
    size_t store_n = PATH_MAX + 4096;
    char *store_p = malloc(store_n);
    char *argv[MAX_ARGS];
    if (!store_p || !worker_argv(o, store_p, store_n, argv)) {
        free(store_p);
        snprintf(why, n,
                 "no worker command (not the softmax-lab executable; SML_WORKER_ARGV unset)");
        return SML_ERR_UNSUPPORTED;
    }
    if (socket_pairs(w, theirs) != 0) {
        snprintf(why, n, "socketpair: %s", strerror(errno));
        close_all(w->sock, w->nslots);
        close_all(theirs, w->nslots);
        free(store_p);
        return SML_ERR_IO;
    }
    int bfd = -1;
    w->board_bytes = sml_wk_board_bytes(w->nslots);
    w->board = board_new(w->nslots, w->board_bytes, &bfd);
    char fds[64 + 12 * SML_PROP_MAX_THREADS], cvd[300], kernel[128];
    fds_var(bfd, theirs, w->nslots, fds, sizeof fds);
    device_var(w->device, cvd, sizeof cvd);
    if (o && o->edge)
        snprintf(kernel, sizeof kernel, "SML_WORKER_MODE=edge");
    else
        snprintf(kernel, sizeof kernel, "SML_WORKER_KERNEL=%.96s", o && o->kernel ? o->kernel : "");
    char **env = w->board ? child_env(fds, kernel, cvd) : NULL;
    pid_t pid = env ? start_child(argv, env, bfd, theirs, w->nslots) : -1;
    int err = errno, had_env = env != NULL;
    free(env);
    free(store_p);
    close_all(theirs, w->nslots);
    if (bfd >= 0) close(bfd);
    if (pid < 0) {
        close_all(w->sock, w->nslots);
        if (w->board) munmap(w->board, w->board_bytes);
        w->board = NULL;
        snprintf(why, n, "%s: %s%s", had_env ? "fork" : "cannot set up the worker's board",
                 strerror(err),
                 err == EFBIG ? " (the file-size limit, ulimit -f, holds shared memory too)" : "");
        return SML_ERR_IO;
    }
    w->pid = pid;
    if (o && o->library && sml_source_is_python(o->library))
        snprintf(w->library, sizeof w->library, "%s", o->library);
    return SML_OK;
}

int sml_worker_await_start(const sml_worker *w, double limit, double cap) {
    if (!w->board || w->pid <= 0) return -1;
    double until = sml_prop_now() + limit;
    for (int ms = 1;; ms = ms < 16 ? 2 * ms : 16) {
        if (atomic_load(&w->board->started)) return 0;
        double now = sml_prop_now();
        if (cap > 0 && now >= cap) return 2;
        if (now >= until) return 1;
        /* Nothing comes on slot 0's socket before a request: readable means it closed. */
        struct pollfd pf = {w->sock[0], POLLIN, 0};
        int r = poll(&pf, 1, ms);
        if (r > 0 || (r < 0 && errno != EINTR)) return atomic_load(&w->board->started) ? 0 : -1;
    }
}

/* Reap the child within `seconds` (polling), else kill it and reap. Its wait status. */
int sml_wk_reap(sml_worker *w, double seconds) {
    int status = 0;
    if (w->pid <= 0) return 0;
    double end = sml_prop_now() + seconds;
    for (;;) {
        pid_t r = waitpid(w->pid, &status, WNOHANG);
        if (r == w->pid || (r < 0 && errno != EINTR)) break;
        if (sml_prop_now() >= end) {
            kill(w->pid, SIGKILL);
            while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
            break;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    w->pid = 0;
    return status;
}

int sml_worker_close(sml_worker *w) {
    int status = -1;
    if (w->pid > 0) {
        sml_wk_send(w->sock[0], SML_WK_QUIT, NULL, 0, NULL, 0);
        status = sml_wk_reap(w, w->wrap ? 60.0 : 1.0);
    }
    close_all(w->sock, w->nslots);
    if (w->board) munmap(w->board, w->board_bytes);
    w->board = NULL;
    w->pid = 0;
    return status;
}
