"""register(): a Python callable becomes a kernel of the suite's registry.

The suite calls the kernel with its own buffers, zero-copy:
  * GPU kernels get torch tensors over the suite's device pointers (row stride `ld`, bf16 as a
    torch.bfloat16 view), with the suite's CUDA stream current;
  * CPU kernels get numpy arrays over the suite's host buffers (bf16 as raw uint16 bits: use
    softmax_lab.bf16 to convert).
The callable is fn(op, x, dy, out): op is "softmax", "log_softmax", "softmax_bwd" or
"log_softmax_bwd"; for forward ops x holds the logits and dy is None; for backward ops x holds
the forward output y and dy the upstream gradient; the result goes into `out` (which may be x
itself for forward ops: in place). Whatever fn raises is printed once and reported to the suite
as a failed launch, never as a pass.
"""
import ctypes
import sys
import threading
import traceback

from . import _native

ABI_VERSION = 1  # SML_PLUGIN_ABI_VERSION of include/softmax_lab_plugin.h

SML_OK = 0
# enum sml_status of softmax_lab.h: a Python kernel that raised is reported as
# SML_ERR_KERNEL_FAILED (the suite counts it as a failed launch; the traceback is printed once).
SML_ERR_KERNEL_FAILED = 18

# A KeyboardInterrupt or SystemExit raised inside a kernel (Ctrl-C arrives there, the only
# Python code that runs during a check): kept here, every later launch fails at once without
# calling the kernel, and run_cli raises it again when the command returns.
_interrupt = []

_keep = []          # every table handed to C must live as long as the process
_registered = {}    # name -> Kernel
_lock = threading.Lock()



def _bits(names, universe, what):
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    bits = 0
    for n in names:
        key = _native.DTYPE_ALIASES.get(n, n) if what == "dtype" else n
        if key not in universe:
            raise ValueError("softmax_lab.register: unknown %s %r (known: %s)" % (what, n, ", ".join(universe)))
        bits |= 1 << universe.index(key)
    if not bits:
        raise ValueError("softmax_lab.register: no %s given" % what)
    return bits


class _Views:
    """Array views over the suite's buffers, cached by (pointer, shape, dtype): the bench
    launches the same buffers many times, and building a view costs more than many kernels."""

    def __init__(self, device):
        self.device = device
        self.cache = {}

    def view(self, ptr, rows, cols, ld, dtype):
        if not ptr:
            return None
        key = (ptr, rows, cols, ld, dtype)
        v = self.cache.get(key)
        if v is None:
            v = (_torch_view if self.device == "gpu" else _numpy_view)(ptr, rows, cols, ld, dtype)
            if len(self.cache) > 256:
                self.cache.clear()
            self.cache[key] = v
        return v


_TYPESTR = {"fp32": "<f4", "fp16": "<f2", "bf16": "<i2"}
_SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}


class _CudaArray:
    def __init__(self, ptr, rows, cols, ld, dtype):
        es = _SIZE[dtype]
        self.__cuda_array_interface__ = {
            "shape": (rows, cols), "typestr": _TYPESTR[dtype], "data": (ptr, False),
            "strides": (ld * es, es), "version": 3,
        }


def _torch_view(ptr, rows, cols, ld, dtype):
    import torch
    t = torch.as_tensor(_CudaArray(ptr, rows, cols, ld, dtype), device="cuda")
    return t.view(torch.bfloat16) if dtype == "bf16" else t


def _numpy_view(ptr, rows, cols, ld, dtype):
    import numpy as np
    es = _SIZE[dtype]
    nbytes = ((rows - 1) * ld + cols) * es if rows > 0 else 0
    np_dtype = {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16}[dtype]
    if nbytes == 0:
        return np.empty((rows, cols), dtype=np_dtype)
    buf = (ctypes.c_char * nbytes).from_address(ptr)
    flat = np.frombuffer(buf, dtype=np_dtype)
    return np.lib.stride_tricks.as_strided(flat, shape=(rows, cols), strides=(ld * es, es))


