/* test_merge.c: a run split into shards (--shard K/N) and joined again (softmax-lab merge)
 * gives the unsharded run's result, and merge refuses what is not one run. On CPU kernels:
 *   1. check: shards 1/2 and 2/2 of cpu_naive,cpu_online (every op and dtype, the saved
 *      reproducers replayed) merge to the unsharded run's counts, outcomes and accuracy,
 *      digest included, and keeps the shards' "strict" and "long";
 *   2. check of a planted bug (plug_nomax): the merge fails (exit 1) with the unsharded
 *      run's first failure of each property, at the same case, and its counts and accuracy
 *      (cut back to the cases the unsharded run judged before agreement failed); its runs
 *      name the plugin library;
 *   3. bench ledgers: shards 1/2 and 2/2 of the CPU seeds sweep (a framework-baseline
 *      plugin, plug_fw, among the kernels) merge to the unsharded ledger's records, statuses,
 *      roles ("framework"), counts, case order and accuracy digests;
 *   4. refused with exit 2, naming the difference, nothing written: one file, a shard twice,
 *      another seed, other kernels, another version, another verdict rule (--strict) or
 *      profile (--long), a run's plugin library that is not a string, a missing shard
 *      (--partial: exit 3),
 *      another GPU model (ledger), a check result with a ledger;
 *   5. --shard 0/2, 3/2, 1/0, x/y and SML_SHARD=0/2 on check and bench: exit 2 naming the
 *      flag, no --json written;
 *   6. the engines' scripts as the engines run them: ci/slurm-shards.sbatch as array tasks 1
 *      and 2 of 2 (SLURM_ARRAY_TASK_ID/COUNT set as Slurm sets them) and as the merge job,
 *      through ci/shard.sh (which the GitHub Actions workflow ci/github-shards.yml runs for
 *      its matrix shards and merge job): the merge equals the unsharded run of case 1;
 *   7. one worker per GPU (check and bench --devices, with SML_WORKERS_TEST_COUNT=2 standing
 *      in for two GPUs): the default split over every GPU, --devices 0,1 and --devices 1 give
 *      the unsharded result, and so does a run under ctest's one GPU (CTEST_RESOURCE_GROUP_0_GPUS,
 *      no split); bad --devices values exit 2 naming the flag, and a GPU the host does not
 *      have names the GPUs it has;
 *   8. ci/nightly.sh (ci/gpu.sh's nightly stage) in slices: slice 1 of 2, then slice 2 in a
 *      second call on the same folder (the seed kept there) merge to the unsharded --long run;
 *      the first call says what is missing; a planted bug fails a slice and the merge (exit
 *      1); a slice count of 0 exits 2.
 * No process of the test sees a GPU (CUDA_VISIBLE_DEVICES=-1,-1), so that it gives the same
 * results on a GPU host as on a CPU one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_filter.h"
#include "cli_exec.h"
#include "json/json_read.h"
#include "test_support.h"

static sml_tally T = {"test_merge", 0, 0, 0};
static sml_case_filter F;
static char TMP[256], LOG[1 << 16], REG[1100], PLUG[1100], FWPLUG[1100];

static void check(int n, int ok, const char *what) {
    if (ok)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s\n--- output:\n%s", n, what, LOG);
}

static int run(const char *const *args) { return sml_run_cli(F.cli, TMP, args, LOG, sizeof LOG); }

static sml_json *load(const char *name) {
    char p[600], err[512];
    sml_json *d = NULL;
    snprintf(p, sizeof p, "%s/%s", TMP, name);
    return sml_json_parse_file(p, &d, err, sizeof err) == SML_OK ? d : NULL;
}

static int same_str(const sml_json *a, const sml_json *b, const char *key) {
    const char *x = sml_json_str(sml_json_get(a, key)), *y = sml_json_str(sml_json_get(b, key));
    return x && y && !strcmp(x, y);
}

static int same_num(const sml_json *a, const sml_json *b, const char *key) {
    const sml_json *x = sml_json_get(a, key), *y = sml_json_get(b, key);
    if (x && y && x->type == SML_JSON_NULL && y->type == SML_JSON_NULL) return 1;
    return x && y && sml_json_num(x, -1) == sml_json_num(y, -2);
}

/* A true/false field: present in both, and the same. */
static int same_bool(const sml_json *a, const sml_json *b, const char *key) {
    const sml_json *x = sml_json_get(a, key), *y = sml_json_get(b, key);
    return x && y && x->type == SML_JSON_BOOL && y->type == SML_JSON_BOOL &&
           !x->boolean == !y->boolean;
}

