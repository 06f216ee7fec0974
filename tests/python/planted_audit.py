"""A planted framework-style bug for test_audit.py: a CPU softmax backward (fp16, bf16) that
rounds the row's sum(y * dy) to the 16-bit dtype before using it, as a kernel that keeps an
intermediate in the input's type does. Registered on import, so that a reproducer naming this
module ("python:planted_audit") replays with `python3 -m softmax_lab replay FILE
--trust-reproducer` (tests/python on PYTHONPATH)."""
import numpy as np

import softmax_lab
from softmax_lab import bf16

NAME = "py_bwd_16bit_sum"


def _to_fp32(a):
    return bf16.to_float32(a) if a.dtype == np.uint16 else a.astype(np.float32)


def _to_dtype(v, like):
    """fp32 values rounded to like's dtype (bf16: uint16 bits)"""
    return bf16.from_float32(v) if like.dtype == np.uint16 else v.astype(like.dtype)


def bwd_16bit_sum(op, x, dy, out):
    """softmax backward, fp32 work except the row's sum(y * dy), rounded to the 16-bit dtype"""
    with np.errstate(all="ignore"):
        y, g = _to_fp32(x), _to_fp32(dy)
        s = _to_fp32(_to_dtype((y * g).sum(axis=1, keepdims=True, dtype=np.float32), x))
        out[...] = _to_dtype(y * (g - s), out)


if NAME not in softmax_lab.registered():
    softmax_lab.register(NAME, bwd_16bit_sum, ops=["softmax_bwd"], dtypes=["fp16", "bf16"], device="cpu")
