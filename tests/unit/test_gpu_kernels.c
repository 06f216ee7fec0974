/* test_gpu_kernels.c: every GPU kernel of the registry on the shape set below, checked
 * under the numerics contract (reference/check.h) against a double-precision reference that
 * is computed once per input and shared by all kernels.
 *
 * Per input: fresh random logits (normal, scale 3; for backward ops y is the reference
 * forward output rounded to the dtype and dy is random), one seed per input derived from the
 * printed run seed and the case's parameters, so a reproduce line re-creates the same data.
 * Per kernel: outputs poisoned with 0xFF bytes (NaN in every dtype) inside the rows; the
 * stride padding, 64 elements before and after every tensor and the bytes before a
 * misaligned base hold canaries (0x77 bytes: a large finite value, so a kernel that reads
 * them gets a wrong max) and must survive; inputs must be unchanged afterwards.
 *
 * Shapes: cols 1, 2, 3, 31, 32, 33, 127, 128, 129, 1000, 1024, 1025, 2048, 2049, 4096, 4097,
 * 8192, 8193, 12345, 65536, 2^20 + 3 and every `auto` threshold with one either side
 * (kernels/auto_dispatch.h);
 * rows 1 and 7; 7,001 rows of 1,000 columns (block's many-row plan); 4,099 forward rows of 1,000 and
 * 1,024 columns (its one-wave plan, the lean build); 9,281 forward rows of 255
 * columns (past auto's rows-per-SM limit for `warp`); 65,537 rows for two short rows; 48
 * backward rows of 131,077 columns, padded (the refill paths of `split` and `coop`); layouts:
 * dense, padded ld with canaries, base pointer offset by one element, in place (forward); plus
 * one tensor past 2^31 elements per direction, of which only rows around the 2^31 boundary and
 * the last rows are checked; plus the tall cases (TALL below): more rows than `split` has
 * resident clusters, on rows long enough for its whole-step loop, each op and dtype, checked
 * on sampled rows (run_sampled).
 *
 * Known deviations: a kernel whose registry line carries `known_deviation` (the vendor
 * baseline, measured to miss the contract on 16-bit rounding) has its value-bound misses
 * counted and printed as KNOWN DEVIATION instead of failing, but only when the checker saw no
 * NaN or inf mismatch and the worst error stays within KNOWN_DEVIATION_MAX_ULPS ulp of the
 * exact value (a far larger error is a new bug, not the measured one). Special-value mismatches,
 * overwritten canaries, changed inputs and launch errors fail as for any kernel. A launcher
 * may refuse a strided layout (ld > cols) with SML_ERR_UNSUPPORTED (cuDNN cannot honour the
 * row stride): that is counted as `refused`, never for `auto` and never for a dense layout.
 *
 *   --list-cases              print the number of inputs, kernel runs and elements; run nothing
 *   --kernel K --op O --dtype D --rows R --cols C --ld L --offset F --inplace 0|1 --seed S
 *                             re-run one case (any shape; the failure lines print this)
 *   --sampled                 with --rows/--cols: run it as a tall case (repeated rows, sampled
 *                             rows checked), as a tall case's reproduce line says
 *   --no-huge                 leave out the > 2^31-element cases
 *   --cpu                     run the CPU kernels instead (checks this harness without a GPU)
 *   --known-deviation K       treat kernel K as if its registry line had a known_deviation
 *                             (checks the known-deviation rule itself, e.g. with --cpu)
 *   --load PATH               load a plugin library's kernels (softmax_lab_plugin.h) into the
 *                             registry first, so they are tested like built-in ones (repeatable)
 *   --plant W                 after each run of a sampled case, damage one element of the
 *                             first checked row's padding, the last checked row's input, the
 *                             guard's last element, an output value, or one bit of row 0's
 *                             twin (W = padding, input, guard, value, twin), as a kernel bug
 *                             would: ctest runs each with --cpu to show that check fails */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "io/workers.h"
#include "kernels/auto_dispatch.h"
#include "kernels/vector_width.h"
#include "reference/check.h"
#include "core/dtype.h"
#include "prop/shard.h"
#include "reference/reference.h"
#include "softmax_lab_plugin.h"
#include "core/rng.h"
#include "test_support.h"
#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define TEST_NAME "test_gpu_kernels"
#define GUARD 64           /* canary elements before and after every tensor */
#define CANARY 0x77        /* fp32 5.0e33, fp16 30576, bf16 5.0e33: poisons a max if read */
#define POISON 0xFF        /* NaN in every dtype */
#define LOGIT_SCALE 3.0
#define BIG_ROWS 65537     /* past the 65,535 limit of a grid's y and z dimensions */
#define MANY_ROWS 7001     /* past 48 rows per SM on GPUs of up to 145 SMs: block's many-row plan */
#define WARP_ROWS 9281     /* past 64 rows per SM on GPUs of up to 145 SMs: auto's forward rows of
                              129-256 fp32 columns go to block, not warp (auto_dispatch.h) */
