"""Cloud node pools: the instance table, each service's allocatable, --nodes, a profile's
instanceType, eksctl ClusterConfig and Karpenter NodePool readers, and hostile shapes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit import cloud
from podfit.cli import main
from podfit.clusters import node_pools_from_objects
from podfit.loader import InputFile, load
from podfit.platform import MAX_NODES, PlatformError, parse_platform

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "testdata" / "cloud"
EMPTY_CONFIG = ROOT / "tests" / "data" / "empty-config.yaml"
MiB, GiB = 2**20, 2**30


def run(*args: str) -> tuple[int, dict]:
    res = CliRunner().invoke(
        main, ["check", "--format", "json", "--config", str(EMPTY_CONFIG), "--engine", "embedded", *args]
    )
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, (json.loads(res.stdout) if res.exit_code in (0, 1) else {"output": res.output})


def findings(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


def pools_of(text: str):
    return node_pools_from_objects(load([InputFile("c.yaml", text.encode())]).objects)


# ------------------------------------------------------------------------------ the table ---


def test_every_row_has_a_known_source_and_a_sane_shape():
    raw = json.loads((ROOT / "analyzer" / "podfit" / "data" / "instances.json").read_text())
    names = [r["name"] for r in raw["instanceTypes"]]
    assert len(names) == len(set(names))
    for r in raw["instanceTypes"]:
        assert r["source"] in raw["sources"], r["name"]
        assert r["vcpus"] >= 1 and r["memoryMiB"] >= 512 and r["gpus"] >= 0
        assert r["provider"] in cloud.PROVIDERS.values()
        if r["provider"] == "aws":
            assert r["enis"] >= 2 and r["ipv4PerEni"] >= 2
    # every source is described in the docs
    doc = (ROOT / "docs" / "platform.md").read_text()
    for key in raw["sources"]:
        assert key in doc


def test_eks_max_pods_matches_the_eni_formula_and_the_ami_file():
    # values of the EKS AMI's eni-max-pods.txt for these types
    expected = {
        "m5.large": 29,
        "m5.xlarge": 58,
        "m5.4xlarge": 234,
        "t3.medium": 17,
        "g5.48xlarge": 345,
        "t2.large": 35,
        "g4dn.xlarge": 29,
        "p3.16xlarge": 234,
        "m5a.24xlarge": 737,
    }
    for name, pods in expected.items():
        assert cloud.eks_max_pods(cloud.lookup("eks", name)) == pods


def test_eks_allocatable_uses_the_ami_reservation():
    t = cloud.lookup("eks", "m5.large")
    cpu, memory, pods = cloud.eks_allocatable(t)
    assert cpu == 2000 - 60 - 10  # 6% of the first core, 1% of the second
    assert memory == 8 * GiB - (11 * 29 + 255) * MiB - 100 * MiB
    assert pods == 29
    # maxPodsPerNode lowers the memory kept back with the pods
    assert cloud.eks_allocatable(t, 10)[1] - memory == 11 * 19 * MiB


def test_gke_e2_standard_4_allocatable_is_3920m():
    cpu, memory, pods = cloud.gke_allocatable(cloud.lookup("gke", "e2-standard-4"))
    assert cpu == 3920
    # 25% of 4 GiB + 20% of 4 GiB + 10% of 8 GiB, and 100 MiB eviction
    assert memory == 16 * GiB - -(-(4 * 25 + 4 * 20 + 8 * 10) * GiB // 100) - 100 * MiB
    assert pods == 110


def test_gke_cpu_tier_above_four_cores_rounds_the_reservation_up():
    # 5 cores: 60 + 10 + 10 + 2.5 → 82.5m kept back, never less
    t = cloud.InstanceType("gce", "x", 5, 20 * 1024)
    assert cloud.gke_allocatable(t)[0] == 5000 - 83


@pytest.mark.parametrize("cores,reserved", [(1, 60), (2, 100), (4, 140), (8, 180), (16, 260), (32, 420), (64, 740)])
def test_aks_cpu_reservation_meets_every_point_of_the_aks_table(cores, reserved):
    assert cloud.aks_cpu_reserved(cores) == reserved


def test_aks_memory_is_the_lesser_of_the_per_pod_rate_and_a_quarter():
    big = cloud.lookup("aks", "Standard_D8s_v5")  # 32 GiB: 20 × 250 + 50 MiB < 8 GiB
    assert cloud.aks_allocatable(big)[1] == 32 * GiB - (20 * 250 + 50) * MiB - 100 * MiB
    small = cloud.InstanceType("azure", "x", 2, 4096)  # 4 GiB: a quarter is less
    assert cloud.aks_allocatable(small)[1] == 4 * GiB - GiB - 100 * MiB


def test_unknown_type_names_the_nearest_known():
    with pytest.raises(cloud.CloudError, match=r"nearest known: e2-standard-4"):
        cloud.lookup("gke", "e2-standrad-4")
    with pytest.raises(cloud.CloudError, match="unknown provider"):
        cloud.lookup("ec2", "m5.large")
    with pytest.raises(cloud.CloudError, match="unknown eks instance type"):  # a GCE type on EKS
        cloud.lookup("eks", "e2-standard-4")


# ------------------------------------------------------------------------------- --nodes ---


def test_gke_nodes_flag_3950m_guaranteed_pod_does_not_fit():
    code, report = run(str(DATA / "guaranteed-3950m.yaml"), "--nodes", "gke:e2-standard-4=3")
    assert code == 1
    [f] = findings(report, "PF303")
    assert f["severity"] == "error" and "3920m" in f["message"]
    code, report = run(str(DATA / "guaranteed-3950m.yaml"), "--nodes", "gke:e2-standard-8=3")
    assert not findings(report, "PF303") and not findings(report, "PF601")


def test_profile_instance_type_is_the_same_pool_as_nodes(tmp_path):
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: gke}\n"
        "spec:\n  runtime: kubernetes\n  nodePools:\n    - {name: general, instanceType: gke:e2-standard-4, count: 3}\n"
    )
    platform = parse_platform(profile.read_text(), str(profile))
    [pool] = platform.node_pools
    assert pool.vm_class == "e2-standard-4" and pool.allocatable == cloud.gke_allocatable(
        cloud.lookup("gke", "e2-standard-4")
    )
    _, report = run(str(DATA / "guaranteed-3950m.yaml"), "--platform", str(profile))
    assert [f["severity"] for f in findings(report, "PF303")] == ["error"]


def test_profile_unknown_instance_type_is_a_usage_error():
    text = (
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  runtime: kubernetes\n"
        "  nodePools:\n    - {instanceType: eks:m5.lrage, count: 2}\n"
    )
    with pytest.raises(PlatformError, match=r"p.yaml:6: spec.nodePools\[0\].instanceType: .*nearest known: m5.large"):
        parse_platform(text, "p.yaml")


@pytest.mark.parametrize(
    "value,says",
    [
        ("gke:e2-standrad-4=3", "nearest known: e2-standard-4"),
        ("eks:m5.large=0", "at least 1"),
        ("eks:m5.large=" + "9" * 5000, "at most 5,000"),
        ("m5.large=2", "PROVIDER:TYPE"),
        ("gke:e2-standard-4", "PROVIDER:TYPE=COUNT"),
    ],
)
def test_bad_nodes_values_are_usage_errors(value, says):
    for command in ("check", "pack", "fix"):
        res = CliRunner().invoke(main, [command, str(DATA / "guaranteed-3950m.yaml"), "--nodes", value])
        assert res.exit_code == 2, (command, res.output)
        assert says in res.output and "Traceback" not in res.output


def test_pack_counts_pods_per_node_from_nodes(tmp_path):
    res = CliRunner().invoke(main, ["pack", str(DATA / "small-pods.yaml"), "--nodes", "eks:m5.large=2"])
    assert res.exit_code == 1, res.output  # 60 pods, 2 × (29 − 2 DaemonSet pods) slots
    res = CliRunner().invoke(main, ["pack", str(DATA / "small-pods.yaml"), "--nodes", "eks:m5.large=3"])
    assert res.exit_code == 0, res.output  # 81 slots


# ------------------------------------------------------------------- cluster manifests ---


def test_eksctl_two_m5_large_hold_54_small_pods_not_60(tmp_path):
    for name in ("eksctl-cluster.yaml", "small-pods.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    code, report = run(str(tmp_path))
    assert code == 1
    [f] = findings(report, "PF601")
    assert f["severity"] == "error" and "54 pods available" in f["message"]
    # 54 of them fit: no finding
    (tmp_path / "small-pods.yaml").write_text(
        (DATA / "small-pods.yaml").read_text().replace("replicas: 60", "replicas: 54")
    )
    _, report = run(str(tmp_path))
    assert not findings(report, "PF601")


def test_eksctl_node_groups_read_as_pools():
    [managed, spot, default] = pools_of((ROOT / "testdata" / "PF913" / "pass_known_types.yaml").read_text())[:3]
    assert (managed.vm_class, managed.count, managed.max_count, managed.allocatable[2]) == ("t3.medium", 3, None, 17)
    assert (spot.vm_class, spot.count, spot.max_count, spot.scales_from_zero) == ("m6i.xlarge", 0, 4, True)
    assert (default.vm_class, default.count) == ("m5.large", 2)  # eksctl's defaults
    [labelled] = pools_of(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\nmanagedNodeGroups:\n"
        "  - name: gpu\n    instanceType: g5.xlarge\n    desiredCapacity: 1\n    maxPodsPerNode: 20\n"
        "    labels: {role: gpu}\n    taints: [{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]\n"
    )
    assert labelled.allocatable[2] == 20 and dict(labelled.extended) == {"nvidia.com/gpu": 1}
    assert ("role", "gpu") in labelled.labels and labelled.taints[0].effect == "NoSchedule"


def test_karpenter_limit_below_the_hpa_ceiling_is_pf606(tmp_path):
    for name in ("karpenter-nodepool.yaml", "hpa-24.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    _, report = run(str(tmp_path))
    [f] = findings(report, "PF606")
    assert f["severity"] == "warning" and "24 replicas" in f["message"]
    # at 32 CPUs the pool holds the 24 one-CPU pods
    np = tmp_path / "karpenter-nodepool.yaml"
    np.write_text(np.read_text().replace('cpu: "16"', 'cpu: "32"'))
    _, report = run(str(tmp_path))
    assert not findings(report, "PF606")


def test_karpenter_pool_takes_the_largest_type_within_its_limits():
    [pool] = pools_of((DATA / "karpenter-nodepool.yaml").read_text())
    t = cloud.instance_types()[pool.vm_class]
    assert t.category == "m" and t.vcpus == 16 and int(t.family[1:].rstrip("gi")) > 5
    assert (pool.count, pool.max_count) == (0, 1)


# ------------------------------------------------------------------------ hostile shapes ---


@pytest.mark.parametrize("limit", ["1e30", '"1e30"', '"999999999999999999999999999999Ei"', "-5", "{a: b}"])
def test_karpenter_huge_or_odd_limit_is_bounded(limit):
    text = (DATA / "karpenter-nodepool.yaml").read_text().replace('cpu: "16"', f"cpu: {limit}")
    pools = pools_of(text)
    assert all((p.max_count or 0) <= MAX_NODES for p in pools)


def test_karpenter_huge_limit_check_is_fast_and_bounded(tmp_path):
    (tmp_path / "np.yaml").write_text((DATA / "karpenter-nodepool.yaml").read_text().replace('cpu: "16"', "cpu: 1e30"))
    shutil.copy(DATA / "hpa-24.yaml", tmp_path / "hpa.yaml")
    code, report = run(str(tmp_path))
    assert code in (0, 1) and not findings(report, "PF606")  # 5,000 nodes hold them


def test_unknown_eksctl_type_is_pf913_not_a_traceback(tmp_path):
    (tmp_path / "c.yaml").write_text((DATA / "eksctl-cluster.yaml").read_text().replace("m5.large", "m5.lrage"))
    code, report = run(str(tmp_path))
    [f] = findings(report, "PF913")
    assert "nearest known: m5.large" in f["message"] and f["severity"] == "info"


@pytest.mark.parametrize("field,value", [("coresPerSocket", 10**5), ("coresPerSocket", 10**12), ("sockets", 10**6)])
def test_host_of_absurd_size_is_a_usage_error(tmp_path, field, value):
    host = {"name": "esx", "count": 4, "sockets": 2, "coresPerSocket": 16, "baseMHz": 2300, "memory": "512Gi"}
    host[field] = value
    profile = tmp_path / "p.yaml"
    profile.write_text(json.dumps({"apiVersion": "podfit.io/v1alpha1", "kind": "Platform", "spec": {"hosts": [host]}}))
    res = CliRunner().invoke(main, ["check", str(DATA / "guaranteed-3950m.yaml"), "--platform", str(profile)])
    assert res.exit_code == 2 and f"{field}: expected at most" in res.output


def test_eksctl_cluster_is_right_sized_among_instance_types_not_vsphere_classes(tmp_path):
    for name in ("eksctl-cluster.yaml", "small-pods.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    _, report = run(str(tmp_path))
    sized = findings(report, "PF604")
    assert sized and all(
        c["vm_class"] in cloud.instance_types() for f in sized for c in f["details"].get("candidates", ())
    )
    assert all("best-effort" not in f["message"] and "guaranteed-" not in f["message"] for f in sized)


def test_standalone_machine_deployment_with_an_aws_template_is_a_pool(tmp_path):
    for name in ("capi-aws-md.yaml", "six-cpu-pod.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    code, report = run(str(tmp_path))
    [f] = findings(report, "PF303")
    assert code == 1 and f["severity"] == "error" and "m5.xlarge" in f["message"]
    [pool] = pools_of((DATA / "capi-aws-md.yaml").read_text())
    assert (pool.vm_class, pool.count, pool.cluster) == ("m5.xlarge", 3, "shop")
    assert pool.allocatable == cloud.kubeadm_allocatable(cloud.lookup("eks", "m5.xlarge"))
    # a 3-CPU pod fits a 4-vCPU node
    (tmp_path / "six-cpu-pod.yaml").write_text((DATA / "six-cpu-pod.yaml").read_text().replace('cpu: "6"', 'cpu: "3"'))
    _, report = run(str(tmp_path))
    assert not findings(report, "PF303")


def test_machine_deployment_without_its_template_declares_no_pool():
    text = (DATA / "capi-aws-md.yaml").read_text().split("---\napiVersion: infrastructure")[0]
    assert pools_of(text) == []


def test_karpenter_generation_and_single_value_requirements():
    text = (
        (DATA / "karpenter-nodepool.yaml")
        .read_text()
        .replace(
            "- {key: kubernetes.io/arch, operator: In, values: [amd64]}",
            "- {key: kubernetes.io/arch, operator: In, values: [amd64]}\n"
            "        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}",
        )
        .replace('values: ["5"]', 'values: ["6"]')
    )
    [pool] = pools_of(text)
    assert cloud.instance_types()[pool.vm_class].family.startswith("m7")
    assert ("karpenter.sh/capacity-type", "spot") in pool.labels


def test_karpenter_requirement_of_many_values_is_read_once():
    values = ", ".join(f"x{i}" for i in range(200_000))
    text = (
        (DATA / "karpenter-nodepool.yaml")
        .read_text()
        .replace(
            "values: [m]}",
            f"values: [m]}}\n        - {{key: karpenter.k8s.aws/instance-family, operator: NotIn, values: [{values}]}}",
        )
    )
    [pool] = pools_of(text)
    assert pool.vm_class.startswith("m")


def test_eksctl_cluster_of_more_nodes_than_kubernetes_allows_is_bounded():
    groups = "".join(
        f"  - {{name: g{i}, instanceType: m5.large, desiredCapacity: 5000, maxSize: 9999999}}\n" for i in range(40)
    )
    pools = pools_of(
        f"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {{name: c}}\nmanagedNodeGroups:\n{groups}"
    )
    assert sum(p.count for p in pools) == MAX_NODES
    assert sum(p.most_nodes for p in pools) <= MAX_NODES


def test_eksctl_sizes_default_as_eksctl_defaults_them():
    text = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\nmanagedNodeGroups:\n"
    [one] = pools_of(text + "  - {name: a, desiredCapacity: 1}\n")
    [three] = pools_of(text + "  - {name: b, minSize: 3, maxSize: 6}\n")
    assert (one.count, one.max_count) == (1, None)
    assert (three.count, three.max_count) == (3, 6)


def test_docs_list_every_known_type():
    doc = (ROOT / "docs" / "platform.md").read_text()
    missing = [name for name in cloud.instance_types() if f"| {name} |" not in doc]
    assert not missing


@pytest.mark.parametrize(
    "files",
    [
        {"c.yaml": (DATA / "eksctl-cluster.yaml").read_text().replace("m5.large", "m5.lrage")},
        {"c.yaml": (ROOT / "testdata" / "PF913" / "fail_karpenter_no_type.yaml").read_text()},
        {"c.yaml": (ROOT / "testdata" / "PF913" / "fail_capi_template_type.yaml").read_text()},
    ],
    ids=["eksctl", "karpenter", "capi"],
)
def test_a_pool_podfit_cannot_size_stops_packing_verdicts(tmp_path, files):
    """60 pods beside a pool of unknown size: no PF601 either way, the rules say what they lack."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    shutil.copy(DATA / "small-pods.yaml", tmp_path / "app.yaml")
    code, report = run(str(tmp_path))
    assert findings(report, "PF913") and not findings(report, "PF601")
    skipped = {s["rule"]: s["reason"] for s in report["skipped_rules"]}
    assert "docs/platform.md" in skipped["PF601"]


def test_host_of_more_logical_cpus_than_linux_runs_is_a_usage_error(tmp_path):
    host = {"count": 1, "sockets": 64, "coresPerSocket": 1024, "threadsPerCore": 8, "baseMHz": 2300, "memory": "1Ti"}
    text = json.dumps({"apiVersion": "podfit.io/v1alpha1", "kind": "Platform", "spec": {"hosts": [host]}})
    with pytest.raises(PlatformError, match=r"524,288 logical CPUs .* at most 8,192"):
        parse_platform(text, "p.json")
    host.update(sockets=8, coresPerSocket=512, threadsPerCore=2)  # 8,192: the most there is
    assert parse_platform(
        json.dumps({"apiVersion": "podfit.io/v1alpha1", "kind": "Platform", "spec": {"hosts": [host]}}), "p.json"
    )
