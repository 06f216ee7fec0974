/* test_engine_oom.c: memory the engine cannot get is no verdict on the kernel. One big case
 * (about 2^24 elements) of cpu_naive runs under address-space limits (RLIMIT_AS) from a few
 * MiB to a few hundred MiB above what this process uses: at each, the run either passes or
 * ends with SML_ERR_OUT_OF_MEMORY and a note saying so, with no failure recorded, nothing
 * shrunk and no reproducer saved; at least one limit must cut a run short past the case's
 * drawing (in the layout or a property's buffers). Then the command: the same case saved as a
 * reproducer and replayed by `softmax-lab check --regressions` under `ulimit -v` (which a
 * small case's check passes under) exits 3 saying out of memory, with no FAIL line and nothing
 * saved. Skipped (77) under AddressSanitizer, which reserves more address space than any such
 * limit allows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "core/rng.h"
#include "prop/gen.h"
#include "prop/prop.h"
#include "prop/repro.h"
#include "softmax_lab.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static sml_tally T = {"test_engine_oom", 0, 0, 0};
#define REPRO "ctest --test-dir build -R test_engine_oom --output-on-failure"

/* The process's address space now (bytes), from /proc/self/statm; 0 if unknown. */
static size_t address_space(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* The first case index of the seed whose drawn shape has at least 2^23 elements. */
static int64_t big_case(const sml_kernel *k, const sml_prop_config *cfg) {
    for (int64_t i = 0; i < 10000; i++) {
        sml_prop_case c;
        sml_prop_gen_shape(k, SML_SOFTMAX, SML_F32, sml_derive_seed(cfg->seed, (uint64_t)i), 100,
                           &cfg->sizes, &c);
        if (c.rows * c.cols >= ((int64_t)1 << 23)) return i;
    }
    return -1;
}

static char CMD[8192];
static char OUT[1 << 16];

/* The command: the case saved under dir/corpus, `check --regressions` on it under a 400 MB
 * address-space limit; first a small case's check under the same limit, which must pass. */
static void cli_oom(const sml_kernel *k, const sml_prop_config *cfg, const char *dir) {
    sml_prop_case c;
    if (!sml_test_check(&T,
                        sml_prop_gen_case(k, SML_SOFTMAX, SML_F32,
                                          sml_derive_seed(cfg->seed, (uint64_t)cfg->only_case), 100,
                                          &cfg->sizes, &c) == SML_OK,
                        REPRO, "cannot draw case %lld", (long long)cfg->only_case))
        return;
    char corpus[600], saved[600], path[1024], err[512];
    snprintf(corpus, sizeof corpus, "%s/corpus", dir);
    snprintf(saved, sizeof saved, "%s/saved", dir);
    mkdir(corpus, 0755);
    mkdir(saved, 0755);
    sml_prop_repro m;
    sml_prop_repro_describe(&m, "cpu_naive", SML_PROP_CANARIES, SML_PROP_FAIL, "a big case",
                            cfg->seed, cfg->only_case, 100, &c, 0);
    sml_status s = sml_prop_repro_save(corpus, &c, &m, NULL, path, sizeof path, err, sizeof err);
    sml_prop_case_free(&c);
    if (!sml_test_check(&T, s == SML_OK, REPRO, "cannot save the big case: %s", err)) return;
    int rc = sml_shell(
        CMD, sizeof CMD, OUT, sizeof OUT, 0,
        "sh -c 'ulimit -v 400000; exec %s check --kernel cpu_naive --op softmax --dtype fp32 "
        "--cases 3 --regressions none --save %s'",
        SML_CLI_PATH, saved);
    sml_expect(&T, rc == 0, CMD, 1024, OUT, 4000,
               "a small check under the limit: exit %d, want 0 (the limit is too low "
               "for this machine's baseline: the test proves nothing)",
               rc);
    rc = sml_shell(
        CMD, sizeof CMD, OUT, sizeof OUT, 0,
        "sh -c 'ulimit -v 400000; exec %s check --kernel cpu_naive --op softmax --dtype fp32 "
        "--cases 3 --regressions %s --save %s'",
        SML_CLI_PATH, corpus, saved);
    sml_expect(&T,
               rc == 3 && strstr(OUT, "out of memory") && strstr(OUT, "not checked") &&
                   !strstr(OUT, "\nFAIL"),
               CMD, 1024, OUT, 4000,
               "check --regressions on a case too big for the limit: exit %d, want 3 with "
               "'not checked ... out of memory' and no FAIL line",
               rc);
    sml_expect(&T, sml_dir_entries(saved) == 0, CMD, 1024, NULL, 0, "%d files saved under %s",
               sml_dir_entries(saved), saved);
}

int main(void) {
    if (UNDER_ASAN) {
        printf("skipped: AddressSanitizer reserves more address space than the limits this test "
               "sets\n");
        return SML_TEST_SKIP;
    }
    const sml_kernel *k = sml_kernel_find("cpu_naive");
    if (!sml_test_check(&T, k != NULL, REPRO, "cpu_naive is not registered"))
        return sml_tally_finish(&T);
    char dir[] = "/tmp/sml_test_engine_oom_XXXXXX";
    if (!sml_test_check(&T, mkdtemp(dir) != NULL, REPRO, "mkdtemp failed"))
        return sml_tally_finish(&T);
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_CI);
    cfg.seed = 0x0e1a5eed;
    cfg.sizes =
        (sml_prop_sizes){(int64_t)1 << 24, (int64_t)1 << 24, 0.0, (int64_t)1 << 24, 0, 0.0, 0};
    cfg.only_level = 100;
    cfg.only_case = big_case(k, &cfg);
    cfg.save_dir = dir;
    cfg.regressions_dir = NULL;
    cfg.rerun_cmd = NULL;
    FILE *log = tmpfile();
    cfg.log = log;
    cfg.progress = NULL;
    if (!sml_test_check(&T, cfg.only_case >= 0 && log, REPRO,
                        "no case of 2^23 elements drawn (or no tmpfile)"))
        return sml_tally_finish(&T);

    struct rlimit old;
    getrlimit(RLIMIT_AS, &old);
    size_t base = address_space();
    static const int HEADROOM_MIB[] = {8, 48, 96, 160, 256, 384, 640};
    int oom_runs = 0, oom_past_draw = 0;
    for (size_t h = 0; h < sizeof HEADROOM_MIB / sizeof HEADROOM_MIB[0]; h++) {
        struct rlimit lim = old;
        lim.rlim_cur = (rlim_t)(base + ((size_t)HEADROOM_MIB[h] << 20));
        if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max)
            lim.rlim_cur = old.rlim_max;
        if (setrlimit(RLIMIT_AS, &lim) != 0) {
            sml_tally_fail(&T, REPRO, "setrlimit(RLIMIT_AS, %zu) failed", (size_t)lim.rlim_cur);
            break;
        }
        sml_prop_result res;
        sml_status s = sml_prop_run(k, SML_SOFTMAX, SML_F32, &cfg, &res);
        setrlimit(RLIMIT_AS, &old);
        printf("case %lld, %d MiB over %zu MiB: %s, outcome %s, %d failures: %s\n",
               (long long)cfg.only_case, HEADROOM_MIB[h], base >> 20, sml_strerror(s),
               sml_prop_outcome_name(res.outcome), res.nfail, res.note);
        if (s == SML_OK) {
            sml_test_check(&T, res.outcome == SML_PROP_PASS && res.nfail == 0, REPRO,
                           "%d MiB of headroom: the run ended %s with %d failures (%s)",
                           HEADROOM_MIB[h], sml_prop_outcome_name(res.outcome), res.nfail,
                           res.nfail ? res.failures[0].message : res.note);
            continue;
        }
        oom_runs++;
        oom_past_draw += strstr(res.note, "cannot draw") == NULL;
        sml_test_check(&T, s == SML_ERR_OUT_OF_MEMORY, REPRO,
                       "%d MiB of headroom: status %s, want %s or %s", HEADROOM_MIB[h],
                       sml_strerror(s), sml_strerror(SML_OK), sml_strerror(SML_ERR_OUT_OF_MEMORY));
        sml_test_check(
            &T, res.nfail == 0 && res.failed_cases == 0 && res.outcome != SML_PROP_FAIL, REPRO,
            "%d MiB of headroom: out of memory was judged as the kernel's failure: %d failures, "
            "first: %s",
            HEADROOM_MIB[h], res.nfail, res.nfail ? res.failures[0].message : "-");
        sml_test_check(&T, strstr(res.note, "out of memory") != NULL, REPRO,
                       "%d MiB of headroom: the note does not say out of memory: '%s'",
                       HEADROOM_MIB[h], res.note);
        sml_test_check(&T, sml_dir_entries(dir) == 0, REPRO,
                       "%d MiB of headroom: %d files saved under %s", HEADROOM_MIB[h],
                       sml_dir_entries(dir), dir);
    }
    sml_test_check(&T, oom_runs > 0 && oom_past_draw > 0, REPRO,
                   "no limit cut a run short past the case's drawing (%d runs out of memory): the "
                   "test proves nothing",
                   oom_runs);
    fclose(log);
    cli_oom(k, &cfg, dir);
    if (!T.failed) {
        snprintf(CMD, sizeof CMD, "rm -rf '%s'", dir);
        if (system(CMD) != 0) printf("note: could not remove %s\n", dir);
    }
    return sml_tally_finish(&T);
}
