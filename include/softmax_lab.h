/* softmax_lab.h: the one public header of softmax-lab.
 *
 * Every tensor is row-major [rows, cols] with one row stride `ld` (in elements, ld >= cols)
 * shared by all tensors of a call. Softmax is taken over each row. fp16 and bf16 inputs are
 * computed with fp32 accumulation. Exported names carry the prefix sml_.
 *
 * Two ways in:
 *   - the convenience calls (sml_softmax_forward ...) run the `auto` kernel, which picks the
 *     fastest registered GPU path for the shape;
 *   - the registry (sml_kernel_at / sml_kernel_find + sml_run) runs any named kernel, which is
 *     how the tests, the property suite and the benchmark see every kernel.
 *
 * Bad input returns a status and writes nothing. Misaligned pointers and odd strides are
 * not errors: kernels fall back to narrower loads.
 */
#ifndef SOFTMAX_LAB_H
#define SOFTMAX_LAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sml_status {
    SML_OK = 0,
    SML_ERR_NULL_POINTER, /* a required pointer is NULL */
    SML_ERR_BAD_SHAPE,    /* rows or cols negative, or rows*ld overflows 64 bits */
    SML_ERR_BAD_STRIDE,   /* ld < cols */
    SML_ERR_BAD_DTYPE,    /* dtype outside sml_dtype */
    SML_ERR_BAD_OP,       /* op outside sml_op */
    SML_ERR_BAD_ALIAS, /* output partly overlaps an input (only out == x for forward is allowed) */
    SML_ERR_UNSUPPORTED,    /* the kernel does not support this op, dtype or row length */
    SML_ERR_UNKNOWN_KERNEL, /* no kernel of that name in the registry */
    SML_ERR_NO_DEVICE,      /* a GPU kernel, but no CUDA device (or built without CUDA) */
    SML_ERR_CUDA,           /* a CUDA runtime call or a kernel launch failed */
    SML_ERR_CUDNN,          /* a cuDNN call failed */
    SML_ERR_OUT_OF_MEMORY,  /* host or device allocation failed */
    SML_ERR_IO,             /* a file could not be read or written */
    SML_ERR_FORMAT,         /* a file is not in the expected format */
    SML_ERR_INVALID_ARG,    /* any other bad argument (bad flag value, ...) */
    SML_ERR_INTERNAL,       /* a bug in softmax-lab */
    SML_ERR_PLUGIN,        /* a plugin library or kernel table was refused (softmax_lab_plugin.h) */
    SML_ERR_KERNEL_FAILED, /* a kernel from outside softmax-lab (plugin, Python) reported a failure */
    SML_STATUS_COUNT
} sml_status;

/* A static, human-readable message for a status; never NULL. */
const char *sml_strerror(sml_status s);

typedef enum sml_dtype { SML_F32 = 0, SML_F16 = 1, SML_BF16 = 2, SML_DTYPE_COUNT } sml_dtype;

typedef enum sml_op {
    SML_SOFTMAX = 0,         /* y = exp(x - max) / sum(exp(x - max)) */
    SML_LOG_SOFTMAX = 1,     /* y = x - max - log(sum(exp(x - max))) */
    SML_SOFTMAX_BWD = 2,     /* dx = y * (dy - sum(dy * y)), y = softmax output */
    SML_LOG_SOFTMAX_BWD = 3, /* dx = dy - exp(y) * sum(dy), y = log-softmax output */
    SML_OP_COUNT
} sml_op;

typedef enum sml_device { SML_DEVICE_CPU = 0, SML_DEVICE_GPU = 1 } sml_device;

const char *sml_dtype_name(sml_dtype d); /* "fp32", "fp16", "bf16"; "?" if out of range */
size_t sml_dtype_size(sml_dtype d);      /* bytes per element; 0 if out of range */
const char *sml_op_name(sml_op op); /* "softmax", "log_softmax", "softmax_bwd", "log_softmax_bwd" */
/* Parse the names above (also "float32", "float16", "bfloat16", "f32", ..., and PyTorch's
 * "torch.bfloat16"; a "numpy.", "np." or "jnp." prefix is accepted too). */
sml_status sml_dtype_parse(const char *s, sml_dtype *out);
sml_status sml_op_parse(const char *s, sml_op *out);
int sml_op_is_backward(sml_op op);

/* State a kernel may need across calls: the cuDNN handle, a device scratch buffer, the coop
 * kernel's partial slots. Not thread-safe: one handle per host thread, and a handle's
 * launches must not run concurrently on two streams (they share that state). */
typedef struct sml_handle sml_handle;
sml_status sml_handle_create(sml_handle **out);
void sml_handle_destroy(sml_handle *h);

/* One call's worth of work. Pointers are device pointers for GPU kernels, host pointers
 * for CPU kernels. */
typedef struct sml_problem {
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols, ld;
    const void *x;  /* forward: logits; backward: the forward output y */
    const void *dy; /* backward: the upstream gradient; ignored (may be NULL) for forward */
    void *out;      /* forward: y (may equal x: in place); backward: dx */
    void *stream;   /* cudaStream_t for GPU kernels (NULL: the default stream); ignored on CPU */
} sml_problem;

