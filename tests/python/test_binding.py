"""test_python_binding: the Python binding end to end on the CPU.

A numpy kernel registered from Python goes through the property suite and the bench exactly
as a C kernel does; a planted-bug Python kernel (no max subtraction) is caught, shrunk, saved,
and replayed from the saved file by `python -m softmax_lab replay`; judge() accepts a correct
output and rejects a wrong one. Kernels run in worker processes: one that calls os._exit(0) is
a FAIL naming it in check() and bench() while the script goes on and a right kernel beside it
passes; a kernel no worker can import (a lambda) runs in this process, and the call says so. Usage errors of check(), bench(), judge() and register() raise
TypeError, ValueError or FileNotFoundError naming the argument; register() takes the device
from numpy annotations, marks a kernel framework=True as a framework baseline in the ledger, replaces a name registered before (with a warning), and unregister()
frees a name. Exits 77 (skipped) where numpy or the shared libraries are missing (1 where numpy
is missing and SML_REQUIRE_PYTHON_TESTS is set, as in CI).

usage: test_binding.py BUILD_DIR SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

build, source = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(source, "python"), here]
os.environ["SML_LIBRARY_DIR"] = build
REPRO = "ctest --test-dir %s -R test_python_binding --output-on-failure" % build

try:
    import numpy as np
except ImportError:
    # CI sets SML_REQUIRE_PYTHON_TESTS: there a missing numpy is a failure, never a skip.
    required = os.environ.get("SML_REQUIRE_PYTHON_TESTS")
    print("%s: numpy is not installed (pip install numpy)" % ("FAIL" if required else "skip"))
    sys.exit(1 if required else 77)
import softmax_lab
from softmax_lab import _native
try:
    _native.libs()
except _native.LibraryNotFound as e:
    print("skip: %s" % e)
    sys.exit(77)

failures = []


def expect(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


done, skipped = softmax_lab.register_backends(only=["numpy"])
expect(done == ["numpy"], "the numpy backend registers (%s, skipped %s)" % (done, skipped))

r = softmax_lab.check(kernels="numpy", cases=200, extra=["--regressions", "none"])
expect(r.exit == 0, "property suite on the numpy kernel passes (exit %d)" % r.exit)
expect("numpy" in str(r), "check --json names the numpy kernel")

import planted_kernels  # noqa: E402,F401  (registers py_no_max)
tmp = tempfile.mkdtemp(prefix="sml-pytest-")
r = softmax_lab.check(kernels="py_no_max", cases=300, dtypes="fp32", ops="softmax",
                      extra=["--regressions", "none", "--save", tmp])
expect(r.exit == 1, "the planted no-max Python kernel is caught (exit %d)" % r.exit)
saved = sorted(f for f in os.listdir(tmp) if f.endswith(".json"))
expect(len(saved) >= 1, "a reproducer was saved (%s)" % saved)
if saved:
    path = os.path.join(tmp, saved[0])
    text = open(path).read()
    expect("python:planted_kernels" in text, "the reproducer records the kernel's Python origin")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(source, "python"), here]))
    # A reproducer is data: alone it names the module and the command, and imports nothing.
    p = subprocess.run([sys.executable, "-m", "softmax_lab", "replay", path], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    print(p.stdout[-2000:])
    expect(p.returncode == 2 and "--load python:planted_kernels" in p.stdout,
           "python -m softmax_lab replay without --load: exit %d (want 2) and the command" % p.returncode)
    p = subprocess.run([sys.executable, "-m", "softmax_lab", "replay", "--load", "python:planted_kernels", path],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    print(p.stdout[-2000:])
    expect(p.returncode == 1, "python -m softmax_lab replay --load re-runs the saved failure (exit %d)" % p.returncode)

r = softmax_lab.bench(backends="numpy,cpu_naive", rows=64, cols=1000, dtype="fp32", op="softmax")
expect(r.exit == 0, "bench times the numpy kernel beside cpu_naive (exit %d)" % r.exit)
expect("numpy" in str(r), "the ledger has the numpy backend's rows")
roles = {rec.get("kernel"): rec.get("framework") for rec in r.get("records", [])}
expect(r.get("schema") == "softmax-lab-ledger/2" and roles.get("numpy") is False and roles.get("cpu_naive") is False,
       "the ledger says numpy and cpu_naive are no framework baselines (%s, %s)" % (r.get("schema"), roles))

# A kernel registered with framework=True is a framework baseline in the ledger.
from softmax_lab.backends import numpy_ops  # noqa: E402
softmax_lab.register("py_framework", numpy_ops.run, ops="all", dtypes="all", device="cpu", framework=True)
r = softmax_lab.bench(backends="py_framework", rows=16, cols=256, dtype="fp32", op="softmax",
                      extra=["--max-seconds", "0.02", "--min-samples", "3"])
roles = {rec.get("kernel"): rec.get("framework") for rec in r.get("records", [])}
expect(r.exit == 0 and roles.get("py_framework") is True and roles.get("cpu_naive") is False,
       "register(framework=True): its ledger record says \"framework\": true, cpu_naive's false (exit %d, %s)"
       % (r.exit, roles))
softmax_lab.unregister("py_framework")

# The judged kernel cannot end the judge: os._exit(0) in a kernel is that kernel's FAIL, with
# the cause; the numpy kernel checked in the same call passes; the script goes on.
softmax_lab.register("py_exits", planted_kernels.exits, ops=["softmax"], dtypes=["fp32"], device="cpu")
r = softmax_lab.check(kernels="py_exits,numpy", cases=60, dtypes="fp32", ops="softmax",
                      extra=["--regressions", "none"])
runs = {run.get("kernel"): run for run in r.get("runs", [])}
causes = [f.get("message", "") for f in runs.get("py_exits", {}).get("failures", [])]
expect(r.exit == 1 and runs.get("py_exits", {}).get("outcome") == "fail"
       and any("exited with status 0" in c for c in causes) and runs.get("numpy", {}).get("outcome") == "pass",
       "check(): os._exit(0) in a kernel is its FAIL with the cause (%s), numpy beside it passes (exit %d)"
       % (causes, r.exit))
r = softmax_lab.bench(backends="py_exits,numpy", rows=16, cols=256, dtype="fp32", op="softmax",
                      extra=["--max-seconds", "0.02", "--min-samples", "3", "--quiet"])
checks = {rec.get("kernel"): [(e.get("check"), e.get("check_detail", "")) for e in rec.get("evidence", [])]
          for rec in r.get("records", [])}
expect(r.exit == 1 and any(c == "ERROR" and "exited with status 0" in d for c, d in checks.get("py_exits", []))
       and [c for c, _ in checks.get("numpy", [])] == ["ok"],
       "bench(): the exiting kernel's row says why, numpy is still measured (exit %d, %s)" % (r.exit, checks))
softmax_lab.unregister("py_exits")
# A worker that cannot import a kernel's module says so, and the job is an ERROR (not judged: exit 3),
# never a pass.
gone_dir = tempfile.mkdtemp(prefix="sml-gone-")
with open(os.path.join(gone_dir, "sml_gone_kernels.py"), "w") as f:
    f.write("def k(op, x, dy, out):\n    out[...] = x\n")
sys.path.insert(0, gone_dir)
import sml_gone_kernels  # noqa: E402
softmax_lab.register("py_gone", sml_gone_kernels.k, ops=["softmax"], dtypes=["fp32"], device="cpu")
import shutil  # noqa: E402
shutil.rmtree(gone_dir)
r = softmax_lab.check(kernels="py_gone", cases=5, extra=["--regressions", "none"])
gone = [run for run in r.get("runs", []) if run.get("kernel") == "py_gone"]
expect(r.exit == 3 and gone and gone[0].get("outcome") == "error" and "no kernel 'py_gone'" in (gone[0].get("note") or ""),
       "a kernel its worker cannot import is an ERROR with the reason, not a pass (exit %d, %s)" % (r.exit, gone))
softmax_lab.unregister("py_gone")
sys.path.remove(gone_dir)
script = """
import numpy as np, softmax_lab
softmax_lab.register("py_lambda", lambda op, x, dy, out: np.copyto(out, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)),
                     ops=["softmax"], dtypes=["fp32"], device="cpu")
