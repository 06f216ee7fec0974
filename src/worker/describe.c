/* describe.c: a plugin library's kernel table read in a child process, so that the process that
 * judges kernels never loads their code (docs/SECURITY.md). The child (this program again,
 * `softmax-lab __describe --load LIB` or `softmax-lab-edge-shapes __describe ...`) loads the
 * library as any command would and writes the table's lines to its
 * standard output in a small binary form; the parent reads it with every length and count
 * bounded, and registers the lines with a launch that refuses to run here: the kernels run in
 * worker processes, which load the library themselves. A table the parent cannot read, or a
 * child that does not exit 0, is the library's refusal, with the child's words on stderr. */
#define _GNU_SOURCE
#include "worker/describe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/internal.h"
#include "io/per_device.h"
#include "softmax_lab_plugin.h"

#define MAGIC       0x444c4d53u /* "SMLD" */
#define FORMAT      1u
#define MAX_TABLE   ((size_t)8 << 20)
#define MAX_KERNELS 1024u
#define MAX_STRING  65536u
#define NO_STRING   0xffffffffu

/* ---- the child's side ---------------------------------------------------------------- */

static void put(const void *p, size_t n) { fwrite(p, 1, n, stdout); }
static void put_u32(uint32_t v) { put(&v, sizeof v); }
static void put_i64(int64_t v) { put(&v, sizeof v); }
static void put_f64(double v) { put(&v, sizeof v); }
static void put_str(const char *s) {
    uint32_t n = s ? (uint32_t)strnlen(s, MAX_STRING - 1) : NO_STRING;
    put_u32(n);
    if (s) put(s, n);
}

static void put_kernel(const sml_kernel *k) {
    put_str(k->name);
    put_str(k->file);
    put_u32((uint32_t)k->device);
    put_u32(k->ops);
    put_u32(k->dtypes);
    put_i64(k->min_cols);
    put_i64(k->max_cols);
    put_str(k->summary);
    put_str(k->claim.baseline);
    put_f64(k->claim.min_speedup);
    put_str(k->claim.shapes);
    put_str(k->known_deviation);
    put_u32(k->flags);
    put_u32(k->deviation != NULL);
    if (!k->deviation) return;
    for (int o = 0; o < SML_OP_COUNT; o++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) put_f64(k->deviation->ulps[o][d]);
    for (int o = 0; o < SML_OP_COUNT; o++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) put_f64(k->deviation->bound_factor[o][d]);
    put_u32(k->deviation->exceptions);
}

int sml_wk_describe_main(int argc, char **argv) {
    (void)argv;
    if (argc != 0) {
        fprintf(stderr, "__describe: started by softmax-lab itself only\n");
        return 2;
    }
    /* The library --load registered (sml_cli_run_with_plugins loaded it before this runs). */
    const char *lib = NULL;
    uint32_t count = 0;
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const char *l = sml_kernel_library(sml_kernel_at(i));
        if (!l || sml_source_is_python(l)) continue;
        if (!lib) lib = l;
        if (!strcmp(l, lib)) count++;
    }
    if (!lib) {
        fprintf(stderr, "__describe: no library loaded\n");
        return 2;
    }
    put_u32(MAGIC);
    put_u32(FORMAT);
    put_str(lib);
    put_u32(count);
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const char *l = sml_kernel_library(sml_kernel_at(i));
        if (l && !strcmp(l, lib)) put_kernel(sml_kernel_at(i));
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 2;
}

/* ---- the parent's side --------------------------------------------------------------- */

typedef struct reader {
    const unsigned char *p;
    size_t n, at;
    int bad;
} reader;

static void get(reader *r, void *out, size_t n) {
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p + r->at, n);
    r->at += n;
}
static uint32_t get_u32(reader *r) {
    uint32_t v;
    get(r, &v, sizeof v);
    return v;
}
static int64_t get_i64(reader *r) {
    int64_t v;
    get(r, &v, sizeof v);
    return v;
}
static double get_f64(reader *r) {
    double v;
    get(r, &v, sizeof v);
    return v;
}
/* A string of the table, owned by the registry from now on (never freed: a loaded library's
 * table lives as long as the process); NULL for none, or when it is malformed (r->bad). */
static char *get_str(reader *r) {
    uint32_t n = get_u32(r);
    if (r->bad || n == NO_STRING) return NULL;
    if (n >= MAX_STRING || n > r->n - r->at) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, r->p + r->at, n);
    s[n] = 0;
    r->at += n;
    if (strlen(s) != n) r->bad = 1; /* a NUL inside: not a string the library could give */
    return s;
}

/* The launch of a described kernel in this process: never called where the kernels run in
 * workers (the only place described kernels are registered). */
static sml_status runs_in_worker_only(sml_handle *h, const sml_problem *p) {
    (void)h;
    (void)p;
    return SML_ERR_PLUGIN;
}

