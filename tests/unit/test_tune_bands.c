/* test_tune_bands: the tuner's pure parts on the CPU (src/tune/tune.h).
 *   - cells of the standard sweep's shapes into bands: the table loads, every measured cell
 *     looks up its own plan, equal neighbours merge, a column count measured at two row
 *     counts gets two row bands split at their geometric midpoint;
 *   - the candidates of every standard cell hold the rules' own plan (each family's default
 *     where sml_auto_pick chooses it), on GPUs with and without clusters, within the cap;
 *   - plan families and `auto`'s paths share their order and names (the tuner maps one to
 *     the other by value);
 *   - the estimate of `tune --sweep standard --op all` stays under 4 minutes.
 * Planted checks: with mid() in bands.c returning its first argument, the row-band case
 * fails; without the split default in sml_tune_candidates, the candidates case fails. */
#include <stdio.h>
#include <string.h>

#include "bench/sweeps.h"
#include "kernels/auto_dispatch.h"
#include "tune/tune.h"
#include "unit_case.h"

static sml_plan plan_of(sml_plan_family f, int K) {
    sml_plan p;
    memset(&p, 0, sizeof p);
    p.family = f;
    p.K = K;
    return p;
}

/* The standard sweep's fp32 softmax cells with made-up winners. */
static void bands(unit_run *u) {
    if (!unit_case(u, 1, NULL)) return;
    static const struct {
        int64_t rows, cols;
        sml_plan_family f;
        int K;
    } c[] = {
        {16384, 128, SML_PLAN_WARP, 2},   {4096, 256, SML_PLAN_WARP, 0},
        {4096, 512, SML_PLAN_WARP, 0},    {32768, 512, SML_PLAN_BLOCK, 4},
        {4096, 1024, SML_PLAN_BLOCK, 0},  {4096, 2048, SML_PLAN_BLOCK, 0},
        {4096, 4096, SML_PLAN_BLOCK, 0},  {1024, 131072, SML_PLAN_SPLIT, 0},
        {128, 1048576, SML_PLAN_COOP, 0},
    };
    const size_t n = sizeof c / sizeof c[0];
    sml_tune_cell cells[16];
    memset(cells, 0, sizeof cells);
    for (size_t i = 0; i < n; i++) {
        cells[n - 1 - i].op = SML_SOFTMAX; /* in reverse: the bands sort them */
        cells[n - 1 - i].dtype = SML_F32;
        cells[n - 1 - i].rows = c[i].rows;
        cells[n - 1 - i].cols = c[i].cols;
        cells[n - 1 - i].best = plan_of(c[i].f, c[i].K);
    }
    const sml_plan_key key = {"Test GPU", 132, 12.8};
    sml_plan_table t;
    char err[512] = "", why[256] = "";
    sml_status s = sml_tune_bands(cells, n, &key, &t, err, sizeof err);
    for (size_t i = 0; s == SML_OK && i < n && !why[0]; i++) {
        const sml_plan_entry *e =
            sml_plan_table_find(&t, SML_SOFTMAX, SML_F32, c[i].rows, c[i].cols);
        if (!e || e->plan.family != c[i].f || e->plan.K != c[i].K)
            snprintf(why, sizeof why, "%lldx%lld: %s, want %s K=%d", (long long)c[i].rows,
                     (long long)c[i].cols, e ? sml_plan_family_name(e->plan.family) : "no entry",
                     sml_plan_family_name(c[i].f), c[i].K);
    }
    /* 256 and 512 at 4096 rows merge; 512 splits its rows at sqrt(4096 x 32768) = 11585. */
    const sml_plan_entry *lo =
        s == SML_OK ? sml_plan_table_find(&t, SML_SOFTMAX, SML_F32, 11585, 400) : NULL;
    const sml_plan_entry *hi =
        s == SML_OK ? sml_plan_table_find(&t, SML_SOFTMAX, SML_F32, 11586, 400) : NULL;
    const sml_plan_entry *below =
        s == SML_OK ? sml_plan_table_find(&t, SML_SOFTMAX, SML_F32, 1, 127) : NULL;
    const sml_plan_entry *past =
        s == SML_OK ? sml_plan_table_find(&t, SML_SOFTMAX, SML_F32, 1, 1048577) : NULL;
    UNIT_EXPECT(u,
                s == SML_OK && !why[0] && lo && lo->plan.family == SML_PLAN_WARP && hi &&
                    hi->plan.family == SML_PLAN_BLOCK && !below && !past && t.n < n + 1,
                "bands: %s %s; rows 11585 x 400 %s, 11586 x 400 %s, %zu entries", err, why,
                lo ? sml_plan_family_name(lo->plan.family) : "none",
                hi ? sml_plan_family_name(hi->plan.family) : "none", t.n);
    if (s == SML_OK) {
        sml_plan_table_write(&t, "test_tune_bands", stdout);
        sml_plan_table_free(&t);
    }
}

