/* test_api.c: the validation every call passes (src/core/api.c): each bad argument gets its own
 * status and leaves the output untouched, empty tensors succeed without writing, forward
 * in place works, and a run writes nothing outside the [rows, cols] window of the output;
 * and the device facts the GPU launchers read (planted: without the zeroing of the
 * facts on failure, the no-GPU case fails); sml_auto_choice, which names the kernel `auto` runs
 * (planted: reading the SM count for every shape fails the no-GPU case, answering
 * before the argument checks fails the bad-argument case, a wrong path name fails the
 * agreement case). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kernels/auto_dispatch.h"
#include "kernels/vector_width.h"
#include "core/dtype.h"
#include "softmax_lab_version.h"
#include "unit_case.h"

#define CANARY 0xA5
enum { ROWS = 3, COLS = 5, LD = 7, N = ROWS * LD, PAD = 16 };

/* One output buffer with canary bytes around it: PAD floats before and after. */
typedef struct fixture {
    float x[N], dy[N];
    float raw[N + 2 * PAD];
    float *out;
    sml_handle *h;
    const sml_kernel *k;
} fixture;

static void fixture_init(fixture *f, const char *kernel) {
    for (int i = 0; i < N; i++) {
        f->x[i] = (float)(0.25 * (i % 9) - 1.0);
        f->dy[i] = (float)(0.5 * (i % 4) - 0.7);
    }
    memset(f->raw, CANARY, sizeof f->raw);
    f->out = f->raw + PAD;
    f->h = NULL;
    sml_handle_create(&f->h);
    f->k = sml_kernel_find(kernel);
}

static int untouched(const fixture *f) {
    const unsigned char *b = (const unsigned char *)f->raw;
    for (size_t i = 0; i < sizeof f->raw; i++)
        if (b[i] != CANARY) return 0;
    return 1;
}

static sml_problem problem(fixture *f, sml_op op) {
    sml_problem p = {op, SML_F32, ROWS, COLS, LD, f->x, f->dy, f->out, NULL};
    return p;
}

typedef struct bad_call {
    const char *what;
    sml_status want;
    void (*mutate)(fixture *f, sml_problem *p, sml_kernel *k);
} bad_call;

static void m_null_x(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->x = NULL;
}
static void m_null_out(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->out = NULL;
}
static void m_null_dy(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->op = SML_SOFTMAX_BWD;
    p->dy = NULL;
}
static void m_neg_rows(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->rows = -1;
}
static void m_neg_cols(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->cols = -3;
    p->ld = 0;
}
static void m_ld_small(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->ld = COLS - 1;
}
static void m_neg_ld(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->ld = -7;
}
static void m_huge(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->rows = (int64_t)1 << 40;
    p->ld = (int64_t)1 << 40;
}
static void m_bad_op(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->op = (sml_op)4;
}
static void m_neg_op(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->op = (sml_op)-1;
}
static void m_bad_dtype(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)k;
    p->dtype = (sml_dtype)3;
}
static void m_alias_part(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)k;
    memcpy(f->out, f->x, sizeof f->x);
    p->x = f->out + 1;
}
static void m_alias_bwd_inplace(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)k;
    memcpy(f->out, f->x, sizeof f->x);
    p->op = SML_SOFTMAX_BWD;
    p->x = f->out;
}
static void m_alias_dy(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)k;
    memcpy(f->out, f->dy, sizeof f->dy);
    p->op = SML_LOG_SOFTMAX_BWD;
    p->dy = f->out;
}
static void m_alias_dy_part(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)k;
    memcpy(f->out, f->dy, sizeof f->dy);
    p->op = SML_SOFTMAX_BWD;
    p->dy = f->out + LD;
}
static void m_too_long(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)p;
    k->max_cols = COLS - 1;
}
static void m_too_short(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)p;
    k->min_cols = COLS + 1;
}
static void m_no_op(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    p->op = SML_LOG_SOFTMAX_BWD;
    k->ops = SML_OPS_FWD;
}
static void m_no_dtype(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)p;
    k->dtypes = 1u << SML_F16;
}
static void m_no_launch(fixture *f, sml_problem *p, sml_kernel *k) {
    (void)f;
    (void)p;
    k->launch = NULL;
}

