/* test_targets.c: the targets T1-T6 (src/analysis/targets.c) and `softmax-lab targets` on the
 * hand-written ledger tests/perf/fixtures/targets_ledger.json, whose `auto` rows sit exactly on
 * and just off each threshold:
 *   - T1: 2^26 bytes at frac_memcpy 0.9 (in, met), 2^26 - 1 and 65,000,000 bytes at 0.5 (out:
 *     the floor is 64 MiB, not 64e6), 0.8999999 (miss);
 *   - T2: 128x1048576 at 0.9 (met), 1024x131072 at 0.89 (miss);
 *   - a WRONG row whose numbers are all good (misses T1, T3 and T4);
 *   - T3: vs_cudnn 1.2 (met) and 1.1999999 (miss); T4: vs_best_other 0.97 = 1 - margin (met),
 *     0.9699999 (miss), 1.0 (met, at parity);
 *   - T5: frac_copy_kernel 1/1.3 at 128 cols (met), 0.7692307 at 512 (miss), 0.5 at 127 and 513
 *     (out of the range);
 *   - T6: `auto` is Caveated (missed), `split` is Supported and meets everything;
 *   - auto_path (the kernel auto ran) on three rows: the T4 miss at 0.9699999 ran `block`, its
 *     best other; the WRONG row ran `block` against `split`; a met row ran its best other.
 * The counts and the missed rows, in order, are asserted; malformed inputs are refused with the
 * bad field named, and the CLI exits 2 on them and writes no output file.
 * Planted checks (each applied to src/analysis/targets.c or .h, rebuilt, this test run, reverted):
 *   - `>` instead of `>=` in sml_tgt_met: cases 2, 3, 4, 5, 6 and 21 fail (every on-threshold row
 *     becomes a miss: T1 0 of 5, T2 0 of 2, T3 14 of 17, T4 14 of 17, T5 1 of 3);
 *   - T1's floor 64e6 bytes instead of 2^26: cases 2, 10 and 21 fail (T1 counts 7 rows: the
 *     65,000,000- and 67,108,863-byte rows come in);
 *   - T5's range `cols < 512` instead of `<= 512`: cases 6 and 11 fail (T5 2 of 2: the row at 512
 *     leaves the set);
 *   - the check ignored (a WRONG row can meet): cases 2, 4, 5 and 21 fail;
 *   - T4's threshold 1.0 instead of 1 - margin: cases 5 and 13 fail (T4 14 of 17);
 *   - own-kernel misses counted on met rows too, or without comparing the row's
 *     auto_path with its best other: cases 25 and 26 fail (2 instead of 1).
 * The field and limit targets on tests/perf/fixtures/targets_field.json (described above
 * on_the_field_fixture), with these planted checks:
 *   - a framework row that failed its own check skipped as a baseline: cases 53, 54, 55 fail;
 *   - every row taken as having a limit: cases 9, 22, 28, 52, 54, 59 fail;
 *   - a target with rows NOT MEASURED called met: cases 9, 22, 28 fail;
 *   - `>` instead of `>=`: cases 51, 52, 53, 62 fail (with the T1-T5 cases above);
 *   - a kernel that is no framework baseline (split) taken as one: cases 50, 51, 54, 55, 62 fail;
 *   - the baselines' list matched by substring: case 64 fails (triton is left out);
 *   - a kernel timed unheld ignored (sml_tgt_undecided returning 0, or `held` not read): cases
 *     91, 92 and 93 fail (the row against an unheld Triton counts as met); T4 alone ignoring
 *     it: 91, 92; T3 alone: 93.
 * Values that would meet a target they do not (cases 100-104), each failing on the reader that
 * took them: median_ms "nan", frac_memcpy "inf", a cell's row twice, decision_margin 0.9, and
 * schema softmax-lab-ledger/3.
 * The framework baselines from the records (cases 110-114): in a version 2 ledger the records
 * with "framework": true whatever their names (a record named torch saying false is none, one
 * named my_fw saying true is one), a record without the field or with a non-boolean one
 * refused naming it; in a version 1 ledger the names of the compatibility table decide. Each
 * fails on the reader that took the names in every version (cases 110, 111 and 112), or that
 * took the field in version 1 too (113). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json_read.h"
#include "analysis/targets.h"
#include "bench/ledger.h"
#include "case_filter.h"
#include "cli_run.h"
#include "test_support.h"

static sml_tally T = {"test_targets", 0, 0, 0};
static sml_case_filter F;
static char TMP[256];
static char LOG[1 << 16];

static void fixture(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", F.fixtures, name);
}

/* "op dtype RxC" of each missed row, in order, joined by "; ". */
static void misses(const sml_tgt_report *r, sml_target_id id, char *buf, size_t n) {
    buf[0] = 0;
    for (size_t k = 0; k < r->t[id].nmiss; k++) {
        const sml_tgt_row *x = &r->rows[r->t[id].miss[k]];
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s %s %lldx%lld", k ? "; " : "", x->op, x->dtype,
                 (long long)x->rows, (long long)x->cols);
    }
}

static void expect_target(int n, const sml_tgt_report *r, sml_target_id id, int counted, int met,
                          const char *want_misses) {
    if (!sml_case_filter_want(&F, n)) return;
    char got[1024];
    misses(r, id, got, sizeof got);
    const sml_tgt_result *t = &r->t[id];
    if (t->counted == counted && t->met == met && !strcmp(got, want_misses))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro,
                       "case %d: %s: %d of %d rows, misses [%s]; want %d of %d, misses [%s]", n,
                       t->name, t->met, t->counted, got, met, counted, want_misses);
}

