"""pytest test of the findings of docs/FINDINGS.md (tests/findings), on the CPU: each shrunk
input and the framework kernel's output saved from the GPU are judged again by the C checker
(`check --input --output`), as a user on a machine without that framework would: the kernel's
verdict, error against the bound and ulps as recorded, and the same op with fp32 intermediates
within the bound. A change to the checker or the contract that moves a finding fails here and
says which. Where the finding's kernel runs (a GPU with the framework), it runs again on the
saved inputs and its output must be judged as recorded; elsewhere that part skips.

Run by ctest (test_python_findings, through run_pytest.py). Reproduce a failure with:
    ctest --test-dir BUILD -R test_python_findings --output-on-failure
"""
import json
import math
import os
import shutil
import tempfile

import pytest

from softmax_lab import auditing

HERE = os.path.dirname(os.path.abspath(__file__))
FINDINGS = os.path.join(os.path.dirname(HERE), "findings")
REPRO = "ctest --test-dir BUILD -R test_python_findings --output-on-failure (or: python3 -m pytest -v %s)" % __file__

with open(os.path.join(FINDINGS, "findings.json")) as _f:
    MANIFEST = json.load(_f)["findings"]


def same(got, want):
    want = float(want)
    if math.isinf(want):
        return math.isinf(got)
    return abs(got - want) <= 1e-9 * max(1.0, abs(want))


def files(stem):
    with open(os.path.join(FINDINGS, stem + ".json")) as f:
        rep = json.load(f)
    path = lambda name: os.path.join(FINDINGS, name)  # noqa: E731
    dy = path(rep["dy"]) if rep["op"].endswith("_bwd") else None
    return rep, path(rep["x"]), dy


def test_manifest_names_every_reproducer():
    stems = {f[:-5] for f in os.listdir(FINDINGS) if f.endswith(".json") and f != "findings.json"}
    assert stems == {m["finding"] for m in MANIFEST}, "tests/findings: reproducers %s, manifest %s; %s" % (
        sorted(stems), sorted(m["finding"] for m in MANIFEST), REPRO)


@pytest.mark.parametrize("m", MANIFEST, ids=[m["finding"] for m in MANIFEST])
def test_finding_judged_again_from_its_files(m):
    rep, x, dy = files(m["finding"])
    assert (rep["kernel"], rep["op"], rep["dtype"], rep["property"]) == (
        m["kernel"], m["op"], m["dtype"], m["property"]), (rep, m, REPRO)
    for which, suffix in (("kernel_judged", ".out.npy"), ("fp32_judged", ".fp32ref.npy")):
        out = os.path.join(FINDINGS, m["finding"] + suffix)
        got = auditing.judge(x, out, m["op"], m["dtype"], dy)
        want = m[which]
        where = "%s %s: %s, recorded %s; %s" % (m["finding"], which, got, want, REPRO)
        assert got["verdict"] == want["verdict"], where
        assert same(got["ratio"], want["ratio"]) and same(got["ulps"], want["ulps"]), where
    assert m["fp32_judged"]["verdict"] == "PASS", "%s: fp32 intermediates miss the bound; %s" % (m, REPRO)


def _gpu_kernels():
    """The finding kernels registered here that can run (a GPU, their framework importable)."""
    try:
        from softmax_lab.backends import register_all
        register_all()
        table = auditing._registry()
    except Exception:  # no library build or no framework: nothing to replay here
        return {}
    return {k: v for k, v in table.items() if not v["why"]}


@pytest.mark.parametrize("m", MANIFEST, ids=[m["finding"] for m in MANIFEST])
def test_finding_replays_on_the_framework(m):
    """Where the finding's kernel runs (a GPU with the framework), its output on the saved
    inputs is judged as recorded: a framework release that fixed or moved the finding shows
    here, by name."""
    table = _gpu_kernels()
    if m["kernel"] not in table or table[m["kernel"]]["device"] != "gpu":
        pytest.skip("%s cannot run here" % m["kernel"])
    rep, x, dy = files(m["finding"])
    names = {k: os.path.join(FINDINGS, rep[k]) for k in ("x", "dy", "logits") if isinstance(rep.get(k), str)}
    out, why = auditing.rerun(m["kernel"], "gpu", rep, names)
    assert out is not None, "%s: %s; %s" % (m["finding"], why, REPRO)
    path = os.path.join(tempfile.mkdtemp(prefix="softmax_lab-findings-"), m["finding"] + ".out.npy")
    try:
        auditing.save_npy(path, out, m["dtype"])
        got = auditing.judge(x, path, m["op"], m["dtype"], dy)
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    assert got["verdict"] == m["kernel_judged"]["verdict"], "%s on this GPU: %s, recorded %s; %s" % (
        m["finding"], got, m["kernel_judged"], REPRO)
