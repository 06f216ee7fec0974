"""`liger`: Liger-Kernel's Triton softmax (softmax forward and backward; Liger has no
log-softmax). Liger's own wrapper allocates its output; here its kernels are launched with
Liger's own launch settings (calculate_settings) on the suite's buffers instead, so that what
is timed is Liger's kernel and nothing else. Rows longer than Liger's largest block
(65,536 columns) are outside what Liger runs."""
from liger_kernel.ops import softmax as _lsm
from liger_kernel.ops.utils import calculate_settings

MAX_COLS = 65536


def run(op, x, dy, out):
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return
    block, warps = calculate_settings(cols)
    ld = x.stride(0)
    grid = (rows,)
    if op == "softmax":
        k = _lsm._softmax_single_block_forward_kernel if cols <= block else _lsm._softmax_multi_block_forward_kernel
        k[grid](out, ld, x, ld, cols, BLOCK_SIZE=block, num_warps=warps)
    elif op == "softmax_bwd":
        k = _lsm._softmax_single_block_backward_kernel if cols <= block else _lsm._softmax_multi_block_backward_kernel
        k[grid](dy, ld, x, ld, out, ld, cols, BLOCK_SIZE=block, num_warps=warps)
    else:
        raise ValueError("liger has no %s" % op)


def kernels():
    return [("liger", run, ["softmax", "softmax_bwd"], "all",
             {"summary": "Liger-Kernel's Triton softmax, one program per row (its launch settings)",
              "claim": ("torch", 1.0, "all"), "max_cols": MAX_COLS, "known_deviation": KNOWN_DEVIATION,
              "mods": ("torch", "triton", "liger_kernel"), "framework": True})]


# Measured by the property suite (docs/NUMERICS.md's contract, not loosened). Liger's
# backward works in the tensors' own 16-bit type (no fp32 accumulation).
KNOWN_DEVIATION = ("softmax_bwd fp16/bf16 outside the contract (up to 18x the bound; a huge dy overflows "
                   "to -inf/NaN where the result is finite); H100, liger-kernel 0.8.5")