#define WARP_ROWS_COLS 255
#define WAVE_ROWS 4099     /* 28-53 rows per SM on GPUs of 78-145 SMs: more than one wave of K = 1
                              blocks, fewer than the many-row plan: block's forward one-wave plan
                              in its lean build (block_plan.h; 1,000 and 1,024 columns: fp32
                              64 x 4, 16-bit 64 x 2; 1,024 fp32 columns fill the block: the
                              lean build's whole-row path) */
#define WAVE_ROWS_COLS 1000
#define WAVE_ROWS_COLS_WHOLE 1024
/* Backward rows long enough for `split` clusters of 8-16 blocks and `coop` slices, and more of
 * them than resident clusters (or than two rounds of `coop` items): the only shapes where
 * those kernels refill shared memory with the next row or slice while writing the current
 * one (docs/KERNELS.md, `split` and `coop`). Padded, so rows are 16-byte aligned and the last chunk is
 * partial. */
#define LONG_ROWS 48
#define LONG_ROWS_COLS 131077

/* The tall cases: more rows than `split` has resident clusters (up to 16 blocks per SM of 64
 * threads, so thousands on short slices), so that every cluster carries a next row while it
 * writes one. Only then does `split`'s forward run its whole steps (unpredicated loads
 * and stores in pairs of steps, a step of the next row's tile ahead), and only on slices of
 * six chunks per thread or more. Two bugs planted there (the pair's tile buffers not swapped;
 * the pair's bound off by one) passed every case of the shape set above and 30,000 property
 * cases; these cases kill both (tests/mutants/patch_mutants.txt, docs/MUTANTS.md,
 * "Patch mutants"). The inputs repeat a few distinct rows and only sampled rows are checked
 * (run_sampled), so each case costs about what a few of its rows would; forward cases put
 * extreme rows among the checked ones (tall_extremes); `fwd_only`: the 2^20 rows, whose host
 * reference is the slow part, run forward only. Each distinct row is also compared, bit for
 * bit, with the last row that repeats it (twins_differ): a `split` that accumulates a cluster's
 * first row in other tiles than the rest differs only in bits. */
typedef struct tall_shape {
    int64_t rows, cols, ld;
    int fwd_only;
} tall_shape;
static const tall_shape TALL[] = {
    {8192, 16384, 16384, 0},   /* fp32: a pair of whole steps, one unpaired, one bounded; 16-bit: three pairs */
    {8192, 10641, 10648, 0},   /* partial last chunk; fp32 (512 threads, 2,660 whole chunks): a pair
                                  of thread 100 would end exactly on the partial chunk */
    {8192, 9603, 9608, 0},     /* the same for 16-bit (128 threads, 1,200 whole chunks): thread 48 */
    {512, 131075, 131080, 0},  /* clusters of 8 (forward) or 8-16 (backward), rows in several rounds */
    {128, ((int64_t)1 << 20) + 3, ((int64_t)1 << 20) + 8, 1}, /* clusters of 16, uncached tails */
    {66, 105812, 105820, 0},   /* fp32 backward in clusters of 16 refills by cp.async (2''), rows in a
                                  few rounds: the property suite's shape of its first-row bug.
                                  16-bit: ld * 2 bytes is not a multiple of 16, so scalar loads (2');
                                  512 x 131,075 carries 16-bit 2'' */
};
#define N_TALL (sizeof TALL / sizeof TALL[0])
#define HUGE_BLOCK 64      /* distinct rows replicated over a > 2^31-element tensor */
#define MAX_PICK 8         /* rows checked of a sampled (huge or tall) case */
#define INPUT_CHECK_BYTES ((size_t)64 << 20) /* re-read inputs after a run up to this size */
#define MAX_KERNELS 64
#define PRINT_CAP 8        /* failures printed per kernel and dtype; the rest are counted */
/* Measured for cuDNN 9.14 on an H100: worst 1.47 ulp from exact (2.91 x the bound). One ulp
 * off the correctly rounded value is under 1.5 ulp from exact; past 2 ulp it is not the
 * deviation that was measured but a new bug, and fails. */
#define KNOWN_DEVIATION_MAX_ULPS 2.0

typedef enum variant { VAR_PLAIN, VAR_PADDED, VAR_MISALIGNED, VAR_INPLACE, VAR_COUNT } variant;
static const char *const VARIANT_NAMES[VAR_COUNT] = {"dense", "padded-ld", "misaligned", "in-place"};

typedef struct tcase {
    sml_op op;
    sml_dtype dt;
    int64_t rows, cols, ld, offset;
    int inplace;
    variant var;
    int sampled; /* a tall case: repeated rows, sampled rows checked (run_sampled) */
} tcase;

typedef struct opts {
    const char *argv0, *kernel;
    int op, dt;                             /* -1: all */
    int64_t rows, cols, ld, offset, inplace; /* -1: not given */
    uint64_t seed;
    int list, cpu, huge, sampled;
    const char *mark_known; /* --known-deviation */
    const char *plant;      /* --plant: a harness self-check (sampled cases) */
    const char *loads[8];   /* --load: plugin libraries whose kernels join the registry */
    int nloads;
    sml_shard shard;        /* --shard K/N: every N-th case from K-1 (a worker's slice) */
    const char *devices;    /* --devices D[,D] */
} opts;

typedef struct cell {
    int64_t cases, fails, known, refused;
    double worst_ratio, worst_ulps;
    double known_ratio, known_ulps; /* worst among the KNOWN DEVIATION cases */
} cell;

typedef struct ctx {
    opts o;
    sml_tally tally;
    sml_handle *h;
    sml_device dev;
    int has_clusters, sms;
    float dram; /* what auto's decision reads of the device (src/core/internal.h) */
    cell stats[MAX_KERNELS][SML_DTYPE_COUNT];
    int64_t n_inputs, n_runs, n_elems, n_checked; /* --list-cases */
    int dead;                          /* a CUDA error: the context may be unusable, stop */
    int64_t visited;                   /* cases enumerated so far: the index --shard slices */
} ctx;

/* ---- shape set ------------------------------------------------------------------------ */

/* Edge columns (1-3, each side of a warp, of 128, 1,024, 4,096, 8,192, 2^16 and past 2^20), plus
 * where `block` changes its plan (1023-1025: short rows to the forward plan), its chunks per thread or its block size (2048/2049, 8191-8193; 4096/4097 are in
 * the list). */
static const int64_t BASE_COLS[] = {1, 2, 3, 31, 32, 33, 127, 128, 129, 1000, 1023, 1024, 1025, 2048, 2049,
                                    4096, 4097, 8191, 8192, 8193, 12345, 65536, ((int64_t)1 << 20) + 3};
#define N_BASE_COLS (sizeof BASE_COLS / sizeof BASE_COLS[0])
static const int64_t BIG_ROWS_COLS[] = {3, 33};
static const int64_t MANY_ROWS_COLS = 1000; /* fp32: 4 chunks x 63 threads; 16-bit: 2 x 63 */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The base columns plus every auto threshold and one either side, sorted, unique. */
static int all_cols(int64_t *out) {
    int n = 0;
    for (size_t i = 0; i < N_BASE_COLS; i++) out[n++] = BASE_COLS[i];
    for (int t = 0; t < SML_AUTO_N_COL_THRESHOLDS; t++)
        for (int d = -1; d <= 1; d++) out[n++] = sml_auto_col_threshold(t) + d;
    qsort(out, (size_t)n, sizeof *out, cmp_i64);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i]) out[m++] = out[i];
    return m;
}

/* A row stride past cols that keeps rows 16-byte aligned for every dtype (8 elements),
 * so the padded layout still takes the vector path and the misaligned one cannot. */
static int64_t padded_ld(int64_t cols) { return (cols + 1 + 7) / 8 * 8; }

/* Which (rows, cols, layout, op) combinations run. The host-side reference and contract
 * checks (about 100 ns per element per kernel) are the slow part, so large inputs run on
 * fewer layouts: rows past 1,025 columns use 7 rows only dense and padded (1 row for the
 * misaligned and in-place layouts); the 2^20 + 3 rows run once (1 row), misaligned only for
 * softmax and softmax_bwd and in place only for softmax; 65,537 rows run dense on two short
 * rows (the grid-limit question does not depend on the row length); 7,001 rows run dense on
 * 1,000 columns, where `block` switches to fewer, fuller threads (softmax_block.cu); 9,281 rows
 * run dense on 255 columns, forward only, where `auto` leaves `warp` for `block`; 4,099 rows run
 * dense on 1,000 and 1,024 columns, forward only, where `block` halves its blocks to fit one wave
 * and runs its 32-register build. */
static int admit(int64_t rows, int64_t cols, variant v, sml_op op) {
    if (rows == BIG_ROWS) {
        if (v != VAR_PLAIN) return 0;
        for (size_t i = 0; i < sizeof BIG_ROWS_COLS / sizeof BIG_ROWS_COLS[0]; i++)
            if (cols == BIG_ROWS_COLS[i]) return 1;
        return 0;
    }
    if (rows == MANY_ROWS) return v == VAR_PLAIN && cols == MANY_ROWS_COLS;
    if (rows == WARP_ROWS) return v == VAR_PLAIN && cols == WARP_ROWS_COLS && !sml_op_is_backward(op);
    if (rows == WAVE_ROWS)
        return v == VAR_PLAIN && (cols == WAVE_ROWS_COLS || cols == WAVE_ROWS_COLS_WHOLE) && !sml_op_is_backward(op);
    if (cols > 65536) {
        if (rows != 1) return 0;
        if (v == VAR_MISALIGNED) return op == SML_SOFTMAX || op == SML_SOFTMAX_BWD;
        if (v == VAR_INPLACE) return op == SML_SOFTMAX;
        return 1;
    }
    if (cols > 1025 && rows > 1) return v == VAR_PLAIN || v == VAR_PADDED;
    return 1;
}

static tcase make_case(sml_op op, sml_dtype dt, int64_t rows, int64_t cols, variant v) {
    tcase t = {op, dt, rows, cols, cols, 0, 0, v, 0};
    if (v == VAR_PADDED || v == VAR_MISALIGNED || v == VAR_INPLACE) t.ld = padded_ld(cols);
    if (v == VAR_MISALIGNED) t.offset = 1;
    if (v == VAR_INPLACE) t.inplace = 1;
    return t;
}

static int huge_case(const tcase *t) { return (t->rows - 1) * t->ld + t->cols > ((int64_t)1 << 31); }
/* Huge and tall cases run through run_sampled. */
static int sampled_case(const tcase *t) { return huge_case(t) || t->sampled; }

/* ---- helpers ---------------------------------------------------------------------------- */

static uint64_t case_seed(uint64_t run_seed, const tcase *t) {
    uint64_t k = (uint64_t)t->op | (uint64_t)t->dt << 4 | (uint64_t)t->inplace << 8;
    uint64_t s = k ^ 0x9E3779B97F4A7C15ull;
    s = sml_splitmix64(&s) ^ (uint64_t)t->rows;
    s = sml_splitmix64(&s) ^ (uint64_t)t->cols;
    s = sml_splitmix64(&s) ^ (uint64_t)t->ld;
    s = sml_splitmix64(&s) ^ (uint64_t)t->offset;
    return sml_derive_seed(run_seed, sml_splitmix64(&s));
}

