/* fuzz_repro: the reproducer reader (src/prop/repro.c) on mutated reproducers, next to the
 * .npy files of the corpus folder. An accepted reproducer must lie inside the bounds the
 * engine lays cases out in (checked here in 128-bit arithmetic, not by the reader's own
 * function), and a small one is replayed on cpu_naive (src/prop/exec.c) end to end. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "prop/prop.h"
#include "prop/repro.h"

const char sml_fuzz_name[] = "fuzz_repro";
const char sml_fuzz_suffix[] = ".json";
const char *const sml_fuzz_dict[] = {"{",
                                     "}",
                                     "[",
                                     "]",
                                     "\"",
                                     ":",
                                     ",",
                                     "null",
                                     "true",
                                     "false",
                                     "\"rows\"",
                                     "\"cols\"",
                                     "\"ld\"",
                                     "\"offset\"",
                                     "\"inplace\"",
                                     "\"op\"",
                                     "\"dtype\"",
                                     "\"kernel\"",
                                     "\"property\"",
                                     "\"x\"",
                                     "\"dy\"",
                                     "\"logits\"",
                                     "\"format\"",
                                     "\"case_seed\"",
                                     "\"0x\"",
                                     "\"softmax_bwd\"",
                                     "\"log_softmax\"",
                                     "\"bf16\"",
                                     "\"fp16\"",
                                     "\"agreement\"",
                                     "\"canaries\"",
                                     "\"r3x1.x.npy\"",
                                     "\"b2x3.dy.npy\"",
                                     "\"/dev/zero\"",
                                     "\".\"",
                                     "\"\"",
                                     NULL};

/* Cases this small are replayed, not only read. */
#define REPLAY_MAX_ELEMS ((__int128)1 << 16)

static char path[512];
static const sml_kernel *cpu;

/* The .npy files (and sidecars) of the corpus folder go next to the input. */
static void copy_fixtures(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".json")) continue;
        char from[1024], to[1024];
        snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", sml_fuzz_tmpdir(), e->d_name);
        FILE *f = fopen(from, "rb");
        if (!f) continue;
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        sml_fuzz_write(to, buf, n);
    }
    closedir(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* The committed corpus's arrays, wherever the driver runs from (and so a saved crash
     * replays with them). */
    copy_fixtures(SML_FUZZ_CORPUS);
    snprintf(path, sizeof path, "%s/in.json", sml_fuzz_tmpdir());
    cpu = sml_kernel_find("cpu_naive");
    if (!cpu) sml_fuzz_fail("no cpu_naive kernel in the registry");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sml_fuzz_write(path, data, size);
    sml_prop_case c;
    sml_prop_repro m;
    char err[512] = "";
    sml_status s = sml_prop_repro_load(path, &c, &m, err, sizeof err);
    if (s != SML_OK) {
        if (!err[0]) sml_fuzz_fail("refused with status %s and no message", sml_strerror(s));
        return 0;
    }
    __int128 span = (__int128)c.offset + (__int128)(c.rows - 1) * c.ld + c.cols;
    if (c.rows < 1 || c.cols < 1 || c.ld < c.cols || c.offset < 0 || c.offset > 4096 ||
        (__int128)c.rows * c.cols > ((__int128)1 << 31) || c.ld > ((__int128)1 << 33) ||
        span > ((__int128)1 << 33))
        sml_fuzz_fail("accepted %lldx%lld ld %lld offset %lld, outside the engine's bounds",
                      (long long)c.rows, (long long)c.cols, (long long)c.ld, (long long)c.offset);
    if (!c.x || (sml_op_is_backward(c.op) && !c.dy)) sml_fuzz_fail("accepted without its arrays");
    sml_prop_case_free(&c);
    if (span <= REPLAY_MAX_ELEMS) {
        sml_prop_replay_result r;
        s = sml_prop_replay(path, cpu, NULL, NULL, &r);
        if (s != SML_OK) sml_fuzz_fail("loads, then cannot be replayed: %s", r.message);
    }
    return 0;
}
