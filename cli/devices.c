/* devices.c: see devices.h. */
#include "devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/merge.h"
#include "core/internal.h"
#include "core/rng.h"
#include "io/out_file.h"
#include "io/per_device.h"
#include "options.h"
#include "report/ledger_write.h"
#include "report/table.h"
#include "softmax_lab_plugin.h"

const sml_opt sml_cli_devices_opts[1] = {
    {"devices", "D[,D]", "GPU indices as CUDA_VISIBLE_DEVICES shows them, comma-separated",
     "the GPUs to use (default: every visible GPU), one worker process each",
     "with several, one worker process per GPU runs its slice of the cases (--shard i/n) and the "
     "slices are merged into the 1-GPU run's result (softmax-lab merge; docs/SCALING.md)",
     0},
};

static int has(int argc, char **argv, const char *flag) {
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], flag)) return 1;
    return 0;
}

/* A form of the command that splits into slices: a suite or sweep, not already a slice. */
static int splittable(const char *cmd, int argc, char **argv) {
    const char *env = getenv("SML_SHARD");
    if (has(argc, argv, "--help") || has(argc, argv, "-h") || has(argc, argv, "--shard") ||
        (env && *env))
        return 0;
    if (!strcmp(cmd, "check"))
        return !has(argc, argv, "--input") && !has(argc, argv, "--against") &&
               !has(argc, argv, "--case") && !has(argc, argv, "--allow-less-accurate");
    return 1;
}

/* Runs as the softmax-lab executable (not a host program calling sml_cli_main). */
static int is_cli(char *exe, size_t n) { return sml_self_exe_is(exe, n, "softmax-lab"); }

/* check: every worker must draw the same cases. A seed the run would draw afresh (--long,
 * --seed random, SML_PROP_SEED=random) is drawn once here and given to all. */
static int needs_seed(const char *cmd, int argc, char **argv) {
    if (strcmp(cmd, "check")) return 0;
    const char *l = getenv("SML_PROP_LONG"), *s = getenv("SML_PROP_SEED");
    int need = l && *l && strcmp(l, "0");
    if (s && *s) need = !strcmp(s, "random");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--long")) need = 1;
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) need = !strcmp(argv[++i], "random");
    }
    return need;
}

typedef struct split {
    const char *cmd;
    char exe[4096], dir[4200];
    const char *json, *md, *ledger; /* the user's outputs, written by the parent */
    char **args;                    /* the worker's arguments but --shard and --json */
    int nargs;
    char seed[24], threads[16]; /* given to every worker when set */
    int n, dev[SML_MAX_DEVICES];
    char *json_at[SML_MAX_DEVICES], *log_at[SML_MAX_DEVICES];
} split;

/* args = the command's arguments less the outputs the parent writes, then --load for each
 * plugin library this process loaded (the workers get no SML_LOAD). */
static int worker_args(split *sp, int argc, char **argv, int keep_outputs) {
    size_t nk = sml_kernel_count();
    sp->args = calloc((size_t)argc + 2 * nk + 8, sizeof *sp->args);
    if (!sp->args) return 0;
    for (int i = 0; i < argc; i++) {
        const char **out = !strcmp(argv[i], "--json")                              ? &sp->json
                           : !strcmp(argv[i], "--md") && !strcmp(sp->cmd, "bench") ? &sp->md
                           : !strcmp(argv[i], "--ledger")                          ? &sp->ledger
                                                                                   : NULL;
        if (out && i + 1 < argc && !keep_outputs) {
            *out = argv[++i];
            continue;
        }
        sp->args[sp->nargs++] = argv[i];
    }
    for (size_t k = 0; k < nk; k++) {
        const char *lib = sml_kernel_library(sml_kernel_at(k));
        int seen = !lib;
        for (int j = 0; j < sp->nargs && !seen; j++)
            seen = !strcmp(sp->args[j], "--load") && !strcmp(sp->args[j + 1], lib);
        if (seen) continue;
        if (sml_source_is_python(lib)) return 0; /* a Python host's kernels: not in a new process */
        sp->args[sp->nargs++] = "--load";
        sp->args[sp->nargs++] = (char *)lib;
    }
    return 1;
}

