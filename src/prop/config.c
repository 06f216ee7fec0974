/* config.c: the engine's budgets and their three profiles, the environment variables and
 * the flags every driver (the property tests, `softmax-lab check`) shares. The numbers
 * are set so that the CPU run of the whole registry in CI stays within tens of seconds on
 * two cores, and the GPU run reaches 10,000 cases per kernel, op and dtype. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prop/prop.h"
#include "core/rng.h"

#define DEFAULT_SEED 0x50F7AB1E5EED0001ull

static uint64_t fresh_seed(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    return sml_splitmix64(&s);
}

void sml_prop_config_init(sml_prop_config *cfg, sml_prop_profile profile) {
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = DEFAULT_SEED;
    cfg->props = SML_PROPS_ALL;
    cfg->shrink = 1;
    cfg->only_case = -1;
    cfg->replay_cmd = "softmax-lab replay";
    switch (profile) {
    case SML_PROP_PROFILE_GPU:
        /* Sizes ramp by case count, as in CI: a seed gives the same cases on any GPU at any
         * speed. The runs share the 540 s over the host threads (suite.h); one run may take
         * up to 120 s of it. */
        cfg->max_cases = 10000;
        cfg->max_seconds = 120.0;
        cfg->total_seconds = 540.0;
        cfg->sizes = (sml_prop_sizes){32, 4096, 0.002, 1 << 22, 1 << 22, 0.0005, 1 << 23};
        cfg->shrink_max_evals = 3000;
        cfg->shrink_max_seconds = 30.0;
        break;
    case SML_PROP_PROFILE_LONG:
        cfg->seed = fresh_seed();
        cfg->max_cases = 100000;
        cfg->max_seconds = 600.0;
        cfg->total_seconds = 3600.0;
        cfg->ramp_by_time = 1;
        cfg->sizes = (sml_prop_sizes){32, 65536, 0.01, 1 << 25, 1 << 23, 0.001, 1 << 24};
        cfg->shrink_max_evals = 20000;
        cfg->shrink_max_seconds = 300.0;
        break;
    default:
        /* CI: the same cases on every run of a seed (sizes ramp by case count only); the
         * time budget is a safety net the default case count stays inside. */
        cfg->max_cases = 300;
        cfg->max_seconds = 6.0;
        cfg->total_seconds = 60.0;
        cfg->sizes = (sml_prop_sizes){32, 8192, 0.03, (1 << 20) + 64, (1 << 20) + 3, 0.0, 0};
        cfg->shrink_max_evals = 3000;
        cfg->shrink_max_seconds = 15.0;
        break;
    }
}

static int parse_seed(const char *s, uint64_t *out) {
    if (!strcmp(s, "random")) {
        *out = fresh_seed();
        return 1;
    }
    char *end;
    errno = 0;
    /* strtoull takes "-1" as 2^64 - 1: a sign is refused, never wrapped. */
    if (strchr(s, '-') || strchr(s, '+')) return 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s) return 0;
    *out = v;
    return 1;
}

static int parse_i64(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || *end || end == s || v < 0) return 0;
    *out = v;
    return 1;
}

static int parse_f(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !(v >= 0)) return 0;
    *out = v;
    return 1;
}

void sml_prop_config_env(sml_prop_config *cfg) {
    const char *v = getenv("SML_PROP_LONG");
    if (v && *v && strcmp(v, "0") != 0) {
        const char *cmd = cfg->replay_cmd;
        sml_prop_config_init(cfg, SML_PROP_PROFILE_LONG);
        cfg->replay_cmd = cmd;
    }
    if ((v = getenv("SML_PROP_STRICT")) && *v && strcmp(v, "0") != 0) cfg->strict = 1;
    if ((v = getenv("SML_PROP_SEED")) && *v && !parse_seed(v, &cfg->seed))
        fprintf(stderr, "warning: SML_PROP_SEED='%s' is not a number or 'random'; ignored\n", v);
    int64_t cases;
    if ((v = getenv("SML_PROP_CASES")) && *v) {
        if (parse_i64(v, &cases) && cases >= 1)
            cfg->max_cases = cases;
        else
            fprintf(stderr, "warning: SML_PROP_CASES='%s' is not a count of at least 1; ignored\n",
                    v);
    }
    if ((v = getenv("SML_PROP_THREADS")) && *v) {
        int64_t t;
        if (parse_i64(v, &t) && t <= SML_PROP_MAX_THREADS)
            cfg->threads = (int)t;
        else
            fprintf(stderr, "warning: SML_PROP_THREADS='%s' is not a count from 0 to %d; ignored\n",
                    v, SML_PROP_MAX_THREADS);
    }
    if ((v = getenv("SML_PROP_SECONDS")) && *v) {
        if (parse_f(v, &cfg->total_seconds)) {
            if (cfg->max_seconds < cfg->total_seconds) cfg->max_seconds = cfg->total_seconds;
        } else {
            fprintf(stderr, "warning: SML_PROP_SECONDS='%s' is not a number; ignored\n", v);
        }
    }
}