def _make_launch(name, fn, device):
    views = _Views(device)
    reported = []
    stream_cache = {}

    def launch(_handle, pp):
        if _interrupt:
            return SML_ERR_KERNEL_FAILED
        try:
            p = pp.contents
            op = _native.OPS[p.op]
            dt = _native.DTYPES[p.dtype]
            x = views.view(p.x, p.rows, p.cols, p.ld, dt)
            dy = views.view(p.dy, p.rows, p.cols, p.ld, dt) if op.endswith("_bwd") else None
            out = x if p.out == p.x else views.view(p.out, p.rows, p.cols, p.ld, dt)
            if device == "gpu":
                import torch
                s = stream_cache.get(p.stream)
                if s is None:
                    s = torch.cuda.ExternalStream(p.stream) if p.stream else torch.cuda.default_stream()
                    stream_cache[p.stream] = s
                with torch.cuda.stream(s):
                    fn(op, x, dy, out)
            else:
                fn(op, x, dy, out)
            return SML_OK
        except (KeyboardInterrupt, SystemExit) as e:  # stop, not a kernel failure
            _interrupt.append(e)
            sys.stderr.write("softmax_lab: %s in Python kernel %r: the remaining launches fail at once; the "
                             "command stops as soon as it can\n" % (type(e).__name__, name))
            sys.stderr.flush()
            return SML_ERR_KERNEL_FAILED
        except Exception:  # reported to the suite as a failed launch
            if not reported:
                reported.append(1)
                sys.stderr.write("softmax_lab: Python kernel %r raised:\n%s" % (name, traceback.format_exc()))
                sys.stderr.flush()
            return SML_ERR_KERNEL_FAILED

    return _native.LAUNCH(launch)


def register(name, fn, ops, dtypes, device="gpu", claim=None, min_cols=1, max_cols=0,
             summary=None, origin=None, known_deviation=None, file=None):
    """Add fn as kernel `name` to the suite's registry, for every later check / bench / replay
    in this process. ops and dtypes: lists or comma-separated names ("all" for every one).
    claim: None, or (baseline, min_speedup, shapes), e.g. ("torch", 1.0, "all").
    origin: what `list` and the ledger show as where the kernel comes from (default: the
    Python module of fn and the versions of Python and of the frameworks it uses)."""
    if not callable(fn):
        raise TypeError("softmax_lab.register(%r): fn must be callable as fn(op, x, dy, out), not %r" % (name, fn))
    for what, v, lo in (("min_cols", min_cols, 1), ("max_cols", max_cols, 0)):
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= 2 ** 62:
            raise ValueError("softmax_lab.register(%r): %s %r is not a whole number in [%d, 2**62]" % (name, what, v, lo))
    if getattr(fn, "__module__", None) == "__main__":
        sys.stderr.write("softmax_lab.register(%r): the kernel is defined in __main__, which a rerun or replay "
                         "cannot import (their lines say --load python:__main__); to replay it, define it in a "
                         "module that registers it on import (mykernels.py) and pass --load python:mykernels\n"
                         % (name,))
    if device not in _native.DEVICES:
        raise ValueError("softmax_lab.register: device must be 'cpu' or 'gpu', not %r" % (device,))
    if ops == "all":
        ops = _native.OPS
    if dtypes == "all":
        dtypes = _native.DTYPES
    k = _native.Kernel()
    enc = lambda s: s.encode() if s is not None else None
    strings = [enc(name), enc(file or getattr(fn, "__module__", "python")), enc(summary or (fn.__doc__ or name).strip().splitlines()[0])]
    k.name, k.file, k.summary = strings
    k.device = _native.DEVICES[device]
    k.ops = _bits(ops, _native.OPS, "op")
    k.dtypes = _bits(dtypes, _native.DTYPES, "dtype")
    k.min_cols = int(min_cols)
    k.max_cols = int(max_cols)
    launch = _make_launch(name, fn, device)
    k.launch = launch
    if claim:
        baseline, speedup, shapes = claim
        k.claim = _native.Claim(enc(baseline), float(speedup), enc(shapes))
    k.known_deviation = enc(known_deviation)
    if origin is None:
        from .versions import describe
        origin = "python:%s (%s)" % (getattr(fn, "__module__", "?"), describe())
    msg = ctypes.create_string_buffer(512)
    core, _ = _native.libs()
    with _lock:
        table = (_native.Kernel * 1)(k)
        s = core.sml_register_kernels(table, 1, ABI_VERSION, origin.encode(), msg, len(msg))
        if s != SML_OK:
            raise ValueError("softmax_lab.register(%r): %s" % (name, msg.value.decode(errors="replace")
                                                                or core.sml_strerror(s).decode()))
        _keep.append((table, launch, strings, k, fn))
        _registered[name] = k
    return name


def registered():
    return list(_registered)
