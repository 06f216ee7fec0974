/* mutants.c: the table of GPU mutants. Each line names the production kernel it copies (the
 * control: a kill counts only if the control passes the same input), the .cu file of that
 * kernel's copy where its bug is planted (marked `MUTANT <name>`), what the bug is, what
 * should kill it, and, where the standard budget may not reach the bug, the shape the
 * mutation test falls back to. The ops and dtypes masks are the only ones the mutant's
 * launcher instantiates. */
#include "tests/mutants/mutants.h"

#include <string.h>

#define F32         (1u << SML_F32)
#define F16         (1u << SML_F16)
#define BF16        (1u << SML_BF16)
#define SOFTMAX     (1u << SML_SOFTMAX)
#define LOG_SOFTMAX (1u << SML_LOG_SOFTMAX)
#define BWD         ((1u << SML_SOFTMAX_BWD) | (1u << SML_LOG_SOFTMAX_BWD))

#define KERNEL(name, file, ops, dts, max_cols, fn, summary)                              \
    {                                                                                    \
        name, "tests/mutants/" file, SML_DEVICE_GPU, ops, dts, 1, max_cols, fn, summary, \
            {NULL, 0.0, NULL}, NULL, 0, NULL                                             \
    }
#define NO_HINT \
    { {SML_SOFTMAX, SML_F32, 0, 0, 0, 0}, NULL, 0, 0.0, NULL }
#define NO_SHAPE \
    { SML_SOFTMAX, SML_F32, 0, 0, 0, 0 }