static void rules_alone(void) {
    sml_tgt_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.check, sizeof r.check, "ok");
    r.bytes = SML_TGT_BIG_BYTES;
    int big = sml_tgt_in(SML_TGT_BANDWIDTH, &r);
    r.bytes = SML_TGT_BIG_BYTES - 1;
    sml_test_check_case(&T, &F, NULL, 10,
                        big && !sml_tgt_in(SML_TGT_BANDWIDTH, &r) && SML_TGT_BIG_BYTES == 67108864,
                        "T1 takes rows of 2^26 bytes and more, not 2^26 - 1");
    int in = 1;
    const int64_t cols[] = {127, 128, 512, 513};
    for (int i = 0; i < 4; i++) {
        r.cols = cols[i];
        in = in && sml_tgt_in(SML_TGT_SHORT, &r) == (i == 1 || i == 2);
    }
    sml_test_check_case(&T, &F, NULL, 11, in,
                        "T5 takes 128 to 512 columns, both ends, and not 127 or 513");
    r.rows = 1024;
    r.cols = 131072;
    int l1 = sml_tgt_in(SML_TGT_LONG, &r);
    r.rows = 128;
    r.cols = 1048576;
    int l2 = sml_tgt_in(SML_TGT_LONG, &r);
    r.cols = 131072;
    sml_test_check_case(&T, &F, NULL, 12, l1 && l2 && !sml_tgt_in(SML_TGT_LONG, &r),
                        "T2 is exactly 1024x131072 and 128x1048576");
    sml_test_check_case(&T, &F, NULL, 13,
                        sml_tgt_threshold(SML_TGT_BEST, 0.05) == 0.95 &&
                            sml_tgt_threshold(SML_TGT_CUDNN, 0.05) == 1.2 &&
                            sml_tgt_threshold(SML_TGT_BANDWIDTH, 0) == 0.9 &&
                            fabs(sml_tgt_threshold(SML_TGT_SHORT, 0) * 1.3 - 1) < 1e-15,
                        "thresholds: 1 - margin, 1.20, 0.90, 1/1.3");
    r.vs_cudnn = NAN;
    sml_test_check_case(&T, &F, NULL, 14,
                        !sml_tgt_met(SML_TGT_CUDNN, &r, 0.03) && sml_tgt_status_met("Supported") &&
                            !sml_tgt_status_met("Caveated") && !sml_tgt_status_met(NULL),
                        "a missing metric never meets; only Supported meets T6");
}

static void on_the_fixture(void) {
    char path[600], err[512] = "";
    sml_tgt_report r;
    fixture(path, sizeof path, "targets_ledger.json");
    sml_status s = sml_targets_file(path, "auto", &r, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 1,
                        s == SML_OK && r.n == 17 && r.margin == 0.03 &&
                            !strcmp(r.status, "Caveated"),
                        "the fixture reads: 17 rows of auto, margin 0.03, Caveated");
    if (s != SML_OK) {
        printf("  %s\n", err);
        return;
    }
    expect_target(
        2, &r, SML_TGT_BANDWIDTH, 5, 2,
        "softmax_bwd fp16 4096x8192; softmax bf16 1024x131072; log_softmax fp32 4096x8192");
    expect_target(3, &r, SML_TGT_LONG, 2, 1, "softmax bf16 1024x131072");
    expect_target(4, &r, SML_TGT_CUDNN, 17, 15,
                  "softmax_bwd fp16 4096x8192; log_softmax bf16 4096x1024");
    expect_target(5, &r, SML_TGT_BEST, 17, 15,
                  "softmax_bwd fp16 4096x8192; softmax_bwd bf16 4096x1024");
    expect_target(6, &r, SML_TGT_SHORT, 3, 2, "softmax fp16 32768x512");
    sml_test_check_case(&T, &F, NULL, 7,
                        r.t[SML_TGT_STATE].counted == 1 && r.t[SML_TGT_STATE].met == 0 &&
                            !sml_tgt_all_met(&r),
                        "T6: Caveated misses, so not every target is met");
    sml_test_check_case(&T, &F, NULL, 8, r.t[SML_TGT_BEST].at_parity == 14,
                        "T4: 14 ok rows at vs_best_other >= 1.00");
    sml_test_check_case(&T, &F, NULL, 25, r.t[SML_TGT_BEST].own_kernel == 1,
                        "T4: 1 miss against the kernel auto ran (the WRONG row's best other is not "
                        "its path, and the "
                        "met row whose best other is its path does not count)");
    sml_tgt_report_free(&r);

    s = sml_targets_file(path, "split", &r, err, sizeof err);
    int older_met = 1;
    for (int id = 0; id <= SML_TGT_STATE; id++) older_met &= r.t[id].state == SML_TGT_MET;
    sml_test_check_case(&T, &F, NULL, 9,
                        s == SML_OK && older_met && r.t[SML_TGT_BANDWIDTH].counted == 1 &&
                            r.t[SML_TGT_SHORT].counted == 0 && r.t[SML_TGT_STATE].met == 1 &&
                            r.t[SML_TGT_VS_FIELD].state == SML_TGT_NOT_MEASURED &&
                            r.t[SML_TGT_AT_LIMIT].state == SML_TGT_NOT_MEASURED &&
                            !sml_tgt_all_met(&r) && !sml_tgt_any_missed(&r),
                        "--kernel split: one long row, Supported, T1-T6 met; this ledger has no "
                        "framework baseline and no "
                        "limit, so those targets are NOT MEASURED and not every target is met");
    sml_tgt_report_free(&r);
}

/* tests/perf/fixtures/targets_field.json: `auto` beside fake torch, liger and cudnn records (and
 * `split`, faster than all of them on one cell but no framework baseline):
 *   - vs-field (>= 64 MiB): 4096x4096 at exactly 1.00x torch (met), softmax_bwd bf16 at 0.93x
 *     liger (miss; torch and cudnn slower there), 32768x512 with no framework row (NOT MEASURED),
 *     a WRONG row 50x faster than torch (miss), 8192x8192 at 1.1x torch (met);
 *   - at-limit: frac_limit 0.97 (met), 0.9699999 (miss), 0.98 (met), the WRONG row at 1.5
 *     (miss), 8192x8192 without a limit in the ledger (NOT MEASURED); 2^26 - 1 bytes at 0.5 (out);
 *   - short-vs-field (< 64 MiB): 2^26 - 1 bytes at 1.00x torch (met), 4096x1024 at 0.99x torch
 *     (miss: liger's WRONG row there is slower), 256x256 where torch is ERROR (untimed) and liger
 *     WRONG at half auto's time: a baseline's failed check still sets the time to beat (miss). */
