/* bands.c: measured cells into a plan table's bands (tune.h, sml_tune_bands). Pure: no GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "tune/tune.h"

static int by_cell(const void *a, const void *b) {
    const sml_tune_cell *x = a, *y = b;
    if (x->op != y->op) return x->op < y->op ? -1 : 1;
    if (x->dtype != y->dtype) return x->dtype < y->dtype ? -1 : 1;
    if (x->cols != y->cols) return x->cols < y->cols ? -1 : 1;
    return x->rows < y->rows ? -1 : x->rows > y->rows;
}

/* The last value of the band of a below the geometric midpoint to b (a < b). */
static int64_t mid(int64_t a, int64_t b) {
    int64_t m = (int64_t)floor(sqrt((double)a * (double)b));
    if (m < a) m = a;
    if (m >= b) m = b - 1;
    return m;
}

static int same_plan(const sml_plan *a, const sml_plan *b) {
    return a->family == b->family && a->threads == b->threads && a->K == b->K && a->R == b->R &&
           a->blocks == b->blocks && a->C == b->C && a->stages == b->stages &&
           a->slices == b->slices;
}

/* The row bands of the cells c[0..k) of one column count: entries e[0..k). */
static void row_bands(const sml_tune_cell *c, size_t k, sml_plan_entry *e) {
    for (size_t i = 0; i < k; i++) {
        e[i].op = c[i].op;
        e[i].dtype = c[i].dtype;
        e[i].plan = c[i].best;
        e[i].line = 0;
        e[i].rows_lo = i ? mid(c[i - 1].rows, c[i].rows) + 1 : 1;
        e[i].rows_hi = i + 1 < k ? mid(c[i].rows, c[i + 1].rows) : SML_PLAN_MAX_BAND;
    }
}

/* Whether the row bands of two column groups (k entries each) say the same. */
static int same_rows(const sml_plan_entry *a, const sml_plan_entry *b, size_t k) {
    for (size_t i = 0; i < k; i++)
        if (a[i].rows_lo != b[i].rows_lo || a[i].rows_hi != b[i].rows_hi ||
            !same_plan(&a[i].plan, &b[i].plan))
            return 0;
    return 1;
}

sml_status sml_tune_bands(const sml_tune_cell *cells, size_t n, const sml_plan_key *key,
                          sml_plan_table *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    sml_tune_cell *c = malloc((n ? n : 1) * sizeof *c);
    sml_plan_entry *e = malloc((n ? n : 1) * sizeof *e);
    if (!c || !e) {
        free(c);
        free(e);
        return sml_errorf(SML_ERR_OUT_OF_MEMORY, err, errlen, "out of memory");
    }
    memcpy(c, cells, n * sizeof *c);
    qsort(c, n, sizeof *c, by_cell);
    size_t ne = 0, prev = 0, prevk = 0; /* the last group emitted: e[prev .. prev + prevk) */
    for (size_t i = 0; i < n;) {
        size_t k = 1; /* cells of this op, dtype and column count */
        while (i + k < n && c[i + k].op == c[i].op && c[i + k].dtype == c[i].dtype &&
               c[i + k].cols == c[i].cols)
            k++;
        const int first = !i || c[i - 1].op != c[i].op || c[i - 1].dtype != c[i].dtype;
        const int last = i + k == n || c[i + k].op != c[i].op || c[i + k].dtype != c[i].dtype;
        const int64_t lo = first ? c[i].cols : mid(c[i - 1].cols, c[i].cols) + 1;
        const int64_t hi = last ? c[i].cols : mid(c[i].cols, c[i + k].cols);
        row_bands(&c[i], k, &e[ne]);
        if (!first && prevk == k && same_rows(&e[prev], &e[ne], k)) {
            for (size_t j = 0; j < k; j++) e[prev + j].cols_hi = hi; /* the band grows */
        } else {
            for (size_t j = 0; j < k; j++) {
                e[ne + j].cols_lo = lo;
                e[ne + j].cols_hi = hi;
            }
            prev = ne;
            prevk = k;
            ne += k;
        }
        i += k;
    }
    free(c);
    /* Sorted by op, dtype, cols, rows already; the loader's own checks make the index. */
    return sml_plan_table_adopt(out, key, e, ne, err, errlen);
}
