"""Planted-bug Python kernels for test_binding.py, registered on import so that a reproducer
naming this module ("python:planted_kernels") replays with `python -m softmax_lab replay`."""
import numpy as np

import softmax_lab


def no_max(op, x, dy, out):
    """numpy softmax without the max subtraction: exp overflows on large logits"""
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float32))
        out[...] = e / e.sum(axis=1, keepdims=True)


if "py_no_max" not in softmax_lab.registered():
    softmax_lab.register("py_no_max", no_max, ops=["softmax"], dtypes=["fp32"], device="cpu",
                         origin="python:planted_kernels")
