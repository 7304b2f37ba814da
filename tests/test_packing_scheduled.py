"""What really gets scheduled: host ports (one pod per node for each), autoscalers (the replicas an
HPA or KEDA ScaledObject keeps, PF606 for the scale-out ceiling) and pod (anti-)affinity against
DaemonSet pods, in the pod model, the packing (bounds, heuristics, CP-SAT) and the rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podfit.cli import main
from podfit.loader import make_object
from podfit.packing import NodeType, PodType, Problem, exact, pack
from podfit.packing.adapter import inputs_from
from podfit.packing.bounds import certificates, lower_bound, port_cliques
from podfit.packing.engine import analyze, min_nodes
from podfit.platform import DEFAULT_PLATFORM, NodePool
from podfit.scheduling import HostPort, host_ports_from_spec
from podfit.workloads import autoscaled_replicas, build_workloads

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 60  # pack() returns at its first proof; the budget only ends a search that hangs


def objects(text: str):
    return [make_object(d, "t.yaml", i + 1) for i, d in enumerate(yaml.safe_load_all(text)) if d]


def workloads(text: str):
    return build_workloads(objects(text))[0]


def run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def pack_json(path: Path, *extra) -> dict:
    res = run(["pack", path, "--format", "json", "--time-budget", "20s", *extra])
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.stdout)


def findings(path: Path, *rules: str) -> list[dict]:
    args = ["check", path, "--format", "json", "--fail-on", "never"]
    for r in rules:
        args += ["--rule", r]
    res = run(args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["findings"]


def deployment(name: str, replicas: int | None = 1, spec=None, labels=None, kind="Deployment", ns="shop") -> dict:
    labels = labels or {"app": name}
    doc = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "i:1", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
                    ],
                    **(spec or {}),
                },
            },
        },
    }
    if replicas is not None and kind != "DaemonSet":
        doc["spec"]["replicas"] = replicas
    return doc


def dump(*docs: dict) -> str:
    return yaml.safe_dump_all(docs)


def ports(*entries: dict) -> list[dict]:
    return [{"name": "c", "image": "i:1", "ports": list(entries), "resources": {"requests": {"cpu": "100m"}}}]


# ------------------------------------------------------------------------- host ports: model ---


def test_host_ports_as_the_scheduler_counts_them():
    spec = {
        "containers": [
            {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9090}]},
            {"name": "b", "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}]},
            {"name": "c", "ports": [{"containerPort": 81, "hostPort": 0}, {"containerPort": 82, "hostIP": "0.0.0.0"}]},
        ],
        # init containers' ports are not counted by the NodePorts filter
        "initContainers": [{"name": "i", "ports": [{"containerPort": 7, "hostPort": 7}]}],
    }
    assert host_ports_from_spec(spec) == (HostPort("", 8080, "TCP"), HostPort("10.0.0.1", 53, "UDP"))
    # hostNetwork: every containerPort is bound (hostPort defaults to it)
    net = host_ports_from_spec({**spec, "hostNetwork": True})
    assert {str(p) for p in net} == {"8080/TCP", "9090/TCP", "10.0.0.1:53/UDP", "81/TCP", "82/TCP"}


def test_host_port_conflicts_follow_host_port_info():
    every, one, other = HostPort("", 80), HostPort("10.0.0.1", 80), HostPort("10.0.0.2", 80)
    assert every.conflicts(one) and one.conflicts(every) and every.conflicts(every)
    assert one.conflicts(one) and not one.conflicts(other)
    assert not every.conflicts(HostPort("", 80, "UDP")) and not every.conflicts(HostPort("", 81))


def test_workload_pod_model_carries_host_ports_and_host_network():
    (w,) = workloads(
        dump(deployment("agent", spec={"hostNetwork": True, "containers": ports({"containerPort": 6666})}))
    )
    assert w.pod.host_network and w.pod.host_ports == (HostPort("", 6666, "TCP"),)
    (plain,) = workloads(dump(deployment("web")))
    assert plain.pod.host_ports == () and not plain.pod.host_network


# ----------------------------------------------------------------------- host ports: packing ---


def test_sysdig_rc_does_not_fit_four_nodes():
    """kubernetes/examples' sysdig-rc: 100 hostNetwork replicas binding 6666 on 4 nodes."""
    out = pack_json(ROOT / "testdata/PF601/fail_host_network_port.yaml")
    assert out["feasible"] is False and out["proof"] == "lower-bound"
    (pod,) = out["pods"]
    assert pod["host_ports"] == ["6666/TCP"] and pod["count"] == 100
    bound = next(b for b in out["lower_bound"]["violated"] if b["kind"] == "host-port")
    assert (bound["needed"], bound["available"]) == (100, 4)
    (f,) = findings(ROOT / "testdata/PF601/fail_host_network_port.yaml", "PF601")
    assert "100 pods that bind hostPort 6666/TCP" in f["message"] and "only 4 nodes" in f["message"]
    assert f["details"]["certificate"] == "host-port"