static void on_the_field_fixture(void) {
    char path[600], err[512] = "";
    sml_tgt_report r;
    fixture(path, sizeof path, "targets_field.json");
    sml_status s = sml_targets_file(path, "auto", &r, err, sizeof err);
    sml_test_check_case(
        &T, &F, NULL, 50, s == SML_OK && r.n == 8 && !strcmp(r.field, "torch, liger, cudnn"),
        "the field fixture reads: 8 rows of auto; baselines torch, liger, cudnn (split is none)");
    if (s != SML_OK) {
        printf("  %s\n", err);
        return;
    }
    expect_target(51, &r, SML_TGT_VS_FIELD, 4, 2,
                  "log_softmax_bwd fp32 4096x8192; softmax_bwd bf16 4096x32768");
    expect_target(52, &r, SML_TGT_AT_LIMIT, 4, 2,
                  "log_softmax_bwd fp32 4096x8192; softmax_bwd bf16 4096x32768");
    expect_target(53, &r, SML_TGT_SHORT_FIELD, 3, 1,
                  "softmax fp32 256x256; softmax fp16 4096x1024");
    sml_test_check_case(&T, &F, NULL, 54,
                        r.t[SML_TGT_VS_FIELD].not_measured == 1 &&
                            r.t[SML_TGT_AT_LIMIT].not_measured == 1 &&
                            r.t[SML_TGT_SHORT_FIELD].not_measured == 0 &&
                            r.t[SML_TGT_VS_FIELD].state == SML_TGT_MISSED &&
                            r.t[SML_TGT_AT_LIMIT].state == SML_TGT_MISSED && sml_tgt_any_missed(&r),
                        "one row each of vs-field and at-limit NOT MEASURED; both missed");
    const sml_tgt_row *bwd = &r.rows[1], *tiny = &r.rows[6];
    sml_test_check_case(&T, &F, NULL, 55,
                        !strcmp(bwd->field, "liger") && fabs(bwd->vs_field - 0.93) < 1e-12 &&
                            !strcmp(tiny->field, "liger") && fabs(tiny->vs_field - 0.5) < 1e-12 &&
                            r.rows[4].field[0] == 0,
                        "each row against the fastest baseline on its cell: liger 0.93x; a WRONG "
                        "liger sets the time to beat");
    sml_tgt_report_free(&r);
    s = sml_targets_file(path, "split", &r, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 56,
                        s == SML_OK && sml_tgt_all_met(&r) && r.t[SML_TGT_VS_FIELD].met == 1 &&
                            r.t[SML_TGT_SHORT_FIELD].met == 1 && r.t[SML_TGT_AT_LIMIT].met == 1,
                        "--kernel split: every target met, the field and limit ones included");
    if (s == SML_OK) sml_tgt_report_free(&r);
}

static void field_rules_alone(void) {
    sml_tgt_row r;
    memset(&r, 0, sizeof r);
    r.bytes = SML_TGT_BIG_BYTES;
    int big = sml_tgt_in(SML_TGT_VS_FIELD, &r) && sml_tgt_in(SML_TGT_AT_LIMIT, &r) &&
              !sml_tgt_in(SML_TGT_SHORT_FIELD, &r);
    r.bytes = SML_TGT_BIG_BYTES - 1;
    int small = !sml_tgt_in(SML_TGT_VS_FIELD, &r) && !sml_tgt_in(SML_TGT_AT_LIMIT, &r) &&
                sml_tgt_in(SML_TGT_SHORT_FIELD, &r);
    sml_test_check_case(&T, &F, NULL, 57, big && small,
                        "vs-field and at-limit take 2^26 bytes and more, short-vs-field the rest");
    sml_test_check_case(&T, &F, NULL, 58,
                        sml_tgt_threshold(SML_TGT_VS_FIELD, 0.05) == 1.0 &&
                            sml_tgt_threshold(SML_TGT_SHORT_FIELD, 0.05) == 1.0 &&
                            sml_tgt_threshold(SML_TGT_AT_LIMIT, 0.05) == 0.97,
                        "thresholds: 1.00x the field whatever the margin, 0.97 of the limit");
    snprintf(r.check, sizeof r.check, "ok");
    r.vs_field = r.frac_limit = 2;
    int unmeasured =
        !sml_tgt_met(SML_TGT_SHORT_FIELD, &r, 0.03) && !sml_tgt_measured(SML_TGT_SHORT_FIELD, &r);
    r.bytes = SML_TGT_BIG_BYTES;
    unmeasured = unmeasured && !sml_tgt_met(SML_TGT_AT_LIMIT, &r, 0.03);
    snprintf(r.field, sizeof r.field, "torch");
    r.has_limit = 1;
    sml_test_check_case(&T, &F, NULL, 59,
                        unmeasured && sml_tgt_met(SML_TGT_VS_FIELD, &r, 0.03) &&
                            sml_tgt_met(SML_TGT_AT_LIMIT, &r, 0.03) &&
                            sml_ledger_v1_framework("triton_online") &&
                            sml_ledger_v1_framework("cudnn") && !sml_ledger_v1_framework("split") &&
                            !sml_ledger_v1_framework("torchx"),
                        "a row with no baseline or no limit never meets; a version 1 ledger's "
                        "field is torch, triton(_online), "
                        "liger, cudnn");
}

/* A framework row with a zero time is refused with its field named. */
static void bad_field_row(int n) {
    if (!sml_case_filter_want(&F, n)) return;
    const char *doc =
        "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": 0.03}, "
        "\"records\": ["
        "{\"kernel\": \"auto\", \"status\": \"Measured\", \"evidence\": []},"
        "{\"kernel\": \"liger\", \"status\": \"Measured\", \"evidence\": [{\"op\": \"softmax\", "
        "\"dtype\": \"fp32\", \"rows\": 1, \"cols\": 1, \"median_ms\": 0}]}]}";
    sml_json *j = NULL;
    sml_tgt_report r;
    char err[512] = "";
    int parsed = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK;
    sml_status s = parsed ? sml_targets_doc(j, "auto", &r, err, sizeof err) : SML_ERR_IO;
    sml_json_free(j);
    sml_test_check_case(&T, &F, NULL, n,
                        parsed && s == SML_ERR_FORMAT &&
                            strstr(err, "records[1].evidence[0]: 'median_ms' not > 0"),
                        "a framework row timed at 0 ms is refused, naming the field");
    if (!(s == SML_ERR_FORMAT)) printf("  %s\n", err);
}

