/* test_special_values.c: docs/NUMERICS.md section 2, row by row, for the reference and
 * both CPU backends in every dtype. Each table row gives inputs and, per output element,
 * the class it must have: NaN, +-inf, an exact value, or "finite" (then the checker must
 * accept it against the reference). */
#include <math.h>
#include <string.h>

#include "reference/check.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "unit_case.h"

#define NI   (-INFINITY)
#define PI_  INFINITY
#define MAXN 4

enum { END = 0, IS_NAN, IS_POSINF, IS_NEGINF, IS_EXACT, IS_FINITE };

typedef struct expect {
    int kind;
    double value;
} expect;

typedef struct table_row {
    const char *what;
    sml_op op;
    int n;
    double x[MAXN], dy[MAXN];
    expect want[MAXN];
} table_row;

#define NAN_ \
    { IS_NAN, 0 }
#define FIN \
    { IS_FINITE, 0 }
#define EXACT(v) \
    { IS_EXACT, v }
#define PINF \
    { IS_POSINF, 0 }
#define NINF \
    { IS_NEGINF, 0 }

static const table_row TABLE[] = {
    /* forward: softmax */
    {"-inf logit gives 0", SML_SOFTMAX, 3, {1, NI, 2}, {0}, {FIN, EXACT(0), FIN}},
    {"leading -inf (online trap)", SML_SOFTMAX, 2, {NI, 3}, {0}, {EXACT(0), EXACT(1)}},
    {"all -inf but one",
     SML_SOFTMAX,
     4,
     {NI, NI, 7, NI},
     {0},
     {EXACT(0), EXACT(0), EXACT(1), EXACT(0)}},
    {"all -inf gives NaN", SML_SOFTMAX, 3, {NI, NI, NI}, {0}, {NAN_, NAN_, NAN_}},
    {"single -inf gives NaN", SML_SOFTMAX, 1, {NI}, {0}, {NAN_}},
    {"NaN poisons the row", SML_SOFTMAX, 3, {1, NAN, 2}, {0}, {NAN_, NAN_, NAN_}},
    {"NaN with -inf", SML_SOFTMAX, 2, {NAN, NI}, {0}, {NAN_, NAN_}},
    {"NaN first then finite", SML_SOFTMAX, 3, {NAN, 1, 2}, {0}, {NAN_, NAN_, NAN_}},
    {"+inf gives NaN row", SML_SOFTMAX, 3, {1, PI_, 2}, {0}, {NAN_, NAN_, NAN_}},
    {"two +inf", SML_SOFTMAX, 2, {PI_, PI_}, {0}, {NAN_, NAN_}},
    {"-inf and +inf", SML_SOFTMAX, 2, {NI, PI_}, {0}, {NAN_, NAN_}},
    {"-0 and +0", SML_SOFTMAX, 2, {-0.0, 0.0}, {0}, {EXACT(0.5), EXACT(0.5)}},
    {"single finite gives 1", SML_SOFTMAX, 1, {-3.5}, {0}, {EXACT(1)}},
    {"largest values", SML_SOFTMAX, 2, {60000, 60000}, {0}, {EXACT(0.5), EXACT(0.5)}},
    /* forward: log_softmax */
    {"-inf logit gives -inf", SML_LOG_SOFTMAX, 3, {1, NI, 2}, {0}, {FIN, NINF, FIN}},
    {"leading -inf (online trap)", SML_LOG_SOFTMAX, 2, {NI, 3}, {0}, {NINF, EXACT(0)}},
    {"all -inf but one", SML_LOG_SOFTMAX, 4, {NI, NI, 7, NI}, {0}, {NINF, NINF, EXACT(0), NINF}},
    {"all -inf gives NaN", SML_LOG_SOFTMAX, 3, {NI, NI, NI}, {0}, {NAN_, NAN_, NAN_}},
    {"NaN poisons the row", SML_LOG_SOFTMAX, 3, {1, NAN, 2}, {0}, {NAN_, NAN_, NAN_}},
    {"+inf gives NaN row", SML_LOG_SOFTMAX, 3, {1, PI_, 2}, {0}, {NAN_, NAN_, NAN_}},
    {"-inf and +inf", SML_LOG_SOFTMAX, 2, {NI, PI_}, {0}, {NAN_, NAN_}},
    {"single finite gives 0", SML_LOG_SOFTMAX, 1, {-3.5}, {0}, {EXACT(0)}},
    /* softmax_bwd: x holds y */
    {"NaN in dy", SML_SOFTMAX_BWD, 2, {0.25, 0.75}, {NAN, 1}, {NAN_, NAN_}},
    {"NaN in y", SML_SOFTMAX_BWD, 2, {NAN, 0.75}, {1, 1}, {NAN_, NAN_}},
    {"masked position gives 0",
     SML_SOFTMAX_BWD,
     3,
     {0, 0.5, 0.5},
     {5, 1, 3},
     {EXACT(0), EXACT(-0.5), EXACT(0.5)}},
    {"inf in dy", SML_SOFTMAX_BWD, 2, {0.25, 0.75}, {PI_, 1}, {NAN_, NINF}},
    {"inf in dy at y = 0", SML_SOFTMAX_BWD, 2, {0, 1}, {PI_, 1}, {NAN_, NAN_}},
    {"+inf and -inf in dy", SML_SOFTMAX_BWD, 2, {0.5, 0.5}, {PI_, NI}, {NAN_, NAN_}},
    {"-inf in dy, a zero y", SML_SOFTMAX_BWD, 3, {0.25, 0, 0.75}, {NI, 1, 2}, {NAN_, NAN_, PINF}},
    /* log_softmax_bwd: x holds y */
    {"NaN in dy", SML_LOG_SOFTMAX_BWD, 2, {-1.5, -0.25}, {NAN, 1}, {NAN_, NAN_}},
    {"NaN in y stays local", SML_LOG_SOFTMAX_BWD, 2, {NAN, -0.25}, {1, 2}, {NAN_, FIN}},
    {"masked position gives dy",
     SML_LOG_SOFTMAX_BWD,
     3,
     {NI, -0.75, -0.75},
     {5, 1, 3},
     {EXACT(5), FIN, FIN}},
    {"inf in dy", SML_LOG_SOFTMAX_BWD, 2, {-1.5, -0.25}, {PI_, 1}, {NAN_, NINF}},
    {"inf in dy at y = -inf", SML_LOG_SOFTMAX_BWD, 2, {NI, 0}, {PI_, 1}, {NAN_, NINF}},
    {"+inf and -inf in dy", SML_LOG_SOFTMAX_BWD, 2, {-1, -1}, {PI_, NI}, {NAN_, NAN_}},
    {"y = +inf with zero sum", SML_LOG_SOFTMAX_BWD, 2, {PI_, -0.75}, {1, -1}, {NAN_, EXACT(-1)}},
};
#define NTABLE ((int)(sizeof TABLE / sizeof TABLE[0]))