def test_pf604_sizes_one_node_per_host_port_pod():
    (f,) = findings(ROOT / "testdata/PF604/fail_host_port_per_node.yaml", "PF604")
    assert f["message"].startswith("right-size: 5 × "), f["message"]


def node(name: str, count: int, cpu: int = 4000) -> NodeType:
    return NodeType(name, "c", count, cpu, 16 * 2**30, 110)


def test_placements_keep_one_pod_per_node_and_port():
    five = PodType("ingress", 100, 2**20, count=5, host_ports=(("", 80, "TCP"),))
    res = pack(Problem((five,), (node("w", 5),)), HANG_GUARD_S)
    assert res.feasible is True and all(dict(n.pods).get("ingress", 0) == 1 for n in res.nodes)
    assert pack(Problem((five,), (node("w", 4),)), HANG_GUARD_S).feasible is False
    # CP-SAT alone (no bound) proves it too: the per-node cap is in the exact model
    assert exact.solve_fixed((five,), (node("w", 4),), HANG_GUARD_S).status == "infeasible"
    assert exact.solve_fixed((five,), (node("w", 5),), HANG_GUARD_S).status == "feasible"


def two_workloads(a_ports, b_ports, replicas=(2, 2)):
    text = dump(
        deployment("a", replicas[0], spec={"containers": ports(*a_ports)}),
        deployment("b", replicas[1], spec={"containers": ports(*b_ports)}),
    )
    return inputs_from(workloads(text), DEFAULT_PLATFORM, [NodePool("best-effort-large", 3, "w")])


def test_workloads_binding_one_port_conflict_and_form_a_clique():
    inp = two_workloads([{"containerPort": 80, "hostPort": 80}], [{"containerPort": 8080, "hostPort": 80}])
    a, b = inp.pods
    assert a.conflicts == (b.name,) and b.conflicts == (a.name,)
    (clique,) = port_cliques(inp.pods)
    assert clique[0] == "80/TCP" and {p.name for p in clique[1]} == {a.name, b.name}
    # 4 pods on 3 nodes: the clique proves it
    assert any(c.kind == "host-port" and c.violated for c in certificates(inp.pods, inp.pools))
    assert lower_bound(inp.pods, inp.pools[0].allocatable)[0] == 4
    assert pack(Problem(inp.pods, inp.pools), HANG_GUARD_S).feasible is False


def test_distinct_addresses_or_protocols_do_not_conflict():
    inp = two_workloads(
        [{"containerPort": 80, "hostPort": 80, "hostIP": "10.0.0.1"}],
        [{"containerPort": 80, "hostPort": 80, "hostIP": "10.0.0.2"}],
        replicas=(3, 3),
    )
    assert all(not p.conflicts for p in inp.pods)
    res = pack(Problem(inp.pods, inp.pools), HANG_GUARD_S)
    assert res.feasible is True  # three nodes, one pod of each per node
    udp = two_workloads(
        [{"containerPort": 53, "hostPort": 53}], [{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}]
    )
    assert all(not p.conflicts for p in udp.pods)
    # an address-bound port conflicts with the same port on every address
    mixed = two_workloads(
        [{"containerPort": 80, "hostPort": 80, "hostIP": "10.0.0.1"}], [{"containerPort": 80, "hostPort": 80}]
    )
    assert mixed.pods[0].conflicts == (mixed.pods[1].name,)


