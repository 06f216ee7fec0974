"""audit: every framework backend on this machine held to the numerics contract itself.

    python3 -m softmax_lab audit [--kernel K[,K]] [--op OP[,OP]] [--dtype D[,D]] [--cases N]
                                 [--seed S] [--out DIR] [--md FILE] [--json FILE] [--load PATH]
                                 [--reproducers DIR]
    softmax_lab.audit(kernels=None, ops=None, dtypes=None, cases=None, seed=None, out=None,
                      md=None, json=None)                     -> Result

Four steps, each announced by a line on stderr:
  1. the kernels: every framework baseline registered here (framework=True: torch, triton,
     triton_online, liger, and the built-in cudnn) that can run here, or those --kernel names;
  2. the property suite on them under --strict (a declared deviation excuses nothing: the
     audit asks what each framework does against the contract itself), each failure shrunk and
     saved as a reproducer under DIR/reproducers, each run's accuracy in DIR/check.json;
  3. per reproducer (a finding): the kernel run again in this process on the reproducer's own
     inputs, its output saved beside it as <stem>.out.npy, and the same op computed with fp32
     intermediates (rounded once to the dtype) as <stem>.fp32ref.npy; each judged from the
     files alone by the C checker (`check --input X --output OUT`), which needs no GPU;
  4. the findings table: DIR/findings.md and DIR/findings.json (or --md, --json).
With --reproducers DIR, steps 3 and 4 only, on the reproducers saved in DIR (an earlier
audit's, or a curated set): their outputs are written beside them.

Exit 0: no finding; 1: findings written; 2: bad usage (nothing written) or a file that could
not be written (the old file, or none, is left); 3: nothing could run here (nothing written).
The Python call raises ValueError or TypeError for what the command exits 2 on, and OSError
for a write that failed.
"""
import ctypes
import datetime
import io
import json as jsonlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from . import _native, _register, api
from .versions import describe

SCHEMA = "softmax-lab-audit/1"
DEFAULT_OUT = "softmax-lab-audit"
PROG = "python3 -m softmax_lab audit"

USAGE = """usage: python3 -m softmax_lab audit [--kernel K[,K]] [--op OP[,OP]] [--dtype D[,D]] [--cases N]
           [--seed S] [--out DIR] [--md FILE] [--json FILE] [--load PATH] [--reproducers DIR]

Every framework backend that can run here (torch, triton, triton_online, liger, cudnn), or
the kernels --kernel names, through the property suite under --strict; each failure shrunk,
saved as a reproducer, run again on its own inputs and judged beside an fp32-intermediate
computation of the same op; a findings table in Markdown and JSON. docs/PYTHON.md, "Audit".

Options:
  --kernel K[,K]   the kernels (default: every framework baseline registered here that can run)
  --op OP[,OP]     the ops (default all): softmax, log_softmax, softmax_bwd, log_softmax_bwd
  --dtype D[,D]    the dtypes (default all): fp32, fp16, bf16
  --cases N        cases per kernel, op and dtype (default: check's profile)
  --seed S         the run's seed: a number, decimal or 0x hex (default: check's fixed seed)
  --out DIR        where everything goes (default ./softmax-lab-audit): DIR/check.json,
                   DIR/reproducers/, DIR/findings.md, DIR/findings.json
  --md FILE        the Markdown table (default DIR/findings.md)
  --json FILE      the JSON table (default DIR/findings.json)
  --load PATH      a plugin library, or python:MODULE that registers kernels (repeatable)
  --reproducers DIR  no property suite: examine the reproducers saved in DIR (each kernel
                   they name run again on its inputs, beside fp32 intermediates; the outputs
                   written beside them) and write the table

exit: 0 no finding, 1 findings written, 2 bad usage (nothing written) or a file that could not
be written, 3 nothing could run here (nothing written)
"""

# The command line's flag for each argument of audit(), for messages that name what was typed.
FLAGS = {"kernels": "--kernel", "ops": "--op", "dtypes": "--dtype", "cases": "--cases", "seed": "--seed",
         "out": "--out", "md": "--md", "json": "--json", "load": "--load", "reproducers": "--reproducers"}


class AuditUsage(ValueError):
    """A bad argument; its message names it (the flag on the command line)."""


def _progress(step, text):
    sys.stderr.write("audit: [%d/4] %s\n" % (step, text))
    sys.stderr.flush()


# ---------------------------------------------------------------- arguments


class _Args:
    """The audit's arguments, checked: names are the flags under the CLI, else audit()'s."""

    def __init__(self, cli):
        self.cli = cli
        self.kernels = self.ops = self.dtypes = self.cases = self.seed = None
        self.out = DEFAULT_OUT
        self.md = self.json = None
        self.load = []
        self.argv = []

    def name(self, arg):
        return FLAGS[arg] if self.cli else arg

    def refuse(self, arg, why):
        prefix = "audit: %s" if self.cli else "softmax_lab.audit: %s"
        raise AuditUsage(prefix % ("%s: %s" % (self.name(arg), why)))