/* The fields a merge must reproduce, of one check run or one ledger accuracy row. */
static int same_fields(const sml_json *a, const sml_json *b, const char *const *strs,
                       const char *const *nums, char *why, size_t n) {
    for (int i = 0; strs[i]; i++)
        if (!same_str(a, b, strs[i])) return snprintf(why, n, "'%s' differs", strs[i]), 0;
    for (int i = 0; nums[i]; i++)
        if (!same_num(a, b, nums[i])) return snprintf(why, n, "'%s' differs", nums[i]), 0;
    return 1;
}

static int same_failures(const sml_json *a, const sml_json *b) {
    const sml_json *x = sml_json_get(a, "failures"), *y = sml_json_get(b, "failures");
    if (sml_json_len(x) != sml_json_len(y)) return 0;
    for (size_t i = 0; i < sml_json_len(x); i++)
        if (!same_str(sml_json_at(x, i), sml_json_at(y, i), "property") ||
            !same_num(sml_json_at(x, i), sml_json_at(y, i), "case"))
            return 0;
    return 1;
}

/* Every run of check JSON `whole` equals the merged `merged`'s; why says where not. */
static int same_check(const char *whole, const char *merged, char *why, size_t n) {
    static const char *const strs[] = {"kernel", "op", "dtype", "outcome", NULL};
    static const char *const nums[] = {
        "cases",       "failed_cases", "regressions", "regressions_failed",
        "worst_ratio", "worst_ulps",   "ramp",        NULL};
    static const char *const acc_s[] = {"seed", "digest", NULL};
    static const char *const acc_n[] = {"cases",      "judged",     "worst",       "p99", "median",
                                        "worst_ulps", "worst_case", "worst_level", NULL};
    sml_json *a = load(whole), *b = load(merged);
    const sml_json *ra = sml_json_get(a, "runs"), *rb = sml_json_get(b, "runs");
    int ok = a && b && sml_json_len(ra) > 0 && sml_json_len(ra) == sml_json_len(rb) &&
             same_num(a, b, "exit");
    if (!ok) snprintf(why, n, "unreadable, or other run counts or exit codes");
    for (size_t i = 0; ok && i < sml_json_len(ra); i++) {
        const sml_json *x = sml_json_at(ra, i), *y = sml_json_at(rb, i);
        char w[200] = "";
        ok = same_fields(x, y, strs, nums, w, sizeof w) &&
             same_fields(sml_json_get(x, "accuracy"), sml_json_get(y, "accuracy"), acc_s, acc_n, w,
                         sizeof w) &&
             same_failures(x, y);
        if (!ok)
            snprintf(why, n, "runs[%zu] (%s %s %s): %s", i, sml_json_str(sml_json_get(x, "kernel")),
                     sml_json_str(sml_json_get(x, "op")), sml_json_str(sml_json_get(x, "dtype")),
                     w[0] ? w : "failures differ");
    }
    sml_json_free(a);
    sml_json_free(b);
    return ok;
}

