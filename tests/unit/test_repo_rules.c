/* test_repo_rules.c: what a newcomer meets first stays small and nothing stale is tracked.
 *   1. README.md has at most 150 lines, its two quick-start commands (build-and-run,
 *      build-and-test) within the first 25;
 *   2. each of the README's terms is defined where it is first used: the paragraph holds a
 *      link to the page that defines it (outside code blocks);
 *   3. docs/KERNELS.md has at most 600 lines;
 *   4. no compiled or versioned leftover is tracked (__pycache__, *.pyc, *_v1.c, *.orig, ...),
 *      and .gitignore keeps new ones out (a git checkout only);
 *   5. no function in src/, cli/ or reference/ is over 120 lines.
 * Run from the source tree (ctest does); --fixtures names tests/perf/fixtures there. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "case_filter.h"
#include "cli_run.h"
#include "test_support.h"

static sml_tally T = {"test_repo_rules", 0, 0, 0};
static sml_case_filter F;
static char ROOT[1100], MSG[1 << 14];

#define README_LINES       150
#define QUICK_START_WITHIN 25
#define KERNELS_LINES      600
#define FUNCTION_LINES     120

static char *slurp(const char *rel) {
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", ROOT, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

/* The 1-based line of the first occurrence of needle in s, 0 if none. */
static int line_of(const char *s, const char *needle) {
    const char *p = strstr(s, needle);
    if (!p) return 0;
    int n = 1;
    for (const char *q = s; q < p; q++) n += *q == '\n';
    return n;
}

/* 1. */
static void readme_size(void) {
    char *s = slurp("README.md");
    int lines = count_lines(s);
    int run = s ? line_of(s, "cmake --preset default && cmake --build --preset default && "
                             "./build/softmax-lab bench")
                : 0;
    int test = s ? line_of(s, "\ncmake --workflow --preset default\n") : 0;
    if (test) test++; /* the match starts on the line before */
    snprintf(MSG, sizeof MSG,
             "README.md: %d lines (at most %d); build-and-run on line %d, build-and-test on line "
             "%d (both wanted within the first %d)",
             lines, README_LINES, run, test, QUICK_START_WITHIN);
    sml_test_check_case(&T, &F, MSG, 1,
                        s && lines <= README_LINES && run >= 1 && run <= QUICK_START_WITHIN &&
                            test >= 1 && test <= QUICK_START_WITHIN,
                        "README.md is short and starts with its two commands");
    free(s);
}

/* s with the fenced code blocks blanked (newlines kept), in place. */
static void blank_code(char *s) {
    int in = 0;
    for (char *line = s; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        int fence = !strncmp(line, "```", 3);
        if (in || fence) memset(line, ' ', len);
        if (fence) in = !in;
        line += len + (end != NULL);
    }
}

/* 2. The paragraph (between blank lines) of a term's first use links to a page of docs/. */
static void readme_terms(void) {
    static const char *const TERMS[] = {"ledger",         "T1",    "reproducer", "backend",
                                        "plugin",         "claim", "regression", "sweep",
                                        "property suite", "auto"};
    char *s = slurp("README.md"), bad[1024] = "";
    if (s) blank_code(s);
    for (size_t i = 0; s && i < sizeof TERMS / sizeof TERMS[0]; i++) {
        const char *p = strstr(s, TERMS[i]);
        if (!p) continue;
        const char *a = p, *b = p;
        while (a > s && !(a[-1] == '\n' && a - 1 > s && a[-2] == '\n')) a--;
        while (*b && !(b[0] == '\n' && b[1] == '\n')) b++;
        int linked = 0;
        for (const char *q = a; q < b && !linked; q++) linked = !strncmp(q, "](docs/", 7);
        if (!linked)
            snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " '%s' (line %d);", TERMS[i],
                     line_of(s, TERMS[i]));
    }
    snprintf(MSG, sizeof MSG,
             "README.md terms whose first paragraph links to no page of docs/ that defines "
             "them:%s",
             s ? bad : " (no README.md)");
    sml_test_check_case(&T, &F, MSG, 2, s && !bad[0],
                        "every README term is linked to its definition where first used");
    free(s);
}

/* 3. */
static void kernels_size(void) {
    char *s = slurp("docs/KERNELS.md");
    int lines = count_lines(s);
    snprintf(MSG, sizeof MSG, "docs/KERNELS.md: %d lines (at most %d)", lines, KERNELS_LINES);
    sml_test_check_case(&T, &F, MSG, 3, s && lines <= KERNELS_LINES,
                        "docs/KERNELS.md is at most 600 lines");
    free(s);
}

/* 4. What git tracks, and what .gitignore keeps out. */
static void leftovers(void) {
    if (!sml_case_filter_want(&F, 4)) return;
    char cmd[2400], out[8192], git[1200];
    snprintf(git, sizeof git, "%s/.git", ROOT);
    struct stat st;
    if (stat(git, &st) != 0) {
        printf("skip case 4: %s is not a git checkout\n", ROOT);
        T.skipped++;
        return;
    }
    /* Tracked: compiled Python, backups and patch leftovers, and files versioned by name
     * (foo_v1.c, foo_old.py) among the sources. */
    int rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
                       "cd '%s' && git ls-files | grep -E '(^|/)__pycache__/|\\.py[co]$|~$|"
                       "\\.(orig|rej|bak)$|_(v[0-9]+|old|new|copy)\\.(c|h|cu|cuh|py|sh)$'",
                       ROOT);
    snprintf(MSG, sizeof MSG, "tracked leftovers (git rm them):\n%s", out);
    sml_test_check_case(&T, &F, MSG, 4, rc == 1 && !out[0],
                        "no compiled or versioned leftover is tracked");
    rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
                   "cd '%s' && for f in python/softmax_lab/__pycache__/api.cpython-311.pyc "
                   "tests/python/x.pyc cli/main.c.orig cli/main.c~ src/x.rej; do "
                   "git check-ignore -q --no-index \"$f\" || echo \"not ignored: $f\"; done",
                   ROOT);
    snprintf(MSG, sizeof MSG, ".gitignore lets leftovers in:\n%s", out);
    sml_test_check_case(&T, &F, MSG, 4, rc == 0 && !out[0],
                        ".gitignore keeps compiled Python and patch leftovers out");
}

