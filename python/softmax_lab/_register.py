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
import contextlib
import ctypes
import importlib
import importlib.util
import inspect
import json
import os
import sys
import threading
import traceback
import warnings

from . import _native

ABI_VERSION = 3  # SML_PLUGIN_ABI_VERSION of include/softmax_lab_plugin.h

SML_OK = 0
# enum sml_status of softmax_lab.h: a Python kernel that raised is reported as
# SML_ERR_KERNEL_FAILED (the suite counts it as a failed launch; the traceback is printed once).
SML_ERR_KERNEL_FAILED = 18

# A KeyboardInterrupt or SystemExit raised inside a kernel (Ctrl-C arrives there, the only
# Python code that runs during a check): kept here, every later launch fails at once without
# calling the kernel, and run_cli raises it again when the command returns.
_interrupt = []

_keep = []          # every table handed to C must live as long as the process
_registered = {}    # name -> the table registered (one line)
_origins = {}       # name -> the origin it was registered with
_lock = threading.Lock()

# Kernels run in worker processes (new interpreters): each gets there the way it got here.
_recipes = {}       # name -> (fn, the arguments of register() but fn)
_on_import = set()  # names registered by a backend or a --load python:MODULE import (a worker does the same)
_sources = []       # the "python:MODULE" sources imported, in order
_importing = 0      # > 0 while a backend or a --load python:MODULE is imported
_bootstrapping = False  # True while a worker registers the kernels of its supervisor


@contextlib.contextmanager
def importing(source=None):
    """Kernels registered inside are registered again by a worker process on its own (it
    imports the same backends and sources)."""
    global _importing
    _importing += 1
    try:
        yield
        if source and source not in _sources:
            _sources.append(source)
    finally:
        _importing -= 1



def _bits(names, universe, what):
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not isinstance(names, (list, tuple, set)) or not all(isinstance(n, str) for n in names):
        raise TypeError("softmax_lab.register: %ss must be a list of names or a comma-separated str, not %r"
                        % (what, names))
    bits = 0
    for n in names:
        key = _native.DTYPE_ALIASES.get(n, n) if what == "dtype" else n
        if key not in universe:
            raise ValueError("softmax_lab.register: %ss: unknown %s %r (known: %s)" % (what, what, n, ", ".join(universe)))
        bits |= 1 << universe.index(key)
    if not bits:
        raise ValueError("softmax_lab.register: %ss: no %s given" % (what, what))
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


