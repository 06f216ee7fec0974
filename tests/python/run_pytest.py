"""run_pytest.py BUILD_LIB_DIR SOURCE_DIR TEST_FILE...: the pytest files of tests/python under
ctest, against the source tree's package and the build's libraries, with the plugin loaded as
the installed entry point would load it. Exits 77 (skipped, with the reason) where pytest or
numpy cannot be imported, or fails (1) there when SML_REQUIRE_PYTHON_TESTS is set (CI sets it:
a skip there would hide the Python path); pytest's "no tests ran" (5) is a failure, not a pass.
"""
import os
import sys

lib, source, files = sys.argv[1], sys.argv[2], sys.argv[3:]
for mod in ("pytest", "numpy"):
    try:
        __import__(mod)
    except ImportError:
        required = os.environ.get("SML_REQUIRE_PYTHON_TESTS")
        print("%s: %s is not installed (pip install %s)" % ("FAIL" if required else "skip", mod, mod))
        sys.exit(1 if required else 77)
import pytest  # noqa: E402

sys.path.insert(0, os.path.join(source, "python"))
os.environ["SML_LIBRARY_DIR"] = lib
os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(source, "python"), os.environ.get("PYTHONPATH", "")])


def plugin_installed():
    try:
        from importlib.metadata import entry_points
    except ImportError:
        return False
    eps = entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    return any(ep.name == "softmax_lab" for ep in group)


args = ["-v", "-p", "no:cacheprovider"] + ([] if plugin_installed() else ["-p", "softmax_lab.pytest_plugin"])
rc = pytest.main(args + files)
if rc == 5:
    print("run_pytest.py: no tests ran in %s" % files)
    rc = 1
if rc:
    print("reproduce: python3 -m pytest -v -p softmax_lab.pytest_plugin %s (PYTHONPATH=%s/python SML_LIBRARY_DIR=%s)"
          % (" ".join(files), source, lib))
sys.exit(int(rc))
