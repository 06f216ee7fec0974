"""pytest tests of `python3 -m softmax_lab audit` / softmax_lab.audit(), on the CPU:

* a planted kernel that rounds softmax_bwd's sum(y * dy) to the 16-bit dtype (planted_audit.py)
  gives findings: each with its reproducer's .out.npy and .fp32ref.npy, a CPU judgment line that
  fails when run, an fp32-intermediate column within the bound where the kernel is not, and
  replay and strict rerun lines that still fail;
* a C plugin kernel (tests/plugins, h14_15) runs again through check --input, judged the same;
* a correct kernel (the numpy backend, fp32) gives exit 0 and no finding;
* a bad option exits 2 naming it, with nothing written; no framework backend that can run
  exits 3, naming each and why, with nothing written;
* a write that fails leaves the old file and exits non-zero.

Run by ctest (test_python_audit, through run_pytest.py). Reproduce a failure with:
    ctest --test-dir BUILD -R test_python_audit --output-on-failure
"""
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

import planted_audit
import softmax_lab
from softmax_lab import auditing

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
REPRO = "ctest --test-dir BUILD -R test_python_audit --output-on-failure (or: python3 -m pytest -v %s)" % __file__


def cli_env(**extra):
    """The environment of a `python3 -m softmax_lab` child: this package, the planted module."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(SOURCE, "python"), HERE]),
               PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def run_cli(args, cwd, **env):
    p = subprocess.run([sys.executable, "-m", "softmax_lab"] + list(args), cwd=str(cwd), env=cli_env(**env),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def shown(line):
    """line as a user reruns it by hand: with the environment this test gave it."""
    env = cli_env()
    return "cd %s && PYTHONPATH=%s SML_LIBRARY_DIR=%s %s" % (os.getcwd(), env["PYTHONPATH"],
                                                           env.get("SML_LIBRARY_DIR", ""), line)


def run_line(line, cwd, **env):
    """A command line the findings table prints, run as a user would."""
    p = subprocess.run(shlex.split(line), cwd=str(cwd), env=cli_env(**env), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    return p.returncode, p.stdout


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """One audit of the planted kernel, shared by the tests that read its findings."""
    out = tmp_path_factory.mktemp("audit") / "planted"
    r = softmax_lab.audit(kernels=planted_audit.NAME, cases=30, out=out)
    return r, out


def test_planted_kernel_gives_findings(planted):
    r, out = planted
    assert r.exit == 1, "planted kernel: audit exit %d, want 1 (findings): %s; reproduce: %s" % (r.exit, r, REPRO)
    with open(out / "findings.json") as f:
        doc = json.load(f)
    assert doc["schema"] == auditing.SCHEMA and doc["exit"] == 1 and doc["findings"], (doc, REPRO)
    assert (out / "findings.md").read_text().count("| %s |" % planted_audit.NAME) >= len(doc["findings"]), REPRO
    assert {f["dtype"] for f in doc["findings"]} == {"fp16", "bf16"}, (doc["findings"], REPRO)
    assert {(x["kernel"], x["op"], x["verdict"]) for x in doc["runs"]} == {
        (planted_audit.NAME, "softmax_bwd", "FAIL")}, (doc["runs"], REPRO)


def test_saved_reproducers_are_examined_again(planted, tmp_path):
    """--reproducers: steps 3 and 4 on an earlier audit's reproducers, no property suite: the
    same findings, judged the same, the outputs written beside the copies."""
    r, out = planted
    assert r["findings"], "the planted kernel gave no finding; reproduce: %s" % REPRO
    saved = tmp_path / "saved"
    shutil.copytree(str(out / "reproducers"), str(saved))
    for f in saved.iterdir():  # only the reproducers and their inputs travel
        if f.name.endswith((".out.npy", ".fp32ref.npy", ".out.npy.dtype", ".fp32ref.npy.dtype")):
            f.unlink()
    again = softmax_lab.audit(reproducers=saved, out=tmp_path / "again")
    assert again.exit == 1 and not os.path.exists(str(tmp_path / "again" / "check.json")), (again, REPRO)
    got = sorted((f["op"], f["dtype"], f["property"], f["kernel_judged"]["verdict"], f["fp32_judged"]["verdict"])
                 for f in again["findings"])
    want = sorted((f["op"], f["dtype"], f["property"], f["kernel_judged"]["verdict"], f["fp32_judged"]["verdict"])
                  for f in r["findings"])
    assert got == want, "--reproducers: %s, the audit's own: %s; reproduce: %s" % (got, want, REPRO)
    assert all(f["output"].startswith(str(saved)) for f in again["findings"]), REPRO
    assert softmax_lab.auditing.main(["--reproducers", str(tmp_path / "none")]) == 2, REPRO


def test_each_finding_is_judged_from_its_files(planted):
    r, out = planted
    assert r["findings"], "the planted kernel gave no finding; reproduce: %s" % REPRO
    for f in r["findings"]:
        where = "finding %s %s %s (%s); reproduce: %s" % (f["op"], f["dtype"], f["property"], f["reproducer"], REPRO)
        assert f["reproducer"].startswith(str(out / "reproducers")), where
        assert os.path.isfile(f["output"]) and f["output"].endswith(".out.npy"), where
        assert os.path.isfile(f["fp32ref"]) and f["fp32ref"].endswith(".fp32ref.npy"), where
        if f["dtype"] == "bf16":  # bf16 bits as uint16, named by the sidecar the C reader takes
            assert open(f["output"] + ".dtype").read().strip() == "bf16", where
        k, ref = f["kernel_judged"], f["fp32_judged"]
        assert k["verdict"] == "FAIL" and k["ratio"] > 1, "%s: the kernel's output: %s" % (where, k)
        assert ref["verdict"] == "PASS" and ref["ratio"] <= 1, "%s: the fp32-intermediate output: %s" % (where, ref)
        assert f["reading"].startswith("worse than fp32 intermediates"), where


def test_cpu_judgment_lines_reproduce_the_fail(planted):
    r, out = planted
    assert r["findings"], "the planted kernel gave no finding; reproduce: %s" % REPRO
    for f in r["findings"]:
        rc, text = run_line(f["judge_cpu"], os.getcwd())
        assert rc == 1 and "verdict: FAIL" in text, "exit %d, want 1:\n%s\nreproduce: %s" % (
            rc, text, shown(f["judge_cpu"]))


def test_replay_line_still_fails(planted):
    r, out = planted
    assert r["findings"], "the planted kernel gave no finding; reproduce: %s" % REPRO
    f = r["findings"][0]
    assert "--trust-reproducer" in f["replay_gpu"], f
    rc, text = run_line(f["replay_gpu"], os.getcwd())
    assert rc == 1 and "STILL FAILS" in text, "exit %d, want 1:\n%s\nreproduce: %s" % (rc, text, shown(f["replay_gpu"]))


def test_strict_rerun_line_still_fails(planted):
    r, out = planted
    drawn = [f for f in r["findings"] if f["case"] >= 0]
    assert drawn and all(f["rerun_strict_gpu"] for f in drawn), (r["findings"], REPRO)
    line = drawn[0]["rerun_strict_gpu"]
    assert line.endswith("--strict"), line
    rc, text = run_line(line, os.getcwd())
    assert rc == 1, "exit %d, want 1:\n%s\nreproduce: %s" % (rc, text, shown(line))


def test_c_plugin_kernel_runs_again_through_check_input(tmp_path):
    # h14_15 (tests/plugins/plugin_deviant.c): an fp16 softmax up to 1.4 ulp off, declaring 1.5
    # ulp; --strict holds it to the contract. A C kernel runs again through check --input.
    lib = os.path.join(os.path.dirname(os.environ["SML_LIBRARY_DIR"]), "tests", "plugins", "lib", "plug_h14_15.so")
    assert os.path.isfile(lib), "no %s: build the tests (cmake --build BUILD); reproduce: %s" % (lib, REPRO)
    r = softmax_lab.audit(kernels="h14_15", ops="softmax", dtypes="fp16", cases=20, out=tmp_path / "h14", load=[lib])
    assert r.exit == 1 and r["findings"], "h14_15: exit %d, findings %s; reproduce: %s" % (
        r.exit, r.get("findings"), REPRO)
    # Under --strict the rerun in a fresh worker is judged strictly too (a FAIL, not FLAKY); a
    # saved regression that fails again is not rerun.
    with open(r["check_json"]) as fh:
        runs = json.load(fh)["runs"]
    reruns = [(fl["case"] >= 0, fl["rerun"]) for run in runs for fl in run["failures"]]
    assert {run["verdict"] for run in runs} == {"FAIL"} and reruns, (runs, REPRO)
    assert all(rerun == ("failed again" if drawn else "not rerun") for drawn, rerun in reruns), (reruns, REPRO)
    for f in r["findings"]:
        where = "finding %s (%s); reproduce: %s" % (f["property"], f["reproducer"], REPRO)
        assert f["version"].startswith("plugin %s" % lib), where
        assert os.path.isfile(f["output"]) and f["kernel_judged"]["verdict"] == "FAIL", (f["kernel_judged"], where)
        assert f["fp32_judged"]["verdict"] == "PASS", (f["fp32_judged"], where)
    rc, text = run_line(r["findings"][0]["judge_cpu"], os.getcwd())
    assert rc == 1, "exit %d, want 1:\n%s\nreproduce: %s" % (rc, text, shown(r["findings"][0]["judge_cpu"]))


def test_correct_kernel_gives_no_finding(tmp_path):
    out = tmp_path / "numpy"
    r = softmax_lab.audit(kernels="numpy", dtypes="fp32", cases=20, out=out)
    assert r.exit == 0 and r["findings"] == [], "numpy fp32: exit %d, findings %s; reproduce: %s" % (
        r.exit, r.get("findings"), REPRO)
    assert "No finding" in (out / "findings.md").read_text(), REPRO
    assert json.loads((out / "findings.json").read_text())["exit"] == 0, REPRO
    assert {x["verdict"] for x in r["runs"]} == {"PASS"} and len(r["runs"]) == 4, (r["runs"], REPRO)


@pytest.mark.parametrize("args,named", [
    (["--cases", "0"], "--cases"), (["--cases", "many"], "--cases"), (["--seed", "-1"], "--seed"),
    (["--kernel", "no_such_kernel"], "--kernel"), (["--dtype", "fp64"], "--dtype"), (["--op", "softmx"], "--op"),
    (["--md", "/no/such/folder/f.md"], "--md"), (["--bogus", "1"], "--bogus"), (["--cases"], "--cases"),
])
def test_bad_option_exits_2_and_writes_nothing(tmp_path, args, named):
    out = tmp_path / "out"
    kernel = [] if "--kernel" in args else ["--kernel", "numpy"]
    rc, stdout, err = run_cli(["audit", "--out", str(out)] + kernel + args, tmp_path)
    assert rc == 2 and named in err, "audit %s: exit %d, stderr %r; reproduce: %s" % (" ".join(args), rc, err, REPRO)
    assert not out.exists() and os.listdir(str(tmp_path)) == [], "audit %s wrote %s; reproduce: %s" % (
        " ".join(args), os.listdir(str(tmp_path)), REPRO)


def test_bad_argument_of_the_call_raises(tmp_path):
    with pytest.raises(ValueError, match="cases"):
        softmax_lab.audit(kernels="numpy", cases=0, out=tmp_path / "a")
    with pytest.raises(TypeError, match="cases"):
        softmax_lab.audit(kernels="numpy", cases="10", out=tmp_path / "a")
    with pytest.raises(ValueError, match="no_such_kernel"):
        softmax_lab.audit(kernels="no_such_kernel", out=tmp_path / "a")
    assert os.listdir(str(tmp_path)) == [], REPRO


def test_no_framework_exits_3_and_writes_nothing(tmp_path):
    # Every framework made unimportable, and no GPU visible (cudnn cannot run, where it is built).
    hide = tmp_path / "hide"
    hide.mkdir()
    for mod in ("torch", "triton", "liger_kernel"):
        (hide / (mod + ".py")).write_text("raise ImportError('hidden by test_audit')\n")
    env = cli_env(CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join([str(hide), env["PYTHONPATH"]])
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "softmax_lab", "audit", "--out", str(out)], cwd=str(tmp_path), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert p.returncode == 3, "audit with no framework: exit %d, stderr %r; reproduce: %s" % (
        p.returncode, p.stderr, REPRO)
    for what in ("torch_ops", "triton_softmax", "liger_ops", "cudnn"):
        assert what in p.stderr, "exit 3 must say why %s did not run: %r; reproduce: %s" % (what, p.stderr, REPRO)
    assert not out.exists(), REPRO


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    old = {tmp_path / "a.md": b"old a", tmp_path / "b.json": b"old b"}
    for path, data in old.items():
        path.write_bytes(data)
    real_stage = auditing._stage

    def stage_fails_on_b(path, data):
        if path.endswith("b.json"):
            raise OSError(28, "No space left on device", path)
        return real_stage(path, data)

    monkeypatch.setattr(auditing, "_stage", stage_fails_on_b)
    with pytest.raises(OSError):
        auditing.write_atomic({str(p): b"new" for p in old})
    assert {p.name: p.read_bytes() for p in old} == {"a.md": b"old a", "b.json": b"old b"}, REPRO
    assert sorted(os.listdir(str(tmp_path))) == ["a.md", "b.json"], "temporaries left: %s; reproduce: %s" % (
        os.listdir(str(tmp_path)), REPRO)


def test_failed_findings_write_exits_non_zero(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.md").write_text("old table\n")
    real = auditing.write_atomic

    def md_fails(files):
        if any(str(p).endswith("findings.md") for p in files):
            raise OSError(28, "No space left on device", str(out / "findings.md"))
        return real(files)

    monkeypatch.setattr(auditing, "write_atomic", md_fails)
    rc = auditing.main(["--kernel", "numpy", "--dtype", "fp32", "--op", "softmax", "--cases", "5", "--out", str(out)])
    assert rc == 2 and (out / "findings.md").read_text() == "old table\n", "exit %d; reproduce: %s" % (rc, REPRO)
