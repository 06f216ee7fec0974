"""softmax_lab.testing: the property suite as an assertion, for a test suite.

    from softmax_lab.testing import assert_kernel

    def test_my_softmax():
        assert_kernel(my_softmax, ops=["softmax"], dtypes=["fp32"], device="cpu", cases=500)

assert_kernel registers the callable (the signature of softmax_lab.register), runs the
property suite on it (and, with `against`, the accuracy comparison with that baseline on the
same cases), unregisters it, and raises AssertionError when anything failed. The message
holds the minimal failing case (the smallest shrunk one), its property, got / want / bound,
and the path of its reproducer; every other failed property is listed after it. A kernel that
could not run here at all (a GPU kernel with no GPU) raises unittest.SkipTest, which pytest
reports as skipped, never as passed. Usage errors raise TypeError or ValueError.

Reproducers go to `save` when given, else to the folder the pytest plugin sets (under pytest's
temporary directory), else to a new temporary folder that is kept, so the path in the message
stays valid.
"""
import json
import os
import re
import tempfile
import unittest

from . import _register, api

# The folder reproducers go to when assert_kernel is not given one (the pytest plugin sets it).
_default_save_dir = None


def set_reproducer_dir(path):
    """Where assert_kernel saves reproducers when no `save` is given (None: a new temporary
    folder per call)."""
    global _default_save_dir
    _default_save_dir = None if path is None else os.fspath(path)


def _kernel_name(fn, name):
    if name is not None:
        return name
    base = re.sub(r"[^A-Za-z0-9_]", "_", getattr(fn, "__name__", "") or "kernel").strip("_") or "kernel"
    return "assert_" + base


def _save_dir(save, name):
    if save is not None:
        d = os.fspath(save)
    elif _default_save_dir is not None:
        d = os.path.join(_default_save_dir, name)
    else:
        return tempfile.mkdtemp(prefix="softmax_lab-%s-" % name)
    os.makedirs(d, exist_ok=True)
    return d


def _repro_message(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data.get("message") or ""
    except (OSError, ValueError, AttributeError):
        return ""


def _failure_lines(result):
    """(run, failure) pairs of every failed property, the minimal (smallest shrunk shape,
    'agreement' first on a tie: its message has got / want / bound) first."""
    pairs = [(run, f) for run in result.get("runs", []) for f in (run.get("failures") or [])]
    pairs.sort(key=lambda rf: (rf[1].get("shrunk_rows", 0) * rf[1].get("shrunk_cols", 0),
                               rf[1].get("property") != "agreement"))
    return pairs


def _describe(name, result, save):
    runs = result.get("runs", [])
    head = "softmax_lab.testing.assert_kernel: kernel %r failed the property suite (seed %s)" % (
        name, result.get("seed", "?"))
    pairs = _failure_lines(result)
    lines = [head]
    if pairs:
        run, f = pairs[0]
        msg = _repro_message(f.get("reproducer", ""))
        lines += [
            "minimal failing case: property %s, %s %s, %dx%d (shrunk from %dx%d, case %s level %s)" % (
                f.get("property"), run.get("op"), run.get("dtype"), f.get("shrunk_rows", 0),
                f.get("shrunk_cols", 0), f.get("rows", 0), f.get("cols", 0), f.get("case"), f.get("level")),
            "  %s" % (msg or "(the reproducer holds the inputs)"),
            "  reproducer: %s" % f.get("reproducer"),
        ]
        others = ["%s (%s %s)" % (g.get("property"), r.get("op"), r.get("dtype")) for r, g in pairs[1:]]
        if others:
            lines.append("also failed: %s; their reproducers are in %s" % (", ".join(others), save))
    declared = sorted({r["declared_deviation"] for r in runs if r.get("declared_deviation")})
    if declared:
        lines.append("its declared deviation (%s): %s" % (
            "not applied: strict" if result.get("strict") else "each failure above is outside it",
            "; ".join(declared)))
    for run in runs:
        if run.get("verdict", "PASS") not in ("PASS", "FAIL") or (
                run.get("verdict") == "FAIL" and not run.get("failures")):
            lines.append("%s %s: %s%s" % (run.get("op"), run.get("dtype"),
                                          run.get("verdict") or run.get("outcome"),
                                          " (%s)" % run["note"] if run.get("note") else ""))
    if len(lines) == 1:
        lines.append("exit %s: %s" % (result.exit, json.dumps(dict(result))[:2000]))
    return "\n".join(lines)


def _declared(result):
    """The declared terms the runs needed (those that excused a miss), "; "-joined, or ""."""
    terms = []
    for r in result.get("runs", []):
        if r.get("declared_deviation") and r.get("excused") and r["declared_deviation"] not in terms:
            terms.append(r["declared_deviation"])
    return "; ".join(terms)


def assert_kernel(fn, ops, dtypes, device=None, cases=None, seed=None, against=None, name=None,
                  save=None, props=None, min_cols=1, max_cols=0, extra=(), deviation=None,
                  known_deviation=None, strict=False):
    """Raise AssertionError unless fn(op, x, dy, out) passes the property suite on every op and
    dtype given (and, with against="BASE", is not less accurate than BASE on the same cases).
    deviation and known_deviation: as softmax_lab.register's, a declared deviation (a bound
    the checker applies; a pass within it says so) and its label (which excuses nothing);
    strict=True holds the kernel to the contract itself. Returns the check's Result when it
    passes; its .declared names the declared deviation the pass needed ("" for none)."""
    name = _kernel_name(fn, name)
    if against is not None and not isinstance(against, str):
        raise TypeError("softmax_lab.testing.assert_kernel: against must be a kernel name, not %r" % (against,))
    _register.register(name, fn, ops, dtypes, device=device, min_cols=min_cols, max_cols=max_cols,
                       deviation=deviation, known_deviation=known_deviation)
    try:
        d = _save_dir(save, name)
        more = ["--save", d] + (["--against", against] if against else []) + list(extra)
        result = api.check(kernels=name, cases=cases, seed=seed, props=props, extra=more, strict=strict)
    finally:
        _register.unregister(name)
    result.declared = _declared(result)
    if result.exit == 0:
        if result.declared:
            print("softmax_lab.testing.assert_kernel: %r PASS within its declared deviation: %s"
                  % (name, result.declared))
        return result
    runs = result.get("runs", [])
    if result.exit == 3 and all(r.get("verdict", "SKIP") == "SKIP" for r in runs):
        raise unittest.SkipTest("softmax_lab: kernel %r could not run here: %s" % (
            name, "; ".join("%s %s: %s" % (r.get("op"), r.get("dtype"), r.get("note") or r.get("outcome"))
                            for r in result.get("runs", [])) or "nothing was checked"))
    raise AssertionError(_describe(name, result, d))
