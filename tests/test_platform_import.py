"""`podfit platform import`: node lists of each provider (testdata/platform-import/, written from the
providers' documented labels) → a Platform profile that validates, has the pools a person would
write, and gives `podfit check` the same verdicts as that hand-written profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podfit.cli import main
from podfit.platform import parse_platform
from podfit.platform_import import NodeImportError, node_infos, parse_objects, system_pods_per_node
from samples import ZONE_SPREAD

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "testdata" / "platform-import"
Ki = 1024


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def imported(tmp_path: Path, nodes: str, *extra: str):
    out = tmp_path / "platform.yaml"
    res = run("platform", "import", DATA / nodes, *extra, "-o", out)
    assert res.exit_code == 0, res.stderr
    text = out.read_text()
    return parse_platform(text, str(out)), text, res.stderr


def pool_view(platform):
    return [
        (
            p.name,
            p.cluster,
            p.role,
            p.vm_class,
            p.count,
            p.labels,
            p.taints,
            p.allocatable,
            p.system_pods,
            p.reserved_pods,
            p.kubelet_version,
        )
        for p in platform.node_pools
    ]


def class_view(platform, names):
    return sorted((c.name, c.cpus, c.memory_bytes, c.reserved) for c in platform.vm_classes if c.name in names)


@pytest.mark.parametrize(
    "provider, extra",
    [("eks", ("--pods", str(DATA / "eks" / "pods.yaml"))), ("kops", ()), ("tkg", ())],
)
def test_import_gives_the_hand_written_profile(tmp_path, provider, extra):
    got, _, _ = imported(tmp_path, f"{provider}/nodes.yaml", *extra)
    want = parse_platform((DATA / provider / "platform.yaml").read_text(), "hand-written")
    assert pool_view(got) == pool_view(want)
    classes = {p.vm_class for p in want.node_pools}
    assert class_view(got, classes) == class_view(want, classes)
    assert (got.runtime, got.kubelet, got.hosts, got.name) == (want.runtime, want.kubelet, (), want.name)


def test_round_trip_check_gives_the_same_findings(tmp_path):
    """import → check: the same report as with the hand-written profile, and the imported
    allocatable is what packing uses (3800m fits no m5.xlarge: 3920m − 180m of DaemonSet pods)."""
    out = tmp_path / "platform.yaml"
    run("platform", "import", DATA / "eks/nodes.yaml", "--pods", DATA / "eks/pods.yaml", "-o", out)
    reports = []
    for profile in (out, DATA / "eks/platform.yaml"):
        res = run("check", DATA / "app.yaml", "--platform", profile, "--format", "json", "--engine", "embedded")
        report = json.loads(res.stdout)
        reports.append(([(f["rule"], f["line"], f["message"]) for f in report["findings"]], res.exit_code))
    assert reports[0] == reports[1]
    findings, code = reports[0]
    assert code == 1
    too_large = [m for r, _, m in findings if r == "PF303"]
    assert len(too_large) == 1 and "3800m" in too_large[0], findings


def test_the_allocatable_is_what_packing_offers(tmp_path):
    """Without --pods the DaemonSets take nothing: 3800m fits the 3920m of an m5.xlarge."""
    out = tmp_path / "platform.yaml"
    run("platform", "import", DATA / "eks/nodes.yaml", "-o", out)
    res = run("check", DATA / "app.yaml", "--platform", out, "--format", "json", "--rule", "PF303")
    assert json.loads(res.stdout)["findings"] == []


def test_gke_json_pools(tmp_path):
    got, text, _ = imported(tmp_path, "gke/nodes.json")
    assert [(p.name, p.vm_class, p.count, p.allocatable) for p in got.node_pools] == [
        ("default-pool-europe-west1-b", "e2-standard-4", 1, (3920, 13292508 * Ki, 110)),
        ("default-pool-europe-west1-c", "e2-standard-4", 1, (3920, 13292508 * Ki, 110)),
        ("highcpu", "c2d-highcpu-16", 1, (15890, 28625500 * Ki, 64)),
    ]
    spot = got.node_pools[2]
    assert [(t.key, t.value, t.effect) for t in spot.taints] == [("cloud.google.com/gke-spot", "true", "NoSchedule")]
    # the two default-pool nodes are in two zones: a pool each, with its zone; the region is common
    labels = dict(got.node_pools[0].labels)
    assert labels["topology.kubernetes.io/zone"] == "europe-west1-b"
    assert labels["topology.kubernetes.io/region"] == "europe-west1"
    assert "kubernetes.io/hostname" not in labels
    assert yaml.safe_load(text)["spec"]["kubelet"] == {"maxPods": 64}


def test_gke_with_its_pods(tmp_path):
    """GKE's own pods (testdata/platform-import/gke/README.md): kube-proxy is a static pod there;
    every node runs 210m and 220Mi of system pods; kube-dns, konnectivity-agent and metrics-server
    are reserved where they run; the user's pod in `shop` is neither."""
    got, _, _ = imported(tmp_path, "gke/nodes.json", "--pods", str(DATA / "gke" / "pods.json"))
    view = [(p.name, p.count, p.system_pods, p.reserved_pods) for p in got.node_pools]
    dns, agent = ("kube-dns", 1, 260, 110 * 2**20), ("konnectivity-agent", 1, 10, 30 * 2**20)
    system = (210, 220 * 2**20, 3)
    assert view == [
        ("default-pool-europe-west1-b", 1, system, (agent, dns)),
        ("default-pool-europe-west1-c", 1, system, (agent, dns, ("metrics-server-v1.30.3", 1, 53, 155 * 2**20))),
        ("highcpu", 1, system, ()),
    ]


