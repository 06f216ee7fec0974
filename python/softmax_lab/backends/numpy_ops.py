"""`numpy`: a CPU softmax in numpy, fp32 work for every dtype. It is the Python path's own
check that needs no GPU: a Python kernel registered from this package goes through the same
property suite, reproducers and bench as a C kernel."""
import numpy as np

from .. import bf16


def _load(a):
    return bf16.to_float32(a) if a.dtype == np.uint16 else a.astype(np.float32)


def _store(out, v):
    if out.dtype == np.uint16:
        out[...] = bf16.from_float32(v)
    else:
        out[...] = v.astype(out.dtype)


def _row_sum(a):
    """Each row's fp32 sum, its class decided before the finite terms are added (as the
    contract wants, docs/NUMERICS.md section 2): a NaN gives NaN, infinities of both signs
    NaN, one sign of infinity that infinity; otherwise the fp32 sum of the finite terms. The
    class must not depend on the order: -1.7e31 - FLT_MAX overflows to -inf in fp32 before it
    meets a +inf, where the exact sum is +inf."""
    pos = np.isposinf(a).any(axis=1, keepdims=True)
    neg = np.isneginf(a).any(axis=1, keepdims=True)
    nan = np.isnan(a).any(axis=1, keepdims=True) | (pos & neg)
    fin = np.where(np.isinf(a), np.float32(0), a).sum(axis=1, keepdims=True, dtype=np.float32)
    inf = np.float32(np.inf)
    return np.where(nan, np.float32(np.nan), np.where(pos, inf, np.where(neg, -inf, fin)))


def run(op, x, dy, out):
    with np.errstate(all="ignore"):
        v = _load(x)
        if op in ("softmax", "log_softmax"):
            m = v.max(axis=1, keepdims=True)
            z = v - m
            e = np.exp(z)
            s = e.sum(axis=1, keepdims=True, dtype=np.float32)
            r = z - np.log(s) if op == "log_softmax" else e / s
        else:
            g = _load(dy)
            if op == "softmax_bwd":
                r = v * (g - _row_sum(g * v))
            else:
                r = g - np.exp(v) * _row_sum(g)
        _store(out, r)


def kernels():
    return [("numpy", run, "all", "all",
             {"device": "cpu", "summary": "numpy, fp32 work: max, exp, sum and divide over each row",
              "mods": ("numpy",)})]
