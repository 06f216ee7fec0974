/* cases.c: the edge-shape harness's shape set (edge.h): which inputs run, in which layouts,
 * and which rows of the sampled ones are checked. */
#include <stdlib.h>

#include "edge/harness.h"
#include "core/rng.h"
#include "kernels/auto_dispatch.h"

#define BIG_ROWS  65537 /* past the 65,535 limit of a grid's y and z dimensions */
#define MANY_ROWS 7001  /* past 48 rows per SM on GPUs of up to 145 SMs: block's many-row plan */
#define WARP_ROWS \
    9281 /* past 64 rows per SM on GPUs of up to 145 SMs: auto's forward rows of
                              129-256 fp32 columns go to block, not warp (auto_dispatch.h) */
#define WARP_ROWS_COLS 255
#define WAVE_ROWS \
    4099 /* 28-53 rows per SM on GPUs of 78-145 SMs: more than one wave of K = 1
                              blocks, fewer than the many-row plan: block's forward one-wave plan
                              in its lean build (block_plan.h; 1,000 and 1,024 columns: fp32
                              64 x 4, 16-bit 64 x 2; 1,024 fp32 columns fill the block: the
                              lean build's whole-row path) */
#define WAVE_ROWS_COLS       1000
#define WAVE_ROWS_COLS_WHOLE 1024
/* Backward rows long enough for `split` clusters of 8-16 blocks and `coop` slices, and more of
 * them than resident clusters (or than two rounds of `coop` items): the only shapes where
 * those kernels refill shared memory with the next row or slice while writing the current
 * one (docs/KERNELS.md, `split` and `coop`). Padded, so rows are 16-byte aligned and the last chunk is
 * partial. */
#define LONG_ROWS            48
#define LONG_ROWS_COLS       131077

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
    {8192, 16384, 16384,
     0}, /* fp32: a pair of whole steps, one unpaired, one bounded; 16-bit: three pairs */
    {8192, 10641, 10648, 0}, /* partial last chunk; fp32 (512 threads, 2,660 whole chunks): a pair
                                  of thread 100 would end exactly on the partial chunk */
    {8192, 9603, 9608, 0},   /* the same for 16-bit (128 threads, 1,200 whole chunks): thread 48 */
    {512, 131075, 131080,
     0}, /* clusters of 8 (forward) or 8-16 (backward), rows in several rounds */
    {128, ((int64_t)1 << 20) + 3, ((int64_t)1 << 20) + 8, 1}, /* clusters of 16, uncached tails */
    {66, 105812, 105820, 0}, /* fp32 backward in clusters of 16 refills by cp.async (2''), rows in a
                                  few rounds: the property suite's shape of its first-row bug.
                                  16-bit: ld * 2 bytes is not a multiple of 16, so scalar loads (2');
                                  512 x 131,075 carries 16-bit 2'' */
};
#define N_TALL     (sizeof TALL / sizeof TALL[0])
#define HUGE_BLOCK 64 /* distinct rows replicated over a > 2^31-element tensor */

/* Edge columns (1-3, each side of a warp, of 128, 1,024, 4,096, 8,192, 2^16 and past 2^20), plus
 * where `block` changes its plan (1023-1025: short rows to the forward plan), its chunks per thread or its block size (2048/2049, 8191-8193; 4096/4097 are in
 * the list). */
static const int64_t BASE_COLS[] = {1,
                                    2,
                                    3,
                                    31,
                                    32,
                                    33,
                                    127,
                                    128,
                                    129,
                                    1000,
                                    1023,
                                    1024,
                                    1025,
                                    2048,
                                    2049,
                                    4096,
                                    4097,
                                    8191,
                                    8192,
                                    8193,
                                    12345,
                                    65536,
                                    ((int64_t)1 << 20) + 3};
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
static int admit(int64_t rows, int64_t cols, sml_edge_layout v, sml_op op) {
    if (rows == BIG_ROWS) {
        if (v != SML_EDGE_DENSE) return 0;
        for (size_t i = 0; i < sizeof BIG_ROWS_COLS / sizeof BIG_ROWS_COLS[0]; i++)
            if (cols == BIG_ROWS_COLS[i]) return 1;
        return 0;
    }
    if (rows == MANY_ROWS) return v == SML_EDGE_DENSE && cols == MANY_ROWS_COLS;
    if (rows == WARP_ROWS)
        return v == SML_EDGE_DENSE && cols == WARP_ROWS_COLS && !sml_op_is_backward(op);
    if (rows == WAVE_ROWS)
        return v == SML_EDGE_DENSE && (cols == WAVE_ROWS_COLS || cols == WAVE_ROWS_COLS_WHOLE) &&
               !sml_op_is_backward(op);
    if (cols > 65536) {
        if (rows != 1) return 0;
        if (v == SML_EDGE_MISALIGNED) return op == SML_SOFTMAX || op == SML_SOFTMAX_BWD;
        if (v == SML_EDGE_INPLACE) return op == SML_SOFTMAX;
        return 1;
    }
    if (cols > 1025 && rows > 1) return v == SML_EDGE_DENSE || v == SML_EDGE_PADDED;
    return 1;
}

static sml_edge_case make_case(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                               sml_edge_layout v) {
    sml_edge_case t = {op, dt, rows, cols, cols, 0, 0, v, 0};
    if (v == SML_EDGE_PADDED || v == SML_EDGE_MISALIGNED || v == SML_EDGE_INPLACE)
        t.ld = padded_ld(cols);
    if (v == SML_EDGE_MISALIGNED) t.offset = 1;
    if (v == SML_EDGE_INPLACE) t.inplace = 1;
    return t;
}

