/* test_plan_table: plan tables (src/core/plan_table.h, plan_cache.h) on the CPU.
 *   - bad tables: each refused, its message naming the line and the field;
 *   - a good table written and read back gives the same entries;
 *   - the lookup at and beside every band edge, rows bands included;
 *   - the search: SML_PLANS, then the data directory, matched on the GPU key; a GPU with no
 *     table (a fake key) gets none, `off` none at all;
 *   - the library finds the data directory beside its lib/ (the build tree's copy);
 *   - every shipped table (the .plans files of data/plans) loads.
 * Planted checks: with the overlap test of check_and_index removed the "overlap" case fails;
 * with `cols < e->cols_lo` in sml_plan_table_find made `<=` the band-edge case fails; with
 * the SM count left out of sml_plan_key_mismatch the unknown-GPU case fails. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/plan_cache.h"
#include "core/plan_table.h"
#include "unit_case.h"

#ifndef SML_BINARY_DIR
#define SML_BINARY_DIR "./build"
#endif
#ifndef SML_SOURCE_DIR
#define SML_SOURCE_DIR "."
#endif

#define HEAD "softmax-lab-plans 1\ngpu.name Test GPU 80GB\ngpu.sms 132\ngpu.dram 12.8\n"

static const char GOOD[] =
    "# a comment\n" HEAD "softmax fp32 1-128 * warp K=1\n"
    "softmax fp32 129-256 1-8448 warp R=2 blocks=16\n"
    "softmax fp32 129-256 8449-max block threads=128 K=2\n"
    "softmax fp32 257-32768 * block\n"
    "softmax fp32 32769-max * split C=8 threads=512\n"
    "softmax fp16 1-1024 * online threads=256 blocks=4\n"
    "softmax_bwd bf16 131072-max * coop threads=512 stages=3 blocks=1 slices=64\n";

static void bad_tables(unit_run *u) {
    static const struct {
        const char *text, *want;
    } c[] = {
        {"softmax-lab-plans 2\n", ":1: format"},
        {HEAD "softmax fp32 1-128 * quack\n", ":5: family"},
        {HEAD "softmax fp32 1-128 * warpx K=1\n", ":5: family"},
        {HEAD "softmax fp32 1-128 * block threads=48\n", ":5: threads: 48 not a multiple of 32"},
        {HEAD "softmax fp32 1-128 * block threads=2048\n", ":5: threads: 2048 out of range"},
        {HEAD "softmax fp32 1-128 * split C=32\n", ":5: C: 32 out of range"},
        {HEAD "softmax fp32 1-128 * split C=3\n", ":5: C: 3 not a power of two"},
        {HEAD "softmax fp32 1-128 * warp threads=64\n", ":5: threads: 64 does not apply"},
        {HEAD "softmax fp32 1-128 * coop stages=5\n", ":5: stages: 5 out of range"},
        {HEAD "softmax fp32 1-128 * warp K=-1\n", ":5: K: '-1' is not a whole number"},
        {HEAD "softmax fp32 1-128 * warp X=1\n", ":5: knob"},
        {HEAD "softmax fp32 1-128 * warp K=99999999999\n", ":5: K:"},
        {HEAD "softmaxx fp32 1-128 * warp\n", ":5: op"},
        {HEAD "softmax fp64 1-128 * warp\n", ":5: dtype"},
        {HEAD "softmax fp32 128-1 * warp\n", ":5: cols"},
        {HEAD "softmax fp32 0-1 * warp\n", ":5: cols"},
        {HEAD "softmax fp32 1-99999999999999999999 * warp\n", ":5: cols"},
        {HEAD "softmax fp32 1-128 0-7 warp\n", ":5: rows"},
        {HEAD "softmax fp32 1-128\n", ":5: rows: missing"},
        {HEAD "softmax fp32 1-128 * warp\nsoftmax fp32 100-200 * block\n",
         ":6: cols/rows: the bands overlap line 5"},
        {HEAD "softmax fp32 1-128 1-10 warp\nsoftmax fp32 1-128 10-20 block\n",
         ":6: cols/rows: the bands overlap"},
        {HEAD "softmax fp32 200-300 * warp\nsoftmax fp32 1-128 * block\n", ":6: order"},
        {HEAD "softmax fp16 1-128 * warp\nsoftmax fp32 200-300 * block\n", ":6: order"},
        {"softmax-lab-plans 1\ngpu.sms 132\ngpu.dram 12.8\nsoftmax fp32 1-2 * warp\n",
         ":4: gpu.name: missing"},
        {"softmax-lab-plans 1\ngpu.name X\ngpu.dram 12.8\n", "gpu.sms: missing"},
        {"softmax-lab-plans 1\ngpu.name X\ngpu.sms 0\n", ":3: gpu.sms"},
        {"softmax-lab-plans 1\ngpu.name X\ngpu.sms 132\ngpu.dram -1\n", ":4: gpu.dram"},
        {"softmax-lab-plans 1\ngpu.name X\ngpu.sms 132\ngpu.sms 132\n", ":4: gpu.sms: given twice"},
        {"softmax-lab-plans 1\ngpu.model X\n", ":2: gpu.model: unknown GPU key field"},
        {HEAD "softmax fp32 1-128 * warp K=1 K=1 K=1 K=1 K=1 K=1 K=1 K=1 K=1 K=1 K=1 K=1\n",
         ":5: line: more than"},
        {"", ":1: format"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        if (!unit_case(u, (int64_t)i, NULL)) continue;
        sml_plan_table t;
        char err[512] = "";
        const sml_status s =
            sml_plan_table_parse(c[i].text, strlen(c[i].text), "t.plans", &t, err, sizeof err);
        UNIT_EXPECT(u, s == SML_ERR_FORMAT && strstr(err, c[i].want) && t.n == 0 && !t.e,
                    "bad table %zu: status %s, message '%s', want one with '%s'", i,
                    sml_strerror(s), err, c[i].want);
        sml_plan_table_free(&t);
    }
    /* A line past the limit. */
    if (unit_case(u, 100, NULL)) {
        char text[2048];
        snprintf(text, sizeof text, HEAD "# %0600d\n", 0);
        sml_plan_table t;
        char err[512] = "";
        const sml_status s =
            sml_plan_table_parse(text, strlen(text), "t.plans", &t, err, sizeof err);
        UNIT_EXPECT(u, s == SML_ERR_FORMAT && strstr(err, ":5: line: longer than 512"),
                    "long line: %s", err);
    }
}

