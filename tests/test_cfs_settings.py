"""The kubelet's CFS settings, from a KubeletConfiguration among the inputs: cpuCFSQuota false sets
no quota at all (PF202 and PF203 have nothing to judge), and cpuCFSQuotaPeriod moves PF202's
screen (a limit needs one 5 ms slice per logical CPU in each period). Rego (PF202) and Python
(the facts, PF203) read the same facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.facts import cfs_screen_limit, duration_us

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "testdata" / "PF202" / "platform.yaml"  # one 256-CPU bare-metal node
POD = (ROOT / "testdata" / "PF202" / "fail_1500m_on_256_cpus.yaml").read_text()
KUBELET = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: none\n"
GATE = "featureGates: {CustomCPUCFSQuotaPeriod: true}\n"  # a period other than 100ms needs it


def findings(
    tmp_path: Path, kubelet: str, engine: str = "embedded", rules: tuple[str, ...] = ("PF202", "PF203")
) -> list[tuple[str, str]]:
    """(rule, message) of each finding; an info's severity is asserted where it is expected."""
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "kubelet.yaml").write_text(KUBELET + kubelet)
    args = ["check", str(tmp_path), "--platform", str(PLATFORM), "--format", "json", "--fail-on", "never"]
    res = CliRunner().invoke(main, [*args, "--engine", engine, *[a for r in rules for a in ("--rule", r)]])
    assert res.exit_code == 0, res.output
    return [(f["rule"], f["message"]) for f in json.loads(res.stdout)["findings"]]


def test_the_fixture_is_throttled_with_the_defaults(tmp_path):
    assert {r for r, _ in findings(tmp_path, "")} == {"PF203"}  # PF203 supersedes PF202 when it simulates


def test_no_cfs_quota_no_throttling_finding(tmp_path):
    """Without CFS quota nothing is throttled: one info names why, at the KubeletConfiguration."""
    ((rule, message),) = findings(tmp_path, "cpuCFSQuota: false\n")
    assert rule == "PF203" and message.startswith("cpuCFSQuota: false: the kubelet sets no CFS quota")
    assert "PF202 and PF203 do not apply" in message
    assert {r for r, _ in findings(tmp_path, "", rules=("PF202",))} == {"PF202"}  # the Rego rule alone
    assert findings(tmp_path, "cpuCFSQuota: false\n", rules=("PF202",)) == []


@pytest.mark.parametrize("engine", ["embedded"])
def test_a_shorter_period_moves_the_screen(tmp_path, engine):
    """A 10 ms period: 256 CPUs need 128 CPUs of limit for one slice each; 1500m stays below, now
    by far. A 1 s period: 1.28 CPUs suffice, and 1500m clears the screen."""
    assert cfs_screen_limit(256, 10_000) == 128_000 and cfs_screen_limit(256, 1_000_000) == 1_280
    assert findings(tmp_path, GATE + 'cpuCFSQuotaPeriod: "10ms"\n', engine)
    assert findings(tmp_path, GATE + 'cpuCFSQuotaPeriod: "1s"\n', engine) == []
    assert findings(tmp_path, GATE + 'cpuCFSQuotaPeriod: "1s"\n', engine, rules=("PF202",)) == []


def test_go_durations():
    assert duration_us("100ms") == 100_000 and duration_us("1.5ms") == 1_500 and duration_us("1m30s") == 90_000_000
    assert duration_us("100") is None and duration_us(100) is None and duration_us("ms") is None


def _run(period_us: int, cpu_bound: bool):
    from dataclasses import replace

    from podfit.throttle.scenario import CPU_BOUND, Workload
    from podfit.throttle.sim import simulate
    from podfit.throttle.sweep import container_scenario

    sc = container_scenario(1000, 4, 4, 2, period_us=period_us)
    return simulate(replace(sc, workload=Workload(kind=CPU_BOUND)) if cpu_bound else sc)


