/* test_compare.c: `compare` on hand-written ledger fixtures (tests/perf/fixtures): every
 * verdict, cases present on one side only, a check that broke, and each kind of malformed
 * file refused with a message that names the bad field. */
#include <stdio.h>
#include <string.h>

#include "analysis/compare.h"
#include "case_filter.h"
#include "test_support.h"

static sml_tally T = {"test_compare", 0, 0, 0};
static sml_case_filter F;

static const sml_cmp_row *row(const sml_cmp_report *r, const char *kernel, const char *op,
                              const char *dtype, long long rows, long long cols) {
    for (size_t i = 0; i < r->n; i++) {
        const sml_cmp_row *x = &r->rows[i];
        if (!strcmp(x->kernel, kernel) && !strcmp(x->op, op) && !strcmp(x->dtype, dtype) &&
            x->rows == rows && x->cols == cols)
            return x;
    }
    return NULL;
}

static void expect(int n, const sml_cmp_report *r, const char *kernel, const char *op,
                   const char *dtype, long long rows, long long cols, const char *want) {
    if (!sml_case_filter_want(&F, n)) return;
    const sml_cmp_row *x = row(r, kernel, op, dtype, rows, cols);
    const char *got = !x                                ? "(missing)"
                      : x->presence == SML_CMP_ONLY_OLD ? "only-old"
                      : x->presence == SML_CMP_ONLY_NEW ? "only-new"
                                                        : sml_compare_name(x->verdict);
    if (!strcmp(got, want))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s %s %s %lldx%lld: %s, want %s", n, kernel, op,
                       dtype, rows, cols, got, want);
}

static sml_status cmp(const char *a, const char *b, sml_cmp_report *r, char *err, size_t n) {
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/%s", F.fixtures, a);
    snprintf(pb, sizeof pb, "%s/%s", F.fixtures, b);
    return sml_compare_files(pa, pb, 0.03, r, err, n);
}

static void malformed(int n, const char *file, sml_status want, const char *mention) {
    if (!sml_case_filter_want(&F, n)) return;
    sml_cmp_report r;
    char err[512] = "";
    sml_status s = cmp("compare_old.json", file, &r, err, sizeof err);
    sml_cmp_report_free(&r);
    if (s == want && strstr(err, mention))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s: status %s, message '%s'; want %s mentioning '%s'",
                       n, file, sml_strerror(s), err, sml_strerror(want), mention);
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    sml_cmp_report r;
    char err[512] = "";
    sml_status s = cmp("compare_old.json", "compare_new.json", &r, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 1, s == SML_OK, "the fixtures compare");
    if (s != SML_OK) {
        printf("  %s\n", err);
        return sml_tally_finish(&T);
    }
    expect(2, &r, "warp", "softmax", "fp16", 4096, 1024, "SAME");
    expect(3, &r, "warp", "softmax", "fp16", 4096, 2048, "FAST");
    expect(4, &r, "warp", "softmax", "fp16", 4096, 512, "SLOW");
    expect(5, &r, "block", "softmax", "fp16", 4096, 4096, "UNCLEAR");     /* +4% under 14% noise */
    expect(6, &r, "block", "softmax_bwd", "fp16", 4096, 8192, "UNCLEAR"); /* old not timed */
    expect(7, &r, "warp", "softmax", "fp32", 4096, 256, "only-old");
    expect(8, &r, "online", "softmax", "fp16", 128, 1048576, "only-new");
    const sml_cmp_row *b = row(&r, "block", "softmax", "bf16", 4096, 8192);
    sml_test_check_case(&T, &F, NULL, 9, b && b->broke == 1,
                        "ok -> WRONG is reported as a broken check");
    const sml_cmp_row *e = row(&r, "block", "softmax_bwd", "fp16", 4096, 8192);
    sml_test_check_case(&T, &F, NULL, 10, e && e->broke == 0, "ERROR -> ok is not a broken check");
    sml_test_check_case(
        &T, &F, NULL, 11,
        r.count[SML_CMP_SLOW] == 1 && r.count[SML_CMP_FAST] == 1 && r.count[SML_CMP_SAME] == 2 &&
            r.count[SML_CMP_UNCLEAR] == 2 && r.only_old == 1 && r.only_new == 1 && r.broke == 1,
        "counts: 1 SLOW, 1 FAST, 2 SAME, 2 UNCLEAR, 1 only-old, 1 only-new, 1 broke");
    sml_test_check_case(&T, &F, NULL, 12, sml_cmp_failed(&r), "a SLOW case fails the comparison");
    sml_cmp_report_free(&r);

    s = cmp("compare_old.json", "compare_new_ok.json", &r, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 13,
                        s == SML_OK && !sml_cmp_failed(&r) && r.count[SML_CMP_FAST] == 1,
                        "no SLOW and nothing broke: the comparison passes");
    sml_cmp_report_free(&r);
    s = cmp("compare_new.json", "compare_new.json", &r, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 14,
                        s == SML_OK && !sml_cmp_failed(&r) && r.count[SML_CMP_SLOW] == 0 &&
                            r.count[SML_CMP_FAST] == 0,
                        "a file against itself has no SLOW and no FAST");
    sml_cmp_report_free(&r);
    /* Swapping old and new turns FAST into SLOW. */
    s = cmp("compare_new_ok.json", "compare_old.json", &r, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 15,
                        s == SML_OK && sml_cmp_failed(&r) && r.count[SML_CMP_SLOW] == 1,
                        "swapped: the FAST case is SLOW");
    sml_cmp_report_free(&r);

    /* Every check word the bench writes must be readable: KNOWN-DEV (cuDNN's documented
     * deviations) is in every real GPU ledger, and once did not fit (compare refused them). */
    s = cmp("compare_known_dev.json", "compare_known_dev.json", &r, err, sizeof err);
    const sml_cmp_row *kd = s == SML_OK ? row(&r, "cudnn", "softmax", "fp16", 4096, 1024) : NULL;
    sml_test_check_case(&T, &F, NULL, 16,
                        kd && !strcmp(kd->old_check, "KNOWN-DEV") &&
                            !strcmp(kd->new_check, "KNOWN-DEV") && !kd->broke &&
                            !sml_cmp_failed(&r),
                        "a KNOWN-DEV check reads back whole and is not a broken check");
    if (s != SML_OK) printf("  %s\n", err);
    sml_cmp_report_free(&r);

    malformed(20, "bad_syntax.json", SML_ERR_FORMAT, "line ");
    malformed(21, "bad_schema.json", SML_ERR_FORMAT, "schema");
    malformed(22, "bad_field.json", SML_ERR_FORMAT, "records[0].evidence[0]: 'cols'");
    malformed(23, "bad_spread.json", SML_ERR_FORMAT, "rel_spread");
    malformed(24, "bad_records.json", SML_ERR_FORMAT, "'records'");
    malformed(25, "bad_time.json", SML_ERR_FORMAT, "median_ms");
    malformed(26, "no_such_file.json", SML_ERR_IO, "no_such_file.json");
    return sml_tally_finish(&T);
}
