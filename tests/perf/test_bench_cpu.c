/* test_bench_cpu.c: the benchmark runner end to end on the CPU backends, with planted
 * kernels that prove its safeguards work: a kernel that corrupts one element is WRONG and
 * Rejected however fast it is; a kernel that leaves rows unwritten is caught by the poison;
 * a correct copy of cpu_naive meets an easy claim against a baseline slower by construction.
 * Also checks the numbers the ledger is
 * built from (GB/s, copy fractions, speedups) are there and consistent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "analysis/compare.h"
#include "bench/inputs.h"
#include "json/json_read.h"
#include "report/ledger_write.h"
#include "case_filter.h"
#include "kernels/launchers.h"
#include "core/dtype.h"
#include "test_support.h"

static sml_tally T = {"test_bench_cpu", 0, 0, 0};
static sml_case_filter F;

/* cpu_naive, then one element of the last row nudged by 1% (far outside any bound). */
static sml_status launch_corrupt(sml_handle *h, const sml_problem *p) {
    sml_status s = sml_launch_cpu_naive(h, p);
    if (s != SML_OK) return s;
    int64_t i = (p->rows - 1) * p->ld + p->cols / 2;
    sml_store(p->dtype, p->out, i, sml_load(p->dtype, p->out, i) * 1.01 + 1e-3);
    return SML_OK;
}

/* cpu_naive on the first half of the rows only: the rest keeps whatever was there. */
static sml_status launch_lazy(sml_handle *h, const sml_problem *p) {
    sml_problem half = *p;
    half.rows = p->rows / 2 > 0 ? p->rows / 2 : 1;
    return sml_launch_cpu_naive(h, &half);
}

/* cpu_naive SLOW_REPEATS times over: a baseline slower than cpu_naive by construction. A claim
 * against cpu_naive itself would pit two identical kernels against each other, and on a loaded
 * 2-core runner those time 0.4x to 2.1x apart on these small cases: the verdict would follow
 * the load. Against this one, planted_ok's >= 0.5x claim holds with 32x to spare. */
enum { SLOW_REPEATS = 16 };
static sml_status launch_slow(sml_handle *h, const sml_problem *p) {
    for (int r = 0; r < SLOW_REPEATS; r++) {
        sml_status s = sml_launch_cpu_naive(h, p);
        if (s != SML_OK) return s;
    }
    return SML_OK;
}

/* A CPU kernel of this file taking every op and dtype. Designated initializers: the fields a
 * test does not care about stay zero, and a field added to sml_kernel later does not break the
 * build. */
#define PLANTED(NAME, LAUNCH, SUMMARY, ...)                                            \
    {                                                                                  \
        .name = NAME, .file = "tests/perf/test_bench_cpu.c", .device = SML_DEVICE_CPU, \
        .ops = SML_OPS_ALL, .dtypes = SML_DTYPES_ALL, .min_cols = 1, .max_cols = 0,    \
        .launch = LAUNCH, .summary = SUMMARY, .claim = __VA_ARGS__                     \
    }
static const sml_kernel PLANTED_CORRUPT =
    PLANTED("planted_corrupt", launch_corrupt, "cpu_naive with one element off by 1%",
            {"cpu_naive", 0.5, "all"});
static const sml_kernel PLANTED_LAZY =
    PLANTED("planted_lazy", launch_lazy, "cpu_naive on half the rows", {NULL, 0.0, NULL});
static const sml_kernel PLANTED_SLOW =
    PLANTED("planted_slow", launch_slow, "cpu_naive, 16 times over", {NULL, 0.0, NULL});
static const sml_kernel PLANTED_OK =
    PLANTED("planted_ok", sml_launch_cpu_naive, "cpu_naive under another name",
            {"planted_slow", 0.5, "all"});