static const bad_call BAD[] = {
    {"x NULL", SML_ERR_NULL_POINTER, m_null_x},
    {"out NULL", SML_ERR_NULL_POINTER, m_null_out},
    {"dy NULL for a backward op", SML_ERR_NULL_POINTER, m_null_dy},
    {"rows < 0", SML_ERR_BAD_SHAPE, m_neg_rows},
    {"cols < 0", SML_ERR_BAD_SHAPE, m_neg_cols},
    {"ld < cols", SML_ERR_BAD_STRIDE, m_ld_small},
    {"ld < 0", SML_ERR_BAD_STRIDE, m_neg_ld},
    {"rows * ld overflows", SML_ERR_BAD_SHAPE, m_huge},
    {"op out of range", SML_ERR_BAD_OP, m_bad_op},
    {"op negative", SML_ERR_BAD_OP, m_neg_op},
    {"dtype out of range", SML_ERR_BAD_DTYPE, m_bad_dtype},
    {"out overlaps x partly", SML_ERR_BAD_ALIAS, m_alias_part},
    {"backward in place (out == y)", SML_ERR_BAD_ALIAS, m_alias_bwd_inplace},
    {"out == dy", SML_ERR_BAD_ALIAS, m_alias_dy},
    {"out overlaps dy partly", SML_ERR_BAD_ALIAS, m_alias_dy_part},
    {"cols above the kernel's max", SML_ERR_UNSUPPORTED, m_too_long},
    {"cols below the kernel's min", SML_ERR_UNSUPPORTED, m_too_short},
    {"op the kernel lacks", SML_ERR_UNSUPPORTED, m_no_op},
    {"dtype the kernel lacks", SML_ERR_UNSUPPORTED, m_no_dtype},
    {"kernel not built", SML_ERR_NO_DEVICE, m_no_launch},
};
#define NBAD ((int)(sizeof BAD / sizeof BAD[0]))

/* A bad call returns its status, and neither the output nor its surroundings change. For
 * the aliasing cases the output holds a copy of the input, which must survive as it was. */
static void bad_argument(unit_run *u, int i, const char *kernel) {
    fixture f;
    fixture_init(&f, kernel);
    sml_kernel k = *f.k;
    sml_problem p = problem(&f, SML_SOFTMAX);
    BAD[i].mutate(&f, &p, &k);
    float before[N + 2 * PAD];
    memcpy(before, f.raw, sizeof before);
    sml_status v = sml_validate(&k, &p);
    sml_status s = sml_run(&k, f.h, &p);
    int same = memcmp(before, f.raw, sizeof before) == 0;
    UNIT_EXPECT(u, s == BAD[i].want && v == BAD[i].want && same,
                "%s, %s: run gave \"%s\", validate \"%s\", expected \"%s\"; output %s", kernel,
                BAD[i].what, sml_strerror(s), sml_strerror(v), sml_strerror(BAD[i].want),
                same ? "untouched" : "WRITTEN");
    sml_handle_destroy(f.h);
}

static void misc_statuses(unit_run *u) {
    fixture f;
    fixture_init(&f, "cpu_naive");
    sml_problem p = problem(&f, SML_SOFTMAX);
    int bad = 0;
    bad += sml_run(NULL, f.h, &p) != SML_ERR_UNKNOWN_KERNEL;
    bad += sml_validate(NULL, &p) != SML_ERR_UNKNOWN_KERNEL;
    bad += sml_run(f.k, f.h, NULL) != SML_ERR_NULL_POINTER;
    bad += sml_run(f.k, NULL, &p) != SML_ERR_NULL_POINTER;
    bad += sml_kernel_find("no such kernel") != NULL || sml_kernel_find(NULL) != NULL;
    /* A GPU kernel in a build or on a machine without a GPU. */
    const sml_kernel *g = sml_kernel_find("warp");
    if (g && !sml_gpu_available()) bad += sml_run(g, f.h, &p) != SML_ERR_NO_DEVICE;
    /* A NULL dy is fine for forward ops. */
    p.dy = NULL;
    bad += sml_run(f.k, f.h, &p) != SML_OK;
    UNIT_EXPECT(u, bad == 0 && untouched(&f) == 0,
                "%d wrong statuses among NULL kernel/handle/problem, GPU without a device, forward "
                "with dy NULL",
                bad);
    sml_handle_destroy(f.h);
}

