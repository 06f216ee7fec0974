/* config.c: the engine's three profiles, the environment variables and the flags every
 * driver (the property tests, `softmax-lab check`) shares. A profile is a number of cases and
 * the sizes they are drawn from, never a time: the same seed runs the same cases on any
 * machine at any load (the --seconds cap, when given, ends a run INCOMPLETE). The numbers
 * are set so that the CPU run of the whole registry in CI takes tens of seconds on two cores,
 * and the GPU run has 10,000 cases per kernel, op and dtype. */
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
    cfg->profile = profile;
    switch (profile) {
    case SML_PROP_PROFILE_GPU:
        cfg->max_cases = 10000;
        cfg->sizes = (sml_prop_sizes){32, 4096, 0.002, 1 << 22, 1 << 22, 0.0005, 1 << 23};
        cfg->shrink_max_evals = 3000;
        cfg->shrink_max_seconds = 30.0;
        break;
    case SML_PROP_PROFILE_LONG:
        cfg->seed = fresh_seed();
        cfg->max_cases = 100000;
        cfg->sizes = (sml_prop_sizes){32, 65536, 0.01, 1 << 25, 1 << 23, 0.001, 1 << 24};
        cfg->shrink_max_evals = 20000;
        cfg->shrink_max_seconds = 300.0;
        break;
    default:
        cfg->max_cases = 300;
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
    if ((v = getenv("SML_PROP_SEED")) && *v && parse_seed(v, &cfg->seed))
        cfg->seed_given = 1;
    else if (v && *v)
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
    if ((v = getenv("SML_PROP_SECONDS")) && *v && !parse_f(v, &cfg->total_seconds))
        fprintf(stderr, "warning: SML_PROP_SECONDS='%s' is not a number; ignored\n", v);
}

/* The engine's flags, one table (core/opt.h): what sml_prop_config_flag parses and what the
 * help of every driver says. */
enum {
    F_SEED = 1,
    F_CASES,
    F_SECONDS,
    F_THREADS,
    F_LONG,
    F_PROPS,
    F_CASE,
    F_LEVEL,
    F_NO_SHRINK,
    F_SAVE,
    F_REGRESSIONS,
    F_SHARD,
    F_CASE_TIMEOUT,
    F_STRICT
};

#define PROP_NAME_(id, name, ops, help) #name ", "

const sml_opt sml_prop_flags[] = {
    {"seed", "S", "a number (decimal or 0x hex) or random", "the run's seed (env SML_PROP_SEED)",
     "each case's seed derives from it and its index, so a seed names the same cases on any "
     "machine",
     F_SEED},
    {"cases", "N", "a count of at least 1 (0 cases would check nothing)",
     "cases per kernel, op and dtype (env SML_PROP_CASES)", NULL, F_CASES},
    {"seconds", "S", "seconds, 0 or more (0: no cap)",
     "cap the whole run's wall time (env SML_PROP_SECONDS)",
     "a run the cap stops before its cases are done is INCOMPLETE (exit 4), never a pass",
     F_SECONDS},
    {"threads", "N", "0 to 16 (0: one per core)",
     "host threads running kernel/op/dtype runs side by side (env SML_PROP_THREADS)",
     "a run of 1,000 cases or more runs as parts side by side; never more threads than parts",
     F_THREADS},
    {"long", NULL, NULL, "nightly: 100,000 cases per GPU kernel/op/dtype, 10,000 per CPU one's",
     "bigger shapes for a CPU kernel (docs/PROPERTIES.md); env SML_PROP_LONG=1; "
     "the seed is drawn afresh unless --seed is given",
     F_LONG},
    {"props", "P[,P]", SML_PROP_LIST(PROP_NAME_) "all",
     "only these properties (docs/PROPERTIES.md)", NULL, F_PROPS},
    {"case", "I", "a case index, 0 or more",
     "run only case I (with --level L), as a failure's rerun line says", NULL, F_CASE},
    {"level", "L", "0 to 100", "the size level of --case", NULL, F_LEVEL},
    {"no-shrink", NULL, NULL, "report failures as drawn, not shrunk", NULL, F_NO_SHRINK},
    {"strict", NULL, NULL,
     "hold every kernel to the contract itself: a declared deviation excuses nothing (env "
     "SML_PROP_STRICT=1)",
     "a kernel's declared deviation (sml_kernel.deviation) is otherwise a looser bound it is "
     "held to (docs/PROPERTIES.md, \"Declared deviations\")",
     F_STRICT},
    {"save", "DIR", "a folder name (made when needed)",
     "write a reproducer of each failure into DIR", NULL, F_SAVE},
    {"regressions", "DIR[:DIR]", "existing folders, ':' between them, or none",
     "replay the reproducers under each DIR first, not the default corpus (none: no replay)",
     "without it check replays the folders of SML_REGRESSIONS=DIR[:DIR], else the corpus "
     "installed with softmax-lab and ./tests/regressions and ./tests/mutants/corpus where they "
     "exist",
     F_REGRESSIONS},
    {"shard", "K/N", "K/N with 1 <= K <= N",
     "run the K-th of N slices of the cases, for softmax-lab merge (env SML_SHARD)",
     "slice K holds every N-th case index from K-1", F_SHARD},
    {"case-timeout", "S", "seconds, 0 or more (0: derived from the case)",
     "a kernel launch's deadline; past it, the launch runs again alone under 10 x S",
     "only a launch that does not finish alone is a FAIL (a hang); the default is 200 times the "
     "double reference's time for the case here, at least 4 s",
     F_CASE_TIMEOUT},
};