def test_aks_pools_by_agentpool_with_the_windows_pool_apart(tmp_path):
    got, _, _ = imported(tmp_path, "aks/nodes.yaml")
    view = [(p.name, p.vm_class, p.count, dict(p.labels)["kubernetes.io/os"]) for p in got.node_pools]
    assert view == [
        ("system", "Standard_D4s_v5", 1, "linux"),
        ("user", "Standard_D8s_v5", 2, "linux"),
        ("win", "Standard_D4s_v5", 1, "windows"),
    ]
    system = got.node_pools[0]
    assert [(t.key, t.effect) for t in system.taints] == [("CriticalAddonsOnly", "NoSchedule")]
    assert system.allocatable == (3860, 12880924 * Ki, 30)


def test_karpenter_nodepool_split_by_instance_type(tmp_path):
    got, _, err = imported(tmp_path, "karpenter/nodes.yaml")
    assert [(p.name, p.vm_class, p.count) for p in got.node_pools] == [
        ("default-c6i.2xlarge", "c6i.2xlarge", 1),
        ("default-m6i.xlarge", "m6i.xlarge", 1),
        ("gpu", "g5.2xlarge", 1),
    ]
    # karpenter.sh/disrupted is Karpenter's own, transient taint; the GPU pool's taint is the pool's
    assert got.node_pools[0].taints == ()
    assert [t.key for t in got.node_pools[2].taints] == ["nvidia.com/gpu"]
    assert "pool default-c6i.2xlarge: 1 × c6i.2xlarge (karpenter)" in err


def test_profile_says_what_it_leaves_out(tmp_path):
    _, text, err = imported(tmp_path, "kops/nodes.yaml")
    assert "spec.hosts" in text.split("apiVersion:")[0] and "cpuManagerPolicy" in text.split("apiVersion:")[0]
    assert "spec.hosts" in yaml.safe_load(text)["metadata"]["description"]
    assert "add spec.hosts (NUMA) and spec.ha yourself" in err


def test_cpu_manager_policy_where_a_label_shows_it():
    text = (DATA / "kops/nodes.yaml").read_text().replace("kubernetes.io/role: node", "cpumanager: 'true'")
    from podfit.platform_import import import_platform

    infos = node_infos(parse_objects(text, "n", "Node"), "n")
    assert import_platform(infos).cpu_manager_policy is None  # the control plane does not say
    workers = [i for i in infos if i.role == "worker"]
    assert import_platform(workers).cpu_manager_policy == "static"


def test_system_pods_are_daemonsets_and_static_pods_only():
    pods = parse_objects((DATA / "eks/pods.yaml").read_text(), "pods", "Pod")
    per, unplaced = system_pods_per_node(pods)
    # coredns (a ReplicaSet's pod) is not overhead; the pending aws-node pod has no node yet
    assert per["ip-192-168-12-34.us-west-2.compute.internal"] == (180, 120 * 2**20, 3)
    assert unplaced == 1
    mirror = {
        "kind": "Pod",
        "metadata": {"name": "etcd-cp", "annotations": {"kubernetes.io/config.mirror": "x"}},
        "spec": {"nodeName": "cp", "containers": [{"resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]},
    }
    assert system_pods_per_node([mirror])[0] == {"cp": (100, 100 * 2**20, 1)}


def test_bad_inputs_exit_2(tmp_path):
    empty = tmp_path / "pods-not-nodes.yaml"
    empty.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    res = run("platform", "import", empty)
    assert res.exit_code == 2 and "no Node objects" in res.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: lots, memory: 1Gi}}\n")
    res = run("platform", "import", broken)
    assert res.exit_code == 2 and "node n1" in res.stderr and "lots" in res.stderr
    with pytest.raises(NodeImportError):
        parse_objects("a: [", "x", "Node")


def test_a_pod_with_a_bad_quantity_exits_2(tmp_path):
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        "kind: Pod\nmetadata: {name: agent-x1, namespace: kube-system, ownerReferences: [{kind: DaemonSet, name: agent}]}\n"
        "spec:\n  nodeName: n1\n  containers: [{name: a, resources: {requests: {cpu: lots}}}]\n"
    )
    res = run("platform", "import", DATA / "kops/nodes.yaml", "--pods", pods)
    assert res.exit_code == 2 and "agent-x1" in res.stderr and "lots" in res.stderr, res.stderr


