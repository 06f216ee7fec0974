/* gen.c: shape and value generators. Shapes aim at the places kernels break: dispatch
 * thresholds and vector widths +-1, powers of two, primes, long rows, more rows than a
 * 1-D grid limit, padded strides, misaligned bases. Values aim at the places the
 * arithmetic breaks: exp overflow and underflow, the top of each dtype's range, huge
 * dynamic range, subnormals and -0, -inf masks, NaN and +inf. Every value is rounded to
 * the case's dtype (after clamping finite draws to its range), so a dtype only ever sees
 * values it can represent. */
#include "prop/gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/dtype.h"
#include "prop/props.h"
#include "reference/reference.h"

/* The column counts every run treats as edges, beyond the registry's own limits (every
 * kernel's min_cols and max_cols +-1) and the auto dispatcher's thresholds +-1 (asked of the
 * core library, sml_auto_col_thresholds; kernels/auto_dispatch.h keeps them). A kernel that switches
 * paths at some other row length adds it here: one place, so the generator, the docs and
 * the tests agree. */
static const int64_t EDGE_COLS[] = {
    1,      2,      3,      4,      5,      6,       7,       8,       9,       15,     16,
    17,     31,     32,     33,     63,     64,      65,      127,     128,     129,    255,
    256,    257,    511,    512,    513,    1000,    1023,    1024,    1025,    2047,   2048,
    2049,   3000,   4095,   4096,   4097,   8191,    8192,    8193,    12345,   16383,  16384,
    16385,  32767,  32768,  32769,  65535,  65536,   65537,   131071,  131072,  131073, 262143,
    262144, 262145, 524287, 524288, 524289, 1048575, 1048576, 1048577, 1048579,
};
/* Row counts around the 65,535 limit of a grid's y and z dimensions. */
static const int64_t EDGE_ROWS[] = {65535, 65536, 65537, 131073};

enum {
    FAM_NORMAL,
    FAM_UNIFORM,
    FAM_INTEGER,
    FAM_EQUAL,
    FAM_DOMINANT,
    FAM_TOP,
    FAM_OVERFLOW,
    FAM_SPREAD,
    FAM_DYNAMIC,
    FAM_SUBNORMAL,
    FAM_RAMP,
    FAM_COUNT
};
static const char *const FAM_NAMES[FAM_COUNT] = {
    "normal",        "uniform",     "integer",       "equal",     "dominant", "dtype_top",
    "exp_threshold", "wide_spread", "dynamic_range", "subnormal", "ramp"};
/* How often each family is drawn (per mille of the total below). */
static const int FAM_WEIGHT[FAM_COUNT] = {210, 90, 140, 50, 90, 50, 100, 80, 80, 80, 60};

int sml_prop_family_count(void) { return FAM_COUNT; }
const char *sml_prop_family_name(int f) { return f >= 0 && f < FAM_COUNT ? FAM_NAMES[f] : "?"; }
int sml_prop_family_find(const char *name) {
    for (int f = 0; name && f < FAM_COUNT; f++)
        if (!strcmp(FAM_NAMES[f], name)) return f;
    return -1;
}

static double unit(sml_rng *r) { return sml_rng_unit(r); }
static double uni(sml_rng *r, double a, double b) { return a + (b - a) * unit(r); }
static int64_t below(sml_rng *r, int64_t n) {
    return n <= 1 ? 0 : (int64_t)sml_rng_below(r, (uint64_t)n);
}
static int chance(sml_rng *r, double p) { return unit(r) < p; }
/* Log-uniform integer in [lo, hi]. */
static int64_t log_uniform(sml_rng *r, int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    double v = exp(uni(r, log((double)lo), log((double)hi + 1.0)));
    int64_t n = (int64_t)v;
    return n < lo ? lo : n > hi ? hi : n;
}

/* Clamp a finite draw into dt's range, then round to dt. */
static double fit(sml_dtype dt, double v) {
    if (isfinite(v)) {
        double top = sml_dtype_max(dt);
        if (v > top) v = top;
        if (v < -top) v = -top;
    }
    return sml_round_to(dt, v);
}

