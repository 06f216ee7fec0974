/* test_cpu_backends.c: the fp32 CPU backends (cpu_naive, cpu_online) pass the numerics
 * contract on rows of many lengths up to 2^20 columns, for every op, dtype and a range of
 * row shapes (peaked, flat, ascending, masked, at the top of the dtype's range). This shows
 * the contract's bounds are achievable in fp32, and prints how close the backends come. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/check.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "unit_case.h"

enum { KINDS = 9 };
static const char *const KIND_NAMES[KINDS] = {"normal(1)",  "normal(1e-3)",   "normal(30)",
                                              "wide range", "ascending ramp", "one dominant",
                                              "half -inf",  "top of range",   "integers"};

static double logit(sml_rng *r, sml_dtype dt, int kind, int64_t j) {
    double top = sml_dtype_max(dt);
    switch (kind) {
    case 0: return sml_rng_normal(r);
    case 1: return 1e-3 * sml_rng_normal(r);
    case 2: return 30.0 * sml_rng_normal(r);
    case 3: return fmax(-top, fmin(top, (dt == SML_F16 ? 5e3 : 1e4) * sml_rng_normal(r)));
    case 4: return (double)j * 1e-3;
    case 5: return j == 0 ? 12.0 : 0.0;
    case 6: return (sml_rng_u64(r) & 1) && j > 0 ? -INFINITY : 4.0 * sml_rng_normal(r);
    case 7: return top * (sml_rng_below(r, 4) ? 1.0 - 1e-3 * sml_rng_unit(r) : -1.0);
    default: return (double)((int64_t)sml_rng_below(r, 41) - 20);
    }
}

typedef struct worst {
    double ratio;
    char where[200];
} worst;

/* worst[backend][op][dtype] over the whole run, printed at the end. */
static worst WORST[2][SML_OP_COUNT][SML_DTYPE_COUNT];

static void one_case(unit_run *u, int64_t cols, sml_op op, sml_dtype dt, uint64_t seed) {
    sml_rng r;
    sml_rng_seed(&r, seed);
    int64_t rows = cols >= 65536 ? 1 : (int64_t)fmax(1.0, fmin(64.0, 65536.0 / (double)cols));
    int64_t ld = cols + (int64_t)sml_rng_below(&r, 2);
    size_t esz = sml_dtype_size(dt), bytes = (size_t)(rows * ld) * esz;
    void *x = malloc(bytes), *dy = malloc(bytes), *out = malloc(bytes);
    double *want = malloc((size_t)(rows * cols) * sizeof *want);
    int first_kind = (int)sml_rng_below(&r, KINDS);
    for (int64_t i = 0; i < rows; i++) {
        int kind = (first_kind + (int)i) % KINDS;
        for (int64_t j = 0; j < cols; j++) {
            sml_store(dt, x, i * ld + j, logit(&r, dt, kind, j));
            /* Half the rows: dy near a constant, so dy - dot cancels. */
            double d = (i & 1) ? 1.0 + 1e-3 * sml_rng_normal(&r) : sml_rng_normal(&r);
            sml_store(dt, dy, i * ld + j, d);
        }
    }
    if (sml_op_is_backward(op)) { /* y: the rounded forward output of those logits */
        sml_op fwd = op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
        sml_ref_run(fwd, dt, rows, cols, ld, x, NULL, want);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) sml_store(dt, x, i * ld + j, want[i * cols + j]);
    }
    sml_ref_run(op, dt, rows, cols, ld, x, dy, want);
    sml_handle *h = NULL;
    sml_handle_create(&h);
    for (int b = 0; b < 2; b++) {
        const char *name = b ? "cpu_online" : "cpu_naive";
        memset(out, 0xFF, bytes);
        sml_problem p = {op, dt, rows, cols, ld, x, dy, out, NULL};
        sml_status s = sml_run(sml_kernel_find(name), h, &p);
        sml_check_report rep;
        if (s == SML_OK) s = sml_check_against(op, dt, rows, cols, ld, x, dy, want, out, &rep);
        if (s != SML_OK) {
            UNIT_EXPECT(u, 0, "%s: %s", name, sml_strerror(s));
            continue;
        }
        int kind = rep.worst_row >= 0 ? (first_kind + (int)rep.worst_row) % KINDS : 0;
        UNIT_EXPECT(u, rep.pass, "%s on %s rows: %s", name, KIND_NAMES[kind], rep.message);
        worst *w = &WORST[b][op][dt];
        if (rep.worst_ratio > w->ratio) {
            w->ratio = rep.worst_ratio;
            snprintf(w->where, sizeof w->where, "cols %lld, %s: %.3g ulp, rel %.3g",
                     (long long)cols, KIND_NAMES[kind], rep.worst_ulps, rep.worst_rel);
        }
    }
    sml_handle_destroy(h);
    free(x);
    free(dy);
    free(out);
    free(want);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_cpu_backends", argc, argv)) return 2;
    static const int64_t LENS[] = {1,  2,   3,   5,    16,   17,   31,   32,    33,
                                   63, 100, 257, 1000, 1024, 1025, 4097, 65536, 1 << 20};
    int64_t c = 0;
    uint64_t s;
    for (size_t li = 0; li < sizeof LENS / sizeof LENS[0]; li++)
        for (int op = 0; op < SML_OP_COUNT; op++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
                if (unit_case(&u, c, &s)) one_case(&u, LENS[li], (sml_op)op, (sml_dtype)dt, s);
    printf("worst error as a fraction of the contract's bound:\n");
    for (int b = 0; b < 2; b++)
        for (int op = 0; op < SML_OP_COUNT; op++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
                if (WORST[b][op][dt].where[0])
                    printf("  %-10s %-15s %-4s %.3f  (%s)\n", b ? "cpu_online" : "cpu_naive",
                           sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt),
                           WORST[b][op][dt].ratio, WORST[b][op][dt].where);
    return sml_tally_finish(&u.tally);
}
