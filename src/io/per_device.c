/* per_device.c: see per_device.h. POSIX: fork, exec, waitpid. */
#include "io/per_device.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/internal.h"

int sml_devices_parse(const char *s, int count, int *out, int *n, char *why, size_t why_n) {
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long d = strtol(p, &end, 10);
        if (end == p || *p < '0' || *p > '9' || errno || (*end && *end != ',')) {
            snprintf(why, why_n, "device indices separated by commas, e.g. 0,1");
            return 0;
        }
        if (d >= count) {
            snprintf(why, why_n, "device %ld: this host shows %d CUDA device%s", d, count,
                     count == 1 ? "" : "s");
            return 0;
        }
        for (int i = 0; i < *n; i++)
            if (out[i] == (int)d) {
                snprintf(why, why_n, "device %ld named twice", d);
                return 0;
            }
        if (*n >= SML_MAX_DEVICES) {
            snprintf(why, why_n, "at most %d devices", SML_MAX_DEVICES);
            return 0;
        }
        out[(*n)++] = (int)d;
        p = *end ? end + 1 : end;
        if (*end && !*p) {
            snprintf(why, why_n, "device indices separated by commas, e.g. 0,1");
            return 0;
        }
    }
    if (!*n) snprintf(why, why_n, "device indices separated by commas, e.g. 0,1");
    return *n > 0;
}

int sml_gpu_stand_in(void) {
    const char *fake = getenv("SML_WORKERS_TEST_COUNT");
    int n = fake && *fake ? atoi(fake) : 0;
    return n > 0 ? n : 0;
}

int sml_visible_gpus(void) {
    int n = sml_gpu_stand_in();
    return n ? n : sml_gpu_count();
}

int sml_devices_choose(const char *s, int count, int stand_in, int *out, int *n, char *why,
                       size_t why_n) {
    if (count > 0 && sml_devices_parse(s, count, out, n, why, why_n)) return 1;
    if (count <= 0) snprintf(why, why_n, "no CUDA device on this host");
    if (!stand_in) {
        char here[512];
        sml_gpu_list(here, sizeof here);
        size_t len = strlen(why);
        snprintf(why + len, why_n - len, "; GPUs here: %s", here);
    }
    return 0;
}

void sml_device_env(int dev, char *buf, size_t n) {
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(buf, n, "%d", dev);
    if (!env || !*env) return;
    const char *p = env;
    for (int i = 0; i < dev && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p || !*p) return;
    size_t len = strcspn(p, ",");
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

int sml_self_exe(char *buf, size_t n) {
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0) return 0;
    buf[len] = 0;
    return 1;
}

int sml_self_exe_is(char *buf, size_t n, const char *name) {
    if (!sml_self_exe(buf, n)) return 0;
    const char *base = strrchr(buf, '/');
    return !strcmp(base ? base + 1 : buf, name);
}

static pid_t start(char *const *argv, int dev, const char *log) {
    char vis[256];
    sml_device_env(dev, vis, sizeof vis);
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) return pid;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(127);
    close(fd);
    setenv("CUDA_VISIBLE_DEVICES", vis, 1);
    unsetenv("SML_LOAD");
    unsetenv("SML_SHARD");
    unsetenv("CTEST_RESOURCE_GROUP_0_GPUS");
    execv(argv[0], argv);
    _exit(127);
}

int sml_per_device_run(char *const *const *argvs, const int *devices, int n,
                       const char *const *logs, int *codes, char *why, size_t why_n) {
    pid_t pids[SML_MAX_DEVICES];
    int started = 0;
    for (int i = 0; i < n && i < SML_MAX_DEVICES; i++) {
        pids[i] = start(argvs[i], devices[i], logs[i]);
        codes[i] = 127;
        if (pids[i] > 0) started++;
    }
    for (int i = 0; i < n && i < SML_MAX_DEVICES; i++) {
        int st = 0;
        if (pids[i] <= 0 || waitpid(pids[i], &st, 0) < 0) continue;
        codes[i] = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 127;
    }
    if (!started) snprintf(why, why_n, "cannot start worker processes: %s", strerror(errno));
    return started ? 0 : -1;
}

int sml_per_device_dir(char *buf, size_t n) {
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, n, "%s/softmax-lab-workers-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(buf) ? 0 : -1;
}

void sml_per_device_cleanup(const char *dir, const char *const *files, int nfiles) {
    for (int i = 0; i < nfiles; i++)
        if (files[i]) unlink(files[i]);
    rmdir(dir);
}

void sml_per_device_print_log(FILE *f, const char *label, const char *log) {
    FILE *in = fopen(log, "r");
    fprintf(f, "--- %s ---\n", label);
    if (!in) return;
    char buf[4096];
    for (size_t got; (got = fread(buf, 1, sizeof buf, in)) > 0;) fwrite(buf, 1, got, f);
    fclose(in);
    fflush(f);
}