def test_a_kindless_node_list_is_read(tmp_path):
    """What `kubectl get --raw /api/v1/nodes` and client libraries give: a NodeList whose items have
    no kind. It imports as the same nodes as `kubectl get nodes -o json`."""
    nodes = json.loads((DATA / "gke" / "nodes.json").read_text())
    raw = {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": []}
    for item in nodes["items"]:
        raw["items"].append({k: v for k, v in item.items() if k not in ("kind", "apiVersion")})
    (tmp_path / "raw.json").write_text(json.dumps(raw))
    assert [n["metadata"]["name"] for n in parse_objects((tmp_path / "raw.json").read_text(), "raw", "Node")] == [
        n["metadata"]["name"] for n in nodes["items"]
    ]
    got, _, _ = imported(tmp_path, tmp_path / "raw.json")
    want, _, _ = imported(tmp_path, "gke/nodes.json")
    assert pool_view(got) == pool_view(want)


def test_pools_are_split_per_zone_and_keep_their_zone(tmp_path):
    """Zone-pinned workloads need the zone on the pool: a pool in one zone keeps its name and zone
    label; one across zones becomes a pool per zone, `<pool>-<zone>`, each with its zone."""
    got, _, _ = imported(tmp_path, "kops/nodes.yaml")
    zones = {p.name: dict(p.labels).get("topology.kubernetes.io/zone") for p in got.node_pools}
    assert zones == {"control-plane-us-east-1a": "us-east-1a", "nodes-us-east-1a": "us-east-1a"}
    eks, _, _ = imported(tmp_path, "eks/nodes.yaml")
    nodes = node_infos(parse_objects((DATA / "eks" / "nodes.yaml").read_text(), "e", "Node"), "e")
    expected: dict[str, int] = {}
    for n in nodes:
        name = f"{n.pool}-{dict(n.labels)['topology.kubernetes.io/zone']}"
        expected[name] = expected.get(name, 0) + 1
    got_pools = {p.name: p.count for p in eks.node_pools}
    assert (
        got_pools
        == expected
        == {
            "general-us-west-2a": 1,
            "general-us-west-2b": 1,
            "general-us-west-2c": 1,
            "memory-spot-us-west-2a": 1,
            "memory-spot-us-west-2b": 1,
        }
    )
    for p in eks.node_pools:
        assert p.name.endswith("-" + dict(p.labels)["topology.kubernetes.io/zone"])


def test_a_zone_pinned_workload_lands_in_its_zone(tmp_path):
    """A Deployment pinned to us-west-2b by nodeSelector: its scheduling is known on the imported
    EKS profile (no PF605), and it has only that zone's nodes: one m5.xlarge it may use (the spot
    node there is tainted), which takes 2 pods of 1 CPU but not 4 of 3 CPUs."""
    profile = tmp_path / "platform.yaml"
    assert run("platform", "import", DATA / "eks/nodes.yaml", "-o", profile).exit_code == 0
    app = tmp_path / "pinned.yaml"
    app.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: pinned, namespace: shop}\nspec:\n"
        "  replicas: 2\n  selector: {matchLabels: {app: pinned}}\n  template:\n"
        "    metadata: {labels: {app: pinned}}\n    spec:\n"
        "      nodeSelector: {topology.kubernetes.io/zone: us-west-2b}\n"
        "      containers:\n        - name: app\n          image: registry.example.com/pinned:1.0\n"
        "          resources: {requests: {cpu: '1', memory: 1Gi}, limits: {cpu: '1', memory: 1Gi}}\n"
    )
    res = run("check", app, "--platform", profile, "--format", "json", "--rule", "PF605", "--rule", "PF601")
    assert json.loads(res.stdout)["findings"] == []
    pinned = app.read_text().replace("replicas: 2", "replicas: 4").replace("cpu: '1'", "cpu: '3'")
    app.write_text(pinned)  # 4 pods of 3 CPUs: one per node, and us-west-2b has one m5.xlarge
    res = run("check", app, "--platform", profile, "--format", "json", "--rule", "PF601")
    (finding,) = json.loads(res.stdout)["findings"]
    assert finding["rule"] == "PF601", finding