static int pick_family(sml_rng *r) {
    int total = 0;
    for (int i = 0; i < FAM_COUNT; i++) total += FAM_WEIGHT[i];
    int64_t t = below(r, total);
    for (int i = 0; i < FAM_COUNT; i++) {
        if (t < FAM_WEIGHT[i]) return i;
        t -= FAM_WEIGHT[i];
    }
    return FAM_NORMAL;
}

/* exp thresholds: fp16's overflow (exp(11.09) = 65504) and normal / subnormal limits, fp32's
 * (and bf16's) overflow at 88.72 and underflow near -87.3 and -103.3, double's at 709.78. */
static const double EXP_EDGES[] = {11.0898664,  11.0,        11.5,      -9.70406,
                                   -17.32868,   88.7228391,  88.0,      89.5,
                                   -87.3365448, -103.278929, 709.782712};

/* Finite values of row clamped into dt's range: what fit does before it rounds. Storing the
 * clamped row (sml_store_n rounds each value as it stores it) stores exactly what storing the
 * fitted row did, rounding being idempotent (NaN included: every NaN stores as the dtype's
 * quiet NaN of its sign), without widening each value back. */
static void clamp_row(sml_dtype dt, double *row, int64_t n) {
    double top = sml_dtype_max(dt);
    for (int64_t i = 0; i < n; i++) {
        double v = row[i];
        if (isfinite(v)) row[i] = v > top ? top : v < -top ? -top : v;
    }
}