/* One line of --props' help per property: "      name: what it checks". */
#define PROP_HELP_(id, name, ops, help) "                     " #name ": " help "\n"

const char *sml_prop_flags_help(void) {
    return "  --seed S         run seed (decimal, 0x hex, or 'random'); env SML_PROP_SEED\n"
           "  --cases N        cases per kernel, op and dtype (at least 1); env SML_PROP_CASES\n"
           "  --seconds S      wall-time budget for the whole run (0: none); env SML_PROP_SECONDS\n"
           "  --threads N      host threads running kernel/op/dtype runs side by side (0: one per\n"
           "                   core, at most 16); env SML_PROP_THREADS\n"
           "  --long           nightly profile: 100,000 cases, bigger shapes; env SML_PROP_LONG=1\n"
           "  --props P[,P]    only these properties (docs/PROPERTIES.md):\n" SML_PROP_LIST(
               PROP_HELP_) "  --case I --level L   run only case I at size level L (0..100), as a "
                           "failure prints\n"
                           "  --no-shrink      report failures as drawn\n"
                           "  --strict         hold every kernel to the contract itself: a "
                           "declared deviation\n"
                           "                   (sml_kernel.deviation) excuses nothing; env "
                           "SML_PROP_STRICT=1\n"
                           "  --save DIR       write reproducers of failures into DIR\n"
                           "  --shard K/N      run the K-th of N slices of the cases (1-based; "
                           "every N-th case\n"
                           "                   index from K-1), for softmax-lab merge; env "
                           "SML_SHARD\n"
                           "  --regressions DIR[:DIR]  replay the reproducers under each DIR first "
                           "('none': skip)\n";
}

static int need(int argc, char **argv, int *i, const char **val) {
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s needs a value\n", argv[*i]);
        return 0;
    }
    *val = argv[++*i];
    return 1;
}

