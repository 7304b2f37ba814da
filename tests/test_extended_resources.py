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


# Packing counts extended resources per node over every pod type on it, not pair by pair.

GPU = "nvidia.com/gpu"
HANG_GUARD_S = 30.0  # a time limit only so that a bug cannot hang the run; the models here solve at once


def _gpu_pods(*spec: tuple[str, int, int]):
    from podfit.packing.model import GI, PodType

    return tuple(PodType(name, 500, GI, count=n, extended=((GPU, g),)) for name, n, g in spec)


def _gpu_nodes(count: int, gpus: int | None):
    from podfit.packing.model import GI, NodeType

    return NodeType("gpu", "gpu-node", count, 15_000, 60 * GI, 110, extended=None if gpus is None else ((GPU, gpus),))


def _used(nodes, pods) -> list[int]:
    need = {p.name: dict(p.extended).get(GPU, 0) for p in pods}
    return [sum(need[name] * k for name, k in n.pods) for n in nodes]


def test_three_workloads_sharing_gpu_nodes_are_packed_by_their_sum() -> None:
    from podfit.packing.engine import pack
    from podfit.packing.model import Problem

    # ten GPUs asked for, ten offered, no pair too many for a node, yet a node holds two such pods
    pods = _gpu_pods(("train", 2, 2), ("infer", 2, 2), ("embed", 1, 2))
    res = pack(Problem(pods, (_gpu_nodes(2, 5),)), HANG_GUARD_S)
    assert res.feasible is False
    fits = pack(
        Problem(_gpu_pods(("train", 2, 2), ("infer", 1, 2), ("embed", 1, 2)), (_gpu_nodes(2, 5),)), HANG_GUARD_S
    )
    assert fits.feasible is True and max(_used(fits.nodes, pods)) <= 5
    # a pool that does not state its devices limits nothing
    assert pack(Problem(pods, (_gpu_nodes(2, None),)), HANG_GUARD_S).feasible is True


def test_the_total_of_an_extended_resource_is_a_certificate() -> None:
    from podfit.packing.bounds import certificates

    pods = _gpu_pods(("a", 1, 1), ("b", 1, 1), ("c", 1, 1))
    (b,) = [b for b in certificates(pods, (_gpu_nodes(1, 2),)) if b.kind == f"capacity-{GPU}"]
    assert (b.needed, b.available, b.violated) == (3, 2, True)


def test_every_heuristic_keeps_within_each_nodes_devices() -> None:
    from podfit.packing.engine import to_nodes
    from podfit.packing.heuristics import dot_product, first_fit

    pods = _gpu_pods(("a", 3, 1), ("b", 2, 2), ("c", 2, 1), ("d", 1, 3))
    nodes = (_gpu_nodes(4, 4),)
    for packing in (first_fit(pods, nodes, "sum"), first_fit(pods, nodes, "dominant"), dot_product(pods, nodes)):
        placed = to_nodes(packing, pods, nodes, skip_empty=False)
        assert max(_used(placed, pods)) <= 4, packing.name
        assert packing.complete, packing.name  # 14 GPUs of 16: each heuristic finds a placement
    tmpl = _gpu_nodes(1, 4)
    for packing in (
        first_fit(pods, [], "sum", template=tmpl, max_open=20),
        dot_product(pods, [], template=tmpl, max_open=20),
    ):
        placed = to_nodes(packing, pods, [tmpl], skip_empty=True)
        assert max(_used(placed, pods)) <= 4 and packing.complete, packing.name


def test_least_nodes_count_devices_and_a_class_without_them_is_excluded() -> None:
    from podfit.packing.engine import analyze
    from podfit.packing.model import GI, VMClass

    pods = _gpu_pods(("train", 1, 1), ("infer", 1, 1), ("embed", 1, 1))
    classes = (VMClass("gpu-node", 16_000, 64 * GI), VMClass("cpu-small", 4_000, 16 * GI))
    a = analyze(pods, (_gpu_nodes(4, 2),), classes, class_extended={"gpu-node": ((GPU, 2),)}, time_budget=HANG_GUARD_S)
    assert a.min_nodes["gpu-node"].nodes == 2 and a.min_nodes["gpu-node"].exact
    assert (a.recommendation.vm_class, a.recommendation.nodes) == ("gpu-node", 2)
    assert "cpu-small" not in a.min_nodes
    assert a.recommendation.excluded["cpu-small"].startswith("its nodes do not offer 1 nvidia.com/gpu")


def _check(where: Path, rule: str) -> list[dict]:
    import os

    cwd = os.getcwd()
    os.chdir(where)
    try:
        res = run(
            "check",
            "deploy",
            "--platform",
            "platform.yaml",
            "--rule",
            rule,
            "--format",
            "json",
            "--fail-on",
            "never",
            "--engine",
            "embedded",
        )
    finally:
        os.chdir(cwd)
    assert res.exit_code == 0, res.output
    return [f for f in json.loads(res.stdout)["findings"] if f["rule"] == rule]


