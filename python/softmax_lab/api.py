"""check / bench / judge / main: the CLI's subcommands as Python calls. Each builds the same
argument list a shell user would type, runs it in-process through sml_cli_main (so kernels
registered from Python are seen), and returns the exit status with the parsed JSON result."""
import ctypes
import importlib
import json
import os
import sys
import tempfile

from . import _native

EXIT_MEANING = {0: "ok", 1: "a failure was found", 2: "bad usage or unusable input",
                3: "a named kernel could not run: nothing was checked"}


class Result(dict):
    """The parsed JSON of a run, with .exit (the command's exit status) and .argv."""

    def __init__(self, exit, argv, data):
        super().__init__(data or {})
        self.exit = exit
        self.argv = argv

    @property
    def ok(self):
        return self.exit == 0

    def __repr__(self):
        return "<softmax_lab result exit=%d (%s) argv=%r>" % (self.exit, EXIT_MEANING.get(self.exit, "?"), self.argv)


def run_cli(argv):
    """Run one `softmax-lab` command line in this process; returns its exit status."""
    core, cli = _native.libs()
    sys.stdout.flush()
    sys.stderr.flush()
    args = ["softmax-lab"] + [str(a) for a in argv]
    arr = (ctypes.c_char_p * (len(args) + 1))(*[a.encode() for a in args], None)
    rc = cli.sml_cli_main(len(args), arr)
    libc = ctypes.CDLL(None)
    libc.fflush(None)
    return rc


def _with_json(argv):
    fd, path = tempfile.mkstemp(prefix="softmax_lab-", suffix=".json")
    os.close(fd)
    os.unlink(path)  # the command writes it; its absence afterwards means it wrote nothing
    try:
        rc = run_cli(list(argv) + ["--json", path])
        data = None
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
        return Result(rc, list(argv), data)
    finally:
        if os.path.exists(path):
            os.unlink(path)


def _names(v):
    if v is None:
        return None
    return v if isinstance(v, str) else ",".join(v)


def check(kernels="all", cases=None, seed=None, props=None, ops=None, dtypes=None, extra=()):
    """The property suite on the named kernels; returns a Result (exit 0: every property held
    on every kernel that ran)."""
    argv = ["check", "--kernel", _names(kernels)]
    for flag, v in (("--cases", cases), ("--seed", seed), ("--props", _names(props)),
                    ("--op", _names(ops)), ("--dtype", _names(dtypes))):
        if v is not None:
            argv += [flag, v]
    return _with_json(argv + list(extra))


def bench(backends="all", rows=None, cols=None, dtype=None, op=None, sweep=None, gate=False, extra=()):
    """Time the named backends (the suite's own method: CUDA events, launch hold, cold-L2
    rotation, medians with spread); returns the ledger as a Result."""
    argv = ["bench", "--backend", _names(backends)]
    for flag, v in (("--rows", rows), ("--cols", cols), ("--dtype", _names(dtype)),
                    ("--op", _names(op)), ("--sweep", sweep)):
        if v is not None:
            argv += [flag, v]
    if gate:
        argv.append("--gate")
    return _with_json(argv + list(extra))


def _to_numpy(a):
    """(numpy array, dtype name or None): torch tensors go to the host; bf16 as uint16 bits."""
    try:
        import torch
        if isinstance(a, torch.Tensor):
            t = a.detach().to("cpu").contiguous()
            if t.dtype == torch.bfloat16:
                return t.view(torch.int16).numpy().view("uint16"), "bf16"
            return t.numpy(), None
    except ImportError:
        pass
    import numpy as np
    return np.ascontiguousarray(a), None


def judge(x, y, op, dy=None, dtype=None, save=None, extra=()):
    """Judge an output y produced elsewhere (from logits x, or for backward ops from the forward
    output x and the gradient dy) against the double-precision reference under the numerics
    contract. Returns a Result: exit 0 holds, 1 violated, 2 unusable input."""
    import numpy as np
    tmp = tempfile.mkdtemp(prefix="softmax_lab-judge-")
    try:
        argv = ["check"]
        for flag, a in (("--input", x), ("--output", y), ("--dy", dy)):
            if a is None:
                continue
            arr, dt = _to_numpy(a)
            dtype = dtype or dt
            path = os.path.join(tmp, flag.strip("-") + ".npy")
            np.save(path, arr)
            argv += [flag, path]
        argv += ["--op", op]
        if dtype:
            argv += ["--dtype", _native.DTYPE_ALIASES.get(str(dtype).replace("torch.", ""), str(dtype))]
        if save:
            argv += ["--save", save]
        return _with_json(argv + list(extra))
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


