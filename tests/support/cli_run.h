/* cli_run.h: the CLI tests' ways of running the softmax-lab binary: sml_run_cli(_limit), a
 * child process in `dir` with stdout and stderr together read back into `log` (optionally
 * under a file-size limit); and sml_shell, a shell command line with stdout and stderr
 * together read back into `out`. */
#ifndef SML_TESTS_SUPPORT_CLI_RUN_H
#define SML_TESTS_SUPPORT_CLI_RUN_H

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* args: NULL-terminated, at most 30. The child runs in dir with stdout and stderr into one
 * pipe, read back into log (at most loglen - 1 bytes, the rest drained). fsize > 0: the
 * child's file-size limit in bytes (RLIMIT_FSIZE, SIGXFSZ ignored: a write past it then fails
 * with EFBIG, as on a full disk). Returns the exit code, -1 if the child did not exit
 * normally or could not be started. */
static inline int sml_run_cli_limit(const char *cli, const char *dir, const char *const *args,
                                    long fsize, char *log, size_t loglen) {
    int p[2];
    log[0] = 0;
    if (pipe(p) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
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

/* sml_run_cli_limit with no file-size limit. */
static inline int sml_run_cli(const char *cli, const char *dir, const char *const *args, char *log,
                              size_t loglen) {
    return sml_run_cli_limit(cli, dir, args, 0, log, loglen);
}

/* Entries of dir other than . and .., -1 if it cannot be read: what a refused command wrote. */
static inline int sml_dir_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* The binary must exist and a fresh directory /tmp/sml_<test>_XXXXXX is made in tmp; 0 when
 * both hold, else 1 after a FAIL line naming what is missing. */
static inline int sml_cli_setup(const char *test, const char *cli, char *tmp, size_t n) {
    if (access(cli, X_OK) != 0) {
        printf("FAIL %s: no softmax-lab binary at %s (pass --cli PATH)\n", test, cli);
        return 1;
    }
    snprintf(tmp, n, "/tmp/sml_%s_XXXXXX", test);
    if (!mkdtemp(tmp)) {
        printf("FAIL %s: mkdtemp failed\n", test);
        return 1;
    }
    return 0;
}

/* sml_shell flags. SML_SHELL_ECHO_RC: the shell itself appends "rc=<exit status>" to the
 * output and that number is returned, so a command killed by a signal gives 128 + signal. */
#define SML_SHELL_ECHO_RC 1

/* Format the command line into cmd (cmdlen bytes; a scratch buffer when cmd is NULL), run it
 * with `sh -c` through popen, stdout and stderr of every step together read into out (at most outlen - 1
 * bytes, NUL-terminated; emptied first). Returns the exit code, -1 if popen fails or the
 * command did not exit. */
int sml_shell(char *cmd, size_t cmdlen, char *out, size_t outlen, int flags, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
