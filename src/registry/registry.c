/* registry.c: the one table of every kernel softmax-lab ships, and the kernels registered
 * from plugins after it (softmax_lab_plugin.h). Every test, the property suite and the
 * benchmark iterate it, so a new kernel is one file plus one line here.
 * tests/unit/test_registry.c fails if a file in kernels/ has no line here.
 *
 * The registered tables are the library's only global mutable state: a list that only
 * grows, appended under a lock, with the number of registered kernels published last, so
 * readers (sml_kernel_at, sml_kernel_find) take no lock and never see a half-added table. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kernels/launchers.h"
#include "registry/plugin_check.h"
#include "softmax_lab.h"
#include "softmax_lab_plugin.h"

#ifdef SML_HAVE_CUDA
#define GPU(fn) fn
#else
#define GPU(fn) NULL
#endif
#ifdef SML_HAVE_CUDNN
#define CUDNN(fn) fn
#else
#define CUDNN(fn) NULL
#endif

#define NO_CLAIM \
    { NULL, 0.0, NULL }
#define NO_DEVIATION NULL /* the known_deviation label of every kernel this project controls */
#define CONTRACT     NULL /* its declared deviation: none, the contract itself */
#define OWN          0u   /* the flags of a kernel of this project's own */
/* The flags of a framework baseline (a library's kernel the others are measured against:
 * `targets` reads the role from the ledger records the bench writes with it). */
#define FRAMEWORK    SML_KERNEL_FRAMEWORK

/* cuDNN's deviation from the contract, measured (docs/KERNELS.md, "cudnn"; docs/FINDINGS.md):
 * 16-bit outputs one ulp off the correctly rounded value at most, up to 1.47 ulp from the
 * exact value on the edge shapes (all four ops, H100) and 1.47 (fp16) / 1.48 (bf16) ulp on the
 * bench's standard sweep (softmax; H100 and H200 alike, docs/ledgers); an all -inf row gives 0
 * (softmax) or -inf (log_softmax), not NaN; log_softmax of integer logits and of the same
 * shifted by an integer differ in bits; a row of -FLT_MAX logits counts idle lanes as
 * elements (1x3: 0.25 each); log_softmax rounds m + log(s) to fp32 (1x513 fp16, max 9560:
 * log(s) = 0.000335 lost); log_softmax_bwd (fp32, bf16; H100) gives NaN where the exact sum's
 * class is an infinity, in rows whose huge finite dy overflow a partial sum before it meets the
 * infinity (1x4 fp32, 1x3 bf16); fp32 backward on long rows with a constant dy, whose sums add
 * one value millions of times, up to 8.09x (softmax_bwd) and 82.2x (log_softmax_bwd) the
 * contract's bound at 8,388,608 columns, the longest row the nightly profile draws: bound_factor
 * 2^8, three times the worst of 40 such rows; fp32 forward on long rows whose terms repeat a few
 * values (integer logits: the shift property's rounded rows), up to 8.70x (softmax) and 6.45x
 * (log_softmax) the bound on 33 rows of 1.1M to 8.4M columns: bound_factor 2^5, three times the
 * worst, rounded up to a power of two. Nothing else is excused: a worse cuDNN release fails. */
#define CUDNN_16BIT \
    { [SML_F16] = 1.5, [SML_BF16] = 1.5 }
static const sml_deviation CUDNN_DEVIATION = {
    .ulps = {[SML_SOFTMAX] = CUDNN_16BIT,
             [SML_LOG_SOFTMAX] = CUDNN_16BIT,
             [SML_SOFTMAX_BWD] = CUDNN_16BIT,
             [SML_LOG_SOFTMAX_BWD] = CUDNN_16BIT},
    .bound_factor = {[SML_SOFTMAX] = {[SML_F32] = 32},
                     [SML_LOG_SOFTMAX] = {[SML_F32] = 32},
                     [SML_SOFTMAX_BWD] = {[SML_F32] = 256},
                     [SML_LOG_SOFTMAX_BWD] = {[SML_F32] = 256}},
    .exceptions = SML_DEV_ALL_NEG_INF_ROW | SML_DEV_LOG_SOFTMAX_SHIFT_BITS |
                  SML_DEV_LOWEST_MAX_ROW | SML_DEV_LOG_SOFTMAX_LSE_ROUNDED | SML_DEV_BWD_SUM_CLASS};

