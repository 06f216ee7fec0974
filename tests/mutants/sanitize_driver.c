/* sanitize_driver: a tiny program for compute-sanitizer (run_sanitizers.sh). Every tensor is
 * its own cudaMalloc of exactly (rows - 1) * ld + cols elements, so a write one element past
 * the last row leaves the allocation and memcheck sees it; only the rows' elements of an
 * input are ever written from the host, so a kernel reading the stride padding reads
 * uninitialised memory and initcheck sees it.
 *
 *   sanitize_driver --production [--tall] [--kernels a,b] [--ops o,p] [--dtypes d,e]
 *       every production GPU kernel (cudnn, a vendor library, only when named in --kernels)
 *       on a few small shapes and layouts; each output is checked against the reference, so
 *       the run also fails (exit 1) if a kernel computes garbage under the tool. --tall: the
 *       two tall shapes instead (TALL below)
 *   sanitize_driver --mutant NAME
 *       one launch of a mutant at its sanitizer shape (mutants.c); exit 0 when the launch
 *       returned, 3 when the runtime reported an error: the tool's verdict is what counts
 *   sanitize_driver --list
 *
 * Seeded with a fixed seed (printed); --seed S changes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "reference/check.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "core/rng.h"
#include "prop/deviation.h"
#include "test_support.h"
#include "tests/mutants/mutants.h"

#define ME "sanitize_driver"

typedef struct layout {
    int64_t rows, cols, ld, offset;
    int inplace;
    const char *name;
} layout;

/* Small on purpose: every launch runs 10-100x slower under the tools. */
static const layout SHAPES[] = {
    {1, 1, 1, 0, 0, "1x1"},
    {3, 33, 33, 0, 0, "3x33"},
    {5, 129, 132, 0, 0, "5x129 ld 132"},
    {2, 1000, 1000, 1, 0, "2x1000 misaligned (+1)"},
    {4, 257, 257, 0, 1, "4x257 in place"},
    {2, 1024, 1024, 0, 0, "2x1024"},
    {2, 4097, 4099, 0, 0, "2x4097 ld 4099"},
    {2, 6001, 6008, 0, 0, "2x6001 ld 6008"}, /* block's wide fp32 K = 8 with a partial chunk */
    {1, 16384, 16384, 0, 0, "1x16384"},
    {1, 70001, 70001, 0, 0, "1x70001"},
};

/* More rows than split or coop keep resident (132 SMs x 16 or 8 blocks), of rows long enough
 * for split's unbounded whole steps (six 16-byte chunks a thread: 1,536 fp32 and 6,144 16-bit
 * columns), ragged and padded: the code that carries a next row, which the small shapes never
 * reach. Millions of elements, so only with --tall. */
static const layout TALL[] = {
    {2200, 1601, 1608, 0, 0, "2200x1601 ld 1608"},
    {1100, 6151, 6160, 0, 0, "1100x6151 ld 6160"},
};

typedef struct run_ctx {
    sml_handle *h;
    uint64_t seed;
    int64_t launches, failed;
} run_ctx;

