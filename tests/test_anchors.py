"""Findings about several objects point at the object the proof is about (PF502)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
SUPERVISOR = ROOT / "testdata" / "platforms" / "vsphere-pods.yaml"  # 4 hosts × 16 cores × 2,600 MHz, HA 1


def pod(name: str, cpu: str, kind: str = "Pod", replicas: int = 1) -> str:
    spec = f"""containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: "{cpu}", memory: 1Gi}}
          limits: {{cpu: "{cpu}", memory: 1Gi}}"""
    if kind == "Pod":
        return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  {spec.replace(chr(10) + '  ', chr(10))}\n"
    return f"""apiVersion: v1
kind: ReplicationController
metadata: {{name: {name}, namespace: shop}}
spec:
  replicas: {replicas}
  selector: {{app: {name}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      {spec.replace(chr(10), chr(10) + "  ")}
"""


def pf502(tmp_path, files: dict[str, str]) -> dict:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    res = CliRunner().invoke(
        main,
        ["check", *sorted(str(tmp_path / n) for n in files), "--platform", str(SUPERVISOR), "--rule", "PF502"]
        + ["--format", "json", "--fail-on", "never"],
    )
    (f,) = [f for f in json.loads(res.output)["findings"] if f["rule"] == "PF502"]
    return f


def test_capacity_misfit_points_at_the_largest_reservation_not_a_larger_single_vm(tmp_path):
    # 64 × 2,600 MHz (166,400) and one pod of 10,400 MHz: 64 cores' worth of CPU on 64 cores, plus
    # one more pod. The one-VM pod reserves the most per VM; the agents reserve the most in all.
    f = pf502(tmp_path, {"a-single.yaml": pod("single", "4"), "b-agents.yaml": pod("agents", "1", "RC", 64)})
    assert f["object"]["kind"] == "ReplicationController" and f["object"]["name"] == "agents"
    assert f["file"].endswith("b-agents.yaml") and f["details"]["about"] == ["cpu"]
    assert f["message"].split("Largest reservations: ")[1].startswith("64 × ReplicationController shop/agents")


def test_a_vm_larger_than_every_host_is_what_the_finding_points_at(tmp_path):
    # 20 CPUs = 52,000 MHz, more than a 41,600 MHz host; the agents reserve more in all (78,000)
    f = pf502(tmp_path, {"a-agents.yaml": pod("agents", "1", "RC", 30), "b-giant.yaml": pod("giant", "20")})
    assert f["object"]["kind"] == "Pod" and f["object"]["name"] == "giant"
    assert f["file"].endswith("b-giant.yaml") and f["details"]["about"] == ["Pod shop/giant"]


TKC = """apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesCluster
metadata: {name: shop-cluster, namespace: team}
spec:
  topology:
    controlPlane: {replicas: 1, vmClass: best-effort-small}
    nodePools:
      - name: workers
        replicas: 12
        vmClass: best-effort-small
"""


def test_findings_about_a_tkc_pool_point_at_the_tkc(tmp_path):
    # twelve small nodes for two 1-CPU pods: PF604's advice is about the TKC's pool
    (tmp_path / "cluster.yaml").write_text(TKC)
    (tmp_path / "app.yaml").write_text(pod("web", "1", "RC", 2))
    res = CliRunner().invoke(
        main,
        ["check", str(tmp_path), "--rule", "PF604", "--rule", "PF602", "--format", "json", "--fail-on", "never"],
    )
    found = [f for f in json.loads(res.output)["findings"] if f["rule"] in ("PF602", "PF604")]
    assert found
    for f in found:
        assert f["object"]["kind"] == "TanzuKubernetesCluster" and f["object"]["name"] == "shop-cluster"
        assert f["file"].endswith("cluster.yaml") and f["line"] == 8  # the pool's entry