def test_the_simulator_runs_the_period_it_is_given():
    """A 1-CPU limit on 4 CPUs under a 10 ms and a 100 ms period: the quota is the limit over the
    period (10 ms, 100 ms), ten times the periods in the same 2 s, the same CPU used (the limit holds
    either way); four CPU-bound threads are throttled every period for about 3 CPUs × the period
    (4 CPUs run until the quota of 1 is spent, the kernel's cpu.stat sums the rest); the request
    load waits in shorter stalls, so its p99 burst delay is shorter."""
    short, long = _run(10_000, True), _run(100_000, True)
    assert (short.scenario.quota_us, long.scenario.quota_us) == (10_000, 100_000)
    assert (short.nr_periods, long.nr_periods) == (200, 20)
    assert short.nr_throttled == 200 and long.nr_throttled == 20
    for r, period_ns in ((short, 10_000_000), (long, 100_000_000)):
        assert abs(r.cpu_used_ns - 2_000_000_000) < 40_000_000  # 1 CPU × 2 s, within 2%
        assert 2.9 * period_ns < r.throttled_per_period_ns < 3.05 * period_ns
    served_short, served_long = _run(10_000, False), _run(100_000, False)
    assert served_short.throttled_per_period_ns < served_long.throttled_per_period_ns / 5
    # both served bursts (a p99 of None, no burst done, would read as 0 and pass)
    assert served_short.burst_delay_p99_ns is not None and served_long.burst_delay_p99_ns is not None
    assert served_short.burst_delay_p99_ns < served_long.burst_delay_p99_ns


def test_pf203_simulates_the_kubelets_period(tmp_path):
    """PF203 gives the simulator the kubelet's cpuCFSQuotaPeriod: its finding names that period and
    the command that runs it again passes it on; the default period's finding is as before."""
    ((_, default),) = findings(tmp_path, "", rules=("PF203",))
    assert "per 100 ms period" in default and "--period" not in default
    ((_, short),) = findings(tmp_path, GATE + 'cpuCFSQuotaPeriod: "10ms"\n', rules=("PF203",))
    assert "slices of 5 ms per 10 ms period" in short and "--seconds 2 --period 10ms`" in short
    assert short != default.replace("100 ms period", "10 ms period")  # simulated again, not relabelled


@pytest.mark.parametrize("period", ["10ms", "100ms"])
def test_podfit_throttle_period_runs_what_pf203_runs(period):
    """``podfit throttle --period`` runs the scenario PF203 builds for that period (seed 0)."""
    args = ["throttle", "--limit", "1", "--cpus", "4", "--threads", "4", "--seconds", "2", "--period", period]
    res = CliRunner().invoke(main, [*args, "--seeds", "1", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    run = _run(duration_us(period) or 0, False)
    assert (
        out["period_ms"] == run.scenario.period_us / 1000 and out["quota_per_period_s"] == run.scenario.quota_us / 1e6
    )
    assert (out["nr_periods"], out["nr_throttled"], out["score"]) == (run.nr_periods, run.nr_throttled, run.score)


@pytest.mark.parametrize("engine", ["embedded"])
def test_a_period_without_its_gate_stops_the_kubelet(tmp_path, engine):
    """ValidateKubeletConfiguration refuses a cpuCFSQuotaPeriod other than 100ms unless
    CustomCPUCFSQuotaPeriod (alpha since 1.12) is on: PF203 says so at the KubeletConfiguration and
    PF202 and PF203 judge the default period (a 1 s period would have cleared PF202's screen)."""
    found = findings(tmp_path, 'cpuCFSQuotaPeriod: "1s"\n', engine)
    refused = [m for r, m in found if r == "PF203" and "CustomCPUCFSQuotaPeriod" in m]
    assert len(refused) == 1 and "the kubelet refuses this configuration" in refused[0]
    assert any("per 100 ms period" in m for _, m in found)  # the container, judged at 100 ms
    assert findings(tmp_path, 'cpuCFSQuotaPeriod: "1s"\n', engine, rules=("PF202",))  # the screen at 100 ms
    assert not any("CustomCPUCFSQuotaPeriod" in m for _, m in findings(tmp_path, GATE + 'cpuCFSQuotaPeriod: "1s"\n'))
    assert not any("CustomCPUCFSQuotaPeriod" in m for _, m in findings(tmp_path, 'cpuCFSQuotaPeriod: "100ms"\n'))