/* The baselines are listed once each, by whole name. */
static void field_names(int n) {
    if (!sml_case_filter_want(&F, n)) return;
    const char *doc = "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": "
                      "0.03}, \"records\": ["
                      "{\"kernel\": \"triton_online\", \"status\": \"Measured\", \"evidence\": []},"
                      "{\"kernel\": \"triton\", \"status\": \"Measured\", \"evidence\": []},"
                      "{\"kernel\": \"triton\", \"status\": \"Measured\", \"evidence\": []},"
                      "{\"kernel\": \"auto\", \"status\": \"Measured\", \"evidence\": []}]}";
    sml_json *j = NULL;
    sml_tgt_report r;
    char err[512] = "";
    int ok = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK &&
             sml_targets_doc(j, "auto", &r, err, sizeof err) == SML_OK;
    sml_test_check_case(
        &T, &F, NULL, n,
        ok && !strcmp(r.field, "triton_online, triton") &&
            r.t[SML_TGT_VS_FIELD].state == SML_TGT_NOT_MEASURED,
        "baselines listed once by whole name (triton beside triton_online); no row: NOT MEASURED");
    if (ok) {
        if (strcmp(r.field, "triton_online, triton")) printf("  field: '%s'\n", r.field);
        sml_tgt_report_free(&r);
    }
    sml_json_free(j);
}

/* A ledger document refused by sml_targets_doc with SML_ERR_FORMAT and a message naming the
 * field (mention). */
static void doc_refused(int n, const char *doc, const char *mention, const char *what) {
    if (!sml_case_filter_want(&F, n)) return;
    sml_json *j = NULL;
    sml_tgt_report r;
    char err[512] = "";
    int parsed = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK;
    sml_status s = parsed ? sml_targets_doc(j, "auto", &r, err, sizeof err) : SML_ERR_IO;
    if (parsed && s == SML_OK) sml_tgt_report_free(&r);
    sml_json_free(j);
    sml_test_check_case(&T, &F, NULL, n, parsed && s == SML_ERR_FORMAT && strstr(err, mention),
                        what);
    if (!(parsed && s == SML_ERR_FORMAT && strstr(err, mention)))
        printf("  status %s: '%s'\n", sml_strerror(s), err);
}

/* What would make a target met that was not: a time of "nan", a fraction of "inf", a cell
 * counted twice, a margin that is a discount, a ledger version this build does not know. */
static void refused_values(void) {
    static const char *const HEAD =
        "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": 0.03}, ";
    static const char *const ROW =
        "{\"op\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 128, \"cols\": 1048576, "
        "\"bytes_moved\": 1073741824, \"check\": \"ok\", \"gbps\": 1700, "
        "\"frac_copy_kernel\": 0.9, \"vs_cudnn\": 1.3, \"vs_best_other\": 1.0, ";
    char doc[2048];
    snprintf(doc, sizeof doc,
             "%s\"records\": [{\"kernel\": \"auto\", \"status\": \"Supported\", \"evidence\": "
             "[%s\"frac_memcpy\": 0.9, \"median_ms\": \"nan\"}]}]}",
             HEAD, ROW);
    doc_refused(100, doc, "records[0].evidence[0]: 'median_ms'",
                "median_ms \"nan\" is refused, naming the field");
    snprintf(doc, sizeof doc,
             "%s\"records\": [{\"kernel\": \"auto\", \"status\": \"Supported\", \"evidence\": "
             "[%s\"frac_memcpy\": \"inf\", \"median_ms\": 1}]}]}",
             HEAD, ROW);
    doc_refused(101, doc, "records[0].evidence[0]: 'frac_memcpy'",
                "frac_memcpy \"inf\" is refused, naming the field");
    snprintf(
        doc, sizeof doc,
        "%s\"records\": [{\"kernel\": \"auto\", \"status\": \"Supported\", \"evidence\": "
        "[%s\"frac_memcpy\": 0.9, \"median_ms\": 1}, %s\"frac_memcpy\": 0.9, \"median_ms\": 1}]}]}",
        HEAD, ROW, ROW);
    doc_refused(102, doc, "records[0].evidence[1]: a second row for softmax fp32 128x1048576",
                "an evidence row for the same cell twice is refused");
    doc_refused(103,
                "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": 0.9}, "
                "\"records\": []}",
                "decision_margin", "a decision margin of 0.9 (a discount, not noise) is refused");
    doc_refused(104,
                "{\"schema\": \"softmax-lab-ledger/3\", \"config\": {\"decision_margin\": 0.03}, "
                "\"records\": []}",
                "this build reads softmax-lab-ledger/1 and softmax-lab-ledger/2",
                "a ledger schema version this build does not know is refused");
}

static void refused(int n, const char *file, const char *kernel, sml_status want,
                    const char *mention) {
    if (!sml_case_filter_want(&F, n)) return;
    char path[600], err[512] = "";
    sml_tgt_report r;
    fixture(path, sizeof path, file);
    sml_status s = sml_targets_file(path, kernel, &r, err, sizeof err);
    sml_tgt_report_free(&r);
    if (s == want && strstr(err, mention))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s: status %s, message '%s'; want %s mentioning '%s'",
                       n, file, sml_strerror(s), err, sml_strerror(want), mention);
}

/* A row that is not ok needs no metrics (the bench leaves them out when it could not time it). */
static void untimed_row(int n) {
    if (!sml_case_filter_want(&F, n)) return;
    const char *doc =
        "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": 0.03}, "
        "\"records\": ["
        "{\"kernel\": \"auto\", \"status\": \"Rejected\", \"evidence\": [{\"op\": \"softmax\", "
        "\"dtype\": \"fp32\", \"rows\": 128, \"cols\": 1048576, \"bytes_moved\": 1073741824, "
        "\"check\": \"ERROR\", \"vs_cudnn\": null}]}]}";
    sml_json *j = NULL;
    sml_tgt_report r;
    char err[512] = "";
    int ok = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK &&
             sml_targets_doc(j, "auto", &r, err, sizeof err) == SML_OK;
    ok = ok && r.t[SML_TGT_BANDWIDTH].counted == 1 && r.t[SML_TGT_BANDWIDTH].met == 0 &&
         r.t[SML_TGT_LONG].nmiss == 1 && r.t[SML_TGT_CUDNN].nmiss == 1;
    if (j) sml_tgt_report_free(&r);
    sml_json_free(j);
    sml_test_check_case(&T, &F, NULL, n, ok,
                        "an untimed ERROR row reads without metrics and misses T1, T2, T3");
    if (!ok) printf("  %s\n", err);
}

