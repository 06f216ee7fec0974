"""test_python_binding: the Python binding end to end on the CPU.

A numpy kernel registered from Python goes through the property suite and the bench exactly
as a C kernel does; a planted-bug Python kernel (no max subtraction) is caught, shrunk, saved,
and replayed from the saved file by `python -m softmax_lab replay`; judge() accepts a correct
output and rejects a wrong one. Exits 77 (skipped) where numpy or the shared libraries are
missing.

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
    print("skip: numpy is not installed (pip install numpy)")
    sys.exit(77)
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

for bad_args, what in ((dict(name="numpy"), "a name already registered"),
                       (dict(name="x1", dtypes=["int8"]), "an unknown dtype"),
                       (dict(name="x2", ops=[]), "no ops")):
    args = dict(fn=planted_kernels.no_max, ops=["softmax"], dtypes=["fp32"], device="cpu")
    args.update(bad_args)
    try:
        softmax_lab.register(**args)
        expect(False, "register refuses %s" % what)
    except ValueError as err:
        expect(True, "register refuses %s: %s" % (what, err))

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
if failures:
    print("%d failed; reproduce with: %s" % (len(failures), REPRO))
    sys.exit(1)
print("all passed")