static int write_check(const sml_merge *m, const char *const *paths, const char *path) {
    sml_out_file o;
    char err[1200];
    if (sml_out_open(&o, path, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab check: %s\n", err);
        return 0;
    }
    if (sml_merge_check_json(m, paths, o.f) != 0) {
        sml_out_abort(&o);
        fprintf(stderr, "softmax-lab check: %s: write failed (nothing written)\n", path);
        return 0;
    }
    if (sml_out_commit(&o, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab check: %s\n", err);
        return 0;
    }
    return 1;
}

/* bench: the merged ledger where the one-process run would write it: --json / --md, else
 * --ledger DIR or ledger/ beside this binary, as <sweep>_<ops>.json and .md. */
static int write_ledger(const split *sp, const sml_merge *m) {
    char err[1200], jp[1300], mp[1300], stem[160], ops[96] = "", dir[4200];
    int ok = 1;
    if (sp->json)
        ok &= sml_ledger_save_file(&m->run, &m->ledger, sp->json, 1, err, sizeof err) == SML_OK;
    if (ok && sp->md)
        ok &= sml_ledger_save_file(&m->run, &m->ledger, sp->md, 0, err, sizeof err) == SML_OK;
    if (ok && (sp->ledger || (!sp->json && !sp->md))) {
        for (int o = 0; o < SML_OP_COUNT; o++)
            if (m->run.plan.ops & (1u << o))
                snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s", ops[0] ? "-" : "",
                         sml_op_name((sml_op)o));
        snprintf(stem, sizeof stem, "%s_%s", m->run.plan.sweep,
                 m->run.plan.ops == SML_OPS_ALL ? "all" : ops);
        snprintf(dir, sizeof dir, "%s", sp->exe);
        char *slash = strrchr(dir, '/');
        snprintf(slash ? slash + 1 : dir, sizeof dir - (size_t)(slash ? slash + 1 - dir : 0),
                 "ledger");
        ok = sml_ledger_save(&m->run, &m->ledger, sp->ledger ? sp->ledger : dir, stem, jp, mp,
                             sizeof jp, err, sizeof err) == SML_OK;
        if (ok) printf("\nledger: %s and %s\n", jp, mp);
    }
    if (!ok) fprintf(stderr, "softmax-lab bench: %s\n", err);
    return ok;
}

/* The workers' exit statuses into one: bad usage anywhere is 2 (every worker says why); a
 * worker that crashed or wrote no result fails the run. -1: all ran, merge them. */
static int workers_status(const split *sp, const int *codes) {
    for (int i = 0; i < sp->n; i++)
        if (codes[i] == 2) return 2;
    for (int i = 0; i < sp->n; i++)
        if (codes[i] != 0 && codes[i] != 1 && codes[i] != 3) {
            printf("softmax-lab %s: the worker on GPU %d (slice %d/%d) exited with %d: the run is "
                   "not whole\n",
                   sp->cmd, sp->dev[i], i + 1, sp->n, codes[i]);
            return 1;
        }
    return -1;
}

static int run_split(split *sp) {
    char **argvs[SML_MAX_DEVICES];
    char shard[SML_MAX_DEVICES][24];
    int codes[SML_MAX_DEVICES];
    for (int i = 0; i < sp->n; i++) {
        char **a = calloc((size_t)sp->nargs + 12, sizeof *a);
        sp->json_at[i] = malloc(strlen(sp->dir) + 32);
        sp->log_at[i] = malloc(strlen(sp->dir) + 32);
        if (!a || !sp->json_at[i] || !sp->log_at[i]) return 2;
        sprintf(sp->json_at[i], "%s/slice-%d.json", sp->dir, i + 1);
        sprintf(sp->log_at[i], "%s/slice-%d.log", sp->dir, i + 1);
        snprintf(shard[i], sizeof shard[i], "%d/%d", i + 1, sp->n);
        int k = 0;
        a[k++] = sp->exe;
        a[k++] = (char *)sp->cmd;
        for (int j = 0; j < sp->nargs; j++) a[k++] = sp->args[j];
        if (sp->seed[0]) a[k++] = "--seed", a[k++] = sp->seed;
        if (sp->threads[0]) a[k++] = "--threads", a[k++] = sp->threads;
        a[k++] = "--shard", a[k++] = shard[i], a[k++] = "--json", a[k++] = sp->json_at[i];
        argvs[i] = a;
    }
    printf("softmax-lab %s: %d GPUs, one worker each (slice i/%d on the i-th)%s%s\n", sp->cmd,
           sp->n, sp->n, sp->seed[0] ? ", seed " : "", sp->seed);
    char why[256];
    int rc = sml_per_device_run((char *const *const *)argvs, sp->dev, sp->n,
                                (const char *const *)sp->log_at, codes, why, sizeof why);
    for (int i = 0; i < sp->n; i++) {
        char label[96];
        snprintf(label, sizeof label, "worker %d/%d, GPU %d, exit %d", i + 1, sp->n, sp->dev[i],
                 codes[i]);
        sml_per_device_print_log(stdout, label, sp->log_at[i]);
        free(argvs[i]);
    }
    if (rc != 0) {
        fprintf(stderr, "softmax-lab %s: %s\n", sp->cmd, why);
        return 2;
    }
    int st = workers_status(sp, codes);
    if (st >= 0) return st;
    sml_merge m;
    char err[2048];
    if (sml_merge_files((const char *const *)sp->json_at, sp->n, 0, &m, err, sizeof err) !=
        SML_OK) {
        printf("softmax-lab %s: the workers' results do not join: %s\n", sp->cmd, err);
        sml_merge_free(&m);
        return 1;
    }
    printf("--- merged: %d slices ---\n", sp->n);
    int out_ok;
    if (m.kind == SML_MERGE_CHECK) {
        sml_merge_print(&m, stdout);
        out_ok = !sp->json || write_check(&m, (const char *const *)sp->json_at, sp->json);
    } else {
        sml_bench_print_decisions(stdout, &m.run, &m.ledger);
        out_ok = write_ledger(sp, &m);
    }
    /* A worker's own verdict counts too: bench --gate judges each slice's claims, and a claim
     * holds on the whole sweep exactly when it holds on every slice. */
    rc = m.exit_code;
    for (int i = 0; i < sp->n; i++)
        if (codes[i] == 1 || (codes[i] == 3 && rc == 0)) rc = codes[i];
    printf("softmax-lab %s: %s on %d GPUs\n", sp->cmd,
           rc == 0   ? "passed"
           : rc == 1 ? "FAILED"
                     : "NOT (ALL) CHECKED",
           sp->n);
    sml_merge_free(&m);
    return out_ok ? rc : rc == 1 ? 1 : 2;
}

/* One GPU named (not the only one): the same command in a fresh process that sees only it. */
static int exec_on(split *sp, int argc, char **argv) {
    if (!worker_args(sp, argc, argv, 1)) return 2;
    char **a = calloc((size_t)sp->nargs + 3, sizeof *a), vis[256];
    if (!a) return 2;
    a[0] = sp->exe;
    a[1] = (char *)sp->cmd;
    memcpy(a + 2, sp->args, (size_t)sp->nargs * sizeof *a);
    sml_device_env(sp->dev[0], vis, sizeof vis);
    setenv("CUDA_VISIBLE_DEVICES", vis, 1);
    if (getenv("SML_WORKERS_TEST_COUNT"))
        setenv("SML_WORKERS_TEST_COUNT", "1", 1); /* it sees one */
    unsetenv("CTEST_RESOURCE_GROUP_0_GPUS");      /* taken care of */
    unsetenv("SML_LOAD");
    fflush(NULL);
    execv(sp->exe, a);
    fprintf(stderr, "softmax-lab %s: --devices: cannot run %s\n", sp->cmd, sp->exe);
    free(a);
    return 2;
}

/* The GPUs to use into sp: -1 to run here, 0 to split or exec, else an exit status. */
static int choose(split *sp, const char *spec, int can) {
    int cli = is_cli(sp->exe, sizeof sp->exe);
    if (!spec && !cli) return -1;
    /* Under a test's stand-in count the workers run CPU kernels; their CUDA_VISIBLE_DEVICES
     * matters to nothing. */
    int stand_in = sml_gpu_stand_in() > 0;
    int count = sml_visible_gpus();
    if (!spec) {
        if (count < 2) return -1;
        sp->n = count < SML_MAX_DEVICES ? count : SML_MAX_DEVICES;
        for (int i = 0; i < sp->n; i++) sp->dev[i] = i;
        return 0;
    }
    char why[768];
    if (!sml_devices_choose(spec, count, stand_in, sp->dev, &sp->n, why, sizeof why)) {
        fprintf(stderr, "softmax-lab %s: bad value for --devices: '%.40s' (%s)\n", sp->cmd, spec,
                why);
        return 2;
    }
    if (sp->n == 1 && count == 1) return -1;
    if (sp->n > 1 && !can) {
        fprintf(stderr,
                "softmax-lab %s: --devices with several GPUs splits the run into slices: not with "
                "--shard, "
                "SML_SHARD, --input, --against or --case (name one GPU)\n",
                sp->cmd);
        return 2;
    }
    if (!cli) {
        fprintf(stderr,
                "softmax-lab %s: --devices needs the softmax-lab executable (this program runs the "
                "command line as a library; set CUDA_VISIBLE_DEVICES instead)\n",
                sp->cmd);
        return 2;
    }
    return 0;
}

int sml_cli_devices(const char *cmd, int *argc, char **argv) {
    const char *spec = NULL;
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (sml_opt_is(argv[i], sml_cli_devices_opts)) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "softmax-lab %s: --devices needs a value (valid: %s)\n", cmd,
                        sml_cli_devices_opts[0].values);
                return 2;
            }
            spec = argv[++i];
            continue;
        }
        argv[n++] = argv[i];
    }
    *argc = n;
    argv[n] = NULL;
    /* A ctest test given a GPU (RESOURCE_GROUPS gpus:1, as softmax_lab_add_gate's are) runs on
     * that one: "id:3,slots:1". */
    const char *res = getenv("CTEST_RESOURCE_GROUP_0_GPUS"), *id = res ? strstr(res, "id:") : NULL;
    char given[16];
    if (!spec && id && id[3] >= '0' && id[3] <= '9') {
        snprintf(given, sizeof given, "%d", atoi(id + 3));
        spec = given;
    }
    int can = splittable(cmd, n, argv);
    if (!spec && !can) return -1;
    split *sp = calloc(1, sizeof *sp);
    if (!sp) return 2;
    sp->cmd = cmd;
    int rc = choose(sp, spec, can);
    if (rc == 0 && sp->n == 1) rc = exec_on(sp, n, argv);
    if (rc == 0 && !worker_args(sp, n, argv, 0)) rc = -1; /* a Python host's kernels: run here */
    if (rc == 0 && sml_per_device_dir(sp->dir, sizeof sp->dir) != 0) {
        fprintf(stderr, "softmax-lab %s: cannot make a folder for the workers' results\n", cmd);
        rc = 2;
    }
    if (rc == 0) {
        if (needs_seed(cmd, n, argv)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t x = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
            snprintf(sp->seed, sizeof sp->seed, "0x%016llx",
                     (unsigned long long)sml_splitmix64(&x));
        }
        /* The host's cores shared among the workers, unless the user chose (a GPU case is
         * mostly host work: n workers with all cores each would fight over them). */
        const char *te = getenv("SML_PROP_THREADS");
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (!has(n, argv, "--threads") && !(te && *te && !strcmp(cmd, "check"))) {
            int t = (int)(cores / sp->n > 1 ? cores / sp->n : 1),
                most = strcmp(cmd, "check") ? 64 : 16;
            snprintf(sp->threads, sizeof sp->threads, "%d", t < most ? t : most);
        }
        rc = run_split(sp);
        const char *files[2 * SML_MAX_DEVICES];
        for (int i = 0; i < sp->n; i++)
            files[2 * i] = sp->json_at[i], files[2 * i + 1] = sp->log_at[i];
        sml_per_device_cleanup(sp->dir, files, 2 * sp->n);
    }
    for (int i = 0; i < sp->n; i++) {
        free(sp->json_at[i]);
        free(sp->log_at[i]);
    }
    free(sp->args);
    free(sp);
    return rc;
}
