/* regressions.c: see regressions.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "regressions.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan_cache.h"
#include "prop/repro.h"

static const char *base(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The reproducers of a and b have the same names (a copy of one corpus in two places). */
static int same_reproducers(const char *a, const char *b) {
    char **pa = NULL, **pb = NULL;
    size_t na = sml_prop_repro_list(a, &pa), nb = sml_prop_repro_list(b, &pb);
    int same = na == nb;
    for (size_t i = 0; same && i < na; i++) same = !strcmp(base(pa[i]), base(pb[i]));
    if (pa) sml_prop_repro_list_free(pa, na);
    if (pb) sml_prop_repro_list_free(pb, nb);
    return same;
}

/* dir onto the list, unless it holds no reproducer or those of a folder already there. */
static void add(char *dirs, size_t n, const char *dir, char kept[][PATH_MAX], int *nkept) {
    char real[PATH_MAX];
    if (!realpath(dir, real) || !sml_cli_count_reproducers(real)) return;
    for (int i = 0; i < *nkept; i++)
        if (!strcmp(kept[i], real) || same_reproducers(kept[i], real)) return;
    size_t used = strlen(dirs);
    if (used + strlen(real) + 2 > n || *nkept >= 4) return;
    snprintf(dirs + used, n - used, "%s%s", used ? ":" : "", real);
    snprintf(kept[(*nkept)++], PATH_MAX, "%s", real);
}

void sml_cli_default_regressions(char *dirs, size_t n) {
    char kept[4][PATH_MAX];
    int nkept = 0;
    char dir[PATH_MAX];
    dirs[0] = 0;
    if (sml_data_dir("regressions", dir, sizeof dir)) add(dirs, n, dir, kept, &nkept);
    if (sml_data_dir("mutants-corpus", dir, sizeof dir)) add(dirs, n, dir, kept, &nkept);
    add(dirs, n, "tests/regressions", kept, &nkept);
    add(dirs, n, "tests/mutants/corpus", kept, &nkept);
}

size_t sml_cli_count_reproducers(const char *dirs) {
    char **paths = NULL;
    size_t k = sml_prop_repro_list(dirs, &paths);
    if (paths) sml_prop_repro_list_free(paths, k);
    return k;
}
