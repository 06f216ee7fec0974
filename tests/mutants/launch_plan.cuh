/* launch_plan.cuh: how the warp- and block-based mutants (warp_mutants.cu, block_mutants.cu)
 * size and pick their launches. The launch plan, constants and instantiation switch are the
 * production launcher's, restated here once for the copies:
 *   warp:  kernels/softmax_warp.cu, sml_warp_run with R = 1 (lane groups of `width` lanes
 *          for rows under one vector per lane, K chunks per lane, at most 16 blocks per SM);
 *   block: kernels/softmax_block.cu, block_plan for forward rows (the smallest K that holds
 *          the row in `preferred` threads, else the largest; the mutants pass 512, the
 *          preference when they were written, production 256 since), grid twice an SM's
 *          blocks; not its many-row rule (48+ rows per SM raise K), which on short rows
 *          leaves one warp per row and would hide a barrier bug such as gpu_no_barrier's.
 * The vector width V is an argument, so a mutant that plants its bug there
 * (gpu_assume_aligned) passes its own; one that plants it in the grid (gpu_grid65535) sets
 * its own blocks. */
#ifndef SML_TESTS_MUTANTS_LAUNCH_PLAN_CUH
#define SML_TESTS_MUTANTS_LAUNCH_PLAN_CUH

#include "tests/mutants/mutant.cuh"

/* The production launchers' constants, as the copies use them. */
#define WARP_THREADS            128
#define WARP_MAX_COLS           1024
#define BLOCK_MAX_COLS          16384
#define BLOCK_MAX_THREADS       1024
#define BLOCK_PREFERRED_THREADS 512

/* kern = NAME<M, T, V, K>, the instantiation of mutant M's warp-based kernel for the K its
 * plan chose (as the production launcher instantiates them: K = 8 only where 8 chunks per
 * lane fit WARP_MAX_COLS); left NULL for any other K. Inside a function templated on M, T
 * and V. */
#define MUT_PICK_WARP(kern, NAME, M, T, V, K)                                       \
    do {                                                                            \
        if constexpr ((V) > 1) {                                                    \
            switch (K) {                                                            \
            case 1: kern = NAME<M, T, V, 1>; break;                                 \
            case 2: kern = NAME<M, T, V, 2>; break;                                 \
            case 4: kern = NAME<M, T, V, 4>; break;                                 \
            case 8:                                                                 \
                if constexpr ((V)*32 * 8 <= WARP_MAX_COLS) kern = NAME<M, T, V, 8>; \
                break;                                                              \
            }                                                                       \
        } else {                                                                    \
            switch (K) {                                                            \
            case 1: kern = NAME<M, T, 1, 1>; break;                                 \
            case 4: kern = NAME<M, T, 1, 4>; break;                                 \
            case 32: kern = NAME<M, T, 1, 32>; break;                               \
            }                                                                       \
        }                                                                           \
    } while (0)

/* The same for a block-based copy: K in {1, 2, 4} at 16-byte width, {4, 16} scalar. */
#define MUT_PICK_BLOCK(kern, NAME, M, T, V, K)        \
    do {                                              \
        if constexpr ((V) > 1) {                      \
            switch (K) {                              \
            case 1: kern = NAME<M, T, V, 1>; break;   \
            case 2: kern = NAME<M, T, V, 2>; break;   \
            case 4: kern = NAME<M, T, V, 4>; break;   \
            }                                         \
        } else {                                      \
            switch (K) {                              \
            case 4: kern = NAME<M, T, 1, 4>; break;   \
            case 16: kern = NAME<M, T, 1, 16>; break; \
            }                                         \
        }                                             \
    } while (0)

typedef struct mut_warp_plan {
    int width, K, blocks;
} mut_warp_plan;

static inline mut_warp_plan mut_plan_warp(const sml_problem *p, int V, int sms, int block_threads) {
    mut_warp_plan w;
    const int64_t chunks = (p->cols + V - 1) / V;
    if (chunks <= 32) {
        w.width = sml_pow2_ceil(chunks);
        w.K = 1;
    } else {
        w.width = 32;
        const int64_t need = (chunks + 31) / 32;
        if (V > 1)
            w.K = need <= 1 ? 1 : need <= 2 ? 2 : need <= 4 ? 4 : 8;
        else
            w.K = need <= 4 ? 4 : 32;
    }
    const int64_t rows_per_block = (block_threads / 32) * (32 / w.width);
    w.blocks = (int)sml_min64((p->rows + rows_per_block - 1) / rows_per_block,
                              (int64_t)sms * (2048 / block_threads));
    return w;
}

typedef struct mut_block_plan {
    int K, threads;
} mut_block_plan;

/* SML_ERR_UNSUPPORTED when the row needs more than max_threads threads. */
static inline sml_status mut_plan_block(const sml_problem *p, int V, int preferred, int max_threads,
                                        mut_block_plan *b) {
    const int64_t chunks = (p->cols + V - 1) / V;
    static const int KV[] = {1, 2, 4}, KS[] = {4, 16};
    const int *ks = V > 1 ? KV : KS;
    const int nk = V > 1 ? 3 : 2;
    int K = ks[nk - 1];
    for (int i = 0; i < nk; i++)
        if ((chunks + ks[i] - 1) / ks[i] <= preferred) {
            K = ks[i];
            break;
        }
    const int64_t per_k = (chunks + K - 1) / K;
    if (per_k > max_threads) return SML_ERR_UNSUPPORTED;
    b->K = K;
    b->threads = (int)sml_max64(32, (per_k + 31) / 32 * 32);
    return SML_OK;
}

#endif