/* Counts out of any plausible range read as absent: 1e300 was cast to int64_t (undefined;
 * INT64_MIN on x86). */
static void huge_counts(int n) {
    if (!sml_case_filter_want(&F, n)) return;
    const char *doc =
        "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": 0.03}, "
        "\"partial\": {\"cases_measured\": 1e300, \"cases_planned\": -1e300}, \"records\": ["
        "{\"kernel\": \"auto\", \"status\": \"Rejected\", \"evidence\": []}]}";
    sml_json *j = NULL;
    sml_tgt_report r;
    char err[512] = "";
    int ok = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK &&
             sml_targets_doc(j, "auto", &r, err, sizeof err) == SML_OK;
    if (ok) {
        ok = r.cases_measured == 0 && r.cases_planned == 0;
        if (!ok)
            printf("  cases_measured %lld, cases_planned %lld\n", (long long)r.cases_measured,
                   (long long)r.cases_planned);
        sml_tgt_report_free(&r);
    } else {
        printf("  %s\n", err);
    }
    sml_json_free(j);
    sml_test_check_case(
        &T, &F, NULL, n, ok,
        "partial counts of 1e300 and -1e300 read as absent, not as a cast out of range");
}

/* A framework baseline timed without the launch hold (`held`: 0): a row faster than the field
 * there is not decided (the unheld time may be the host's launch calls), a row slower is still a
 * miss, and `held` outside 0 and 1 is refused with the field named. The figures are those of an
 * H100 ledger where Triton and PyTorch lost their hold on one cell each. */
static void unheld_doc(char *doc, size_t n, const char *triton_held, const char *cudnn_held) {
    static const char *const ROW =
        "\"check\": \"ok\", \"gbps\": 1700, \"frac_memcpy\": 0.5, \"frac_copy_kernel\": 0.9, "
        "\"vs_cudnn\": 1.25, \"vs_best_other\": 1.0, \"frac_limit\": 0.9, \"limit_gbps\": 1800";
    snprintf(doc, n,
             "{\"schema\": \"softmax-lab-ledger/1\", \"config\": {\"decision_margin\": 0.03}, "
             "\"records\": ["
             "{\"kernel\": \"auto\", \"status\": \"Supported\", \"evidence\": ["
             "{\"op\": \"log_softmax_bwd\", \"dtype\": \"fp16\", \"rows\": 16384, \"cols\": 128, "
             "\"bytes_moved\": 12582912, \"median_ms\": 0.00734, %s},"
             "{\"op\": \"log_softmax\", \"dtype\": \"fp32\", \"rows\": 16384, \"cols\": 128, "
             "\"bytes_moved\": 16777216, \"median_ms\": 0.00886, %s}]},"
             "{\"kernel\": \"triton\", \"status\": \"Measured\", \"evidence\": [{\"op\": "
             "\"log_softmax_bwd\", "
             "\"dtype\": \"fp16\", \"rows\": 16384, \"cols\": 128, \"median_ms\": 0.06073, "
             "\"held\": %s}]},"
             "{\"kernel\": \"torch\", \"status\": \"Measured\", \"evidence\": [{\"op\": "
             "\"log_softmax\", "
             "\"dtype\": \"fp32\", \"rows\": 16384, \"cols\": 128, \"median_ms\": 0.03534, "
             "\"held\": 0}]},"
             "{\"kernel\": \"warp\", \"status\": \"Caveated\", \"evidence\": [{\"op\": "
             "\"log_softmax_bwd\", "
             "\"dtype\": \"fp16\", \"rows\": 16384, \"cols\": 128, \"median_ms\": 0.00734, "
             "\"held\": 1}]},"
             "{\"kernel\": \"cudnn\", \"status\": \"Measured\", \"evidence\": ["
             "{\"op\": \"log_softmax_bwd\", \"dtype\": \"fp16\", \"rows\": 16384, \"cols\": 128, "
             "\"median_ms\": 0.00826, \"held\": %s},"
             "{\"op\": \"log_softmax\", \"dtype\": \"fp32\", \"rows\": 16384, \"cols\": 128, "
             "\"median_ms\": 0.00872}]}]}",
             ROW, ROW, triton_held, cudnn_held);
}

/* Kernels timed without the launch hold (`held`: 0). The figures are those of an H100 ledger
 * where Triton and PyTorch lost their hold on one cell each:
 *   n      triton unheld on row 0, torch on row 1: short-vs-field row 0 (1.13x cuDNN) not
 *          decided, row 1 (0.98x cuDNN) still a miss; T4 (vs_best_other 1.0) not decided on
 *          both rows; T3 met on both (cuDNN held);
 *   n + 1  triton held (cuDNN's `held` absent on row 1, as in ledgers before the hold): row 0
 *          meets short-vs-field; T4 row 1 still not decided (torch);
 *   n + 2  cuDNN unheld on row 0: T3 not decided there;
 *   n + 3  a `held` of 2 is refused with the field named. */