softmax_lab.check(kernels="py_lambda", cases=5, extra=["--regressions", "none", "--no-shrink"])
"""
p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path[:2])))
expect("'py_lambda' runs in this process, not in a worker" in p.stderr and "lambda" in p.stderr,
       "a lambda kernel runs in the script's process, and the call says so and why:\n%s" % p.stderr[-600:])

rng = np.random.default_rng(1)
x = (rng.standard_normal((3, 5, 77)) * 4).astype(np.float32)
e = np.exp(x - x.max(axis=-1, keepdims=True))
y = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
r = softmax_lab.judge(x, y, "softmax")
expect(r.exit == 0, "judge accepts numpy's softmax of a 3-D tensor (exit %d)" % r.exit)
bad = y.copy()
bad[1, 2, 3] *= 1.01
r = softmax_lab.judge(x, bad, "softmax")
expect(r.exit == 1, "judge rejects an output with one element 1%% off (exit %d)" % r.exit)

for bad_args, what in ((dict(name="cpu_naive"), "a name a built-in kernel has"),
                       (dict(name="x1", dtypes=["int8"]), "an unknown dtype"),
                       (dict(name="x2", ops=[]), "no ops"),
                       (dict(name="x3", device="tpu"), "an unknown device"),
                       (dict(name="x4", min_cols=0), "min_cols 0")):
    args = dict(fn=planted_kernels.no_max, ops=["softmax"], dtypes=["fp32"], device="cpu")
    args.update(bad_args)
    try:
        softmax_lab.register(**args)
        expect(False, "register refuses %s" % what)
    except ValueError as err:
        expect(True, "register refuses %s: %s" % (what, err))


def raises(exc, words, what, call, *args, **kwargs):
    """call raises exc whose message has every one of words (the argument's name)."""
    try:
        call(*args, **kwargs)
    except exc as err:
        ok = all(w in str(err) for w in words)
        expect(ok, "%s raises %s naming %s: %s" % (what, exc.__name__, words, err))
        return
    except Exception as err:
        expect(False, "%s raises %s, not %s: %s" % (what, exc.__name__, type(err).__name__, err))
        return
    expect(False, "%s raises %s (it returned)" % (what, exc.__name__))


# Usage errors are exceptions naming the argument; a kernel's failure stays a Result (above).
raises(ValueError, ["kernels", "nosuch"], "check(kernels='nosuch')", softmax_lab.check, kernels="nosuch")
raises(TypeError, ["cases"], "check(cases='10')", softmax_lab.check, kernels="numpy", cases="10")
raises(ValueError, ["cases"], "check(cases=0)", softmax_lab.check, kernels="numpy", cases=0)
raises(ValueError, ["dtypes", "fp64"], "check(dtypes='fp64')", softmax_lab.check, kernels="numpy", dtypes="fp64")
raises(ValueError, ["--no-such-flag"], "check(extra=['--no-such-flag']) (the command's exit 2)",
       softmax_lab.check, kernels="numpy", extra=["--no-such-flag"])
raises(ValueError, ["rows"], "bench(rows=0)", softmax_lab.bench, backends="numpy", rows=0)
raises(ValueError, ["backends", "nosuch"], "bench(backends='nosuch')", softmax_lab.bench, backends="nosuch")
raises(ValueError, ["y", "(3, 5, 76)"], "judge(x, y[..., :76])", softmax_lab.judge, x, y[..., :76], "softmax")
raises(ValueError, ["op"], "judge(op='softmaxx')", softmax_lab.judge, x, y, "softmaxx")
raises(FileNotFoundError, ["x", "no-such.npy"], "judge('no-such.npy', ...)", softmax_lab.judge,
       "no-such.npy", y, "softmax")
raises(TypeError, ["fn"], "register(fn=42)", softmax_lab.register, "x5", 42, ops="softmax", dtypes="fp32",
       device="cpu")
raises(TypeError, ["framework"], "register(framework='yes')", softmax_lab.register, "x6", planted_kernels.no_max,
       ops="softmax", dtypes="fp32", device="cpu", framework="yes")
raises(TypeError, ["device"], "register() of an unannotated callable without device",
       softmax_lab.register, "x6", planted_kernels.no_max, ops="softmax", dtypes="fp32")


# The device from the callable's annotations: numpy arrays are a CPU kernel that runs here.
def annotated(op: str, x: np.ndarray, dy: np.ndarray, out: np.ndarray) -> None:
    """numpy softmax, annotated"""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    out[...] = e / e.sum(axis=1, keepdims=True)


softmax_lab.register("py_annotated", annotated, ops="softmax", dtypes="fp32")
r = softmax_lab.check(kernels="py_annotated", cases=100, extra=["--regressions", "none"])
expect(r.exit == 0, "a kernel annotated with numpy.ndarray runs as a CPU kernel (exit %d)" % r.exit)

# Registering a name again replaces the kernel (with a warning); unregister() removes it.
import warnings  # noqa: E402
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    softmax_lab.register("py_annotated", planted_kernels.no_max, ops="softmax", dtypes="fp32", device="cpu")
expect(any("replaces" in str(w.message) for w in caught), "re-registering warns (%s)" % [str(w.message) for w in caught])
r = softmax_lab.check(kernels="py_annotated", cases=100, extra=["--regressions", "none", "--save", tmp])
expect(r.exit == 1, "the replacement is what runs: the no-max kernel now fails (exit %d)" % r.exit)
softmax_lab.unregister("py_annotated")
expect("py_annotated" not in softmax_lab.registered(), "unregister() forgets the name")
raises(ValueError, ["kernels", "py_annotated"], "check() of an unregistered kernel", softmax_lab.check,
       kernels="py_annotated")
raises(ValueError, ["py_annotated"], "unregister() of a name not registered", softmax_lab.unregister, "py_annotated")
softmax_lab.register("py_annotated", annotated, ops="softmax", dtypes="fp32")
expect("py_annotated" in softmax_lab.registered(), "an unregistered name can be registered again")

# python -m softmax_lab names itself in its usage, and its bench writes ./ledger where it runs.
env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(source, "python"), here]))
p = subprocess.run([sys.executable, "-m", "softmax_lab", "--help"], env=env, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, universal_newlines=True)
expect(p.returncode == 0 and "usage: python3 -m softmax_lab COMMAND" in p.stdout,
       "python -m softmax_lab --help says 'usage: python3 -m softmax_lab' (%r)" % p.stdout[:200])