static void get_kernel(reader *r, sml_kernel *k) {
    k->name = get_str(r);
    k->file = get_str(r);
    k->device = (sml_device)get_u32(r);
    k->ops = get_u32(r);
    k->dtypes = get_u32(r);
    k->min_cols = get_i64(r);
    k->max_cols = get_i64(r);
    k->launch = runs_in_worker_only;
    k->summary = get_str(r);
    k->claim.baseline = get_str(r);
    k->claim.min_speedup = get_f64(r);
    k->claim.shapes = get_str(r);
    k->known_deviation = get_str(r);
    k->flags = get_u32(r);
    uint32_t has_dev = get_u32(r);
    if (has_dev > 1) r->bad = 1;
    if (r->bad || !has_dev) return;
    sml_deviation *dev = calloc(1, sizeof *dev);
    if (!dev) {
        r->bad = 1;
        return;
    }
    for (int o = 0; o < SML_OP_COUNT; o++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) dev->ulps[o][d] = get_f64(r);
    for (int o = 0; o < SML_OP_COUNT; o++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) dev->bound_factor[o][d] = get_f64(r);
    dev->exceptions = get_u32(r);
    k->deviation = dev;
}

/* A table the registry did not take. */
static void free_table(sml_kernel *t, uint32_t count) {
    for (uint32_t i = 0; t && i < count; i++) {
        free((char *)t[i].name);
        free((char *)t[i].file);
        free((char *)t[i].summary);
        free((char *)t[i].claim.baseline);
        free((char *)t[i].claim.shapes);
        free((char *)t[i].known_deviation);
        free((sml_deviation *)t[i].deviation);
    }
    free(t);
}

/* The child's output: at most MAX_TABLE bytes into *buf (malloc'd). 0, or -1 when there is
 * more or it cannot be read. */
static int read_all(int fd, unsigned char **buf, size_t *n) {
    size_t cap = 65536;
    *buf = malloc(cap);
    *n = 0;
    if (!*buf) return -1;
    for (;;) {
        if (*n == cap) {
            if (cap >= MAX_TABLE) return -1;
            unsigned char *b = realloc(*buf, cap * 2);
            if (!b) return -1;
            *buf = b;
            cap *= 2;
        }
        ssize_t k = read(fd, *buf + *n, cap - *n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) return 0;
        *n += (size_t)k;
    }
}

/* What the child said on stderr (a file, so that it never blocks): its last line, without the
 * child's "softmax-lab __describe: " before it, into why. */
static void child_words(int fd, char *why, size_t n) {
    char text[4096];
    ssize_t k = pread(fd, text, sizeof text - 1, 0);
    why[0] = 0;
    if (k <= 0) return;
    text[k] = 0;
    while (k > 0 && (text[k - 1] == '\n' || text[k - 1] == '\r')) text[--k] = 0;
    const char *line = strrchr(text, '\n');
    line = line ? line + 1 : text;
    /* "softmax-lab __describe: " or "softmax-lab-edge-shapes: " before the words */
    const char *colon = strstr(line, ": ");
    if (colon && colon - line < 40 && !memchr(line, '/', (size_t)(colon - line))) line = colon + 2;
    snprintf(why, n, "%.1000s", line);
}

/* Run this program again as `__describe --load path --allow-writable-plugin` (the parent has
 * checked the file) and take its output; the child's exit status in *status, its words in
 * why. */
static int run_child(const char *path, unsigned char **buf, size_t *n, int *status, char *why,
                     size_t wn) {
    char exe[PATH_MAX];
    why[0] = 0;
    if (!sml_self_exe(exe, sizeof exe)) return -1;
    int p[2], err = memfd_create("sml-describe-stderr", MFD_CLOEXEC);
    if (err < 0) return -1;
    if (pipe2(p, O_CLOEXEC) != 0) {
        close(err);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(err, 2);
        char *argv[] = {exe, "__describe", "--load", (char *)path, "--allow-writable-plugin", NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(p[1]);
    int rc = -1;
    if (pid >= 0) {
        rc = read_all(p[0], buf, n);
        while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
        child_words(err, why, wn);
    }
    close(p[0]);
    close(err);
    return rc;
}

sml_status sml_wk_describe_load(const char *path, char *msg, size_t msglen) {
    unsigned char *buf = NULL;
    size_t n = 0;
    int status = 0;
    char why[1024];
    int rc = run_child(path, &buf, &n, &status, why, sizeof why);
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        /* The child's own words: as a load here would have said them. */
        if (why[0]) return sml_errorf(SML_ERR_PLUGIN, msg, msglen, "%s", why);
        return sml_errorf(SML_ERR_PLUGIN, msg, msglen,
                          "%s: its kernel table could not be read in a separate process", path);
    }
    reader r = {buf, n, 0, 0};
    uint32_t magic = get_u32(&r), format = get_u32(&r);
    char *lib = get_str(&r);
    uint32_t count = get_u32(&r);
    sml_kernel *table = NULL;
    if (magic != MAGIC || format != FORMAT || !lib || count == 0 || count > MAX_KERNELS)
        r.bad = 1;
    else if (!(table = calloc(count, sizeof *table)))
        r.bad = 1;
    for (uint32_t i = 0; i < count && !r.bad; i++) get_kernel(&r, &table[i]);
    if (r.at != r.n) r.bad = 1;
    free(buf);
    if (r.bad) {
        free_table(table, count);
        free(lib);
        return sml_errorf(SML_ERR_PLUGIN, msg, msglen,
                          "%s: the kernel table its separate process wrote is malformed", path);
    }
    /* The lines are checked as a loaded table's are (plugin_check.h), under the library's
     * real path, which the workers load again; the registry keeps the lines it takes (a
     * loaded table lives as long as the process), and copies the path. */
    int already = 0;
    sml_status s = sml_registry_add(table, count, SML_PLUGIN_ABI_VERSION, lib, lib, NULL, &already,
                                    msg, msglen);
    if (s != SML_OK || already) free_table(table, count);
    free(lib);
    return s;
}