def _names(args, arg, value, universe):
    """A comma-separated str or a list of names, each in universe (or "all"): "a,b"."""
    if isinstance(value, str):
        items = [t.strip() for t in value.split(",") if t.strip()]
    elif isinstance(value, (list, tuple)) and all(isinstance(t, str) for t in value):
        items = list(value)
    else:
        raise TypeError("softmax_lab.audit: %s must be a str or a list of str, not %r" % (arg, value))
    if not items:
        args.refuse(arg, "names nothing")
    for t in items:
        key = _native.DTYPE_ALIASES.get(t, t) if universe is _native.DTYPES else t
        if universe is not None and key != "all" and key not in universe:
            args.refuse(arg, "unknown name %r (known: %s)" % (t, ", ".join(["all"] + list(universe))))
    if universe is _native.DTYPES:
        items = [_native.DTYPE_ALIASES.get(t, t) for t in items]
    return ",".join(items)


def _number(args, arg, value, least):
    """An int >= least; on the command line a decimal or 0x hex word."""
    if isinstance(value, str) and args.cli:
        try:
            value = int(value, 0)
        except ValueError:
            args.refuse(arg, "must be a whole number (decimal or 0x hex), not %r" % value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("softmax_lab.audit: %s must be an int, not %r" % (arg, value))
    if value < least:
        args.refuse(arg, "must be at least %d, not %d" % (least, value))
    return value


def _file_arg(args, arg, value, out_dir):
    """A path for --md or --json: not a folder, in a folder that exists or is DIR."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError("softmax_lab.audit: %s must be a path, not %r" % (arg, value))
    path = os.fspath(value)
    if not path or os.path.isdir(path):
        args.refuse(arg, "%r is a folder, not a file name" % path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent) and os.path.abspath(parent) != os.path.abspath(out_dir):
        args.refuse(arg, "the folder %s does not exist" % parent)
    return path


def _settle(args, kernels, ops, dtypes, cases, seed, out, md, json, load, reproducers=None):
    """Every argument checked and normalised into args, before anything runs or is written."""
    args.reproducers = None
    if reproducers is not None:
        d = os.fspath(reproducers) if isinstance(reproducers, (str, os.PathLike)) else None
        if not d or not os.path.isdir(d):
            args.refuse("reproducers", "must be a folder of saved reproducers, not %r" % (reproducers,))
        if not [f for f in os.listdir(d) if f.endswith(".json")]:
            args.refuse("reproducers", "%s holds no reproducer (.json)" % d)
        args.reproducers = d
    if kernels is not None:
        args.kernels = _names(args, "kernels", kernels, None).split(",")
    if ops is not None:
        args.ops = _names(args, "ops", ops, _native.OPS)
    if dtypes is not None:
        args.dtypes = _names(args, "dtypes", dtypes, _native.DTYPES)
    if cases is not None:
        args.cases = _number(args, "cases", cases, 1)
    if seed is not None:
        args.seed = _number(args, "seed", seed, 0)
    if out is not None:
        if not isinstance(out, (str, os.PathLike)) or not os.fspath(out):
            args.refuse("out", "must be a folder name, not %r" % (out,))
        args.out = os.fspath(out)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        args.refuse("out", "%s exists and is not a folder" % args.out)
    args.md = _file_arg(args, "md", md, args.out) if md is not None else os.path.join(args.out, "findings.md")
    args.json = (_file_arg(args, "json", json, args.out) if json is not None
                 else os.path.join(args.out, "findings.json"))
    if os.path.abspath(args.md) == os.path.abspath(args.json):
        args.refuse("json", "names the same file as %s (%s)" % (args.name("md"), args.json))
    for path, arg in ((args.md, "md"), (args.json, "json")):
        if os.path.abspath(path) == os.path.abspath(os.path.join(args.out, "check.json")):
            args.refuse(arg, "%s is where the property suite's own --json goes; name another file" % path)
    args.load = [os.fspath(p) for p in (load or [])]


def parse_cli(argv):
    """The command line into audit()'s keyword arguments; None for --help. AuditUsage names a
    flag that is unknown, repeated or without its value."""
    kw, i = {}, 0
    flag_to_arg = {v: k for k, v in FLAGS.items()}
    while i < len(argv):
        word = argv[i]
        if word in ("-h", "--help"):
            return None
        flag, eq, value = word.partition("=")
        if not word.startswith("-"):
            raise AuditUsage("audit: %r: the audit takes options only (--help lists them)" % word)
        if flag not in flag_to_arg:
            raise AuditUsage("audit: unknown option %r (known: %s, --help)" % (word, ", ".join(FLAGS.values())))
        if not eq:
            if i + 1 >= len(argv):
                raise AuditUsage("audit: %s needs a value" % flag)
            value = argv[i + 1]
            i += 1
        i += 1
        arg = flag_to_arg[flag]
        if arg == "load":
            kw.setdefault("load", []).append(value)
        elif arg in kw:
            raise AuditUsage("audit: %s is given twice" % flag)
        else:
            kw[arg] = value
    return kw


# ---------------------------------------------------------------- step 1: the kernels


def _registry():
    """Every kernel of the registry: {name: {device, framework, ops, dtypes, origin, why}}:
    origin is where it came from ("python:MODULE (versions)", a plugin library's path, None for
    a built-in kernel), why says why it cannot run here (None: it can)."""
    core, _ = _native.libs()
    gpu = bool(core.sml_gpu_available())
    table = {}
    for i in range(core.sml_kernel_count()):
        ptr = core.sml_kernel_at(i)
        k = ptr.contents
        name = k.name.decode()
        origin = core.sml_kernel_origin(ptr)
        device = "gpu" if k.device == _native.DEVICES["gpu"] else "cpu"
        why = None
        if ctypes.cast(k.launch, ctypes.c_void_p).value is None:
            why = "not built in this build (built without CUDA, or without its library)"
        elif device == "gpu" and not gpu:
            why = "a GPU kernel, and no GPU is visible here"
        table[name] = {"device": device, "framework": bool(k.flags & _native.KERNEL_FRAMEWORK),
                       "ops": [o for j, o in enumerate(_native.OPS) if k.ops >> j & 1],
                       "dtypes": [t for j, t in enumerate(_native.DTYPES) if k.dtypes >> j & 1],
                       "origin": origin.decode() if origin else None, "why": why}
    return table


def _asked(spec, universe):
    return list(universe) if spec is None or "all" in spec.split(",") else spec.split(",")


def _choose(args, table, skipped):
    """(the kernels to audit, {name: why not}) : those --kernel names, else every framework
    baseline; a kernel that cannot run here or takes none of the ops and dtypes asked is left
    out with its reason, as is each framework backend that did not register."""
    names = args.kernels or [n for n, k in table.items() if k["framework"]]
    if args.kernels:
        for n in names:
            if n not in table:
                args.refuse("kernels", "no kernel %r in the registry (known: %s)" % (n, ", ".join(table)))
    not_run = {} if args.kernels else {"python backend %s" % n: why for n, why in skipped.items()}
    ops, dtypes = _asked(args.ops, _native.OPS), _asked(args.dtypes, _native.DTYPES)
    run = []
    for n in names:
        k = table[n]
        if k["why"]:
            not_run[n] = k["why"]
        elif not set(k["ops"]) & set(ops) or not set(k["dtypes"]) & set(dtypes):
            not_run[n] = "takes none of the ops and dtypes asked (it takes %s; %s)" % (
                ",".join(k["ops"]), ",".join(k["dtypes"]))
        else:
            run.append(n)
    return run, not_run


# ---------------------------------------------------------------- files


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _stage(path, data):
    """data (bytes) into a new temporary file beside path; returns its name."""
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_atomic(files):
    """Write {path: bytes} so that each file is either its old self or whole: every file is
    staged in a temporary beside it first (a full disk shows there), then each put in place by
    a rename. A failure removes the temporaries and raises OSError."""
    staged, path = [], None
    try:
        for path, data in files.items():
            staged.append((_stage(path, data), path))
        for tmp, path in staged:
            os.replace(tmp, path)
    except OSError as e:  # named by the file meant, not by its temporary
        raise OSError(e.errno, e.strerror, path)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _npy_bytes(array):
    import numpy as np
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def save_npy(path, array, dtype):
    """array as path; bf16 (uint16 bits) with its ".dtype" sidecar, the way the C side writes
    and reads it (src/io/npy.h); for another dtype a sidecar left by an older file goes."""
    sidecar = path + ".dtype"
    files = {sidecar: b"bf16\n"} if dtype == "bf16" else {}
    files[path] = _npy_bytes(array)
    write_atomic(files)
    if dtype != "bf16" and os.path.exists(sidecar):
        os.unlink(sidecar)


# ---------------------------------------------------------------- running the C commands


class _QuietStdout:
    """Standard output (the C side's too) sent to /dev/null while inside: the commands step 3
    runs print their full reports, and the audit's own line per finding says what they found.
    Their messages on stderr still show."""

    def __enter__(self):
        sys.stdout.flush()
        ctypes.CDLL(None).fflush(None)
        self.saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        ctypes.CDLL(None).fflush(None)
        os.dup2(self.saved, 1)
        os.close(self.saved)
        return False


def _cli_json(argv, isolate):
    """(exit status, the --json it wrote or None) of one command, its stdout kept quiet."""
    fd, path = tempfile.mkstemp(prefix="softmax_lab-audit-", suffix=".json")
    os.close(fd)
    os.unlink(path)
    try:
        with _QuietStdout():
            rc = api.run_cli(list(argv) + ["--json", path], isolate=isolate)
        data = None
        if os.path.exists(path):
            with open(path) as f:
                data = jsonlib.load(f)
        return rc, data
    finally:
        if os.path.exists(path):
            os.unlink(path)


def _num(v):
    """A JSON number of the C side ("inf", "nan" and null included) as a float or None."""
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def judge(x, out, op, dtype, dy=None):
    """The C checker's verdict on the output file `out` of op on the input files (from the files
    alone, no kernel): {verdict, bad, checked, ratio (worst error / bound), ulps} or {verdict:
    ERROR, why} where the files could not be judged."""
    argv = ["check", "--input", x, "--output", out, "--op", op, "--dtype", dtype] + (["--dy", dy] if dy else [])
    rc, data = _cli_json(argv, isolate=False)  # no kernel runs: no worker is needed
    if not data or rc not in (0, 1):
        return {"verdict": "ERROR", "why": "check --output exited %d (its message is above)" % rc}
    worst = data.get("worst") or {}
    return {"verdict": data.get("verdict"), "bad": data.get("bad"), "checked": data.get("checked"),
            "ratio": _num(worst.get("error_over_bound")), "ulps": _num(worst.get("error_ulps"))}


# ---------------------------------------------------------------- step 3: a finding


def _resolve(repro_path, name):
    return name if os.path.isabs(name) else os.path.join(os.path.dirname(repro_path), name)


def _load_array(path):
    import numpy as np
    return np.load(path, allow_pickle=False)


def _poisoned(x):
    """An output buffer of x's dtype and shape, every element NaN: an element the kernel does
    not write shows as a NaN mismatch."""
    import numpy as np
    if x.dtype == np.uint16:  # bf16 bits
        return np.full(x.shape, 0x7FC0, dtype=np.uint16)
    return np.full(x.shape, np.nan, dtype=x.dtype)


def _run_cpu(fn, op, x, dy):
    out = _poisoned(x)
    fn(op, x.copy(), None if dy is None else dy.copy(), out)
    return out


def _run_gpu(fn, op, x, dy, dtype):
    """fn on torch tensors on the GPU (bf16 as torch.bfloat16), back as a numpy array."""
    import numpy as np
    import torch

    def to_device(a):
        a = np.ascontiguousarray(a)
        t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if dtype == "bf16" else torch.from_numpy(a)
        return t.to("cuda")

    tx = to_device(x)
    tdy = None if dy is None else to_device(dy)
    out = to_device(_poisoned(x))
    fn(op, tx, tdy, out)
    torch.cuda.synchronize()
    host = out.to("cpu")
    return host.view(torch.int16).numpy().view(np.uint16) if dtype == "bf16" else host.numpy()


def _run_native(kernel, rep, files, loads):
    """A C kernel (cudnn, a plugin's) on the reproducer's inputs through `check --input --save`:
    forward ops on its logits x; backward ops on its logits (y is the reference forward output
    of them rounded to the dtype, as the suite made the reproducer's x) and dy."""
    op, dtype = rep["op"], rep["dtype"]
    bwd = op.endswith("_bwd")
    source = files.get("logits") if bwd else files["x"]
    if not source:
        return None, "the reproducer keeps no logits, which check --input needs to run a C kernel"
    tmp = tempfile.mkdtemp(prefix="softmax_lab-audit-")
    try:
        argv = ["check", "--input", source, "--kernel", kernel, "--op", op, "--dtype", dtype, "--save", tmp]
        argv += (["--dy", files["dy"]] if bwd else []) + sum((["--load", p] for p in loads), [])
        rc, _ = _cli_json(argv, isolate=True)
        saved = os.path.join(tmp, "%s.%s.npy" % (kernel, op))
        if not os.path.exists(saved):
            return None, "check --input --kernel %s exited %d without an output" % (kernel, rc)
        return _load_array(saved), None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def rerun(kernel, device, rep, files, loads=()):
    """(the kernel's output on the reproducer's inputs, None) or (None, why not): a Python
    kernel called here through its registered function, a C kernel through check --input."""
    recipe = _register._recipes.get(kernel)
    if recipe is None:
        return _run_native(kernel, rep, files, loads)
    fn = recipe[0]
    x = _load_array(files["x"])
    dy = _load_array(files["dy"]) if rep["op"].endswith("_bwd") else None
    try:
        if device == "gpu":
            return _run_gpu(fn, rep["op"], x, dy, rep["dtype"]), None
        return _run_cpu(fn, rep["op"], x, dy), None
    except Exception as e:  # the kernel raised: a finding without a re-run output
        return None, "the kernel raised %s: %s" % (type(e).__name__, e)


def fp32_reference(op, x, dy):
    """The op with fp32 intermediates: the 16-bit inputs loaded to fp32, every step in fp32
    (forward: row max, exp, sum, divide or log; softmax_bwd: dx = y * (dy - sum(y * dy));
    log_softmax_bwd: dx = dy - exp(y) * sum(dy)), rounded once to the dtype. This is the numpy
    backend's computation (backends/numpy_ops.py), which the suite checks itself."""
    from .backends import numpy_ops
    out = _poisoned(x)
    numpy_ops.run(op, x, dy, out)
    return out


def _kernel_version(origin):
    """The versions a kernel ran on: a Python kernel's as registered (versions.describe()), a
    plugin's library and softmax-lab's, a built-in kernel's softmax-lab's."""
    core, _ = _native.libs()
    version = "softmax-lab %s" % core.sml_version().decode()
    if origin is None:
        return version + " (built-in)"
    if origin.startswith(api.PYTHON_SOURCE) and "(" in origin and origin.endswith(")"):
        return origin[origin.index("(") + 1:-1]
    return "plugin %s, %s" % (origin, version)


def gpu_name():
    """This machine's GPU as torch names it (where torch has been imported and sees one), else
    as nvidia-smi does, else "cpu"."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.get_device_name()
    except Exception:
        pass
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True, timeout=20)
        name = p.stdout.strip().splitlines()[0].strip() if p.returncode == 0 and p.stdout.strip() else ""
        return name or "cpu"
    except (OSError, subprocess.SubprocessError):
        return "cpu"


def _checker_exe():
    """The words that start the CPU judgment line: the softmax-lab executable beside the
    libraries this process loaded (a build tree's, or the pip package's bin/), relative to here
    when under it; else this package's command."""
    top = os.path.dirname(_native.library_dir())
    for exe in (os.path.join(top, "softmax-lab"), os.path.join(top, "bin", "softmax-lab")):
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            rel = os.path.relpath(exe)
            return [rel if not rel.startswith("..") else os.path.abspath(exe)]
    return ["python3", "-m", "softmax_lab"]


def _line(words):
    return " ".join(shlex.quote(w) for w in words)


def _load_of(origin):
    """What a replay must --load to have a kernel of this origin: "python:MODULE" of a Python
    kernel that is not a shipped backend (those register with the command), a plugin's library;
    None for a built-in kernel or a backend."""
    if origin is None:
        return None
    if not origin.startswith(api.PYTHON_SOURCE):
        return origin
    source = origin.split(" ", 1)[0]
    return None if source.startswith("python:softmax_lab.backends") else source


def replay_line(finding, repro_path, origin):
    """The GPU replay command: the reproducer on its kernel (with --trust-reproducer, replay
    loads the library or imports the Python module the reproducer records). A reproducer of
    the shared corpus was recorded on another kernel: --kernel names the audited one, --load
    what has it. None for a kernel defined in __main__, which nothing can import again."""
    load = _load_of(origin)
    if load == "python:__main__":
        return None
    words = ["python3", "-m", "softmax_lab", "replay", repro_path, "--trust-reproducer"]
    if finding["from_corpus"]:
        words += ["--kernel", finding["kernel"]] + (["--load", load] if load else [])
    return _line(words)


def rerun_strict_line(finding, seed, origin):
    """The case as the suite drew it, run again under --strict on a GPU (replay has no
    --strict: it applies a kernel's declared deviation); None for a saved regression's case,
    which no seed draws."""
    load = _load_of(origin)
    if load == "python:__main__" or not isinstance(finding.get("case"), int) or finding["case"] < 0 or not seed:
        return None
    words = ["python3", "-m", "softmax_lab", "check"] + (["--load", load] if load else [])
    return _line(words + ["--kernel", finding["kernel"], "--op", finding["op"], "--dtype", finding["dtype"],
                          "--seed", seed, "--case", str(finding["case"]), "--level", str(finding["level"]),
                          "--props", finding["property"], "--strict"])


# ---------------------------------------------------------------- steps 2 and 3: the findings


def _adopt(path, kernel, repro_dir):
    """A failing reproducer of the shared corpus (recorded on another kernel) copied into
    repro_dir as "KERNEL-regression-STEM": its outputs go beside the copy, never into the
    corpus. Returns the copy's path."""
    with open(path) as f:
        rep = jsonlib.load(f)
    stem = "%s-regression-%s" % (kernel, os.path.basename(path)[:-len(".json")])
    files = {}
    for field in ("x", "dy", "logits"):
        name = rep.get(field)
        if not isinstance(name, str):
            continue
        src = _resolve(path, name)
        new = "%s.%s.npy" % (stem, field)
        with open(src, "rb") as f:
            files[os.path.join(repro_dir, new)] = f.read()
        if os.path.exists(src + ".dtype"):
            with open(src + ".dtype", "rb") as f:
                files[os.path.join(repro_dir, new + ".dtype")] = f.read()
        rep[field] = new
    rep["replayed_from"] = path
    os.makedirs(repro_dir, exist_ok=True)
    copy = os.path.join(repro_dir, stem + ".json")
    files[copy] = (jsonlib.dumps(rep, indent=2) + "\n").encode()
    write_atomic(files)
    return copy


def _inside(path, folder):
    return os.path.abspath(path).startswith(os.path.abspath(folder) + os.sep)


def collect(check_doc, repro_dir):
    """(findings, failures without a reproducer) of a check --json document: one finding per
    failure with a reproducer, a corpus reproducer copied into repro_dir first."""
    findings, unsaved = [], []
    for run in check_doc.get("runs") or []:
        for f in run.get("failures") or []:
            base = {"kernel": run.get("kernel"), "op": run.get("op"), "dtype": run.get("dtype"),
                    "property": f.get("property"), "message": f.get("message"), "case": f.get("case"),
                    "level": f.get("level")}
            path = f.get("reproducer")
            if not path or not os.path.isfile(path):
                unsaved.append(base)
                continue
            corpus = not _inside(path, repro_dir)
            findings.append(dict(base, from_corpus=corpus,
                                 reproducer=_adopt(path, base["kernel"], repro_dir) if corpus else path))
    return findings, unsaved


def _reading(kernel, ref):
    """What the two judgments say together, in a few words."""
    kv, rv = kernel.get("verdict"), ref.get("verdict")
    if kv == "FAIL" and rv == "PASS":
        return "worse than fp32 intermediates (an intermediate rounded to the dtype, or a wrong step)"
    if kv == "FAIL" and rv == "FAIL":
        return "fp32 intermediates miss the bound too: the contract is strict for this input"
    if kv == "PASS":
        return "the output on these inputs holds; the property fails on the case's own layout: replay it"
    return "not judged: %s" % (kernel.get("why") or "no output")


def examine(finding, table, exe, seed, loads=()):
    """Step 3 for one finding: the kernel's output and the fp32-intermediate one saved beside
    the reproducer, both judged; the finding's row returned."""
    path = finding["reproducer"]
    with open(path) as f:
        rep = jsonlib.load(f)
    op, dtype = rep["op"], rep["dtype"]
    files = {k: _resolve(path, rep[k]) for k in ("x", "dy", "logits") if isinstance(rep.get(k), str)}
    stem = path[:-len(".json")]
    out_path, ref_path = stem + ".out.npy", stem + ".fp32ref.npy"
    dy = files.get("dy") if op.endswith("_bwd") else None
    out, why = rerun(finding["kernel"], table[finding["kernel"]]["device"], rep, files, loads)
    kernel = {"verdict": "ERROR", "why": why}
    if out is not None:
        save_npy(out_path, out, dtype)
        kernel = judge(files["x"], out_path, op, dtype, dy)
    x = _load_array(files["x"])
    save_npy(ref_path, fp32_reference(op, x, _load_array(dy) if dy else None), dtype)
    ref = judge(files["x"], ref_path, op, dtype, dy)
    judge_words = exe + ["check", "--input", files["x"], "--output", out_path, "--op", op, "--dtype", dtype]
    return dict(finding, rows=rep.get("rows"), cols=rep.get("cols"), case_seed=rep.get("case_seed"),
                output=out_path if out is not None else None, fp32ref=ref_path, kernel_judged=kernel,
                fp32_judged=ref, reading=_reading(kernel, ref),
                replay_gpu=replay_line(finding, path, table[finding["kernel"]]["origin"]),
                rerun_strict_gpu=rerun_strict_line(finding, seed, table[finding["kernel"]]["origin"]),
                judge_cpu=_line(judge_words + (["--dy", dy] if dy else [])) if out is not None else None)


# ---------------------------------------------------------------- step 4: the table


def _runs(check_doc):
    return [{"kernel": r.get("kernel"), "op": r.get("op"), "dtype": r.get("dtype"), "verdict": r.get("verdict"),
             "outcome": r.get("outcome"), "cases": r.get("cases"), "failed_cases": r.get("failed_cases"),
             "worst_ratio": _num(r.get("worst_ratio")), "worst_ulps": _num(r.get("worst_ulps")),
             "note": r.get("note")} for r in check_doc.get("runs") or []]


def _fmt(v):
    return "-" if v is None else "%.3g" % v


def _cell(text):
    return "-" if text is None else str(text).replace("|", "\\|").replace("\n", " ")


def _err(j):
    if j.get("verdict") == "ERROR":
        return "not judged"
    return "%s: %s x bound, %s ulp" % (j.get("verdict"), _fmt(j.get("ratio")), _fmt(j.get("ulps")))


def markdown(doc):
    """The findings document as Markdown: the findings table, the runs, what did not run."""
    lines = ["# softmax-lab audit", "",
             "Written %s. GPU: %s. softmax-lab %s; %s." % (doc["written"], doc["gpu"], doc["softmax_lab_version"],
                                                            doc["python"]), "",
             "Command: `%s`. The property suite ran under --strict: no declared deviation applies." % doc["command"],
             "",
             "## Findings (%d)" % len(doc["findings"]), ""]
    if doc["findings"]:
        lines += ["| kernel | version | GPU | op | dtype | property | shape | kernel's worst error | "
                  "fp32 intermediates' worst error | reading | replay on a GPU | judge on a CPU |",
                  "|" + " --- |" * 12]
        for f in doc["findings"]:
            cells = [f["kernel"], f["version"], f["gpu"], f["op"], f["dtype"], f["property"],
                     "%sx%s" % (f["rows"], f["cols"]), _err(f["kernel_judged"]), _err(f["fp32_judged"]), f["reading"],
                     "`%s`" % f["replay_gpu"] if f["replay_gpu"] else "none: the kernel is defined in __main__",
                     "`%s`" % f["judge_cpu"] if f["judge_cpu"] else "none: no output"]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines += ["", "The replay applies a kernel's declared deviation (replay has no --strict): a finding "
                  "within a declaration replays as \"passes now\", with the FAIL it excuses on the next line. "
                  "findings.json's `rerun_strict_gpu` runs a drawn case again under --strict."]
    else:
        lines.append("No finding: every property held on every case of every kernel that ran.")
    lines += ["", "## Runs (check --strict, %s)" % doc["check_json"], "",
              "| kernel | op | dtype | verdict | outcome | cases | failed cases | worst x bound | worst ulps |",
              "|" + " --- |" * 9]
    for r in doc["runs"]:
        cells = [r["kernel"], r["op"], r["dtype"], r["verdict"], r["outcome"], r["cases"], r["failed_cases"],
                 _fmt(r["worst_ratio"]), _fmt(r["worst_ulps"])]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if doc["unsaved_failures"]:
        lines += ["", "## Failures without a reproducer", ""]
        lines += ["- %s %s %s %s: %s" % (u["kernel"], u["op"], u["dtype"], u["property"], u["message"])
                  for u in doc["unsaved_failures"]]
    if doc["not_run"]:
        lines += ["", "## Not run here", ""] + ["- %s: %s" % kv for kv in sorted(doc["not_run"].items())]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the audit


def _nothing_runs(not_run):
    lines = ["audit: nothing to audit here (exit 3, nothing written):"]
    lines += ["  %s: %s" % kv for kv in sorted(not_run.items())] or ["  no framework backend is registered"]
    sys.stderr.write("\n".join(lines) + "\n")


def _check_argv(args, run, repro_dir, check_json):
    argv = ["check", "--kernel", ",".join(run), "--strict", "--save", repro_dir, "--json", check_json]
    for flag, v in (("--op", args.ops), ("--dtype", args.dtypes), ("--cases", args.cases), ("--seed", args.seed)):
        if v is not None:
            argv += [flag, str(v)]
    return argv + sum((["--load", p] for p in _plugins(args)), [])


def _import_loads(args):
    """Import the python:MODULE sources of --load (they register kernels), and load the plugin
    libraries into this process's registry the way the C commands do (`list --load PATH`, with
    their checks: a library others may write is refused), so that --kernel can name theirs."""
    for p in args.load:
        if p.startswith(api.PYTHON_SOURCE):
            try:
                api._import_source(p)
            except ImportError as e:
                args.refuse("load", "cannot import %s: %s" % (p, e))
    plugins = sum((["--load", p] for p in _plugins(args)), [])
    if plugins:
        with _QuietStdout():
            rc = api.run_cli(["list"] + plugins, isolate=False)
        if rc != 0:
            args.refuse("load", "a library could not be loaded (exit %d; its message is above)" % rc)


def _run_suite(args, run, made_out):
    """Step 2: the property suite under --strict; (exit status, its --json document)."""
    repro_dir = os.path.join(args.out, "reproducers")
    check_json = os.path.join(args.out, "check.json")
    _progress(2, "the property suite under --strict on %s (reproducers: %s)" % (", ".join(run), repro_dir))
    argv = _check_argv(args, run, repro_dir, check_json)
    rc = api.run_cli(argv, prog="python3 -m softmax_lab")
    if rc == 2 or not os.path.exists(check_json):
        if made_out:
            shutil.rmtree(args.out, ignore_errors=True)
        raise AuditUsage("audit: the property suite refused its arguments or wrote no report (exit %d; its "
                         "message is above): %s" % (rc, _line(["python3", "-m", "softmax_lab"] + argv)))
    with open(check_json) as f:
        return rc, jsonlib.load(f)


def _with_sources(argv):
    """argv with a --load for each python:MODULE imported by `python3 -m softmax_lab`'s own
    --load (taken out of argv before the audit saw it), so the table's command line is whole."""
    extra = [s for s in _register._sources if s not in argv and not s.startswith("python:softmax_lab.")]
    return list(argv) + sum((["--load", s] for s in extra), [])


def _exit_status(findings, check_rc):
    """1 when something failed (a finding, or a failure without a reproducer), else check's own
    status (0, or 3 a run could not be judged, 4 incomplete, 5 flaky)."""
    return 1 if findings or check_rc == 1 else check_rc


def _document(args, run, not_run, check_rc, check_doc, rows, unsaved, gpu):
    core, _ = _native.libs()
    return {"schema": SCHEMA, "softmax_lab_version": core.sml_version().decode(),
            "python": describe(("numpy", "torch", "triton", "liger_kernel")),
            "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": gpu, "command": " ".join([PROG, _line(_with_sources(args.argv))]), "out": args.out,
            "kernels": run, "not_run": not_run,
            "seed": check_doc.get("seed"), "check_json": os.path.join(args.out, "check.json"),
            "check_exit": check_rc, "runs": _runs(check_doc), "findings": rows, "unsaved_failures": unsaved,
            "exit": _exit_status(rows, check_rc)}


def _plugins(args):
    """The --load paths that are plugin libraries (a python:MODULE is imported here instead)."""
    return [p for p in args.load if not p.startswith(api.PYTHON_SOURCE)]


def _examine_all(findings, table, gpu, seed, plugins):
    """Step 3 on every finding, a progress line each; their rows."""
    exe, rows = _checker_exe(), []
    for i, finding in enumerate(findings, 1):
        row = examine(finding, table, exe, seed, plugins)
        row.update(version=_kernel_version(table[row["kernel"]]["origin"]),
                   gpu=gpu if table[row["kernel"]]["device"] == "gpu" else "cpu")
        rows.append(row)
        _progress(3, "finding %d of %d: %s %s %s %s %sx%s: kernel %s; fp32 intermediates %s" % (
            i, len(findings), row["kernel"], row["op"], row["dtype"], row["property"], row["rows"], row["cols"],
            _err(row["kernel_judged"]), _err(row["fp32_judged"])))
    if not findings:
        _progress(3, "no reproducer to examine")
    return rows


def _write_tables(args, doc):
    """Step 4: the findings document as JSON and Markdown; the Result."""
    doc["md"], doc["json"] = args.md, args.json
    write_atomic({args.json: (jsonlib.dumps(doc, indent=1) + "\n").encode()})
    write_atomic({args.md: markdown(doc).encode()})
    n = len(doc["findings"])
    _progress(4, "%d finding%s: %s, %s (exit %d)" % (n, "" if n == 1 else "s", args.md, args.json, doc["exit"]))
    return api.Result(doc["exit"], args.argv, doc)


REPRO_FORMAT = "softmax-lab reproducer 1"


def saved_findings(folder, table):
    """(findings, {kernel: why not}) of the reproducers saved in folder: one finding per
    reproducer whose kernel can run here."""
    findings, not_run = [], {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            with open(path) as f:
                rep = jsonlib.load(f)
        except (OSError, ValueError) as e:
            raise AuditUsage("audit: --reproducers: %s is not readable JSON (%s)" % (path, e))
        if not isinstance(rep, dict) or rep.get("format") != REPRO_FORMAT:
            continue  # another JSON file (a findings table) beside them
        k = rep.get("kernel")
        if k not in table or table[k]["why"]:
            not_run[str(k)] = table[k]["why"] if k in table else "not in the registry here"
            continue
        findings.append({"kernel": k, "op": rep.get("op"), "dtype": rep.get("dtype"),
                         "property": rep.get("property"), "message": rep.get("message"), "case": rep.get("case"),
                         "level": rep.get("level"), "from_corpus": False, "reproducer": path,
                         "seed": rep.get("run_seed")})
    return findings, not_run


def _audit_saved(args, table, skipped):
    """Steps 3 and 4 on the reproducers of --reproducers; a Result."""
    findings, not_run = saved_findings(args.reproducers, table)
    if not findings:
        _nothing_runs(not_run)
        return api.Result(3, args.argv, {"exit": 3, "not_run": not_run, "findings": []})
    run = sorted({f["kernel"] for f in findings})
    _progress(1, "the reproducers under %s: kernels %s" % (args.reproducers, ", ".join(run)))
    os.makedirs(args.out, exist_ok=True)
    gpu = gpu_name()
    seeds = {f["seed"] for f in findings}
    rows = _examine_all(findings, table, gpu, seeds.pop() if len(seeds) == 1 else None, _plugins(args))
    doc = _document(args, run, not_run, 0, {}, rows, [], gpu)
    return _write_tables(args, doc)


def _audit(args):
    """The four steps on settled arguments; a Result."""
    try:
        import numpy  # noqa: F401  (step 3 reads and writes .npy files)
    except ImportError as e:
        sys.stderr.write("audit: needs numpy (pip install numpy): %s\n" % e)
        return api.Result(3, args.argv, None)
    from .backends import register_all
    _, skipped = register_all()
    _import_loads(args)
    table = _registry()
    if args.reproducers:
        return _audit_saved(args, table, skipped)
    run, not_run = _choose(args, table, skipped)
    if not run:
        _nothing_runs(not_run)
        return api.Result(3, args.argv, {"exit": 3, "not_run": not_run, "findings": []})
    _progress(1, "kernels: %s%s" % (", ".join(run), "; not run here: " + "; ".join(
        "%s (%s)" % kv for kv in sorted(not_run.items())) if not_run else ""))
    made_out = not os.path.isdir(args.out)
    os.makedirs(args.out, exist_ok=True)
    check_rc, check_doc = _run_suite(args, run, made_out)
    repro_dir = os.path.join(args.out, "reproducers")
    findings, unsaved = collect(check_doc, repro_dir)
    gpu = gpu_name()
    rows = _examine_all(findings, table, gpu, check_doc.get("seed"), _plugins(args))
    doc = _document(args, run, not_run, check_rc, check_doc, rows, unsaved, gpu)
    return _write_tables(args, doc)


def audit(kernels=None, ops=None, dtypes=None, cases=None, seed=None, out=None, md=None, json=None, load=(),
          reproducers=None):
    """Every framework backend that can run here (or `kernels`) through the property suite under
    --strict, each failure examined (docs/PYTHON.md, "Audit"); returns a Result: the findings
    document, .exit 0 no finding, 1 findings written, 3 nothing could run here (nothing
    written). Bad arguments raise ValueError or TypeError naming them; a write that failed
    raises OSError."""
    args = _Args(cli=False)
    _settle(args, kernels, ops, dtypes, cases, seed, out, md, json, load, reproducers)
    given = dict(kernels=kernels, ops=ops, dtypes=dtypes, cases=cases, seed=seed, out=out, md=md, json=json,
                 reproducers=reproducers)
    for arg, v in given.items():  # the command line that does the same, for the table's header
        if v is not None:
            args.argv += [FLAGS[arg], ",".join(v) if isinstance(v, (list, tuple)) else os.fspath(v) if isinstance(
                v, os.PathLike) else v]
    args.argv = [str(a) for a in args.argv] + sum((["--load", p] for p in args.load), [])
    return _audit(args)


def main(argv, prog=PROG):
    """`python3 -m softmax_lab audit ...`: the exit status."""
    try:
        kw = parse_cli(argv)
        if kw is None:
            sys.stdout.write(USAGE)
            return 0
        args = _Args(cli=True)
        _settle(args, kw.get("kernels"), kw.get("ops"), kw.get("dtypes"), kw.get("cases"), kw.get("seed"),
                kw.get("out"), kw.get("md"), kw.get("json"), kw.get("load"), kw.get("reproducers"))
        args.argv = list(argv)
        return _audit(args).exit
    except AuditUsage as e:
        sys.stderr.write("%s\n" % e)
        return 2
    except OSError as e:
        sys.stderr.write("audit: cannot write %s: %s (the old file, or none, is left)\n"
                         % (getattr(e, "filename", None) or "a file", e.strerror or e))
        return 2
