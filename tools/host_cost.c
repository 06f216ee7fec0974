/* host_cost: the property suite's host CPU per case, measured on a CPU kernel in this process,
 * on the GPU profile's shapes (what `check` gives a GPU kernel) or the CI profile's; and a dump
 * of every property's verdict on every case, to show that a change of the host code changed no
 * verdict (diff the dumps of two builds).
 *
 *   B=build-cpu; gcc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -I. \
 *     -Itests/property tools/host_cost.c tests/property/cpu_mutants.c -o $B/host_cost \
 *     $B/src/prop/libsml_prop.a $B/src/worker/libsml_worker.a $B/reference/libsml_reference.a \
 *     $B/src/io/libsml_io.a $B/src/json/libsml_json.a -L$B/lib -lsoftmax_lab \
 *     -Wl,-rpath,$PWD/$B/lib -lm -lpthread -L/usr/local/cuda/lib64 -lcudart -lstdc++
 * (the last three for a CUDA build, whose libsml_prop holds the device guard's CUDA code)
 *   $B/host_cost time|split|dump [--kernel K | --mutant M | --load LIB --kernel K]
 *                [--profile gpu|ci] [--cases N] [--op OP] [--dtype D] [--seed S]
 *
 * Defaults: cpu_online, the GPU profile's sizes, 2,000 cases per op and dtype (the sizes ramp
 * over them as over a GPU job's 10,000), every op and dtype the kernel takes, the profile's
 * seed. No regressions are replayed, nothing is shrunk, one thread with one pool of host
 * buffers for all its runs (sml_prop_config.pool), as each thread of a suite has.
 *
 * time: one sml_prop_run per op and dtype, then per job and in all: cases, the host's seconds
 * by stage, and host ms per case without the kernel's own runs (the thread's CPU time less the
 * `run` stage: what a GPU kernel's case costs the host, but for its copies). split: the same
 * cases evaluated property by property (as the engine does), each property's host time (its
 * CPU time less the kernel's runs), the drawing of the cases and their freeing. dump: each
 * case's shape, family and digest, then each property's verdict (outcome, ratio and ulps in
 * hex, where, message), one line each; --mutant M takes the planted-bug CPU kernels of
 * tests/property/cpu_mutants.c, --load a plugin's kernels (tests/plugins: declared
 * deviations). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_mutants.h"
#include "prop/accuracy.h"
#include "prop/gen.h"
#include "prop/prop.h"
#include "prop/props.h"
#include "core/rng.h"
#include "softmax_lab_plugin.h"

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* split: each property's host seconds (thread CPU less the kernel's runs), over the job; and
 * the cases' host seconds by their elements' decade (1.., 10.., ..., 10^7..). */
static double split_t[SML_PROP_COUNT + 2];
static double decade_t[9];
static int64_t min_elems; /* split, dump: cases of fewer elements are drawn, not evaluated */
static int64_t decade_n[9];

