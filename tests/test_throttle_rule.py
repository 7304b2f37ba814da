"""PF203 throttling-simulated-high: fixtures, the PF202 pre-check, thread annotation, thresholds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EKS_PLATFORM
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
    # the fixture's own evidence: threads or demand it declares, or the defaults alone
    declared = re.search(r"podfit\.io/(threads|cpu-demand):", path.read_text()) is not None
    for f in found:
        # graded by its evidence: declared threads or demand a warning, assumed defaults only info
        assert (f["details"]["evidence"], f["severity"]) == (
            ("declared", "warning") if declared else ("assumed", "info")
        )
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
    assert (d["threads_from"], d["demand_from"], d["burst_from"]) == ("default", "request", "default")
    assert d["demand"] == 1500 and d["burst_us"] == 2000
    assert d["evidence"] == "assumed" and f["severity"] == "info"
    assert f["message"].startswith(
        "Assumed load, neither declared nor measured: 200 threads (the default) offering 1500m (the CPU request); "
        "set podfit.io/threads and podfit.io/cpu-demand, or measure it with check --usage, to grade it above info; "
        f"`{d['command']}` with the real values simulates the real load. Under that assumption: CPU limit 1500m"
    )
    assert d["throttled_periods_percent"] == 100
    assert d["throttled_per_period_ms"] > 100
    assert d["throttled_per_period_per_cpu_ms"] == pytest.approx(d["throttled_per_period_ms"] / 200, abs=0.01)
    assert d["added_p99_ms"] > 0
    m = f["message"]
    for said in (
        "200 threads (default; podfit.io/threads)",
        "average demand 1500m (the CPU request; podfit.io/cpu-demand)",
        "2 ms CPU per burst (default; podfit.io/cpu-burst)",
        "throttled in 100% of periods",
        "p99 latency per burst",
        "summed over CPUs",
        "per CPU",
        f"limits.cpu {d['suggested_cpu_limit'] // 1000 if d['suggested_cpu_limit'] % 1000 == 0 else str(d['suggested_cpu_limit']) + 'm'}",
        "no CPU limit",
        "2 whole CPUs",
    ):
        assert said in m, said


def test_the_verdict_is_the_median_of_its_seeds_with_their_range():
    """A load at its quota is a draw on one seed: the finding rates the median of seeds 0-4, gives
    their range, and the calibrated error of the nearest measured configuration."""
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml"))
    d = f["details"]
    runs = pf203.simulate_seeds(1500, 256, 200, 2, 1500, 2000)
    scores = sorted(r.score for r in runs)
    assert d["seeds"] == 5 and d["score"] == scores[2] and d["score_range"] == [scores[0], scores[-1]]
    assert runs[d["seed"]].score == d["score"]
    assert f"(threshold 50; the median of 5 seeds, {scores[0]}–{scores[-1]})" in f["message"]
    lo, hi = d["throttled_periods_percent_range"]
    assert lo <= d["throttled_periods_percent"] <= hi
    cal = d["calibration"]
    assert cal["cpus"] == 2 and cal["below_calibrated_slices_per_cpu"] is True and cal["distance"] > 3
    assert isinstance(cal["throttled_time_error_percent"], int)


def test_same_workload_on_4_vcpu_tkg_nodes_is_not_simulated():
    # The study's TKG cluster: best-effort-xlarge nodes (4 vCPUs): 30 slices cover 4 CPUs.
    doc = check(FIXTURES / "fail_study_tomcat.yaml", platform=ROOT / "testdata" / "platforms" / "study-4-hosts.yaml")
    assert pf203_findings(doc) == []


def test_threshold_from_config(tmp_path):
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("thresholds:\n  PF203:\n    score: 99\n")
    assert pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml", config=cfg)) == []
    cfg.write_text("thresholds:\n  PF203:\n    score: 10\n    default-threads: 64\n")
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml", config=cfg))
    assert f["details"]["threads"] == 64 and f["details"]["threshold"] == 10


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
    a = pf203.simulate_cached(1000, 64, 50, 1, 1000, 2000)
    b = pf203.simulate_cached(1000, 64, 50, 1, 1000, 2000)
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
    pf203.simulate_seeds.cache_clear()
    doc = check(f)
    info = pf203.simulate_cached.cache_info()
    # one simulation per (limit, threads) for the verdict; a firing combination adds its run without
    # a limit and the steps of the search for the smallest limit that clears it
    fired = {(x["details"]["cpu_limit"], x["details"]["threads"]) for x in pf203_findings(doc)}
    assert info.misses <= 6 + len(fired) * 10
    # each combination's seeds run once: those of its verdicts, and of a firing one's run without a limit
    assert pf203.simulate_seeds.cache_info().misses <= info.misses + len(fired)
    assert info.hits + info.misses >= 300


# --- the verdict moves with the fix -------------------------------------------------------------

TOMCAT = (FIXTURES / "fail_study_tomcat.yaml").read_text()


def _with_resources(text: str, resources: str) -> str:
    head, _, _ = text.partition("          resources:")
    return head + "          resources:\n" + resources


def test_the_suggested_limit_clears_the_finding_and_one_step_less_does_not(tmp_path):
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml"))
    new = f["details"]["suggested_cpu_limit"]
    assert 1500 < new < 12_800  # above the limit, below what PF202's screen already passes on 256 CPUs
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(
        _with_resources(
            TOMCAT,
            f"            requests: {{cpu: 1500m, memory: 5Gi}}\n            limits: {{cpu: {new}m, memory: 5Gi}}\n",
        )
    )
    assert pf203_findings(check(fixed)) == []
    less = tmp_path / "less.yaml"
    less.write_text(
        _with_resources(
            TOMCAT,
            f"            requests: {{cpu: 1500m, memory: 5Gi}}\n            limits: {{cpu: {new - 100}m, memory: 5Gi}}\n",
        )
    )
    assert pf203_findings(check(less)), "the suggestion should be the smallest limit in 100m steps"


def test_removing_the_limit_clears_the_finding(tmp_path):
    fixed = tmp_path / "nolimit.yaml"
    fixed.write_text(
        _with_resources(TOMCAT, "            requests: {cpu: 1500m, memory: 5Gi}\n            limits: {memory: 5Gi}\n")
    )
    assert pf203_findings(check(fixed)) == []


def test_whole_cpus_with_the_static_policy_clear_the_finding(tmp_path):
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml"))
    whole = f["details"]["suggested_whole_cpus"]
    fixed = tmp_path / "whole.yaml"
    fixed.write_text(
        _with_resources(
            TOMCAT,
            f"            requests: {{cpu: {whole}, memory: 5Gi}}\n            limits: {{cpu: {whole}, memory: 5Gi}}\n",
        )
    )
    static = tmp_path / "static.yaml"
    static.write_text(
        PLATFORM.read_text().replace(
            "cpuManagerPolicy: none", "cpuManagerPolicy: static\n    kubernetesVersion: '1.33'"
        )
    )
    assert pf203_findings(check(fixed, platform=static)) == []
    # without the static policy whole CPUs are still a CFS quota over the whole node: still flagged
    assert pf203_findings(check(fixed))


def test_raising_the_limit_lowers_the_score():
    d = pf203.Demand(200, "default", 1500, "request", 2000, "default")
    scores = [
        pf203.simulate_cached(lim, 256, d.threads, 2, d.demand, d.burst_us).score for lim in (1000, 1500, 3000, 6000)
    ]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    assert scores[-1] == 0


def test_declared_demand_and_burst_are_used_and_said(tmp_path):
    text = TOMCAT.replace(
        "      labels: {app: tomcat}\n",
        '      labels: {app: tomcat}\n      annotations:\n        podfit.io/threads: "64"\n'
        '        podfit.io/cpu-demand: "tomcat=2"\n        podfit.io/cpu-burst: 5ms\n',
    )
    p = tmp_path / "declared.yaml"
    p.write_text(text)
    (f,) = pf203_findings(check(p))
    d = f["details"]
    assert (d["threads"], d["demand"], d["burst_us"]) == (64, 2000, 5000)
    assert (d["threads_from"], d["demand_from"], d["burst_from"]) == ("annotation", "annotation", "annotation")
    assert "64 threads, average demand 2, 5 ms CPU per burst." in f["message"]
    assert (f["severity"], d["evidence"]) == ("warning", "declared")
    assert f["message"].startswith("CPU limit 1500m on 256-CPU nodes")


def _annotated_tomcat(tmp_path, annotations: str) -> Path:
    p = tmp_path / "annotated.yaml"
    p.write_text(
        TOMCAT.replace(
            "      labels: {app: tomcat}\n", f"      labels: {{app: tomcat}}\n      annotations:\n{annotations}"
        )
    )
    return p


@pytest.mark.parametrize(
    "annotations,severity",
    [
        ('        podfit.io/threads: "200"\n', "warning"),  # the default's value, but declared
        ('        podfit.io/cpu-demand: "1500m"\n', "warning"),
        ("        podfit.io/cpu-burst: 2ms\n", "info"),  # the burst alone does not say the load
        ('        podfit.io/threads: "many"\n', "info"),  # malformed: the default is assumed
    ],
)
def test_severity_follows_the_evidence(tmp_path, annotations, severity):
    """The same simulation (200 threads offering 1500m in 2 ms bursts) is a warning once its threads
    or its demand are declared, info while it rests on the defaults alone."""
    (f,) = pf203_findings(check(_annotated_tomcat(tmp_path, annotations)))
    assert f["severity"] == severity
    assert f["details"]["score"] == pf203.simulate_cached(1500, 256, 200, 2, 1500, 2000).score
    assert f["message"].startswith("Assumed load") == (severity == "info")


def test_a_configured_severity_overrides_the_grade(tmp_path):
    """severity: {PF203: ...} in the config grades every finding of the rule, the assumed ones too."""
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("severity:\n  PF203: error\n")
    found = pf203_findings(
        check(FIXTURES / "fail_study_tomcat.yaml", FIXTURES / "fail_annotated_threads.yaml", config=cfg)
    )
    assert sorted(f["severity"] for f in found) == ["error", "error"]
    cfg.write_text("severity:\n  PF203: warning\n")
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml", config=cfg))
    assert f["severity"] == "warning"


def test_an_assumed_verdict_does_not_fail_the_default_gate():
    """An info finding does not fail ``check`` (--fail-on warning), a declared one does."""
    base = ["check", "--format", "json", "--rule", "PF203", "--fail-on", "warning", "--platform", str(PLATFORM)]
    assert CliRunner().invoke(main, base + [str(FIXTURES / "fail_study_tomcat.yaml")]).exit_code == 0
    assert CliRunner().invoke(main, base + [str(FIXTURES / "fail_annotated_threads.yaml")]).exit_code == 1


def test_the_command_simulates_what_the_finding_rests_on():
    """``details.command`` run as it stands gives the finding's own simulation: its score, periods."""
    (f,) = pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml"))
    d = f["details"]
    argv = d["command"].split()
    assert argv[:2] == ["podfit", "throttle"]
    res = CliRunner().invoke(main, argv[1:] + ["--format", "json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["score"], out["nr_throttled"], out["nr_periods"]) == (d["score"], d["nr_throttled"], d["nr_periods"])


def test_one_thread_cannot_be_throttled_below_its_limit():
    res = pf203.simulate_cached(1500, 256, 1, 2, 1500, 2000)
    assert res.score == 0 and res.nr_throttled == 0


WINDOWS = TOMCAT.replace(
    "    spec:\n      containers:", "    spec:\n      nodeSelector: {kubernetes.io/os: windows}\n      containers:"
)


def test_windows_only_pods_are_not_rated(tmp_path):
    p = tmp_path / "win.yaml"
    p.write_text(WINDOWS)
    args = ["check", "--format", "json", "--rule", "PF202", "--rule", "PF203", "--fail-on", "never"]
    res = CliRunner().invoke(main, args + ["--platform", str(PLATFORM), str(p)], catch_exceptions=False)
    assert [f["rule"] for f in json.loads(res.stdout)["findings"]] == []
    linux = tmp_path / "linux.yaml"
    linux.write_text(WINDOWS.replace("windows", "linux"))
    res = CliRunner().invoke(main, args + ["--platform", str(PLATFORM), str(linux)], catch_exceptions=False)
    assert [f["rule"] for f in json.loads(res.stdout)["findings"]] == ["PF203"]


def test_pf203_supersedes_pf202_and_pf202_stands_alone():
    args = ["check", "--format", "json", "--fail-on", "never", "--platform", str(PLATFORM)]
    both = CliRunner().invoke(
        main, args + ["--rule", "PF202", "--rule", "PF203", str(FIXTURES / "fail_study_tomcat.yaml")]
    )
    assert [f["rule"] for f in json.loads(both.stdout)["findings"]] == ["PF203"]
    alone = CliRunner().invoke(main, args + ["--rule", "PF202", str(FIXTURES / "fail_study_tomcat.yaml")])
    assert [f["rule"] for f in json.loads(alone.stdout)["findings"]] == ["PF202"]
    # a container the simulation clears is not reported by either
    single = CliRunner().invoke(
        main, args + ["--rule", "PF202", "--rule", "PF203", str(FIXTURES / "pass_single_thread.yaml")]
    )
    assert json.loads(single.stdout)["findings"] == []


# --- kubelet facts: policy, version, the exclusive-CPU quota exemption ----------------------------


def _facts(text: str, platform_text: str | None = None):
    from podfit.facts import build_facts
    from podfit.loader import InputFile, load
    from podfit.platform import DEFAULT_PLATFORM, parse_platform

    objs = load([InputFile("in.yaml", text.encode())]).objects if text else ()
    plat = parse_platform(platform_text, "p.yaml") if platform_text else DEFAULT_PLATFORM
    return build_facts(objs, plat).kubelet


KUBELET_CONFIG = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0,1"
"""


def test_kubelet_policy_unknown_stated_or_from_a_kubelet_configuration():
    assert _facts("").cpu_manager_policy is None and _facts("").policy == "none"
    assert _facts("", PLATFORM.read_text()).cpu_manager_policy == "none"
    k = _facts(KUBELET_CONFIG, PLATFORM.read_text())  # the KubeletConfiguration wins over the platform
    assert k.policy == "static" and k.policy_source.startswith("KubeletConfiguration in.yaml:")


def test_exclusive_cpus_lose_their_quota_from_1_33_unless_the_gate_is_off():
    base = PLATFORM.read_text()
    for version, expected in (("'1.32'", False), ("'1.33'", True), ("v1.35.1", True)):
        k = _facts(
            "", base.replace("cpuManagerPolicy: none", f"cpuManagerPolicy: none\n    kubernetesVersion: {version}")
        )
        assert k.exclusive_cpus_without_quota is expected, version
    assert _facts("", base).exclusive_cpus_without_quota is None  # no version: unknown
    gated = KUBELET_CONFIG + "featureGates:\n  DisableCPUQuotaWithExclusiveCPUs: false\n"
    k = _facts(gated, base.replace("cpuManagerPolicy: none", "kubernetesVersion: '1.34'"))
    assert k.version == (1, 34) and k.exclusive_cpus_without_quota is False


def test_version_from_the_cluster_manifest():
    tkc = """apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesCluster
metadata: {name: c1, namespace: ns}
spec:
  distribution: {version: v1.33.1+vmware.1-fips}
  topology:
    controlPlane: {replicas: 1, vmClass: best-effort-small, storageClass: s, tkr: {reference: {name: x}}}
    nodePools: [{name: w, replicas: 2, vmClass: best-effort-large, storageClass: s, tkr: {reference: {name: x}}}]
"""
    k = _facts(tkc)
    assert k.version == (1, 33) and k.version_source == "cluster manifests"


def _cpu_usage(path: Path, namespace: str, pod: str, container: str, millicores: list[int]) -> Path:
    """A Prometheus range result of rate(container_cpu_usage_seconds_total[5m]), one sample an hour."""
    values = [[1763856000 + 3600 * i, f"{m / 1000:g}"] for i, m in enumerate(millicores)]
    doc = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [{"metric": {"namespace": namespace, "pod": pod, "container": container}, "values": values}],
        },
    }
    path.write_text(json.dumps(doc))
    return path


def check_usage(*paths, usage: Path, rules=("PF203",), platform=PLATFORM):
    args = ["check", "--format", "json", "--fail-on", "never", "--platform", str(platform), "--usage", f"cpu={usage}"]
    for r in rules:
        args += ["--rule", r]
    res = CliRunner().invoke(main, args + [str(p) for p in paths], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_measured_cpu_is_the_demand_and_is_said(tmp_path):
    """Request 500m, limit 1500m: with the request as the demand nothing is throttled; measured, the
    container runs at its limit in its busy hours (p95 of 20 hourly samples: the 19th, 1500m)."""
    p = tmp_path / "busy.yaml"
    p.write_text(
        _with_resources(
            TOMCAT, "            requests: {cpu: 500m, memory: 5Gi}\n            limits: {cpu: 1500m, memory: 5Gi}\n"
        )
    )
    assert pf203_findings(check(p)) == []
    usage = _cpu_usage(tmp_path / "cpu.json", "default", "tomcat-5f6d7c8b9-bcd4f", "tomcat", [300] * 18 + [1500, 1500])
    (f,) = pf203_findings(check_usage(p, usage=usage))
    d = f["details"]
    assert (d["demand"], d["demand_from"], d["threads"]) == (1500, "measured", 200)
    assert (f["severity"], d["evidence"]) == ("warning", "measured")
    assert d["score"] == pf203.simulate_cached(1500, 256, 200, 2, 1500, 2000).score
    assert (
        "average demand 1500m (measured: p95 of the CPU rate, 20 samples over 19h, 1 pod), 2 ms CPU per burst"
        in f["message"]
    )


def test_a_quiet_measured_container_is_not_throttled_by_its_request(tmp_path):
    """The study's Tomcat fires with its 1500m request as the demand; measured at 200m it does not."""
    assert pf203_findings(check(FIXTURES / "fail_study_tomcat.yaml"))
    usage = _cpu_usage(tmp_path / "cpu.json", "default", "tomcat-5f6d7c8b9-bcd4f", "tomcat", [200] * 12)
    assert pf203_findings(check_usage(FIXTURES / "fail_study_tomcat.yaml", usage=usage)) == []


def test_pf209_simulates_the_measured_demand_pf203_simulates(tmp_path):
    """PF209 quotes PF203's simulation: with the same measured CPU both simulate the same demand."""
    fixture = ROOT / "testdata" / "PF209" / "fail_throttled_40_percent.yaml"
    cpu = _cpu_usage(tmp_path / "cpu.json", "shop", "checkout-5f6d7c8b9-bcd4f", "app", [450] * 10)
    args = ["check", "--format", "json", "--fail-on", "never", "--platform", str(PLATFORM), "--rule", "PF203"]
    args += [
        "--rule",
        "PF209",
        "--usage",
        f"cpu={cpu}",
        "--usage",
        str(fixture.with_suffix(".usage.json")),
        str(fixture),
    ]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    by = {f["rule"]: f for f in json.loads(res.stdout)["findings"]}
    assert by["PF203"]["details"]["demand"] == 450 and by["PF203"]["details"]["demand_from"] == "measured"
    sim = by["PF209"]["details"]["simulated"]
    assert (sim["demand"], sim["demand_from"], sim["score"]) == (450, "measured", by["PF203"]["details"]["score"])


def _throttle(*args):
    res = CliRunner().invoke(main, ["throttle", "--limit", "500m", "--cpus", "256", "--seconds", "2", *map(str, args)])
    return res


def test_throttle_takes_the_demand_of_a_measured_container(tmp_path):
    """`podfit throttle --usage --container`: the p95 of the container's measured CPU rate is the
    demand; the run is the one --demand gives that quantity, and stderr says where it came from.
    Another workload's pods (checkout-db) and another container (istio-proxy) are not counted."""
    cpu = _cpu_usage(tmp_path / "cpu.json", "shop", "checkout-5f6d7c8b9-bcd4f", "app", [200] * 18 + [450, 900])
    other = _cpu_usage(tmp_path / "other.json", "shop", "checkout-db-0", "app", [3000] * 20)
    proxy = _cpu_usage(tmp_path / "proxy.json", "shop", "checkout-5f6d7c8b9-bcd4f", "istio-proxy", [2000] * 20)
    usage = [a for f in (cpu, other, proxy) for a in ("--usage", f"cpu={f}")]
    measured = _throttle(*usage, "--container", "shop/checkout/app", "--format", "json")
    assert measured.exit_code == 0, measured.output
    assert measured.stderr == (
        "demand 450m: shop/checkout/app, measured p95 of the CPU rate, 20 samples over 19h, 1 pod\n"
    )
    declared = _throttle("--demand", "450m", "--format", "json")
    assert json.loads(measured.stdout) == json.loads(declared.stdout)
    assert json.loads(measured.stdout) != json.loads(_throttle("--demand", "200m", "--format", "json").stdout)


def test_throttle_usage_needs_a_measured_container(tmp_path):
    cpu = _cpu_usage(tmp_path / "cpu.json", "shop", "checkout-5f6d7c8b9-bcd4f", "app", [200] * 5)
    res = _throttle("--usage", f"cpu={cpu}")
    assert res.exit_code == 2 and "--usage and --container go together" in res.output
    res = _throttle("--usage", f"cpu={cpu}", "--container", "shop/cart/app")
    assert res.exit_code == 2 and "--usage measures no CPU of shop/cart/app" in res.output
    res = _throttle("--usage", f"cpu={cpu}", "--container", "shop/checkout")
    assert res.exit_code == 2 and "expected NAMESPACE/[KIND/]WORKLOAD/CONTAINER" in res.output
    res = _throttle("--usage", f"cpu={cpu}", "--container", "shop/checkout/app", "--demand", "1")
    assert res.exit_code == 2 and "not with --demand" in res.output


def test_throttle_container_kind_tells_apart_names_that_share_a_prefix(tmp_path):
    """Pods api-7d9f8c6b5-bcd4f and api-v2-bcd4f (a ReplicaSet api-v2's, or Deployment api's with
    hash v2): without a kind, shop/api/app takes both; a kind picks apart."""
    a = _cpu_usage(tmp_path / "a.json", "shop", "api-7d9f8c6b5-bcd4f", "app", [100] * 20)
    b = _cpu_usage(tmp_path / "b.json", "shop", "api-v2-bcd4f", "app", [300] * 20)
    usage = ["--usage", f"cpu={a}", "--usage", f"cpu={b}"]
    res = _throttle(*usage, "--container", "shop/api/app")
    assert res.stderr.startswith("demand 300m:") and "40 samples over 19h, 2 pods\n" in res.stderr
    res = _throttle(*usage, "--container", "shop/ReplicaSet/api-v2/app")
    assert res.stderr.startswith("demand 300m:") and "20 samples over 19h, 1 pod\n" in res.stderr
    res = _throttle(*usage, "--container", "shop/StatefulSet/api/app")
    assert res.exit_code == 2 and "--usage measures no CPU of shop/StatefulSet/api/app" in res.output


EKS = EKS_PLATFORM

PINNED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: web}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      nodeSelector: {eks.amazonaws.com/nodegroup: GROUP}
      TOLERATIONS
      containers:
        - name: api
          image: api:1
          resources: {requests: {cpu: 300m, memory: 256Mi}, limits: {cpu: 300m, memory: 256Mi}}
"""


@pytest.mark.parametrize(
    ("group", "tolerations", "cpus"),
    [
        ("general", "", None),
        ("memory-spot", "tolerations: [{key: dedicated, operator: Equal, value: cache, effect: NoSchedule}]", 8),
    ],
    ids=["pinned-to-4-cpu-nodes", "tolerates-the-8-cpu-group"],
)
def test_node_size_is_that_of_the_pools_the_pod_may_land_on(tmp_path, group, tolerations, cpus):
    """300m is 6 slices: a throttling risk on 8-CPU nodes, none on 4-CPU ones. A pod pinned to the
    4-CPU group is not rated on the tainted 8-CPU group it cannot reach; one that selects and
    tolerates that group is. PF202 alone gives the same verdict on the same node size."""
    f = tmp_path / "api.yaml"
    f.write_text(PINNED.replace("GROUP", group).replace("TOLERATIONS", tolerations))
    found = pf203_findings(check(f, platform=EKS))
    assert [x["details"]["node_logical_cpus"] for x in found] == ([cpus] if cpus else [])
    args = ["check", str(f), "--platform", str(EKS), "--rule", "PF202", "--format", "json", "--fail-on", "never"]
    pf202 = json.loads(CliRunner().invoke(main, args, catch_exceptions=False).stdout)["findings"]
    assert [x["details"]["node_logical_cpus"] for x in pf202] == ([cpus] if cpus else [])


def test_too_few_bursts_for_a_p99_says_so(tmp_path):
    """A demand of 1m completes a handful of 2 ms bursts in the simulated seconds: the finding says
    a p99 cannot be had from them, rather than "+0 ms"."""
    f = tmp_path / "tiny.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: tiny, namespace: shop}\nspec:\n  containers:\n"
        "    - {name: app, image: app:1, resources: {requests: {cpu: 1m, memory: 64Mi}, limits: {cpu: 5m, memory: 64Mi}}}\n"
    )
    (found,) = pf203_findings(check(f))
    d = found["details"]
    assert (
        d["bursts_completed"] < pf203.P99_MIN_BURSTS and d["added_p99_ms"] is None and d["burst_delay_p99_ms"] is None
    )
    assert (
        f"too few bursts for a p99 latency ({d['bursts_completed']} completed in 2 s, {pf203.P99_MIN_BURSTS} needed)"
        in found["message"]
    )
    assert "ms p99 latency per burst" not in found["message"]


def test_p99_needs_its_minimum_of_completed_bursts(tmp_path, monkeypatch):
    """The same simulation, with the minimum set at its completed bursts and one above: the p99 is
    stated from exactly P99_MIN_BURSTS on."""
    f = tmp_path / "api.yaml"
    f.write_text(PINNED.replace("GROUP", "memory-spot").replace("TOLERATIONS", "tolerations: [{operator: Exists}]"))
    (found,) = pf203_findings(check(f, platform=EKS))
    done = found["details"]["bursts_completed"]
    monkeypatch.setattr(pf203, "P99_MIN_BURSTS", done)
    (at,) = pf203_findings(check(f, platform=EKS))
    assert at["details"]["added_p99_ms"] is not None and "ms p99 latency per burst against no limit" in at["message"]
    monkeypatch.setattr(pf203, "P99_MIN_BURSTS", done + 1)
    (above,) = pf203_findings(check(f, platform=EKS))
    assert above["details"]["added_p99_ms"] is None
    assert f"too few bursts for a p99 latency ({done} completed in 2 s, {done + 1} needed)" in above["message"]


GUEST = """\
apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesCluster
metadata: {name: guest, namespace: team}
spec:
  topology:
    controlPlane: {replicas: 1, vmClass: best-effort-small, storageClass: fast}
    nodePools:
      - {name: small, replicas: 2, vmClass: best-effort-large, storageClass: fast}
      - name: big
        replicas: 2
        vmClass: best-effort-2xlarge
        storageClass: fast
        labels: {tier: big}
        taints: [{key: big, value: "y", effect: NoSchedule}]
---
apiVersion: v1
kind: Pod
metadata: {name: anywhere, namespace: web}
spec:
  containers: [{name: a, image: a:1, resources: {requests: {cpu: 300m, memory: 256Mi}, limits: {cpu: 300m, memory: 256Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: web}
spec:
  nodeSelector: {tier: big}
  tolerations: [{key: big, operator: Exists}]
  containers: [{name: b, image: b:1, resources: {requests: {cpu: 300m, memory: 256Mi}, limits: {cpu: 300m, memory: 256Mi}}}]
"""


def test_a_guest_cluster_on_a_supervisor_is_rated_on_its_own_nodes(tmp_path):
    """On a vSphere Pods Supervisor, the workloads of a TanzuKubernetesCluster declared beside them
    run on its nodes: PF203 rates them (it skipped the whole run before), each on the pools it may
    land on (4-CPU best-effort-large, or the tainted 8-CPU pool it selects and tolerates), and PF202
    alone says the same."""
    f = tmp_path / "guest.yaml"
    f.write_text(GUEST)
    platform = tmp_path / "supervisor.yaml"
    platform.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: sup}\nspec: {runtime: vsphere-pods}\n"
    )
    doc = check(f, platform=platform)
    assert "PF203" not in [r["rule"] for r in doc.get("skipped_rules", [])]
    assert [(x["object"]["name"], x["details"]["node_logical_cpus"]) for x in pf203_findings(doc)] == [("big", 8)]
    args = ["check", str(f), "--platform", str(platform), "--rule", "PF202", "--format", "json", "--fail-on", "never"]
    pf202 = json.loads(CliRunner().invoke(main, args, catch_exceptions=False).stdout)["findings"]
    assert [(x["object"]["name"], x["details"]["node_logical_cpus"]) for x in pf202] == [("big", 8)]