static const sml_kernel REGISTRY[] = {
    {"cpu_naive", "kernels/cpu_softmax.c", SML_DEVICE_CPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     sml_launch_cpu_naive, "CPU, fp32: max, sum of exp, divide in three passes (pairwise sums)",
     NO_CLAIM, NO_DEVIATION, OWN, CONTRACT},
    {"cpu_online", "kernels/cpu_softmax.c", SML_DEVICE_CPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     sml_launch_cpu_online, "CPU, fp32: one pass with a running max and rescaled sum, then output",
     NO_CLAIM, NO_DEVIATION, OWN, CONTRACT},
    {"naive", "kernels/softmax_naive.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     GPU(sml_launch_gpu_naive),
     "unfused: separate max, exp, sum and divide launches (slow baseline)", NO_CLAIM, NO_DEVIATION,
     OWN, CONTRACT},
    {"warp",
     "kernels/softmax_warp.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     1024,
     GPU(sml_launch_warp),
     "one warp (or a 1..16-lane group) per row, row in registers, 16-byte loads",
     {"naive", 2.0, "short"},
     NO_DEVIATION,
     OWN,
     CONTRACT},
    {"block",
     "kernels/softmax_block.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     16384,
     GPU(sml_launch_block),
     "one block per row, row in registers, global memory read once",
     {"naive", 2.0, "mid"},
     NO_DEVIATION,
     OWN,
     CONTRACT},
    {"online",
     "kernels/softmax_online.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     0,
     GPU(sml_launch_online),
     "online max/sum over tiles, one block per row: any length, two reads",
     {"naive", 1.5, "long"},
     NO_DEVIATION,
     OWN,
     CONTRACT},
    {"split",
     "kernels/softmax_split.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     0,
     GPU(sml_launch_split),
     "a row over a cluster of 1..16 blocks, slices in shared memory, DSMEM merge",
     {"cudnn", 1.2, "long"},
     NO_DEVIATION,
     OWN,
     CONTRACT},
    {"coop",
     "kernels/softmax_coop.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     0,
     GPU(sml_launch_coop),
     "a row over any number of blocks of a cooperative grid, slices in shared memory, partials via "
     "L2",
     {"cudnn", 1.2, "long"},
     NO_DEVIATION,
     OWN,
     CONTRACT},
    {"cudnn", "kernels/softmax_cudnn.cu", SML_DEVICE_GPU, SML_OPS_ALL, SML_DTYPES_ALL, 1, 0,
     CUDNN(sml_launch_cudnn),
     "cuDNN cudnnSoftmaxForward/Backward, ACCURATE/LOG, MODE_INSTANCE (dense rows only)", NO_CLAIM,
     "cuDNN 9.14: 16-bit softmax not correctly rounded; all -inf rows give 0 / -inf; log_softmax "
     "not bitwise shift-invariant",
     FRAMEWORK, &CUDNN_DEVIATION},
    {"auto",
     "kernels/softmax_auto.cu",
     SML_DEVICE_GPU,
     SML_OPS_ALL,
     SML_DTYPES_ALL,
     1,
     0,
     GPU(sml_launch_auto),
     "warp to 128 cols (16-bit 256; fwd to 256 / 512 when rows <= 64 x SMs); block to 16384 (fp32 "
     "fwd, 16-bit bwd: 32768); coop bwd rows of 2 MiB+ (16-bit: not on >= 15 DRAM B/SM-clock "
     "GPUs); then split",
     /* 1.0, not 1.2: on fp32 forward 32768x512 and 4096x8192 cuDNN already runs at 0.9 of
        the copy rate on an H200, so 1.2x there would exceed the copy bandwidth. */
     {"cudnn", 1.0, "all"},
     NO_DEVIATION,
     OWN,
     CONTRACT},
};

#define BUILTIN_COUNT (sizeof REGISTRY / sizeof REGISTRY[0])