static int same_ledger(const char *whole, const char *merged, char *why, size_t n) {
    static const char *const rs[] = {"kernel", "status", NULL}, *const none[] = {NULL};
    static const char *const cn[] = {"counted", "meets",       "above_parity", "losses",
                                     "wrong",   "no_baseline", "unclear",      NULL};
    static const char *const as[] = {"op", "dtype", "digest", "seed", NULL};
    static const char *const an[] = {"cases", "judged", "worst", "p99", "median", NULL};
    sml_json *a = load(whole), *b = load(merged);
    const sml_json *ra = sml_json_get(a, "records"), *rb = sml_json_get(b, "records");
    int ok = a && b && sml_json_len(ra) > 0 && sml_json_len(ra) == sml_json_len(rb);
    if (!ok) snprintf(why, n, "unreadable, or other record counts");
    for (size_t i = 0; ok && i < sml_json_len(ra); i++) {
        const sml_json *x = sml_json_at(ra, i), *y = sml_json_at(rb, i);
        const sml_json *ex = sml_json_get(x, "evidence"), *ey = sml_json_get(y, "evidence");
        const sml_json *ax = sml_json_get(x, "accuracy"), *ay = sml_json_get(y, "accuracy");
        char w[200] = "";
        if (!same_bool(x, y, "framework")) snprintf(w, sizeof w, "'framework' differs");
        ok = !w[0] && same_fields(x, y, rs, none, w, sizeof w) &&
             same_fields(sml_json_get(x, "counts"), sml_json_get(y, "counts"), none, cn, w,
                         sizeof w) &&
             sml_json_len(ex) == sml_json_len(ey) && sml_json_len(ax) == sml_json_len(ay);
        for (size_t j = 0; ok && j < sml_json_len(ex); j++)
            ok = same_num(sml_json_at(ex, j), sml_json_at(ey, j), "case");
        for (size_t j = 0; ok && j < sml_json_len(ax); j++)
            ok = same_fields(sml_json_at(ax, j), sml_json_at(ay, j), as, an, w, sizeof w);
        if (!ok)
            snprintf(why, n, "records[%zu] (%s): %s", i, sml_json_str(sml_json_get(x, "kernel")),
                     w[0] ? w : "evidence rows or their order differ");
    }
    sml_json_free(a);
    sml_json_free(b);
    return ok;
}

/* dst := src with the first `from` replaced by `to` (a shard of another run); 0 if absent. */
static int edit_copy(const char *src, const char *dst, const char *from, const char *to) {
    char p[600], *buf = malloc(1 << 22);
    snprintf(p, sizeof p, "%s/%s", TMP, src);
    FILE *f = buf ? fopen(p, "rb") : NULL;
    size_t len = f ? fread(buf, 1, (1 << 22) - 1, f) : 0;
    if (f) fclose(f);
    char *at = buf && len ? (buf[len] = 0, strstr(buf, from)) : NULL;
    snprintf(p, sizeof p, "%s/%s", TMP, dst);
    FILE *o = at ? fopen(p, "wb") : NULL;
    if (o) {
        fwrite(buf, 1, (size_t)(at - buf), o);
        fputs(to, o);
        fputs(at + strlen(from), o);
        fclose(o);
    }
    free(buf);
    return o != NULL;
}

static int exists(const char *name) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", TMP, name);
    return access(p, F_OK) == 0;
}

/* check over the given kernels as shard `shard` ("" whole) into out. */
static int check_run(const char *kernel, const char *load, const char *shard, const char *out) {
    const char *a[24] = {"check",         "--kernel", kernel,   "--cases", "40",
                         "--regressions", REG,        "--json", out,       NULL};
    int n = 9;
    if (load) a[n++] = "--load", a[n++] = load, a[n++] = "--no-shrink";
    if (shard[0]) a[n++] = "--shard", a[n++] = shard;
    a[n] = NULL;
    return run(a);
}

/* bench of the CPU kernels, the framework-baseline plugin's among them. */
static int bench_run(const char *shard, const char *out) {
    const char *a[24] = {"bench",         "--backend", "cpu",           "--sweep", "seeds",
                         "--max-seconds", "0.02",      "--min-samples", "3",       "--quiet",
                         "--json",        out,         "--load",        FWPLUG,    NULL};
    int n = 14;
    if (shard[0]) a[n++] = "--shard", a[n++] = shard;
    a[n] = NULL;
    return run(a);
}