static int in_list(const char *list, const char *name) {
    if (!list) return -1; /* no list given */
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t L = e ? (size_t)(e - p) : strlen(p);
        if (L == n && !strncmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Host data for one problem, dense (ld = cols): x (logits, or y for backward) and dy. */
static sml_status make_inputs(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, uint64_t seed,
                              void **hx, void **hdy) {
    size_t esz = sml_dtype_size(dt), n = (size_t)(rows * cols);
    *hx = malloc(n * esz);
    *hdy = sml_op_is_backward(op) ? malloc(n * esz) : NULL;
    void *logits = malloc(n * esz);
    double *y = malloc(n * sizeof *y);
    if (!*hx || (sml_op_is_backward(op) && !*hdy) || !logits || !y) {
        free(logits);
        free(y);
        return SML_ERR_OUT_OF_MEMORY;
    }
    sml_rng r;
    sml_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) sml_store(dt, logits, (int64_t)i, 3.0 * sml_rng_normal(&r));
    sml_status s = SML_OK;
    if (sml_op_is_backward(op)) {
        sml_op fwd = op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
        s = sml_ref_run(fwd, dt, rows, cols, cols, logits, NULL, y);
        for (size_t i = 0; i < n && s == SML_OK; i++) {
            sml_store(dt, *hx, (int64_t)i, y[i]);
            sml_store(dt, *hdy, (int64_t)i, sml_rng_normal(&r));
        }
    } else {
        memcpy(*hx, logits, n * esz);
    }
    free(logits);
    free(y);
    return s;
}

/* Upload the dense rows into a strided device tensor, row by row (padding untouched). */
static sml_status upload_rows(sml_buffer *b, size_t base, const void *dense, int64_t rows,
                              int64_t cols, int64_t ld, size_t esz) {
    for (int64_t r = 0; r < rows; r++) {
        sml_status s =
            sml_buffer_upload(b, base + (size_t)(r * ld) * esz,
                              (const char *)dense + (size_t)(r * cols) * esz, (size_t)cols * esz);
        if (s != SML_OK) return s;
    }
    return SML_OK;
}

static sml_status download_rows(const sml_buffer *b, size_t base, void *dense, int64_t rows,
                                int64_t cols, int64_t ld, size_t esz) {
    for (int64_t r = 0; r < rows; r++) {
        sml_status s =
            sml_buffer_download(b, base + (size_t)(r * ld) * esz,
                                (char *)dense + (size_t)(r * cols) * esz, (size_t)cols * esz);
        if (s != SML_OK) return s;
    }
    return SML_OK;
}

/* One launch of k. check: compare with the reference (production kernels). Returns the
 * status of the launch (after the sync); *bad set when the output breaks the contract. */
static sml_status launch_one(run_ctx *ctx, const sml_kernel *k, sml_op op, sml_dtype dt,
                             const layout *L, int check, int *bad, char *msg, size_t msgn) {
    size_t esz = sml_dtype_size(dt);
    int inplace = L->inplace && !sml_op_is_backward(op);
    size_t span = (size_t)((L->rows - 1) * L->ld + L->cols + L->offset) * esz;
    sml_buffer bx = {SML_DEVICE_GPU, NULL, 0}, bdy = bx, bo = bx;
    void *hx = NULL, *hdy = NULL, *hout = NULL;
    uint64_t seed = sml_derive_seed(ctx->seed, (uint64_t)ctx->launches);
    *bad = 0;
    msg[0] = 0;
    sml_status s = make_inputs(op, dt, L->rows, L->cols, seed, &hx, &hdy);
    if (s == SML_OK) s = sml_buffer_alloc(&bx, SML_DEVICE_GPU, span);
    if (s == SML_OK && hdy) s = sml_buffer_alloc(&bdy, SML_DEVICE_GPU, span);
    if (s == SML_OK && !inplace) s = sml_buffer_alloc(&bo, SML_DEVICE_GPU, span);
    size_t base = (size_t)L->offset * esz;
    if (s == SML_OK) s = upload_rows(&bx, base, hx, L->rows, L->cols, L->ld, esz);
    if (s == SML_OK && hdy) s = upload_rows(&bdy, base, hdy, L->rows, L->cols, L->ld, esz);
    /* Poison the output (0xFF: NaN), so an element the kernel forgets cannot pass. */
    if (s == SML_OK && !inplace) s = sml_buffer_fill(&bo, 0xFF);
    sml_buffer *out = inplace ? &bx : &bo;
    if (s == SML_OK) {
        sml_problem p = {op,
                         dt,
                         L->rows,
                         L->cols,
                         L->ld,
                         (char *)bx.ptr + base,
                         hdy ? (char *)bdy.ptr + base : NULL,
                         (char *)out->ptr + base,
                         NULL};
        ctx->launches++;
        s = sml_run(k, ctx->h, &p);
        if (s == SML_OK) s = sml_device_sync(SML_DEVICE_GPU, NULL);
    }
    if (s == SML_OK && check) {
        hout = malloc((size_t)(L->rows * L->cols) * esz);
        s = hout ? download_rows(out, base, hout, L->rows, L->cols, L->ld, esz)
                 : SML_ERR_OUT_OF_MEMORY;
        /* The contract, or where the kernel declares a deviation (cudnn), its terms. */
        sml_check_report rep;
        sml_dev_report dev;
        sml_dev_terms t;
        int decl = sml_dev_terms_get(k->deviation, op, dt, &t);
        double *want = s == SML_OK ? malloc((size_t)(L->rows * L->cols) * sizeof *want) : NULL;
        if (s == SML_OK && !want) s = SML_ERR_OUT_OF_MEMORY;
        if (s == SML_OK &&
            sml_ref_run(op, dt, L->rows, L->cols, L->cols, hx, hdy, want) == SML_OK &&
            sml_dev_check_against(decl ? &t : NULL, op, dt, L->rows, L->cols, L->cols, hx, hdy,
                                  want, hout, &rep, &dev) == SML_OK &&
            !rep.pass && !(decl && sml_dev_report_pass(&dev))) {
            *bad = 1;
            char why[400] = "";
            if (decl) sml_dev_report_why(&dev, &t, why, sizeof why);
            snprintf(msg, msgn, "%s%s%s", why, why[0] ? "; " : "", rep.message);
        }
        free(want);
    }
    if (s != SML_OK && !msg[0])
        snprintf(msg, msgn, "%s%s%s", sml_strerror(s), s == SML_ERR_CUDA ? ": " : "",
                 s == SML_ERR_CUDA ? sml_last_cuda_error() : "");
    sml_buffer_free(&bx);
    sml_buffer_free(&bdy);
    sml_buffer_free(&bo);
    free(hx);
    free(hdy);
    free(hout);
    return s;
}

static int production(run_ctx *ctx, const char *kernels, const char *ops, const char *dtypes,
                      int tall) {
    const layout *shapes = tall ? TALL : SHAPES;
    const size_t nshapes = tall ? sizeof TALL / sizeof TALL[0] : sizeof SHAPES / sizeof SHAPES[0];
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (k->device != SML_DEVICE_GPU || !k->launch) continue;
        int want = in_list(kernels, k->name);
        if (want == 0 || (want < 0 && !strcmp(k->name, "cudnn"))) continue;
        int64_t before = ctx->launches, bad_before = ctx->failed;
        for (size_t si = 0; si < nshapes; si++) {
            const layout *L = &shapes[si];
            if (L->cols < k->min_cols || (k->max_cols > 0 && L->cols > k->max_cols)) continue;
            for (int op = 0; op < SML_OP_COUNT; op++) {
                if (!(k->ops >> op & 1) || in_list(ops, sml_op_name((sml_op)op)) == 0) continue;
                for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
                    if (!(k->dtypes >> dt & 1) ||
                        in_list(dtypes, sml_dtype_name((sml_dtype)dt)) == 0)
                        continue;
                    int bad;
                    char msg[400];
                    sml_status s =
                        launch_one(ctx, k, (sml_op)op, (sml_dtype)dt, L, 1, &bad, msg, sizeof msg);
                    if (s == SML_ERR_UNSUPPORTED && L->ld != L->cols)
                        continue; /* a kernel may refuse strides */
                    if (s != SML_OK || bad) {
                        ctx->failed++;
                        printf("FAIL %s %s %s %s: %s\n  reproduce: %s --production%s --kernels %s "
                               "--ops %s --dtypes %s\n",
                               k->name, sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt),
                               L->name, msg, ME, tall ? " --tall" : "", k->name,
                               sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt));
                        if (s == SML_ERR_CUDA) {
                            printf("%s: a CUDA error may have lost the context; stopping\n", ME);
                            return 1;
                        }
                    }
                }
            }
        }
        printf("%-8s %lld launches, %lld failed\n", k->name, (long long)(ctx->launches - before),
               (long long)(ctx->failed - bad_before));
        fflush(stdout);
    }
    printf("%s: %lld launches, %lld failed\n", ME, (long long)ctx->launches,
           (long long)ctx->failed);
    return ctx->failed ? 1 : 0;
}