def _infer_device(fn):
    """'cpu' when fn's parameters are annotated as numpy arrays, 'gpu' for torch tensors, else
    None."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    found = set()
    for prm in params:
        a = prm.annotation
        if a is inspect.Parameter.empty:
            continue
        text = a if isinstance(a, str) else "%s.%s" % (getattr(getattr(a, "__origin__", a), "__module__", ""),
                                                        getattr(getattr(a, "__origin__", a), "__name__", ""))
        if "ndarray" in text or "NDArray" in text or text.startswith("numpy"):
            found.add("cpu")
        elif "Tensor" in text or text.startswith("torch"):
            found.add("gpu")
    return found.pop() if len(found) == 1 else None


def _check_args(name, fn, device, claim, min_cols, max_cols):
    """The arguments' types and values; returns the device (given or inferred)."""
    where = "softmax_lab.register"
    if not isinstance(name, str):
        raise TypeError("%s: name must be a str, not %s" % (where, type(name).__name__))
    if not name or any(c.isspace() or c == "," for c in name):
        raise ValueError("%s: name %r must be non-empty, without spaces or commas" % (where, name))
    where = "softmax_lab.register(%r)" % name
    if not callable(fn):
        raise TypeError("%s: fn must be callable fn(op, x, dy, out), not %s" % (where, type(fn).__name__))
    if device is None:
        device = _infer_device(fn)
        if device is None:
            raise TypeError("%s: device is required: 'cpu' (fn gets numpy arrays) or 'gpu' (torch "
                            "tensors); or annotate fn's arrays as numpy.ndarray or torch.Tensor" % where)
    elif device not in _native.DEVICES:
        raise ValueError("%s: device must be 'cpu' or 'gpu', not %r" % (where, device))
    if claim is not None and not (isinstance(claim, (tuple, list)) and len(claim) == 3):
        raise TypeError("%s: claim must be (baseline, min_speedup, shapes), e.g. ('torch', 1.0, 'all'), not %r"
                        % (where, claim))
    for arg, v in (("min_cols", min_cols), ("max_cols", max_cols)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("%s: %s must be an int, not %s" % (where, arg, type(v).__name__))
    for arg, v in (("min_cols", min_cols), ("max_cols", max_cols)):
        if v > 2 ** 62:
            raise ValueError("%s: %s %d is past 2**62" % (where, arg, v))
    if min_cols < 1 or max_cols < 0 or (max_cols and max_cols < min_cols):
        raise ValueError("%s: min_cols %d, max_cols %d: need 1 <= min_cols and max_cols 0 (no limit) or >= min_cols"
                         % (where, min_cols, max_cols))
    return device


def _deviation(where, deviation, ops, dtypes):
    """A sml_deviation from register()'s `deviation` dict (None: None): "ulps" and
    "bound_factor" map an op (or "all": every op in `ops`) to a dict of dtype (or "all") to a
    number; "exceptions" lists names of _native.DEV_EXCEPTIONS."""
    if deviation is None:
        return None
    if not isinstance(deviation, dict):
        raise TypeError("%s: deviation must be a dict such as {\"ulps\": {\"softmax\": {\"fp16\": 1.5}}, "
                        "\"exceptions\": [\"all_neg_inf_row\"]}, not %r" % (where, deviation))
    unknown = set(deviation) - {"ulps", "bound_factor", "exceptions"}
    if unknown:
        raise ValueError("%s: deviation: unknown key(s) %s (known: ulps, bound_factor, exceptions)"
                         % (where, ", ".join(sorted(map(repr, unknown)))))
    d = _native.Deviation()
    for field in ("ulps", "bound_factor"):
        table = deviation.get(field) or {}
        if not isinstance(table, dict):
            raise TypeError("%s: deviation[%r] must map ops to {dtype: number}, not %r" % (where, field, table))
        for op, per_dtype in table.items():
            op_names = ops if op == "all" else [op]
            if not isinstance(per_dtype, dict):
                raise TypeError("%s: deviation[%r][%r] must map dtypes to numbers, not %r"
                                % (where, field, op, per_dtype))
            for o in op_names:
                if o not in _native.OPS:
                    raise ValueError("%s: deviation[%r]: unknown op %r (known: all, %s)"
                                     % (where, field, o, ", ".join(_native.OPS)))
                for dt, v in per_dtype.items():
                    for t in (dtypes if dt == "all" else [_native.DTYPE_ALIASES.get(dt, dt)]):
                        if t not in _native.DTYPES:
                            raise ValueError("%s: deviation[%r][%r]: unknown dtype %r (known: all, %s)"
                                             % (where, field, op, dt, ", ".join(_native.DTYPES)))
                        if isinstance(v, bool) or not isinstance(v, (int, float)):
                            raise TypeError("%s: deviation[%r][%r][%r] must be a number, not %r"
                                            % (where, field, op, dt, v))
                        getattr(d, field)[_native.OPS.index(o)][_native.DTYPES.index(t)] = float(v)
    names = deviation.get("exceptions") or []
    if isinstance(names, str) or not isinstance(names, (list, tuple, set)):
        raise TypeError("%s: deviation['exceptions'] must be a list of names, not %r" % (where, names))
    for e in names:
        if e not in _native.DEV_EXCEPTIONS:
            raise ValueError("%s: deviation['exceptions']: unknown exception %r (known: %s)"
                             % (where, e, ", ".join(_native.DEV_EXCEPTIONS)))
        d.exceptions |= _native.DEV_EXCEPTIONS[e]
    return d


def register(name, fn, ops, dtypes, device=None, claim=None, min_cols=1, max_cols=0,
             summary=None, origin=None, known_deviation=None, file=None, framework=False,
             deviation=None):
    """Add fn as kernel `name` to the suite's registry, for every later check / bench / replay
    in this process. ops and dtypes: lists or comma-separated names ("all" for every one).
    device: "cpu" (fn gets numpy arrays) or "gpu" (torch tensors); when omitted it is inferred
    from fn's annotations (numpy.ndarray or torch.Tensor), else TypeError.
    claim: None, or (baseline, min_speedup, shapes), e.g. ("torch", 1.0, "all").
    origin: what `list` and the ledger show as where the kernel comes from (default: the
    Python module of fn and the versions of Python and of the frameworks it uses).
    framework: True for a framework baseline (a library's kernel, such as PyTorch's, that the
    suite's kernels are measured against): the bench writes "framework": true in its ledger
    record, and `targets` takes the field targets' time to beat from such records.
    deviation: for a kernel measured to miss the numerics contract (a framework's), what it
    declares in terms the checker enforces (docs/PROPERTIES.md, "Declared deviations"), e.g.
    {"ulps": {"softmax": {"fp16": 1.5, "bf16": 1.5}}, "bound_factor": {"softmax_bwd": {"bf16":
    600}}, "exceptions": ["all_neg_inf_row"]}: per op and dtype ("all" for every one the kernel
    runs) a bound in ulps of the output or a factor on the contract's bound, and named
    exceptions (all_neg_inf_row, log_softmax_shift_bits, bwd_16bit_overflow, lowest_max_row,
    log_softmax_lse_rounded, row_bits_by_address, bwd_sum_class). A miss outside it
    fails, naming it; check(strict=True) applies none. known_deviation is a label shown beside
    it: words alone excuse nothing (a warning says so).
    A name registered from Python before is replaced (with a warning): re-running a notebook
    cell works. Usage errors raise TypeError or ValueError naming the argument."""
    device = _check_args(name, fn, device, claim, min_cols, max_cols)
    if not isinstance(framework, bool):
        raise TypeError("softmax_lab.register(%r): framework must be True or False, not %r" % (name, framework))
    if getattr(fn, "__module__", None) == "__main__":
        sys.stderr.write("softmax_lab.register(%r): the kernel is defined in __main__, which a rerun or replay "
                         "cannot import (their lines say --load python:__main__); to replay it, define it in a "
                         "module that registers it on import (mykernels.py) and pass --load python:mykernels\n"
                         % (name,))
    if ops == "all":
        ops = _native.OPS
    if dtypes == "all":
        dtypes = _native.DTYPES
    k = _native.Kernel()
    enc = lambda s: s.encode() if s is not None else None
    strings = [enc(name), enc(file or getattr(fn, "__module__", "python")),
               enc(summary or (getattr(fn, "__doc__", None) or name).strip().splitlines()[0])]
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
    ops_list = [o for o in _native.OPS if k.ops >> _native.OPS.index(o) & 1]
    dts_list = [t for t in _native.DTYPES if k.dtypes >> _native.DTYPES.index(t) & 1]
    dev = _deviation("softmax_lab.register(%r)" % name, deviation, ops_list, dts_list)
    k.deviation = ctypes.pointer(dev) if dev is not None else None
    if known_deviation is not None and dev is None and not _bootstrapping:
        warnings.warn("softmax_lab.register(%r): known_deviation=%r is a label: its words declare nothing the "
                      "checker can apply, so they excuse nothing; declare the deviation's bounds with "
                      "deviation={\"ulps\": {op: {dtype: N}}, \"bound_factor\": {...}, \"exceptions\": [...]}"
                      % (name, known_deviation), RuntimeWarning, stacklevel=2)
    k.flags = _native.KERNEL_FRAMEWORK if framework else 0
    if origin is None:
        from .versions import describe
        origin = "python:%s (%s)" % (getattr(fn, "__module__", "?"), describe())
    msg = ctypes.create_string_buffer(512)
    core, _ = _native.libs()
    with _lock:
        old = _registered.get(name)
        if old is not None:
            warnings.warn("softmax_lab.register: kernel %r was registered before; the new one replaces it" % name,
                          RuntimeWarning, stacklevel=2)
            core.sml_unregister_kernels(old)
        table = (_native.Kernel * 1)(k)
        s = core.sml_register_kernels(table, 1, ABI_VERSION, origin.encode(), msg, len(msg))
        if s != SML_OK:
            if old is not None:  # the old kernel stays
                core.sml_register_kernels(old, 1, ABI_VERSION, _origins[name], None, 0)
            raise ValueError("softmax_lab.register(%r): %s" % (name, msg.value.decode(errors="replace")
                                                                or core.sml_strerror(s).decode()))
        _keep.append((table, launch, strings, k, fn, origin.encode(), dev))
        _registered[name] = table
        _origins[name] = origin.encode()
        _recipes[name] = (fn, dict(ops=list(ops) if not isinstance(ops, str) else ops,
                                   dtypes=list(dtypes) if not isinstance(dtypes, str) else dtypes,
                                   device=device, claim=list(claim) if claim else None,
                                   min_cols=int(min_cols), max_cols=int(max_cols), summary=summary,
                                   origin=origin, known_deviation=known_deviation, file=file,
                                   framework=framework, deviation=deviation))
        if _importing:
            _on_import.add(name)
        else:
            _on_import.discard(name)
    return name


def unregister(name):
    """Take kernel `name`, registered from Python, out of the registry (ValueError if there is
    none by that name)."""
    core, _ = _native.libs()
    with _lock:
        table = _registered.pop(name, None)
        if table is None:
            raise ValueError("softmax_lab.unregister: no kernel %r registered from Python (registered: %s)"
                             % (name, ", ".join(_registered) or "none"))
        _origins.pop(name, None)
        _recipes.pop(name, None)
        _on_import.discard(name)
        core.sml_unregister_kernels(table)


def registered():
    return list(_registered)


def _locate(fn):
    """Where a new interpreter finds fn: ({"module", "modfile", "qualname"}, None), or
    (None, why it cannot)."""
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not isinstance(mod, str) or not isinstance(qual, str):
        return None, "it has no module and name to be imported by"
    if mod == "__main__":
        return None, "it is defined in the script (__main__), which a worker cannot import; define it in a module"
    if "<" in qual:
        return None, "%s.%s is a lambda or is defined inside a function; define it at a module's top level" % (mod, qual)
    obj = sys.modules.get(mod)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    try:
        same = obj is fn or bool(obj == fn)
    except Exception:  # an object whose == is not a truth value
        same = False
    if not same:
        return None, "%s.%s is not this function (replaced or decorated); register what the name holds" % (mod, qual)
    where = {"module": mod, "qualname": qual}
    path = getattr(sys.modules.get(mod), "__file__", None)
    if path:
        where["modfile"] = os.path.abspath(path)
    return where, None


def worker_plan():
    """(plan, local): plan says how a worker process registers this process's Python kernels
    (the sys.path, the sources to import, each kernel's module, name and arguments); local
    maps each kernel a worker cannot have to why (its jobs run in this process)."""
    kernels, local = [], {}
    with _lock:
        items = list(_recipes.items())
        on_import = set(_on_import)
    for name, (fn, kwargs) in items:
        if name in on_import:
            continue
        where, why = _locate(fn)
        if where is None:
            local[name] = why
            continue
        kernels.append(dict(where, name=name, kwargs=kwargs))
    return dict(sys_path=list(sys.path), imports=list(_sources), kernels=kernels), local


def _import_module(name, path):
    try:
        return importlib.import_module(name)
    except ImportError:
        if not path:
            raise
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def register_planned(path):
    """In a worker process: register the kernels its supervisor's plan (worker_plan, as JSON
    at `path`) names. A kernel that cannot be registered is reported; its jobs then fail as
    a kernel the worker does not have, never pass."""
    with open(path) as f:
        plan = json.load(f)
    if not isinstance(plan, dict):
        raise ValueError("not a JSON object")
    sys.path[:0] = [p for p in plan.get("sys_path", []) if isinstance(p, str) and p not in sys.path]
    global _bootstrapping
    _bootstrapping = True
    try:
        for source in plan.get("imports", []):
            try:
                with importing(source):
                    importlib.import_module(source.split(":", 1)[1])
            except Exception as e:
                sys.stderr.write("softmax_lab worker: cannot import %s: %s: %s\n" % (source, type(e).__name__, e))
        for r in plan.get("kernels", []):
            if r.get("name") in _registered:
                continue
            try:
                fn = _import_module(r["module"], r.get("modfile"))
                for part in r["qualname"].split("."):
                    fn = getattr(fn, part)
                if r["name"] not in _registered:
                    register(r["name"], fn, **r["kwargs"])
            except Exception as e:
                sys.stderr.write("softmax_lab worker: cannot register kernel %r from %s.%s: %s: %s\n"
                                 % (r.get("name"), r.get("module"), r.get("qualname"), type(e).__name__, e))
    finally:
        _bootstrapping = False