/* Which implementation: 0 the reference (sml_ref_run), 1 cpu_naive, 2 cpu_online, 3 the
 * reference's online softmax (softmax rows only). */
enum { NIMPL = 4 };
static const char *const IMPL[NIMPL] = {"reference", "cpu_naive", "cpu_online", "reference online"};

static int run_impl(int impl, const table_row *t, sml_dtype dt, const void *x, const void *dy,
                    void *out) {
    if (impl == 0 || impl == 3) {
        double o[MAXN], xd[MAXN];
        if (impl == 3) {
            for (int i = 0; i < t->n; i++) xd[i] = sml_load(dt, x, i);
            sml_ref_softmax_online(xd, o, t->n);
        } else if (sml_ref_run(t->op, dt, 1, t->n, t->n, x, dy, o) != SML_OK) {
            return 0;
        }
        for (int i = 0; i < t->n; i++) sml_store(dt, out, i, o[i]);
        return 1;
    }
    const sml_kernel *k = sml_kernel_find(impl == 1 ? "cpu_naive" : "cpu_online");
    sml_handle *h = NULL;
    if (!k || sml_handle_create(&h) != SML_OK) return 0;
    sml_problem p = {t->op, dt, 1, t->n, t->n, x, dy, out, NULL};
    sml_status s = sml_run(k, h, &p);
    sml_handle_destroy(h);
    return s == SML_OK;
}

static void check_entry(unit_run *u, int ti, int impl, sml_dtype dt) {
    const table_row *t = &TABLE[ti];
    unsigned char x[MAXN * 4], dy[MAXN * 4], out[MAXN * 4];
    memset(out, 0xFF, sizeof out);
    for (int i = 0; i < t->n; i++) {
        sml_store(dt, x, i, t->x[i]);
        sml_store(dt, dy, i, t->dy[i]);
    }
    char why[160] = "";
    if (!run_impl(impl, t, dt, x, dy, out)) snprintf(why, sizeof why, "the call failed");
    for (int i = 0; i < t->n && !why[0]; i++) {
        double g = sml_load(dt, out, i);
        const expect *e = &t->want[i];
        int ok = e->kind == IS_NAN      ? isnan(g)
                 : e->kind == IS_POSINF ? g == INFINITY
                 : e->kind == IS_NEGINF ? g == -INFINITY
                 : e->kind == IS_EXACT  ? g == e->value
                                        : isfinite(g);
        if (!ok) snprintf(why, sizeof why, "element %d is %g", i, g);
    }
    if (!why[0]) {
        sml_check_report r;
        if (sml_check(t->op, dt, 1, t->n, t->n, x, dy, out, &r) != SML_OK || !r.pass)
            snprintf(why, sizeof why, "the checker rejects it: %.100s", r.message);
    }
    UNIT_EXPECT(u, !why[0], "%s %s %s, row \"%s\": %s", IMPL[impl], sml_op_name(t->op),
                sml_dtype_name(dt), t->what, why);
}

/* "The others as if the -inf were absent": exactly so in the reference. */
static void as_if_absent(unit_run *u) {
    double with[5] = {1.5, NI, -2.0, NI, 0.25}, without[3] = {1.5, -2.0, 0.25};
    double a[5], b[3], la[5], lb[3];
    sml_ref_softmax_naive(with, a, 5);
    sml_ref_softmax_naive(without, b, 3);
    sml_ref_log_softmax(with, la, 5);
    sml_ref_log_softmax(without, lb, 3);
    int ok = a[0] == b[0] && a[2] == b[1] && a[4] == b[2] && la[0] == lb[0] && la[2] == lb[1] &&
             la[4] == lb[2] && a[1] == 0.0 && a[3] == 0.0 && la[1] == NI;
    UNIT_EXPECT(u, ok, "reference: a row with -inf differs from the row without them");
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_special_values", argc, argv)) return 2;
    int64_t c = 0;
    for (int ti = 0; ti < NTABLE; ti++)
        for (int impl = 0; impl < NIMPL; impl++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++, c++)
                if ((impl != 3 || TABLE[ti].op == SML_SOFTMAX) && unit_case(&u, c, NULL))
                    check_entry(&u, ti, impl, (sml_dtype)dt);
    if (unit_case(&u, c, NULL)) as_if_absent(&u);
    return sml_tally_finish(&u.tally);
}