static int one_mutant(run_ctx *ctx, const char *name) {
    const sml_gpu_mutant *m = sml_gpu_mutant_by_name(name);
    if (!m || m->san_shape.rows <= 0) {
        fprintf(stderr, "%s: no mutant '%s' with a sanitizer shape (--list)\n", ME, name);
        return 2;
    }
    const sml_mut_shape *sh = &m->san_shape;
    layout L = {sh->rows,   sh->cols, sh->ld > 0 ? sh->ld : sh->cols,
                sh->offset, 0,        "sanitizer shape"};
    int bad;
    char msg[400];
    sml_status s = launch_one(ctx, &m->kernel, sh->op, sh->dtype, &L, 0, &bad, msg, sizeof msg);
    printf("%s %s %s %lldx%lld (ld %lld): launch %s%s%s (expected to be caught by %s)\n", name,
           sml_op_name(sh->op), sml_dtype_name(sh->dtype), (long long)L.rows, (long long)L.cols,
           (long long)L.ld, s == SML_OK ? "returned" : "failed", s == SML_OK ? "" : ": ",
           s == SML_OK ? "" : msg, m->sanitizer ? m->sanitizer : "nothing");
    return s == SML_OK ? 0 : 3;
}

int main(int argc, char **argv) {
    const char *mutant = NULL, *kernels = NULL, *ops = NULL, *dtypes = NULL;
    int prod = 0, list = 0, tall = 0;
    run_ctx ctx = {NULL, 0x5A171E5EED000007ull, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--production"))
            prod = 1;
        else if (!strcmp(a, "--list"))
            list = 1;
        else if (!strcmp(a, "--tall"))
            tall = 1;
        else if (v && !strcmp(a, "--mutant"))
            mutant = argv[++i];
        else if (v && !strcmp(a, "--kernels"))
            kernels = argv[++i];
        else if (v && !strcmp(a, "--ops"))
            ops = argv[++i];
        else if (v && !strcmp(a, "--dtypes"))
            dtypes = argv[++i];
        else if (v && !strcmp(a, "--seed"))
            ctx.seed = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr,
                    "usage: %s --production [--tall] [--kernels a,b] [--ops o,p] [--dtypes d,e] "
                    "[--seed S]\n"
                    "       %s --mutant NAME\n       %s --list\n",
                    ME, ME, ME);
            return 2;
        }
    }
    if (list) {
        for (size_t i = 0; i < sml_gpu_mutant_count(); i++) {
            const sml_gpu_mutant *m = sml_gpu_mutant_at(i);
            if (m->sanitizer) printf("%s %s\n", m->kernel.name, m->sanitizer);
        }
        return 0;
    }
    if (prod == !!mutant) {
        fprintf(stderr, "%s: give exactly one of --production and --mutant NAME\n", ME);
        return 2;
    }
    if (tall && !prod) {
        fprintf(stderr, "%s: --tall goes with --production\n", ME);
        return 2;
    }
    int g = sml_test_require_gpu(ME);
    if (g) return g;
    if (sml_handle_create(&ctx.h) != SML_OK) return 1;
    printf("%s: seed 0x%016llx\n", ME, (unsigned long long)ctx.seed);
    int rc = prod ? production(&ctx, kernels, ops, dtypes, tall) : one_mutant(&ctx, mutant);
    sml_handle_destroy(ctx.h);
    return rc;
}