static void repro_line(const ctx *c, const char *kernel, const tcase *t, char *buf, size_t n) {
    char loads[2048] = "";
    for (int i = 0; i < c->o.nloads; i++) {
        size_t used = strlen(loads);
        snprintf(loads + used, sizeof loads - used, " --load %s", c->o.loads[i]);
    }
    int len = snprintf(buf, n, "%s%s%s --kernel %s --op %s --dtype %s --rows %" PRId64 " --cols %" PRId64
                               " --ld %" PRId64 " --offset %" PRId64 " --inplace %d --seed 0x%" PRIx64,
                       c->o.argv0, loads, c->o.cpu ? " --cpu" : "", kernel, sml_op_name(t->op),
                       sml_dtype_name(t->dt), t->rows, t->cols, t->ld, t->offset, t->inplace, c->o.seed);
    if (t->sampled && len > 0 && (size_t)len < n) len += snprintf(buf + len, n - (size_t)len, " --sampled");
    if (c->o.mark_known && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " --known-deviation %s", c->o.mark_known);
}

static void describe(const ctx *c, const sml_kernel *k, const tcase *t, char *buf, size_t n) {
    int len = snprintf(buf, n, "%s %s %s rows=%" PRId64 " cols=%" PRId64 " ld=%" PRId64 " (%s)",
                       k->name, sml_op_name(t->op), sml_dtype_name(t->dt), t->rows, t->cols, t->ld,
                       VARIANT_NAMES[t->var]);
    if (len > 0 && (size_t)len < n && !strcmp(k->name, "auto"))
        snprintf(buf + len, n - (size_t)len, " auto->%s",
                 sml_auto_path_name(sml_auto_pick(t->op, t->dt, t->rows, t->cols,
                                                  t->offset == 0 && sml_stride_takes_vectors(t->ld, t->dt),
                                                  c->sms, c->has_clusters, c->dram)));
}

static int kernel_selected(const ctx *c, const sml_kernel *k) {
    if (k->device != c->dev) return 0;
    return !c->o.kernel || !strcmp(c->o.kernel, k->name);
}

/* 1 when k is registered for this op, dtype and row length (what sml_validate checks
 * before it looks at pointers and devices). */
static int kernel_supports(const sml_kernel *k, const tcase *t) {
    if (!(k->ops & (1u << t->op)) || !(k->dtypes & (1u << t->dt))) return 0;
    return t->cols >= k->min_cols && (k->max_cols == 0 || t->cols <= k->max_cols);
}

static void record(ctx *c, size_t ki, sml_dtype dt, int fail, const sml_check_report *r) {
    cell *s = &c->stats[ki][dt];
    s->cases++;
    if (fail) s->fails++;
    if (r && r->checked > 0) {
        if (r->worst_ratio > s->worst_ratio) s->worst_ratio = r->worst_ratio;
        if (r->worst_ulps > s->worst_ulps) s->worst_ulps = r->worst_ulps;
    }
}

/* The kernel's known deviation (registry, or --known-deviation for a harness check). */
static const char *known_deviation(const ctx *c, const sml_kernel *k) {
    if (c->o.mark_known && !strcmp(c->o.mark_known, k->name))
        return k->known_deviation ? k->known_deviation : "(marked by --known-deviation)";
    return k->known_deviation;
}