/* One registered table. */
typedef struct plugin_set {
    const sml_kernel *table; /* its lines in this build's layout: given, or copy */
    const void *given;       /* the table as registered (sml_unregister_kernels names it) */
    sml_kernel *copy;        /* an older ABI's lines in this layout (owned), else NULL */
    size_t count;
    char *origin;          /* as given at registration */
    char *library;         /* the loaded library's path (sml_load_plugin), else NULL */
    void *dl;              /* its dlopen handle, else NULL */
    _Atomic int withdrawn; /* sml_unregister_kernels: skipped by every lookup, kept linked */
    struct plugin_set *_Atomic next;
} plugin_set;

/* Sets are linked (under LOCK) before LOADED is raised with release order; a reader loads
 * LOADED with acquire order and follows links only as far as the sets it counts. */
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;
static plugin_set *_Atomic HEAD;
static plugin_set *TAIL;      /* under LOCK */
static _Atomic size_t LOADED; /* kernels in the published sets */
static _Atomic size_t GONE;   /* kernels in the withdrawn ones (a part of LOADED) */

static plugin_set *first_set(void) { return atomic_load_explicit(&HEAD, memory_order_relaxed); }
static plugin_set *next_set(const plugin_set *s) {
    return atomic_load_explicit(&s->next, memory_order_relaxed);
}

static int withdrawn(const plugin_set *s) {
    return atomic_load_explicit(&s->withdrawn, memory_order_acquire);
}

size_t sml_kernel_count(void) {
    return BUILTIN_COUNT + atomic_load_explicit(&LOADED, memory_order_acquire) -
           atomic_load_explicit(&GONE, memory_order_acquire);
}

/* The set holding registered kernel i (0-based after the built-ins, withdrawn sets not
 * counted); *j its line. The walk stops at the sets LOADED counts. */
static const plugin_set *set_of(size_t i, size_t *j) {
    size_t n = atomic_load_explicit(&LOADED, memory_order_acquire), seen = 0;
    for (const plugin_set *s = first_set(); s && seen < n; seen += s->count, s = next_set(s)) {
        if (withdrawn(s)) continue;
        if (i < s->count) {
            *j = i;
            return s;
        }
        i -= s->count;
    }
    return NULL;
}

const sml_kernel *sml_kernel_at(size_t i) {
    if (i < BUILTIN_COUNT) return &REGISTRY[i];
    size_t j = 0;
    const plugin_set *s = set_of(i - BUILTIN_COUNT, &j);
    return s ? &s->table[j] : NULL;
}

const sml_kernel *sml_kernel_find(const char *name) {
    if (!name) return NULL;
    size_t n = sml_kernel_count();
    for (size_t i = 0; i < n; i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (k && k->name && strcmp(k->name, name) == 0) return k;
    }
    return NULL;
}

/* The set a kernel pointer belongs to, or NULL (a built-in kernel, or no registry entry). */
static const plugin_set *owner(const sml_kernel *k) {
    size_t n = atomic_load_explicit(&LOADED, memory_order_acquire), seen = 0;
    uintptr_t p = (uintptr_t)k;
    for (const plugin_set *s = first_set(); s && seen < n; s = next_set(s)) {
        if (withdrawn(s)) {
            seen += s->count;
            continue;
        }
        uintptr_t lo = (uintptr_t)s->table, hi = (uintptr_t)(s->table + s->count);
        if (p >= lo && p < hi && (p - lo) % sizeof *k == 0) return s;
        seen += s->count;
    }
    return NULL;
}

const char *sml_kernel_origin(const sml_kernel *k) {
    const plugin_set *s = k ? owner(k) : NULL;
    return s ? s->origin : NULL;
}

int sml_source_is_python(const char *source) {
    return source && !strncmp(source, SML_PYTHON_SOURCE_PREFIX, strlen(SML_PYTHON_SOURCE_PREFIX));
}

const char *sml_kernel_library(const sml_kernel *k) {
    const plugin_set *s = k ? owner(k) : NULL;
    return s ? s->library : NULL;
}