def test_exact_model_keeps_conflicting_binders_apart():
    """A binds 80, B binds 443, C binds both on one address: two nodes hold A+B and C, never A+C."""
    a = PodType("a", 100, 2**20, host_ports=(("", 80, "TCP"),), conflicts=("c",))
    b = PodType("b", 100, 2**20, host_ports=(("", 443, "TCP"),), conflicts=("c",))
    c = PodType("c", 100, 2**20, host_ports=(("10.0.0.1", 80, "TCP"), ("10.0.0.1", 443, "TCP")), conflicts=("a", "b"))
    res = exact.solve_fixed((a, b, c), (node("w", 2),), HANG_GUARD_S)
    assert res.status == "feasible"
    for content in res.content:
        types = {t for t, k in content if k}
        assert not ({0, 2} <= types or {1, 2} <= types)
    assert exact.solve_fixed((a, b, c), (node("w", 1),), HANG_GUARD_S).status == "infeasible"


# --------------------------------------------------------------------------- DaemonSets ---


def test_host_port_bound_by_a_daemonset_everywhere():
    path = ROOT / "testdata/PF601/fail_host_port_taken_by_daemonset.yaml"
    out = pack_json(path)
    assert out["feasible"] is False
    (pod,) = out["pods"]
    assert pod["daemonsets_avoided"] == ["DaemonSet/monitoring/node-exporter"]
    (f,) = findings(path, "PF601")
    assert "hostPort 9100/TCP is bound by DaemonSet/monitoring/node-exporter" in f["message"]
    assert f["object"]["name"] == "custom-exporter"


def test_anti_affinity_to_a_daemonset_runs_nowhere():
    path = ROOT / "testdata/PF601/fail_anti_affinity_to_daemonset.yaml"
    out = pack_json(path)
    assert out["feasible"] is False and out["proof"] == "lower-bound"
    assert any(b["kind"] == "no-matching-pool" for b in out["lower_bound"]["violated"])
    (f,) = findings(path, "PF601")
    assert "required pod anti-affinity against DaemonSet/logging/fluent-bit" in f["message"]


DS_ON_XLARGE = deployment(
    "cache",
    kind="DaemonSet",
    spec={"nodeSelector": {"node.kubernetes.io/instance-type": "best-effort-xlarge"}},
)
TWO_POOLS = [NodePool("best-effort-large", 2, "small"), NodePool("best-effort-xlarge", 2, "big")]


def test_anti_affinity_to_a_daemonset_leaves_the_pools_it_does_not_run_on():
    avoid = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    inp = inputs_from(workloads(dump(DS_ON_XLARGE, deployment("web", 4, spec=avoid))), DEFAULT_PLATFORM, TWO_POOLS)
    res = pack(Problem(inp.pods, inp.pools), HANG_GUARD_S)
    assert res.feasible is True
    assert {n.pool for n in res.nodes if n.pods} == {"small"}
    # the DaemonSet's own term against the Deployment's pods keeps them apart the same way
    ds = deployment(
        "cache",
        kind="DaemonSet",
        spec={
            **DS_ON_XLARGE["spec"]["template"]["spec"],
            **{
                "affinity": {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
                        ]
                    }
                }
            },
        },
    )
    inp2 = inputs_from(workloads(dump(ds, deployment("web", 4))), DEFAULT_PLATFORM, TWO_POOLS)
    (web,) = inp2.pods
    assert web.avoids == ("DaemonSet/shop/cache",)
    assert not web.allowed_on(next(n for n in inp2.pools if n.name == "big"))