static sml_status dev_copy(sml_buffer *dst, size_t dst_off, const sml_buffer *src, size_t src_off,
                           size_t n) {
    if (dst->device == SML_DEVICE_CPU) {
        memcpy((char *)dst->ptr + dst_off, (const char *)src->ptr + src_off, n);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    return cudaMemcpy((char *)dst->ptr + dst_off, (const char *)src->ptr + src_off, n,
                      cudaMemcpyDeviceToDevice) == cudaSuccess ? SML_OK : SML_ERR_CUDA;
#else
    return SML_ERR_NO_DEVICE;
#endif
}

static sml_status dev_fill(sml_buffer *b, size_t off, unsigned char byte, size_t n) {
    if (b->device == SML_DEVICE_CPU) {
        memset((char *)b->ptr + off, byte, n);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    if (cudaMemset((char *)b->ptr + off, byte, n) != cudaSuccess) return SML_ERR_CUDA;
    return cudaDeviceSynchronize() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
#else
    return SML_ERR_NO_DEVICE;
#endif
}

/* First byte outside the rows where `got` differs from `image`; -1 if none. The rows are
 * elements [base + r*ld, base + r*ld + cols) of a buffer of `total` elements. */
static int64_t changed_outside_rows(const unsigned char *got, const unsigned char *image, size_t esz,
                                    int64_t total, int64_t base, const tcase *t) {
    int64_t from = 0;
    for (int64_t r = 0; r <= t->rows; r++) {
        int64_t to = r < t->rows ? base + r * t->ld : total;
        if (to > from && memcmp(got + from * esz, image + from * esz, (size_t)(to - from) * esz)) {
            for (int64_t i = from; i < to; i++)
                if (memcmp(got + i * esz, image + i * esz, esz)) return i;
        }
        if (r < t->rows) from = base + r * t->ld + t->cols;
    }
    return -1;
}

/* Host images [GUARD + offset | rows with stride ld | GUARD] full of canaries. */
static unsigned char *canary_image(size_t bytes) {
    unsigned char *p = malloc(bytes);
    if (p) memset(p, CANARY, bytes);
    return p;
}

/* Random logits (forward) or a real y plus random dy (backward), written in the dtype into
 * x and dy laid out with stride ld. */
static sml_status make_inputs(const tcase *t, uint64_t seed, void *x, void *dy) {
    sml_rng rng;
    sml_rng_seed(&rng, seed);
    for (int64_t r = 0; r < t->rows; r++)
        for (int64_t j = 0; j < t->cols; j++)
            sml_store(t->dt, x, r * t->ld + j, LOGIT_SCALE * sml_rng_normal(&rng));
    if (!sml_op_is_backward(t->op)) return SML_OK;
    double *y = malloc((size_t)(t->rows * t->cols) * sizeof *y);
    if (!y) return SML_ERR_OUT_OF_MEMORY;
    sml_op fwd = t->op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
    sml_status s = sml_ref_run(fwd, t->dt, t->rows, t->cols, t->ld, x, NULL, y);
    if (s == SML_OK)
        for (int64_t r = 0; r < t->rows; r++)
            for (int64_t j = 0; j < t->cols; j++) {
                sml_store(t->dt, x, r * t->ld + j, y[r * t->cols + j]);
                sml_store(t->dt, dy, r * t->ld + j, sml_rng_normal(&rng));
            }
    free(y);
    return s;
}

/* Count a failure; print it with its reproduce line unless this kernel and dtype already
 * printed PRINT_CAP (a kernel broken everywhere would otherwise bury the summary). */
static void report_fail(ctx *c, size_t ki, const sml_kernel *k, const tcase *t,
                        const sml_check_report *rep, const char *detail) {
    cell *cl = &c->stats[ki][t->dt];
    if (cl->fails < PRINT_CAP) {
        char repro[512], what[256];
        repro_line(c, k->name, t, repro, sizeof repro);
        describe(c, k, t, what, sizeof what);
        sml_tally_fail(&c->tally, repro, "%s: %s", what, detail);
        if (cl->fails + 1 == PRINT_CAP)
            printf("  (further failures of %s %s are counted, not printed)\n", k->name, sml_dtype_name(t->dt));
    } else {
        c->tally.failed++;
    }
    record(c, ki, t->dt, 1, rep);
}

static void fail_run(ctx *c, size_t ki, const sml_kernel *k, const tcase *t, const char *what,
                     const char *detail) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s%s", what, detail);
    report_fail(c, ki, k, t, NULL, msg);
}

/* The verdict on a checked output: pass, KNOWN DEVIATION (a value-bound miss of a kernel
 * with a known deviation: no NaN or inf mismatch, worst error within
 * KNOWN_DEVIATION_MAX_ULPS), or fail. `detail` is the checker's message. */
static void judge(ctx *c, size_t ki, const sml_kernel *k, const tcase *t, sml_status s,
                  const sml_check_report *rep, const char *detail) {
    if (s == SML_OK && rep->pass) {
        sml_tally_pass(&c->tally);
        record(c, ki, t->dt, 0, rep);
        return;
    }
    const char *known = known_deviation(c, k);
    if (s == SML_OK && known && rep->nan_mismatch == 0 && rep->inf_mismatch == 0 &&
        rep->worst_ulps <= KNOWN_DEVIATION_MAX_ULPS) {
        cell *cl = &c->stats[ki][t->dt];
        if (cl->known < PRINT_CAP) {
            char what[256], repro[512];
            describe(c, k, t, what, sizeof what);
            repro_line(c, k->name, t, repro, sizeof repro);
            printf("KNOWN DEVIATION %s: %s: worst %.3g ulp (%.3g x the bound): %s\n  reproduce: %s\n", TEST_NAME,
                   what, rep->worst_ulps, rep->worst_ratio, detail, repro);
            if (cl->known + 1 == PRINT_CAP)
                printf("  (further known deviations of %s %s are counted, not printed)\n", k->name,
                       sml_dtype_name(t->dt));
        }
        cl->known++;
        if (rep->worst_ratio > cl->known_ratio) cl->known_ratio = rep->worst_ratio;
        if (rep->worst_ulps > cl->known_ulps) cl->known_ulps = rep->worst_ulps;
        record(c, ki, t->dt, 0, rep);
        return;
    }
    report_fail(c, ki, k, t, rep, detail);
}

/* ---- one input, every kernel --------------------------------------------------------- */

static void run_input(ctx *c, const tcase *t) {
    const size_t esz = sml_dtype_size(t->dt);
    const int bwd = sml_op_is_backward(t->op);
    const int64_t span = (t->rows - 1) * t->ld + t->cols;
    const int64_t base = GUARD + t->offset, total = base + span + GUARD;
    const size_t bytes = (size_t)total * esz, data = (size_t)base * esz;
    const uint64_t seed = case_seed(c->o.seed, t);
    unsigned char *hx = canary_image(bytes), *hdy = bwd ? canary_image(bytes) : NULL;
    unsigned char *hout0 = canary_image(bytes), *hgot = malloc(bytes), *hcheck = NULL;
    double *want = malloc((size_t)(t->rows * t->cols) * sizeof *want);
    sml_buffer bx = {0}, bdy = {0}, bout = {0};
    char msg[160];
    if (!hx || (bwd && !hdy) || !hout0 || !hgot || !want) {
        printf("FAIL %s: out of host memory for rows=%" PRId64 " cols=%" PRId64 "\n", TEST_NAME, t->rows, t->cols);
        c->tally.failed++;
        goto done;
    }
    sml_status s = make_inputs(t, seed, hx + data, bwd ? hdy + data : NULL);
    if (s == SML_OK)
        s = sml_ref_run(t->op, t->dt, t->rows, t->cols, t->ld, hx + data, bwd ? hdy + data : NULL, want);
    if (s != SML_OK) {
        printf("FAIL %s: reference failed (%s) for %s %s rows=%" PRId64 " cols=%" PRId64 "\n", TEST_NAME,
               sml_strerror(s), sml_op_name(t->op), sml_dtype_name(t->dt), t->rows, t->cols);
        c->tally.failed++;
        goto done;
    }
    /* The output image: poison inside the rows, canaries around them. */
    for (int64_t r = 0; r < t->rows; r++) memset(hout0 + data + (size_t)(r * t->ld) * esz, POISON, (size_t)t->cols * esz);
    s = sml_buffer_alloc(&bx, c->dev, bytes);
    if (s == SML_OK && bwd) s = sml_buffer_alloc(&bdy, c->dev, bytes);
    if (s == SML_OK && !t->inplace) s = sml_buffer_alloc(&bout, c->dev, bytes);
    if (s == SML_OK) s = sml_buffer_upload(&bx, 0, hx, bytes);
    if (s == SML_OK && bwd) s = sml_buffer_upload(&bdy, 0, hdy, bytes);
    if (s != SML_OK) {
        printf("FAIL %s: device buffers (%zu bytes): %s\n", TEST_NAME, bytes, sml_strerror(s));
        c->tally.failed++;
        goto done;
    }
    if (bytes <= INPUT_CHECK_BYTES) hcheck = malloc(bytes);

    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS; ki++) {
        const sml_kernel *k = sml_kernel_at(ki);
        if (!kernel_selected(c, k)) continue;
        sml_buffer *out = t->inplace ? &bx : &bout;
        sml_problem p = {t->op, t->dt, t->rows, t->cols, t->ld, (char *)bx.ptr + data,
                         bwd ? (char *)bdy.ptr + data : NULL, (char *)out->ptr + data, NULL};
        s = sml_validate(k, &p);
        if (s == SML_ERR_UNSUPPORTED || (s == SML_ERR_NO_DEVICE && !k->launch)) {
            c->tally.skipped++;
            continue;
        }
        if (s != SML_OK) {
            fail_run(c, ki, k, t, "sml_validate: ", sml_strerror(s));
            continue;
        }
        const unsigned char *image = t->inplace ? hx : hout0;
        s = sml_buffer_upload(out, 0, image, bytes);
        if (s == SML_OK) s = sml_run(k, c->h, &p);
        if (s == SML_ERR_UNSUPPORTED && t->ld != t->cols && strcmp(k->name, "auto") != 0) {
            /* A layout the launcher cannot honour (cuDNN and row strides): refused, counted. */
            c->stats[ki][t->dt].refused++;
            c->tally.skipped++;
            continue;
        }
        if (s == SML_OK) s = sml_device_sync(c->dev, NULL);
        if (s == SML_OK) s = sml_buffer_download(out, 0, hgot, bytes);
        if (s != SML_OK) {
            snprintf(msg, sizeof msg, "%s (%s)", sml_strerror(s),
                     c->dev == SML_DEVICE_GPU ? sml_last_cuda_error() : "cpu");
            fail_run(c, ki, k, t, "run failed: ", msg);
            if (s == SML_ERR_CUDA) { c->dead = 1; break; }
            continue;
        }
        int64_t at = changed_outside_rows(hgot, image, esz, total, base, t);
        if (at >= 0) {
            int64_t rel = at - base, row = rel >= 0 ? rel / t->ld : -1;
            snprintf(msg, sizeof msg, "element %" PRId64 " from the base (row %" PRId64 ", col %" PRId64
                                      ") outside the rows was overwritten",
                     rel, row, rel >= 0 ? rel % t->ld : rel);
            fail_run(c, ki, k, t, "", msg);
            continue;
        }
        if (hcheck && !t->inplace) {
            s = sml_buffer_download(&bx, 0, hcheck, bytes);
            int bad = s != SML_OK || memcmp(hcheck, hx, bytes);
            if (!bad && bwd) {
                s = sml_buffer_download(&bdy, 0, hcheck, bytes);
                bad = s != SML_OK || memcmp(hcheck, hdy, bytes);
            }
            if (bad) {
                fail_run(c, ki, k, t, "", "an input buffer changed");
                sml_buffer_upload(&bx, 0, hx, bytes);
                if (bwd) sml_buffer_upload(&bdy, 0, hdy, bytes);
                continue;
            }
        }
        sml_check_report rep;
        memset(&rep, 0, sizeof rep);
        s = sml_check_against(t->op, t->dt, t->rows, t->cols, t->ld, hx + data, bwd ? hdy + data : NULL,
                              want, hgot + data, &rep);
        judge(c, ki, k, t, s, &rep, s != SML_OK ? sml_strerror(s) : rep.message);
    }
done:
    sml_buffer_free(&bx);
    sml_buffer_free(&bdy);
    sml_buffer_free(&bout);
    free(hx);
    free(hdy);
    free(hout0);
    free(hgot);
    free(hcheck);
    free(want);
}

/* ---- past 2^31 elements ------------------------------------------------------------------ */

/* Distinct rows a sampled case's input repeats. For the tall cases a prime, so that a kernel
 * that reads the row k rows away is seen unless k is a multiple of it, and fewer on long rows,
 * whose host reference is the cost. */
static int64_t sampled_block(const tcase *t) {
    const int64_t nb = huge_case(t) ? HUGE_BLOCK
                       : t->cols <= ((int64_t)1 << 15) ? 61
                       : t->cols <= ((int64_t)1 << 18) ? 7
                                                        : 3;
    return t->rows < nb ? t->rows : nb;
}

/* The rows of a sampled case that are downloaded and checked, each once. Huge: the first two,
 * the three around element 2^31, the last two. Tall: the first two, the first repeat, the middle
 * and the last two, which are next rows of some cluster whenever there are fewer than half as
 * many clusters as rows; on rows past 2^18 columns only the first, one past the middle and the
 * last (in the 128-row tall case, one of each of its 3 distinct rows). */