typedef sml_status (*sml_launch_fn)(sml_handle *h, const sml_problem *p);

/* A kernel's performance promise, checked by the perf suite (tests/perf). */
typedef struct sml_claim {
    const char *baseline; /* kernel it must beat; NULL: no claim (experimental) */
    double min_speedup;   /* time(baseline) / time(kernel) at least this */
    const char *shapes;   /* shape class it holds on: "all", "short", "mid", "long" */
} sml_claim;

#define SML_OPS_ALL    ((1u << SML_OP_COUNT) - 1u)
#define SML_OPS_FWD    ((1u << SML_SOFTMAX) | (1u << SML_LOG_SOFTMAX))
#define SML_DTYPES_ALL ((1u << SML_DTYPE_COUNT) - 1u)

/* sml_kernel.flags: what a kernel is, beyond what it runs. */
/* A framework baseline: a kernel of a library others use (cuDNN, PyTorch, Triton, Liger) that
 * this project's kernels are measured against. The bench writes it into the kernel's ledger
 * record ("framework": true) and `targets` takes the time to beat on the field targets from
 * the records that say so. */
#define SML_KERNEL_FRAMEWORK (1u << 0)
#define SML_KERNEL_FLAGS_ALL SML_KERNEL_FRAMEWORK

/* A kernel's declared deviation from the numerics contract (docs/PROPERTIES.md, "Declared
 * deviations"), for a kernel this project does not control (a vendor or framework baseline)
 * that is measured to miss it. It is a looser contract the checker enforces, never a pass:
 *
 *   - ulps[op][dtype] and bound_factor[op][dtype] (0: the contract) loosen the value bound of
 *     that op and dtype. An element outside the contract's bound is excused when its error
 *     is within ulps[op][dtype] ulps of the output dtype at the exact value, or within
 *     bound_factor[op][dtype] times the contract's bound; the same widened bound holds the
 *     row sums. A NaN or infinity where the contract wants another value is never a value
 *     miss: only a named exception below covers it.
 *   - exceptions: SML_DEV_* bits, each naming one rule of the contract the kernel breaks, in
 *     exactly these elements and nowhere else:
 *       SML_DEV_ALL_NEG_INF_ROW         softmax / log_softmax of a row whose logits are all
 *                                       -inf: 0 / -inf everywhere instead of NaN;
 *       SML_DEV_LOG_SOFTMAX_SHIFT_BITS  log_softmax of integer logits x and x + c (both
 *                                       exact) may differ in bits; each output is still held
 *                                       to the value bound;
 *       SML_DEV_BWD_16BIT_OVERFLOW      softmax_bwd / log_softmax_bwd in fp16 or bf16: +-inf
 *                                       or NaN in a row where max|dy_j| + sum|dy_j y_j|
 *                                       (softmax_bwd) or max|dy_j| + sum|dy_j|
 *                                       (log_softmax_bwd) reaches the dtype's largest finite
 *                                       value, where 16-bit intermediates overflow;
 *       SML_DEV_LOWEST_MAX_ROW          softmax / log_softmax of a row whose largest logit is
 *                                       the dtype's lowest finite value (-FLT_MAX in fp32):
 *                                       any finite output in that row (a kernel whose idle
 *                                       lanes hold that value as the max's identity counts
 *                                       them as elements of such a row);
 *       SML_DEV_LOG_SOFTMAX_LSE_ROUNDED log_softmax computed as x - (m + log(s)) with the
 *                                       sum m + log(s) rounded to fp32: each output may be
 *                                       off by one more fp32 ulp of |m| + log(cols) (m the
 *                                       row's largest logit), which is all of log(s) where
 *                                       |m| is large;
 *       SML_DEV_ROW_BITS_BY_ADDRESS     any op: a row's output bits may change with the row's
 *                                       place in the batch (a kernel whose vector loads start
 *                                       at an aligned address splits a row's reduction by its
 *                                       address); each output is still held to the value
 *                                       bound.
 *       SML_DEV_BWD_SUM_CLASS           softmax_bwd / log_softmax_bwd: NaN where the contract
 *                                       wants an infinity, in a row whose terms (dy_j y_j, or
 *                                       dy_j) hold infinities of one sign only and finite terms
 *                                       of the other sign whose magnitudes add up to FLT_MAX
 *                                       or more, so that a plain fp32 partial sum of them can
 *                                       overflow before it meets the infinity (docs/NUMERICS.md
 *                                       section 2: the sum's class).
 *
 * Every other miss is a FAIL whose message names the declaration it broke; writes outside the
 * output and launch errors are never excused; strict runs (`check --strict`) apply none of
 * it. The plugin loader refuses a declaration with a negative or non-finite figure, a factor
 * in (0, 1), an unknown exception bit, or a bound for an op or dtype the kernel does not run. */
