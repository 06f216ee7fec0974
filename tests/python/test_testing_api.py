"""pytest tests of softmax_lab.testing.assert_kernel and of the pytest plugin: a right numpy
softmax passes; one without the max subtraction fails with an AssertionError that names the
minimal failing case, its property, got / want / bound and a reproducer that exists under
pytest's temporary directory; a test sees the `softmax_lab` fixture.

Run by ctest (test_python_testing_api, through run_pytest.py) and by .ci/run from outside the
source tree against the pip-installed package. Reproduce a failure with:
    python3 -m pytest -v tests/python/test_testing_api.py
"""
import os
import re

import numpy as np
import pytest

from softmax_lab.testing import assert_kernel


def right(op, x, dy, out):
    """numpy softmax: the max subtracted, fp32 work"""
    with np.errstate(all="ignore"):  # rows of -inf and NaN are among the cases
        v = x.astype(np.float32)
        e = np.exp(v - v.max(axis=1, keepdims=True))
        out[...] = e / e.sum(axis=1, keepdims=True, dtype=np.float32)


def no_max(op, x, dy, out):
    """numpy softmax without the max subtraction: exp overflows on large logits"""
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float32))
        out[...] = e / e.sum(axis=1, keepdims=True)


def test_right_kernel_passes():
    r = assert_kernel(right, ops=["softmax"], dtypes=["fp32"], device="cpu", cases=300, seed=1,
                      extra=["--regressions", "none"])
    assert r.exit == 0


def test_no_max_kernel_fails_with_its_reproducer(tmp_path_factory):
    with pytest.raises(AssertionError) as info:
        assert_kernel(no_max, ops=["softmax"], dtypes=["fp32"], device="cpu", cases=300, seed=1,
                      extra=["--regressions", "none"])
    msg = str(info.value)
    assert "kernel 'assert_no_max'" in msg
    assert re.search(r"minimal failing case: property \w+, softmax fp32, 1x1 ", msg), msg
    assert "got" in msg and "want" in msg and "bound" in msg, msg
    path = re.search(r"reproducer: (\S+\.json)", msg).group(1)
    assert os.path.isfile(path), msg
    base = str(tmp_path_factory.getbasetemp())
    assert path.startswith(base), "reproducer %s is not under pytest's tmp dir %s" % (path, base)


def test_kernel_is_unregistered_after(softmax_lab):
    with pytest.raises(AssertionError):
        assert_kernel(no_max, ops=["softmax"], dtypes=["fp32"], device="cpu", cases=50,
                      extra=["--regressions", "none"])
    assert "assert_no_max" not in softmax_lab.registered()


def test_fixture_saves_in_the_tests_folder(softmax_lab, tmp_path):
    with pytest.raises(AssertionError) as info:
        softmax_lab.assert_kernel(no_max, ops="softmax", dtypes="fp32", device="cpu", cases=50,
                                  extra=["--regressions", "none"])
    path = re.search(r"reproducer: (\S+\.json)", str(info.value)).group(1)
    assert path.startswith(str(tmp_path)), path
    softmax_lab.register("fixture_right", right, ops="softmax", dtypes="fp32", device="cpu")
    assert softmax_lab.check(kernels="fixture_right", cases=50, extra=["--regressions", "none"]).exit == 0


def test_fixture_unregistered_what_the_last_test_registered(softmax_lab):
    assert "fixture_right" not in softmax_lab.registered()


def test_usage_error_is_an_exception():
    with pytest.raises(TypeError, match="device"):
        assert_kernel(no_max, ops=["softmax"], dtypes=["fp32"])
    with pytest.raises(ValueError, match="dtypes"):
        assert_kernel(right, ops=["softmax"], dtypes=["fp64"], device="cpu")


# ---- declared deviations: a bound the checker applies, never a pass ---------------------------

def garbage(op, x, dy, out):
    """writes 0.5 into every output"""
    out[...] = 0.5