/* rows = 0 or cols = 0 succeed and write nothing, whatever the pointers. */
static void empty_tensors(unit_run *u, const char *kernel) {
    fixture f;
    fixture_init(&f, kernel);
    int bad = 0;
    for (int op = 0; op < SML_OP_COUNT; op++) {
        sml_problem p = problem(&f, (sml_op)op);
        p.rows = 0;
        bad += sml_run(f.k, f.h, &p) != SML_OK;
        p.rows = ROWS;
        p.cols = 0;
        bad += sml_run(f.k, f.h, &p) != SML_OK;
        p.ld = 0;
        bad += sml_run(f.k, f.h, &p) != SML_OK;
        p.x = p.dy = NULL;
        p.out = NULL;
        bad += sml_run(f.k, f.h, &p) != SML_OK;
        p.rows = 0;
        bad += sml_run(f.k, NULL, &p) != SML_OK;
    }
    UNIT_EXPECT(u, bad == 0 && untouched(&f), "%s: empty tensors: %d wrong statuses, output %s",
                kernel, bad, untouched(&f) ? "untouched" : "WRITTEN");
    sml_handle_destroy(f.h);
}

/* A good run writes every [rows, cols] element and nothing in the stride padding or
 * around the buffer; forward in place gives the same bits as out of place. */
static void window_and_in_place(unit_run *u, const char *kernel) {
    char why[200] = "";
    for (int op = 0; op < SML_OP_COUNT && !why[0]; op++) {
        fixture f;
        fixture_init(&f, kernel);
        sml_problem p = problem(&f, (sml_op)op);
        if (sml_run(f.k, f.h, &p) != SML_OK)
            snprintf(why, sizeof why, "%s failed", sml_op_name((sml_op)op));
        const unsigned char *b = (const unsigned char *)f.raw;
        for (int i = 0; i < N + 2 * PAD && !why[0]; i++) {
            int inside = i >= PAD && i < PAD + N && (i - PAD) % LD < COLS;
            int canary = b[4 * i] == CANARY && b[4 * i + 1] == CANARY && b[4 * i + 2] == CANARY &&
                         b[4 * i + 3] == CANARY;
            if (inside == canary)
                snprintf(why, sizeof why, "%s: float %d %s", sml_op_name((sml_op)op), i - PAD,
                         inside ? "not written" : "written outside the window");
        }
        if (!sml_op_is_backward((sml_op)op) && !why[0]) {
            float inplace[N];
            memcpy(inplace, f.x, sizeof inplace);
            sml_problem q = problem(&f, (sml_op)op);
            q.x = q.out = inplace;
            if (sml_run(f.k, f.h, &q) != SML_OK) snprintf(why, sizeof why, "in place failed");
            for (int i = 0; i < N && !why[0]; i++) {
                int inside = i % LD < COLS;
                if (inside && memcmp(&inplace[i], &f.out[i], 4) != 0)
                    snprintf(why, sizeof why, "%s in place differs at %d", sml_op_name((sml_op)op),
                             i);
                if (!inside && memcmp(&inplace[i], &f.x[i], 4) != 0)
                    snprintf(why, sizeof why, "%s in place wrote padding at %d",
                             sml_op_name((sml_op)op), i);
            }
        }
        sml_handle_destroy(f.h);
    }
    UNIT_EXPECT(u, !why[0], "%s: %s", kernel, why);
}

/* The device facts the GPU launchers read (src/core/internal.h): a NULL output is refused; with no
 * GPU the call fails and leaves the facts zeroed; with one, a handle's second call (from its
 * cache) agrees with the first and with an uncached call, and the SM count is positive. */