static void round_trip(unit_run *u) {
    if (!unit_case(u, 200, NULL)) return;
    sml_plan_table a, b;
    char err[512] = "", *buf = NULL;
    size_t len = 0;
    sml_status s = sml_plan_table_parse(GOOD, strlen(GOOD), "good.plans", &a, err, sizeof err);
    FILE *m = open_memstream(&buf, &len);
    if (s == SML_OK && m)
        s = sml_plan_table_write(&a, "written\nby the test", m) ? SML_ERR_IO : SML_OK;
    if (m) fclose(m);
    if (s == SML_OK) s = sml_plan_table_parse(buf, len, "written.plans", &b, err, sizeof err);
    int same = s == SML_OK && a.n == 7 && b.n == a.n && sml_plan_key_matches(&a.key, &b.key);
    for (size_t i = 0; same && i < a.n; i++) {
        sml_plan_entry x = a.e[i], y = b.e[i];
        x.line = y.line = 0;
        same = !memcmp(&x, &y, sizeof x);
    }
    UNIT_EXPECT(u, same, "round trip: %s %s (%zu entries)\n%s", sml_strerror(s), err, a.n,
                buf ? buf : "");
    free(buf);
    sml_plan_table_free(&a);
    if (s == SML_OK) sml_plan_table_free(&b);
}

static void lookup(unit_run *u) {
    if (!unit_case(u, 300, NULL)) return;
    sml_plan_table t;
    char err[512] = "";
    sml_status s = sml_plan_table_parse(GOOD, strlen(GOOD), "good.plans", &t, err, sizeof err);
    static const struct {
        sml_op op;
        sml_dtype dt;
        int64_t rows, cols;
        int line;
    } c[] = {
        {SML_SOFTMAX, SML_F32, 1, 1, 6},
        {SML_SOFTMAX, SML_F32, 99999, 128, 6},
        {SML_SOFTMAX, SML_F32, 8448, 129, 7},
        {SML_SOFTMAX, SML_F32, 8449, 129, 8},
        {SML_SOFTMAX, SML_F32, 8448, 256, 7},
        {SML_SOFTMAX, SML_F32, 8449, 257, 9},
        {SML_SOFTMAX, SML_F32, 1, 32768, 9},
        {SML_SOFTMAX, SML_F32, 1, 32769, 10},
        {SML_SOFTMAX, SML_F32, 1, (int64_t)1 << 40, 10},
        {SML_SOFTMAX, SML_F16, 5, 1024, 11},
        {SML_SOFTMAX, SML_F16, 5, 1025, 0},
        {SML_LOG_SOFTMAX, SML_F32, 5, 100, 0},
        {SML_SOFTMAX_BWD, SML_BF16, 1, 131071, 0},
        {SML_SOFTMAX_BWD, SML_BF16, 1, 131072, 12},
        {SML_SOFTMAX_BWD, SML_F32, 1, 131072, 0},
    };
    char why[256] = "";
    for (size_t i = 0; s == SML_OK && i < sizeof c / sizeof c[0] && !why[0]; i++) {
        const sml_plan_entry *e = sml_plan_table_find(&t, c[i].op, c[i].dt, c[i].rows, c[i].cols);
        if ((e ? e->line : 0) != c[i].line)
            snprintf(why, sizeof why, "%s %s %lldx%lld: line %d, want %d", sml_op_name(c[i].op),
                     sml_dtype_name(c[i].dt), (long long)c[i].rows, (long long)c[i].cols,
                     e ? e->line : 0, c[i].line);
    }
    UNIT_EXPECT(u, s == SML_OK && !why[0], "lookup: %s%s", err, why);
    if (s == SML_OK) sml_plan_table_free(&t);
}