/* ---- 5. function lengths ---- */

typedef struct scan {
    const char *file;
    char bad[4096];
    int functions;
} scan;

/* Function definitions of one C or CUDA file: each from the first line of its signature to
 * its closing brace. Comments, strings, characters and preprocessor lines are skipped;
 * extern "C" and namespace blocks are looked into. */
static void lengths(const char *s, scan *sc) {
    int line = 1, depth = 0, transparent = 0, is_fn = 0, start = 0, bol = 1, blank = 1;
    char prefix[2048];
    size_t np = 0;
    int prefix_line = 0;
    char name[64] = "";
    for (const char *p = s; *p; p++) {
        if (*p == '\n') {
            if (depth == 0 && blank) np = 0, prefix_line = 0; /* a blank line ends a prefix */
            line++, bol = 1, blank = 1;
            continue;
        }
        if (bol && *p == '#') { /* a preprocessor line, with its continuations */
            while (*p && !(*p == '\n' && p[-1] != '\\')) line += *p++ == '\n';
            p--;
            continue;
        }
        if (*p != ' ' && *p != '\t') bol = 0, blank = 0;
        if (p[0] == '/' && p[1] == '/') {
            while (p[1] && p[1] != '\n') p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++) line += *p == '\n';
            if (*p) p++;
            continue;
        }
        if (*p == '"' || *p == '\'') {
            char q = *p;
            for (p++; *p && *p != q; p++) {
                if (*p == '\\' && p[1]) p++;
                line += *p == '\n';
            }
            if (!*p) break;
            continue;
        }
        if (depth == 0 && *p != '{' && *p != '}' && *p != ';') {
            if (!prefix_line && *p != ' ' && *p != '\t') prefix_line = line;
            if (np + 1 < sizeof prefix) prefix[np++] = *p;
            continue;
        }
        if (*p == ';' && depth == 0) {
            np = 0, prefix_line = 0;
        } else if (*p == '{') {
            if (depth == 0) {
                prefix[np] = 0;
                if (strstr(prefix, "extern") || strstr(prefix, "namespace")) {
                    transparent++;
                    np = 0, prefix_line = 0;
                    continue;
                }
                is_fn = strchr(prefix, ')') && !strchr(prefix, '=');
                start = prefix_line ? prefix_line : line;
                if (is_fn) { /* the name: the identifier before the first '(' */
                    char *paren = strchr(prefix, '('), *e = paren;
                    while (e > prefix && (e[-1] == ' ' || e[-1] == '\n')) e--;
                    char *b = e;
                    while (b > prefix &&
                           (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
                            (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9')))
                        b--;
                    snprintf(name, sizeof name, "%.*s", (int)(e - b), b);
                }
            }
            depth++;
        } else if (*p == '}') {
            if (depth == 0 && transparent > 0) {
                transparent--;
            } else if (depth > 0 && --depth == 0) {
                if (is_fn) sc->functions++;
                int n = line - start + 1, allowed = FUNCTION_LINES;
                if (is_fn && n > allowed)
                    snprintf(sc->bad + strlen(sc->bad), sizeof sc->bad - strlen(sc->bad),
                             "\n  %s:%d: %s is %d lines (at most %d)", sc->file, start, name, n,
                             allowed);
            }
            np = 0, prefix_line = 0, is_fn = 0;
        }
    }
}

/* Every .c and .cu file under dir (relative to ROOT), recursively. */
static void scan_dir(const char *dir, scan *sc) {
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", ROOT, dir);
    DIR *d = opendir(path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char rel[1200];
        snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
        size_t n = strlen(e->d_name);
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", ROOT, rel);
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            scan_dir(rel, sc);
        } else if ((n > 2 && !strcmp(e->d_name + n - 2, ".c")) ||
                   (n > 3 && !strcmp(e->d_name + n - 3, ".cu"))) {
            char *s = slurp(rel);
            sc->file = rel;
            if (s) lengths(s, sc);
            free(s);
        }
    }
    closedir(d);
}

static void function_lengths(void) {
    scan sc;
    memset(&sc, 0, sizeof sc);
    static const char *const DIRS[] = {"src", "cli", "reference"};
    for (size_t i = 0; i < sizeof DIRS / sizeof DIRS[0]; i++) scan_dir(DIRS[i], &sc);
    snprintf(MSG, sizeof MSG, "%d functions read; over the limit:%s", sc.functions, sc.bad);
    sml_test_check_case(&T, &F, MSG, 5, sc.functions > 300 && !sc.bad[0],
                        "no function in src/, cli/ or reference/ is over 120 lines");
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    /* The source tree: --fixtures is its tests/perf/fixtures. */
    snprintf(ROOT, sizeof ROOT, "%s/../../..", F.fixtures);
    if (sml_case_filter_want(&F, 1)) readme_size();
    if (sml_case_filter_want(&F, 2)) readme_terms();
    if (sml_case_filter_want(&F, 3)) kernels_size();
    leftovers();
    if (sml_case_filter_want(&F, 5)) function_lengths();
    return sml_tally_finish(&T);
}
