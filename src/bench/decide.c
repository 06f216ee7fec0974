/* decide.c: shape classes, the ledger's decision rule and the compare rule. Every number
 * that decides a status lives here, so the perf gate, the ledger and `compare` can never
 * disagree about what "meets its claim" or "slower" means. */
#include "bench/decide.h"

#include <math.h>
#include <string.h>

const char *sml_shape_class(int64_t cols) {
    if (cols <= SML_SHORT_MAX_COLS) return "short";
    if (cols >= SML_LONG_MIN_COLS) return "long";
    return "mid";
}

int sml_shape_in_class(int64_t cols, const char *cls) {
    if (!sml_shape_class_valid(cls)) return 0;
    return !strcmp(cls, "all") || !strcmp(cls, sml_shape_class(cols));
}

const char *sml_decision_name(sml_decision_status s) {
    switch (s) {
    case SML_DECISION_SUPPORTED: return "Supported";
    case SML_DECISION_CAVEATED: return "Caveated";
    case SML_DECISION_REJECTED: return "Rejected";
    case SML_DECISION_MEASURED: return "Measured";
    }
    return "?";
}

const char *sml_row_outcome_name(sml_row_outcome o) {
    switch (o) {
    case SML_ROW_NOT_COUNTED: return "not-counted";
    case SML_ROW_MEETS: return "meets";
    case SML_ROW_ABOVE_PARITY: return "above-parity";
    case SML_ROW_LOSS: return "loss";
    case SML_ROW_UNCLEAR: return "unclear";
    }
    return "?";
}

double sml_row_margin(double floor_margin, double kernel_spread, double baseline_spread) {
    double ks = isfinite(kernel_spread) ? kernel_spread : 1.0;
    double bs = isfinite(baseline_spread) ? baseline_spread : 1.0;
    double noise = 2.0 * sqrt(ks * ks + bs * bs);
    return noise > floor_margin ? noise : floor_margin;
}

void sml_decide(const sml_claim *claim, const sml_decision_row *rows, size_t n, double margin,
                sml_decision *out, sml_row_outcome *outcome) {
    memset(out, 0, sizeof *out);
    out->worst_speedup = INFINITY;
    out->best_speedup = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const sml_decision_row *r = &rows[i];
        sml_row_outcome o = SML_ROW_NOT_COUNTED;
        if (claim && claim->baseline && sml_shape_in_class(r->cols, claim->shapes)) {
            if (!r->kernel_ok) {
                /* A wrong kernel's time never counts as a win, however fast. */
                o = SML_ROW_LOSS;
                out->wrong++;
            } else if (!r->baseline_ok || !(r->speedup > 0) || !isfinite(r->speedup)) {
                out->no_baseline++;
            } else {
                /* Noise can hide a miss as well as a win: it never turns a ratio below the
                 * claim (less the fixed floor) into a pass, only into UNCLEAR. */
                double m = sml_row_margin(margin, r->kernel_spread, r->baseline_spread);
                if (r->speedup >= claim->min_speedup * (1.0 - margin))
                    o = SML_ROW_MEETS;
                else if (r->speedup >= claim->min_speedup * (1.0 - m))
                    o = SML_ROW_UNCLEAR;
                else if (r->speedup > 1.0 + m)
                    o = SML_ROW_ABOVE_PARITY;
                else
                    o = SML_ROW_LOSS;
                if (r->speedup < out->worst_speedup) out->worst_speedup = r->speedup;
                if (r->speedup > out->best_speedup) out->best_speedup = r->speedup;
            }
        }
        if (o == SML_ROW_MEETS)
            out->meets++;
        else if (o == SML_ROW_ABOVE_PARITY)
            out->above_parity++;
        else if (o == SML_ROW_LOSS)
            out->losses++;
        else if (o == SML_ROW_UNCLEAR)
            out->unclear++;
        if (o != SML_ROW_NOT_COUNTED) out->counted++;
        if (outcome) outcome[i] = o;
    }
    if (!claim || !claim->baseline || out->counted == 0)
        out->status = SML_DECISION_MEASURED;
    else if (out->meets == out->counted)
        out->status = SML_DECISION_SUPPORTED;
    else if (out->meets == 0 && out->above_parity == 0 && out->unclear == 0)
        out->status = SML_DECISION_REJECTED;
    else
        out->status = SML_DECISION_CAVEATED;
    if (!isfinite(out->worst_speedup)) out->worst_speedup = NAN;
    if (!isfinite(out->best_speedup)) out->best_speedup = NAN;
}

const char *sml_compare_name(sml_compare_result r) {
    switch (r) {
    case SML_CMP_SAME: return "SAME";
    case SML_CMP_FAST: return "FAST";
    case SML_CMP_SLOW: return "SLOW";
    case SML_CMP_UNCLEAR: return "UNCLEAR";
    }
    return "?";
}

sml_compare_result sml_compare_verdict(double old_ms, double old_spread, double new_ms,
                                       double new_spread, double threshold) {
    if (!(old_ms > 0) || !(new_ms > 0) || !isfinite(old_ms) || !isfinite(new_ms))
        return SML_CMP_UNCLEAR;
    double os = isfinite(old_spread) && old_spread >= 0 ? old_spread : 1.0;
    double ns = isfinite(new_spread) && new_spread >= 0 ? new_spread : 1.0;
    /* Both runs' spreads combine like independent errors; a change must clear twice that
     * (and the threshold) to count, and sameness needs the noise itself under the threshold. */
    double noise = sqrt(os * os + ns * ns);
    double change = new_ms / old_ms - 1.0;
    double bar = 2.0 * noise > threshold ? 2.0 * noise : threshold;
    if (fabs(change) > bar) return change > 0 ? SML_CMP_SLOW : SML_CMP_FAST;
    if (fabs(change) <= threshold && noise <= threshold) return SML_CMP_SAME;
    return SML_CMP_UNCLEAR;
}

int sml_margin_ok(double m) { return m >= 0 && m <= SML_MAX_MARGIN; }
