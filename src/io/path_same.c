/* path_same.c: see path_same.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "io/path_same.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A path that does not exist yet: its directory's real path and its last name, "" if even
 * the directory cannot be resolved (then only the strings are compared). */
static void real_new_path(const char *p, char *out, size_t n) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", p);
    char *slash = strrchr(dir, '/');
    const char *base = p;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else {
        base = p + (slash - dir) + 1;
        if (slash == dir)
            slash[1] = 0;
        else
            *slash = 0;
    }
    char *real = realpath(dir, NULL);
    if (!real) {
        out[0] = 0;
        return;
    }
    snprintf(out, n, "%s/%s", real, base);
    free(real);
}

int sml_path_same(const char *a, const char *b) {
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-")) return 0;
    struct stat sa, sb;
    int ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
    if (ha && S_ISCHR(sa.st_mode)) return 0;
    if (ha && hb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ha != hb) return 0;
    char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
    real_new_path(a, ra, sizeof ra);
    real_new_path(b, rb, sizeof rb);
    if (!ra[0] || !rb[0]) return !strcmp(a, b);
    return !strcmp(ra, rb);
}

int sml_paths_clash(const sml_path_arg *args, size_t n, char *err, size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        if (!args[i].path || !args[i].output) continue;
        for (size_t j = 0; j < n; j++) {
            if (j == i || !args[j].path || (args[j].output && j > i)) continue;
            if (!sml_path_same(args[i].path, args[j].path)) continue;
            snprintf(err, errlen, "%s '%.400s' is also %s '%.400s': %s", args[i].flag, args[i].path,
                     args[j].flag, args[j].path,
                     args[j].output ? "two outputs of one run would overwrite each other"
                                    : "the output would overwrite the input");
            return 1;
        }
    }
    return 0;
}