static void case_check(void) {
    char why[512] = "";
    int r1 = check_run("cpu_naive,cpu_online", NULL, "1/2", "s1.json");
    int r2 = check_run("cpu_naive,cpu_online", NULL, "2/2", "s2.json");
    int rw = check_run("cpu_naive,cpu_online", NULL, "", "whole.json");
    const char *m[] = {"merge", "s1.json", "s2.json", "--json", "m.json", "--md", "m.md", NULL};
    int rm = run(m);
    int same = rm == 0 && same_check("whole.json", "m.json", why, sizeof why);
    check(1, r1 == 0 && r2 == 0 && rw == 0 && same && exists("m.md"),
          why[0] ? why : "check shards 1/2 + 2/2 merged: exit 0 and the unsharded run's result");
    /* The verdict rule and profile the shards ran under stay in the merged result. */
    sml_json *mj = load("m.json");
    const sml_json *st = sml_json_get(mj, "strict"), *lg = sml_json_get(mj, "long");
    check(1,
          st && st->type == SML_JSON_BOOL && !st->boolean && lg && lg->type == SML_JSON_BOOL &&
              !lg->boolean,
          "the merged result keeps \"strict\": false and \"long\": false");
    sml_json_free(mj);
}

static void case_failing(void) {
    char why[512] = "";
    int r1 = check_run("plug_nomax", PLUG, "1/2", "f1.json");
    int r2 = check_run("plug_nomax", PLUG, "2/2", "f2.json");
    int rw = check_run("plug_nomax", PLUG, "", "fwhole.json");
    const char *m[] = {"merge", "f2.json", "f1.json", "--json", "fm.json", NULL};
    int rm = run(m);
    int same = rm == 1 && same_check("fwhole.json", "fm.json", why, sizeof why);
    check(2, r1 == 1 && r2 == 1 && rw == 1 && same,
          why[0] ? why
                 : "a planted bug's shards merged: exit 1, the unsharded run's first failures");
    /* A plugin kernel's runs keep the library it came from: a rerun line loads it. */
    sml_json *fm = load("fm.json");
    const char *lib =
        sml_json_str(sml_json_get(sml_json_at(sml_json_get(fm, "runs"), 0), "library"));
    check(2, lib && !strcmp(lib, PLUG), "the merged runs of plug_nomax name its library");
    sml_json_free(fm);
}

static void case_ledger(void) {
    char why[512] = "";
    int r1 = bench_run("1/2", "b1.json"), r2 = bench_run("2/2", "b2.json"),
        rw = bench_run("", "bwhole.json");
    const char *m[] = {"merge", "b1.json", "b2.json", "--json", "bm.json", "--md", "bm.md", NULL};
    int rm = run(m);
    int same = rm == 0 && same_ledger("bwhole.json", "bm.json", why, sizeof why);
    check(3, r1 == 0 && r2 == 0 && rw == 0 && same && exists("bm.md"),
          why[0] ? why : "bench ledger shards merged: exit 0 and the unsharded ledger");
    /* The role the shards' records carry: plug_fw a framework baseline, cpu_naive not. */
    sml_json *merged = load("bm.json");
    const sml_json *recs = sml_json_get(merged, "records");
    int fw = -1, naive = -1;
    for (size_t i = 0; i < sml_json_len(recs); i++) {
        const char *k = sml_json_str(sml_json_get(sml_json_at(recs, i), "kernel"));
        const sml_json *f = sml_json_get(sml_json_at(recs, i), "framework");
        int *dst = k && !strcmp(k, "plug_fw") ? &fw : k && !strcmp(k, "cpu_naive") ? &naive : NULL;
        if (dst && f && f->type == SML_JSON_BOOL) *dst = f->boolean;
    }
    sml_json_free(merged);
    check(3, fw == 1 && naive == 0,
          "the merged ledger: plug_fw \"framework\": true, cpu_naive false");
}

/* merge of a and b is refused with exit 2, the message holding `says`, out.json not written. */
static void refused(const char *a, const char *b, const char *says, const char *what) {
    const char *m[] = {"merge", a, b, "--json", "out.json", NULL};
    if (!b) m[2] = "--json", m[3] = "out.json", m[4] = NULL;
    int rc = run(m);
    char w[300];
    snprintf(w, sizeof w, "merge %s: exit 2 naming '%s', nothing written (got exit %d)", what, says,
             rc);
    check(4, rc == 2 && strstr(LOG, says) && !exists("out.json"), w);
}

