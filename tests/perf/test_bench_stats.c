/* test_bench_stats.c: median, quartiles, relative spread and the stopping rule on synthetic
 * samples whose answers are worked out by hand. */
#include <math.h>
#include <stdio.h>

#include "bench/stats.h"
#include "case_filter.h"
#include "test_support.h"

static sml_tally T = {"test_bench_stats", 0, 0, 0};
static sml_case_filter F;

static void near(int n, const char *what, double got, double want) {
    if (!sml_case_filter_want(&F, n)) return;
    if ((isnan(want) && isnan(got)) || fabs(got - want) <= 1e-12 * (fabs(want) + 1))
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s = %.17g, want %.17g", n, what, got, want);
}

static void stops(int n, const char *what, sml_stop_reason got, sml_stop_reason want) {
    if (!sml_case_filter_want(&F, n)) return;
    if (got == want)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro, "case %d: %s: stop = %s, want %s", n, what,
                       sml_stop_reason_name(got), sml_stop_reason_name(want));
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    sml_summary s;

    double odd[] = {5, 1, 3};
    sml_summarize(odd, 3, &s);
    near(1, "median of {5,1,3}", s.median, 3);
    near(2, "min of {5,1,3}", s.min, 1);
    near(3, "max of {5,1,3}", s.max, 5);
    near(4, "input left unsorted", odd[0], 5);

    double even[] = {4, 1, 3, 2};
    sml_summarize(even, 4, &s);
    near(5, "median of {4,1,3,2}", s.median, 2.5);
    /* Type-7 quartiles of 1..4: positions 0.75 and 2.25. */
    near(6, "q1 of 1..4", s.q1, 1.75);
    near(7, "q3 of 1..4", s.q3, 3.25);
    near(8, "rel spread of 1..4", s.rel_spread, 1.5 / 2.5);

    double five[] = {3, 5, 1, 4, 2};
    sml_summarize(five, 5, &s);
    near(9, "q1 of 1..5", s.q1, 2);
    near(10, "q3 of 1..5", s.q3, 4);
    near(11, "rel spread of 1..5", s.rel_spread, 2.0 / 3.0);

    sml_summarize(five, 0, &s);
    near(12, "median of nothing", s.median, NAN);
    double one = 7;
    sml_summarize(&one, 1, &s);
    near(13, "median of one", s.median, 7);
    near(14, "spread of one", s.rel_spread, 0);

    /* More samples than the on-stack buffer: 1..101 shuffled by a stride. */
    double many[101];
    for (int i = 0; i < 101; i++) many[i] = (double)((i * 37) % 101 + 1);
    sml_summarize(many, 101, &s);
    near(15, "median of 1..101", s.median, 51);
    near(16, "q1 of 1..101", s.q1, 26);
    near(17, "q3 of 1..101", s.q3, 76);

    /* A robust spread: 2 outliers in 22 samples move neither the median nor the quartiles. */
    double outl[22];
    for (int i = 0; i < 22; i++) outl[i] = 1.0 + 0.001 * (i % 5);
    outl[3] = 10;
    outl[17] = 12;
    sml_summarize(outl, 22, &s);
    near(18, "outliers: median stays", s.median, 1.002);
    near(19, "outliers: max is the outlier", s.max, 12);
    if (sml_case_filter_want(&F, 20)) {
        if (s.rel_spread < 0.01)
            sml_tally_pass(&T);
        else
            sml_tally_fail(&T, F.repro, "case 20: two outliers inflated the spread to %g",
                           s.rel_spread);
    }

    sml_stop_rule r = {10, 50, 0.02, 1.0};
    double quiet[60], noisy[60];
    for (int i = 0; i < 60; i++) {
        quiet[i] = 1.0 + 0.001 * (i % 3);
        noisy[i] = 1.0 + 0.5 * (i % 2);
    }
    stops(21, "quiet but under min_samples, time over", sml_should_stop(quiet, 9, 5.0, &r),
          SML_STOP_CONTINUE);
    stops(22, "quiet at min_samples", sml_should_stop(quiet, 10, 0.1, &r), SML_STOP_CONVERGED);
    stops(23, "noisy, time left", sml_should_stop(noisy, 10, 0.1, &r), SML_STOP_CONTINUE);
    stops(24, "noisy, time over", sml_should_stop(noisy, 10, 1.0, &r), SML_STOP_TIME_LIMIT);
    stops(25, "noisy, sample cap", sml_should_stop(noisy, 50, 0.1, &r), SML_STOP_SAMPLE_CAP);
    stops(26, "noisy under min, time over", sml_should_stop(noisy, 3, 9.0, &r), SML_STOP_CONTINUE);
    stops(27, "outliers still converge", sml_should_stop(outl, 22, 0.1, &r), SML_STOP_CONVERGED);
    sml_stop_rule exact = {10, 50, 0.0, 1.0};
    double flat[10] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    stops(28, "identical samples meet noise 0", sml_should_stop(flat, 10, 0.0, &exact),
          SML_STOP_CONVERGED);
    return sml_tally_finish(&T);
}
