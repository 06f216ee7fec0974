/* plugin_cpu.c: test plugins, one source built into several shared libraries
 * (tests/plugins/CMakeLists.txt) by -D defines:
 *
 *   (none)          plug_ok: a correct fp32 CPU softmax for every op (max subtracted, pairwise
 *                   sums), claiming >= PLUG_CLAIM_X x over cpu_naive on all shapes
 *   -DPLUG_NO_MAX   the planted bug: no max subtraction, so exp overflows on logits past
 *                   88.72 and rows come out NaN (named plug_nomax unless PLUG_NAME says)
 *   -DPLUG_SLOPPY   correct but less accurate: each forward output is scaled by 1 + 24 u,
 *                   inside the contract's bounds, far above cpu_naive's error (plug_sloppy)
 *   -DPLUG_LONG_ROWS a planted bug only long rows show: the first output of a row of more
 *                   than 300,000 columns doubled (plug_longrow), which only the long
 *                   profile draws for a CPU kernel
 *   -DPLUG_NAME=... -DPLUG_CLAIM_X=...   another name, another claimed speedup
 *   -DPLUG_FRAMEWORK the first line marked a framework baseline (SML_KERNEL_FRAMEWORK)
 *   -DPLUG_ABI1     built as a plugin of ABI version 1 was: its own copy of that sml_kernel
 *                   layout (no flags), reporting version 1
 *   -DPLUG_BAD=N    a bad plugin, one per refusal softmax-lab must make (see BAD_* below)
 *
 * It includes only the public headers and links nothing of softmax-lab, as a user's plugin. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "softmax_lab_plugin.h"

#define LEAF 16

static float sum_tree(const float *v, int64_t n) {
    if (n <= LEAF) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += v[i];
        return s;
    }
    int64_t half = n / 2;
    return sum_tree(v, half) + sum_tree(v + half, n - half);
}

/* A backward sum with the exact sum's class whatever the order (docs/NUMERICS.md section 2):
 * NaN for a NaN term or both infinities, the infinity that appears, else the finite sum. */
static float sum_exact_class(const float *v, int64_t n) {
    int pinf = 0, ninf = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return NAN;
        pinf |= v[i] == INFINITY;
        ninf |= v[i] == -INFINITY;
    }
    if (pinf || ninf) return pinf && ninf ? NAN : pinf ? INFINITY : -INFINITY;
    return sum_tree(v, n);
}

static void forward_row(sml_op op, const float *x, float *y, float *e, int64_t n) {
    float m = -INFINITY;
#ifndef PLUG_NO_MAX
    for (int64_t i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
#else
    m = 0.0f; /* PLANTED BUG: exp(x) overflows once x > 88.72 */
#endif
    for (int64_t i = 0; i < n; i++) e[i] = expf(x[i] - m);
    float d = sum_tree(e, n);
    if (op == SML_SOFTMAX) {
        for (int64_t i = 0; i < n; i++) y[i] = expf(x[i] - m) / d;
    } else {
        float l = logf(d);
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - l;
    }
#ifdef PLUG_SLOPPY
    for (int64_t i = 0; i < n; i++) y[i] *= 1.0f + 24.0f * 0x1p-24f;
#endif
}

static void backward_row(sml_op op, const float *y, const float *dy, float *dx, float *e,
                         int64_t n) {
    if (op == SML_SOFTMAX_BWD) {
        for (int64_t i = 0; i < n; i++) e[i] = dy[i] * y[i];
        float dot = sum_exact_class(e, n);
        for (int64_t i = 0; i < n; i++) dx[i] = y[i] * (dy[i] - dot);
    } else {
        float s = sum_exact_class(dy, n);
        for (int64_t i = 0; i < n; i++) dx[i] = dy[i] - expf(y[i]) * s;
    }
}

/* fp32 only (the table says so); rows are copied out first, so out == x (in place) works. */
static sml_status plug_launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->dtype != SML_F32) return SML_ERR_UNSUPPORTED;
    int64_t n = p->cols;
    if (p->rows == 0 || n == 0) return SML_OK;
    float *buf = malloc((size_t)n * 4 * sizeof *buf);
    if (!buf) return SML_ERR_OUT_OF_MEMORY;
    float *x = buf, *dy = buf + n, *e = buf + 2 * n, *y = buf + 3 * n;
    int bwd = p->op == SML_SOFTMAX_BWD || p->op == SML_LOG_SOFTMAX_BWD;
    for (int64_t r = 0; r < p->rows; r++) {
        const float *xr = (const float *)p->x + r * p->ld;
        memcpy(x, xr, (size_t)n * sizeof *x);
        if (bwd) {
            memcpy(dy, (const float *)p->dy + r * p->ld, (size_t)n * sizeof *dy);
            backward_row(p->op, x, dy, y, e, n);
        } else {
            forward_row(p->op, x, y, e, n);
        }
#ifdef PLUG_LONG_ROWS
        if (n > 300000) y[0] *= 2.0f; /* PLANTED BUG: long rows only */
#endif
        memcpy((float *)p->out + r * p->ld, y, (size_t)n * sizeof *y);
    }
    free(buf);
    return SML_OK;
}

#ifndef PLUG_NAME
#ifdef PLUG_NO_MAX
#define PLUG_NAME "plug_nomax"
#else
#define PLUG_NAME "plug_ok"
#endif
#endif
#ifndef PLUG_CLAIM_X
#define PLUG_CLAIM_X 0.25
#endif