def test_a_kubeadm_dump_with_static_pods_and_a_control_plane(tmp_path):
    """kubeadm: no pool labels (pools by shape), static pods on the control plane as its system
    pods, flannel's DaemonSet in its own namespace, coredns and metrics-server reserved where they
    run (one coredns on the control plane, which tolerates its taint)."""
    got, _, err = imported(tmp_path, "kubeadm-dump")
    want = parse_platform((DATA / "kubeadm-dump" / "platform.yaml").read_text(), "hand-written")
    assert pool_view(got) == pool_view(want)
    names = {p.vm_class for p in want.node_pools}
    assert class_view(got, names) == class_view(want, names)
    assert (got.runtime, got.kubelet) == (want.runtime, want.kubelet)
    assert "reserved: coredns × 1, metrics-server × 1" in err
    # packing: the control plane takes no pods, so only the workers' reserved pods are packed
    from podfit.packing.adapter import inputs_from

    inputs = inputs_from((), got)
    assert inputs.reserved == ("reserved/4cpu-8131852Ki/coredns", "reserved/4cpu-8131852Ki/metrics-server")
    assert [(p.name, p.count, p.pools) for p in inputs.pods] == [
        ("reserved/4cpu-8131852Ki/coredns", 1, ("4cpu-8131852Ki",)),
        ("reserved/4cpu-8131852Ki/metrics-server", 1, ("4cpu-8131852Ki",)),
    ]


def test_a_cluster_info_dump_directory_imports_with_its_pods(tmp_path):
    """`kubectl cluster-info dump --output-directory DIR`: nodes.json and each namespace's
    pods.json. The kube-system pods that are no DaemonSet's (coredns) become the pool's reserved
    pods; the finished Job's pod and the user's pods in other namespaces do not."""
    got, text, err = imported(tmp_path, "eks-dump")
    want = parse_platform((DATA / "eks-dump" / "platform.yaml").read_text(), "hand-written")
    assert pool_view(got) == pool_view(want)
    assert class_view(got, {"t3.small"}) == class_view(want, {"t3.small"})
    assert (got.runtime, got.kubelet) == (want.runtime, want.kubelet)
    assert [p.reserved_pods for p in got.node_pools] == [(("coredns", 1, 100, 70 * 2**20),)] * 2
    assert "and 2 pods.json: 2 nodes in 2 pools" in text
    assert "pool small-eu-west-1a: 1 × t3.small (eks); reserved: coredns × 1" in err


def test_reserved_pods_take_their_slots(tmp_path):
    """Two t3.small nodes of 11 pod slots, 2 of each taken by DaemonSet pods and 2 of the 18 left by
    coredns: 16 small pods fit, 17 do not; without coredns in the profile 18 would."""
    app = (DATA / "eks-dump" / "app.yaml").read_text()

    def fit(replicas: int, profile: Path) -> list[str]:
        manifest = tmp_path / f"app-{replicas}.yaml"
        manifest.write_text(app.replace("replicas: 16", f"replicas: {replicas}"))
        res = run("check", manifest, "--platform", profile, "--format", "json", "--rule", "PF601")
        return [f["message"] for f in json.loads(res.stdout)["findings"]]

    profile = tmp_path / "platform.yaml"
    assert run("platform", "import", DATA / "eks-dump", "-o", profile).exit_code == 0
    assert fit(16, profile) == []
    (message,) = fit(17, profile)
    # the 17 and the 2 coredns pods, in the 18 slots the DaemonSets leave
    assert "19 pods do not fit 2 nodes" in message and "18 pods available" in message, message
    without = tmp_path / "without.yaml"
    doc = yaml.safe_load(profile.read_text())
    for pool in doc["spec"]["nodePools"]:
        del pool["reservedPods"]
    without.write_text(yaml.safe_dump(doc))
    assert fit(18, without) == [] and len(fit(19, without)) == 1


def test_a_directory_without_nodes_json_is_a_usage_error(tmp_path):
    res = run("platform", "import", tmp_path)
    assert res.exit_code == 2 and "without nodes.json" in res.stderr