static const sml_bench_result *find(const sml_bench_run *run, size_t c, const char *k) {
    return sml_bench_find(run, c, k);
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    /* planted_lazy runs right after cpu_naive: without the poison its unwritten rows would
     * still hold cpu_naive's correct output, so only the poison can catch it. */
    const sml_kernel *kernels[] = {sml_kernel_find("cpu_naive"),
                                   &PLANTED_LAZY,
                                   sml_kernel_find("cpu_online"),
                                   &PLANTED_CORRUPT,
                                   &PLANTED_OK,
                                   &PLANTED_SLOW};
    int baseline_only[] = {0, 0, 0, 0, 0, 0};
    sml_bench_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.sweep, sizeof plan.sweep, "test");
    plan.shapes.n = 2;
    plan.shapes.shape[0] = (sml_sweep_shape){16, 256, 1u << SML_F32, 0};
    plan.shapes.shape[1] = (sml_sweep_shape){4, 2048, (1u << SML_F16) | (1u << SML_BF16), 0};
    plan.ops = (1u << SML_SOFTMAX) | (1u << SML_SOFTMAX_BWD);
    plan.dtypes = SML_DTYPES_ALL;
    plan.kernels = kernels;
    plan.baseline_only = baseline_only;
    plan.nkernels = 6;
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    cfg.stop.max_seconds = 0.02;
    cfg.cpu_sample_s = 2e-4;
    cfg.progress = 0;
    cfg.threads = 2;
    sml_bench_run run;
    char err[256];
    sml_status s = sml_bench_execute(&plan, &cfg, NULL, NULL, &run, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 1, s == SML_OK, "the run completes");
    if (s != SML_OK) {
        printf("  %s\n", err);
        return sml_tally_finish(&T);
    }
    sml_test_check_case(&T, &F, NULL, 2, run.ncases == 6,
                        "6 cases: fp32 256 x2 ops, fp16/bf16 2048 x2 ops");
    sml_test_check_case(&T, &F, NULL, 3, run.nresults == 36, "36 results: 6 kernels x 6 cases");
    sml_test_check_case(&T, &F, NULL, 4, run.env.has_host_memcpy && run.env.host_memcpy_gbps > 0,
                        "the host copy bandwidth was measured");
    int n = 10;
    for (size_t c = 0; c < run.ncases; c++, n += 10) {
        const sml_bench_case *k = &run.cases[c];
        const sml_bench_result *naive = find(&run, c, "cpu_naive"),
                               *online = find(&run, c, "cpu_online");
        const sml_bench_result *bad = find(&run, c, "planted_corrupt"),
                               *lazy = find(&run, c, "planted_lazy");
        const sml_bench_result *ok = find(&run, c, "planted_ok");
        char what[160];
        snprintf(what, sizeof what,
                 "%s %s %lldx%lld: cpu_naive, cpu_online and planted_ok pass the check",
                 sml_op_name(k->op), sml_dtype_name(k->dtype), (long long)k->rows,
                 (long long)k->cols);
        sml_test_check_case(&T, &F, NULL, n + 0,
                            naive && online && ok && naive->verdict == SML_VERDICT_OK &&
                                online->verdict == SML_VERDICT_OK && ok->verdict == SML_VERDICT_OK,
                            what);
        sml_test_check_case(&T, &F, NULL, n + 1,
                            bad && bad->verdict == SML_VERDICT_WRONG &&
                                strstr(bad->check, "WRONG") && bad->timed,
                            "the corrupting kernel is WRONG, and still timed");
        sml_test_check_case(&T, &F, NULL, n + 2,
                            bad && bad->verdict == SML_VERDICT_WRONG && bad->check[0] &&
                                strstr(bad->check, "row ") && !strstr(bad->check, "row 0 "),
                            "the WRONG message points at the corrupted (last) row");
        sml_test_check_case(&T, &F, NULL, n + 3, lazy && lazy->verdict == SML_VERDICT_WRONG,
                            "a kernel that leaves rows unwritten is caught by the poisoned output");
        sml_test_check_case(&T, &F, NULL, n + 4,
                            naive && naive->timed && naive->m.t.n >= 10 && naive->m.t.median > 0 &&
                                isfinite(naive->gbps) && naive->gbps > 0,
                            "cpu_naive has >= 10 samples, a positive median and GB/s");
        double want_gbps = naive ? (double)k->bytes_moved / naive->m.t.median * 1e-9 : 0;
        sml_test_check_case(&T, &F, NULL, n + 5,
                            naive && fabs(naive->gbps - want_gbps) <= 1e-9 * want_gbps &&
                                k->bytes_moved == (size_t)k->rows * (size_t)k->cols *
                                                      sml_dtype_size(k->dtype) *
                                                      (sml_op_is_backward(k->op) ? 3 : 2),
                            "GB/s counts forward 2x, backward 3x the tensor bytes");
        sml_test_check_case(&T, &F, NULL, n + 6,
                            naive && fabs(naive->vs_naive - 1.0) < 1e-12 && online &&
                                fabs(online->vs_naive - naive->m.t.median / online->m.t.median) <
                                    1e-12,
                            "speedup vs naive = time(naive) / time(kernel)");
        sml_test_check_case(
            &T, &F, NULL, n + 7,
            naive && k->has_copy && isfinite(naive->frac_copy_kernel) &&
                fabs(naive->frac_copy_kernel - k->copy.t.median / naive->m.t.median) < 1e-12 &&
                isfinite(naive->frac_memcpy),
            "fractions of the copy references are present and consistent");
        sml_test_check_case(&T, &F, NULL, n + 8, k->seed != 0 && strncmp(k->cache, "host", 4) == 0,
                            "the case records its seed and cache state");
        /* The limit has the op's own traffic: forward it is the copy itself, backward a
         * separate two-read kernel moving 3x the tensor bytes. */
        int bwd = sml_op_is_backward(k->op);
        double lim_gbps =
            k->has_limit ? 3.0 * (double)k->tensor_bytes / k->limit.t.median * 1e-9 : 0;
        sml_test_check_case(
            &T, &F, NULL, n + 9,
            naive && k->has_limit && k->limit_reads == (bwd ? 2 : 1) &&
                isfinite(naive->frac_limit) &&
                fabs(naive->frac_limit - k->limit.t.median / naive->m.t.median) < 1e-12 &&
                (bwd ? fabs(k->limit_gbps - lim_gbps) <= 1e-9 * lim_gbps
                     : k->limit.t.median == k->copy.t.median && k->limit_gbps == k->copy_gbps),
            "the traffic-matched limit: the copy forward, 2 reads + 1 write backward, frac_limit = "
            "its time / time");
    }
    sml_ledger l;
    sml_test_check_case(&T, &F, NULL, 80, sml_ledger_build(&run, &l) == SML_OK,
                        "the ledger builds");
    const sml_ledger_record *rc = sml_ledger_find(&l, "planted_corrupt");
    const sml_ledger_record *rk = sml_ledger_find(&l, "planted_ok");
    const sml_ledger_record *rn = sml_ledger_find(&l, "cpu_naive");
    sml_test_check_case(
        &T, &F, NULL, 81,
        rc && rc->decision.status == SML_DECISION_REJECTED && rc->decision.wrong == 6,
        "the corrupting kernel is Rejected with 6 WRONG rows, though its claim is easy");
    sml_test_check_case(
        &T, &F, NULL, 82, rk && rk->decision.status == SML_DECISION_SUPPORTED,
        "the correct copy of cpu_naive meets its >= 0.5x planted_slow claim: Supported");
    sml_test_check_case(&T, &F, NULL, 83, rn && rn->decision.status == SML_DECISION_MEASURED,
                        "no claim: Measured");
    sml_test_check_case(&T, &F, NULL, 84, rc && rc->n == 6 && strstr(rc->reason, "WRONG"),
                        "a rejected kernel keeps its evidence and says why");
    /* The JSON ledger reads back, and compares with itself without a SLOW. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int wj = sml_ledger_write_json(&run, &l, f);
    fclose(f);
    sml_json *doc = NULL;
    s = sml_json_parse(buf, len, &doc, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 85, wj == 0 && s == SML_OK, "the ledger JSON is valid");
    if (s != SML_OK) printf("  %s\n", err);
    sml_cmp_report cr;
    s = sml_compare_docs(doc, doc, 0.03, &cr, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 86,
                        s == SML_OK && cr.n == 36 && !sml_cmp_failed(&cr) &&
                            cr.count[SML_CMP_SLOW] == 0,
                        "the ledger compares with itself: 36 rows, no SLOW");
    sml_cmp_report_free(&cr);
    const sml_json *recs = sml_json_get(doc, "records");
    int statuses = 0;
    for (size_t i = 0; i < sml_json_len(recs); i++) {
        const char *k = sml_json_str(sml_json_get(sml_json_at(recs, i), "kernel"));
        const char *st = sml_json_str(sml_json_get(sml_json_at(recs, i), "status"));
        if (k && st && !strcmp(k, "planted_corrupt") && !strcmp(st, "Rejected")) statuses++;
        if (k && st && !strcmp(k, "planted_ok") && !strcmp(st, "Supported")) statuses++;
    }
    sml_test_check_case(&T, &F, NULL, 87, statuses == 2, "the JSON records carry the statuses");
    /* Every timed row carries frac_limit, every row its case's limit and pattern. */
    int limit_rows = 0, rows = 0;
    for (size_t i = 0; i < sml_json_len(recs); i++) {
        const sml_json *ev = sml_json_get(sml_json_at(recs, i), "evidence");
        for (size_t j = 0; j < sml_json_len(ev); j++, rows++) {
            const sml_json *e = sml_json_at(ev, j);
            const char *op = sml_json_str(sml_json_get(e, "op")),
                       *pat = sml_json_str(sml_json_get(e, "limit_pattern"));
            int bwd = op && strstr(op, "_bwd") != NULL;
            if (sml_json_is_num(sml_json_get(e, "frac_limit")) &&
                sml_json_is_num(sml_json_get(e, "limit_ms")) &&
                sml_json_is_num(sml_json_get(e, "limit_gbps")) && pat &&
                !strcmp(pat, bwd ? "2 reads + 1 write" : "1 read + 1 write"))
                limit_rows++;
        }
    }
    sml_test_check_case(
        &T, &F, NULL, 89, rows == 36 && limit_rows == rows,
        "every JSON evidence row has frac_limit, limit_ms, limit_gbps and its pattern");
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    int wm = sml_ledger_write_md(&run, &l, f);
    fclose(f);
    sml_test_check_case(
        &T, &F, NULL, 88,
        wm == 0 &&
            strstr(buf, "| planted_corrupt | cpu | >= 0.50x cpu_naive (all) | **Rejected** |"),
        "the Markdown ledger has the decision row");
    sml_test_check_case(
        &T, &F, NULL, 90,
        wm == 0 && strstr(buf, "| of memcpy | of copy kernel | of limit |") &&
            strstr(buf, "| 2 reads + 1 write |") && strstr(buf, "| 1 read + 1 write |"),
        "the Markdown ledger has the of-limit column and each case's limit pattern");
    free(buf);
    sml_json_free(doc);
    sml_ledger_free(&l);
    sml_bench_run_free(&run);

    /* Row sampling for big cases: blocks in bounds, increasing, disjoint, first and last row
     * in, about the budget. */
    static const int64_t SHAPES[][3] = {{4096, 32768, 1 << 24},
                                        {128, 1048576, 1 << 24},
                                        {1024, 131072, 1 << 24},
                                        {1000, 7, 100},
                                        {65, 3, 10},
                                        {64, 3, 10},
                                        {4096, 1024, 1 << 24},
                                        {5, 5, 0}};
    for (int i = 0; i < 8; i++) {
        sml_rowset rs;
        int64_t rows = SHAPES[i][0], cols = SHAPES[i][1], max = SHAPES[i][2];
        sml_rowset_make(rows, cols, max, &rs);
        int ok = rs.nblocks >= 1 && rs.row0[0] == 0 &&
                 rs.row0[rs.nblocks - 1] + rs.nrows[rs.nblocks - 1] == rows;
        int64_t sum = 0;
        for (int b = 0; b < rs.nblocks; b++) {
            sum += rs.nrows[b];
            if (rs.nrows[b] < 1 || (b && rs.row0[b] < rs.row0[b - 1] + rs.nrows[b - 1])) ok = 0;
        }
        int full = max <= 0 || rows * cols <= max || rows <= SML_ROWSET_MAX_BLOCKS;
        ok &= sum == rs.total_rows &&
              (full ? rs.total_rows == rows
                    : rs.total_rows < rows &&
                          rs.total_rows * cols <= max + SML_ROWSET_MAX_BLOCKS * cols);
        char what[160];
        snprintf(what, sizeof what,
                 "rowset %lldx%lld budget %lld: %d blocks, %lld rows, first and last in, disjoint",
                 (long long)rows, (long long)cols, (long long)max, rs.nblocks,
                 (long long)rs.total_rows);
        sml_test_check_case(&T, &F, NULL, 100 + i, ok, what);
    }
    /* A sampled check still catches a corrupted last row and unwritten rows. */
    plan.shapes.n = 1;
    plan.shapes.shape[0] = (sml_sweep_shape){512, 64, 1u << SML_F32, 0};
    plan.ops = 1u << SML_SOFTMAX;
    cfg.check_max_elems = 4096;
    s = sml_bench_execute(&plan, &cfg, NULL, NULL, &run, err, sizeof err);
    const sml_bench_result *sb = s == SML_OK ? sml_bench_find(&run, 0, "planted_corrupt") : NULL;
    const sml_bench_result *sl = s == SML_OK ? sml_bench_find(&run, 0, "planted_lazy") : NULL;
    const sml_bench_result *sn = s == SML_OK ? sml_bench_find(&run, 0, "cpu_naive") : NULL;
    sml_test_check_case(&T, &F, NULL, 110, s == SML_OK && run.cases[0].checked_rows == 64,
                        "512x64 with a 4096-element budget checks 64 rows");
    sml_test_check_case(&T, &F, NULL, 111,
                        sb && sb->verdict == SML_VERDICT_WRONG &&
                            strstr(sb->check, "rows sampled: 64 of 512"),
                        "the sampled check catches the corrupted last row and says it sampled");
    sml_test_check_case(&T, &F, NULL, 112, sl && sl->verdict == SML_VERDICT_WRONG,
                        "the sampled check catches unwritten rows");
    sml_test_check_case(&T, &F, NULL, 113, sn && sn->verdict == SML_VERDICT_OK,
                        "cpu_naive passes the sampled check");
    if (s == SML_OK) sml_bench_run_free(&run);

    /* A 1 ms limit, past before the first case (the copy bandwidth alone takes 0.2 s), which
     * runs anyway: one of the six cases runs, the ledger says it is partial, and planted_ok,
     * Supported on the full run above, is only Caveated. */
    plan.shapes.n = 2;
    plan.shapes.shape[0] = (sml_sweep_shape){16, 256, 1u << SML_F32, 0};
    plan.shapes.shape[1] = (sml_sweep_shape){4, 2048, (1u << SML_F16) | (1u << SML_BF16), 0};
    plan.ops = (1u << SML_SOFTMAX) | (1u << SML_SOFTMAX_BWD);
    cfg.check_max_elems = (int64_t)1 << 24;
    cfg.time_limit_s = 1e-3;
    s = sml_bench_execute(&plan, &cfg, NULL, NULL, &run, err, sizeof err);
    sml_test_check_case(
        &T, &F, NULL, 120,
        s == SML_OK && run.ncases == 1 && run.ncases_planned == 6 && sml_bench_partial(&run) &&
            run.nresults == 6,
        "a 1 ms time limit: the first case runs (whole: 6 results), the other 5 do not");
    if (s == SML_OK) {
        sml_ledger lp;
        sml_test_check_case(&T, &F, NULL, 121, sml_ledger_build(&run, &lp) == SML_OK,
                            "the partial ledger builds");
        const sml_ledger_record *pk = sml_ledger_find(&lp, "planted_ok");
        const sml_ledger_record *pc = sml_ledger_find(&lp, "planted_corrupt");
        sml_test_check_case(&T, &F, NULL, 122,
                            pk && pk->decision.status == SML_DECISION_CAVEATED &&
                                pk->decision.meets == pk->decision.counted &&
                                strstr(pk->reason, "Meets it on all 1 shapes measured") &&
                                strstr(pk->reason, "Partial run") &&
                                strstr(pk->reason, "1 of 6 cases"),
                            "a kernel meeting its claim on every case measured is Caveated on a "
                            "partial run, and says why");
        sml_test_check_case(&T, &F, NULL, 123, pc && pc->decision.status == SML_DECISION_REJECTED,
                            "a kernel that misses its claim is still Rejected on a partial run");
        const sml_ledger_record *pn = sml_ledger_find(&lp, "cpu_naive");
        sml_test_check_case(&T, &F, NULL, 126, pn && pn->decision.status == SML_DECISION_MEASURED,
                            "a kernel with no claim stays Measured");
        buf = NULL;
        f = open_memstream(&buf, &len);
        wj = sml_ledger_write_json(&run, &lp, f);
        fclose(f);
        doc = NULL;
        s = sml_json_parse(buf, len, &doc, err, sizeof err);
        const sml_json *part = s == SML_OK ? sml_json_get(doc, "partial") : NULL;
        sml_test_check_case(
            &T, &F, NULL, 124,
            wj == 0 && part && sml_json_num(sml_json_get(part, "cases_measured"), -1) == 1 &&
                sml_json_num(sml_json_get(part, "cases_planned"), -1) == 6 &&
                sml_json_num(sml_json_get(part, "time_limit_s"), -1) == 1e-3 &&
                sml_json_num(sml_json_get(sml_json_get(doc, "config"), "time_limit_s"), -1) == 1e-3,
            "the JSON ledger's partial block: 1 of 6 cases, the limit there and in config");
        sml_json_free(doc);
        free(buf);
        buf = NULL;
        f = open_memstream(&buf, &len);
        wm = sml_ledger_write_md(&run, &lp, f);
        fclose(f);
        sml_test_check_case(&T, &F, NULL, 125,
                            wm == 0 && strstr(buf, "**Partial run:**") &&
                                strstr(buf, "after 1 of 6 cases"),
                            "the Markdown ledger says the run is partial");
        free(buf);
        sml_ledger_free(&lp);
        sml_bench_run_free(&run);
    }
    /* A limit the run never reaches changes nothing: every case, Supported kept. */
    cfg.time_limit_s = 1e6;
    s = sml_bench_execute(&plan, &cfg, NULL, NULL, &run, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 127,
                        s == SML_OK && run.ncases == 6 && run.ncases_planned == 6 &&
                            !sml_bench_partial(&run),
                        "a limit never reached: all 6 cases, not partial");
    if (s == SML_OK) {
        sml_ledger lc;
        const int built = sml_ledger_build(&run, &lc) == SML_OK;
        const sml_ledger_record *ck = built ? sml_ledger_find(&lc, "planted_ok") : NULL;
        sml_test_check_case(&T, &F, NULL, 128,
                            ck && ck->decision.status == SML_DECISION_SUPPORTED &&
                                !strstr(ck->reason, "Partial"),
                            "planted_ok stays Supported, with no partial note");
        if (built) sml_ledger_free(&lc);
        sml_bench_run_free(&run);
    }
    return sml_tally_finish(&T);
}