/* sml_prop_gen_logits but for the final fit (clamp_row and a store do it). */
static void gen_logits_unfit(sml_rng *r, sml_dtype dt, int family, double *row, int64_t n,
                             char *name, size_t name_n) {
    if (family < 0 || family >= FAM_COUNT) family = pick_family(r);
    if (name && name_n) snprintf(name, name_n, "%s", FAM_NAMES[family]);
    double top = sml_dtype_max(dt), tiny = sml_dtype_min_normal(dt);
    switch (family) {
    case FAM_NORMAL: {
        double sigma = pow(10.0, uni(r, -3.0, 4.0)), mu = 0.0;
        double u = unit(r);
        if (u < 0.3)
            mu = sigma * 3.0 * sml_rng_normal(r);
        else if (u < 0.5)
            mu = uni(r, -100.0, 100.0);
        else if (u < 0.6)
            mu = uni(r, -1e4, 1e4);
        for (int64_t i = 0; i < n; i++) row[i] = mu + sigma * sml_rng_normal(r);
        break;
    }
    case FAM_UNIFORM: {
        double lo = uni(r, -1.0, 1.0) * pow(10.0, uni(r, -2.0, 4.0));
        double width = pow(10.0, uni(r, -3.0, 4.3));
        for (int64_t i = 0; i < n; i++) row[i] = lo + width * unit(r);
        break;
    }
    case FAM_INTEGER: {
        static const double K[] = {1, 2, 5, 10, 50, 100, 1000, 30000};
        double k = K[below(r, sizeof K / sizeof K[0])];
        double base = chance(r, 0.3) ? floor(uni(r, -k, k)) : 0.0;
        for (int64_t i = 0; i < n; i++) row[i] = base + floor(uni(r, -k, k + 1.0));
        break;
    }
    case FAM_EQUAL: {
        double choices[] = {0.0,   1.0,   -1.0,
                            -0.0,  top,   -top,
                            88.72, 11.09, sml_rng_normal(r) * pow(10.0, uni(r, -3.0, 4.0))};
        double v = choices[below(r, sizeof choices / sizeof choices[0])];
        for (int64_t i = 0; i < n; i++) row[i] = v;
        break;
    }
    case FAM_DOMINANT: {
        static const double S[] = {0.1, 1.0, 3.0};
        double s = S[below(r, 3)];
        double d[] = {5.0, 20.0, 100.0, 1e3, 1e4, top};
        double D = d[below(r, sizeof d / sizeof d[0])];
        for (int64_t i = 0; i < n; i++) row[i] = s * sml_rng_normal(r);
        row[below(r, n)] += D;
        break;
    }
    case FAM_TOP: {
        double eps = sml_dtype_eps(dt);
        for (int64_t i = 0; i < n; i++) {
            double u = unit(r);
            if (u < 0.25)
                row[i] = top;
            else if (u < 0.45)
                row[i] = top * (1.0 - eps * (double)(1 + below(r, 4)));
            else if (u < 0.55)
                row[i] = top / 2.0;
            else if (u < 0.75)
                row[i] = -top;
            else
                row[i] = sml_rng_normal(r);
        }
        break;
    }
    case FAM_OVERFLOW: {
        double t = EXP_EDGES[below(r, sizeof EXP_EDGES / sizeof EXP_EDGES[0])];
        static const double W[] = {0.01, 0.5, 3.0};
        double w = W[below(r, 3)];
        int half = chance(r, 0.3); /* half the row near t, the rest near 0 */
        for (int64_t i = 0; i < n; i++)
            row[i] = (half && chance(r, 0.5)) ? sml_rng_normal(r) : t + uni(r, -w, w);
        break;
    }
    case FAM_SPREAD: {
        static const double S[] = {20.0, 90.0, 110.0, 200.0, 1000.0};
        double s = S[below(r, sizeof S / sizeof S[0])];
        double m = 10.0 * sml_rng_normal(r);
        for (int64_t i = 0; i < n; i++) row[i] = m - uni(r, 0.0, s);
        row[below(r, n)] = m;
        break;
    }
    case FAM_DYNAMIC: {
        double lo = log10(tiny) - 2.0, hi = log10(top);
        for (int64_t i = 0; i < n; i++)
            row[i] = (chance(r, 0.5) ? -1.0 : 1.0) * pow(10.0, uni(r, lo, hi));
        break;
    }
    case FAM_SUBNORMAL: {
        for (int64_t i = 0; i < n; i++) {
            double u = unit(r);
            if (u < 0.35)
                row[i] = (chance(r, 0.5) ? -1.0 : 1.0) * tiny * unit(r);
            else if (u < 0.5)
                row[i] = -0.0;
            else if (u < 0.6)
                row[i] = 0.0;
            else if (u < 0.7)
                row[i] = tiny;
            else
                row[i] = sml_rng_normal(r) * (chance(r, 0.5) ? 1.0 : 1e-3);
        }
        break;
    }
    case FAM_RAMP: {
        /* Ascending (or descending) rows: an online kernel's max rises at every element,
         * so its sum is rescaled at every step. */
        double step = pow(10.0, uni(r, -4.0, 1.0)) * (chance(r, 0.75) ? 1.0 : -1.0);
        double start = chance(r, 0.5) ? 0.0 : uni(r, -100.0, 100.0);
        for (int64_t i = 0; i < n; i++) row[i] = start + step * (double)i;
        break;
    }
    default: break;
    }
}

void sml_prop_gen_logits(sml_rng *r, sml_dtype dt, int family, double *row, int64_t n, char *name,
                         size_t name_n) {
    gen_logits_unfit(r, dt, family, row, n, name, name_n);
    for (int64_t i = 0; i < n; i++) row[i] = fit(dt, row[i]);
}

/* -inf masks over a row: scattered, a leading or trailing block, all but one, all. */
static const char *mask_row(sml_rng *r, double *row, int64_t n, int kind) {
    switch (kind) {
    case 0: {
        static const double P[] = {0.05, 0.5, 0.95};
        double p = P[below(r, 3)];
        for (int64_t i = 0; i < n; i++)
            if (chance(r, p)) row[i] = -INFINITY;
        return "mask_scattered";
    }
    case 1: {
        int64_t k = 1 + below(r, n);
        for (int64_t i = 0; i < k; i++) row[i] = -INFINITY;
        return "mask_leading";
    }
    case 2: {
        int64_t k = 1 + below(r, n);
        for (int64_t i = n - k; i < n; i++) row[i] = -INFINITY;
        return "mask_trailing";
    }
    case 3: {
        int64_t keep = below(r, n);
        for (int64_t i = 0; i < n; i++)
            if (i != keep) row[i] = -INFINITY;
        return "mask_all_but_one";
    }
    default:
        for (int64_t i = 0; i < n; i++) row[i] = -INFINITY;
        return "mask_all";
    }
}