static void gpu_facts(unit_run *u) {
    sml_gpu_facts a, b, c;
    memset(&a, 0x5A, sizeof a);
    UNIT_EXPECT(u, sml_gpu_facts_get(NULL, NULL) == SML_ERR_NULL_POINTER, "NULL facts not refused");
    sml_handle *h = NULL;
    if (sml_handle_create(&h) != SML_OK) {
        UNIT_EXPECT(u, 0, "no handle");
        return;
    }
    const sml_status s = sml_gpu_facts_get(h, &a);
    if (!sml_gpu_available()) {
        const sml_gpu_facts zero = {0, 0, 0, 0, 0, 0.0f};
        UNIT_EXPECT(u, s != SML_OK && !memcmp(&a, &zero, sizeof a) && !h->gpu_known,
                    "no GPU: status %s, facts not zeroed or cached", sml_strerror(s));
    } else {
        const sml_status s2 = sml_gpu_facts_get(h, &b), s3 = sml_gpu_facts_get(NULL, &c);
        UNIT_EXPECT(u,
                    s == SML_OK && s2 == SML_OK && s3 == SML_OK && h->gpu_known && a.sms > 0 &&
                        !memcmp(&a, &b, sizeof a) && !memcmp(&a, &c, sizeof a),
                    "GPU facts: %s/%s/%s, sms %d/%d/%d, cached %d", sml_strerror(s),
                    sml_strerror(s2), sml_strerror(s3), a.sms, b.sms, c.sms, h->gpu_known);
    }
    sml_handle_destroy(h);
}

/* sml_auto_choice: bad arguments get sml_validate's statuses and a NULL name; shapes whose
 * decision reads no device facts are answered with or without a GPU and agree with
 * sml_auto_pick; the three that read facts need a GPU (SML_ERR_NO_DEVICE without one) and
 * then agree with sml_auto_pick on the handle's facts. A dense fp32 row of 32,767 columns is
 * not 16-byte aligned, so it is past `block` (32,768 aligned fp32 columns are in it, FREE):
 * answered as `block` without a device, it fails here. */