cwd = os.path.join(tmp, "run-here")
os.mkdir(cwd)
p = subprocess.run([sys.executable, "-m", "softmax_lab", "bench", "--backend=cpu_naive", "--rows=4", "--cols=64",
                    "--dtype=fp32", "--min-samples=2", "--max-seconds=0.01", "--quiet"], env=env, cwd=cwd,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
led = os.path.join(cwd, "ledger")
expect(p.returncode == 0 and os.path.isdir(led) and any(f.endswith(".json") for f in os.listdir(led)),
       "python -m softmax_lab bench writes ./ledger in its working directory (exit %d)\n%s" % (p.returncode, p.stdout[-1500:]))

import shutil  # noqa: E402
shutil.rmtree(tmp)
try:
    softmax_lab.register("x3", None, ops=["softmax"], dtypes=["fp32"], device="cpu")
    expect(False, "register refuses fn=None")
except TypeError as err:
    expect("callable" in str(err), "register refuses fn=None: %s" % err)
try:
    softmax_lab.register("x4", planted_kernels.no_max, ops=["softmax"], dtypes=["fp32"], device="cpu",
                         min_cols=2 ** 70)
    expect(False, "register refuses min_cols=2**70")
except ValueError as err:
    expect("min_cols %d" % 2 ** 70 in str(err), "register refuses min_cols=2**70 by its value: %s" % err)

raises(TypeError, ["x"], "judge of 0-d arrays (the CLI refuses them too)", softmax_lab.judge,
       np.float32(1), np.float32(1), "softmax")

# Ctrl-C (KeyboardInterrupt) or sys.exit inside a kernel stops check(): it is raised from the
# call, never reported as a pass or as an unknown status.
for exc in (KeyboardInterrupt, SystemExit):
    def stop(op, x, dy, out, exc=exc):
        raise exc()
    name = "py_stop_%s" % exc.__name__
    softmax_lab.register(name, stop, ops=["softmax"], dtypes=["fp32"], device="cpu")
    try:
        r = softmax_lab.check(kernels=name, cases=20, extra=["--regressions", "none", "--no-shrink"])
        expect(False, "%s in a kernel is raised from check() (got exit %d)" % (exc.__name__, r.exit))
    except exc:
        expect(True, "%s in a kernel is raised from check()" % exc.__name__)

# A kernel defined in __main__ cannot be imported by a rerun or a replay: its failure report
# says how to make it importable, beside the rerun line that names python:__main__.
script = """
import numpy as np, softmax_lab
def no_max(op, x: np.ndarray, dy: np.ndarray, out: np.ndarray) -> None:
    e = np.exp(x)
    out[...] = e / e.sum(axis=1, keepdims=True)
softmax_lab.register("main_no_max", no_max, ops=["softmax"], dtypes=["fp32"])
softmax_lab.check(kernels="main_no_max", cases=40, extra=["--regressions", "none", "--no-shrink"])
"""
p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path[:2])))
both = p.stdout + p.stderr
expect("--load python:__main__" in both and "cannot be imported again" in both and "--load python:mykernels" in both,
       "a failing kernel of __main__ says how to make it importable (exit %d)" % p.returncode)

if failures:
    print("%d failed; reproduce with: %s" % (len(failures), REPRO))
    sys.exit(1)
print("all passed")