def test_affinity_to_a_daemonset_is_met_only_where_it_runs():
    need = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    inp = inputs_from(workloads(dump(DS_ON_XLARGE, deployment("web", 6, spec=need))), DEFAULT_PLATFORM, TWO_POOLS)
    (web,) = inp.pods
    assert web.needs == (("DaemonSet/shop/cache",),)
    res = pack(Problem(inp.pods, inp.pools), HANG_GUARD_S)
    assert res.feasible is True and {n.pool for n in res.nodes if n.pods} == {"big"}
    # the fixture: a DaemonSet on every node meets it everywhere
    assert pack_json(ROOT / "testdata/PF601/pass_affinity_to_daemonset.yaml")["feasible"] is True
    # a term that also selects another workload's pods is not modelled (any node may do)
    other = deployment("cache-b", 1, labels={"app": "cache"})
    inp2 = inputs_from(
        workloads(dump(DS_ON_XLARGE, other, deployment("web", 6, spec=need))), DEFAULT_PLATFORM, TWO_POOLS
    )
    assert next(p for p in inp2.pods if p.name.endswith("/web")).needs == ()


def test_min_nodes_never_sizes_a_class_whose_daemonset_bars_a_pod():
    tkc_pools = [NodePool("best-effort-large", 3, "workers")]
    inp = inputs_from(
        workloads((ROOT / "testdata/PF601/fail_host_port_taken_by_daemonset.yaml").read_text()),
        DEFAULT_PLATFORM,
        tkc_pools,
    )
    a = analyze(inp.pods, inp.pools, inp.classes, daemons=inp.daemons, time_budget=HANG_GUARD_S)
    assert a.min_nodes == {} and a.recommendation.vm_class is None
    why = a.recommendation.excluded["best-effort-large"]
    assert why == "its nodes run DaemonSets that Deployment/monitoring/custom-exporter cannot share a node with"
    (pod,) = inp.pods
    assert min_nodes((pod,), inp.pools[0], HANG_GUARD_S) is None


# --------------------------------------------------------------------------- autoscalers ---


@pytest.mark.parametrize(
    ("declared", "low", "high", "packed"),
    [(None, 20, 40, 20), (1, 20, 40, 20), (30, 20, 40, 30), (60, 2, 40, 40), (0, 2, 10, 0), (None, 0, 30, 0)],
)
def test_autoscaled_replicas_as_the_controller_sets_them(declared, low, high, packed):
    assert autoscaled_replicas(declared, low, high) == packed


def hpa(name: str, target: str, min_r=None, max_r=10, api="autoscaling/v2", kind="Deployment", ns="shop") -> dict:
    spec: dict = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target}, "maxReplicas": max_r}
    if min_r is not None:
        spec["minReplicas"] = min_r
    return {
        "apiVersion": api,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def test_hpa_v1_and_v2_and_keda_set_the_replicas():
    keda = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "q", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"name": "consumer"}, "maxReplicaCount": 30},
    }
    text = dump(
        deployment("web", 1),
        hpa("web", "web", 20, 40),
        deployment("api", None),
        hpa("api", "api", None, 5, api="autoscaling/v1"),
        deployment("db", 3, kind="StatefulSet"),
        hpa("db", "db", 1, 2, kind="StatefulSet"),
        deployment("consumer", None),
        keda,
        deployment("elsewhere", 2),
        hpa("elsewhere", "elsewhere", 9, 10, ns="other"),  # another namespace: not its target
        deployment("broken", 2),
        hpa("broken", "broken", 9, 3),  # minReplicas above maxReplicas: rejected, left out
    )
    got = {w.ref.name: (w.replicas, w.autoscaler) for w in workloads(text)}
    assert got["web"][0] == 20 and got["web"][1].max_replicas == 40 and got["web"][1].declared_replicas == 1
    assert got["api"][0] == 1 and got["api"][1].min_replicas == 1  # v1 default minReplicas 1
    assert got["db"][0] == 2  # lowered to maxReplicas
    assert got["consumer"][0] == 0 and got["consumer"][1].max_replicas == 30  # KEDA: idle at 0
    assert got["elsewhere"] == (2, None) and got["broken"] == (2, None)


