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
