/* summary.c: the edge-shape harness's closing table: per kernel and dtype the cases, fails,
 * cases within a declared deviation only, refusals and worst errors, then one line per kernel
 * with such cases, naming its declaration. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "edge/harness.h"

/* One line per kernel with cases within its declared deviation only: how often, how far
 * (the largest error excused), and the declaration. */
static void known_lines(const sml_edge_ctx *c) {
    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS; ki++) {
        const sml_kernel *k = sml_kernel_at(ki);
        char worst[256] = "";
        int64_t n = 0;
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            const sml_edge_cell *s = &c->stats[ki][dt];
            if (!s->known) continue;
            n += s->known;
            size_t len = strlen(worst);
            snprintf(worst + len, sizeof worst - len,
                     "%s%s %" PRId64 " cases, largest excused %.3g ulp / %.3g x bound",
                     len ? "; " : "", sml_dtype_name((sml_dtype)dt), s->known, s->known_ulps,
                     s->known_ratio);
        }
        char dev[512];
        sml_dev_describe(k->deviation, dev, sizeof dev);
        if (n)
            printf("WITHIN DECLARED DEVIATION %s: %s: %" PRId64
                   " cases outside the contract, every miss within its declared deviation (%s): "
                   "%s\n",
                   c->tally.name, k->name, n, dev, worst);
        else if (k->known_deviation && !sml_dev_declared(k->deviation) &&
                 sml_edge_kernel_selected(c, ki, k))
            printf("note %s: %s: %s\n", c->tally.name, k->name,
                   sml_dev_words_only_note(k->known_deviation, dev, sizeof dev));
    }
}

void sml_edge_summary(const sml_edge_ctx *c) {
    printf("%-10s %-5s %8s %6s %6s %8s %12s %10s\n", "kernel", "dtype", "cases", "fails", "within",
           "refused", "worst_ratio", "worst_ulps");
    int64_t known_total = 0;
    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS; ki++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            const sml_edge_cell *s = &c->stats[ki][dt];
            if (!s->cases && !s->refused) continue;
            printf("%-10s %-5s %8" PRId64 " %6" PRId64 " %6" PRId64 " %8" PRId64 " %12.4g %10.4g\n",
                   sml_kernel_at(ki)->name, sml_dtype_name((sml_dtype)dt), s->cases, s->fails,
                   s->known, s->refused, s->worst_ratio, s->worst_ulps);
            known_total += s->known;
        }
    known_lines(c);
    if (known_total)
        printf("%s: of the cases passed below, %" PRId64 " passed within a declared deviation "
               "only (--strict holds them to the contract itself)\n",
               c->tally.name, known_total);
}
