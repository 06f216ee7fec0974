/* fuzz_main.c: the plain fuzz driver, for builds without libFuzzer (gcc, CI).
 *
 *   fuzz_<target> CORPUS_DIR [--runs N] [--seconds S] [--seed S] [--crashes DIR]
 *   fuzz_<target> --replay FILE...
 *
 * Runs every corpus file (the files of CORPUS_DIR ending in the target's suffix) as it is,
 * then N mutations of them (mutate.c), deterministic for a seed; --seconds stops earlier.
 * The inputs run in a child process, each under an alarm (a reader that hangs is a
 * failure too). When the child crashes, hangs, breaks an invariant or ends on a
 * sanitizer's report, the input it was running is written to the crashes folder and the
 * driver exits 1 with the command that replays it. Built with ASan and UBSan (the asan
 * preset) every memory error and undefined operation is such a failure. Exit 2: usage. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "mutate.h"

#define MAX_INPUT ((size_t)1 << 20)
#define ALARM_S   20

/* The inputs run in a child; the input it is running is kept in memory shared with the
 * parent, which saves it when the child does not come back: a signal (a crash, the alarm
 * of a hung input), or the exit status a sanitizer's report ends with. */
typedef struct shared {
    size_t len;
    long long mutations; /* run so far, for the summary */
    uint8_t data[MAX_INPUT];
} shared;
static shared *sh;

static void run_one(const uint8_t *data, size_t len) {
    memcpy(sh->data, data, len);
    sh->len = len;
    /* An allocation of exactly the input's size: a read one byte past it is a report. */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, data, len);
    alarm(ALARM_S);
    LLVMFuzzerTestOneInput(copy, len);
    alarm(0);
    free(copy);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = malloc(MAX_INPUT);
    *len = b ? fread(b, 1, MAX_INPUT, f) : 0;
    fclose(f);
    return b;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The corpus: the suffix's files of dir, sorted by name so that a seed means the same runs. */
static int load_corpus(const char *dir, sml_fuzz_corpus *c) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    char *names[4096];
    size_t n = 0, sl = strlen(sml_fuzz_suffix);
    for (struct dirent *e; (e = readdir(d)) && n < 4096;) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l > sl && !strcmp(e->d_name + l - sl, sml_fuzz_suffix))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    c->n = 0;
    c->items = calloc(n ? n : 1, sizeof *c->items);
    c->lens = calloc(n ? n : 1, sizeof *c->lens);
    for (size_t i = 0; i < n; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        size_t len;
        uint8_t *b = read_file(p, &len);
        if (b) {
            c->items[c->n] = b;
            c->lens[c->n++] = len;
        }
        free(names[i]);
    }
    return 1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int usage(const char *self) {
    fprintf(stderr,
            "usage: %s CORPUS_DIR [--runs N] [--seconds S] [--seed S] [--crashes DIR]\n"
            "       %s --replay FILE...\n",
            self, self);
    return 2;
}

