/* cli_exec.h: run the softmax-lab binary as a user would, in a scratch directory, with its
 * stdout and stderr captured, optionally under a file-size limit (RLIMIT_FSIZE, SIGXFSZ
 * ignored: a write past the limit then fails with EFBIG, as on a full disk). */
#ifndef SML_TESTS_CLI_EXEC_H
#define SML_TESTS_CLI_EXEC_H

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h" /* sml_cli_setup, sml_dir_entries */

/* args: NULL-terminated, at most 30. fsize > 0: the child's file-size limit in bytes.
 * Returns the exit code, -1 if the child did not exit normally. */
static inline int cli_exec(const char *cli, const char *dir, const char *const *args, long fsize, char *log,
                    size_t loglen) {
    int p[2];
    log[0] = 0;
    if (pipe(p) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(p[0]);
        if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0 || chdir(dir) != 0) _exit(127);
        if (fsize > 0) {
            struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(126);
        }
        char *argv[32];
        int n = 0;
        argv[n++] = (char *)cli;
        for (; args[n - 1] && n < 31; n++) argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        execv(cli, argv);
        _exit(127);
    }
    close(p[1]);
    size_t used = 0;
    char buf[4096];
    for (ssize_t got; (got = read(p[0], buf, sizeof buf)) > 0;) {
        size_t take = (size_t)got < loglen - 1 - used ? (size_t)got : loglen - 1 - used;
        memcpy(log + used, buf, take);
        used += take;
    }
    log[used] = 0;
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Entries of dir whose name ends with suffix, -1 if unreadable (sml_dir_entries: all). */
static inline int cli_count(const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    size_t sl = strlen(suffix);
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (l >= sl && !strcmp(e->d_name + l - sl, suffix)) n++;
    }
    closedir(d);
    return n;
}

/* The whole of a small file into buf ("" when unreadable). */
static inline const char *cli_slurp(const char *path, char *buf, size_t n) {
    buf[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

static inline int cli_write(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

#endif
