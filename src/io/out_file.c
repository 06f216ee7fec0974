/* out_file.c: write whole or not at all (out_file.h says how each kind of target is treated). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "io/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static sml_status fail(const char *name, const char *what, int e, char *err, size_t errlen) {
    if (err && errlen) {
        if (e)
            snprintf(err, errlen, "%.1024s: %s: %s", name, what, strerror(e));
        else
            snprintf(err, errlen, "%.1024s: %s", name, what);
    }
    return SML_ERR_IO;
}

/* Names of open files the kernel makes up (/proc/self/fd/1, /dev/stdout, /dev/fd/3): written
 * in place, since replacing the name would not reach the file behind it. */
static int system_path(const char *p) {
    return !strncmp(p, "/proc/", 6) || !strncmp(p, "/dev/fd/", 8) || !strcmp(p, "/dev/stdout") ||
           !strcmp(p, "/dev/stderr");
}

/* ---- Live temporaries: removed on every way out of the process ----
 * The one piece of process-wide state in the writer: the temporaries open right now, so that
 * exit() (atexit), SIGINT, SIGTERM, SIGHUP, SIGQUIT and the crash signals remove them. The
 * handlers are installed with the first temporary, and only for signals still at their
 * default action (a host program's own handlers, such as Python's SIGINT, are left alone).
 * The handler uses only unlink(), sigaction() and raise(), which are async-signal-safe. */
#define LIVE_MAX 256
static char live_path[LIVE_MAX][4096];
static volatile sig_atomic_t live_used[LIVE_MAX];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t live_once = PTHREAD_ONCE_INIT;
static const int live_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                                   SIGSEGV, SIGBUS,  SIGABRT, SIGFPE};

static void live_unlink_all(void) {
    for (int i = 0; i < LIVE_MAX; i++)
        if (live_used[i]) {
            live_used[i] = 0;
            unlink(live_path[i]);
        }
}

static void live_on_signal(int sig) {
    live_unlink_all();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered on return: the process ends as the signal would have ended it */
}

static void live_install(void) {
    atexit(live_unlink_all);
    for (size_t i = 0; i < sizeof live_signals / sizeof live_signals[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(live_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = live_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        sigaction(live_signals[i], &sa, NULL);
    }
}

/* Registers o->tmp; -1 when every slot is taken (the file is then refused: it could outlive
 * an interrupted run). */
static int live_add(const char *tmp) {
    pthread_once(&live_once, live_install);
    pthread_mutex_lock(&live_lock);
    int slot = -1;
    for (int i = 0; i < LIVE_MAX && slot < 0; i++)
        if (!live_used[i]) {
            snprintf(live_path[i], sizeof live_path[i], "%s", tmp);
            live_used[i] = 1;
            slot = i;
        }
    pthread_mutex_unlock(&live_lock);
    return slot;
}

static void live_remove(int slot) {
    if (slot < 0 || slot >= LIVE_MAX) return;
    pthread_mutex_lock(&live_lock);
    live_used[slot] = 0;
    pthread_mutex_unlock(&live_lock);
}

static sml_status open_fd_copy(sml_out_file *o, int fd, char *err, size_t errlen) {
    fflush(fd == 1 ? stdout : stderr);
    int d = dup(fd);
    o->f = d >= 0 ? fdopen(d, "w") : NULL;
    if (!o->f && d >= 0) close(d);
    if (!o->f) return fail(o->name, "cannot open for writing", errno, err, errlen);
    return SML_OK;
}

static sml_status open_in_place(sml_out_file *o, char *err, size_t errlen) {
    o->tmp[0] = 0;
    /* This process's own stdout or stderr (/dev/stdout with stdout sent to a file or a pipe):
     * write through the same open file, after what is already there, not from offset 0 over
     * it. */
    struct stat st, sf;
    for (int fd = 1; fd <= 2 && stat(o->path, &st) == 0; fd++) {
        if (fstat(fd, &sf) != 0 || sf.st_dev != st.st_dev || sf.st_ino != st.st_ino) continue;
        return open_fd_copy(o, fd, err, errlen);
    }
    /* Any other FIFO: opening it blocks until something reads it, maybe forever. One named as
     * an open descriptor (/dev/fd/N, /proc/self/fd/N: a pipe this process already holds, such
     * as the copy of stdout `--json -` writes to) has its reader already. */
    if (stat(o->path, &st) == 0 && S_ISFIFO(st.st_mode) && !system_path(o->path))
        return fail(o->name,
                    "is a FIFO: outputs are regular files, a character device such as "
                    "/dev/null, or - for stdout",
                    0, err, errlen);
    o->f = fopen(o->path, "w");
    if (!o->f) return fail(o->name, "cannot open for writing", errno, err, errlen);
    return SML_OK;
}

sml_status sml_out_open(sml_out_file *o, const char *path, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    o->name = path ? path : "(null)";
    o->live = -1;
    if (!path || !path[0]) return fail(o->name, "empty output path", 0, err, errlen);
    if (!strcmp(path, "-")) return open_fd_copy(o, 1, err, errlen);
    size_t len = strlen(path);
    if (len >= sizeof o->path)
        return fail("output path", "longer than 4095 characters", 0, err, errlen);
    if (path[len - 1] == '/') return fail(o->name, "names a directory, not a file", 0, err, errlen);
    memcpy(o->path, path, len + 1);
    struct stat st, lst;
    int mode = -1; /* the mode a replaced file keeps; -1: new file */
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return fail(o->name, "is a directory", 0, err, errlen);
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return open_in_place(o, err, errlen);
        if (!S_ISREG(st.st_mode))
            return fail(o->name, "is not a regular file or a character device", 0, err, errlen);
        if (system_path(path)) return open_in_place(o, err, errlen);
        mode = (int)(st.st_mode & 07777);
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            char *real = realpath(path, NULL);
            if (!real) return fail(o->name, "cannot resolve the symbolic link", errno, err, errlen);
            size_t rl = strlen(real);
            if (rl >= sizeof o->path) {
                free(real);
                return fail(o->name, "the link's target path is too long", 0, err, errlen);
            }
            memcpy(o->path, real, rl + 1);
            free(real);
        }
    } else if (errno != ENOENT) {
        return fail(o->name, "cannot write", errno, err, errlen);
    } else if (lstat(path, &lst) == 0) {
        return fail(o->name, "is a symbolic link to nothing", 0, err, errlen);
    } else if (system_path(path)) {
        return fail(o->name, "cannot create files there", ENOENT, err, errlen);
    }
    /* The temporary beside the target: the same file system, so the rename is atomic. */
    const char *slash = strrchr(o->path, '/');
    int dirlen = slash ? (int)(slash - o->path) + 1 : 0;
    const char *base = o->path + dirlen;
    for (int n = 0; n < 100; n++) {
        int w = snprintf(o->tmp, sizeof o->tmp, "%.*s.%.180s.%ld.%d.tmp", dirlen, o->path, base,
                         (long)getpid(), n);
        if (w < 0 || (size_t)w >= sizeof o->tmp)
            return fail(o->name, "path too long", 0, err, errlen);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) {
            int e = errno;
            o->tmp[0] = 0;
            return fail(o->name, "cannot create a file in its directory", e, err, errlen);
        }
        if (mode >= 0 && fchmod(fd, (mode_t)mode) != 0) {
            int e = errno;
            close(fd);
            unlink(o->tmp);
            o->tmp[0] = 0;
            return fail(o->name, "cannot set the mode", e, err, errlen);
        }
        o->live = live_add(o->tmp);
        o->f = o->live >= 0 ? fdopen(fd, "w") : NULL;
        if (!o->f) {
            int e = o->live >= 0 ? errno : 0;
            close(fd);
            unlink(o->tmp);
            o->tmp[0] = 0;
            live_remove(o->live);
            o->live = -1;
            return fail(o->name,
                        e ? "cannot open for writing" : "too many files open for writing at once",
                        e, err, errlen);
        }
        return SML_OK;
    }
    o->tmp[0] = 0;
    return fail(o->name, "cannot pick a temporary name beside it", EEXIST, err, errlen);
}