static const sml_gpu_mutant MUTANTS[] = {
    {KERNEL("gpu_no_max", "warp_mutants.cu", SML_OPS_FWD, F32, 1024, sml_mut_launch_no_max,
            "warp copy: no max subtraction"),
     1, "warp", "no max subtraction: exp(x) overflows past ~88.7 in fp32",
     "shift (exp(x + k) rounds differently from exp(x)) or agreement (exp-threshold logits)",
     NO_HINT, NULL, NO_SHAPE},
    {KERNEL("gpu_sum16", "warp_mutants.cu", SML_OPS_FWD, F16 | BF16, 1024, sml_mut_launch_sum16,
            "warp copy: the row sum accumulated in the 16-bit input type"),
     2, "warp", "the sum accumulated in the input's 16-bit type",
     "agreement or row_sum (several 16-bit ulps off on rows of a few columns or more)", NO_HINT,
     NULL, NO_SHAPE},
    {KERNEL("gpu_no_rescale", "online_mutants.cu", SML_OPS_FWD, F32, 0, sml_mut_launch_no_rescale,
            "online copy: running sum not rescaled when a tile raises the max"),
     3,
     "online",
     "the online rescale factor exp(m_old - m_new) dropped",
     "agreement, on rows longer than one tile (> 8,192 columns, > 2,048 misaligned)",
     {{SML_SOFTMAX, SML_F32, 4, 65536, 0, 0},
      "ramp",
      4,
      20.0,
      "needs rows of several tiles per thread whose max grows: long rows are rare in the standard "
      "budget"},
     NULL,
     NO_SHAPE},
    {KERNEL("gpu_inf_merge", "online_mutants.cu", SML_OPS_FWD, F32, 0, sml_mut_launch_inf_merge,
            "online copy: running max starts at -inf, so exp(-inf - -inf) = NaN"),
     4, "online", "(-inf) - (-inf) reaching exp in the online update and merge of all -inf slices",
     "agreement (NaN rows) on masked rows or rows shorter than the block's threads", NO_HINT, NULL,
     NO_SHAPE},
    {KERNEL("gpu_pad_zero", "warp_mutants.cu", SML_OPS_FWD, F32, 1024, sml_mut_launch_pad_zero,
            "warp copy: padding lanes load 0 instead of -inf"),
     5, "warp", "padding lanes filled with 0 instead of -inf",
     "agreement or row_sum (exp(-max) added per padding lane) on most row lengths", NO_HINT, NULL,
     NO_SHAPE},
    {KERNEL("gpu_offset32", "warp_mutants.cu", SOFTMAX, F16, 1024, sml_mut_launch_offset32,
            "warp copy: 32-bit row stride and row offsets"),
     6,
     "warp",
     "32-bit element offsets (ld narrowed to int, row * ld truncated): wrong past 2^31 elements",
     "agreement, only past 2^31 elements: targeted shape 2 x 8 with ld 2^32 + 8 (16 GiB of fp16)",
     {{SML_SOFTMAX, SML_F16, 2, 8, ((int64_t)1 << 32) + 8, 0},
      "normal",
      1,
      0.0,
      "needs > 2^31 elements; the standard generators stop at 2^22 (each run of this shape moves "
      "16 GiB, so it is not shrunk)"},
     NULL,
     NO_SHAPE},
    {KERNEL("gpu_vec_tail", "warp_mutants.cu", SML_OPS_FWD, F32, 1024, sml_mut_launch_vec_tail,
            "warp copy: the tail of a partial 16-byte chunk drops the row's last element"),
     7,
     "warp",
     "off-by-one in the tail of the vectorised load (cols not a multiple of 4)",
     "agreement, when cols % 4 != 0 with a 16-byte aligned base and a padded ld (~4% of cases)",
     {{SML_SOFTMAX, SML_F32, 3, 1001, 1004, 0},
      "normal",
      2,
      20.0,
      "needs cols % 4 != 0 with an ld that keeps 16-byte loads"},
     NULL,
     NO_SHAPE},
    {KERNEL("gpu_no_barrier", "block_mutants.cu", SML_OPS_FWD, F32, 16384,
            sml_mut_launch_no_barrier,
            "block copy: no barrier between the per-warp partials and their readers"),
     8,
     "block",
     "a missing barrier between the block reduction's shared-memory writes and its readers",
     "agreement, determinism or row_independence on multi-warp rows (a race); racecheck",
     {{SML_SOFTMAX, SML_F32, 1024, 16384, 0, 0},
      "normal",
      3,
      20.0,
      "a race: it shows only when warps of a block drift apart, most on long rows of 1,024 "
      "threads"},
     "racecheck",
     {SML_SOFTMAX, SML_F32, 2, 4096, 0, 0}},
    {KERNEL("gpu_past_row", "warp_mutants.cu", SML_OPS_FWD, F32, 1024, sml_mut_launch_past_row,
            "warp copy: writes one element past the end of each row"),
     9,
     "warp",
     "an out-of-bounds write of one element past the row",
     "canaries (stride padding, back guard) or agreement (next row's first element); memcheck",
     /* 2 x 384 fp32: the lanes cover 512 columns, so the last row writes element 768, the
      * first byte past a 3 KiB allocation (a multiple of cudaMalloc's granule, so the write
      * leaves the allocation however the tool tracks sizes). */
     NO_HINT,
     "memcheck",
     {SML_SOFTMAX, SML_F32, 2, 384, 0, 0}},
    {KERNEL("gpu_log_of_softmax", "warp_mutants.cu", LOG_SOFTMAX, F32, 1024,
            sml_mut_launch_log_of_softmax, "warp copy: log-softmax as log(softmax)"),
     10, "warp", "log-softmax computed as log(softmax): -inf once softmax underflows",
     "agreement or special_values (-inf where the log-probability is finite) on a wide spread",
     NO_HINT, NULL, NO_SHAPE},
    {KERNEL("gpu_bwd_no_dot", "warp_mutants.cu", BWD, F32, 1024, sml_mut_launch_bwd_no_dot,
            "warp copy: backward without the dot term"),
     11, "warp", "backward without the dot term: y * dy (softmax), dy (log-softmax)",
     "agreement or bwd_sum on any row whose dot is not 0", NO_HINT, NULL, NO_SHAPE},
    {KERNEL("gpu_bwd_dot_rows", "warp_mutants.cu", 1u << SML_SOFTMAX_BWD, F32, 1024,
            sml_mut_launch_bwd_dot_rows, "warp copy: the dot reduced across the rows of a warp"),
     11, "warp",
     "backward with the dot summed over the wrong axis (across the rows sharing a warp)",
     "agreement, bwd_sum or row_independence on two or more rows of <= 64 columns", NO_HINT, NULL,
     NO_SHAPE},
    {KERNEL("gpu_grid65535", "block_mutants.cu", SML_OPS_FWD, F32, 16384, sml_mut_launch_grid65535,
            "block copy: one row per block, grid capped at 65,535"),
     12,
     "block",
     "the grid computed for at most 65,535 rows: later rows never computed",
     "agreement (poison NaN left in rows past 65,535)",
     {{SML_SOFTMAX, SML_F32, 65537, 3, 0, 0},
      "normal",
      2,
      30.0,
      "needs > 65,535 rows: drawn only in rare big cases of the standard budget"},
     NULL,
     NO_SHAPE},
    {KERNEL("gpu_atomic_sum", "block_mutants.cu", SML_OPS_FWD, F32, 16384,
            sml_mut_launch_atomic_sum,
            "block copy: the block sum by shared-memory atomics (order varies)"),
     0,
     "block",
     "the block sum added by atomics: its bits depend on the warps' arrival order",
     "determinism or row_independence (bitwise) on rows of 3 or more warps",
     {{SML_SOFTMAX, SML_F32, 512, 16384, 0, 0},
      "normal",
      3,
      20.0,
      "nondeterministic: needs rows of 3+ warps and warps that arrive in a different order"},
     NULL,
     NO_SHAPE},
    {KERNEL("gpu_assume_aligned", "warp_mutants.cu", SML_OPS_FWD, F32, 1024,
            sml_mut_launch_assume_aligned, "warp copy: 16-byte loads chosen from x's base alone"),
     0, "warp", "16-byte loads chosen from the input pointer alone, not ld: misaligned rows fault",
     "agreement as an error (CUDA misaligned address) on 2+ rows with ld % 4 != 0", NO_HINT, NULL,
     NO_SHAPE},
    {KERNEL("gpu_coop_no_wait", "coop_mutants.cu", SML_OPS_FWD, F32, 262144,
            sml_mut_launch_coop_no_wait,
            "coop copy: the gather reads each slice's partial without waiting for it"),
     0,
     "coop",
     "the cross-block gather reads the partial slots once instead of waiting for this launch's",
     "agreement on rows cut into 2+ slices (> 2,048 columns): sums short by unpublished slices",
     {{SML_SOFTMAX, SML_F32, 4, 65536, 0, 0},
      "normal",
      3,
      20.0,
      "a race between blocks: needs rows of several slices, which the standard budget draws less "
      "often"},
     NULL,
     NO_SHAPE},
};

size_t sml_gpu_mutant_count(void) { return sizeof MUTANTS / sizeof MUTANTS[0]; }

const sml_gpu_mutant *sml_gpu_mutant_at(size_t i) {
    return i < sml_gpu_mutant_count() ? &MUTANTS[i] : NULL;
}

const sml_gpu_mutant *sml_gpu_mutant_by_name(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sml_gpu_mutant_count(); i++)
        if (!strcmp(MUTANTS[i].kernel.name, name)) return &MUTANTS[i];
    return NULL;
}

const sml_kernel *sml_gpu_mutant_find(const char *name, void *unused) {
    (void)unused;
    const sml_gpu_mutant *m = sml_gpu_mutant_by_name(name);
    return m ? &m->kernel : NULL;
}
