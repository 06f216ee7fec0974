/* fuzz_main.c: the plain fuzz driver, for builds without libFuzzer (gcc, CI).
 *
 *   fuzz_<target> CORPUS_DIR [--runs N] [--seconds S] [--seed S] [--crashes DIR]
 *   fuzz_<target> --replay FILE...
 *
 * Runs every corpus file (the files of CORPUS_DIR ending in the target's suffix) as it is,
 * then N mutations of them (mutate.c), deterministic for a seed; --seconds stops earlier.
 * Each input runs under an alarm (a reader that hangs is a failure too). On a crash, a
 * sanitizer report, a broken invariant or a hang, the input is written to the crashes
 * folder and the process exits non-zero with the command that replays it. Built with ASan
 * and UBSan (the asan preset) every memory error and undefined operation is such a crash. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "mutate.h"

#define MAX_INPUT ((size_t)1 << 20)
#define ALARM_S 20

/* The input being run, for the crash handlers (which may only call async-signal-safe
 * functions: open, write, _exit). */
static uint8_t *cur;
static size_t cur_len;
static char crash_path[1024];
static char replay_hint[1200];

static void save_current(const char *why) {
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        size_t off = 0;
        while (off < cur_len) {
            ssize_t w = write(fd, cur + off, cur_len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        close(fd);
    }
    const char *parts[] = {"\n", sml_fuzz_name, ": ", why, "; the input is saved as ", crash_path,
                           "\n  reproduce: ", replay_hint, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0) break;
}

static void on_signal(int sig) {
    save_current(sig == SIGALRM ? "hung (no answer within the alarm)" : "crashed (signal)");
    signal(sig, SIG_DFL);
    if (sig == SIGALRM) _exit(3);
    raise(sig);
}

/* Sanitizers call this before they exit on a report. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
static void on_sanitizer_death(void) { save_current("sanitizer report"); }

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = malloc(MAX_INPUT);
    *len = b ? fread(b, 1, MAX_INPUT, f) : 0;
    fclose(f);
    return b;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The corpus: the suffix's files of dir, sorted by name so that a seed means the same runs. */
static int load_corpus(const char *dir, sml_fuzz_corpus *c) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    char *names[4096];
    size_t n = 0, sl = strlen(sml_fuzz_suffix);
    for (struct dirent *e; (e = readdir(d)) && n < 4096;) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l > sl && !strcmp(e->d_name + l - sl, sml_fuzz_suffix)) names[n++] = strdup(e->d_name);
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

/* Run one input: copied into an allocation of exactly its size, so reading one byte past
 * it is a sanitizer report. */
static void run_one(const uint8_t *data, size_t len, const char *crashes, const char *self) {
    free(cur);
    cur = malloc(len ? len : 1);
    memcpy(cur, data, len);
    cur_len = len;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ data[i]) * 1099511628211ull;
    snprintf(crash_path, sizeof crash_path, "%s/crash-%016llx%s", crashes, (unsigned long long)h, sml_fuzz_suffix);
    snprintf(replay_hint, sizeof replay_hint, "%s --replay %s", self, crash_path);
    alarm(ALARM_S);
    LLVMFuzzerTestOneInput(cur, len);
    alarm(0);
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

int main(int argc, char **argv) {
    const char *self = argv[0], *corpus_dir = NULL, *crashes = ".";
    long long runs = 10000;
    double seconds = 0;
    unsigned long long seed = 0x5EED0F0220ull;
    int replay = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--runs") && more) runs = atoll(argv[++i]);
        else if (!strcmp(a, "--seconds") && more) seconds = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && more) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--crashes") && more) crashes = argv[++i];
        else if (!strcmp(a, "--replay")) replay = i + 1;
        else if (a[0] == '-') return usage(self);
        else if (!replay && !corpus_dir) corpus_dir = a;
        if (replay) break;
    }
    if (!replay && !corpus_dir) return usage(self);
    mkdir(crashes, 0777);
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
    signal(SIGABRT, on_signal);
    signal(SIGALRM, on_signal);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_sanitizer_death);
    LLVMFuzzerInitialize(&argc, &argv);

    if (replay) {
        for (int i = replay; i < argc; i++) {
            size_t len;
            uint8_t *b = read_file(argv[i], &len);
            if (!b) {
                fprintf(stderr, "%s: cannot read %s\n", self, argv[i]);
                return 2;
            }
            run_one(b, len, "/tmp", self);
            free(b);
            printf("%s: %s ran without a crash\n", sml_fuzz_name, argv[i]);
        }
        return 0;
    }
    sml_fuzz_corpus c;
    if (!load_corpus(corpus_dir, &c) || c.n == 0) {
        fprintf(stderr, "%s: no *%s files in %s\n", self, sml_fuzz_suffix, corpus_dir);
        return 2;
    }
    double t0 = now();
    for (size_t i = 0; i < c.n; i++) run_one(c.items[i], c.lens[i], crashes, self);
    sml_fuzz_mutator m;
    sml_fuzz_mutator_init(&m, seed, sml_fuzz_dict, &c);
    uint8_t *buf = malloc(MAX_INPUT);
    long long done = 0;
    for (; done < runs; done++) {
        if (seconds > 0 && (done & 63) == 0 && now() - t0 > seconds) break;
        size_t len = sml_fuzz_mutate(&m, buf, MAX_INPUT);
        run_one(buf, len, crashes, self);
    }
    double t = now() - t0;
    printf("%s: %zu corpus inputs and %lld mutations (seed 0x%llx) in %.1f s, %.0f executions/s: no crash\n",
           sml_fuzz_name, c.n, done, seed, t, (double)((long long)c.n + done) / (t > 0 ? t : 1));
    free(buf);
    free(cur);
    for (size_t i = 0; i < c.n; i++) free(c.items[i]);
    free(c.items);
    free(c.lens);
    return 0;
}
