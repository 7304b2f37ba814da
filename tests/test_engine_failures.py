"""Engine failure paths: a missing, crashing or hanging opa, or a failing embedded engine, is exit 2
with the reason, and never a report that could be read as a pass."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OPA = ROOT / ".tools/bin/opa"
MANIFEST = str(ROOT / "testdata/examples/web-shop.yaml")
needs_opa = pytest.mark.skipif(not OPA.exists(), reason="opa not built (make tools)")


def podfit(*args, env=None, timeout=120):
    full = {"PYTHONPATH": str(ROOT / "analyzer"), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "podfit", *args], capture_output=True, text=True, env=full, timeout=timeout, cwd=ROOT
    )


def assert_failure(p, *needles):
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    assert p.stdout == ""  # no report at all, so nothing downstream mistakes it for a pass
    for n in needles:
        assert n in p.stderr, p.stderr


def test_opa_missing(tmp_path):
    p = podfit("check", MANIFEST, "--engine", "opa", env={"PODFIT_OPA": str(tmp_path / "no-opa")})
    assert_failure(p, "opa binary was not found", "no-opa")


@needs_opa
def test_opa_crashing(tmp_path):
    # the real opa, started with too little address space for the Go runtime: it dies at start-up
    wrapper = tmp_path / "opa"
    wrapper.write_text(f'#!/bin/sh\nulimit -v 50000\nexec {OPA} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    p = podfit("check", MANIFEST, "--engine", "opa", env={"PODFIT_OPA": str(wrapper)})
    assert_failure(p, "Rego engine failed")


@needs_opa
def test_opa_timing_out_is_killed(tmp_path):
    # opa under a path of this test's own, so that only its processes are looked for (other runs
    # of opa on the machine, a benchmark's say, are not this run's)
    opa = tmp_path / "opa-under-test"
    opa.symlink_to(OPA)
    # podfit's own timeout (120 s, in podfit() above) is only a hang guard: the message shows that the
    # 1 ms engine timeout fired, whatever the machine's load
    p = podfit("check", MANIFEST, "--engine", "opa", env={"PODFIT_OPA": str(opa), "PODFIT_OPA_TIMEOUT": "0.001"})
    assert_failure(p, "did not finish within")
    left = subprocess.run(["pgrep", "-f", f"{opa} eval"], capture_output=True, text=True).stdout.split()
    assert left == [], "opa eval processes were left running"


@needs_opa
def test_opa_rejecting_a_broken_policy():
    p = podfit(
        "check",
        MANIFEST,
        "--engine",
        "opa",
        env={"PODFIT_OPA": str(OPA), "PODFIT_POLICY_DIR": str(ROOT / "testdata/broken-policies")},
    )
    assert_failure(p, "Rego engine failed")


def test_embedded_engine_error():
    p = podfit(
        "check", MANIFEST, "--engine", "embedded", env={"PODFIT_POLICY_DIR": str(ROOT / "testdata/broken-policies")}
    )
    assert_failure(p, "Rego engine")


def test_bad_timeout_setting_is_a_usage_failure():
    p = podfit("check", MANIFEST, "--engine", "opa", env={"PODFIT_OPA_TIMEOUT": "soon"})
    assert_failure(p, "PODFIT_OPA_TIMEOUT")


@pytest.fixture
def stale_policies(tmp_path) -> Path:
    """The policies with one edit: not what the committed module was built from."""
    out = tmp_path / "policies"
    for path in (ROOT / "policies").rglob("*.rego"):
        target = out / path.relative_to(ROOT / "policies")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text() + ("\n# edited\n" if path.name == "k8s.rego" else ""))
    return out


def test_stale_policies_without_opa_fail_naming_make_wasm(stale_policies, tmp_path):
    p = podfit(
        "check", MANIFEST, env={"PODFIT_POLICY_DIR": str(stale_policies), "PODFIT_OPA": str(tmp_path / "no-opa")}
    )
    assert_failure(p, "Rego engine unavailable", str(stale_policies), "`make wasm`", "opa binary")
    # asked for the embedded engine: the same answer, opa or not
    p = podfit(
        "check",
        MANIFEST,
        "--engine",
        "embedded",
        env={"PODFIT_POLICY_DIR": str(stale_policies), "PODFIT_OPA": str(OPA)},
    )
    assert_failure(p, "`make wasm`", "--engine opa")


@needs_opa
def test_stale_policies_run_with_opa_and_a_notice(stale_policies):
    """auto with policies the module was not built from: opa runs them (the same findings as the
    module gives the committed policies), and stderr says so and how to rebuild; stdout is the report."""
    import json

    env = {"PODFIT_POLICY_DIR": str(stale_policies), "PODFIT_OPA": str(OPA)}
    p = podfit("check", MANIFEST, "--format", "json", env=env)
    assert p.returncode == 1, p.stderr  # the manifest has errors
    report = json.loads(p.stdout)
    assert report["engine"] == "opa"
    assert "podfit: notice:" in p.stderr and str(stale_policies) in p.stderr and "`make wasm`" in p.stderr
    fresh = podfit("check", MANIFEST, "--format", "json")
    assert json.loads(fresh.stdout)["engine"] == "embedded" and "notice" not in fresh.stderr
    assert report["findings"] == json.loads(fresh.stdout)["findings"]