static void dump_job(const sml_kernel *k, sml_op op, sml_dtype dt, const sml_prop_config *cfg,
                     int split) {
    sml_prop_env env;
    sml_prop_host_time clock = {0, 0, 0, 0, 0, 0};
    if (sml_prop_env_init(&env, k, NULL) != SML_OK) {
        printf("env init failed\n");
        return;
    }
    if (split) env.clock = &clock;
    if (cfg->pool) env.pool = cfg->pool;
    for (int64_t i = 0; i < cfg->max_cases; i++) {
        int level = sml_prop_case_level(cfg, i);
        sml_prop_case c;
        double g0 = cpu_now(), r00 = clock.run;
        if (sml_prop_gen_case(k, op, dt, sml_derive_seed(cfg->seed, (uint64_t)i), level,
                              &cfg->sizes, &c) != SML_OK) {
            printf("%s %s %s case %lld: gen failed\n", k->name, sml_op_name(op), sml_dtype_name(dt),
                   (long long)i);
            continue;
        }
        if (c.rows * c.cols < min_elems) {
            sml_prop_case_free(&c);
            continue;
        }
        split_t[SML_PROP_COUNT] += cpu_now() - g0;
        char shape[96];
        sml_prop_case_shape_str(&c, shape, sizeof shape);
        if (!split)
            printf("%s %s %s case %lld L%d %s %s digest %016llx\n", k->name, sml_op_name(op),
                   sml_dtype_name(dt), (long long)i, level, shape, c.family,
                   (unsigned long long)sml_accuracy_digest_case(0, &c));
        sml_prop_eval e;
        sml_prop_eval_begin(&e, &env, &c);
        for (int p = 0; p < SML_PROP_COUNT; p++) {
            if (!sml_prop_applies((sml_prop_id)p, op)) continue;
            sml_prop_verdict v;
            double t0 = cpu_now(), r0 = clock.run;
            sml_prop_eval_check(&e, (sml_prop_id)p, &v);
            split_t[p] += cpu_now() - t0 - (clock.run - r0);
            if (!split)
                printf("  %-16s %s dev %d ratio %a ulps %a at %lld,%lld exc %a %a: %s\n",
                       sml_prop_name((sml_prop_id)p), sml_prop_outcome_name(v.outcome), v.deviation,
                       v.ratio, v.ulps, (long long)v.row, (long long)v.col, v.excused_ulps,
                       v.excused_ratio, v.msg);
        }
        if (!split)
            printf("  refused %d engine %d\n", sml_prop_eval_refused(&e), (int)e.engine_status);
        double f0 = cpu_now();
        sml_prop_eval_end(&e);
        sml_prop_case_free(&c);
        split_t[SML_PROP_COUNT + 1] += cpu_now() - f0;
        int dec = 0;
        for (int64_t el = c.rows * c.cols; el >= 10 && dec < 8; el /= 10) dec++;
        decade_t[dec] += cpu_now() - g0 - (clock.run - r00);
        decade_n[dec]++;
        if (split && min_elems > 0)
            printf("case %5lld %-15s %-4s %-28s %-36s %.3f s\n", (long long)i, sml_op_name(op),
                   sml_dtype_name(dt), shape, c.family, cpu_now() - g0 - (clock.run - r00));
    }
    sml_prop_env_free(&env);
}

