/* argv_norm.c: --name=value and -- for every subcommand (argv_norm.h). */
#include "argv_norm.h"

#include <stdlib.h>
#include <string.h>

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

int sml_cli_args_normalize(int argc, char **argv, int *out_argc, char ***out, int *version) {
    char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
    int n = 0, options = 1, bad = !v;
    *version = 0;
    for (int i = 0; i < argc && !bad; i++) {
        const char *a = argv[i];
        const char *eq = options && !strncmp(a, "--", 2) && a[2] != '=' ? strchr(a, '=') : NULL;
        if (options && !strcmp(a, "--")) {
            options = 0;
        } else if (eq) {
            bad =
                !(v[n++] = dup_n(a, (size_t)(eq - a))) || !(v[n++] = dup_n(eq + 1, strlen(eq + 1)));
        } else if (!options && a[0] == '-' && a[1]) {
            char *p = malloc(strlen(a) + 3);
            if (p) {
                memcpy(p, "./", 2);
                strcpy(p + 2, a);
            }
            bad = !(v[n++] = p);
        } else {
            if (options && !strcmp(a, "--version")) *version = 1;
            bad = !(v[n++] = dup_n(a, strlen(a)));
        }
    }
    if (bad) {
        sml_cli_args_free(n, v);
        return -1;
    }
    *out_argc = n;
    *out = v;
    return 0;
}

void sml_cli_args_free(int argc, char **argv) {
    if (!argv) return;
    for (int i = 0; i < argc; i++) free(argv[i]);
    free(argv);
}
