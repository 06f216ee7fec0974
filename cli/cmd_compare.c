/* compare: two ledger JSON files (old, new), case by case: FAST / SLOW / SAME / UNCLEAR by
 * the noise-aware rule of src/bench/decide.c. Exits 1 on any SLOW or any check that went
 * from ok to WRONG/ERROR, so CI can gate a merge on the main branch's ledger; 2 on bad
 * usage or a malformed file; 3 when the files share no case timed in both (nothing was
 * compared, so nothing can pass). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "commands.h"
#include "compare_accuracy.h"
#include "options.h"

typedef struct compare_args {
    double threshold;
    int changes_only, allow_less, allow_gpu;
} compare_args;

enum { C_THRESHOLD, C_CHANGES, C_ALLOW_LESS, C_ALLOW_GPU };

static const sml_opt OPTS[] = {
    {"threshold", "X", "0 or more, under 1",
     "the smallest relative change that counts (default 0.03)", NULL, C_THRESHOLD},
    {"changes", NULL, NULL, "list only the cases that are not SAME", NULL, C_CHANGES},
    {"allow-less-accurate", NULL, NULL, "report LESS ACCURATE without failing", NULL, C_ALLOW_LESS},
    {"allow-different-gpu", NULL, NULL, "compare ledgers timed on different GPUs",
     "refused otherwise: their timings say nothing about a change in the code", C_ALLOW_GPU},
};

static void verdicts(FILE *f) {
    fprintf(f, "\nVerdicts:\n");
    sml_cli_wrap(
        f, 0, 2,
        "  per case (kernel, op, dtype, rows, cols), with change = new/old - 1 and noise = "
        "sqrt(old_spread^2 + new_spread^2) from both runs' IQR/median:\n"
        "SLOW / FAST  |change| > max(threshold, 2*noise)\n"
        "SAME         |change| <= threshold and noise <= threshold\n"
        "UNCLEAR      otherwise (the noise hides the answer), or a side was not timed");
    sml_cli_wrap(f, 0, 2,
                 "  per kernel, op and dtype, on the same cases (same seed, case count and case "
                 "digest, else NOT COMPARABLE): MORE ACCURATE / LESS ACCURATE / SAME by worst and "
                 "p99 err/bound, a factor of 1.25 beyond a floor of 0.05 of the bound "
                 "(docs/NUMERICS.md, section 8)");
}

static const sml_cli_spec SPEC = {
    "compare",
    "OLD.json NEW.json [--threshold X] [--changes] [--allow-less-accurate] [--allow-different-gpu]",
    "OLD and NEW are ledgers written by `softmax-lab bench` (--json or --ledger DIR), compared "
    "case by case on time and kernel by kernel on accuracy, or `softmax-lab check --json` files "
    "(accuracy only).",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0 no SLOW and nothing LESS ACCURATE, 1 a SLOW case, a check that broke or a LESS "
    "ACCURATE one, 2 bad usage or input (ledgers of two GPUs without --allow-different-gpu), 3 "
    "nothing compared: no case is in both files with a time on both sides (check JSONs: no run "
    "on the same cases)",
    verdicts,
    NULL};

const sml_cli_spec *sml_spec_compare(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    (void)why;
    (void)n;
    compare_args *a = ctx;
    char *end;
    switch (o->id) {
    case C_CHANGES: a->changes_only = 1; return 0;
    case C_ALLOW_LESS: a->allow_less = 1; return 0;
    case C_ALLOW_GPU: a->allow_gpu = 1; return 0;
    case C_THRESHOLD:
        errno = 0;
        a->threshold = strtod(v, &end);
        return !*v || *end || errno || !(a->threshold >= 0 && a->threshold < 1) ? -1 : 0;
    default: return -1;
    }
}

static void fmt_time(char *buf, size_t n, int timed, double ms, double spread) {
    if (timed)
        snprintf(buf, n, "%.5f (%.1f%%)", ms, spread * 100);
    else
        snprintf(buf, n, "-");
}

static void print_rows(const sml_cmp_report *r, int changes_only) {
    printf("%-10s %-16s %-5s %-15s %-18s %-18s %8s  %s\n", "kernel", "op", "dtype", "shape",
           "old ms", "new ms", "change", "verdict");
    for (size_t i = 0; i < r->n; i++) {
        const sml_cmp_row *x = &r->rows[i];
        if (changes_only && x->presence == SML_CMP_BOTH && x->verdict == SML_CMP_SAME && !x->broke)
            continue;
        char shape[32], a[32], b[32], ch[16];
        snprintf(shape, sizeof shape, "%lldx%lld", (long long)x->rows, (long long)x->cols);
        fmt_time(a, sizeof a, x->presence != SML_CMP_ONLY_NEW && x->old_timed, x->old_ms,
                 x->old_spread);
        fmt_time(b, sizeof b, x->presence != SML_CMP_ONLY_OLD && x->new_timed, x->new_ms,
                 x->new_spread);
        if (x->presence == SML_CMP_BOTH && x->old_timed && x->new_timed)
            snprintf(ch, sizeof ch, "%+.1f%%", (x->new_ms / x->old_ms - 1) * 100);
        else
            snprintf(ch, sizeof ch, "-");
        const char *v = x->presence == SML_CMP_ONLY_OLD   ? "only in OLD"
                        : x->presence == SML_CMP_ONLY_NEW ? "only in NEW"
                                                          : sml_compare_name(x->verdict);
        printf("%-10s %-16s %-5s %-15s %-18s %-18s %8s  %s", x->kernel, x->op, x->dtype, shape, a,
               b, ch, v);
        if (x->broke)
            printf("  check broke: %s -> %s", x->old_check, x->new_check);
        else if (x->presence == SML_CMP_BOTH && strcmp(x->new_check, "ok"))
            printf("  (check %s in both)", x->new_check);
        printf("\n");
    }
}

int sml_cmd_compare(int argc, char **argv) {
    const char *paths[2] = {NULL, NULL};
    compare_args a = {0.03, 0, 0, 0};
    int np = 0;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, &a, paths, 2, &np, "OLD.json NEW.json");
    if (rc >= 0) return rc;
    if (np != 2) {
        fprintf(stderr, "softmax-lab compare: two files, OLD.json and NEW.json\n");
        sml_cli_usage(stderr, &SPEC);
        return 2;
    }
    double threshold = a.threshold;
    int changes_only = a.changes_only, allow_less = a.allow_less, allow_gpu = a.allow_gpu;
    sml_cmp_report r;
    char err[512];
    sml_status s = sml_compare_files(paths[0], paths[1], threshold, &r, err, sizeof err);
    int check_json = 0;
    if (s != SML_OK) { /* check JSONs hold accuracy only */
        int acc_rc = sml_compare_accuracy_cli(paths[0], paths[1], allow_less, 1, &check_json);
        if (check_json) return acc_rc < 0 ? 2 : acc_rc;
    }
    if (s != SML_OK) {
        fprintf(stderr, "softmax-lab compare: %s\n", err);
        return 2;
    }
    if (strcmp(r.old_gpu, r.new_gpu)) {
        if (!allow_gpu) {
            fprintf(
                stderr,
                "softmax-lab compare: %s was timed on %s, %s on %s: timings of two devices are not "
                "comparable (--allow-different-gpu compares them anyway)\n",
                paths[0], r.old_gpu, paths[1], r.new_gpu);
            sml_cmp_report_free(&r);
            return 2;
        }
        printf("warning: different devices (old: %s, new: %s): timings are not comparable\n",
               r.old_gpu, r.new_gpu);
    }
    print_rows(&r, changes_only);
    printf(
        "\n%d SLOW, %d FAST, %d SAME, %d UNCLEAR; %d only in OLD, %d only in NEW; %d checks broke "
        "(threshold %.1f%%)\n",
        r.count[SML_CMP_SLOW], r.count[SML_CMP_FAST], r.count[SML_CMP_SAME],
        r.count[SML_CMP_UNCLEAR], r.only_old, r.only_new, r.broke, threshold * 100);
    rc = sml_cmp_failed(&r) ? 1 : 0;
    if (rc == 0 && r.compared == 0) {
        printf("NOTHING COMPARED: no case is in both files with a time on both sides; exit 3\n");
        rc = 3;
    }
    sml_cmp_report_free(&r);
    /* Ledgers hold both: the accuracy table follows the timings. */
    int acc_rc = sml_compare_accuracy_cli(paths[0], paths[1], allow_less, 0, &check_json);
    if (rc == 1) return 1;
    return acc_rc == 1 || acc_rc == 2 ? acc_rc : rc;
}