static void candidates(unit_run *u) {
    if (!unit_case(u, 2, NULL)) return;
    sml_sweep sw;
    char why[256] = "";
    const sml_status s = sml_sweep_get("standard", &sw);
    for (int cl = 0; cl < 2; cl++)
        for (size_t i = 0; s == SML_OK && i < sw.n && !why[0]; i++)
            for (int op = 0; op < SML_OP_COUNT; op++)
                for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
                    sml_plan cand[SML_TUNE_MAX_CANDIDATES + 1];
                    const int k = sml_tune_candidates((sml_op)op, sw.shape[i].cols, cl, cand,
                                                      SML_TUNE_MAX_CANDIDATES + 1);
                    const sml_auto_path want =
                        sml_auto_pick((sml_op)op, (sml_dtype)dt, sw.shape[i].rows, sw.shape[i].cols,
                                      1, 132, cl, 12.8);
                    int found = 0;
                    for (int j = 0; j < k; j++) {
                        sml_plan rules = plan_of((sml_plan_family)want, 0);
                        found |= !memcmp(&cand[j], &rules, sizeof rules);
                    }
                    if (!found || k > SML_TUNE_MAX_CANDIDATES)
                        snprintf(why, sizeof why,
                                 "%s %s %lldx%lld clusters %d: %d candidates, the rules' %s %s",
                                 sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt),
                                 (long long)sw.shape[i].rows, (long long)sw.shape[i].cols, cl, k,
                                 sml_auto_path_name(want), found ? "among them" : "missing");
                }
    UNIT_EXPECT(u, s == SML_OK && !why[0], "candidates: %s", why);
}

static void families(unit_run *u) {
    if (!unit_case(u, 3, NULL)) return;
    int same = SML_PLAN_FAMILY_COUNT == SML_AUTO_COOP + 1;
    for (int i = 0; i < SML_PLAN_FAMILY_COUNT; i++)
        same = same && !strcmp(sml_plan_family_name((sml_plan_family)i),
                               sml_auto_path_name((sml_auto_path)i));
    UNIT_EXPECT(u, same, "plan families and auto's paths differ in order or names");
}

static void estimate(unit_run *u) {
    if (!unit_case(u, 4, NULL)) return;
    const sml_tune_opts o = {"standard", SML_OPS_ALL, SML_DTYPES_ALL, 0.01, 0};
    size_t cells, cand;
    double sec;
    sml_tune_estimate(&o, 1, &cells, &cand, &sec);
    printf("test_tune_bands: tune --sweep standard --op all: %zu cells, %zu candidates, about %.0f "
           "s\n",
           cells, cand, sec);
    UNIT_EXPECT(u, cells == 144 && sec < 240, "estimate: %zu cells, %.0f s", cells, sec);
}

int main(int argc, char **argv) {
    unit_run u;
    const int rc = unit_init(&u, "test_tune_bands", argc, argv);
    if (rc) return rc;
    bands(&u);
    candidates(&u);
    families(&u);
    estimate(&u);
    return sml_tally_finish(&u.tally);
}
