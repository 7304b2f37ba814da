"""Host capacity bounds the node counts of right-sizing (PF604), PF601's fix and `podfit pack`."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from podfit.cli import main
from podfit.platform import parse_platform
from podfit.vsphere import nodes_hosts_hold

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "testdata" / "platforms" / "study-4-hosts.yaml"


def study():
    return parse_platform(STUDY.read_text(), str(STUDY))


def deployment(name: str, replicas: int, cpu: str, memory: str, cpu_limit: str | None = None) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: app}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: "{cpu}", memory: {memory}}}
          limits: {{cpu: "{cpu_limit or cpu}", memory: {memory}}}
"""


def run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_memory_bounds_best_effort_nodes_host_by_host_after_ha():
    # 4 hosts × 512Gi, one host failure tolerated: 3 hosts run VMs; 4 × 128Gi VMs per host
    # (the overcommit bound, 300% of 128 cores = 384 vCPUs = 24 × 16, binds later)
    p = study()
    assert nodes_hosts_hold(p, "best-effort-4xlarge") == 12
    assert nodes_hosts_hold(p, "best-effort-2xlarge") == 24
    # 32 vCPUs each: 384 vCPUs / 32 = 12, memory 3 hosts × 4 = 12
    assert nodes_hosts_hold(p, "best-effort-8xlarge") == 12
    # the CPU overcommit ratio binds the small classes: 384 / 2 vCPUs
    assert nodes_hosts_hold(p, "best-effort-xsmall") == 192
    assert nodes_hosts_hold(p, "best-effort-xsmall", ratio_percent=100) == 64


def test_other_pools_take_their_share_and_bare_metal_has_no_bound():
    p = study()
    others = [n for n in p.node_pools]  # 4 × best-effort-xlarge (4 vCPUs, 32Gi) stay
    # memory: 1536Gi − 128Gi = 1408Gi → 11 × 128Gi; CPU: (384 − 16) / 16 = 23
    assert nodes_hosts_hold(p, "best-effort-4xlarge", others) == 11
    from dataclasses import replace

    assert nodes_hosts_hold(replace(p, runtime="bare-metal"), "best-effort-4xlarge") is None
    assert nodes_hosts_hold(replace(p, hosts=()), "best-effort-4xlarge") is None
    assert nodes_hosts_hold(p, "no-such-class") is None


def test_guaranteed_classes_are_bounded_by_cpu_reservations():
    # 3 running hosts × 32 cores × 2,300 MHz = 220,800 MHz; an 8xlarge reserves 32 × 2,300 = 73,600
    assert nodes_hosts_hold(study(), "guaranteed-8xlarge") == 3


def test_right_size_never_recommends_more_nodes_than_the_hosts_hold(tmp_path):
    # 60 pods × 20Gi: fits 10 × 4xlarge (12 allowed); every bigger recommendation is bounded
    app = tmp_path / "app.yaml"
    app.write_text(deployment("mid", 60, "1", "20Gi"))
    res = run(["check", app, "--platform", STUDY, "--format", "json", "--fail-on", "never", "--rule", "PF604"])
    (f,) = [f for f in json.loads(res.output)["findings"] if f["rule"] == "PF604"]
    rec = f["details"]["recommended"]
    hold = nodes_hosts_hold(study(), rec["vm_class"], ())
    assert hold is not None and rec["nodes"] <= hold
    for c in f["details"]["candidates"]:
        assert c["nodes"] <= nodes_hosts_hold(study(), c["vm_class"], ())


def test_when_no_class_fits_the_hosts_pf604_and_pf601_say_so(tmp_path):
    # 100 pods × 40Gi = 4,000Gi: more than the hosts' 1,536Gi after HA, whatever the class
    app = tmp_path / "app.yaml"
    app.write_text(deployment("many", 100, "3", "40Gi") + "---\n" + deployment("small", 40, "1", "1Gi"))
    res = run(["check", app, "--platform", STUDY, "--format", "json", "--fail-on", "never"])
    findings = json.loads(res.output)["findings"]
    (f,) = [f for f in findings if f["rule"] == "PF604"]
    assert "no VM class fits" in f["message"] and f["details"]["recommended"] is None
    assert "the hosts hold at most 12 such nodes, the pods need" in f["details"]["excluded"]["best-effort-4xlarge"]
    pf601 = [f for f in findings if f["rule"] == "PF601"]
    assert all("recommended:" not in f["message"] for f in pf601)


def test_pack_output_respects_the_hosts(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text(deployment("many", 100, "3", "40Gi"))
    res = run(["pack", app, "--platform", STUDY, "--format", "json", "--time-budget", "1s"])
    d = json.loads(res.output)
    assert d["cluster"] == "tkg-perf"
    assert d["recommendation"]["vm_class"] is None
    assert "the hosts hold at most 12" in d["recommendation"]["excluded"]["best-effort-4xlarge"]
