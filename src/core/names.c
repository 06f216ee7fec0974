/* names.c: status messages and the names of dtypes and ops, both ways. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "softmax_lab.h"

const char *sml_strerror(sml_status s) {
    switch (s) {
    case SML_OK: return "success";
    case SML_ERR_NULL_POINTER: return "a required pointer is NULL";
    case SML_ERR_BAD_SHAPE: return "rows and cols must be >= 0 and rows * ld must fit in 64 bits";
    case SML_ERR_BAD_STRIDE: return "the row stride ld must be >= cols";
    case SML_ERR_BAD_DTYPE: return "unknown dtype (expected fp32, fp16 or bf16)";
    case SML_ERR_BAD_OP:
        return "unknown op (expected softmax, log_softmax, softmax_bwd or log_softmax_bwd)";
    case SML_ERR_BAD_ALIAS:
        return "the output overlaps an input (only forward out == x is allowed)";
    case SML_ERR_UNSUPPORTED: return "this kernel does not support that op, dtype or row length";
    case SML_ERR_UNKNOWN_KERNEL: return "no kernel of that name in the registry";
    case SML_ERR_NO_DEVICE:
        return "GPU kernel unavailable: no CUDA device, or built without CUDA/cuDNN";
    case SML_ERR_CUDA: return "a CUDA call or kernel launch failed";
    case SML_ERR_CUDNN: return "a cuDNN call failed";
    case SML_ERR_OUT_OF_MEMORY: return "out of memory";
    case SML_ERR_IO: return "file could not be read or written";
    case SML_ERR_FORMAT: return "file is not in the expected format";
    case SML_ERR_INVALID_ARG: return "invalid argument";
    case SML_ERR_INTERNAL: return "internal error (a bug in softmax-lab)";
    case SML_ERR_PLUGIN: return "plugin refused (cannot be loaded, or its kernel table is invalid)";
    case SML_ERR_KERNEL_FAILED:
        return "the kernel reported a failure (a plugin's or a Python kernel's own error)";
    case SML_STATUS_COUNT: break;
    }
    return "unknown status code";
}

static const char *const DTYPE_NAMES[SML_DTYPE_COUNT] = {"fp32", "fp16", "bf16"};
static const char *const OP_NAMES[SML_OP_COUNT] = {"softmax", "log_softmax", "softmax_bwd",
                                                   "log_softmax_bwd"};

const char *sml_dtype_name(sml_dtype d) {
    return (unsigned)d < SML_DTYPE_COUNT ? DTYPE_NAMES[d] : "?";
}

size_t sml_dtype_size(sml_dtype d) {
    switch (d) {
    case SML_F32: return 4;
    case SML_F16:
    case SML_BF16: return 2;
    default: return 0;
    }
}

const char *sml_op_name(sml_op op) { return (unsigned)op < SML_OP_COUNT ? OP_NAMES[op] : "?"; }

int sml_shape_class_valid(const char *cls) {
    return cls && (!strcmp(cls, "all") || !strcmp(cls, "short") || !strcmp(cls, "mid") ||
                   !strcmp(cls, "long"));
}

int sml_op_is_backward(sml_op op) { return op == SML_SOFTMAX_BWD || op == SML_LOG_SOFTMAX_BWD; }

sml_status sml_dtype_parse(const char *s, sml_dtype *out) {
    static const struct {
        const char *name;
        sml_dtype d;
    } ALIASES[] = {
        {"fp32", SML_F32},  {"f32", SML_F32},       {"float32", SML_F32}, {"float", SML_F32},
        {"fp16", SML_F16},  {"f16", SML_F16},       {"float16", SML_F16}, {"half", SML_F16},
        {"bf16", SML_BF16}, {"bfloat16", SML_BF16},
    };
    /* str(tensor.dtype) in PyTorch, and the module-qualified names of numpy and JAX. */
    static const char *const PREFIXES[] = {"torch.", "numpy.", "np.", "jnp.", "jax.numpy."};
    if (!s || !out) return SML_ERR_NULL_POINTER;
    for (size_t i = 0; i < sizeof PREFIXES / sizeof PREFIXES[0]; i++)
        if (strncmp(s, PREFIXES[i], strlen(PREFIXES[i])) == 0) {
            s += strlen(PREFIXES[i]);
            break;
        }
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (strcmp(s, ALIASES[i].name) == 0) {
            *out = ALIASES[i].d;
            return SML_OK;
        }
    return SML_ERR_BAD_DTYPE;
}

sml_status sml_op_parse(const char *s, sml_op *out) {
    static const struct {
        const char *name;
        sml_op op;
    } ALIASES[] = {
        {"softmax", SML_SOFTMAX},
        {"log_softmax", SML_LOG_SOFTMAX},
        {"logsoftmax", SML_LOG_SOFTMAX},
        {"softmax_bwd", SML_SOFTMAX_BWD},
        {"softmax_backward", SML_SOFTMAX_BWD},
        {"log_softmax_bwd", SML_LOG_SOFTMAX_BWD},
        {"log_softmax_backward", SML_LOG_SOFTMAX_BWD},
    };
    if (!s || !out) return SML_ERR_NULL_POINTER;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (strcmp(s, ALIASES[i].name) == 0) {
            *out = ALIASES[i].op;
            return SML_OK;
        }
    return SML_ERR_BAD_OP;
}

sml_status sml_errorf(sml_status s, char *err, size_t n, const char *fmt, ...) {
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return s;
}
