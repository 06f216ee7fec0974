"""Planted-bug Python kernels for test_binding.py. py_no_max is registered on import, so that
a reproducer naming this module ("python:planted_kernels") replays with `python -m softmax_lab
replay`; `exits` is registered by the test (a worker process finds it by module and name)."""
import os

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


def exits(op, x, dy, out):
    """a right numpy softmax that ends its process (os._exit(0)) on rows of 8 columns or more"""
    if x.shape[1] >= 8:
        os._exit(0)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    out[...] = e / e.sum(axis=1, keepdims=True)
