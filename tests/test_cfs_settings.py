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
    assert findings(tmp_path, 'cpuCFSQuotaPeriod: "10ms"\n', engine)
    assert findings(tmp_path, 'cpuCFSQuotaPeriod: "1s"\n', engine) == []
    assert findings(tmp_path, 'cpuCFSQuotaPeriod: "1s"\n', engine, rules=("PF202",)) == []


def test_go_durations():
    assert duration_us("100ms") == 100_000 and duration_us("1.5ms") == 1_500 and duration_us("1m30s") == 90_000_000
    assert duration_us("100") is None and duration_us(100) is None and duration_us("ms") is None
