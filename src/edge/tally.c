/* tally.c: the edge-shape harness's count of checks, and the lines it prints for them, in the
 * form every test of the project prints ("FAIL <name>: ...", "  reproduce: ...",
 * "N passed, N failed"). */
#include <stdarg.h>
#include <stdio.h>

#include "edge/harness.h"

void sml_edge_tally_pass(sml_edge_tally *t) { t->passed++; }

void sml_edge_tally_fail(sml_edge_tally *t, const char *reproduce, const char *fmt, ...) {
    va_list ap;
    t->failed++;
    printf("FAIL %s: ", t->name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n  reproduce: %s\n", reproduce ? reproduce : "(rerun the harness)");
    fflush(stdout);
}

int sml_edge_tally_finish(const sml_edge_tally *t) {
    if (t->skipped)
        printf("%s: %lld passed, %lld failed, %lld skipped\n", t->name, (long long)t->passed,
               (long long)t->failed, (long long)t->skipped);
    else
        printf("%s: %lld passed, %lld failed\n", t->name, (long long)t->passed,
               (long long)t->failed);
    return t->failed ? 1 : 0;
}
