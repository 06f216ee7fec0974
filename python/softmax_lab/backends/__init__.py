"""The framework backends shipped with the package, each registered only where its framework
imports (and, for GPU backends, where a CUDA device is visible to it):

  numpy          CPU, numpy                           (numpy_ops)
  torch          PyTorch's aten softmax kernels       (torch_ops)       framework baseline
  triton         this project's Triton kernels        (triton_softmax)  framework baseline
  triton_online  the same, online variant for any row length            framework baseline
  liger          Liger-Kernel's Triton softmax        (liger_ops)       framework baseline

A framework baseline is registered with framework=True (in its module's kernels() extras):
the bench marks its ledger records "framework": true, and `targets` measures the field
targets (vs-field, short-vs-field) against the fastest of them on each cell, as against the
built-in cudnn.
"""
import importlib

from .. import _register
from ..versions import describe

MODULES = ["numpy_ops", "torch_ops", "triton_softmax", "liger_ops"]
# The backends each module registers: a process that needs only some (a worker serves one
# kernel) imports only their modules. Importing PyTorch and Triton, and asking PyTorch for a
# device, takes seconds on a GPU host, paid by every worker process that imported them all.
PROVIDES = {"numpy_ops": ("numpy",), "torch_ops": ("torch",),
            "triton_softmax": ("triton", "triton_online"), "liger_ops": ("liger",)}


def _gpu_ok():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def register_all(only=None):
    """Register every importable backend (or those named in `only`); returns (registered,
    skipped) where skipped maps a backend or module to why it was left out."""
    done, skipped = [], {}
    for modname in MODULES:
        if only is not None and not set(PROVIDES[modname]) & set(only):
            continue
        try:
            mod = importlib.import_module("." + modname, __name__)
        except Exception as e:  # the framework is not installed here
            skipped[modname] = "%s: %s" % (type(e).__name__, e)
            continue
        for name, fn, ops, dtypes, extra in mod.kernels():
            if only is not None and name not in only:
                continue
            if name in _register.registered():
                done.append(name)
                continue
            extra = dict(extra)
            device = extra.pop("device", "gpu")
            mods = extra.pop("mods", ())
            if device == "gpu" and not _gpu_ok():
                skipped[name] = "no CUDA device visible to PyTorch"
                continue
            with _register.importing():  # a worker registers the backends itself
                _register.register(name, fn, ops, dtypes, device=device,
                                   origin="python:%s (%s)" % (mod.__name__, describe(mods)), **extra)
            done.append(name)
    return done, skipped
