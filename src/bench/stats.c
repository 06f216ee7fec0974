/* stats.c: median, quartiles, relative spread and the stopping rule. The spread is the
 * interquartile range over the median: unlike a standard deviation it ignores the few
 * samples a context switch or a clock change inflates, which is the noise benchmarks see. */
#include "bench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sml_quantile_sorted(const double *sorted, int n, double q) {
    if (n <= 0) return NAN;
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[n - 1];
    double h = q * (double)(n - 1);
    int lo = (int)floor(h);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void sml_summarize(const double *v, int n, sml_summary *out) {
    memset(out, 0, sizeof *out);
    if (n <= 0 || !v) {
        out->median = out->q1 = out->q3 = out->min = out->max = out->rel_spread = NAN;
        return;
    }
    double small[64];
    double *s = n <= 64 ? small : malloc((size_t)n * sizeof *s);
    if (!s) {
        out->median = out->q1 = out->q3 = out->min = out->max = out->rel_spread = NAN;
        return;
    }
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = sml_quantile_sorted(s, n, 0.5);
    out->q1 = sml_quantile_sorted(s, n, 0.25);
    out->q3 = sml_quantile_sorted(s, n, 0.75);
    out->rel_spread = out->median > 0 ? (out->q3 - out->q1) / out->median : INFINITY;
    if (s != small) free(s);
}

const char *sml_stop_reason_name(sml_stop_reason r) {
    switch (r) {
    case SML_STOP_CONTINUE: return "continue";
    case SML_STOP_CONVERGED: return "converged";
    case SML_STOP_TIME_LIMIT: return "time-limit";
    case SML_STOP_SAMPLE_CAP: return "sample-cap";
    }
    return "?";
}

sml_stop_reason sml_should_stop(const double *samples, int n, double elapsed,
                                const sml_stop_rule *rule) {
    int min = rule->min_samples > 0 ? rule->min_samples : 1;
    if (n < min) return SML_STOP_CONTINUE;
    sml_summary s;
    sml_summarize(samples, n, &s);
    if (s.rel_spread <= rule->noise) return SML_STOP_CONVERGED;
    if (n >= rule->max_samples) return SML_STOP_SAMPLE_CAP;
    if (elapsed >= rule->max_seconds) return SML_STOP_TIME_LIMIT;
    return SML_STOP_CONTINUE;
}