const size_t sml_prop_nflags = sizeof sml_prop_flags / sizeof sml_prop_flags[0];

const char *sml_prop_flags_help(void) {
    static char text[4096];
    if (text[0]) return text;
    size_t used = 0;
    for (size_t i = 0; i < sml_prop_nflags && used < sizeof text; i++) {
        const sml_opt *o = &sml_prop_flags[i];
        char left[64];
        snprintf(left, sizeof left, "  --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        used += (size_t)snprintf(text + used, sizeof text - used, "%-24s%s\n", left, o->help);
    }
    return text;
}

/* --regressions DIR[:DIR]: each one a folder (a wrong name replayed nothing, silently). */
static int regressions_ok(const char *v, char *why, size_t n) {
    for (const char *d = v; strcmp(v, "none") && *d;) {
        size_t len = strcspn(d, ":");
        char dir[2048];
        struct stat st;
        int found = 0;
        if (len > 0 && len < sizeof dir) {
            memcpy(dir, d, len);
            dir[len] = 0;
            found = stat(dir, &st) == 0;
        }
        if (len == 0 || len >= sizeof dir || !found || !S_ISDIR(st.st_mode)) {
            snprintf(why, n, "%.*s: %s", (int)(len < 200 ? len : 200), d,
                     len == 0 ? "an empty folder name"
                     : found  ? "not a directory"
                              : "no such directory");
            return 0;
        }
        d += len + (d[len] == ':');
    }
    return 1;
}

static int props_mask(const char *v, unsigned *out) {
    unsigned mask = 0;
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf) return 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        sml_prop_id p;
        if (!strcmp(t, "all"))
            mask = SML_PROPS_ALL;
        else if (sml_prop_parse(t, &p) == SML_OK)
            mask |= 1u << p;
        else
            return 0;
    }
    if (!mask) return 0; /* no property: nothing would be checked */
    *out = mask;
    return 1;
}

/* --long: the long profile, keeping what the command line and the driver set. */
static void take_long(sml_prop_config *cfg) {
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
    cfg->total_seconds = cur.total_seconds;
    cfg->case_timeout = cur.case_timeout;
    cfg->strict = cur.strict;
    if (cur.seed_given) { /* --seed S --long runs S, as --long --seed S does */
        cfg->seed = cur.seed;
        cfg->seed_given = 1;
    }
}

int sml_prop_config_set(sml_prop_config *cfg, const sml_opt *o, const char *v, char *why,
                        size_t n) {
    int64_t i64;
    switch (o->id) {
    case F_LONG: take_long(cfg); return 0;
    case F_NO_SHRINK: cfg->shrink = 0; return 0;
    case F_STRICT: cfg->strict = 1; return 0;
    case F_SEED:
        if (!parse_seed(v, &cfg->seed)) return -1;
        cfg->seed_given = 1;
        return 0;
    case F_SHARD: return sml_shard_parse(v, &cfg->shard, why, n) ? 0 : -1;
    case F_CASES:
        if (!parse_i64(v, &i64) || i64 < 1) return -1;
        cfg->max_cases = i64;
        return 0;
    case F_SECONDS: return parse_f(v, &cfg->total_seconds) ? 0 : -1;
    case F_THREADS:
        if (!parse_i64(v, &i64) || i64 > SML_PROP_MAX_THREADS) return -1;
        cfg->threads = (int)i64;
        return 0;
    case F_CASE: return parse_i64(v, &cfg->only_case) ? 0 : -1;
    case F_LEVEL:
        if (!parse_i64(v, &i64) || i64 > 100) return -1;
        cfg->only_level = (int)i64;
        return 0;
    case F_SAVE:
        if (!*v) return -1; /* "" would lose every reproducer */
        cfg->save_dir = v;
        return 0;
    case F_REGRESSIONS:
        if (!regressions_ok(v, why, n)) return -1;
        cfg->regressions_dir = strcmp(v, "none") ? v : NULL;
        return 0;
    case F_PROPS: return props_mask(v, &cfg->props) ? 0 : -1;
    case F_CASE_TIMEOUT: return parse_f(v, &cfg->case_timeout) ? 0 : -1;
    default: return -1;
    }
}

int sml_prop_config_flag(sml_prop_config *cfg, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    const sml_opt *o = NULL;
    for (size_t k = 0; k < sml_prop_nflags && !o; k++)
        if (!strncmp(a, "--", 2) && !strcmp(a + 2, sml_prop_flags[k].name)) o = &sml_prop_flags[k];
    if (!o) return 0;
    const char *v = NULL;
    if (o->arg) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "%s needs a value (valid: %s)\n", a, o->values);
            return -1;
        }
        v = argv[++*i];
    }
    char why[256] = "";
    if (sml_prop_config_set(cfg, o, v, why, sizeof why) != 0) {
        fprintf(stderr, "bad value for %s: '%.200s' (%s%svalid: %s)\n", a, v ? v : "", why,
                why[0] ? "; " : "", o->values);
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

int sml_prop_threads(const sml_prop_config *cfg, int tasks) {
    int n = cfg->threads;
    if (n <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores > 0 ? (int)cores : 1;
    }
    if (n > SML_PROP_MAX_THREADS) n = SML_PROP_MAX_THREADS;
    if (n > tasks) n = tasks;
    return n < 1 ? 1 : n;
}