/* What the child does: the corpus as it is, then mutations; or the files to replay. */
static int child(const char *corpus_dir, long long runs, double seconds, unsigned long long seed,
                 char **files, int nfiles, int *argc, char ***argv) {
    LLVMFuzzerInitialize(argc, argv);
    if (nfiles) {
        for (int i = 0; i < nfiles; i++) {
            size_t len;
            uint8_t *b = read_file(files[i], &len);
            if (!b) {
                fprintf(stderr, "%s: cannot read %s\n", sml_fuzz_name, files[i]);
                return 2;
            }
            run_one(b, len);
            free(b);
            printf("%s: %s ran without a crash\n", sml_fuzz_name, files[i]);
        }
        return 0;
    }
    sml_fuzz_corpus c;
    if (!load_corpus(corpus_dir, &c) || c.n == 0) {
        fprintf(stderr, "%s: no *%s files in %s\n", sml_fuzz_name, sml_fuzz_suffix, corpus_dir);
        return 2;
    }
    double t0 = now();
    for (size_t i = 0; i < c.n; i++) run_one(c.items[i], c.lens[i]);
    sml_fuzz_mutator m;
    sml_fuzz_mutator_init(&m, seed, sml_fuzz_dict, &c);
    uint8_t *buf = malloc(MAX_INPUT);
    long long done = 0;
    for (; done < runs; done++) {
        if (seconds > 0 && (done & 63) == 0 && now() - t0 > seconds) break;
        sh->mutations = done;
        run_one(buf, sml_fuzz_mutate(&m, buf, MAX_INPUT));
    }
    double t = now() - t0;
    printf("%s: %zu corpus inputs and %lld mutations (seed 0x%llx) in %.1f s, %.0f executions/s: "
           "no crash\n",
           sml_fuzz_name, c.n, done, seed, t, (double)((long long)c.n + done) / (t > 0 ? t : 1));
    free(buf);
    for (size_t i = 0; i < c.n; i++) free(c.items[i]);
    free(c.items);
    free(c.lens);
    return 0;
}

int main(int argc, char **argv) {
    const char *self = argv[0], *corpus_dir = NULL, *crashes = ".";
    long long runs = 10000;
    double seconds = 0;
    unsigned long long seed = 0x5EED0F0220ull;
    int replay = 0;
    for (int i = 1; i < argc && !replay; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--runs") && more)
            runs = atoll(argv[++i]);
        else if (!strcmp(a, "--seconds") && more)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && more)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--crashes") && more)
            crashes = argv[++i];
        else if (!strcmp(a, "--replay"))
            replay = i + 1;
        else if (a[0] == '-' || corpus_dir)
            return usage(self);
        else
            corpus_dir = a;
    }
    if (replay ? replay >= argc : !corpus_dir) return usage(self);
    /* The tmp folder is made here, so that it is removed whatever becomes of the child; the
     * shared memory is a file in it (POSIX has no anonymous shared mapping). */
    char shp[600];
    snprintf(shp, sizeof shp, "%s/shared", sml_fuzz_tmpdir());
    int fd = open(shp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    sh = fd >= 0 && ftruncate(fd, (off_t)sizeof *sh) == 0
             ? mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
             : MAP_FAILED;
    if (fd >= 0) close(fd);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "%s: cannot map %s\n", self, shp);
        return 2;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = child(corpus_dir, runs, seconds, seed, replay ? argv + replay : NULL,
                       replay ? argc - replay : 0, &argc, &argv);
        exit(rc); /* not _exit: LeakSanitizer checks at exit */
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        fprintf(stderr, "%s: cannot run the child\n", self);
        return 2;
    }
    if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 2)) return WEXITSTATUS(st);
    char why[96];
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
        snprintf(why, sizeof why, "hung (no answer in %d s)", ALARM_S);
    else if (WIFSIGNALED(st))
        snprintf(why, sizeof why, "crashed (signal %d, %s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(why, sizeof why, "exit status %d (a sanitizer's report is above)",
                 WEXITSTATUS(st));
    mkdir(crashes, 0777);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sh->len; i++) h = (h ^ sh->data[i]) * 1099511628211ull;
    char path[1024];
    snprintf(path, sizeof path, "%s/crash-%016llx%s", crashes, (unsigned long long)h,
             sml_fuzz_suffix);
    FILE *f = fopen(path, "wb");
    int saved = f && (!sh->len || fwrite(sh->data, 1, sh->len, f) == sh->len);
    if (f && fclose(f) != 0) saved = 0;
    fprintf(stderr, "%s: %s on an input of %zu bytes (after %lld mutations)\n", sml_fuzz_name, why,
            sh->len, sh->mutations);
    if (saved)
        fprintf(stderr, "  saved as %s\n  reproduce: %s --replay %s\n", path, self, path);
    else
        fprintf(stderr, "  could not save it as %s\n", path);
    return 1;
}