def test_hpa_min_replicas_is_what_packing_counts():
    path = ROOT / "testdata/PF601/fail_hpa_min_replicas.yaml"
    out = pack_json(path)
    assert out["feasible"] is False and out["pods"][0]["count"] == 20


def test_pf606_says_how_many_replicas_can_run():
    (f,) = findings(ROOT / "testdata/PF606/fail_hpa_max_too_large.yaml", "PF606")
    assert f["object"]["kind"] == "HorizontalPodAutoscaler" and f["severity"] == "warning"
    # 3 large nodes of 3750m allocatable hold 5 pods of 700m each
    assert f["details"]["replicas_that_fit"] == 15 and f["details"]["refused_replicas"] == 16
    assert "15 can run beside the other pods" in f["message"]
    (k,) = findings(ROOT / "testdata/PF606/fail_keda_max_replica_count.yaml", "PF606")
    # KEDA at 0 while idle; 2 nodes hold 7 pods of 500m each
    assert k["details"]["packed_replicas"] == 0 and k["details"]["replicas_that_fit"] == 14
    assert not findings(ROOT / "testdata/PF606/pass_hpa_max_fits.yaml", "PF606")


def test_pf606_counts_the_other_pods_and_host_ports(tmp_path):
    """Beside a workload that takes 3 of each node's 3750m, 3 pods of 200m fit per node: 9 of 10;
    with a host port, one per node: 3."""
    base = (ROOT / "testdata/PF606/pass_hpa_max_fits.yaml").read_text()
    big = {"name": "c", "image": "i:1", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}
    busy = tmp_path / "busy.yaml"
    busy.write_text(base + "---\n" + dump(deployment("batch", 3, spec={"containers": [big]})))
    (f,) = findings(busy, "PF606")
    assert (f["details"]["replicas_that_fit"], f["details"]["refused_replicas"]) == (9, 10)
    ported = tmp_path / "ported.yaml"
    ported.write_text(base.replace("ports: [{containerPort: 80}]", "ports: [{containerPort: 80, hostPort: 80}]"))
    (g,) = findings(ported, "PF606")
    assert (g["details"]["replicas_that_fit"], g["details"]["refused_replicas"]) == (3, 4)  # least refused
    assert g["details"]["certificate_at_max"] == "host-port"


