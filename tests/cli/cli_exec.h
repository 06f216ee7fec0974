/* cli_exec.h: the file helpers of the CLI output tests (count, read and write files in the
 * scratch directory); the binary runs through sml_run_cli_limit (tests/support/cli_run.h). */
#ifndef SML_TESTS_CLI_EXEC_H
#define SML_TESTS_CLI_EXEC_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h" /* sml_run_cli_limit, sml_cli_setup, sml_dir_entries */

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
