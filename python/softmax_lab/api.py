"""check / bench / judge / main: the CLI's subcommands as Python calls. Each builds the same
argument list a shell user would type, runs it through sml_cli_main in this process, and
returns the exit status with the parsed JSON result. The kernels run in worker processes, new
interpreters (`python -m softmax_lab __worker`) that register the same Python kernels by
importing their modules: a kernel that crashes, exits or hangs is a FAIL naming it, and this
script goes on. A kernel a new interpreter cannot import (defined in the script itself, or
inside a function) runs in this process, and the call says so once."""
import ctypes
import importlib
import json
import os
import sys
import tempfile

from . import _native, _register

EXIT_MEANING = {0: "ok", 1: "a failure was found", 2: "bad usage or unusable input",
                3: "a named kernel could not run: nothing was checked"}
# Exit 2 never becomes a Result: check(), bench() and judge() raise ValueError (or TypeError,
# FileNotFoundError) naming the argument instead.


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


_told_local = set()  # kernels already said to run in this process


def _worker_env():
    """The environment under which the command runs its kernels in worker processes: the
    worker and command programs (this interpreter with `-m softmax_lab`), the plan by which a
    worker registers this process's Python kernels (a temporary file, returned to remove), and
    the kernels no worker can have. ({}, None) where this interpreter cannot be run again."""
    exe = sys.executable
    if not exe or not os.path.isabs(exe):
        return {}, None
    plan, local = _register.worker_plan()
    env = {"SML_WORKER_ARGV": "\t".join([exe, "-m", "softmax_lab", "__worker"])}
    # The new interpreter imports this package before anything else: from where this one did.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in paths if p != here])
    if local:
        env["SML_IN_PROCESS_KERNELS"] = ",".join(sorted(local))
        for name in sorted(set(local) - _told_local):
            _told_local.add(name)
            sys.stderr.write("softmax_lab: kernel %r runs in this process, not in a worker (a crash or an exit "
                             "in it ends this script): %s\n" % (name, local[name]))
    else:
        # A whole command (bench, check --input / --against) runs again in a new interpreter
        # only where that interpreter can have every kernel.
        env["SML_COMMAND_ARGV"] = "\t".join([exe, "-m", "softmax_lab"])
    fd, path = tempfile.mkstemp(prefix="softmax_lab-kernels-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(plan, f)
    env["SML_PY_KERNELS"] = path
    return env, path


def run_cli(argv, prog="softmax-lab", isolate=True):
    """Run one `softmax-lab` command line; returns its exit status. prog is the name its usage
    shows. isolate: the kernels run in worker processes (see the module's header) unless the
    environment names a worker program already (SML_WORKER_ARGV)."""
    if _register._bootstrapping:
        raise RuntimeError("softmax_lab: a command was started while a worker process imported the module that "
                           "registers a kernel; a module a worker imports must not run commands when imported "
                           "(put them under `if __name__ == \"__main__\":`)")
    core, cli = _native.libs()
    sys.stdout.flush()
    sys.stderr.flush()
    env, plan_path = _worker_env() if isolate and "SML_WORKER_ARGV" not in os.environ else ({}, None)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        args = [prog] + [str(a) for a in argv]
        arr = (ctypes.c_char_p * (len(args) + 1))(*[a.encode() for a in args], None)
        rc = cli.sml_cli_main(len(args), arr)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if plan_path:
            os.unlink(plan_path)
    libc = ctypes.CDLL(None)
    libc.fflush(None)
    if _register._interrupt:  # Ctrl-C (or sys.exit) inside a Python kernel: raised here, once
        e = _register._interrupt[0]
        del _register._interrupt[:]
        raise e
    return rc


def _run_keeping_stderr(argv):
    """run_cli, with what the command wrote to stderr also returned (it is still shown)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            rc = run_cli(argv)
        finally:
            ctypes.CDLL(None).fflush(None)
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        err = tmp.read().decode(errors="replace")
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return rc, err


def _with_json(argv, where):
    """Run argv with --json; a usage error (exit 2) raises ValueError with the command's
    message; anything else is a Result."""
    fd, path = tempfile.mkstemp(prefix="softmax_lab-", suffix=".json")
    os.close(fd)
    os.unlink(path)  # the command writes it; its absence afterwards means it wrote nothing
    try:
        rc, err = _run_keeping_stderr(list(argv) + ["--json", path])
        if rc == 2:
            lines = [l for l in err.splitlines() if l.strip()]
            raise ValueError("softmax_lab.%s: %s" % (where, "; ".join(lines[-3:]) or "bad usage (exit 2)"))
        data = None
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
        return Result(rc, list(argv), data)
    finally:
        if os.path.exists(path):
            os.unlink(path)


def _names(v, arg, where, universe=None):
    """A list of names or a comma-separated str, as the command line's "a,b,c"."""
    if v is None:
        return None
    if isinstance(v, str):
        items = [t.strip() for t in v.split(",") if t.strip()]
    elif isinstance(v, (list, tuple, set)) and all(isinstance(t, str) for t in v):
        items = list(v)
    else:
        raise TypeError("softmax_lab.%s: %s must be a str or a list of str, not %r" % (where, arg, v))
    if not items:
        raise ValueError("softmax_lab.%s: %s names nothing" % (where, arg))
    if universe is not None:
        for t in items:
            key = _native.DTYPE_ALIASES.get(t, t) if universe is _native.DTYPES else t
            if key != "all" and key not in universe:
                raise ValueError("softmax_lab.%s: %s: unknown name %r (known: %s)"
                                 % (where, arg, t, ", ".join(["all"] + list(universe))))
        if universe is _native.DTYPES:
            items = [_native.DTYPE_ALIASES.get(t, t) for t in items]
    return ",".join(items)


def _kernel_names(v, arg, where, extra):
    """Kernel names, each in the registry (unless --load in extra brings more)."""
    spec = _names(v, arg, where)
    if any(str(e).startswith("--load") for e in extra):
        return spec
    core, _ = _native.libs()
    known = [core.sml_kernel_at(i).contents.name.decode() for i in range(core.sml_kernel_count())]
    for t in spec.split(","):
        if t not in known and t not in ("all", "gpu", "cpu"):
            raise ValueError("softmax_lab.%s: %s: no kernel %r in the registry (known: %s)"
                             % (where, arg, t, ", ".join(known)))
    return spec


def _count(v, arg, where, least):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("softmax_lab.%s: %s must be an int, not %r" % (where, arg, v))
    if v < least:
        raise ValueError("softmax_lab.%s: %s must be >= %d, not %d" % (where, arg, least, v))
    return v


def _extra(extra, where):
    if isinstance(extra, str) or not isinstance(extra, (list, tuple)):
        raise TypeError("softmax_lab.%s: extra must be a list of command-line words, not %r" % (where, extra))
    return [str(e) for e in extra]


def check(kernels="all", cases=None, seed=None, props=None, ops=None, dtypes=None, extra=(),
          strict=False):
    """The property suite on the named kernels; returns a Result (exit 0: every property held
    on every kernel that ran, a kernel with a declared deviation within it, as the verdict line
    and each run's "declared_deviation" say; 1: a failure, with its reproducers; 3: nothing
    could run). strict=True holds every kernel to the contract itself (--strict): no declared
    deviation applies. Usage errors raise TypeError or ValueError naming the argument."""
    extra = _extra(extra, "check")
    if not isinstance(strict, bool):
        raise TypeError("softmax_lab.check: strict must be True or False, not %r" % (strict,))
    argv = ["check", "--kernel", _kernel_names(kernels, "kernels", "check", extra)]
    if strict:
        argv.append("--strict")
    for flag, v in (("--cases", _count(cases, "cases", "check", 1)), ("--seed", _count(seed, "seed", "check", 0)),
                    ("--props", _names(props, "props", "check")),
                    ("--op", _names(ops, "ops", "check", _native.OPS)),
                    ("--dtype", _names(dtypes, "dtypes", "check", _native.DTYPES))):
        if v is not None:
            argv += [flag, v]
    return _with_json(argv + extra, "check")


def bench(backends="all", rows=None, cols=None, dtype=None, op=None, sweep=None, gate=False, extra=()):
    """Time the named backends (the suite's own method: CUDA events, launch hold, cold-L2
    rotation, medians with spread); returns the ledger as a Result. Usage errors raise
    TypeError or ValueError naming the argument."""
    extra = _extra(extra, "bench")
    argv = ["bench", "--backend", _kernel_names(backends, "backends", "bench", extra)]
    if sweep is not None and not isinstance(sweep, str):
        raise TypeError("softmax_lab.bench: sweep must be a str, not %r" % (sweep,))
    for flag, v in (("--rows", _count(rows, "rows", "bench", 1)), ("--cols", _count(cols, "cols", "bench", 1)),
                    ("--dtype", _names(dtype, "dtype", "bench", _native.DTYPES)),
                    ("--op", _names(op, "op", "bench", _native.OPS)), ("--sweep", sweep)):
        if v is not None:
            argv += [flag, v]
    if gate:
        argv.append("--gate")
    return _with_json(argv + extra, "bench")


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
    a = np.asarray(a)
    # A 0-d array stays 0-d (ascontiguousarray would make it 1-d): the CLI refuses it, exit 2.
    return (np.ascontiguousarray(a) if a.ndim else a), None


def _judge_input(a, arg, tmp):
    """(path of a .npy file, shape or None, dtype name or None) for x, y or dy: a path is used
    as it is (FileNotFoundError where there is none), an array is saved to tmp."""
    import numpy as np
    if isinstance(a, (str, bytes, os.PathLike)):
        path = os.fsdecode(a)
        if not os.path.isfile(path):
            raise FileNotFoundError("softmax_lab.judge: %s: no such file %r" % (arg, path))
        return path, None, None
    try:
        arr, dt = _to_numpy(a)
    except Exception as e:
        raise TypeError("softmax_lab.judge: %s must be an array, a tensor or a .npy path, not %s (%s)"
                        % (arg, type(a).__name__, e))
    if arr.dtype == object or arr.ndim == 0:
        raise TypeError("softmax_lab.judge: %s must be a numeric array of at least one dimension, not %r"
                        % (arg, type(a).__name__))
    path = os.path.join(tmp, arg + ".npy")
    np.save(path, arr)
    return path, arr.shape, dt


def judge(x, y, op, dy=None, dtype=None, save=None, extra=()):
    """Judge an output y produced elsewhere (from logits x, or for backward ops from the forward
    output x and the gradient dy) against the double-precision reference under the numerics
    contract. x, y, dy: arrays, torch tensors or .npy paths. Returns a Result: exit 0 holds,
    1 violated. Usage errors (shapes that differ, an unknown op, a missing file) raise
    TypeError, ValueError or FileNotFoundError naming the argument."""
    extra = _extra(extra, "judge")
    if op not in _native.OPS:
        raise ValueError("softmax_lab.judge: op must be one of %s, not %r" % (", ".join(_native.OPS), op))
    if op.endswith("_bwd") and dy is None:
        raise ValueError("softmax_lab.judge: op %r needs dy (the upstream gradient)" % op)
    if not op.endswith("_bwd") and dy is not None:
        raise ValueError("softmax_lab.judge: dy goes with a backward op, not %r" % op)
    tmp = tempfile.mkdtemp(prefix="softmax_lab-judge-")
    try:
        argv, shapes = ["check"], {}
        for flag, arg, a in (("--input", "x", x), ("--output", "y", y), ("--dy", "dy", dy)):
            if a is None:
                continue
            path, shape, dt = _judge_input(a, arg, tmp)
            dtype = dtype or dt
            shapes[arg] = shape
            argv += [flag, path]
        for arg in ("y", "dy"):
            if shapes.get(arg) is not None and shapes.get("x") is not None and shapes[arg] != shapes["x"]:
                raise ValueError("softmax_lab.judge: %s has shape %s, x has %s: they must be the same"
                                 % (arg, shapes[arg], shapes["x"]))
        argv += ["--op", op]
        if dtype:
            argv += ["--dtype", _names(str(dtype).replace("torch.", ""), "dtype", "judge", _native.DTYPES)]
        if save:
            argv += ["--save", os.fspath(save)]
        return _with_json(argv + extra, "judge")
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


PYTHON_SOURCE = "python:"  # SML_PYTHON_SOURCE_PREFIX of softmax_lab_plugin.h


def _import_source(source):
    """Import the module a "python:MODULE" source names: it registers its kernels (a worker
    process imports it too)."""
    with _register.importing(source):
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


def _take_verbose(argv):
    """--verbose, anywhere among the options (before "--"), taken out: True if it was there."""
    end = argv.index("--") if "--" in argv else len(argv)
    verbose = "--verbose" in argv[:end]
    if verbose:
        argv[:end] = [a for a in argv[:end] if a != "--verbose"]
    return verbose


def _unavailable(skipped, out):
    """One line per framework backend that is not registered here, and why."""
    for name, why in sorted(skipped.items()):
        out.write("python backend %s: not available: %s\n" % (name, why))
    out.flush()


def main(argv=None, prog="python3 -m softmax_lab"):
    """`python -m softmax_lab`: the Python backends registered, then the command line run.

    Nothing is written to stderr unless something goes wrong or --verbose asks: the backends
    that are not available here are listed by `list` on stdout (with --verbose, by every
    command on stderr)."""
    from .backends import register_all
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = _take_verbose(argv)
    # A worker serves one kernel (SML_WORKER_KERNEL, set by its supervisor): of the backends,
    # it registers that one at most, and imports no other framework.
    served = os.environ.get("SML_WORKER_KERNEL") if argv and argv[0] == "__worker" else None
    # --version and help run no kernel: no framework is imported for them (seconds on a GPU
    # host), unless --verbose asks which backends are not available.
    only = [served] if served else None
    if not verbose and (argv == ["--version"] or "-h" in argv or "--help" in argv):
        only = []
    try:
        done, skipped = register_all(only=only)
    except _native.LibraryNotFound as e:
        sys.stderr.write("%s\n" % e)
        return 2
    worker = bool(os.environ.get("SML_CMD_FD")) or (bool(argv) and argv[0] == "__worker")
    if verbose and not worker:
        _unavailable(skipped, sys.stderr)
    # `python -m` puts the current directory first on sys.path: replay imports nothing from it
    # (a reproducer from elsewhere must not run a module that happens to lie here) unless told.
    if argv and argv[0] == "replay":
        if "--import-from-cwd" in argv:
            argv.remove("--import-from-cwd")
        else:
            cwd = os.getcwd()
            sys.path[:] = [p for p in sys.path if p not in ("", ".", cwd)]
    # A worker process (`__worker`, or a command run again with SML_CMD_FD): the kernels its
    # supervisor registered from Python, registered here the same way (run_cli's plan).
    child = bool(argv) and (argv[0] == "__worker" or bool(os.environ.get("SML_CMD_FD")))
    if child and os.environ.get("SML_PY_KERNELS"):
        try:
            _register.register_planned(os.environ["SML_PY_KERNELS"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
            # Its jobs then name a kernel this worker does not have: an ERROR, never a pass.
            sys.stderr.write("softmax_lab worker: cannot read the kernels' plan %s: %s: %s\n"
                             % (os.environ["SML_PY_KERNELS"], type(e).__name__, e))
    try:
        argv = take_python_sources(argv)
    except ImportError as e:
        sys.stderr.write("softmax_lab: cannot import a Python kernel module: %s\n" % e)
        return 2
    if argv and argv[0] == "audit" and not child:  # a Python-side command over check and judge
        from .auditing import main as audit_main
        return audit_main(argv[1:], prog + " audit")
    rc = run_cli(argv, prog, isolate=not child)
    # `list` shows what this build and this Python can run: the backends left out too.
    if (rc == 0 and argv and argv[0] == "list" and not child
            and not any(a in ("--json", "-h", "--help") for a in argv[1:])):
        _unavailable(skipped, sys.stdout)
    return rc


def console_main():
    """The `softmax-lab` console script of the pip install: `python -m softmax_lab`."""
    sys.exit(main(prog="softmax-lab"))
