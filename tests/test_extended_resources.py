"""Extended resources (GPUs): node pools offer them (platform allocatable, imported from node
allocatable), a pod asking for one lands only on pools offering it, and no more such pods per node
than the node offers."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from podfit.cli import main
from podfit.model import K8sObject, Location, ObjectRef
from podfit.packing.adapter import extended_requests
from podfit.platform import parse_platform
from podfit.workloads import build_workloads

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "testdata" / "platform-import" / "gpu"


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def pf601(tmp_path: Path, replicas: int) -> list[dict]:
    profile = tmp_path / f"platform-{replicas}.yaml"
    res = run("platform", "import", DATA / "nodes.yaml", "-o", profile)
    assert res.exit_code == 0, res.stderr
    manifest = tmp_path / f"inference-{replicas}.yaml"
    manifest.write_text((DATA / "inference.yaml").read_text().replace("replicas: 3", f"replicas: {replicas}"))
    res = run("check", manifest, "--platform", profile, "--format", "json", "--rule", "PF601", "--fail-on", "never")
    return json.loads(res.stdout)["findings"]


def test_import_reads_gpus_from_node_allocatable(tmp_path: Path) -> None:
    profile = tmp_path / "platform.yaml"
    assert run("platform", "import", DATA / "nodes.yaml", "-o", profile).exit_code == 0
    (pool,) = parse_platform(profile.read_text(), str(profile)).node_pools
    assert pool.count == 2 and pool.extended == (("nvidia.com/gpu", 1),)


def test_three_one_gpu_pods_on_two_one_gpu_nodes_do_not_fit(tmp_path: Path) -> None:
    found = pf601(tmp_path, 3)
    assert len(found) == 1 and "1 nvidia.com/gpu" in found[0]["message"]
    assert pf601(tmp_path, 2) == []


def _workload(spec: str) -> object:
    import yaml

    raw = yaml.safe_load(spec)
    obj = K8sObject(ObjectRef("v1", "Pod", "ns", "p"), Location("p.yaml", 1), raw)
    (w,), _ = build_workloads([obj])
    return w


def test_extended_requests_combine_like_the_scheduler() -> None:
    w = _workload(
        """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  initContainers:
    - {name: warm, image: i, resources: {limits: {nvidia.com/gpu: 3}}}
    - {name: side, image: i, restartPolicy: Always, resources: {requests: {example.com/nic: 1}, limits: {example.com/nic: 1}}}
  containers:
    - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 1, cpu: "1"}}}
    - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
"""
    )
    # GPUs: max(init 3, apps 1 + 1); NICs: the sidecar runs beside the apps
    assert extended_requests(w) == {"nvidia.com/gpu": 3, "example.com/nic": 1}  # type: ignore[arg-type]


def test_a_pool_that_does_not_state_its_devices_is_not_taken_for_none():
    """A TanzuKubernetesCluster's pool (no allocatable) may well carry GPUs: a GPU pod that may run
    there is packed there, never called unschedulable for want of a device nobody declared."""
    from podfit.packing.adapter import _extended_cap, _known_cap

    assert _known_cap(_extended_cap({"nvidia.com/gpu": 1}, None)) is None
    assert _extended_cap({"nvidia.com/gpu": 1}, {}) == 0
    assert _extended_cap({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 2}) == 2