sml_status sml_out_finish(sml_out_file *o, char *err, size_t errlen) {
    if (!o->f) return fail(o->name, "not open", 0, err, errlen);
    FILE *f = o->f;
    o->f = NULL;
    int e = 0;
    const char *what = NULL;
    if (ferror(f)) {
        e = errno;
        what = "write failed";
    } else if (fflush(f) != 0) {
        e = errno;
        what = "write failed";
    } else if (o->tmp[0] && fsync(fileno(f)) != 0) {
        e = errno;
        what = "cannot sync to disk";
    }
    if (fclose(f) != 0 && !what) {
        e = errno;
        what = "write failed on close";
    }
    if (!what) return SML_OK;
    sml_out_abort(o);
    return fail(o->name, what, e, err, errlen);
}

sml_status sml_out_place(sml_out_file *o, char *err, size_t errlen) {
    if (o->f) return fail(o->name, "not finished", 0, err, errlen);
    if (!o->tmp[0]) return SML_OK; /* written in place, or already placed */
    if (rename(o->tmp, o->path) != 0) {
        int e = errno;
        sml_out_abort(o);
        return fail(o->name, "cannot replace it", e, err, errlen);
    }
    live_remove(o->live);
    o->live = -1;
    o->tmp[0] = 0;
    /* Make the rename itself durable; a failure here loses nothing written. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", o->path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        slash[1] = 0;
    else
        *slash = 0;
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    return SML_OK;
}

sml_status sml_out_commit(sml_out_file *o, char *err, size_t errlen) {
    sml_status s = sml_out_finish(o, err, errlen);
    return s == SML_OK ? sml_out_place(o, err, errlen) : s;
}

sml_status sml_out_commit_all(sml_out_file *const *files, size_t n, char *err, size_t errlen) {
    sml_status s = SML_OK;
    for (size_t i = 0; i < n && s == SML_OK; i++)
        if (files[i]->f) s = sml_out_finish(files[i], err, errlen);
    for (size_t i = 0; i < n && s == SML_OK; i++) s = sml_out_place(files[i], err, errlen);
    if (s != SML_OK)
        for (size_t i = 0; i < n; i++) sml_out_abort(files[i]);
    return s;
}

void sml_out_abort(sml_out_file *o) {
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) { /* only a temporary holds a slot (a zeroed sml_out_file holds none) */
        unlink(o->tmp);
        live_remove(o->live);
    }
    o->tmp[0] = 0;
    o->live = -1;
}

sml_status sml_out_write(const char *path, const void *buf, size_t len, char *err, size_t errlen) {
    sml_out_file o;
    sml_status s = sml_out_open(&o, path, err, errlen);
    if (s != SML_OK) return s;
    if (len && fwrite(buf, 1, len, o.f) != len) {
        int e = errno;
        sml_out_abort(&o);
        return fail(path, "write failed", e, err, errlen);
    }
    return sml_out_commit(&o, err, errlen);
}

sml_status sml_mkdir_p(const char *dir) {
    char buf[2048];
    if (!dir || strlen(dir) >= sizeof buf) return SML_ERR_INVALID_ARG;
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return SML_ERR_IO;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return SML_ERR_IO;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? SML_OK : SML_ERR_IO;
}