static void case_refusals(void) {
    const char *seed[] = {"check",      "--kernel", "cpu_naive,cpu_online",
                          "--cases",    "40",       "--regressions",
                          REG,          "--seed",   "7",
                          "--shard",    "2/2",      "--json",
                          "seed2.json", NULL};
    const char *kern[] = {"check", "--kernel",      "cpu_naive",  "--cases",
                          "40",    "--regressions", REG,          "--shard",
                          "2/2",   "--json",        "kern2.json", NULL};
    const char *t1[] = {"check",   "--kernel", "cpu_naive,cpu_online",
                        "--cases", "40",       "--regressions",
                        REG,       "--shard",  "1/3",
                        "--json",  "t1.json",  NULL};
    const char *t2[] = {"check",   "--kernel", "cpu_naive,cpu_online",
                        "--cases", "40",       "--regressions",
                        REG,       "--shard",  "2/3",
                        "--json",  "t2.json",  NULL};
    int ok = run(seed) == 0 && run(kern) == 0 && run(t1) == 0 && run(t2) == 0 &&
             edit_copy("s2.json", "ver2.json", "\"version\": \"", "\"version\": \"9.9.9-") &&
             edit_copy("s2.json", "strict2.json", "\"strict\": false", "\"strict\": true") &&
             edit_copy("s2.json", "long2.json", "\"long\": false", "\"long\": true") &&
             edit_copy("s2.json", "lib2.json", "\"library\": null", "\"library\": 5") &&
             edit_copy("b2.json", "gpu2.json", "\"gpu\": null",
                       "\"gpu\": {\"name\": \"NVIDIA H100 80GB HBM3\"}");
    check(4, ok, "making the shards of other runs");
    if (!ok) return;
    refused("s1.json", NULL, "at least 2", "of one file");
    refused("s1.json", "s1.json", "both shard 1/2", "of one shard twice");
    refused("s1.json", "seed2.json", "seed differs", "of shards of other seeds");
    refused("s1.json", "kern2.json", "kernels differ", "of shards of other kernels");
    refused("s1.json", "ver2.json", "version differs", "of shards of other versions");
    refused("s1.json", "strict2.json", "verdict rule differs (s1.json: declared deviations",
            "of a shard judged by declarations and one judged --strict");
    refused("s1.json", "long2.json", "profile differs (s1.json: default", "of other profiles");
    refused("s1.json", "lib2.json", "'library' missing, not a string or too long",
            "of a run whose plugin library is not a string");
    refused("t1.json", "t2.json", "shard 3 of 3 missing", "with a shard missing");
    refused("s1.json", "t2.json", "different splits", "of shards of other splits");
    refused("b1.json", "gpu2.json", "GPU model differs", "of ledgers of other GPU models");
    refused("s1.json", "b2.json", "one kind at a time", "of a check result and a ledger");
    const char *part[] = {"merge", "t1.json", "t2.json", "--partial", "--json", "part.json", NULL};
    int rc = run(part);
    sml_json *d = load("part.json");
    const char *missing = sml_json_str(sml_json_get(sml_json_get(d, "merged"), "missing"));
    check(4, rc == 3 && missing && !strcmp(missing, "3"),
          "merge --partial with shard 3/3 missing: exit 3, "
          "'merged'.'missing' says 3");
    sml_json_free(d);
}

static void case_bad_shard(void) {
    const char *bad[] = {"0/2", "3/2", "1/0", "x/y", "2", NULL};
    for (int i = 0; bad[i]; i++) {
        const char *c[] = {"check",   "--kernel", "cpu_naive", "--cases",  "2",
                           "--shard", bad[i],     "--json",    "bad.json", NULL};
        const char *b[] = {"bench", "--backend", "cpu",      "--shard",
                           bad[i],  "--json",    "bad.json", NULL};
        char w[200];
        int rc = run(c);
        snprintf(w, sizeof w, "check --shard %s: exit 2 naming --shard, nothing written", bad[i]);
        check(5, rc == 2 && strstr(LOG, "--shard") && !exists("bad.json"), w);
        rc = run(b);
        snprintf(w, sizeof w, "bench --shard %s: exit 2 naming --shard, nothing written", bad[i]);
        check(5, rc == 2 && strstr(LOG, "--shard") && !exists("bad.json"), w);
    }
    setenv("SML_SHARD", "0/2", 1);
    const char *c[] = {"check", "--kernel", "cpu_naive", "--cases",
                       "2",     "--json",   "bad.json",  NULL};
    const char *b[] = {"bench", "--backend", "cpu", "--json", "bad.json", NULL};
    int rc = run(c), rb = run(b);
    unsetenv("SML_SHARD");
    check(5, rc == 2 && rb == 2 && strstr(LOG, "SML_SHARD") && !exists("bad.json"),
          "SML_SHARD=0/2 on check and bench: exit 2 naming SML_SHARD, nothing written");
}