static void unheld_baseline(int n) {
    const char *triton[4] = {"0", "1", "1", "2"}, *cudnn[4] = {"1", "1", "0", "1"};
    for (int v = 0; v < 4; v++) {
        if (!sml_case_filter_want(&F, n + v)) continue;
        char doc[4096], err[512] = "";
        unheld_doc(doc, sizeof doc, triton[v], cudnn[v]);
        sml_json *j = NULL;
        sml_tgt_report r;
        sml_status s = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK
                           ? sml_targets_doc(j, "auto", &r, err, sizeof err)
                           : SML_ERR_IO;
        sml_json_free(j);
        if (v == 3) {
            sml_test_check_case(&T, &F, NULL, n + 3,
                                s == SML_ERR_FORMAT &&
                                    strstr(err, "records[1].evidence[0]: 'held' not 0 or 1"),
                                "a baseline's 'held' of 2 is refused, naming the field");
            if (s == SML_OK) sml_tgt_report_free(&r);
            continue;
        }
        if (s != SML_OK) {
            sml_test_check_case(&T, &F, NULL, n + v, 0, err);
            continue;
        }
        const sml_tgt_result *sf = &r.t[SML_TGT_SHORT_FIELD], *t4 = &r.t[SML_TGT_BEST],
                             *t3 = &r.t[SML_TGT_CUDNN];
        char got[256];
        misses(&r, SML_TGT_SHORT_FIELD, got, sizeof got);
        const int row1_missed = !strcmp(got, "log_softmax fp32 16384x128");
        if (v == 0)
            sml_test_check_case(
                &T, &F, NULL, n,
                sf->counted == 1 && sf->met == 0 && sf->nundecided == 1 && sf->undecided[0] == 0 &&
                    row1_missed && !strcmp(r.rows[0].field_unheld, "triton") &&
                    !strcmp(r.rows[1].field_unheld, "torch") && sf->state == SML_TGT_MISSED &&
                    t4->nundecided == 2 && t4->counted == 0 && t4->state == SML_TGT_NOT_MEASURED &&
                    t3->met == 2 && t3->nundecided == 0 &&
                    !strcmp(sml_tgt_unheld_for(SML_TGT_BEST, &r.rows[0]), "triton"),
                "triton unheld on row 0: short-vs-field not decided there, 0.98x cuDNN with torch "
                "unheld a miss; "
                "T4 not decided on both rows, T3 met on both");
        else if (v == 1)
            sml_test_check_case(&T, &F, NULL, n + 1,
                                sf->counted == 2 && sf->met == 1 && sf->nundecided == 0 &&
                                    r.rows[0].unheld[0] == 0 && row1_missed &&
                                    t4->nundecided == 1 && t4->met == 1,
                                "triton held (cudnn's `held` absent on row 1): 1.13x cuDNN met; T4 "
                                "row 1 not decided (torch)");
        else
            sml_test_check_case(&T, &F, NULL, n + 2,
                                t3->nundecided == 1 && t3->undecided[0] == 0 && t3->met == 1 &&
                                    t3->state == SML_TGT_NOT_MEASURED &&
                                    !strcmp(r.rows[0].unheld, "cudnn") && sf->nundecided == 1,
                                "cudnn unheld on row 0: T3 not decided there (1.25x), met on row "
                                "1; short-vs-field not decided");
        sml_tgt_report_free(&r);
    }
}

/* ---- the CLI ---- */

/* Runs the CLI with args (NULL-terminated) in TMP, its output into LOG; returns the exit code. */
static int run_cli(const char *const *args) {
    return sml_run_cli(F.cli, TMP, args, LOG, sizeof LOG);
}

static int entries(void) { return sml_dir_entries(TMP); }

static void empty_tmp(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/.[!.]*", TMP, TMP);
    if (system(cmd) != 0) printf("note: could not empty %s\n", TMP);
}

/* want_files: how many files TMP must hold afterwards (-1: any). */
static void expect_rc(int n, const char *what, const char *const *args, int want, int want_files) {
    if (!sml_case_filter_want(&F, n)) return;
    empty_tmp();
    int rc = run_cli(args), files = entries();
    if (rc == want && (want_files < 0 || files == want_files))
        sml_tally_pass(&T);
    else
        sml_tally_fail(
            &T, F.repro,
            "case %d: %s: exit %d (want %d), %d files written (want %d)\n--- output ---\n%.3000s",
            n, what, rc, want, files, want_files, LOG);
}

static void cli_report(const char *fx) {
    const char *const full[] = {"targets", fx, "--json", "out.json", "--md", "out.md", NULL};
    expect_rc(20, "targets on the fixture: a target missed", full, 1, 2);
    sml_test_check_case(&T, &F, NULL, 27, strstr(LOG, "PARTIAL") == NULL,
                        "a complete ledger's report says nothing of a partial run");
    sml_test_check_case(&T, &F, NULL, 29, strstr(LOG, "  plans   not recorded\n") != NULL,
                        "a ledger without environment.auto_plans: 'plans   not recorded'");
    char path[400], err[256];
    snprintf(path, sizeof path, "%s/out.json", TMP);
    sml_json *doc = NULL;
    const sml_json *t1 = NULL;
    if (sml_json_parse_file(path, &doc, err, sizeof err) == SML_OK)
        t1 = sml_json_at(sml_json_get(doc, "targets"), 0);
    const char *schema = sml_json_str(sml_json_get(doc, "schema"));
    sml_test_check_case(&T, &F, NULL, 21,
                        schema && !strcmp(schema, SML_TARGETS_SCHEMA) &&
                            sml_json_num(sml_json_get(t1, "rows_counted"), -1) == 5 &&
                            sml_json_num(sml_json_get(t1, "rows_met"), -1) == 2 &&
                            sml_json_len(sml_json_get(t1, "missing")) == 3 &&
                            sml_json_len(sml_json_get(doc, "targets")) == SML_TGT_COUNT &&
                            strstr(LOG, "T1 >= 90% of memcpy, traffic >= 64 MiB:") &&
                            strstr(LOG, "  2 of   5 rows") && strstr(LOG, "check WRONG"),
                        "out.json is softmax-lab-targets/1 with T1 2 of 5 and 3 misses; stdout "
                        "prints T1 and the WRONG row");
    const sml_json *t4 = sml_json_at(sml_json_get(doc, "targets"), SML_TGT_BEST);
    sml_test_check_case(&T, &F, NULL, 26,
                        sml_json_num(sml_json_get(t4, "misses_against_own_kernel"), -1) == 1 &&
                            strstr(LOG, "(14 at >= 1.00x; 1 miss against the kernel auto ran)") &&
                            strstr(LOG, "0.970x (block, which auto ran)") &&
                            !strstr(LOG, "split, which auto ran"),
                        "T4's own-kernel miss in out.json and on stdout, marked on its row only");
    sml_json_free(doc);
    const char *const split[] = {"targets", fx, "--kernel", "split", NULL};
    expect_rc(22, "targets --kernel split: T1-T6 met, the rest NOT MEASURED (exit 3)", split, 3, 0);
    sml_test_check_case(
        &T, &F, NULL, 28,
        strstr(LOG, "vs-field traffic >= 64 MiB: >= 1.00x the fastest framework baseline:") &&
            strstr(LOG, "NOT MEASURED (no torch, triton, triton_online, liger or cudnn record in "
                        "the ledger)") &&
            strstr(LOG, "NOT MEASURED (no traffic-matched limit in the ledger)"),
        "a ledger without framework baselines or a limit says NOT MEASURED, with why");
    const char *const help[] = {"targets", "--help", NULL};
    expect_rc(23, "targets --help", help, 0, 0);
    sml_test_check_case(&T, &F, NULL, 24, strstr(LOG, "usage: softmax-lab targets") != NULL,
                        "--help prints the usage");
}