def test_hostile_autoscalers_and_ports_are_read_as_far_as_they_go():
    """Malformed fields never raise: an autoscaler without a usable target or bounds is left out,
    a port that is not a number binds nothing (PF902 reports the schema)."""
    bad = [
        {"scaleTargetRef": {"kind": ["Deployment"], "name": "web"}, "maxReplicas": 5},
        {"scaleTargetRef": {"kind": "Deployment", "name": {"x": 1}}, "maxReplicas": 5},
        {"scaleTargetRef": "web", "maxReplicas": 5},
        {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": "5"},
        {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": True},
        {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": -1},
    ]
    docs = [deployment("web", 2)] + [
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": f"h{i}", "namespace": "shop"},
            "spec": s,
        }
        for i, s in enumerate(bad)
    ]
    (w,) = workloads(dump(*docs))
    assert (w.replicas, w.autoscaler) == (2, None)
    # minReplicas: null is left out (default 1)
    nulled = hpa("web", "web", None, 4)
    nulled["spec"]["minReplicas"] = None
    (w,) = workloads(dump(deployment("web", None), nulled))
    assert w.replicas == 1 and w.autoscaler.min_replicas == 1
    spec = {
        "hostNetwork": True,
        "containers": [{"name": "c", "ports": [{"containerPort": "80"}, {"hostPort": True}, "x", None]}],
    }
    assert host_ports_from_spec(spec) == ()


def test_pf606_takes_the_pools_at_their_cluster_autoscaler_maximum(tmp_path):
    """5 pods of 700m per node: 50 replicas need 10 nodes, which a node group of 3 growing to 10
    holds (profile maxCount); 80 do not: 50 run. A Cluster API machine deployment's max-size
    annotation is the same maximum, its min-size the nodes it starts with."""
    dirs = ROOT / "testdata/PF606"
    fixture = dirs / "fail_beyond_cluster_autoscaler_max"
    res = run(
        ["check", fixture / "deploy", "--platform", fixture / "platform.yaml", "--rule", "PF606", "--format", "json"]
        + ["--fail-on", "never"]
    )
    (f,) = json.loads(res.stdout)["findings"]
    assert (f["details"]["replicas_that_fit"], f["details"]["refused_replicas"]) == (50, 51)
    assert f["details"]["nodes_at_autoscaler_max"] == {"ng-general": 10}
    assert "at their cluster autoscaler maximum (10 × m5.xlarge, 3 now): 50 can run" in f["message"]
    (g,) = findings(dirs / "fail_capi_autoscaler_max_size.yaml", "PF606")
    assert (g["details"]["replicas_that_fit"], g["details"]["packed_replicas"]) == (30, 2)
    assert "(6 × best-effort-large, 2 now)" in g["message"]
    assert not findings(dirs / "pass_capi_autoscaler_max_size.yaml", "PF606")
    # without the annotations the pool is its 1 default node: 5 replicas run
    plain = (dirs / "pass_capi_autoscaler_max_size.yaml").read_text().replace("cluster-api-autoscaler", "x")
    (tmp_path / "plain.yaml").write_text(plain)
    (h,) = findings(tmp_path / "plain.yaml", "PF606")
    assert h["details"]["replicas_that_fit"] == 5 and h["details"]["nodes_at_autoscaler_max"] is None


def test_two_daemonsets_binding_one_host_port_on_the_same_nodes(tmp_path):
    """kube-prometheus' node-exporter (hostNetwork 9100) and the Helm chart's (hostPort 9100): the
    later one is PF601, naming the earlier; on other ports or pools apart, nothing."""
    path = ROOT / "testdata/PF601/fail_two_daemonsets_one_host_port.yaml"
    (f,) = findings(path, "PF601")
    assert f["object"]["name"] == "prometheus-node-exporter" and f["severity"] == "error"
    assert f["details"]["host_ports"] == ["9100/TCP"] and f["details"]["nodes"] == 3
    assert f["details"]["daemonset"] == "DaemonSet monitoring/node-exporter"
    moved = tmp_path / "moved.yaml"
    moved.write_text(path.read_text().replace("hostPort: 9100", "hostPort: 9101"))
    assert not findings(moved, "PF601")
    udp = tmp_path / "udp.yaml"
    udp.write_text(path.read_text().replace("protocol: TCP", "protocol: UDP"))
    assert not findings(udp, "PF601")
    assert not findings(ROOT / "testdata/PF601/pass_two_daemonsets_one_host_port_apart.yaml", "PF601")


def test_pf606_grows_a_pool_no_further_than_the_vsphere_hosts_hold(tmp_path):
    """One 8-core host at PF503's 300%: 24 vCPUs, 4 for the control plane, 5 best-effort-large
    workers of the 8 the autoscaler may add: 25 replicas of 700m run."""
    platform = tmp_path / "platform.yaml"
    platform.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  runtime: tkg\n  ha: {hostFailuresTolerated: 0}\n"
        "  hosts:\n    - {count: 1, sockets: 1, coresPerSocket: 8, baseMHz: 2000, memory: 128Gi}\n"
    )
    path = ROOT / "testdata/PF606/pass_capi_autoscaler_max_size.yaml"
    res = run(["check", path, "--platform", platform, "--rule", "PF606", "--format", "json", "--fail-on", "never"])
    (f,) = json.loads(res.stdout)["findings"]
    assert f["details"]["nodes_at_autoscaler_max"] == {"workers": 5} and f["details"]["replicas_that_fit"] == 25
    assert "(5 × best-effort-large, 2 now; the hosts hold no more of the 8 it may grow to)" in f["message"]
