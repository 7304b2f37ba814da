"""The usage rules (PF107-PF110, PF209) on their fixtures, through the real CLI: each
testdata/<ID>/<fixture>.yaml is checked with its usage files (<fixture>.<kind>.json,
<fixture>.usage.json bundles, <fixture>.usage.txt kubectl top output); a fail_ fixture's findings,
of every rule, are compared whole with <fixture>.expected.json, a pass_ fixture has none."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.catalogue import get_rule
from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
RULES = ("PF107", "PF108", "PF109", "PF110", "PF209")
FIXTURES = sorted(p for r in RULES for p in (ROOT / "testdata" / r).glob("*.yaml"))
UPDATE = os.environ.get("PODFIT_UPDATE_EXPECTED") == "1"


def usage_files(fixture: Path) -> list[Path]:
    return sorted(
        p
        for p in fixture.parent.glob(fixture.stem + ".*")
        if p.suffix != ".yaml" and not p.name.endswith(".expected.json")
    )


def check(fixture: Path, *extra: str):
    args = ["check", str(fixture.relative_to(ROOT)), "--format", "json", "--engine", "embedded", "--fail-on", "never"]
    for u in usage_files(fixture):
        args += ["--usage", str(u.relative_to(ROOT))]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        res = CliRunner().invoke(main, args + list(extra), catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res.stderr


def test_every_usage_rule_has_pass_and_fail_fixtures_with_usage():
    for r in RULES:
        names = [p.name for p in (ROOT / "testdata" / r).glob("*.yaml")]
        assert any(n.startswith("pass_") for n in names) and any(n.startswith("fail_") for n in names), r
    for f in FIXTURES:
        assert usage_files(f), f


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path):
    rule = path.parent.name
    report, _ = check(path)
    assert not [s for s in report["skipped_rules"] if s["rule"] in RULES]
    findings = [{k: v for k, v in f.items() if k != "fix"} for f in report["findings"]]
    if path.name.startswith("pass_"):
        assert findings == []
        return
    assert findings and {f["rule"] for f in findings} == {rule}
    assert {f["severity"] for f in findings} == {get_rule(rule).severity}
    expected = path.with_name(path.stem + ".expected.json")
    if UPDATE:
        expected.write_text(json.dumps(findings, indent=1, sort_keys=True) + "\n")
    assert findings == json.loads(expected.read_text())


def test_usage_rules_are_skipped_without_usage():
    res = CliRunner().invoke(
        main, ["check", str(FIXTURES[0]), "--format", "json", "--fail-on", "never"], catch_exceptions=False
    )
    skipped = {s["rule"]: s["reason"] for s in json.loads(res.stdout)["skipped_rules"]}
    assert all("--usage" in skipped[r] for r in RULES)


def test_unmatched_series_are_reported():
    """The PF110 kubectl top output measures coredns too, which no manifest here declares; and one
    snapshot is too few samples for the percentile rules, which the notice says with what to do."""
    fixture = ROOT / "testdata/PF110/pass_one_top_snapshot.yaml"
    report, stderr = check(fixture)
    assert "usage: 2 containers of the manifests measured" in stderr
    assert (
        "usage: 1 measured container matches no container of the manifests: kube-system/coredns-5d78c9869d-8xk2p/coredns"
        in stderr
    )
    assert (
        "usage: 2 of them measured in fewer than 10 samples (a kubectl top snapshot is one sample per pod: "
        "a point, not a distribution): the rules on percentiles (PF108, PF109, PF110) leave them out; "
        "`podfit usage export --prometheus URL` gives a range of samples"
    ) in stderr
    assert report["usage"]["unmatched"] == ["kube-system/coredns-5d78c9869d-8xk2p/coredns"]
    assert report["usage"]["ambiguous"] == []
    assert [c["container"] for c in report["usage"]["containers"]] == ["app", "istio-proxy"]


def test_options_move_the_thresholds(tmp_path):
    """PF107's headroom: the 1Gi limit is 46% above the 700Mi peak; asking for 50% makes it fire."""
    config = tmp_path / ".podfit.yaml"
    config.write_text("thresholds: {PF107: {headroom-percent: 50}}\n")
    report, _ = check(ROOT / "testdata/PF107/pass_room_above_peak.yaml", "--config", str(config))
    assert [f["message"] for f in report["findings"]] == [
        'container "app": memory limit 1Gi leaves less than 50% above the measured peak 700Mi '
        "(p50 455Mi, p95 700Mi, p99 700Mi, max 700Mi over 11h, 12 samples, 1 pod): expect OOM kills at the peak"
    ]


def test_measured_throttling_is_set_beside_the_simulated_one():
    """With the node size known (PF203's 256-CPU bare-metal node), PF209 quotes the simulator's
    prediction for the same 500m limit with PF203's assumptions (the default 200 threads; no CPU
    measured, so the 500m request as the demand): every period throttled, the score PF203 gives."""
    report, _ = check(
        ROOT / "testdata/PF209/fail_throttled_40_percent.yaml",
        "--platform",
        "testdata/PF203/platform.yaml",
        "--rule",
        "PF209",
    )
    (f,) = report["findings"]
    assert f["details"]["throttled_ppm"] == 400_000
    assert f["details"]["simulated"] == {
        "throttled_ppm": 1_000_000,
        "threads": 200,
        "demand": 500,
        "demand_from": "request",
        "node_logical_cpus": 256,
        "score": 93,
    }
    assert f["message"].endswith(
        "(the simulator predicts 100.0% for this limit with 200 threads, demand 500m (the request) "
        "on 256-CPU nodes, as PF203 simulates)"
    )