#define SML_DEV_ALL_NEG_INF_ROW         (1u << 0)
#define SML_DEV_LOG_SOFTMAX_SHIFT_BITS  (1u << 1)
#define SML_DEV_BWD_16BIT_OVERFLOW      (1u << 2)
#define SML_DEV_LOWEST_MAX_ROW          (1u << 3)
#define SML_DEV_LOG_SOFTMAX_LSE_ROUNDED (1u << 4)
#define SML_DEV_ROW_BITS_BY_ADDRESS     (1u << 5)
#define SML_DEV_BWD_SUM_CLASS           (1u << 6)
#define SML_DEV_EXCEPTIONS_ALL          ((1u << 7) - 1u)

typedef struct sml_deviation {
    double ulps[SML_OP_COUNT][SML_DTYPE_COUNT];         /* 0: the contract's value bound */
    double bound_factor[SML_OP_COUNT][SML_DTYPE_COUNT]; /* 0: the contract's value bound */
    unsigned exceptions;                                /* SML_DEV_* bits */
} sml_deviation;

typedef struct sml_kernel {
    const char *name; /* unique: "warp", "block", "cudnn", "auto", "cpu_naive", ... */
    const char *file; /* the source file that implements it, from the repository root */
    sml_device device;
    unsigned ops;         /* bit (1u << op) per supported op */
    unsigned dtypes;      /* bit (1u << dtype) per supported dtype */
    int64_t min_cols;     /* shortest supported row (>= 1) */
    int64_t max_cols;     /* longest supported row; 0: no limit */
    sml_launch_fn launch; /* NULL when this build cannot run it (no CUDA, no cuDNN) */
    const char *summary;  /* one line: what it does differently */
    sml_claim claim;
    /* A label for people, shown beside the declaration (`list`, reports); NULL for a kernel
     * this project controls. The text excuses nothing: only `deviation` does. */
    const char *known_deviation;
    unsigned flags; /* SML_KERNEL_* bits; 0 for a kernel of this project's own */
    /* The kernel's declared deviation from the contract (above), or NULL: the contract. */
    const sml_deviation *deviation;
} sml_kernel;

/* The built-in kernels, then any registered from plugins (softmax_lab_plugin.h). */
size_t sml_kernel_count(void);
const sml_kernel *sml_kernel_at(size_t i);           /* NULL past the end */
const sml_kernel *sml_kernel_find(const char *name); /* NULL if absent */

/* Validate p against the API rules and k's limits without running anything. */
sml_status sml_validate(const sml_kernel *k, const sml_problem *p);
/* Validate, then run. GPU kernels are asynchronous on p->stream; a launch error is reported. */
sml_status sml_run(const sml_kernel *k, sml_handle *h, const sml_problem *p);

/* 1 when this build has CUDA and a CUDA device is present, else 0. */
int sml_gpu_available(void);

/* The library's version, "MAJOR.MINOR.PATCH", a static string: SML_VERSION_STRING of the
 * softmax_lab_version.h it was built with (compare it with the one you compile against). */
const char *sml_version(void);

/* The kernel `auto` runs for an op, dtype and shape of dense rows (row stride = cols) at
 * 16-byte aligned pointers, as an allocator's tensors are: its registry name ("warp",
 * "block", "split", "coop", "online") in *kernel, a static string; nothing runs. h may be
 * NULL. The decision reads the device only for forward rows of 129-256 columns (16-bit:
 * 257-512), where it needs the SM count, and past `block`'s rows (16,384 columns; 32,768 for
 * fp32 forward and 16-bit backward), where it needs cluster support: there
 * SML_ERR_NO_DEVICE without a GPU. Where the GPU has a plan table (tuned plans per GPU
 * model: SML_PLANS, or the ones shipped in share/softmax_lab/plans) with an entry for the
 * shape, the table's kernel is reported; `auto` runs it, or the rules' kernel where that one
 * refuses the table's plan. Bad op, dtype or shape: the status sml_validate gives. */
sml_status sml_auto_choice(sml_handle *h, sml_op op, sml_dtype dtype, int64_t rows, int64_t cols,
                           const char **kernel);

/* The convenience API: the `auto` kernel, on device pointers. */
sml_status sml_softmax_forward(sml_handle *h, const void *x, void *y, int64_t rows, int64_t cols,
                               int64_t ld, sml_dtype dtype, void *stream);
sml_status sml_log_softmax_forward(sml_handle *h, const void *x, void *y, int64_t rows,
                                   int64_t cols, int64_t ld, sml_dtype dtype, void *stream);
sml_status sml_softmax_backward(sml_handle *h, const void *y, const void *dy, void *dx,
                                int64_t rows, int64_t cols, int64_t ld, sml_dtype dtype,
                                void *stream);
sml_status sml_log_softmax_backward(sml_handle *h, const void *y, const void *dy, void *dx,
                                    int64_t rows, int64_t cols, int64_t ld, sml_dtype dtype,
                                    void *stream);

#ifdef __cplusplus
}
#endif
#endif