static void auto_choice(unit_run *u) {
    const char *k = "x";
    UNIT_EXPECT(u, sml_auto_choice(NULL, SML_SOFTMAX, SML_F32, 8, 8, NULL) == SML_ERR_NULL_POINTER,
                "NULL name not refused");
    UNIT_EXPECT(u, sml_auto_choice(NULL, (sml_op)4, SML_F32, 8, 8, &k) == SML_ERR_BAD_OP && !k,
                "bad op");
    k = "x";
    UNIT_EXPECT(
        u, sml_auto_choice(NULL, SML_SOFTMAX, (sml_dtype)3, 8, 8, &k) == SML_ERR_BAD_DTYPE && !k,
        "bad dtype");
    k = "x";
    UNIT_EXPECT(u,
                sml_auto_choice(NULL, SML_SOFTMAX, SML_F32, -1, 8, &k) == SML_ERR_BAD_SHAPE && !k,
                "negative rows");
    k = "x";
    UNIT_EXPECT(u,
                sml_auto_choice(NULL, SML_SOFTMAX, SML_F32, 8, -8, &k) == SML_ERR_BAD_SHAPE && !k,
                "negative cols");
    static const struct {
        sml_op op;
        sml_dtype dt;
        int64_t rows, cols;
        const char *want;
    } FREE[] = {
        {SML_SOFTMAX, SML_F32, 16384, 128, "warp"},
        {SML_SOFTMAX_BWD, SML_F16, 4096, 256, "warp"},
        {SML_LOG_SOFTMAX, SML_F32, 32768, 512, "block"},
        {SML_SOFTMAX_BWD, SML_F32, 4096, 200, "block"},
        {SML_SOFTMAX, SML_BF16, 4096, 16384, "block"},
        {SML_SOFTMAX, SML_F32, 0, 0, "warp"},
        {SML_SOFTMAX, SML_F32, 4096, 32768, "block"},
        {SML_LOG_SOFTMAX_BWD, SML_BF16, 4096, 32768, "block"},
        {SML_SOFTMAX_BWD, SML_F16, 4096, 32768, "block"},
    };
    for (size_t i = 0; i < sizeof FREE / sizeof FREE[0]; i++) {
        const sml_status s =
            sml_auto_choice(NULL, FREE[i].op, FREE[i].dt, FREE[i].rows, FREE[i].cols, &k);
        const char *pick = sml_auto_path_name(
            sml_auto_pick(FREE[i].op, FREE[i].dt, FREE[i].rows, FREE[i].cols, 1, 0, 0, 0.0));
        UNIT_EXPECT(u, s == SML_OK && k && !strcmp(k, FREE[i].want) && !strcmp(k, pick),
                    "%s %s %lldx%lld: %s, '%s' (want %s, sml_auto_pick %s)",
                    sml_op_name(FREE[i].op), sml_dtype_name(FREE[i].dt), (long long)FREE[i].rows,
                    (long long)FREE[i].cols, sml_strerror(s), k ? k : "(null)", FREE[i].want, pick);
    }
    static const struct {
        sml_op op;
        sml_dtype dt;
        int64_t rows, cols;
    } DEV[] = {{SML_SOFTMAX, SML_F32, 4096, 200},
               {SML_SOFTMAX_BWD, SML_F16, 128, 1048576},
               {SML_SOFTMAX, SML_F32, 4096,
                32767}}; /* a dense row of 32,767 fp32 is not 16-byte aligned */
    sml_handle *h = NULL;
    if (sml_handle_create(&h) != SML_OK) {
        UNIT_EXPECT(u, 0, "no handle");
        return;
    }
    for (size_t i = 0; i < sizeof DEV / sizeof DEV[0]; i++) {
        k = "x";
        const sml_status s = sml_auto_choice(h, DEV[i].op, DEV[i].dt, DEV[i].rows, DEV[i].cols, &k);
        if (!sml_gpu_available()) {
            UNIT_EXPECT(u, s == SML_ERR_NO_DEVICE && !k, "no GPU, %lld columns: %s, '%s'",
                        (long long)DEV[i].cols, sml_strerror(s), k ? k : "(null)");
        } else {
            sml_gpu_facts g;
            const sml_status sg = sml_gpu_facts_get(h, &g);
            const int vectors = sml_stride_takes_vectors(DEV[i].cols, DEV[i].dt);
            const char *pick =
                sml_auto_path_name(sml_auto_pick(DEV[i].op, DEV[i].dt, DEV[i].rows, DEV[i].cols,
                                                 vectors, g.sms, g.clusters, g.dram));
            UNIT_EXPECT(u, s == SML_OK && sg == SML_OK && k && !strcmp(k, pick),
                        "GPU, %lld columns: %s, '%s' (sml_auto_pick %s)", (long long)DEV[i].cols,
                        sml_strerror(s), k ? k : "(null)", pick);
        }
    }
    sml_handle_destroy(h);
}

/* The library's version is the one its headers state (softmax_lab_version.h, generated from
 * project()), as MAJOR.MINOR.PATCH. */
static void version(unit_run *u) {
    const char *v = sml_version();
    int a = -1, b = -1, c = -1, n = 0;
    int ok = v && sscanf(v, "%d.%d.%d%n", &a, &b, &c, &n) == 3 && v[n] == 0 &&
             a == SML_VERSION_MAJOR && b == SML_VERSION_MINOR && c == SML_VERSION_PATCH &&
             !strcmp(v, SML_VERSION_STRING);
    UNIT_EXPECT(u, ok, "sml_version() is '%s', the headers say %s", v ? v : "(null)",
                SML_VERSION_STRING);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_api", argc, argv)) return 2;
    static const char *const KERNELS[2] = {"cpu_naive", "cpu_online"};
    int64_t c = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < NBAD; i++, c++)
            if (unit_case(&u, c, NULL)) bad_argument(&u, i, KERNELS[k]);
    if (unit_case(&u, c++, NULL)) misc_statuses(&u);
    for (int k = 0; k < 2; k++, c++)
        if (unit_case(&u, c, NULL)) empty_tensors(&u, KERNELS[k]);
    for (int k = 0; k < 2; k++, c++)
        if (unit_case(&u, c, NULL)) window_and_in_place(&u, KERNELS[k]);
    if (unit_case(&u, c++, NULL)) gpu_facts(&u);
    if (unit_case(&u, c++, NULL)) auto_choice(&u);
    if (unit_case(&u, c++, NULL)) version(&u);
    return sml_tally_finish(&u.tally);
}