/* The bad plugins (-DPLUG_BAD=BAD_...): each breaks one rule of softmax_lab_plugin.h. Macros,
 * not an enum: the export's name is chosen by #if. */
#define BAD_NONE           0
#define BAD_ABI            1
#define BAD_NO_SYMBOL      2
#define BAD_TAKEN_BUILTIN  3
#define BAD_TWIN_LINE      4
#define BAD_NULL_LAUNCH    5
#define BAD_NULL_NAME      6
#define BAD_EMPTY_NAME     7
#define BAD_NAME_CHARS     8
#define BAD_OPS_ZERO       9
#define BAD_OPS_BITS       10
#define BAD_DTYPES_ZERO    11
#define BAD_DTYPES_BITS    12
#define BAD_MIN_COLS       13
#define BAD_MIN_GT_MAX     14
#define BAD_DEVICE         15
#define BAD_CLAIM_BASELINE 16
#define BAD_CLAIM_SHAPES   17
#define BAD_EMPTY_TABLE    18
#define BAD_CLAIM_LATER    19
#define BAD_FLAGS          20
#ifndef PLUG_BAD
#define PLUG_BAD BAD_NONE
#endif

#define NAME                                     \
    (PLUG_BAD == BAD_TAKEN_BUILTIN ? "cpu_naive" \
     : PLUG_BAD == BAD_NULL_NAME   ? NULL        \
     : PLUG_BAD == BAD_EMPTY_NAME  ? ""          \
     : PLUG_BAD == BAD_NAME_CHARS  ? "my kernel" \
                                   : PLUG_NAME)
#define OPS \
    (PLUG_BAD == BAD_OPS_ZERO ? 0u : PLUG_BAD == BAD_OPS_BITS ? SML_OPS_ALL | 0x40u : SML_OPS_ALL)
#define DTYPES \
    (PLUG_BAD == BAD_DTYPES_ZERO ? 0u : PLUG_BAD == BAD_DTYPES_BITS ? 0x11u : 1u << SML_F32)
#define MIN_COLS (PLUG_BAD == BAD_MIN_COLS ? 0 : PLUG_BAD == BAD_MIN_GT_MAX ? 100 : 1)
#define MAX_COLS (PLUG_BAD == BAD_MIN_GT_MAX ? 10 : 0)
#define DEVICE   (PLUG_BAD == BAD_DEVICE ? (sml_device)7 : SML_DEVICE_CPU)
#define LAUNCH   (PLUG_BAD == BAD_NULL_LAUNCH ? NULL : plug_launch)
#define CLAIM_BASE                                   \
    (PLUG_BAD == BAD_CLAIM_BASELINE ? "nonesuch"     \
     : PLUG_BAD == BAD_CLAIM_LATER  ? PLUG_NAME "_b" \
                                    : "cpu_naive")
#define CLAIM_SHAPES (PLUG_BAD == BAD_CLAIM_SHAPES ? "tiny" : "all")

#ifdef PLUG_FRAMEWORK
#define FLAGS SML_KERNEL_FRAMEWORK
#else
#define FLAGS (PLUG_BAD == BAD_FLAGS ? 0x80u : 0u)
#endif

#ifdef PLUG_ABI1
/* sml_kernel as ABI version 1 laid it out (it ended at known_deviation), which a plugin built
 * then has compiled in. */
typedef struct line {
    const char *name, *file;
    sml_device device;
    unsigned ops, dtypes;
    int64_t min_cols, max_cols;
    sml_launch_fn launch;
    const char *summary;
    sml_claim claim;
    const char *known_deviation;
} line;
#define END_OF_LINE NULL
#define ABI         1u
#else
typedef sml_kernel line;
#define END_OF_LINE NULL, FLAGS, NULL
#define ABI         (PLUG_BAD == BAD_ABI ? SML_PLUGIN_ABI_VERSION + 1 : SML_PLUGIN_ABI_VERSION)
#endif

static const line KERNELS[] = {
    {NAME,
     "tests/plugins/plugin_cpu.c",
     DEVICE,
     OPS,
     DTYPES,
     MIN_COLS,
     MAX_COLS,
     LAUNCH,
#ifdef PLUG_NO_MAX
     "test plugin, planted bug: fp32 softmax without max subtraction",
#else
     "test plugin: fp32 CPU softmax, max subtracted, pairwise sums",
#endif
     {CLAIM_BASE, PLUG_CLAIM_X, CLAIM_SHAPES},
     END_OF_LINE},
    /* A second line: a twin of the first's name in the bad table, else another kernel. */
    {PLUG_BAD == BAD_TWIN_LINE ? PLUG_NAME : PLUG_NAME "_b",
     NULL,
     SML_DEVICE_CPU,
     SML_OPS_FWD,
     1u << SML_F32,
     1,
     0,
     plug_launch,
     NULL,
     {NULL, 0.0, NULL},
     NULL
#ifndef PLUG_ABI1
     ,
     0u,
     NULL
#endif
    },
};

#if PLUG_BAD == BAD_NO_SYMBOL
SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernel(size_t *count, unsigned *abi_version);
SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernel(size_t *count, unsigned *abi_version) {
#else
SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
#endif
    *count = PLUG_BAD == BAD_EMPTY_TABLE ? 0 : sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = ABI;
    return (const sml_kernel *)KERNELS;
}