static int sampled_rows(const tcase *t, int64_t nb, int64_t *pick) {
    int64_t cand[MAX_PICK];
    int n = 0;
    cand[n++] = 0;
    if (huge_case(t)) {
        const int64_t rb = ((int64_t)1 << 31) / t->ld;
        cand[n++] = 1;
        cand[n++] = rb - 1;
        cand[n++] = rb;
        cand[n++] = rb + 1;
        cand[n++] = t->rows - 2;
    } else if (t->cols > ((int64_t)1 << 18)) {
        cand[n++] = t->rows / 2 + 1;
    } else {
        cand[n++] = 1;
        cand[n++] = nb;
        cand[n++] = t->rows / 2;
        cand[n++] = t->rows - 2;
    }
    cand[n++] = t->rows - 1;
    int np = 0;
    for (int i = 0; i < n; i++) {
        int dup = cand[i] < 0 || cand[i] >= t->rows;
        for (int j = 0; j < np && !dup; j++) dup = pick[j] == cand[i];
        if (!dup) pick[np++] = cand[i];
    }
    return np;
}

/* The twin of row i < nb: the last row with the same input (the rows repeat every nb), in
 * another place in the batch, and for `split` a later row of some cluster while row i is likely
 * a cluster's first; its output must have row i's bits exactly (the property suite's
 * row_independence, here on every sampled shape). -1 when there is none. */
static int64_t sampled_twin(const tcase *t, int64_t nb, int64_t i) {
    const int64_t twin = i + (t->rows - 1 - i) / nb * nb;
    return twin > i ? twin : -1;
}

/* Each of the nb distinct rows against its twin, bit for bit; 0, or 1 with msg filled. `a`, `b`:
 * row buffers of cols elements. */
static int twins_differ(const tcase *t, int64_t nb, sml_buffer *bout, unsigned char *a, unsigned char *b,
                        char *msg, size_t msg_n) {
    const size_t esz = sml_dtype_size(t->dt), n = (size_t)t->cols * esz;
    for (int64_t i = 0; i < nb; i++) {
        const int64_t twin = sampled_twin(t, nb, i);
        if (twin < 0) continue;
        sml_status s = sml_buffer_download(bout, (size_t)(i * t->ld) * esz, a, n);
        if (s == SML_OK) s = sml_buffer_download(bout, (size_t)(twin * t->ld) * esz, b, n);
        if (s != SML_OK) {
            snprintf(msg, msg_n, "downloading rows %" PRId64 " and %" PRId64 ": %s", i, twin, sml_strerror(s));
            return 1;
        }
        if (!memcmp(a, b, n)) continue;
        int64_t d = 0;
        while (memcmp(a + (size_t)d * esz, b + (size_t)d * esz, esz) == 0) d++;
        snprintf(msg, msg_n,
                 "row %" PRId64 ", the same input as row %" PRId64 ", gives other bits at col %" PRId64
                 " (%.9g, row %" PRId64 " %.9g): a row's output depends on its place in the batch",
                 twin, i, d, sml_load(t->dt, b, d), i, sml_load(t->dt, a, d));
        return 1;
    }
    return 0;
}

/* Extreme rows among the checked rows of a tall forward case, so that `split`'s whole steps see
 * them too: one +inf (a NaN row), all -inf (a NaN row), one NaN, a spread of 2e4 (one-hot), every
 * other element -inf (masked). The first and the last checked rows stay normal; a block row
 * gets at most one pattern; the patterns rotate with the op and dtype, so each tall shape meets
 * several across its cases. The reference is computed after, from the same values. */
static void tall_extremes(const tcase *t, unsigned char *hx, int64_t nb, const int64_t *pick, int np) {
    int k = (int)t->op + (int)t->dt;
    for (int i = 1; i + 1 < np; i++) {
        const int64_t src = pick[i] % nb, o = src * t->ld;
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= pick[j] % nb == src;
        if (dup) continue;
        switch (k++ % 5) {
        case 0: sml_store(t->dt, hx, o + t->cols / 3, INFINITY); break;
        case 1:
            for (int64_t j = 0; j < t->cols; j++) sml_store(t->dt, hx, o + j, -INFINITY);
            break;
        case 2: sml_store(t->dt, hx, o + 2 * t->cols / 3, NAN); break;
        case 3:
            for (int64_t j = 0; j < t->cols; j++) sml_store(t->dt, hx, o + j, -1e4 + (double)(j % 7));
            sml_store(t->dt, hx, o + t->cols / 2, 1e4);
            break;
        default:
            for (int64_t j = 0; j < t->cols; j += 2) sml_store(t->dt, hx, o + j, -INFINITY);
            break;
        }
    }
}

/* The output image of a sampled case, built on the device (run_input builds it on the host and
 * uploads it; these tensors are too big to): rows poisoned, stride padding and guard canaries. */
