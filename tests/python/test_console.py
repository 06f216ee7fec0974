"""test_python_console: the `softmax-lab` console script (and `python -m softmax_lab`) says
nothing on stderr unless something went wrong or --verbose asks; `list` names on stdout the
framework backends that are not available here, and why. Needs no numpy: this is what a user
of a fresh `pip install .` meets first. Exits 77 (skipped) where the shared libraries are
missing.

usage: test_console.py BUILD_DIR SOURCE_DIR
"""
import os
import subprocess
import sys

build, source = sys.argv[1], sys.argv[2]
env = dict(os.environ, PYTHONPATH=os.path.join(source, "python"), SML_LIBRARY_DIR=build,
           PYTHONDONTWRITEBYTECODE="1")
REPRO = "ctest --test-dir %s -R test_python_console --output-on-failure" % build
SCRIPT = ("import sys; sys.argv = ['softmax-lab'] + sys.argv[1:]; "
          "from softmax_lab.api import console_main; console_main()")
failed = 0


def run(*args):
    """The console script's main with args; (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-c", SCRIPT] + list(args), env=env, cwd=build,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def expect(ok, what, out=""):
    global failed
    if ok:
        print("ok: %s" % what)
        return
    failed += 1
    print("FAIL test_python_console: %s\n--- output ---\n%s\n---\n  reproduce: %s" % (what, out, REPRO))


rc, out, err = run("--version")
if rc == 2 and "libsoftmax_lab" in err:
    print("skip: %s" % err.strip())
    sys.exit(77)
expect(rc == 0 and not err, "softmax-lab --version: exit 0, nothing on stderr", out + err)
for args in (["--help"], ["list", "--help"], ["check", "--help"], ["bench", "--help"],
             ["list", "--json"],
             ["check", "--kernel", "cpu_naive", "--op", "softmax", "--dtype", "fp32", "--cases", "5",
              "--regressions", "none", "--in-process"]):
    rc, out, err = run(*args)
    expect(rc == 0 and not err, "softmax-lab %s: exit 0, nothing on stderr (exit %d)"
           % (" ".join(args), rc), err)

# What would not register here, as register_all() finds it, is what list names on stdout.
sys.path[:0] = [os.path.join(source, "python")]
os.environ["SML_LIBRARY_DIR"] = build
from softmax_lab.backends import register_all  # noqa: E402
_, skipped = register_all()
rc, out, err = run("list")
lines = [l for l in out.splitlines() if l.startswith("python backend ")]
expect(rc == 0 and not err and len(lines) == len(skipped)
       and all(("python backend %s: not available: " % name) in out for name in skipped),
       "list: exit 0, nothing on stderr, one stdout line per unavailable backend (%d: %s)"
       % (len(skipped), ", ".join(sorted(skipped))), out + err)
rc, out, err = run("--verbose", "check", "--help")
expect(rc == 0 and all(("python backend %s: not available" % name) in err for name in skipped),
       "--verbose check --help: the unavailable backends on stderr", err)
rc, out, err = run("check", "--op", "softmx")
expect(rc == 2 and "softmx" in err and "python backend" not in err,
       "a usage error: exit 2, its message on stderr and nothing else", err)
print("test_python_console: %d failed" % failed)
sys.exit(1 if failed else 0)