/* A ledger the time limit cut short: the fixture with a "partial" block. The report says so
 * on every output; the complete fixture reads as complete. */
static void cli_partial(const char *fx) {
    char part[400], err[256] = "";
    snprintf(part, sizeof part, "%s.partial.json", TMP); /* beside TMP: expect_rc empties TMP */
    FILE *in = fopen(fx, "r"), *out = fopen(part, "w");
    int copied = in && out;
    char line[4096];
    while (copied && fgets(line, sizeof line, in)) {
        fputs(line, out);
        if (strstr(line, "\"sweep\": \"fixture\""))
            fputs(" \"partial\": {\"cases_measured\": 3, \"cases_planned\": 10, \"time_limit_s\": "
                  "60},\n",
                  out);
    }
    if (in) fclose(in);
    if (out) fclose(out);
    sml_tgt_report r, whole;
    int ok = copied && sml_targets_file(part, "auto", &r, err, sizeof err) == SML_OK;
    sml_test_check_case(&T, &F, NULL, 40,
                        ok && r.cases_measured == 3 && r.cases_planned == 10 && r.n == 17,
                        "a partial ledger reads: 3 of 10 cases, the same 17 rows");
    if (ok) sml_tgt_report_free(&r);
    ok = sml_targets_file(fx, "auto", &whole, err, sizeof err) == SML_OK;
    sml_test_check_case(&T, &F, NULL, 41,
                        ok && whole.cases_measured == 0 && whole.cases_planned == 0,
                        "the complete fixture reads as complete");
    if (ok) sml_tgt_report_free(&whole);
    const char *const args[] = {"targets", part, "--json", "pout.json", "--md", "pout.md", NULL};
    expect_rc(42, "targets on a partial ledger", args, 1, 2);
    char path[400];
    snprintf(path, sizeof path, "%s/pout.json", TMP);
    sml_json *doc = NULL;
    const sml_json *pj = sml_json_parse_file(path, &doc, err, sizeof err) == SML_OK
                             ? sml_json_get(doc, "partial")
                             : NULL;
    sml_test_check_case(&T, &F, NULL, 43,
                        pj && sml_json_num(sml_json_get(pj, "cases_measured"), -1) == 3 &&
                            sml_json_num(sml_json_get(pj, "cases_planned"), -1) == 10 &&
                            strstr(LOG, "PARTIAL 3 of 10 cases measured (time limit)"),
                        "stdout and the JSON report say the ledger is partial");
    sml_json_free(doc);
    snprintf(path, sizeof path, "%s/pout.md", TMP);
    FILE *md = fopen(path, "r");
    size_t got = md ? fread(line, 1, sizeof line - 1, md) : 0;
    line[got] = 0;
    if (md) fclose(md);
    sml_test_check_case(&T, &F, NULL, 44,
                        strstr(line, "**Partial ledger:** 3 of 10 cases measured") != NULL,
                        "the Markdown report says so too");
    remove(part);
}

/* The field fixture through the CLI: auto misses (exit 1), split meets every target (exit 0);
 * the JSON report says each target's state. */
static void cli_field(void) {
    char fx[600];
    fixture(fx, sizeof fx, "targets_field.json");
    const char *const args[] = {"targets", fx, "--json", "f.json", "--md", "f.md", NULL};
    expect_rc(61, "targets on the field fixture: missed", args, 1, 2);
    char path[400], err[256];
    snprintf(path, sizeof path, "%s/f.json", TMP);
    sml_json *doc = NULL;
    const sml_json *vf = NULL;
    if (sml_json_parse_file(path, &doc, err, sizeof err) == SML_OK)
        vf = sml_json_at(sml_json_get(doc, "targets"), SML_TGT_VS_FIELD);
    const char *state = sml_json_str(sml_json_get(vf, "state")),
               *name = sml_json_str(sml_json_get(vf, "name"));
    const sml_json *miss1 = sml_json_at(sml_json_get(vf, "missing"), 1);
    const char *by = sml_json_str(sml_json_get(miss1, "field"));
    sml_test_check_case(
        &T, &F, NULL, 62,
        state && !strcmp(state, "missed") && name && !strcmp(name, "vs-field") &&
            sml_json_num(sml_json_get(vf, "rows_not_measured"), -1) == 1 && by &&
            !strcmp(by, "liger") &&
            fabs(sml_json_num(sml_json_get(miss1, "vs_field"), 0) - 0.93) < 1e-9 &&
            strstr(LOG, "2 of   4 rows; 1 NOT MEASURED (no framework baseline timed there)") &&
            strstr(LOG, "0.930x liger"),
        "vs-field in the JSON report (missed, 1 row not measured, the liger row) and on stdout");
    const char *plans = sml_json_str(sml_json_get(doc, "auto_plans"));
    sml_test_check_case(&T, &F, NULL, 64,
                        plans && !strcmp(plans, "fixture-gpu.plans") &&
                            strstr(LOG, "  plans   fixture-gpu.plans\n"),
                        "the plan table auto ran (environment.auto_plans) in the JSON report and "
                        "on stdout");
    sml_json_free(doc);
    const char *const split[] = {"targets", fx, "--kernel", "split", NULL};
    expect_rc(63, "targets --kernel split on the field fixture: every target met", split, 0, 0);
}

static void cli_refusals(const char *fx) {
    char nofrac[600], schema[600];
    fixture(nofrac, sizeof nofrac, "targets_no_frac.json");
    fixture(schema, sizeof schema, "bad_schema.json");
    const char *const BAD[][10] = {
        {"targets", "/nonexistent/ledger.json", "--json", "out.json", "--md", "out.md", NULL},
        {"targets", schema, "--json", "out.json", "--md", "out.md", NULL},
        {"targets", nofrac, "--json", "out.json", "--md", "out.md", NULL},
        {"targets", fx, "--kernel", "nosuch", "--json", "out.json", "--md", "out.md", NULL},
        {"targets", fx, "--bogus", "--json", "out.json", NULL},
        {"targets", fx, "--json", "/nonexistent/dir/out.json", "--md", "out.md", NULL},
        {"targets", fx, "--json", "out.json", "--kernel", NULL},
        {"targets", "--json", "out.json", NULL},
    };
    const char *const mention[] = {"No such file",
                                   "schema",
                                   "records[1].evidence[3]: 'frac_memcpy'",
                                   "no record for kernel 'nosuch'",
                                   "unknown option '--bogus' (its options: --kernel,",
                                   "/nonexistent/dir/out.json",
                                   "--kernel needs a value",
                                   "usage"};
    for (int i = 0; i < (int)(sizeof BAD / sizeof BAD[0]); i++) {
        char what[160];
        snprintf(what, sizeof what, "refused (%s)", mention[i]);
        expect_rc(30 + i, what, BAD[i], 2, 0);
        sml_test_check_case(&T, &F, NULL, 40 + i, strstr(LOG, mention[i]) != NULL, mention[i]);
    }
}