int main(int argc, char **argv) {
    if (argc < 2 ||
        (strcmp(argv[1], "time") && strcmp(argv[1], "dump") && strcmp(argv[1], "split"))) {
        fprintf(stderr, "usage: host_cost time|dump [--kernel K|--mutant M] [--profile gpu|ci] "
                        "[--cases N] [--op OP] [--dtype D] [--seed S]\n");
        return 2;
    }
    int split = !strcmp(argv[1], "split"), dump = split || !strcmp(argv[1], "dump");
    const char *kname = "cpu_online", *mname = NULL, *profile = "gpu";
    int64_t cases = 2000;
    int only_op = -1, only_dt = -1;
    uint64_t seed = 0;
    int seed_given = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--kernel"))
            kname = v;
        else if (!strcmp(a, "--load")) {
            char msg[512];
            if (sml_load_plugin(v, msg, sizeof msg) != SML_OK) {
                fprintf(stderr, "cannot load %s: %s\n", v, msg);
                return 2;
            }
        } else if (!strcmp(a, "--mutant"))
            mname = v;
        else if (!strcmp(a, "--profile"))
            profile = v;
        else if (!strcmp(a, "--cases"))
            cases = atoll(v);
        else if (!strcmp(a, "--min-elems"))
            min_elems = atoll(v);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 0), seed_given = 1;
        else if (!strcmp(a, "--op")) {
            sml_op op;
            if (sml_op_parse(v, &op) != SML_OK) return 2;
            only_op = op;
        } else if (!strcmp(a, "--dtype")) {
            sml_dtype dt;
            if (sml_dtype_parse(v, &dt) != SML_OK) return 2;
            only_dt = dt;
        } else {
            fprintf(stderr, "unknown argument %s\n", a);
            return 2;
        }
    }
    const sml_kernel *k = mname ? sml_mutant_find(mname, NULL) : sml_kernel_find(kname);
    if (!k) {
        fprintf(stderr, "no kernel %s\n", mname ? mname : kname);
        return 2;
    }
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, strcmp(profile, "ci") ? SML_PROP_PROFILE_GPU : SML_PROP_PROFILE_CI);
    cfg.max_cases = cases;
    if (seed_given) cfg.seed = seed;
    cfg.shrink = 0;
    cfg.threads = 1;
    cfg.save_dir = NULL;
    cfg.regressions_dir = NULL;
    FILE *devnull = fopen("/dev/null", "w");
    cfg.log = devnull;
    cfg.pool = sml_prop_pool_new(); /* as a suite's thread: one for all its runs */
    sml_prop_host_time all = {0, 0, 0, 0, 0, 0};
    double all_cpu = 0, all_wall = 0;
    int64_t all_cases = 0;
    uint64_t digest = 0;
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            if ((only_op >= 0 && op != only_op) || (only_dt >= 0 && dt != only_dt)) continue;
            if (!(k->ops >> op & 1) || !(k->dtypes >> dt & 1)) continue;
            if (dump) {
                dump_job(k, (sml_op)op, (sml_dtype)dt, &cfg, split);
                all_cases += cfg.max_cases;
                continue;
            }
            sml_prop_result *res = calloc(1, sizeof *res);
            if (!res) return 1;
            double c0 = cpu_now();
            sml_prop_run(k, (sml_op)op, (sml_dtype)dt, &cfg, res);
            double cpu = cpu_now() - c0;
            const sml_prop_host_time *h = &res->host;
            printf("%-10s %-15s %-4s %6lld cases %s digest %016llx wall %.3f cpu %.3f: gen %.3f "
                   "ref %.3f run %.3f copy %.3f check %.3f; host %.3f ms/case\n",
                   k->name, sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt),
                   (long long)res->cases, sml_verdict_name(res->verdict),
                   (unsigned long long)res->accuracy.digest, res->seconds, cpu, h->gen, h->ref,
                   h->run, h->copy, h->check,
                   res->cases ? 1e3 * (cpu - h->run) / (double)res->cases : 0.0);
            fflush(stdout);
            sml_prop_host_time_add(&all, h);
            all_cpu += cpu;
            all_wall += res->seconds;
            all_cases += res->cases;
            digest = sml_accuracy_digest_join(digest, res->accuracy.digest);
            free(res);
        }
    if (!dump && all_cases)
        printf("TOTAL %lld cases digest %016llx wall %.3f cpu %.3f: gen %.3f ref %.3f run %.3f "
               "copy %.3f check %.3f; host %.4f ms/case (wall-based %.4f)\n",
               (long long)all_cases, (unsigned long long)digest, all_wall, all_cpu, all.gen,
               all.ref, all.run, all.copy, all.check, 1e3 * (all_cpu - all.run) / (double)all_cases,
               1e3 * (all_wall - all.run) / (double)all_cases);
    if (split) {
        double sum = 0;
        for (int p = 0; p < SML_PROP_COUNT + 2; p++) sum += split_t[p];
        for (int p = 0; p < SML_PROP_COUNT + 2; p++)
            printf("%-16s %8.3f s %5.1f%% %.4f ms/case\n",
                   p < SML_PROP_COUNT    ? sml_prop_name((sml_prop_id)p)
                   : p == SML_PROP_COUNT ? "generation"
                                         : "case free",
                   split_t[p], 100 * split_t[p] / sum, 1e3 * split_t[p] / (double)all_cases);
        printf("%-16s %8.3f s        %.4f ms/case\n", "total", sum, 1e3 * sum / (double)all_cases);
        for (int d = 0; d < 9; d++)
            if (decade_n[d])
                printf("elements 1e%d..: %7lld cases %8.3f s %5.1f%%\n", d, (long long)decade_n[d],
                       decade_t[d], 100 * decade_t[d] / sum);
    }
    sml_prop_pool_free(cfg.pool);
    fclose(devnull);
    return 0;
}
