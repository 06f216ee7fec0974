/* compare_accuracy.c: `softmax-lab compare OLD NEW` on accuracy: per kernel, op and dtype,
 * MORE ACCURATE / LESS ACCURATE / SAME by the rule of docs/NUMERICS.md, section 8, on the
 * same cases only (same seed, case count and case digest; otherwise NOT COMPARABLE, with
 * the reason). */
#include "compare_accuracy.h"

#include <stdio.h>
#include <string.h>

#include "analysis/accuracy_compare.h"

#define ME "softmax-lab compare"

int sml_compare_accuracy_cli(const char *old_path, const char *new_path, int allow_less,
                             int only_check_json, int *check_json) {
    *check_json = 0;
    sml_json *d[2] = {NULL, NULL};
    char err[512];
    if (sml_json_parse_file(old_path, &d[0], err, sizeof err) != SML_OK ||
        sml_json_parse_file(new_path, &d[1], err, sizeof err) != SML_OK) {
        sml_json_free(d[0]);
        return -1; /* the caller's reader names the file and the place */
    }
    *check_json = sml_json_get(d[0], "runs") != NULL;
    if ((only_check_json && !*check_json) ||
        (!sml_acc_doc_has_accuracy(d[0]) && !sml_acc_doc_has_accuracy(d[1]))) {
        sml_json_free(d[0]);
        sml_json_free(d[1]);
        return -1;
    }
    sml_acc_report r;
    sml_status s = sml_acc_compare_docs(d[0], d[1], &r, err, sizeof err);
    sml_json_free(d[0]);
    sml_json_free(d[1]);
    if (s != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 2;
    }
    printf("\naccuracy (err/bound over the same cases; rule: docs/NUMERICS.md, section 8)\n");
    printf("%-10s %-16s %-5s %-15s %s\n", "kernel", "op", "dtype", "accuracy", "old -> new");
    for (size_t i = 0; i < r.n; i++) {
        const sml_acc_row *x = &r.rows[i];
        char k[140];
        if (strcmp(x->old_kernel, x->new_kernel))
            snprintf(k, sizeof k, "%s->%s", x->old_kernel, x->new_kernel);
        else
            snprintf(k, sizeof k, "%s", x->new_kernel);
        printf("%-10s %-16s %-5s %-15s %s\n", k, x->op, x->dtype, sml_acc_verdict_name(x->verdict),
               x->why);
        if (x->verdict == SML_ACC_LESS && x->new_a.worst_case >= 0)
            printf(
                "%-10s worst case in NEW: case %lld at level %d; its err/bound on each build: "
                "softmax-lab check "
                "--kernel %s --op %s --dtype %s --seed 0x%016llx --case %lld --level %d --props "
                "agreement%s "
                "--regressions none (with --against BASE --save DIR in one build: a reproducer)\n",
                "", (long long)x->new_a.worst_case, x->new_a.worst_level, x->new_kernel, x->op,
                x->dtype, (unsigned long long)x->new_a.seed, (long long)x->new_a.worst_case,
                x->new_a.worst_level, x->new_flags);
    }
    int judged = r.count[SML_ACC_SAME] + r.count[SML_ACC_MORE] + r.count[SML_ACC_LESS];
    printf("\n%d LESS ACCURATE, %d MORE ACCURATE, %d SAME, %d NOT COMPARABLE; %d only in OLD, %d "
           "only in NEW\n",
           r.count[SML_ACC_LESS], r.count[SML_ACC_MORE], r.count[SML_ACC_SAME],
           r.count[SML_ACC_NOT_COMPARABLE], r.only_old, r.only_new);
    int rc = 0;
    if (r.count[SML_ACC_LESS]) {
        if (allow_less)
            printf("compare: LESS ACCURATE allowed by --allow-less-accurate\n");
        else
            rc = 1;
    } else if (!judged) {
        printf("compare: accuracy not judged: no kernel, op and dtype ran on the same cases in "
               "both files "
               "(same seed, case count and cases needed; see NOT COMPARABLE above)\n");
        rc = 3;
    }
    sml_acc_report_free(&r);
    return rc;
}