/* A table of GOOD keyed name/sms/dram, written to path. */
static int write_table(const char *path, const char *name, int sms, const char *dram) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f,
            "softmax-lab-plans 1\ngpu.name %s\ngpu.sms %d\ngpu.dram %s\nsoftmax fp32 1-128 * warp "
            "K=%d\n",
            name, sms, dram, sms == 132 ? 1 : 2);
    return fclose(f) == 0;
}

static void search(unit_run *u) {
    if (!unit_case(u, 400, NULL)) return;
    char dir[] = "/tmp/sml_plan_table_XXXXXX", a[128], b[128], user[128];
    if (!mkdtemp(dir)) {
        UNIT_EXPECT(u, 0, "mkdtemp failed");
        return;
    }
    snprintf(a, sizeof a, "%s/a.plans", dir);
    snprintf(b, sizeof b, "%s/b.plans", dir);
    snprintf(user, sizeof user, "%s/user.table", dir);
    int ok = write_table(a, "GPU A", 132, "12.8") && write_table(b, "GPU B", 114, "18.4") &&
             write_table(user, "GPU A", 132, "12.79");
    const sml_plan_key ka = {"GPU A", 132, 12.8123}, kb = {"GPU B", 114, 18.4},
                       kc = {"GPU A", 114, 12.8}, unknown = {"GPU Z", 132, 12.8};
    sml_plan_slot s1, s2, s3, s4, s5, s6;
    unsetenv("SML_PLANS");
    sml_plans_lookup(&ka, dir, &s1);
    sml_plans_lookup(&kb, dir, &s2);
    sml_plans_lookup(&kc, dir, &s3);      /* same name, other SM count: no table */
    sml_plans_lookup(&unknown, dir, &s4); /* a GPU with no table: the rules */
    setenv("SML_PLANS", user, 1);
    sml_plans_lookup(&ka, dir, &s5); /* the user's table first */
    setenv("SML_PLANS", "off", 1);
    sml_plans_lookup(&ka, dir, &s6);
    unsetenv("SML_PLANS");
    ok = ok && s1.state == 1 && !strcmp(s1.source, a) && s2.state == 1 && !strcmp(s2.source, b) &&
         s2.table.e[0].plan.K == 2 && s3.state == 2 && s4.state == 2 && s5.state == 1 &&
         !strcmp(s5.source, user) && s6.state == 2;
    UNIT_EXPECT(u, ok,
                "search: states %d %d %d %d %d %d (want 1 1 2 2 1 2), sources '%s' '%s' '%s'",
                s1.state, s2.state, s3.state, s4.state, s5.state, s6.state, s1.source, s2.source,
                s5.source);
    sml_plan_slot *all[] = {&s1, &s2, &s3, &s4, &s5, &s6};
    for (int i = 0; i < 6; i++) sml_plan_slot_free(all[i]);
    unlink(a);
    unlink(b);
    unlink(user);
    rmdir(dir);
}

/* The library finds the build tree's copy of data/plans beside its lib/ directory. */
static void data_dir(unit_run *u) {
    if (!unit_case(u, 600, NULL)) return;
    char dir[1024] = "", a[4096] = "", b[4096] = "";
    const int found = sml_plans_data_dir(dir, sizeof dir);
    const int same = found && realpath(dir, a) &&
                     realpath(SML_BINARY_DIR "/share/softmax_lab/plans", b) && !strcmp(a, b);
    UNIT_EXPECT(u, same, "the data directory: '%s' (found %d), want %s/share/softmax_lab/plans",
                dir, found, SML_BINARY_DIR);
}

static void shipped(unit_run *u) {
    if (!unit_case(u, 500, NULL)) return;
    DIR *d = opendir(SML_SOURCE_DIR "/data/plans");
    int n = 0, bad = 0;
    char err[1024] = "";
    for (struct dirent *e; d && (e = readdir(d));) {
        const size_t l = strlen(e->d_name);
        if (l < 7 || strcmp(e->d_name + l - 6, ".plans")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/data/plans/%s", SML_SOURCE_DIR, e->d_name);
        sml_plan_table t;
        if (sml_plan_table_load(path, &t, err, sizeof err) != SML_OK)
            bad++;
        else
            sml_plan_table_free(&t);
        n++;
    }
    if (d) closedir(d);
    printf("test_plan_table: %d shipped table%s in data/plans\n", n, n == 1 ? "" : "s");
    UNIT_EXPECT(u, d && !bad, "shipped tables: %d of %d refused: %s", bad, n,
                d ? err : "no data/plans directory");
}

int main(int argc, char **argv) {
    unit_run u;
    const int rc = unit_init(&u, "test_plan_table", argc, argv);
    if (rc) return rc;
    bad_tables(&u);
    round_trip(&u);
    lookup(&u);
    search(&u);
    data_dir(&u);
    shipped(&u);
    return sml_tally_finish(&u.tally);
}
