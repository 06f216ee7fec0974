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
                r = v * (g - (g * v).sum(axis=1, keepdims=True, dtype=np.float32))
            else:
                r = g - np.exp(v) * g.sum(axis=1, keepdims=True, dtype=np.float32)
        _store(out, r)


def kernels():
    return [("numpy", run, "all", "all",
             {"device": "cpu", "summary": "numpy, fp32 work: max, exp, sum and divide over each row",
              "mods": ("numpy",)})]