def half_off(op, x, dy, out):
    """fp16 softmax 1 to 1.4 ulp off on some outputs (tests/plugins/plugin_deviant.c's rule): the
    exact value y cut to F, the largest fp16 <= y; the fp16 below F where y is within 0.4 ulp
    above F, else F. Monotonic and shift-invariant: only the values are off."""
    with np.errstate(all="ignore"):
        v = x.astype(np.float64)
        bad = np.isnan(v).any(axis=1) | (v == np.inf).any(axis=1) | (v == -np.inf).all(axis=1)
        e = np.exp(v - v.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
        y[bad] = 0.0
        f = y.astype(np.float16)
        f = np.where(f.astype(np.float64) > y, np.nextafter(f, np.float16(-np.inf)), f)
        _, ex = np.frexp(y)
        ulp = np.where(y >= 2.0 ** -14, np.ldexp(1.0, ex - 11), 2.0 ** -24)
        low = (y - f.astype(np.float64) <= 0.4 * ulp) & (f > 0)
        r = np.where(low, np.nextafter(f, np.float16(-np.inf)), f)
        r[bad] = np.nan
        out[...] = r


DECLARED_15 = {"ulps": {"softmax": {"fp16": 1.5}}}


def test_garbage_with_a_label_fails_and_warns():
    with pytest.warns(RuntimeWarning, match="excuse nothing"):
        with pytest.raises(AssertionError):
            assert_kernel(garbage, ops=["softmax"], dtypes=["fp32"], device="cpu", cases=100, seed=1,
                          known_deviation="fp32 results not correctly rounded (<= 2 ulp)",
                          extra=["--regressions", "none"])


def test_garbage_declaring_a_bound_fails_naming_it():
    with pytest.raises(AssertionError) as info:
        assert_kernel(garbage, ops=["softmax"], dtypes=["fp32"], device="cpu", cases=100, seed=1,
                      deviation={"ulps": {"softmax": {"fp32": 2}}}, extra=["--regressions", "none"])
    assert "its declared deviation (each failure above is outside it): softmax fp32 <= 2 ulp" in str(info.value)


def test_half_off_passes_within_its_declared_deviation(capfd):
    r = assert_kernel(half_off, ops=["softmax"], dtypes=["fp16"], device="cpu", cases=300, seed=1,
                      deviation=DECLARED_15, extra=["--regressions", "none"])
    assert r.exit == 0 and r.declared == "softmax fp16 <= 1.5 ulp", r.declared
    run = r["runs"][0]
    assert run["excused"] > 0 and 1.3 < run["excused_worst_ulps"] <= 1.4 + 1e-6, run
    out = capfd.readouterr().out
    assert "PASS within its declared deviation: softmax fp16 <= 1.5 ulp (" in out, out  # check's line
    assert "'assert_half_off' PASS within its declared deviation: softmax fp16 <= 1.5 ulp\n" in out, out


@pytest.mark.parametrize("declared", [None, {"ulps": {"softmax": {"fp16": 1.0}}}])
def test_half_off_fails_without_a_wide_enough_declaration(declared):
    with pytest.raises(AssertionError):
        assert_kernel(half_off, ops=["softmax"], dtypes=["fp16"], device="cpu", cases=200, seed=1,
                      deviation=declared, extra=["--regressions", "none"])


def test_strict_refuses_the_declaration():
    with pytest.raises(AssertionError) as info:
        assert_kernel(half_off, ops=["softmax"], dtypes=["fp16"], device="cpu", cases=200, seed=1,
                      deviation=DECLARED_15, strict=True, extra=["--regressions", "none"])
    assert "not applied: strict" in str(info.value)


def test_bad_declaration_is_a_usage_error(softmax_lab):
    with pytest.raises(ValueError, match="unknown exception 'nope'"):
        softmax_lab.register("bad_dev", half_off, ops="softmax", dtypes="fp16", device="cpu",
                             deviation={"exceptions": ["nope"]})
    with pytest.raises(ValueError, match="does not run"):
        softmax_lab.register("bad_dev", half_off, ops="softmax", dtypes="fp16", device="cpu",
                             deviation={"ulps": {"softmax": {"bf16": 1.5}}})
    with pytest.raises(ValueError, match="tighter than the contract"):
        softmax_lab.register("bad_dev", half_off, ops="softmax", dtypes="fp16", device="cpu",
                             deviation={"bound_factor": {"softmax": {"fp16": 0.5}}})