/* The registry's answer to the plugin rules' "is this name taken?" (plugin_check.h). */
static int name_taken(const char *name, const char **origin) {
    const sml_kernel *k = sml_kernel_find(name);
    if (!k) return 0;
    *origin = sml_kernel_origin(k);
    return 1;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

sml_status sml_registry_add(const sml_kernel *table, size_t count, unsigned abi_version,
                            const char *origin, const char *library, void *dl, int *already,
                            char *msg, size_t msglen) {
    if (already) *already = 0;
    if (msg && msglen) msg[0] = 0;
    if (!origin || !*origin) origin = "(unnamed)";
    pthread_mutex_lock(&LOCK);
    sml_status s = SML_OK;
    /* The same library loaded twice registers once; tables from one Python module are
     * registered one call each, and each counts. */
    if ((library && !sml_source_is_python(library)) || dl) {
        size_t n = atomic_load_explicit(&LOADED, memory_order_relaxed), seen = 0;
        for (const plugin_set *p = first_set(); p && seen < n; seen += p->count, p = next_set(p))
            if ((library && p->library && !strcmp(p->library, library)) || (dl && p->dl == dl)) {
                if (already) *already = 1;
                goto out;
            }
    }
    sml_kernel *copy = NULL;
    const sml_kernel *lines = sml_plugin_table_current(table, count, abi_version, &copy);
    plugin_set *set = NULL;
    if (table && !lines) goto oom;
    s = sml_plugin_check_table(lines, count, abi_version, origin, name_taken, msg, msglen);
    if (s != SML_OK) {
        free(copy);
        goto out;
    }
    set = calloc(1, sizeof *set);
    if (set) {
        set->origin = dup_str(origin);
        set->library = library ? dup_str(library) : NULL;
    }
    if (!set || !set->origin || (library && !set->library)) goto oom;
    set->table = lines;
    set->given = table;
    set->copy = copy;
    set->count = count;
    set->dl = dl;
    atomic_init(&set->withdrawn, 0);
    atomic_init(&set->next, NULL);
    if (TAIL)
        atomic_store_explicit(&TAIL->next, set, memory_order_relaxed);
    else
        atomic_store_explicit(&HEAD, set, memory_order_relaxed);
    TAIL = set;
    atomic_fetch_add_explicit(&LOADED, count, memory_order_release);
    goto out;
oom:
    if (set) {
        free(set->origin);
        free(set->library);
        free(set);
    }
    free(copy);
    s = sml_errorf(SML_ERR_OUT_OF_MEMORY, msg, msglen, "%s: out of memory registering its kernels",
                   origin);
out:
    pthread_mutex_unlock(&LOCK);
    return s;
}

sml_status sml_unregister_kernels(const sml_kernel *table) {
    if (!table) return SML_ERR_INVALID_ARG;
    pthread_mutex_lock(&LOCK);
    sml_status st = SML_ERR_INVALID_ARG;
    size_t n = atomic_load_explicit(&LOADED, memory_order_relaxed), seen = 0;
    for (plugin_set *p = first_set(); p && seen < n; seen += p->count, p = next_set(p))
        if (p->given == table && !p->dl && !withdrawn(p)) {
            atomic_store_explicit(&p->withdrawn, 1, memory_order_release);
            atomic_fetch_add_explicit(&GONE, p->count, memory_order_release);
            st = SML_OK;
            break;
        }
    pthread_mutex_unlock(&LOCK);
    return st;
}

sml_status sml_register_kernels(const sml_kernel *table, size_t count, unsigned abi_version,
                                const char *origin, char *msg, size_t msglen) {
    /* A table registered from Python ("python:MODULE (versions)") is found again by importing
     * MODULE, which is what a reproducer of one of its kernels records as its source. */
    char source[256] = "";
    if (sml_source_is_python(origin)) {
        size_t n = strcspn(origin, " (");
        if (n < sizeof source) snprintf(source, sizeof source, "%.*s", (int)n, origin);
    }
    return sml_registry_add(table, count, abi_version, origin, source[0] ? source : NULL, NULL,
                            NULL, msg, msglen);
}
