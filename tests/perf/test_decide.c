/* test_decide.c: shape classes, the ledger's decision rule (Supported / Caveated / Rejected /
 * Measured) and the compare rule (FAST / SLOW / SAME / UNCLEAR) on synthetic evidence. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/decide.h"
#include "case_filter.h"
#include "test_support.h"

static sml_tally T = {"test_decide", 0, 0, 0};
static sml_case_filter F;

static void is_str(int n, const char *what, const char *got, const char *want) {
    if (!sml_case_filter_want(&F, n)) return;
    if (!strcmp(got, want))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s = %s, want %s", n, what, got, want);
}

static void is_int(int n, const char *what, long got, long want) {
    if (!sml_case_filter_want(&F, n)) return;
    if (got == want)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s = %ld, want %ld", n, what, got, want);
}

/* Rows at the given speedups, every one correct and quiet (spreads 0.5%). */
static void rows_at(sml_decision_row *r, const double *speedup, const int64_t *cols, int n) {
    for (int i = 0; i < n; i++) r[i] = (sml_decision_row){cols[i], 1, 1, speedup[i], 0.005, 0.005};
}

static const char *decide(const sml_claim *c, const sml_decision_row *r, int n,
                          sml_row_outcome *o) {
    sml_decision d;
    sml_decide(c, r, (size_t)n, SML_DEFAULT_MARGIN, &d, o);
    return sml_decision_name(d.status);
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    is_str(1, "class(1024)", sml_shape_class(1024), "short");
    is_str(2, "class(1025)", sml_shape_class(1025), "mid");
    is_str(3, "class(131071)", sml_shape_class(131071), "mid");
    is_str(4, "class(131072)", sml_shape_class(131072), "long");
    is_str(5, "class(1)", sml_shape_class(1), "short");
    is_int(6, "in_class(128, all)", sml_shape_in_class(128, "all"), 1);
    is_int(7, "in_class(8192, short)", sml_shape_in_class(8192, "short"), 0);
    is_int(8, "in_class(8192, mid)", sml_shape_in_class(8192, "mid"), 1);
    is_int(9, "in_class(8192, bogus)", sml_shape_in_class(8192, "bogus"), 0);

    const int64_t cols4[] = {256, 4096, 131072, 1048576};
    sml_claim claim = {"cudnn", 1.2, "all"};
    sml_decision_row r[8];
    sml_row_outcome o[8];

    rows_at(r, (double[]){1.5, 1.3, 1.25, 2.0}, cols4, 4);
    is_str(10, "no claim", decide(NULL, r, 4, o), "Measured");
    is_str(11, "meets everywhere", decide(&claim, r, 4, o), "Supported");

    rows_at(r, (double[]){1.5, 1.3, 0.9, 2.0}, cols4, 4);
    is_str(12, "meets some, loses one", decide(&claim, r, 4, o), "Caveated");
    is_str(13, "the losing row is a loss", sml_row_outcome_name(o[2]), "loss");
    is_str(14, "a meeting row meets", sml_row_outcome_name(o[0]), "meets");

    rows_at(r, (double[]){1.1, 1.1, 1.1, 1.1}, cols4, 4);
    is_str(15, "faster everywhere but short of 1.2x", decide(&claim, r, 4, o), "Caveated");
    is_str(16, "1.1x is above parity", sml_row_outcome_name(o[0]), "above-parity");

    rows_at(r, (double[]){1.0, 0.99, 1.02, 0.8}, cols4, 4);
    is_str(17, "parity or below everywhere", decide(&claim, r, 4, o), "Rejected");

    /* A wrong kernel is never a win, however fast. */
    rows_at(r, (double[]){5, 5, 5, 5}, cols4, 4);
    for (int i = 0; i < 4; i++) r[i].kernel_ok = 0;
    is_str(18, "fast but wrong everywhere", decide(&claim, r, 4, o), "Rejected");
    r[0].kernel_ok = r[1].kernel_ok = r[2].kernel_ok = 1;
    is_str(19, "fast, wrong on one shape", decide(&claim, r, 4, o), "Caveated");
    is_str(20, "the wrong row is a loss", sml_row_outcome_name(o[3]), "loss");

    /* The claim's shape class limits what counts. */
    sml_claim long_only = {"cudnn", 1.2, "long"};
    rows_at(r, (double[]){0.5, 0.5, 1.5, 1.6}, cols4, 4);
    is_str(21, "long claim, meets on long rows", decide(&long_only, r, 4, o), "Supported");
    is_str(22, "a short row is not counted", sml_row_outcome_name(o[0]), "not-counted");
    is_str(23, "long claim, no long rows", decide(&long_only, r, 2, o), "Measured");

    /* No usable baseline: nothing to test. */
    rows_at(r, (double[]){1.5, 1.5, 1.5, 1.5}, cols4, 4);
    for (int i = 0; i < 4; i++) r[i].baseline_ok = 0;
    is_str(24, "baseline missing everywhere", decide(&claim, r, 4, o), "Measured");

    /* The noise margin: floor 3% when quiet, 2*sqrt(ks^2+bs^2) when not. */
    rows_at(r, (double[]){1.17}, cols4, 1);
    is_str(25, "1.17x vs 1.2x claim, quiet: inside the 3% floor", decide(&claim, r, 1, o),
           "Supported");
    rows_at(r, (double[]){1.15}, cols4, 1);
    is_str(26, "1.15x vs 1.2x claim, quiet: a miss", decide(&claim, r, 1, o), "Caveated");
    /* Noise never turns a ratio below the claim into a pass: within noise of it, the row is
     * unclear (measure again), the kernel not Supported, and not Rejected either. */
    r[0].speedup = 1.10;
    r[0].kernel_spread = r[0].baseline_spread = 0.05;
    is_str(27, "1.10x with 5% spreads vs a 1.2x claim: not Supported", decide(&claim, r, 1, o),
           "Caveated");
    is_str(43, "1.10x with 5% spreads: the row is unclear", sml_row_outcome_name(o[0]), "unclear");
    r[0].kernel_spread = r[0].baseline_spread = NAN;
    r[0].speedup = 0.5;
    is_str(28, "unknown spreads: 0.5x is not Supported", decide(&claim, r, 1, o), "Caveated");
    is_str(44, "unknown spreads: 0.5x is unclear", sml_row_outcome_name(o[0]), "unclear");
    sml_claim twice = {"naive", 2.0, "all"};
    r[0] = (sml_decision_row){256, 1, 1, 0.32, 0.01, 0.49};
    is_str(45, "0.32x vs a 2.00x claim, 49% baseline spread", decide(&twice, r, 1, o), "Caveated");
    is_str(46, "0.32x with a 49% spread is unclear, never meets", sml_row_outcome_name(o[0]),
           "unclear");
    r[0] = (sml_decision_row){256, 1, 1, 1.95, 0.30, 0.30};
    is_str(47, "1.95x vs 2.00x: the fixed floor still meets, noisy or not", decide(&twice, r, 1, o),
           "Supported");
    r[0] = (sml_decision_row){256, 1, 1, 0.5, 0.005, 0.005};
    r[1] = (sml_decision_row){4096, 1, 1, 0.5, 0.005, 0.005};
    is_str(48, "0.5x vs 2.00x, quiet: Rejected", decide(&twice, r, 2, o), "Rejected");

    /* Compare rule. */
    double th = 0.03;
    is_str(30, "same", sml_compare_name(sml_compare_verdict(1.0, 0.005, 1.01, 0.005, th)), "SAME");
    is_str(31, "slow", sml_compare_name(sml_compare_verdict(1.0, 0.005, 1.2, 0.005, th)), "SLOW");
    is_str(32, "fast", sml_compare_name(sml_compare_verdict(1.0, 0.005, 0.8, 0.005, th)), "FAST");
    is_str(33, "20% slower but 15% noise each",
           sml_compare_name(sml_compare_verdict(1.0, 0.15, 1.2, 0.15, th)), "UNCLEAR");
    is_str(34, "tiny change but noisy",
           sml_compare_name(sml_compare_verdict(1.0, 0.10, 1.0, 0.01, th)), "UNCLEAR");
    is_str(35, "5% slower, noise 3% each",
           sml_compare_name(sml_compare_verdict(1.0, 0.03, 1.05, 0.03, th)), "UNCLEAR");
    is_str(36, "old noise alone decides",
           sml_compare_name(sml_compare_verdict(1.0, 0.2, 1.1, 0.0, th)), "UNCLEAR");
    is_str(37, "new noise alone decides",
           sml_compare_name(sml_compare_verdict(1.0, 0.0, 1.1, 0.2, th)), "UNCLEAR");
    is_str(38, "zero old time", sml_compare_name(sml_compare_verdict(0.0, 0.0, 1.0, 0.0, th)),
           "UNCLEAR");
    is_str(39, "NaN spread", sml_compare_name(sml_compare_verdict(1.0, NAN, 2.0, 0.0, th)),
           "UNCLEAR");
    is_str(40, "just under the threshold",
           sml_compare_name(sml_compare_verdict(1.0, 0.0, 1.0299, 0.0, th)), "SAME");
    is_str(41, "just over the threshold",
           sml_compare_name(sml_compare_verdict(1.0, 0.0, 1.0301, 0.0, th)), "SLOW");
    is_str(42, "just over, faster",
           sml_compare_name(sml_compare_verdict(1.0, 0.0, 0.9699, 0.0, th)), "FAST");
    return sml_tally_finish(&T);
}