/* A ledger of `schema` with auto, then `torch` (faster than auto) and `my_fw` (slower) on its
 * cell, each record ending with `torch_extra` / `fw_extra` (", \"framework\": ..." or ""). */
static void framework_doc(char *doc, size_t n, const char *schema, const char *torch_extra,
                          const char *fw_extra) {
    static const char *const CELL =
        "\"op\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 4096, \"cols\": 8192";
    snprintf(
        doc, n,
        "{\"schema\": \"%s\", \"config\": {\"decision_margin\": 0.03}, \"records\": ["
        "{\"kernel\": \"auto\", \"status\": \"Supported\", \"framework\": false, \"evidence\": "
        "[{%s, "
        "\"bytes_moved\": 268435456, \"check\": \"ok\", \"gbps\": 2800, \"frac_memcpy\": 0.93, "
        "\"frac_copy_kernel\": 0.98, \"vs_cudnn\": 1.3, \"vs_best_other\": 1.0, \"median_ms\": "
        "0.1}]},"
        "{\"kernel\": \"torch\", \"status\": \"Measured\"%s, \"evidence\": [{%s, \"median_ms\": "
        "0.05}]},"
        "{\"kernel\": \"my_fw\", \"status\": \"Measured\"%s, \"evidence\": [{%s, \"median_ms\": "
        "0.2}]}]}",
        schema, CELL, torch_extra, CELL, fw_extra, CELL);
}

static void framework_roles(void) {
    static const struct {
        const char *schema, *torch, *fw, *field, *rule, *refusal, *what;
    } C[] = {
        {"softmax-lab-ledger/2", ", \"framework\": false", ", \"framework\": true", "my_fw",
         "fastest record with \"framework\": true", NULL,
         "version 2: the records that say \"framework\": true are the field (my_fw, not torch)"},
        {"softmax-lab-ledger/2", "", ", \"framework\": true", NULL, NULL,
         "records[1]: 'framework' missing",
         "version 2: a record without 'framework' is refused, naming it"},
        {"softmax-lab-ledger/2", ", \"framework\": 1", ", \"framework\": true", NULL, NULL,
         "records[1]: 'framework' missing or not true/false",
         "version 2: a 'framework' of 1 is refused"},
        {"softmax-lab-ledger/1", ", \"framework\": false", ", \"framework\": true", "torch",
         "fastest of torch, triton, triton_online, liger, cudnn", NULL,
         "version 1: the names decide (torch is a baseline, my_fw none)"},
        {"softmax-lab-ledger/1", "", "", "torch",
         "fastest of torch, triton, triton_online, liger, cudnn", NULL,
         "version 1 as written (no 'framework'): torch is the field"},
    };
    for (int i = 0; i < (int)(sizeof C / sizeof C[0]); i++) {
        if (!sml_case_filter_want(&F, 110 + i)) continue;
        char doc[4096], err[512] = "";
        framework_doc(doc, sizeof doc, C[i].schema, C[i].torch, C[i].fw);
        sml_json *j = NULL;
        sml_tgt_report r;
        sml_status s = sml_json_parse(doc, strlen(doc), &j, err, sizeof err) == SML_OK
                           ? sml_targets_doc(j, "auto", &r, err, sizeof err)
                           : SML_ERR_IO;
        sml_json_free(j);
        if (C[i].refusal) {
            sml_test_check_case(&T, &F, NULL, 110 + i,
                                s == SML_ERR_FORMAT && strstr(err, C[i].refusal), C[i].what);
            if (s == SML_OK)
                sml_tgt_report_free(&r);
            else if (!strstr(err, C[i].refusal))
                printf("  %s\n", err);
            continue;
        }
        const double want = !strcmp(C[i].field, "torch") ? 0.5 : 2.0;
        int ok = s == SML_OK && !strcmp(r.field, C[i].field) && r.n == 1 &&
                 !strcmp(r.rows[0].field, C[i].field) && fabs(r.rows[0].vs_field - want) < 1e-12 &&
                 strstr(r.t[SML_TGT_VS_FIELD].rule, C[i].rule);
        sml_test_check_case(&T, &F, NULL, 110 + i, ok, C[i].what);
        if (s != SML_OK)
            printf("  %s\n", err);
        else if (!ok)
            printf("  field '%s', rule '%s'\n", r.field, r.t[SML_TGT_VS_FIELD].rule);
        if (s == SML_OK) sml_tgt_report_free(&r);
    }
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    on_the_fixture();
    rules_alone();
    refused(15, "targets_no_frac.json", "auto", SML_ERR_FORMAT,
            "records[1].evidence[3]: 'frac_memcpy' missing");
    refused(16, "bad_schema.json", "auto", SML_ERR_FORMAT, "schema");
    refused(17, "compare_old.json", "warp", SML_ERR_FORMAT, "decision_margin");
    refused(18, "no_such_file.json", "auto", SML_ERR_IO, "no_such_file.json");
    untimed_row(19);
    on_the_field_fixture();
    field_rules_alone();
    bad_field_row(60);
    field_names(64);
    huge_counts(90);
    unheld_baseline(91); /* 91-94 */
    refused_values();    /* 100-104 */
    framework_roles();   /* 110-114 */
    if (sml_cli_setup("test_targets", F.cli, TMP, sizeof TMP)) return 1;
    char fx[600];
    fixture(fx, sizeof fx, "targets_ledger.json");
    cli_report(fx);
    cli_partial(fx);
    cli_refusals(fx);
    cli_field();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    if (T.failed == 0 && system(cmd) != 0)
        printf("note: could not remove %s\n", TMP);
    else if (T.failed)
        printf("files kept in %s\n", TMP);
    return sml_tally_finish(&T);
}