static sml_status dev_poison_rows(sml_buffer *b, const tcase *t, size_t bytes) {
    const size_t esz = sml_dtype_size(t->dt), span = (size_t)((t->rows - 1) * t->ld + t->cols) * esz;
    if (t->ld == t->cols) { /* the rows are one run of elements */
        sml_status s = dev_fill(b, 0, POISON, span);
        return s == SML_OK ? dev_fill(b, span, CANARY, bytes - span) : s;
    }
    sml_status s = dev_fill(b, 0, CANARY, bytes);
    if (s != SML_OK) return s;
    if (b->device == SML_DEVICE_CPU) {
        for (int64_t r = 0; r < t->rows; r++)
            memset((char *)b->ptr + (size_t)(r * t->ld) * esz, POISON, (size_t)t->cols * esz);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    if (cudaMemset2D(b->ptr, (size_t)t->ld * esz, POISON, (size_t)t->cols * esz, (size_t)t->rows) != cudaSuccess)
        return SML_ERR_CUDA;
    return cudaDeviceSynchronize() == cudaSuccess ? SML_OK : SML_ERR_CUDA;
#else
    return SML_ERR_NO_DEVICE;
#endif
}

/* A sampled case's input on the device: the nb-row host block uploaded, then doubled by device
 * copies until it fills the tensor (row r holds block row r % nb). */
static sml_status sampled_upload(sml_buffer *b, const tcase *t, int64_t nb, const unsigned char *block) {
    const size_t esz = sml_dtype_size(t->dt);
    sml_status s = sml_buffer_upload(b, 0, block, (size_t)(nb * t->ld) * esz);
    for (int64_t done_rows = nb; s == SML_OK && done_rows < t->rows;) {
        const int64_t n = done_rows < t->rows - done_rows ? done_rows : t->rows - done_rows;
        s = dev_copy(b, (size_t)(done_rows * t->ld) * esz, b, 0, (size_t)(n * t->ld) * esz);
        done_rows += n;
    }
    return s;
}

/* --plant: after each kernel run of a sampled case, the harness itself damages what the checks
 * look at, as a kernel bug would, so that a test of this harness can show each check fails. */
static sml_status plant(const ctx *c, const tcase *t, const int64_t *pick, int np, sml_buffer *bx,
                        sml_buffer *bout, size_t bytes) {
    const size_t esz = sml_dtype_size(t->dt);
    const char *w = c->o.plant;
    if (!w) return SML_OK;
    if (!strcmp(w, "padding") && t->ld > t->cols) /* one element of the first checked row's padding */
        return dev_fill(bout, (size_t)(pick[0] * t->ld + t->cols) * esz, 0, esz);
    if (!strcmp(w, "input")) return dev_fill(bx, (size_t)(pick[np - 1] * t->ld) * esz, 0, esz);
    if (!strcmp(w, "guard")) return dev_fill(bout, bytes - esz, 0, esz); /* the guard's last element */
    if (!strcmp(w, "value")) return dev_fill(bout, (size_t)(pick[np - 1] * t->ld + t->cols / 2) * esz, POISON, esz);
    const int64_t twin = sampled_twin(t, sampled_block(t), 0);
    if (!strcmp(w, "twin") && twin > 0) { /* row 0's twin's last element: its lowest bit flipped */
        const size_t at = (size_t)(twin * t->ld + t->cols - 1) * esz;
        unsigned char lo;
        sml_status s = sml_buffer_download(bout, at, &lo, 1);
        lo ^= 0x01;
        return s == SML_OK ? sml_buffer_upload(bout, at, &lo, 1) : s;
    }
    return SML_OK;
}

/* A huge or tall case. The device tensor repeats sampled_block() random rows (sampled_upload);
 * only the rows of sampled_rows() are downloaded, with their stride padding, and checked, plus
 * the inputs' same rows and the whole guard after the end. */
static void run_sampled(ctx *c, const tcase *t) {
    const size_t esz = sml_dtype_size(t->dt);
    const int bwd = sml_op_is_backward(t->op);
    const int64_t nb = sampled_block(t);
    const int64_t span = (t->rows - 1) * t->ld + t->cols, full = t->rows * t->ld;
    const size_t bytes = (size_t)(full + GUARD) * esz, block_bytes = (size_t)(nb * t->ld) * esz;
    const size_t row_bytes = (size_t)t->ld * esz, gbytes = bytes - (size_t)span * esz;
    int64_t pick[MAX_PICK];
    const int np = sampled_rows(t, nb, pick);
    tcase blk = *t;
    blk.rows = nb;
    unsigned char *hx = canary_image(block_bytes), *hdy = bwd ? canary_image(block_bytes) : NULL;
    double *want = malloc((size_t)(nb * t->cols) * sizeof *want);
    size_t pbytes = (size_t)(np * t->cols) * esz;
    unsigned char *px = malloc(pbytes), *pdy = malloc(pbytes), *pgot = malloc(pbytes);
    unsigned char *row = malloc(row_bytes), *twin_row = malloc(row_bytes), *guard = malloc(gbytes);
    double *pwant = malloc((size_t)(np * t->cols) * sizeof *pwant);
    sml_buffer bx = {0}, bdy = {0}, bout = {0};
    char msg[512];
    sml_status s = (hx && (!bwd || hdy) && want && px && pdy && pgot && pwant && row && twin_row && guard) ? SML_OK
                                                                                          : SML_ERR_OUT_OF_MEMORY;
    if (s == SML_OK) s = make_inputs(&blk, case_seed(c->o.seed, t), hx, bwd ? hdy : NULL);
    if (s == SML_OK && !bwd && !huge_case(t)) tall_extremes(t, hx, nb, pick, np);
    if (s == SML_OK) s = sml_ref_run(t->op, t->dt, nb, t->cols, t->ld, hx, bwd ? hdy : NULL, want);
    if (s != SML_OK) {
        printf("FAIL %s: sampled case setup on the host: %s\n", TEST_NAME, sml_strerror(s));
        c->tally.failed++;
        goto done;
    }
    for (int i = 0; i < np; i++) {
        int64_t src = pick[i] % nb;
        memcpy(px + (size_t)(i * t->cols) * esz, hx + (size_t)(src * t->ld) * esz, (size_t)t->cols * esz);
        if (bwd) memcpy(pdy + (size_t)(i * t->cols) * esz, hdy + (size_t)(src * t->ld) * esz, (size_t)t->cols * esz);
        memcpy(pwant + i * t->cols, want + src * t->cols, (size_t)t->cols * sizeof *want);
    }
    s = sml_buffer_alloc(&bx, c->dev, bytes);
    if (s == SML_OK && bwd) s = sml_buffer_alloc(&bdy, c->dev, bytes);
    if (s == SML_OK) s = sml_buffer_alloc(&bout, c->dev, bytes);
    if (s == SML_ERR_OUT_OF_MEMORY) {
        printf("SKIP %s: %s rows=%" PRId64 " cols=%" PRId64 ": not enough device memory for 2-3 x %zu bytes\n",
               TEST_NAME, sml_op_name(t->op), t->rows, t->cols, bytes);
        c->tally.skipped++;
        goto done;
    }
    if (s == SML_OK) s = sampled_upload(&bx, t, nb, hx);
    if (s == SML_OK && bwd) s = sampled_upload(&bdy, t, nb, hdy);
    if (s != SML_OK) {
        printf("FAIL %s: sampled case device setup: %s\n", TEST_NAME, sml_strerror(s));
        c->tally.failed++;
        goto done;
    }
    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS; ki++) {
        const sml_kernel *k = sml_kernel_at(ki);
        if (!kernel_selected(c, k)) continue;
        sml_problem p = {t->op, t->dt, t->rows, t->cols, t->ld, bx.ptr, bwd ? bdy.ptr : NULL, bout.ptr, NULL};
        s = sml_validate(k, &p);
        if (s == SML_ERR_UNSUPPORTED || (s == SML_ERR_NO_DEVICE && !k->launch)) {
            c->tally.skipped++;
            continue;
        }
        s = dev_poison_rows(&bout, t, bytes);
        if (s == SML_OK) s = sml_run(k, c->h, &p);
        if (s == SML_ERR_UNSUPPORTED && t->ld != t->cols && strcmp(k->name, "auto") != 0) {
            c->stats[ki][t->dt].refused++; /* as in run_input */
            c->tally.skipped++;
            continue;
        }
        if (s == SML_OK) s = sml_device_sync(c->dev, NULL);
        if (s == SML_OK) s = plant(c, t, pick, np, &bx, &bout, bytes);
        /* Each checked row with its stride padding (the last row has none: the guard follows). */
        const char *bad = NULL;
        int64_t bad_row = -1;
        int inputs_changed = 0;
        for (int i = 0; i < np && s == SML_OK && !bad; i++) {
            const size_t n = pick[i] == t->rows - 1 ? (size_t)t->cols * esz : row_bytes;
            const size_t at = (size_t)(pick[i] * t->ld) * esz;
            s = sml_buffer_download(&bout, at, row, n);
            if (s != SML_OK) break;
            memcpy(pgot + (size_t)(i * t->cols) * esz, row, (size_t)t->cols * esz);
            for (size_t j = (size_t)t->cols * esz; j < n && !bad; j++)
                if (row[j] != CANARY) bad = "wrote into the stride padding", bad_row = pick[i];
            const size_t src = (size_t)((pick[i] % nb) * t->ld) * esz;
            for (int pass = 0; pass < (bwd ? 2 : 1) && s == SML_OK && !bad; pass++) {
                s = sml_buffer_download(pass ? &bdy : &bx, at, row, n);
                if (s == SML_OK && memcmp(row, (pass ? hdy : hx) + src, n)) {
                    bad = pass ? "changed its input dy" : "changed its input x", bad_row = pick[i];
                    inputs_changed = 1;
                }
            }
        }
        if (s == SML_OK) s = sml_buffer_download(&bout, (size_t)span * esz, guard, gbytes);
        /* A kernel that wrote its input must not fail the kernels after it: upload them again. */
        if (s == SML_OK && inputs_changed) {
            s = sampled_upload(&bx, t, nb, hx);
            if (s == SML_OK && bwd) s = sampled_upload(&bdy, t, nb, hdy);
        }
        if (s != SML_OK) {
            snprintf(msg, sizeof msg, "%s (%s)", sml_strerror(s),
                     c->dev == SML_DEVICE_GPU ? sml_last_cuda_error() : "cpu");
            fail_run(c, ki, k, t, "run failed: ", msg);
            if (s == SML_ERR_CUDA) { c->dead = 1; break; }
            continue;
        }
        if (bad) {
            snprintf(msg, sizeof msg, "%s (row %" PRId64 ")", bad, bad_row);
            fail_run(c, ki, k, t, "", msg);
            continue;
        }
        int guard_ok = 1;
        for (size_t i = 0; i < gbytes; i++) guard_ok &= guard[i] == CANARY;
        if (!guard_ok) {
            fail_run(c, ki, k, t, "", "wrote past the end of the tensor");
            continue;
        }
        sml_check_report rep;
        memset(&rep, 0, sizeof rep);
        s = sml_check_against(t->op, t->dt, np, t->cols, t->cols, px, bwd ? pdy : NULL, pwant, pgot, &rep);
        /* rep's row r is checked row pick[r] of the tensor */
        int len = snprintf(msg, sizeof msg, "%s [checked-row index -> tensor row:",
                           s != SML_OK ? sml_strerror(s) : rep.message);
        for (int i = 0; i < np && len > 0 && (size_t)len < sizeof msg; i++)
            len += snprintf(msg + len, sizeof msg - (size_t)len, " %d->%" PRId64, i, pick[i]);
        if (len > 0 && (size_t)len < sizeof msg) snprintf(msg + len, sizeof msg - (size_t)len, "]");
        /* Twins that differ fail even a kernel whose values a known deviation excuses: bits that
         * move with a row's place are not that deviation. */
        char tmsg[512];
        if (s == SML_OK && twins_differ(t, nb, &bout, row, twin_row, tmsg, sizeof tmsg)) {
            char both[1100];
            snprintf(both, sizeof both, "%s%s%s", rep.pass ? "" : msg, rep.pass ? "" : "; and ", tmsg);
            fail_run(c, ki, k, t, "", both);
            continue;
        }
        judge(c, ki, k, t, s, &rep, msg);
    }
done:
    sml_buffer_free(&bx);
    sml_buffer_free(&bdy);
    sml_buffer_free(&bout);
    free(hx);
    free(hdy);
    free(want);
    free(px);
    free(pdy);
    free(pgot);
    free(pwant);
    free(row);
    free(twin_row);
    free(guard);
}

