/* test_split_plan: `split`'s launch plan (kernels/split_plan.h) on the CPU.
 *   - Shapes of 16,385 to 2^21 columns (20 counts, powers of two and odd ones; fp32 and 16-bit,
 *     forward and backward, 1 to 65,536 rows, 78-144 SMs, each cluster limit split_go may try)
 *     get a power-of-two C within the limit, whole warps up to 1,024 threads, a cache within its
 *     blocks' share of the SM and the whole slice whenever it fits, no slice cut below
 *     SML_SPLIT_MIN_CHUNKS, and 16-bit forward blocks that hold a cached slice of up to 96 KB at
 *     16 chunks per thread.
 *   - The plans of docs/KERNELS.md's `split` table (132 SMs, cluster of 16 schedulable) are
 *     pinned, so a change of a rule shows here before it shows in a ledger.
 * Shared memory as split_go computes it on an H100 or H200: opt-in 232,448 bytes, static
 * 800 (ptxas -v, CUDA 13.0, sm_90, every instantiation of sml_split_kernel); backward passes
 * force_bps = 1, as split_go does when tuning asks nothing.
 * Not asserted: "threads x chunks per thread >= cap" for fp32 forward and for backward. Threads
 * stop at 512, so a slice of up to 96 KB can be more than 512 x 8 fp32 forward chunks or
 * 512 x 4 backward ones (fp32 4096 x 20000 forward: 5,000 cached chunks on 512 threads; 4096 x
 * 12288 backward: 3,072); those plans are only checked to reach the 512.
 * Planted checks: 16-bit forward without the halved fit fails 2 of the 12 pinned
 * plans (fp16 1024 x 131072 as C 4, 4096 x 32768 as C 1); the two-blocks-per-SM rule switched
 * off fails 1 (fp16 128 x 917,504 as C 8 of 1,024 threads); 8 chunks per thread for 16-bit forward
 * fails 2 pinned plans (256 threads, not 128) and the holds-its-slice check (1 x 49151: 512 x 8
 * threads for 6,144 chunks); the SML_SPLIT_MIN_CHUNKS clause dropped fails the not-cut-further
 * check in both 16-bit grids (1 x 16385 in 16 slices of 129 chunks; from 16,385 columns an fp32
 * slice is still 513 chunks at C = 8, so the clause never decides there). Also: slices over 96
 * KB at 1,024 threads whatever the blocks per SM fails 1 pinned plan; the cache sized for one
 * block when two share the SM fails the share check in both forward grids and 1 pinned plan.
 * The prefetch rule, planted three ways: "one block's cache size" (bps == 1)
 * for "alone on the SM" fails 4 pinned plans (the forward 1024 x 131072 and 4096 x 32768);
 * backward allowed fails 2 (the 128 x 2^20 backward rows); never prefetching fails 2 (the
 * 128 x 2^20 forward rows). */
#include <stdio.h>

#include "kernels/split_plan.h"
#include "unit_case.h"

#define OPTIN       232448 /* cudaDevAttrMaxSharedMemoryPerBlockOptin, H100 and H200 */
#define STATIC_SMEM 800

/* split_go's avail (one block per SM) and share (two). */
static const size_t alone = (size_t)OPTIN - STATIC_SMEM - 1024;
static const size_t share = ((size_t)OPTIN + 1024) / 2 - STATIC_SMEM - 1024;

static sml_split_cfg plan(int64_t rows, int64_t cols, int esize, int bwd, int sms, int cmax) {
    const int V = 16 / esize;
    const int64_t nch = (cols + V - 1) / V;
    const size_t chunk_bytes = (size_t)esize * V * (bwd ? 2 : 1);
    return sml_split_size(rows, nch, chunk_bytes, sml_split_fit_bytes((size_t)esize, bwd),
                          sml_split_chunks_per_thread((size_t)esize, bwd), sms, cmax, alone, share,
                          0, 0, bwd ? 1 : 0);
}

enum { BAD_C, BAD_THREADS, BAD_SMEM, BAD_WHOLE, BAD_CUT, BAD_HOLD, NBAD };
static const char *const bad_name[NBAD] = {
    "C not a power of two within cmax",          "threads not whole warps in 32-1024",
    "cache not cap x chunk within the SM share", "fitting slice not whole",
    "slice cut below SML_SPLIT_MIN_CHUNKS",      "block does not hold its slice"};

