/* stats.h: the numbers a benchmark sample set is reduced to, and the rule that says when to
 * stop sampling. Pure functions on arrays of doubles, tested on synthetic data in
 * tests/perf/test_bench_stats.c. */
#ifndef SML_BENCH_STATS_H
#define SML_BENCH_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Quantile q in [0, 1] of n sorted values, linear interpolation between order statistics
 * (Hyndman-Fan type 7, the R and NumPy default). NaN for n == 0. */
double sml_quantile_sorted(const double *sorted, int n, double q);

typedef struct sml_summary {
    int n;
    double median, q1, q3, min, max;
    double rel_spread; /* (q3 - q1) / median: the spread the stopping and decision rules use */
} sml_summary;

/* Summarize n values (need not be sorted; not modified). n <= 0 gives n = 0 and NaNs. */
void sml_summarize(const double *v, int n, sml_summary *out);

typedef struct sml_stop_rule {
    int min_samples;    /* never stop before this many (>= 1) */
    int max_samples;    /* always stop at this many */
    double noise;       /* stop once rel_spread <= noise ... */
    double max_seconds; /* ... or once this much time was spent sampling */
} sml_stop_rule;

typedef enum sml_stop_reason {
    SML_STOP_CONTINUE = 0,
    SML_STOP_CONVERGED,  /* spread under the noise level */
    SML_STOP_TIME_LIMIT, /* time limit reached with the spread still above the noise level */
    SML_STOP_SAMPLE_CAP  /* max_samples reached with the spread still above the noise level */
} sml_stop_reason;

const char *sml_stop_reason_name(sml_stop_reason r); /* "converged", "time-limit", ... */

/* The stopping rule, applied after each sample: n samples so far, `elapsed` seconds spent. */
sml_stop_reason sml_should_stop(const double *samples, int n, double elapsed,
                                const sml_stop_rule *rule);

#ifdef __cplusplus
}
#endif
#endif
