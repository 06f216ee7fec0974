#include "cli_run.h"

#include <stdarg.h>

int sml_shell(char *cmd, size_t cmdlen, char *out, size_t outlen, int flags, const char *fmt, ...) {
    char *scratch = NULL;
    if (!cmd) cmd = scratch = malloc(cmdlen);
    size_t fulllen = cmdlen + 64;
    char *full = malloc(fulllen);
    if (!cmd || !full) {
        free(scratch);
        free(full);
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, cmdlen, fmt, ap);
    va_end(ap);
    /* The whole command line in a subshell whose stderr goes with its stdout: "a && b 2>&1"
     * would send only b's. */
    snprintf(full, fulllen,
             (flags & SML_SHELL_ECHO_RC) ? "(%s\n) 2>&1; echo \"rc=$?\"" : "(%s\n) 2>&1", cmd);
    free(scratch);
    out[0] = 0;
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = 0;
    /* What does not fit is read and dropped: closing the pipe early would kill a command that
     * prints much (compute-sanitizer's reports) with SIGPIPE, and its exit status with it. */
    char drop[4096];
    while (fread(drop, 1, sizeof drop, p) > 0) {}
    int st = pclose(p);
    if (flags & SML_SHELL_ECHO_RC) {
        const char *rc = strstr(out, "rc=");
        for (const char *q = rc; q; q = strstr(q + 1, "rc=")) rc = q;
        return rc ? atoi(rc + 3) : -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