static void case_engines(void) {
    char out[1 << 14], cmd[4096], why[512] = "";
    const char *args = "check --kernel cpu_naive,cpu_online --cases 40 --regressions";
    int rc[3];
    for (int task = 1; task <= 2; task++)
        rc[task - 1] = sml_shell(
            cmd, sizeof cmd, out, sizeof out, 0,
            "cd %s && SLURM_SUBMIT_DIR=%s/../../.. SLURM_ARRAY_TASK_ID=%d SLURM_ARRAY_TASK_COUNT=2 "
            "SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=2 SML_CLI=%s SML_SHARD_DIR=%s/slurm "
            "sh %s/../../../ci/slurm-shards.sbatch %s %s",
            TMP, F.fixtures, task, F.cli, TMP, F.fixtures, args, REG);
    rc[2] = sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
                      "cd %s && SLURM_SUBMIT_DIR=%s/../../.. SML_CLI=%s SML_SHARD_DIR=%s/slurm "
                      "sh %s/../../../ci/slurm-shards.sbatch merge",
                      TMP, F.fixtures, F.cli, TMP, F.fixtures);
    snprintf(LOG, sizeof LOG, "%s", out);
    int same = rc[0] == 0 && rc[1] == 0 && rc[2] == 0 &&
               same_check("whole.json", "slurm/merged.json", why, sizeof why);
    check(
        6, same && exists("slurm/merged.md"),
        why[0]
            ? why
            : "the Slurm array's tasks 1, 2 of 2 and its merge job: exit 0, the unsharded result");
    sml_shell(cmd, sizeof cmd, out, sizeof out, 0,
              "grep -c 'ci/shard.sh run .* shards check\\|ci/shard.sh merge shards' "
              "%s/../../../ci/github-shards.yml",
              F.fixtures);
    check(6, atoi(out) == 2,
          "ci/github-shards.yml runs its shards and its merge through ci/shard.sh");
}