static void inject_specials(sml_rng *r, double *row, int64_t n) {
    int64_t m = 1 + below(r, n < 3 ? n : 3);
    for (int64_t k = 0; k < m; k++) {
        double u = unit(r);
        row[below(r, n)] = u < 0.45 ? NAN : u < 0.8 ? INFINITY : -INFINITY;
    }
}

/* dy for the backward ops: ordinary gradients, and the shapes cross-entropy produces; not yet
 * fitted to dt (clamp_row and a store do it). */
static void gen_dy(sml_rng *r, sml_dtype dt, int kind, double *row, int64_t n) {
    switch (kind) {
    case 0: {
        double s = pow(10.0, uni(r, -3.0, 3.0));
        for (int64_t i = 0; i < n; i++) row[i] = s * sml_rng_normal(r);
        break;
    }
    case 1:
        for (int64_t i = 0; i < n; i++) row[i] = floor(uni(r, -10.0, 11.0));
        break;
    case 2: {
        double c = chance(r, 0.5) ? 1.0 : sml_rng_normal(r);
        for (int64_t i = 0; i < n; i++) row[i] = c;
        break;
    }
    case 3: {
        for (int64_t i = 0; i < n; i++) row[i] = 0.0;
        row[below(r, n)] = chance(r, 0.5) ? -1.0 : -pow(10.0, uni(r, 0.0, 4.0));
        break;
    }
    default: {
        double s = pow(10.0, uni(r, 3.0, log10(sml_dtype_max(dt))));
        for (int64_t i = 0; i < n; i++) row[i] = s * sml_rng_normal(r);
        /* A quarter of these rows: the dtype's largest values of both signs and one infinity,
         * whose exact sum is that infinity; an fp32 partial sum of two large terms of the
         * other sign overflows first, and a sum that meets the two infinities gives NaN
         * (the sum's class, docs/NUMERICS.md section 2). */
        if (chance(r, 0.25)) {
            double top = sml_dtype_max(dt);
            for (int64_t i = 0; i < n; i++) row[i] = chance(r, 0.5) ? top : -top;
            row[below(r, n)] = chance(r, 0.5) ? INFINITY : -INFINITY;
        }
        break;
    }
    }
    if (chance(r, 0.01)) inject_specials(r, row, n);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

size_t sml_prop_edge_cols(const sml_kernel *k, int64_t *out, size_t cap) {
    int64_t tmp[256];
    size_t n = 0;
    for (size_t i = 0; i < sizeof EDGE_COLS / sizeof EDGE_COLS[0] && n < 256; i++)
        tmp[n++] = EDGE_COLS[i];
    int64_t th[16];
    const size_t nth = sml_auto_col_thresholds(th, sizeof th / sizeof th[0]);
    for (size_t i = 0; i < nth && i < sizeof th / sizeof th[0]; i++)
        for (int d = -1; d <= 1 && n < 256; d++) tmp[n++] = th[i] + d;
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *r = sml_kernel_at(i);
        for (int d = -1; d <= 1 && r->max_cols > 0 && n < 256; d++) tmp[n++] = r->max_cols + d;
        for (int d = -1; d <= 1 && r->min_cols > 1 && n < 256; d++) tmp[n++] = r->min_cols + d;
    }
    qsort(tmp, n, sizeof tmp[0], cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (tmp[i] < 1 || (i > 0 && tmp[i] == tmp[i - 1])) continue;
        if (k && (tmp[i] < k->min_cols || (k->max_cols > 0 && tmp[i] > k->max_cols))) continue;
        if (m < cap) out[m] = tmp[i];
        m++;
    }
    return m;
}