def test_zone_spread_holds_each_zone_to_its_share(tmp_path):
    """The EKS dump's two zones have 8 free pod slots each (11, less 2 DaemonSet pods and a coredns
    pod). 6 pods pinned to eu-west-1a leave it 2: 10 pods spread over the zones with maxSkew 1
    need 5 in each, so they do not fit, though 10 unconstrained pods would (2 + 8)."""
    from podfit.facts import build_facts
    from podfit.loader import make_object
    from podfit.packing.adapter import inputs_from

    profile = tmp_path / "platform.yaml"
    assert run("platform", "import", DATA / "eks-dump", "-o", profile).exit_code == 0
    app = tmp_path / "spread.yaml"
    app.write_text(ZONE_SPREAD)
    platform = parse_platform(profile.read_text(), str(profile))
    objects = [make_object(d, str(app)) for d in yaml.safe_load_all(ZONE_SPREAD)]
    inputs = inputs_from(build_facts(objects, platform).workloads, platform)
    parts = {p.name: (p.count, p.pools) for p in inputs.pods if p.name.startswith("Deployment/shop/spread")}
    assert parts == {
        "Deployment/shop/spread@eu-west-1a": (5, ("small-eu-west-1a",)),
        "Deployment/shop/spread@eu-west-1b": (5, ("small-eu-west-1b",)),
    }

    def pf601(text: str) -> list[str]:
        app.write_text(text)
        res = run("check", app, "--platform", profile, "--format", "json", "--rule", "PF601")
        return [f["message"] for f in json.loads(res.stdout)["findings"]]

    assert pf601(ZONE_SPREAD) != []
    unconstrained = (
        ZONE_SPREAD.split("      topologySpreadConstraints:")[0]
        + ZONE_SPREAD.split("matchLabels: {app: spread}}}\n")[1]
    )
    assert "topologySpreadConstraints" not in unconstrained and pf601(unconstrained) == []
    # maxSkew 4: at most 7 per zone, so at least 3 in eu-west-1a, which has 2 left; maxSkew 6: at
    # most 8, at least 2: 2 + 8 fits
    assert pf601(ZONE_SPREAD.replace("maxSkew: 1", "maxSkew: 4")) != []
    assert pf601(ZONE_SPREAD.replace("maxSkew: 1", "maxSkew: 6")) == []


def test_an_openshift_cluster_pools_by_machine_set(tmp_path):
    """OpenShift (testdata/platform-import/openshift/README.md): pools from the Machines' MachineSets,
    one per zone; control planes per zone; allocatable less systemReserved; the openshift-*
    Deployments and StatefulSets reserved where they run."""
    got, _, err = imported(tmp_path, "openshift/nodes.json", "--pods", str(DATA / "openshift" / "pods.json"))
    want = parse_platform((DATA / "openshift" / "platform.yaml").read_text(), "hand-written")
    assert pool_view(got) == pool_view(want)
    names = {p.vm_class for p in want.node_pools}
    assert class_view(got, names) == class_view(want, names)
    assert (got.runtime, got.kubelet) == (want.runtime, want.kubelet)
    assert "pool ocp-7x2kq-worker-us-east-1a: 2 × m5.xlarge (openshift); reserved: prometheus-k8s × 1" in err


OPENSHIFT_SPREAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 10
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: web}}}
      containers:
        - {name: app, image: registry.example.com/web:1, resources: {requests: {cpu: "1", memory: 1Gi}}}
"""


def test_openshift_zone_spread_by_hand(tmp_path):
    """Each worker offers 3500m less its DaemonSets' 134m: 3366m, less its reserved pods: three pods
    of 1 CPU on every worker, so us-east-1a (two workers) holds 6 and the others 3 each. Spread at
    maxSkew 1, 10 pods are 4 + 3 + 3 (the 4 in us-east-1a): they fit; 11 need 4 in two zones: they
    do not, though 12 unspread pods fit (6 + 3 + 3)."""
    profile = tmp_path / "platform.yaml"
    res = run(
        "platform",
        "import",
        DATA / "openshift" / "nodes.json",
        "--pods",
        DATA / "openshift" / "pods.json",
        "-o",
        profile,
    )
    assert res.exit_code == 0, res.stderr
    app = tmp_path / "app.yaml"

    def pf601(text: str) -> list[str]:
        app.write_text(text)
        res = run("check", app, "--platform", profile, "--format", "json", "--rule", "PF601")
        return [f["message"] for f in json.loads(res.stdout)["findings"]]

    assert pf601(OPENSHIFT_SPREAD) == []
    assert pf601(OPENSHIFT_SPREAD.replace("replicas: 10", "replicas: 11")) != []
    unspread = OPENSHIFT_SPREAD.replace("maxSkew: 1", "maxSkew: 12").replace("replicas: 10", "replicas: 12")
    assert pf601(unspread) == []
    assert pf601(unspread.replace("replicas: 12", "replicas: 13")) != []