PYTHON_SOURCE = "python:"  # SML_PYTHON_SOURCE_PREFIX of softmax_lab_plugin.h


def _import_source(source):
    """Import the module a "python:MODULE" source names: it registers its kernels."""
    importlib.import_module(source[len(PYTHON_SOURCE):])


def _replay_sources(paths):
    """The Python sources the reproducers at `paths` (files or folders) record."""
    found = []
    for p in paths:
        files = [p] if os.path.isfile(p) else (
            [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".json")] if os.path.isdir(p) else [])
        for f in files:
            try:
                with open(f) as fh:
                    load = json.load(fh).get("load")
            except (OSError, ValueError, AttributeError):
                continue  # the C reader says what is wrong with the file
            if isinstance(load, str) and load.startswith(PYTHON_SOURCE) and load not in found:
                found.append(load)
    return found


def take_python_sources(argv):
    """Import the Python modules named by `--load python:MODULE` (and SML_LOAD entries, and,
    for `replay`, the reproducers' load fields), and return argv without those --load flags:
    the C side loads shared libraries, the binding loads Python modules."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--load" and i + 1 < len(argv) and argv[i + 1].startswith(PYTHON_SOURCE):
            _import_source(argv[i + 1])
            i += 2
            continue
        if a.startswith("--load=" + PYTHON_SOURCE):
            _import_source(a[len("--load="):])
            i += 1
            continue
        out.append(a)
        i += 1
    env = os.environ.get("SML_LOAD")
    if env:
        keep = []
        for part in _split_load(env):
            if part.startswith(PYTHON_SOURCE):
                _import_source(part)
            elif part:
                keep.append(part)
        if keep:
            os.environ["SML_LOAD"] = ":".join(keep)
        else:
            del os.environ["SML_LOAD"]
    # A reproducer is data: the module it records is imported only when the user says so
    # (the C side then prints the command for a kernel that is not loaded, and exits 2).
    if out and out[0] == "replay" and "--trust-reproducer" in out:
        for source in _replay_sources([a for a in out[1:] if not a.startswith("-")]):
            _import_source(source)
    return out


def _split_load(env):
    """SML_LOAD is colon-separated; "python:MODULE" keeps its own colon."""
    parts, pending = [], None
    for piece in env.split(":"):
        if pending is not None:
            parts.append(pending + ":" + piece)
            pending = None
        elif piece == "python":
            pending = piece
        else:
            parts.append(piece)
    if pending is not None:
        parts.append(pending)
    return parts


def main(argv=None):
    """`python -m softmax_lab`: the Python backends registered, then the command line run."""
    from .backends import register_all
    argv = list(sys.argv[1:] if argv is None else argv)
    quiet = not argv or argv[0] in ("-h", "--help", "help", "--version")
    try:
        done, skipped = register_all()
    except _native.LibraryNotFound as e:
        sys.stderr.write("%s\n" % e)
        return 2
    if not quiet and argv[0] in ("list", "check", "bench"):
        for name, why in skipped.items():
            sys.stderr.write("softmax_lab: backend %s not available: %s\n" % (name, why))
    # `python -m` puts the current directory first on sys.path: replay imports nothing from it
    # (a reproducer from elsewhere must not run a module that happens to lie here) unless told.
    if argv and argv[0] == "replay":
        if "--import-from-cwd" in argv:
            argv.remove("--import-from-cwd")
        else:
            cwd = os.getcwd()
            sys.path[:] = [p for p in sys.path if p not in ("", ".", cwd)]
    # Kernels run in worker processes: this interpreter again, as `python -m softmax_lab __worker`,
    # which imports the kernel's module (the supervisor adds --load python:MODULE).
    os.environ.setdefault("SML_WORKER_ARGV", "\t".join([sys.executable, "-m", "softmax_lab", "__worker"]))
    try:
        argv = take_python_sources(argv)
    except ImportError as e:
        sys.stderr.write("softmax_lab: cannot import a Python kernel module: %s\n" % e)
        return 2
    return run_cli(argv)