static void plan_is_sound(unit_run *u, int esize, int bwd) {
    const int64_t rows_set[] = {1, 2, 7, 128, 1024, 4096, 65536};
    const int64_t cols_set[] = {16385,  20000,   24577,   32768,   49151,   65536,  65537,
                                98304,  100003,  131072,  196609,  262144,  393215, 524288,
                                786433, 1000001, 1048576, 1048577, 1572865, 2097152};
    const int sms_set[] = {78, 132, 144};
    const int V = 16 / esize, pt = sml_split_chunks_per_thread((size_t)esize, bwd);
    const size_t chunk_bytes = (size_t)esize * V * (bwd ? 2 : 1),
                 fit = sml_split_fit_bytes((size_t)esize, bwd);
    char why[NBAD][200];
    for (int b = 0; b < NBAD; b++) why[b][0] = 0;
    for (size_t ci = 0; ci < sizeof cols_set / sizeof cols_set[0]; ci++)
        for (size_t ri = 0; ri < sizeof rows_set / sizeof rows_set[0]; ri++)
            for (int si = 0; si < 3; si++)
                for (int cmax = SML_SPLIT_MAX_CLUSTER; cmax >= 1; cmax /= 2) {
                    const int64_t rows = rows_set[ri], cols = cols_set[ci],
                                  nch = (cols + V - 1) / V;
                    const sml_split_cfg p = plan(rows, cols, esize, bwd, sms_set[si], cmax);
                    const int64_t per = (nch + p.C - 1) / p.C,
                                  half = p.C > 1 ? (nch + p.C / 2 - 1) / (p.C / 2) : 0;
                    const size_t room = p.bps > 1 ? share : alone;
                    int bad[NBAD];
                    bad[BAD_C] = p.C < 1 || p.C > cmax || (p.C & (p.C - 1));
                    bad[BAD_THREADS] =
                        p.threads < 32 || p.threads > SML_SPLIT_MAX_THREADS || p.threads % 32;
                    bad[BAD_SMEM] =
                        p.cap < 1 || (size_t)p.cap * chunk_bytes != p.smem || p.smem > room;
                    bad[BAD_WHOLE] = (size_t)per * chunk_bytes <= room && p.cap != per;
                    /* C was doubled only past a slice that did not fit or was longer than SML_SPLIT_MIN_CHUNKS. */
                    bad[BAD_CUT] = p.C > 1 && (size_t)half * chunk_bytes <= fit &&
                                   half <= SML_SPLIT_MIN_CHUNKS;
                    bad[BAD_HOLD] = (size_t)per * chunk_bytes <= SML_SPLIT_FIT_BYTES &&
                                    (int64_t)p.threads * pt < p.cap &&
                                    (esize == 2 && !bwd ? 1 : p.threads < 512);
                    for (int b = 0; b < NBAD; b++)
                        if (bad[b] && !why[b][0])
                            snprintf(why[b], sizeof why[b],
                                     "%d-byte %s %lldx%lld sms %d cmax %d: C %d threads %d bps %d "
                                     "cap %lld smem %zu",
                                     esize, bwd ? "bwd" : "fwd", (long long)rows, (long long)cols,
                                     sms_set[si], cmax, p.C, p.threads, p.bps, (long long)p.cap,
                                     p.smem);
                }
    for (int b = 0; b < NBAD; b++) UNIT_EXPECT(u, !why[b][0], "%s: %s", bad_name[b], why[b]);
}

static void measured_plans(unit_run *u) {
    /* docs/KERNELS.md, "### split": rows, cols, element bytes, bwd; want C, threads, blocks per SM
     * and the cached share of the slice in percent (100: all); pf: prefetches at the exchange
     * (forward blocks alone on their SM). */
    const struct {
        int64_t rows, cols;
        int esize, bwd, C, threads, bps, cached, pf;
    } c[] = {
        {128, 1 << 20, 2, 0, 16, 1024, 1, 100, 1}, /* 128 KB slice: one block caches it whole */
        {128, 917504, 2, 0, 16, 512, 2, 100, 0},   /* 112 KB: two blocks cache it whole */
        {128, 1 << 20, 4, 0, 16, 1024, 1, 88, 1},  /* 256 KB */
        {128, 1 << 20, 2, 1, 16, 1024, 1, 88, 0},  /* 256 KB of y and dy */
        {128, 1 << 20, 4, 1, 16, 1024, 1, 44, 0},  /* 512 KB */
        {1024, 131072, 2, 0, 8, 128, 1, 100, 0},   /* 32 KB */
        {1024, 131072, 4, 0, 8, 512, 1, 100, 0},   /* 64 KB */
        {1024, 131072, 2, 1, 8, 512, 1, 100, 0},   {1024, 131072, 4, 1, 16, 512, 1, 100, 0},
        {4096, 32768, 2, 1, 2, 512, 1, 100, 0},    {4096, 32768, 4, 1, 4, 512, 1, 100, 0},
        {4096, 32768, 2, 0, 2, 128, 1, 100, 0},    {4096, 32768, 4, 0, 2, 512, 1, 100, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const sml_split_cfg p =
            plan(c[i].rows, c[i].cols, c[i].esize, c[i].bwd, 132, SML_SPLIT_MAX_CLUSTER);
        const int V = 16 / c[i].esize;
        const int64_t per = ((c[i].cols + V - 1) / V + p.C - 1) / p.C;
        const int cached = (int)(100.0 * (double)p.cap / (double)per + 0.5);
        const int pf = sml_split_prefetch(&p, c[i].bwd, share);
        UNIT_EXPECT(u,
                    p.C == c[i].C && p.threads == c[i].threads && p.bps == c[i].bps &&
                        cached == c[i].cached && pf == c[i].pf,
                    "%s %s %lldx%lld: C %d, %d x %d threads, %d%% cached, prefetch %d; want C %d, "
                    "%d x %d, %d%%, %d",
                    c[i].esize == 4 ? "fp32" : "16-bit", c[i].bwd ? "bwd" : "fwd",
                    (long long)c[i].rows, (long long)c[i].cols, p.C, p.bps, p.threads, cached, pf,
                    c[i].C, c[i].bps, c[i].threads, c[i].cached, c[i].pf);
    }
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_split_plan", argc, argv)) return 2;
    const int es[] = {4, 2};
    int64_t c = 0;
    for (int e = 0; e < 2; e++)
        for (int bwd = 0; bwd < 2; bwd++, c++)
            if (unit_case(&u, c, NULL)) plan_is_sound(&u, es[e], bwd);
    if (unit_case(&u, c++, NULL)) measured_plans(&u);
    return sml_tally_finish(&u.tally);
}