int sml_edge_huge_case(const sml_edge_case *t) {
    return (t->rows - 1) * t->ld + t->cols > ((int64_t)1 << 31);
}

/* Huge and tall cases run through run_sampled.c. */
int sml_edge_sampled_case(const sml_edge_case *t) { return sml_edge_huge_case(t) || t->sampled; }

/* One seed per input, from the run's seed and the case's parameters. */
uint64_t sml_edge_case_seed(uint64_t run_seed, const sml_edge_case *t) {
    uint64_t k = (uint64_t)t->op | (uint64_t)t->dt << 4 | (uint64_t)t->inplace << 8;
    uint64_t s = k ^ 0x9E3779B97F4A7C15ull;
    s = sml_splitmix64(&s) ^ (uint64_t)t->rows;
    s = sml_splitmix64(&s) ^ (uint64_t)t->cols;
    s = sml_splitmix64(&s) ^ (uint64_t)t->ld;
    s = sml_splitmix64(&s) ^ (uint64_t)t->offset;
    return sml_derive_seed(run_seed, sml_splitmix64(&s));
}
/* ---- past 2^31 elements ------------------------------------------------------------------ */

/* Distinct rows a sampled case's input repeats. For the tall cases a prime, so that a kernel
 * that reads the row k rows away is seen unless k is a multiple of it, and fewer on long rows,
 * whose host reference is the cost. */
int64_t sml_edge_sampled_block(const sml_edge_case *t) {
    const int64_t nb = sml_edge_huge_case(t)           ? HUGE_BLOCK
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
int sml_edge_sampled_rows(const sml_edge_case *t, int64_t nb, int64_t *pick) {
    int64_t cand[MAX_PICK];
    int n = 0;
    cand[n++] = 0;
    if (sml_edge_huge_case(t)) {
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
int64_t sml_edge_sampled_twin(const sml_edge_case *t, int64_t nb, int64_t i) {
    const int64_t twin = i + (t->rows - 1 - i) / nb * nb;
    return twin > i ? twin : -1;
}

static int case_matches(const sml_edge_opts *o, const sml_edge_case *t) {
    return (o->op < 0 || o->op == (int)t->op) && (o->dt < 0 || o->dt == (int)t->dt);
}

/* The huge case per direction: fp16, 1,000 columns, rows so that the tensor passes 2^31
 * elements and one row straddles element 2^31. */
static sml_edge_case huge_tcase(sml_op op) {
    sml_edge_case t = {
        op, SML_F16, (((int64_t)1 << 31) / 1000) + 3, 1000, 1000, 0, 0, SML_EDGE_DENSE, 0};
    return t;
}

void sml_edge_cases(const sml_edge_opts *o, sml_edge_visit_fn visit, void *arg) {
    if (o->rows > 0 && o->cols > 0) { /* one explicit case, as a reproduce line gives it */
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
            for (int op = 0; op < SML_OP_COUNT; op++) {
                sml_edge_case t = {(sml_op)op,
                                   (sml_dtype)dt,
                                   o->rows,
                                   o->cols,
                                   o->ld > 0 ? o->ld : o->cols,
                                   o->offset > 0 ? o->offset : 0,
                                   o->inplace > 0,
                                   SML_EDGE_DENSE,
                                   o->sampled};
                if (t.offset)
                    t.var = SML_EDGE_MISALIGNED;
                else if (t.inplace)
                    t.var = SML_EDGE_INPLACE;
                else if (t.ld > t.cols)
                    t.var = SML_EDGE_PADDED;
                if (t.inplace && sml_op_is_backward(t.op)) continue;
                if (case_matches(o, &t)) visit(arg, &t);
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
                    for (int v = 0; v < SML_EDGE_LAYOUT_COUNT; v++) {
                        if (v == SML_EDGE_INPLACE && sml_op_is_backward((sml_op)op)) continue;
                        if (!admit(rows_set[ri], cols[ci], (sml_edge_layout)v, (sml_op)op))
                            continue;
                        sml_edge_case t = make_case((sml_op)op, (sml_dtype)dt, rows_set[ri],
                                                    cols[ci], (sml_edge_layout)v);
                        if (case_matches(o, &t)) visit(arg, &t);
                    }
    for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
        for (int op = 0; op < SML_OP_COUNT; op++) {
            if (!sml_op_is_backward((sml_op)op)) continue;
            sml_edge_case t =
                make_case((sml_op)op, (sml_dtype)dt, LONG_ROWS, LONG_ROWS_COLS, SML_EDGE_PADDED);
            if (case_matches(o, &t)) visit(arg, &t);
        }
    if (!o->cpu) /* as the huge cases: the CPU kernels would take minutes on them */
        for (size_t i = 0; i < N_TALL; i++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
                for (int op = 0; op < SML_OP_COUNT; op++) {
                    if (TALL[i].fwd_only && sml_op_is_backward((sml_op)op)) continue;
                    sml_edge_case t = make_case((sml_op)op, (sml_dtype)dt, TALL[i].rows,
                                                TALL[i].cols, SML_EDGE_DENSE);
                    t.ld = TALL[i].ld;
                    t.var = t.ld > t.cols ? SML_EDGE_PADDED : SML_EDGE_DENSE;
                    t.sampled = 1;
                    if (case_matches(o, &t)) visit(arg, &t);
                }
    if (o->huge && !o->cpu) {
        sml_op ops[2] = {SML_SOFTMAX, SML_SOFTMAX_BWD};
        for (int i = 0; i < 2; i++) {
            sml_edge_case t = huge_tcase(ops[i]);
            if (case_matches(o, &t)) visit(arg, &t);
        }
    }
}