def test_a_gpu_daemonset_on_a_pool_without_gpus_is_pf303() -> None:
    (f,) = _check(ROOT / "testdata" / "PF303" / "fail_gpu_daemonset_on_pool_without_gpus", "PF303")
    assert "1 nvidia.com/gpu" in f["message"] and "cpu" in f["message"] and "3 nodes" in f["message"]
    assert f["details"]["pools_lacking"] == ["cpu"]


def test_gpus_a_daemonset_takes_are_not_offered_to_other_pods() -> None:
    (f,) = _check(ROOT / "testdata" / "PF303" / "fail_gpu_taken_by_daemonset", "PF303")
    assert f["object"]["name"] == "infer" and "gpu: 0 nvidia.com/gpu" in f["message"]
    assert _check(ROOT / "testdata" / "PF303" / "pass_gpu_daemonset_on_gpu_pool", "PF303") == []


def test_right_sizing_counts_gpus_and_never_names_a_class_without_them() -> None:
    (f,) = _check(ROOT / "testdata" / "PF604" / "fail_gpu_pods_count_gpus", "PF604")
    assert f["details"]["recommended"] == {"vm_class": "gpu-node", "nodes": 2}
    assert [c["vm_class"] for c in f["details"]["candidates"]] == ["gpu-node"]


def test_no_class_known_to_offer_the_devices_is_said_not_passed(tmp_path: Path) -> None:
    """Pools that do not state their devices (no allocatable): packing lets GPU pods use them, but
    right-sizing knows no class that offers a GPU, and says so instead of advising a class."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "platform.yaml").write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: gpu}\nspec:\n  runtime: bare-metal\n"
        "  nodePools:\n    - {name: gpu, vmClass: gpu-node, count: 2}\n"
        "  vmClasses:\n    - {name: gpu-node, cpus: 16, memory: 64Gi}\n"
    )
    src = ROOT / "testdata" / "PF604" / "fail_gpu_pods_count_gpus" / "deploy" / "gpu.yaml"
    (tmp_path / "deploy" / "gpu.yaml").write_text(src.read_text())
    (f,) = _check(tmp_path, "PF604")
    assert "no advice" in f["message"] and "1 nvidia.com/gpu" in f["message"]
    assert f["details"]["recommended"] is None
    assert _check(tmp_path, "PF601") == []  # an unstated offer limits nothing


def test_free_cpu_beside_spent_devices_is_stranded() -> None:
    """A GPU node whose GPU is taken keeps CPU that the GPU pods, the only ones allowed there,
    cannot use: stranded (PF602); with a GPU left, the same CPU is usable."""
    from podfit.packing.engine import pack, stranded
    from podfit.packing.model import Problem

    pods = _gpu_pods(("infer", 1, 1))
    for gpus, expected in ((1, 1), (2, 0)):
        nodes = (_gpu_nodes(1, gpus),)
        fit = pack(Problem(pods, nodes), HANG_GUARD_S)
        assert len(stranded(pods, fit.nodes, nodes).nodes) == expected, gpus


def test_an_extended_resource_the_api_server_rejects_is_pf903(tmp_path: Path) -> None:
    """A GPU count that is not a quantity, negative, too large or not whole is left out of packing
    (the pod would be sized as asking for none, and pass): it is PF903 on its field."""
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    resources:\n"
        "      requests: {{cpu: 100m, memory: 64Mi, nvidia.com/gpu: {v}}}\n"
        "      limits: {{cpu: 100m, memory: 64Mi, nvidia.com/gpu: {v}}}\n"
    )
    for value, reason in (
        ("abc", "expected a number"),
        ('"-1"', "cannot be negative"),
        ('"1e30"', "too large"),
        ('"0.5"', "whole units"),
        ("2m", "whole units"),
        ("null", "expected a number"),
    ):
        manifest = tmp_path / "pod.yaml"
        manifest.write_text(pod.format(v=value))
        res = run("check", manifest, "--format", "json", "--rule", "PF903")
        found = json.loads(res.stdout)["findings"]
        assert res.exit_code == 1, value
        assert [(f["line"], f["container"]) for f in found] == [(9, "c"), (10, "c")], value
        assert all("nvidia.com/gpu" in f["message"] and reason in f["message"] for f in found), found
    for value in ("2", '"1"', "0", '"1k"'):
        manifest.write_text(pod.format(v=value))
        res = run("check", manifest, "--format", "json", "--rule", "PF903")
        assert (res.exit_code, json.loads(res.stdout)["findings"]) == (0, []), value
