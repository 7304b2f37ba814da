"""PF203 throttling-simulated-high: fixtures, the PF202 pre-check, thread annotation, thresholds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.rules import throttling_simulated_high as pf203

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "testdata" / "PF203"
PLATFORM = FIXTURES / "platform.yaml"


def check(*paths, platform=PLATFORM, config=None):
    args = ["check", "--format", "json", "--rule", "PF203", "--fail-on", "never"]
    if platform:
        args += ["--platform", str(platform)]
    if config:
        args += ["--config", str(config)]
    res = CliRunner().invoke(main, args + [str(p) for p in paths], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def pf203_findings(doc):
    return [f for f in doc["findings"] if f["rule"] == "PF203"]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("fail_*.yaml")), ids=lambda p: p.name)
def test_fail_fixtures_fire(path):
    found = pf203_findings(check(path))
    assert found, f"{path.name}: PF203 should fire"
    for f in found:
        assert f["severity"] == "warning"
        assert f["details"]["score"] >= f["details"]["threshold"]
        assert f["details"]["node_logical_cpus"] == 256
        assert f["line"] > 1


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("pass_*.yaml")), ids=lambda p: p.name)
def test_pass_fixtures_are_silent(path):
    assert pf203_findings(check(path)) == []


def test_study_tomcat_details():
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml"))
    d = f["details"]
    assert d["cpu_limit"] == 1500 and d["slices"] == 30 and d["threads"] == 200
    assert d["threads_from_annotation"] is False
    assert d["throttled_per_period_s"] > 1.0
    assert "podfit.io/threads" in f["message"]


def test_same_workload_on_4_vcpu_tkg_nodes_is_not_simulated():
    # The study's TKG cluster: best-effort-xlarge nodes (4 vCPUs): 30 slices cover 4 CPUs.
    doc = check(FIXTURES / "fail_study_tomcat.yaml", platform=ROOT / "testdata" / "platforms" / "study-4-hosts.yaml")
    assert pf203_findings(doc) == []


def test_threshold_from_config(tmp_path):
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("thresholds:\n  PF203:\n    score: 99\n")
    assert pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml", config=cfg)) == []
    cfg.write_text("thresholds:\n  PF203:\n    score: 10\n    default-threads: 2\n")
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml", config=cfg))
    assert f["details"]["threads"] == 2 and f["details"]["threshold"] == 10


def test_misspelt_option_is_refused_with_the_valid_names(tmp_path):
    """Options are declared (OPTIONS) and checked: an unknown name is exit 2 naming the valid ones."""
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("thresholds:\n  PF203:\n    default_threads: 2\n")
    res = CliRunner().invoke(
        main,
        [
            "check",
            "--rule",
            "PF203",
            "--platform",
            str(PLATFORM),
            "--config",
            str(cfg),
            str(FIXTURES / "fail_study_tomcat.yaml"),
        ],
    )
    assert res.exit_code == 2, res.output
    assert f"{cfg}:3:" in res.output and "default_threads" in res.output
    assert "score, default-threads, seconds" in res.output


def test_skipped_without_node_cpus():
    doc = check(FIXTURES / "fail_study_tomcat.yaml", platform=None)  # built-in default: no node pools
    assert pf203_findings(doc) == []


def test_pf202_precheck_matches_the_static_rule():
    assert pf203.needs_simulation(1500, 256)  # 30 slices < 256 CPUs
    assert not pf203.needs_simulation(1500, 30)  # 30 slices = 30 CPUs
    assert pf203.needs_simulation(1500, 31)
    assert not pf203.needs_simulation(64_000, 256)


def test_results_are_cached_per_limit_cpus_threads():
    pf203.simulate_cached.cache_clear()
    a = pf203.simulate_cached(1000, 64, 50, 1)
    b = pf203.simulate_cached(1000, 64, 50, 1)
    assert a is b
    assert pf203.simulate_cached.cache_info().hits == 1


def test_corpus_simulates_each_combination_once(tmp_path):
    docs = []
    for i in range(300):
        docs.append(
            f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{i}}}
spec:
  selector: {{matchLabels: {{app: a{i}}}}}
  template:
    metadata: {{labels: {{app: a{i}}}, annotations: {{podfit.io/threads: "{8 + i % 3}"}}}}
    spec:
      containers:
        - name: c
          image: x
          resources: {{limits: {{cpu: "{500 + 250 * (i % 2)}m", memory: 1Gi}}}}
"""
        )
    f = tmp_path / "many.yaml"
    f.write_text("---\n".join(docs))
    pf203.simulate_cached.cache_clear()
    check(f)
    info = pf203.simulate_cached.cache_info()
    assert info.misses <= 6  # 3 thread counts × 2 limits
    assert info.hits + info.misses == 300