static void case_workers(void) {
    char why[512] = "";
    setenv("SML_WORKERS_TEST_COUNT", "2", 1);
    const char *c2[] = {"check",   "--kernel", "cpu_naive,cpu_online",
                        "--cases", "40",       "--regressions",
                        REG,       "--json",   "dev2.json",
                        NULL};
    int rc = run(c2), same = rc == 0 && same_check("whole.json", "dev2.json", why, sizeof why);
    check(7, same && strstr(LOG, "2 GPUs, one worker each"),
          why[0] ? why : "check on 2 GPUs (default): the 1-GPU result");
    const char *c1[] = {"check",   "--kernel",  "cpu_naive,cpu_online",
                        "--cases", "40",        "--regressions",
                        REG,       "--devices", "1",
                        "--json",  "dev1.json", NULL};
    rc = run(c1);
    same = rc == 0 && same_check("whole.json", "dev1.json", why, sizeof why);
    check(7, same && !strstr(LOG, "one worker each"),
          why[0] ? why : "check --devices 1: one process, the same result");
    const char *b2[] = {"bench",         "--backend", "cpu",           "--sweep",   "seeds",
                        "--max-seconds", "0.02",      "--min-samples", "3",         "--quiet",
                        "--devices",     "0,1",       "--json",        "bdev.json", "--load",
                        FWPLUG,          NULL};
    rc = run(b2);
    same = rc == 0 && same_ledger("bwhole.json", "bdev.json", why, sizeof why);
    check(7, same, why[0] ? why : "bench --devices 0,1: the 1-GPU ledger");
    /* Under ctest with a GPU given (RESOURCE_GROUPS gpus:1): that GPU alone, no split, even
     * for a shard (softmax_lab_add_gate's SHARDS tests). */
    setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1", 1);
    const char *cg[] = {
        "check", "--kernel", "cpu_naive,cpu_online", "--cases", "40", "--regressions",
        REG,     "--json",   "devctest.json",        NULL};
    rc = run(cg);
    same = rc == 0 && same_check("whole.json", "devctest.json", why, sizeof why);
    check(7, same && !strstr(LOG, "one worker each"),
          why[0] ? why : "check under ctest's one GPU: one process");
    const char *cs[] = {"check",   "--kernel", "cpu_naive",     "--cases", "4",
                        "--shard", "1/2",      "--regressions", "none",    NULL};
    rc = run(cs);
    check(7, rc == 0 && strstr(LOG, "shard 1/2"),
          "check --shard 1/2 under ctest's one GPU: runs on it");
    unsetenv("CTEST_RESOURCE_GROUP_0_GPUS");
    const char *bad[] = {"2", "0,0", "a", "0,", "-1", NULL};
    for (int i = 0; bad[i]; i++) {
        const char *a[] = {"check",     "--kernel", "cpu_naive", "--cases",  "2",
                           "--devices", bad[i],     "--json",    "bad.json", NULL};
        char w[160];
        snprintf(w, sizeof w, "check --devices %s: exit 2 naming --devices, nothing written",
                 bad[i]);
        rc = run(a);
        check(7, rc == 2 && strstr(LOG, "--devices") && !exists("bad.json"), w);
    }
    const char *ab[] = {"check",     "--kernel", "cpu_naive", "--cases", "2",
                        "--devices", "0,1",      "--shard",   "1/2",     NULL};
    rc = run(ab);
    check(7, rc == 2 && strstr(LOG, "--devices"),
          "check --devices 0,1 --shard 1/2: exit 2 (a slice runs on one GPU)");
    unsetenv("SML_WORKERS_TEST_COUNT");
    /* With no stand-in: a GPU the host does not have is refused with the GPUs it has. */
    const char *gone[] = {"check",     "--kernel", "cpu_naive", "--cases",   "2",
                          "--devices", "1",        "--json",    "gone.json", NULL};
    rc = run(gone);
    check(7,
          rc == 2 && strstr(LOG, "--devices") && strstr(LOG, "GPUs here: none") &&
              !exists("gone.json"),
          "check --devices 1 on a host without that GPU: exit 2 naming the GPUs here");
}