int sml_prop_config_flag(sml_prop_config *cfg, int argc, char **argv, int *i) {
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--long")) {
        sml_prop_config cur = *cfg;
        sml_prop_config_init(cfg, SML_PROP_PROFILE_LONG);
        cfg->replay_cmd = cur.replay_cmd;
        cfg->rerun_cmd = cur.rerun_cmd;
        cfg->save_dir = cur.save_dir;
        cfg->regressions_dir = cur.regressions_dir;
        cfg->log = cur.log;
        cfg->progress = cur.progress;
        cfg->props = cur.props;
        cfg->threads = cur.threads;
        cfg->shard = cur.shard;
        cfg->strict = cur.strict;
        *i += 1;
        return 1;
    }
    if (!strcmp(a, "--no-shrink")) {
        cfg->shrink = 0;
        *i += 1;
        return 1;
    }
    if (!strcmp(a, "--strict")) {
        cfg->strict = 1;
        *i += 1;
        return 1;
    }
    int known = !strcmp(a, "--seed") || !strcmp(a, "--cases") || !strcmp(a, "--seconds") ||
                !strcmp(a, "--props") || !strcmp(a, "--case") || !strcmp(a, "--level") ||
                !strcmp(a, "--save") || !strcmp(a, "--regressions") || !strcmp(a, "--threads") ||
                !strcmp(a, "--shard");
    if (!known) return 0;
    if (!need(argc, argv, i, &v)) return -1;
    int ok = 1;
    char why[128] = "";
    if (!strcmp(a, "--seed"))
        ok = parse_seed(v, &cfg->seed);
    else if (!strcmp(a, "--shard"))
        ok = sml_shard_parse(v, &cfg->shard, why, sizeof why);
    else if (!strcmp(a, "--cases")) {
        int64_t n;
        ok = parse_i64(v, &n) && n >= 1; /* 0 cases would check nothing and call it a pass */
        if (ok) cfg->max_cases = n;
    } else if (!strcmp(a, "--seconds")) {
        ok = parse_f(v, &cfg->total_seconds);
        if (ok && (cfg->max_seconds < cfg->total_seconds || cfg->total_seconds == 0.0))
            cfg->max_seconds = cfg->total_seconds;
    } else if (!strcmp(a, "--threads")) {
        int64_t t;
        ok = parse_i64(v, &t) && t <= SML_PROP_MAX_THREADS;
        if (ok) cfg->threads = (int)t;
    } else if (!strcmp(a, "--case"))
        ok = parse_i64(v, &cfg->only_case);
    else if (!strcmp(a, "--level")) {
        int64_t l;
        ok = parse_i64(v, &l) && l <= 100;
        if (ok) cfg->only_level = (int)l;
    } else if (!strcmp(a, "--save")) {
        ok = *v != 0; /* "" would lose every reproducer */
        if (ok) cfg->save_dir = v;
    } else if (!strcmp(a, "--regressions")) {
        /* Each folder of DIR[:DIR] must be one: a wrong name replayed nothing, silently. */
        for (const char *d = v; strcmp(v, "none") && *d;) {
            size_t n = strcspn(d, ":");
            char dir[2048];
            struct stat st;
            int found = 0;
            if (n > 0 && n < sizeof dir) {
                memcpy(dir, d, n);
                dir[n] = 0;
                found = stat(dir, &st) == 0;
            }
            if (n == 0 || n >= sizeof dir || !found || !S_ISDIR(st.st_mode)) {
                fprintf(stderr, "--regressions: %.*s: %s\n", (int)(n < 200 ? n : 200), d,
                        n == 0  ? "an empty folder name"
                        : found ? "not a directory"
                                : "no such directory");
                return -1;
            }
            d += n + (d[n] == ':');
        }
        cfg->regressions_dir = strcmp(v, "none") ? v : NULL;
    } else if (!strcmp(a, "--props")) {
        unsigned mask = 0;
        char buf[512];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && ok;
             t = strtok_r(NULL, ",", &save)) {
            sml_prop_id p;
            if (!strcmp(t, "all"))
                mask = SML_PROPS_ALL;
            else if (sml_prop_parse(t, &p) == SML_OK)
                mask |= 1u << p;
            else
                ok = 0;
        }
        if (!mask) ok = 0; /* no property: nothing would be checked */
        if (ok) cfg->props = mask;
    }
    if (!ok) {
        if (why[0]) {
            fprintf(stderr, "bad value for %s: '%.40s' (%s)\n", a, v, why);
            return -1;
        }
        const char *want =
            !strcmp(a, "--cases")   ? " (a count of at least 1: 0 cases would check nothing)"
            : !strcmp(a, "--props") ? " (property names, comma-separated, or all: see --help)"
                                    : "";
        fprintf(stderr, "bad value for %s: '%s'%s\n", a, v, want);
        return -1;
    }
    *i += 1;
    return 1;
}

double sml_prop_next_seconds(const sml_prop_config *cfg, double spent, int remaining, int threads) {
    double s = cfg->max_seconds;
    if (cfg->total_seconds > 0.0) {
        if (threads < 1) threads = 1;
        int rounds = remaining > 0 ? (remaining + threads - 1) / threads : 1;
        double share = (cfg->total_seconds - spent) / rounds;
        if (share < 0.05) share = 0.05; /* over budget: still one quick look at each */
        if (s <= 0.0 || share < s) s = share;
    }
    return s;
}

int sml_prop_threads(const sml_prop_config *cfg, int jobs) {
    int n = cfg->threads;
    if (n <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores > 0 ? (int)cores : 1;
    }
    if (n > SML_PROP_MAX_THREADS) n = SML_PROP_MAX_THREADS;
    if (n > jobs) n = jobs;
    return n < 1 ? 1 : n;
}