/* ---- enumeration ------------------------------------------------------------------------- */

static int case_matches(const ctx *c, const tcase *t) {
    return (c->o.op < 0 || c->o.op == (int)t->op) && (c->o.dt < 0 || c->o.dt == (int)t->dt);
}

static void visit(ctx *c, const tcase *t) {
    if (!sml_shard_has(&c->o.shard, c->visited++)) return;
    if (c->o.list) {
        c->n_inputs++;
        int64_t pick[MAX_PICK];
        const int sampled = sampled_case(t);
        const int64_t el = sampled ? sampled_block(t) * t->cols : t->rows * t->cols;
        c->n_elems += el;
        for (size_t ki = 0; ki < sml_kernel_count(); ki++) {
            const sml_kernel *k = sml_kernel_at(ki);
            if (kernel_selected(c, k) && kernel_supports(k, t)) {
                c->n_runs++;
                c->n_checked += sampled ? sampled_rows(t, sampled_block(t), pick) * t->cols : el;
            }
        }
        return;
    }
    if (c->dead) return;
    if (sampled_case(t)) run_sampled(c, t);
    else run_input(c, t);
}

/* The huge case per direction: fp16, 1,000 columns, rows so that the tensor passes 2^31
 * elements and one row straddles element 2^31. */
static tcase huge_tcase(sml_op op) {
    tcase t = {op, SML_F16, (((int64_t)1 << 31) / 1000) + 3, 1000, 1000, 0, 0, VAR_PLAIN, 0};
    return t;
}

static void enumerate(ctx *c) {
    const opts *o = &c->o;
    if (o->rows > 0 && o->cols > 0) { /* one explicit case, as a reproduce line gives it */
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
            for (int op = 0; op < SML_OP_COUNT; op++) {
                tcase t = {(sml_op)op, (sml_dtype)dt, o->rows, o->cols, o->ld > 0 ? o->ld : o->cols,
                           o->offset > 0 ? o->offset : 0, o->inplace > 0, VAR_PLAIN, o->sampled};
                if (t.offset) t.var = VAR_MISALIGNED;
                else if (t.inplace) t.var = VAR_INPLACE;
                else if (t.ld > t.cols) t.var = VAR_PADDED;
                if (t.inplace && sml_op_is_backward(t.op)) continue;
                if (case_matches(c, &t)) visit(c, &t);
            }
        return;
    }
    int64_t cols[64];
    const int ncols = all_cols(cols);
    const int64_t rows_set[] = {1, 7, WAVE_ROWS, MANY_ROWS, WARP_ROWS, BIG_ROWS};
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
        for (int op = 0; op < SML_OP_COUNT; op++)
            for (int ci = 0; ci < ncols; ci++)
                for (size_t ri = 0; ri < sizeof rows_set / sizeof rows_set[0]; ri++)
                    for (int v = 0; v < VAR_COUNT; v++) {
                        if (v == VAR_INPLACE && sml_op_is_backward((sml_op)op)) continue;
                        if (!admit(rows_set[ri], cols[ci], (variant)v, (sml_op)op)) continue;
                        tcase t = make_case((sml_op)op, (sml_dtype)dt, rows_set[ri], cols[ci], (variant)v);
                        if (case_matches(c, &t)) visit(c, &t);
                    }
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
        for (int op = 0; op < SML_OP_COUNT; op++) {
            if (!sml_op_is_backward((sml_op)op)) continue;
            tcase t = make_case((sml_op)op, (sml_dtype)dt, LONG_ROWS, LONG_ROWS_COLS, VAR_PADDED);
            if (case_matches(c, &t)) visit(c, &t);
        }
    if (!o->cpu) /* as the huge cases: the CPU kernels would take minutes on them */
        for (size_t i = 0; i < N_TALL; i++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
                for (int op = 0; op < SML_OP_COUNT; op++) {
                    if (TALL[i].fwd_only && sml_op_is_backward((sml_op)op)) continue;
                    tcase t = make_case((sml_op)op, (sml_dtype)dt, TALL[i].rows, TALL[i].cols, VAR_PLAIN);
                    t.ld = TALL[i].ld;
                    t.var = t.ld > t.cols ? VAR_PADDED : VAR_PLAIN;
                    t.sampled = 1;
                    if (case_matches(c, &t)) visit(c, &t);
                }
    if (o->huge && !o->cpu) {
        sml_op ops[2] = {SML_SOFTMAX, SML_SOFTMAX_BWD};
        for (int i = 0; i < 2; i++) {
            tcase t = huge_tcase(ops[i]);
            if (case_matches(c, &t)) visit(c, &t);
        }
    }
}

/* ---- one worker per GPU ------------------------------------------------------------------- */

/* Every visible GPU (or --devices): with several, this program again per GPU on every n-th
 * case (--shard i/n, the same seed), each worker's output printed whole; the run fails if a
 * worker fails, is skipped (77) if all are. -1: run here. */
static int edge_split(const opts *o, int argc, char **argv) {
    const char *fake = getenv("SML_WORKERS_TEST_COUNT");
    if (o->cpu && !(fake && *fake)) return -1; /* CPU kernels: one process (the stand-in tests the split) */
    if (!o->devices && getenv("CTEST_RESOURCE_GROUP_0_GPUS")) return -1; /* ctest gave it one GPU */
    int count = fake && *fake ? atoi(fake) : sml_gpu_count(), dev[SML_MAX_DEVICES], n = count;
    char why[160] = "no CUDA device here", exe[4096], dir[4300], seed[24], shard[SML_MAX_DEVICES][24];
    if (o->devices && (!count || !sml_devices_parse(o->devices, count, dev, &n, why, sizeof why))) {
        fprintf(stderr, "%s: bad value for --devices: '%.40s' (%s)\n", argv[0], o->devices, why);
        return 2;
    }
    if (!o->devices)
        for (int i = 0; i < n && i < SML_MAX_DEVICES; i++) dev[i] = i;
    if (n > SML_MAX_DEVICES) n = SML_MAX_DEVICES;
    if (n < 2 || o->shard.count || !sml_self_exe(exe, sizeof exe) || sml_workers_dir(dir, sizeof dir)) return -1;
    snprintf(seed, sizeof seed, "0x%" PRIx64, o->seed);
    char **argvs[SML_MAX_DEVICES], logs[SML_MAX_DEVICES][4400];
    const char *logp[SML_MAX_DEVICES];
    int codes[SML_MAX_DEVICES], fails = 0, skips = 0;
    for (int i = 0; i < n; i++) {
        char **a = calloc((size_t)argc + 8, sizeof *a);
        if (!a) return 2;
        int k = 0;
        a[k++] = exe;
        for (int j = 1; j < argc; j++) {
            if (!strcmp(argv[j], "--devices") || !strcmp(argv[j], "--seed")) { j++; continue; }
            a[k++] = argv[j];
        }
        snprintf(shard[i], sizeof shard[i], "%d/%d", i + 1, n);
        a[k++] = "--seed", a[k++] = seed, a[k++] = "--shard", a[k++] = shard[i];
        argvs[i] = a;
        snprintf(logs[i], sizeof logs[i], "%s/worker-%d.log", dir, i + 1);
        logp[i] = logs[i];
    }
    printf("%s: %d GPUs, one worker each (every %d-th case), seed %s\n", TEST_NAME, n, n, seed);
    int rc = sml_workers_run((char *const *const *)argvs, dev, n, logp, codes, why, sizeof why);
    for (int i = 0; i < n; i++) {
        char label[96];
        snprintf(label, sizeof label, "worker %d/%d, GPU %d, exit %d", i + 1, n, dev[i], codes[i]);
        sml_workers_print_log(stdout, label, logs[i]);
        fails += codes[i] != 0 && codes[i] != 77;
        skips += codes[i] == 77;
        free(argvs[i]);
    }
    sml_workers_cleanup(dir, logp, n);
    if (rc != 0) fprintf(stderr, "%s: %s\n", TEST_NAME, why);
    printf("%s: %d of %d workers failed, %d skipped\n", TEST_NAME, fails, n, skips);
    return rc != 0 || fails ? 1 : skips == n ? 77 : 0;
}

/* ---- main -------------------------------------------------------------------------------- */

static int usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s [--list-cases] [--kernel NAME] [--op OP] [--dtype DT] [--rows R --cols C\n"
            "          [--ld L] [--offset ELEMS] [--inplace 0|1] [--sampled]] [--seed S] [--no-huge] [--cpu]\n"
            "          [--known-deviation KERNEL] [--plant padding|input|guard|value|twin] [--load PLUGIN]...\n"
            "          [--devices D[,D]] [--shard K/N]\n"
            "  every visible GPU is used (--devices to choose): one worker process per GPU runs every\n"
            "  n-th case (--shard i/n); the run fails if any worker's slice fails\n",
            argv0);
    return 2;
}