/* ci/nightly.sh BUILD nightly/ with these settings (env assignments) in TMP: its exit status. */
static int nightly(const char *env, char *out, size_t n) {
    char build[1100], cmd[4096];
    snprintf(build, sizeof build, "%.1000s", F.cli);
    char *slash = strrchr(build, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(build, sizeof build, ".");
    return sml_shell(cmd, sizeof cmd, out, n, 0,
                     "cd %s && %s bash %s/../../../ci/nightly.sh %s nightly", TMP, env, F.fixtures,
                     build);
}

static void case_nightly(void) {
    static char out[1 << 14];
    char env[1600], why[512] = "";
    const char *seed = "0x5eed00000000a1a1";
    const char *w[] = {"check",       "--kernel", "cpu_online", "--op", "softmax,log_softmax",
                       "--dtype",     "fp32",     "--cases",    "30",   "--regressions",
                       "none",        "--long",   "--seed",     seed,   "--json",
                       "nwhole.json", NULL};
    int rw = run(w);
    const char *args = "--kernel cpu_online --op softmax,log_softmax --dtype fp32 --cases 30 "
                       "--regressions none";
    snprintf(env, sizeof env,
             "SML_NIGHTLY_SHARDS=2 SML_NIGHTLY_ONLY=1 SML_NIGHTLY_SEED=%s SML_NIGHTLY_ARGS='%s'",
             seed, args);
    int r1 = nightly(env, out, sizeof out);
    snprintf(LOG, sizeof LOG, "%s", out);
    check(8,
          rw == 0 && r1 == 0 && strstr(out, "not merged yet: slices 2 of 2") &&
              !exists("nightly/merged.json"),
          "ci/nightly.sh slice 1 of 2: exit 0, names slice 2 as missing, merges nothing");
    snprintf(env, sizeof env, "SML_NIGHTLY_SHARDS=2 SML_NIGHTLY_ONLY=2 SML_NIGHTLY_ARGS='%s'",
             args);
    int r2 = nightly(env, out, sizeof out);
    snprintf(LOG, sizeof LOG, "%s", out);
    int same = r2 == 0 && same_check("nwhole.json", "nightly/merged.json", why, sizeof why);
    check(8, same && exists("nightly/merged.md") && strstr(out, "2 slices one after another"),
          why[0] ? why
                 : "ci/nightly.sh slice 2 of 2 on the same folder (its kept seed): the merge is "
                   "the unsharded --long run");
    snprintf(env, sizeof env,
             "SML_NIGHTLY_SHARDS=2 SML_NIGHTLY_SEED=%s SML_NIGHTLY_ARGS='--load %s --kernel "
             "plug_nomax --op softmax --dtype fp32 --cases 30 --regressions none --no-shrink'",
             seed, PLUG);
    char rm[400];
    sml_shell(rm, sizeof rm, out, sizeof out, 0, "rm -rf %s/nightly", TMP);
    int rf = nightly(env, out, sizeof out);
    snprintf(LOG, sizeof LOG, "%s", out);
    sml_json *m = load("nightly/merged.json");
    check(8, rf == 1 && m && sml_json_num(sml_json_get(m, "exit"), -1) == 1,
          "ci/nightly.sh on a planted bug (plug_nomax): the merge exits 1, and so does the script");
    sml_json_free(m);
    int rb = nightly("SML_NIGHTLY_SHARDS=0", out, sizeof out);
    snprintf(LOG, sizeof LOG, "%s", out);
    check(8, rb == 2 && strstr(out, "SML_NIGHTLY_SHARDS"),
          "ci/nightly.sh with SML_NIGHTLY_SHARDS=0: exit 2 naming it");
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    /* CPU kernels only, and the same files on any host: no process of the test sees a GPU (a
     * GPU host's ledgers would name its GPU, and a stand-in second GPU none). An invalid index
     * hides every device; one per stand-in GPU, for the workers' CUDA_VISIBLE_DEVICES. */
    setenv("CUDA_VISIBLE_DEVICES", "-1,-1", 1);
    if (sml_cli_setup(T.test, F.cli, TMP, sizeof TMP)) return 1;
    /* The repository's saved reproducers (tests/regressions) and the planted-bug plugin of
     * this build (tests/plugins), found from the fixtures folder and the binary. */
    snprintf(REG, sizeof REG, "%.1000s/../../regressions", F.fixtures);
    snprintf(PLUG, sizeof PLUG, "%.1000s", F.cli);
    char *slash = strrchr(PLUG, '/');
    snprintf(slash ? slash + 1 : PLUG, sizeof PLUG - (size_t)(slash ? slash + 1 - PLUG : 0),
             "tests/plugins/lib/plug_nomax.so");
    snprintf(FWPLUG, sizeof FWPLUG, "%.1000s", PLUG);
    snprintf(strrchr(FWPLUG, '/') + 1, 32, "plug_fw.so");
    /* Cases 4, 6 and 7 read the files cases 1 and 3 make: --case 4, 6 or 7 makes them first. */
    int only46 = F.only == 4 || F.only == 6 || F.only == 7;
    if (sml_case_filter_want(&F, 1) || only46) case_check();
    if (sml_case_filter_want(&F, 2)) case_failing();
    if (sml_case_filter_want(&F, 3) || F.only == 4 || F.only == 7) case_ledger();
    if (sml_case_filter_want(&F, 4)) case_refusals();
    if (sml_case_filter_want(&F, 5)) case_bad_shard();
    if (sml_case_filter_want(&F, 6)) case_engines();
    if (sml_case_filter_want(&F, 7)) case_workers();
    if (sml_case_filter_want(&F, 8)) case_nightly();
    return sml_tally_finish(&T);
}
