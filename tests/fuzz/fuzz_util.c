/* fuzz_util.c: what every target shares with either driver. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char tmp[256];

static void remove_tmp(void) {
    char cmd[300];
    if (tmp[0] && snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp) < (int)sizeof cmd &&
        system(cmd) != 0)
        fprintf(stderr, "%s: could not remove %s\n", sml_fuzz_name, tmp);
}

const char *sml_fuzz_tmpdir(void) {
    if (!tmp[0]) {
        /* Every input is written to a file: in memory (/dev/shm) that costs microseconds,
         * on a busy disk milliseconds. */
        const char *base = getenv("TMPDIR");
        if (!base || !base[0]) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(tmp, sizeof tmp, "%s/sml_%s_XXXXXX", base, sml_fuzz_name);
        if (!mkdtemp(tmp)) sml_fuzz_fail("cannot make a temporary folder %s", tmp);
        atexit(remove_tmp);
    }
    return tmp;
}

void sml_fuzz_write(const char *path, const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        sml_fuzz_fail("cannot write %s", path);
}

void sml_fuzz_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: invariant broken: ", sml_fuzz_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