static int parse(opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->argv0 = argv[0];
    o->op = o->dt = -1;
    o->rows = o->cols = o->ld = o->offset = o->inplace = -1;
    o->huge = 1;
    const char *env = getenv("SML_SEED");
    o->seed = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ 0x6B55ull;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list-cases")) { o->list = 1; continue; }
        if (!strcmp(a, "--cpu")) { o->cpu = 1; continue; }
        if (!strcmp(a, "--no-huge")) { o->huge = 0; continue; }
        if (!strcmp(a, "--sampled")) { o->sampled = 1; continue; }
        if (!v) return usage(argv[0]);
        i++;
        if (!strcmp(a, "--kernel")) o->kernel = v;
        else if (!strcmp(a, "--op")) {
            sml_op op;
            if (sml_op_parse(v, &op) != SML_OK) return usage(argv[0]);
            o->op = (int)op;
        } else if (!strcmp(a, "--dtype")) {
            sml_dtype dt;
            if (sml_dtype_parse(v, &dt) != SML_OK) return usage(argv[0]);
            o->dt = (int)dt;
        } else if (!strcmp(a, "--rows")) o->rows = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--cols")) o->cols = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--ld")) o->ld = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--offset")) o->offset = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--inplace")) o->inplace = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--devices")) o->devices = v;
        else if (!strcmp(a, "--shard")) {
            char why[128];
            if (!sml_shard_parse(v, &o->shard, why, sizeof why)) {
                fprintf(stderr, "%s: bad value for --shard: '%.40s' (%s)\n", argv[0], v, why);
                return 2;
            }
        }
        else if (!strcmp(a, "--known-deviation")) o->mark_known = v;
        else if (!strcmp(a, "--load")) {
            char msg[1024];
            if (o->nloads == (int)(sizeof o->loads / sizeof o->loads[0]) ||
                sml_load_plugin(v, msg, sizeof msg) != SML_OK) {
                fprintf(stderr, "%s: --load %s: %s\n", argv[0], v,
                        o->nloads == (int)(sizeof o->loads / sizeof o->loads[0]) ? "too many libraries" : msg);
                return 2;
            }
            o->loads[o->nloads++] = v;
        }
        else if (!strcmp(a, "--plant")) {
            if (strcmp(v, "padding") && strcmp(v, "input") && strcmp(v, "guard") && strcmp(v, "value") &&
                strcmp(v, "twin"))
                return usage(argv[0]);
            o->plant = v;
        }
        else return usage(argv[0]);
    }
    if ((o->rows > 0) != (o->cols > 0) || (o->ld >= 0 && o->ld < o->cols)) return usage(argv[0]);
    if (o->sampled && (o->rows <= 0 || o->offset > 0 || o->inplace > 0)) return usage(argv[0]);
    if (o->plant && !o->sampled) return usage(argv[0]); /* it damages sampled cases only */
    const char *names[2] = {o->kernel, o->mark_known};
    for (int i = 0; i < 2; i++)
        if (names[i] && !sml_kernel_find(names[i])) {
            fprintf(stderr, "%s: no kernel named '%s' in the registry\n", argv[0], names[i]);
            return 2;
        }
    return 0;
}

int main(int argc, char **argv) {
    static ctx c; /* large: keep it off the stack */
    int rc = parse(&c.o, argc, argv);
    if (rc) return rc;
    if (!c.o.list) {
        rc = edge_split(&c.o, argc, argv);
        if (rc >= 0) return rc;
    }
    c.tally.test = TEST_NAME;
    c.dev = c.o.cpu ? SML_DEVICE_CPU : SML_DEVICE_GPU;
    if (c.o.list) {
        enumerate(&c);
        printf("%s: %" PRId64 " inputs, %" PRId64 " kernel runs, %" PRId64 " reference elements, %" PRId64
               " checked elements\n", TEST_NAME, c.n_inputs, c.n_runs, c.n_elems, c.n_checked);
        return 0;
    }
    if (!c.o.cpu) {
        rc = sml_test_require_gpu(TEST_NAME);
        if (rc) return rc;
        sml_gpu_facts g;
        if (sml_gpu_facts_get(NULL, &g) == SML_OK) {
            c.has_clusters = g.clusters;
            c.sms = g.sms;
            c.dram = g.dram;
        }
        sml_gpu_forget_error();
    }
    if (sml_handle_create(&c.h) != SML_OK) {
        printf("FAIL %s: sml_handle_create\n", TEST_NAME);
        return 1;
    }
    printf("%s: seed 0x%" PRIx64 "%s\n", TEST_NAME, c.o.seed, c.o.cpu ? " (CPU kernels: harness check)" : "");
    if (!c.o.cpu)
        printf("%s: auto's device facts: %d SMs, cluster launch %s, %.1f DRAM bytes per SM clock\n", TEST_NAME,
               c.sms, c.has_clusters ? "yes" : "no", c.dram);
    fflush(stdout);
    enumerate(&c);
    sml_handle_destroy(c.h);
    if (c.dead) printf("%s: stopped after a CUDA error; later cases did not run\n", TEST_NAME);

    printf("%-10s %-5s %8s %6s %6s %8s %12s %10s\n", "kernel", "dtype", "cases", "fails", "known", "refused",
           "worst_ratio", "worst_ulps");
    int64_t known_total = 0;
    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS; ki++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            const cell *s = &c.stats[ki][dt];
            if (!s->cases && !s->refused) continue;
            printf("%-10s %-5s %8" PRId64 " %6" PRId64 " %6" PRId64 " %8" PRId64 " %12.4g %10.4g\n",
                   sml_kernel_at(ki)->name, sml_dtype_name((sml_dtype)dt), s->cases, s->fails, s->known,
                   s->refused, s->worst_ratio, s->worst_ulps);
            known_total += s->known;
        }
    /* One line per kernel with known deviations: how often, how far, and the registry's words. */
    for (size_t ki = 0; ki < sml_kernel_count() && ki < MAX_KERNELS; ki++) {
        const sml_kernel *k = sml_kernel_at(ki);
        char worst[256] = "";
        int64_t n = 0;
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            const cell *s = &c.stats[ki][dt];
            if (!s->known) continue;
            n += s->known;
            size_t len = strlen(worst);
            snprintf(worst + len, sizeof worst - len, "%s%s %" PRId64 " cases, worst %.3g ulp / %.3g x bound",
                     len ? "; " : "", sml_dtype_name((sml_dtype)dt), s->known, s->known_ulps, s->known_ratio);
        }
        if (n)
            printf("KNOWN DEVIATION %s: %s: %" PRId64 " cases outside the value bound, not failed (%s); registry: %s\n",
                   TEST_NAME, k->name, n, worst, known_deviation(&c, k));
    }
    if (known_total)
        printf("%s: %" PRId64 " known deviations (neither passed nor failed below)\n", TEST_NAME, known_total);
    return sml_tally_finish(&c.tally);
}