static int is_prime(int64_t n) {
    if (n < 2) return 0;
    for (int64_t d = 2; d * d <= n; d++)
        if (n % d == 0) return 0;
    return 1;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* An edge column count in [lo, hi], or -1 if none. */
static int64_t pick_edge(sml_rng *r, const sml_kernel *k, int64_t lo, int64_t hi) {
    int64_t e[256];
    size_t n = sml_prop_edge_cols(k, e, 256);
    if (n > 256) n = 256;
    size_t a = 0, b = 0;
    while (a < n && e[a] < lo) a++;
    b = a;
    while (b < n && e[b] <= hi) b++;
    if (b == a) return -1;
    return e[a + (size_t)below(r, (int64_t)(b - a))];
}

/* Tall cases. A kernel that keeps its blocks or clusters resident and walks the rows
 * (split, coop) runs the code that carries a next row only when there are more rows than
 * resident blocks: on 132 SMs, 1,056 at 8 blocks an SM, 2,112 at 16 (split's 64-thread blocks
 * on rows up to 8,192 columns), and a few dozen clusters of 8 or 16 blocks on long rows.
 * Split's unbounded whole steps need six 16-byte chunks a thread as well: 1,536 fp32 or 3,072
 * 16-bit columns at 64 threads. Ordinary and big draws almost never give both (two bugs planted
 * there pass 30,000 ordinary cases; tall cases found split's first row of each cluster
 * accumulated in other tiles than the rest, so a row's bits depended on its place). A
 * tall case is one of three, columns and rows log-uniform in their ranges, within the cap
 * (the GPU profile's 2^23 in brackets):
 *   40%: more than 2,112 rows of TALL_MIN_COLS up to what the cap leaves them (3,969);
 *   40%: more than 1,056 rows of the longer columns beyond that (3,970 to 7,936);
 *   20%: 33 to 128 rows of 65,536 columns up to what the cap leaves them (254,200 at 33 rows):
 *        more rows than clusters of 8 or 16 fit, on rows cut over them. */
#define TALL_MIN_COLS 1536

static void draw_tall(sml_rng *r, int64_t kmin, int64_t kmax, const sml_prop_sizes *sz,
                      int64_t *rows, int64_t *cols) {
    const int64_t cap = sz->tall_max_elems, many = 2113, some = 1057;
    const double u = unit(r);
    int64_t min_rows, max_rows = INT64_MAX, lo, hi;
    if (u < 0.4) {
        min_rows = many, lo = TALL_MIN_COLS, hi = cap / many;
    } else if (u < 0.8) {
        min_rows = some, lo = cap / many + 1, hi = cap / some;
    } else {
        min_rows = 33, max_rows = 128, lo = (int64_t)1 << 16, hi = cap / 33;
    }
    hi = clamp64(hi, kmin, kmax);
    *cols = log_uniform(r, clamp64(lo, kmin, hi), hi);
    *rows = log_uniform(r, min_rows, clamp64(cap / *cols, min_rows, max_rows));
}

static void draw_shape(sml_rng *r, const sml_kernel *k, int level, const sml_prop_sizes *sz,
                       sml_prop_case *c) {
    double f = level / 100.0;
    int64_t kmin = k->min_cols > 0 ? k->min_cols : 1;
    int64_t kmax = k->max_cols > 0 ? k->max_cols : INT64_MAX;
    if (sz->max_cols > 0 && kmax > sz->max_cols) kmax = sz->max_cols;
    double ratio = (double)sz->small_max_elems / (double)sz->small_min_elems;
    int64_t cap = (int64_t)((double)sz->small_min_elems * pow(ratio, f));
    /* Drawn only when the profile has tall cases, so the CI profile's sequence is unchanged. */
    int tall = sz->tall_prob > 0.0 && sz->tall_max_elems >= 2113 * TALL_MIN_COLS &&
               chance(r, sz->tall_prob);
    int big = !tall && chance(r, sz->big_prob * f) && sz->big_max_elems > sz->small_max_elems;
    int64_t rows = 1, cols = 1;
    if (tall) {
        draw_tall(r, kmin, kmax, sz, &rows, &cols);
    } else if (big) {
        cap = sz->big_max_elems;
        double u = unit(r);
        if (u < 0.5) { /* a long row, often exactly at an edge */
            int64_t lo = sz->small_max_elems + 1, hi = kmax < cap ? kmax : cap;
            int64_t e = chance(r, 0.5) ? pick_edge(r, k, lo, hi) : -1;
            cols = e > 0 ? e : log_uniform(r, lo < hi ? lo : hi, hi);
            rows = 1 + below(r, clamp64(cap / cols, 1, 4));
        } else if (u < 0.75) { /* more rows than a grid dimension's 65,535 */
            rows = EDGE_ROWS[below(r, sizeof EDGE_ROWS / sizeof EDGE_ROWS[0])];
            cols = 1 + below(r, clamp64(cap / rows, 1, 8));
        } else { /* just big */
            cols = log_uniform(r, 1, clamp64(cap, 1, 4096));
            rows = log_uniform(r, 1, clamp64(cap / (cols < kmax ? cols : kmax), 1, INT64_MAX));
        }
    } else {
        int64_t hi = cap < kmax ? cap : kmax;
        double u = unit(r);
        if (u < 0.35)
            cols = 1 + below(r, hi < 64 ? hi : 64);
        else if (u < 0.5) {
            int64_t e = pick_edge(r, k, 1, hi);
            cols = e > 0 ? e : 1 + below(r, hi);
        } else if (u < 0.65) {
            int lg = 0;
            while (((int64_t)2 << lg) <= hi && lg < 62) lg++;
            cols = (int64_t)1 << below(r, lg + 1);
        } else if (u < 0.75) {
            cols = 1 + below(r, hi);
            while (!is_prime(cols) && cols < hi) cols++;
        } else {
            cols = log_uniform(r, 1, hi);
        }
        int64_t rmax = clamp64(cap / (cols > 0 ? cols : 1), 1, INT64_MAX);
        u = unit(r);
        if (u < 0.4)
            rows = 1;
        else if (u < 0.7)
            rows = 1 + below(r, rmax < 8 ? rmax : 8);
        else
            rows = log_uniform(r, 1, rmax);
    }
    cols = clamp64(cols, kmin, kmax);
    if (rows < 1) rows = 1;
    c->tall = tall;
    c->rows = rows;
    c->cols = cols;
    c->ld = cols;
    if (chance(r, 0.3)) {
        static const int64_t PAD[] = {1, 2, 3, 4, 5, 7, 8, 16, 31, 64};
        c->ld =
            cols + (chance(r, 0.8) ? PAD[below(r, sizeof PAD / sizeof PAD[0])] : 1 + below(r, 100));
    }
    c->offset = chance(r, 0.25) ? 1 + below(r, 15) : 0;
    c->inplace = !sml_op_is_backward(c->op) && chance(r, 0.12);
}

/* The first draws of a case, from a fresh generator: its shape. */
static void begin_case(sml_rng *r, const sml_kernel *k, sml_op op, sml_dtype dt, uint64_t case_seed,
                       int level, const sml_prop_sizes *sz, sml_prop_case *c) {
    memset(c, 0, sizeof *c);
    sml_rng_seed(r, case_seed);
    c->op = op;
    c->dtype = dt;
    c->seed = case_seed;
    if (level < 0) level = 0;
    if (level > 100) level = 100;
    draw_shape(r, k, level, sz, c);
}

void sml_prop_gen_shape(const sml_kernel *k, sml_op op, sml_dtype dt, uint64_t case_seed, int level,
                        const sml_prop_sizes *sz, sml_prop_case *c) {
    sml_rng r;
    begin_case(&r, k, op, dt, case_seed, level, sz, c);
}

sml_status sml_prop_gen_case(const sml_kernel *k, sml_op op, sml_dtype dt, uint64_t case_seed,
                             int level, const sml_prop_sizes *sz, sml_prop_case *c) {
    return sml_prop_gen_case_in(NULL, k, op, dt, case_seed, level, sz, c);
}

sml_status sml_prop_gen_case_in(sml_prop_pool *pool, const sml_kernel *k, sml_op op, sml_dtype dt,
                                uint64_t case_seed, int level, const sml_prop_sizes *sz,
                                sml_prop_case *c) {
    sml_rng r;
    begin_case(&r, k, op, dt, case_seed, level, sz, c);
    int64_t n = c->cols;
    int bwd = sml_op_is_backward(op);
    /* A row as drawn, and for backward ops the row's logits as stored and its y */
    size_t row_bytes = (size_t)n * (bwd ? 3 : 1) * sizeof(double);
    double *row;
    if (pool) {
        size_t bytes = (size_t)(c->rows * c->cols) * sml_dtype_size(dt);
        c->pooled = 1;
        c->x = sml_prop_pool_case_buf(pool, 0, bytes);
        c->dy = bwd ? sml_prop_pool_case_buf(pool, 1, bytes) : NULL;
        c->logits = bwd ? sml_prop_pool_case_buf(pool, 2, bytes) : NULL;
        row = sml_prop_pool_case_buf(pool, 3, row_bytes);
        if (!c->x || (bwd && (!c->dy || !c->logits)) || !row) {
            sml_prop_case_free(c);
            return SML_ERR_OUT_OF_MEMORY;
        }
    } else {
        sml_status s = sml_prop_case_alloc(c);
        if (s != SML_OK) return s;
        row = malloc(row_bytes);
        if (!row) {
            sml_prop_case_free(c);
            return SML_ERR_OUT_OF_MEMORY;
        }
    }
    double *lrow = bwd ? row + n : NULL, *yrow = bwd ? row + 2 * n : NULL;
    void *src = sml_prop_case_source(c);
    int mixed = chance(&r, 0.3);
    int family = pick_family(&r);
    int masked = chance(&r, 0.15), mask_kind = (int)below(&r, 5);
    int specials = chance(&r, 0.07);
    char fam[32];
    const char *mask_name = NULL;
    snprintf(c->family, sizeof c->family, "%s", mixed ? "mixed" : FAM_NAMES[family]);
    for (int64_t i = 0; i < c->rows; i++) {
        /* The values fitted to dt as they are stored: masks and specials, which are not
         * finite, are what fitting leaves them. */
        gen_logits_unfit(&r, dt, mixed ? -1 : family, row, n, fam, sizeof fam);
        if (masked && chance(&r, 0.7))
            mask_name = mask_row(&r, row, n,
                                 mask_kind == 0 && chance(&r, 0.2) ? (int)below(&r, 5) : mask_kind);
        if (specials && chance(&r, 0.3)) inject_specials(&r, row, n);
        clamp_row(dt, row, n);
        sml_store_n(dt, src, i * n, n, row);
        if (bwd) {
            /* y := the reference forward of the logits as stored, rounded to dt: what
             * sml_prop_case_derive_y computes for the whole case, a row at a time (y draws
             * nothing from r) */
            sml_load_n(dt, src, i * n, n, lrow);
            sml_ref_rows(sml_prop_forward_of(op), 1, n, lrow, NULL, NULL, yrow);
            sml_store_n(dt, c->x, i * n, n, yrow);
        }
    }
    if (mask_name) {
        size_t L = strlen(c->family);
        snprintf(c->family + L, sizeof c->family - L, "+%s", mask_name);
    }
    if (specials) {
        size_t L = strlen(c->family);
        snprintf(c->family + L, sizeof c->family - L, "+nan_inf");
    }
    if (sml_op_is_backward(op)) {
        int kind = (int)below(&r, 20);
        kind = kind < 10 ? 0 : kind < 13 ? 1 : kind < 15 ? 2 : kind < 18 ? 3 : 4;
        static const char *const DY[] = {"dy_normal", "dy_integer", "dy_const", "dy_onehot",
                                         "dy_huge"};
        for (int64_t i = 0; i < c->rows; i++) {
            gen_dy(&r, dt, kind, row, n);
            clamp_row(dt, row, n);
            sml_store_n(dt, c->dy, i * n, n, row);
        }
        size_t L = strlen(c->family);
        snprintf(c->family + L, sizeof c->family - L, "/%s", DY[kind]);
    }
    if (!pool) free(row);
    return SML_OK;
}
