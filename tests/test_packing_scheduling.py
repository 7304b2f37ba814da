"""Scheduling semantics in packing: pools with labels and taints, node selection, anti-affinity
between workloads, topology spread, DaemonSets, pods left out as unknown, and PF601's subject."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podfit.cli import main
from podfit.clusters import node_pools_from_objects
from podfit.loader import make_object
from podfit.packing import GI, NodeType, PodType, Problem, exact, pack
from podfit.packing.adapter import inputs_from
from podfit.packing.engine import analyze
from podfit.platform import DEFAULT_PLATFORM, NodePool, PlatformError, Taint, parse_platform
from podfit.workloads import build_workloads

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "testdata/platforms/study-4-hosts.yaml"


# pack() returns as soon as it has a proof, so a budget only ends a search that hangs; a generous one
# keeps a loaded machine from turning a proven answer into "budget-exhausted".
HANG_GUARD_S = 60


def objects(text: str):
    return [make_object(d, "t.yaml", i + 1) for i, d in enumerate(yaml.safe_load_all(text)) if d]


def workloads(text: str):
    return build_workloads(objects(text))[0]


def deployment(
    name: str, replicas: int = 1, cpu: str = "100m", ns: str = "shop", labels=None, spec=None, kind: str = "Deployment"
) -> str:
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
                    **(spec or {}),
                    "containers": [
                        {"name": "c", "image": "i:1", "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}
                    ],
                },
            },
        },
    }
    if kind != "DaemonSet":
        doc["spec"]["replicas"] = replicas
    return yaml.safe_dump(doc)


def inputs(text: str, pools):
    return inputs_from(workloads(text), DEFAULT_PLATFORM, pools)


WORKERS = NodePool("best-effort-large", 3, "workers")
GPU = NodePool("best-effort-xlarge", 1, "gpu", labels=(("gpu", "true"),), taints=(Taint("gpu", "true", "NoSchedule"),))
CONTROL = NodePool("best-effort-small", 1, "cp", role="control-plane")


def run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# --------------------------------------------------------------------------------- pools ---


def test_node_pools_carry_well_known_labels_and_declared_taints():
    labels = dict(GPU.node_labels)
    assert labels["gpu"] == "true" and labels["kubernetes.io/os"] == "linux"
    assert labels["node.kubernetes.io/instance-type"] == "best-effort-xlarge"
    assert GPU.node_taints == (Taint("gpu", "true", "NoSchedule"),)
    assert CONTROL.node_taints[0].key == "node-role.kubernetes.io/control-plane"


def test_platform_profile_labels_and_taints():
    text = PLATFORM.read_text().replace(
        "vmClass: best-effort-xlarge\n      count: 4\n",
        """vmClass: best-effort-xlarge
      count: 4
      labels: {tier: general}
      taints:
        - {key: dedicated, value: perf, effect: NoSchedule}
        - {key: soft, effect: PreferNoSchedule}
""",
    )
    (pool,) = parse_platform(text, "p.yaml").node_pools
    assert pool.labels == (("tier", "general"),)
    assert pool.taints == (Taint("dedicated", "perf", "NoSchedule"), Taint("soft", "", "PreferNoSchedule"))
    with pytest.raises(PlatformError, match="effect"):
        parse_platform(text.replace("PreferNoSchedule", "Sometimes"), "p.yaml")


def test_tkc_node_pool_labels_and_taints():
    (tkc,) = objects((ROOT / "testdata/PF601/pass_daemonset_on_gpu_pool.yaml").read_text())[:1]
    pools = {p.name: p for p in node_pools_from_objects([tkc])}
    assert pools["gpu"].labels == (("gpu", "true"),) and pools["gpu"].taints == (Taint("gpu", "true", "NoSchedule"),)
    assert pools["workers"].taints == () and pools["shop-control-plane"].role == "control-plane"


def test_cluster_api_labels_that_reach_the_node_and_pool_variables():
    (cluster,) = objects("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c1}
spec:
  topology:
    class: tanzukubernetescluster
    variables:
    - {name: vmClass, value: best-effort-large}
    - {name: nodePoolTaints, value: [{key: dedicated, value: batch, effect: NoSchedule}]}
    controlPlane: {replicas: 1}
    workers:
      machineDeployments:
      - name: md-0
        replicas: 2
        metadata:
          labels: {node-role.kubernetes.io/batch: "", node.cluster.x-k8s.io/pool: a, team: data}
      - name: md-1
        replicas: 1
        variables:
          overrides:
          - {name: nodePoolLabels, value: [{key: gpu, value: "true"}]}
          - {name: nodePoolTaints, value: []}
""")
    pools = {p.name: p for p in node_pools_from_objects([cluster])}
    # Cluster API copies only node-role.kubernetes.io/ and node.cluster.x-k8s.io labels to the Node
    assert pools["md-0"].labels == (("node-role.kubernetes.io/batch", ""), ("node.cluster.x-k8s.io/pool", "a"))
    assert pools["md-0"].taints == (Taint("dedicated", "batch", "NoSchedule"),)
    assert pools["md-1"].labels == (("gpu", "true"),) and pools["md-1"].taints == ()


# ------------------------------------------------------------------------- node selection ---


def test_os_linux_selector_fits_the_platforms_pools():
    """The issue's case: nodeSelector kubernetes.io/os: linux with a platform that has node pools."""
    res = run(
        [
            "check",
            ROOT / "testdata/PF601/pass_node_selector_os_linux.yaml",
            "--platform",
            PLATFORM,
            "--rule",
            "PF601",
            "--format",
            "json",
            "--fail-on",
            "never",
        ]
    )
    assert not json.loads(res.output)["findings"]
    inp = inputs(deployment("a", 3, spec={"nodeSelector": {"kubernetes.io/os": "linux"}}), [WORKERS, GPU])
    (p,) = inp.pods
    assert p.pools == ("workers",)  # not the tainted GPU pool
    assert not inp.unknown and not inp.unschedulable


def test_a_pod_no_pool_runs_is_a_proven_misfit_with_the_reason():
    inp = inputs(deployment("win", 1, spec={"nodeSelector": {"kubernetes.io/os": "windows"}}), [WORKERS])
    assert inp.pods[0].pools == ()
    assert "kubernetes.io/os=windows" in inp.unschedulable["Deployment/shop/win"]
    r = pack(Problem(inp.pods, inp.pools), time_budget=HANG_GUARD_S)
    assert r.feasible is False and r.violated_bounds[0].kind == "no-matching-pool"


def test_tolerating_pods_use_the_tainted_pool():
    spec = {"nodeSelector": {"gpu": "true"}, "tolerations": [{"key": "gpu", "operator": "Exists"}]}
    inp = inputs(deployment("train", 2, spec=spec), [WORKERS, GPU])
    assert inp.pods[0].pools == ("gpu",)


def test_pods_that_fit_only_control_planes_are_not_packed():
    spec = {
        "nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule", "operator": "Exists"}],
    }
    inp = inputs(deployment("etcd-backup", 1, spec=spec), [WORKERS, CONTROL])
    assert inp.pods == () and inp.control_plane_only == ("Deployment/shop/etcd-backup",)


def test_unknown_pods_are_left_out_and_reported_once_per_label():
    text = "---\n".join(
        [
            deployment("a", 5, spec={"nodeSelector": {"team": "data"}}),
            deployment(
                "b",
                5,
                spec={
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "team", "operator": "In", "values": ["x"]}]}
                                ]
                            }
                        }
                    }
                },
            ),
            deployment("c", 1, spec={"nodeSelector": {"kubernetes.io/hostname": "node-7"}}),
            deployment("d", 1, kind="DaemonSet", spec={"nodeSelector": {"team": "data"}}),
            deployment("e", 1),
        ]
    )
    inp = inputs(text, [WORKERS])
    assert [p.name for p in inp.pods] == ["Deployment/shop/e"]
    by_keys = {u.keys: u.pods for u in inp.unknown}
    assert by_keys[("team",)] == ("Deployment/shop/a", "Deployment/shop/b", "DaemonSet/shop/d")
    assert by_keys[("kubernetes.io/hostname",)] == ("Deployment/shop/c",)
    assert "label team" in inp.unknown[1].describe() or "label team" in inp.unknown[0].describe()
    # an unknown DaemonSet is not taken off any node
    assert inp.daemons[0].pools == () and inp.pools[0].cpu == 4000 - 250
    # described by one pool, the key is known to be absent from the others
    inp2 = inputs(text, [WORKERS, NodePool("best-effort-large", 1, "data", labels=(("team", "data"),))])
    assert [p.pools for p in inp2.pods if p.name == "Deployment/shop/a"] == [("data",)]
    assert {u.keys for u in inp2.unknown} == {("kubernetes.io/hostname",)}


# ----------------------------------------------------------------------------- DaemonSets ---


def test_daemonsets_run_only_on_the_pools_they_select_and_tolerate():
    text = "---\n".join(
        [
            deployment(
                "drv",
                kind="DaemonSet",
                cpu="1",
                spec={"nodeSelector": {"gpu": "true"}, "tolerations": [{"key": "gpu", "operator": "Exists"}]},
            ),
            deployment("logs", kind="DaemonSet", cpu="200m"),  # does not tolerate the GPU taint
            deployment("everywhere", kind="DaemonSet", cpu="100m", spec={"tolerations": [{"operator": "Exists"}]}),
        ]
    )
    inp = inputs(text, [WORKERS, GPU, CONTROL])
    pools = {n.name: n for n in inp.pools}
    assert pools["workers"].daemon_pods == ("DaemonSet/shop/logs", "DaemonSet/shop/everywhere")
    assert pools["gpu"].daemon_pods == ("DaemonSet/shop/drv", "DaemonSet/shop/everywhere")
    assert pools["workers"].cpu == 4000 - 250 - 300 and pools["gpu"].cpu == 4000 - 250 - 1100
    # least nodes: a DaemonSet counts when the pods cannot avoid it (app runs on workers only: logs
    # and everywhere run there); drv runs only on the tainted gpu pool app never uses; nowhere runs on no pool
    nowhere = deployment("nowhere", kind="DaemonSet", cpu="2", spec={"nodeSelector": {"kubernetes.io/os": "windows"}})
    text2 = "---\n".join([text, nowhere, deployment("app", 2, cpu="500m")])
    inp2 = inputs(text2, [WORKERS, GPU])
    a = analyze(inp2.pods, inp2.pools, inp2.classes, daemons=inp2.daemons, time_budget=1)
    tmpl = a.min_nodes["best-effort-large"].node_type
    assert set(tmpl.daemon_pods) == {"DaemonSet/shop/logs", "DaemonSet/shop/everywhere"}
    assert tmpl.cpu == 4000 - 250 - 300


# ------------------------------------------------------------------------- anti-affinity ---

ANTI = {
    "affinity": {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]},
                }
            ]
        }
    }
}


def test_match_expressions_anti_affinity_caps_one_per_node():
    """The issue's case: 4 replicas with matchExpressions anti-affinity are not packed on one node."""
    inp = inputs(deployment("api", 4, spec=ANTI), [WORKERS])
    assert inp.pods[0].exclusive_group == "shop:app In (api)"
    r = pack(Problem(inp.pods, inp.pools), time_budget=HANG_GUARD_S)
    assert r.feasible is False and r.violated_bounds[0].kind == "anti-affinity"
    fits = pack(Problem(inp.pods, (inp.pools[0].with_count(4),)), time_budget=HANG_GUARD_S)
    assert fits.feasible is True and all(k == 1 for n in fits.nodes for _, k in n.pods)


def test_anti_affinity_between_workloads_is_a_conflict_both_ways():
    anti_db = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"tier": "db"}}}
                ]
            }
        }
    }
    text = "---\n".join(
        [
            deployment("web", 2, labels={"app": "web"}, spec=anti_db),  # keeps away from db pods only
            deployment("db", 2, labels={"app": "db", "tier": "db"}),
            deployment("other-ns-db", 2, ns="other", labels={"app": "db", "tier": "db"}),
        ]
    )
    inp = inputs(text, [NodePool("best-effort-large", 2, "w")])
    pods = {p.name: p for p in inp.pods}
    assert pods["Deployment/shop/web"].conflicts == ("Deployment/shop/db",)
    assert pods["Deployment/shop/db"].conflicts == ("Deployment/shop/web",)
    assert pods["Deployment/other/other-ns-db"].conflicts == ()  # another namespace
    assert all(p.exclusive_group is None for p in inp.pods)
    r = pack(Problem(inp.pods, inp.pools), time_budget=HANG_GUARD_S)
    assert r.feasible is True
    for n in r.nodes:
        names = dict(n.pods)
        assert not ("Deployment/shop/web" in names and "Deployment/shop/db" in names)
    # two nodes: web and db can never share one, so all 4 pods need both nodes… and they fit;
    # on one node they cannot
    one = pack(Problem(inp.pods, (inp.pools[0].with_count(1),)), time_budget=HANG_GUARD_S)
    assert one.feasible is False


def _brute(pods, pool) -> bool:
    items = [p for p in pods for _ in range(p.count)]
    content = [dict() for _ in range(pool.count)]
    free = [list(pool.allocatable) for _ in range(pool.count)]

    def ok(p, j):
        c = content[j]
        if any(d > f for d, f in zip(p.demand, free[j], strict=True)):
            return False
        if p.exclusive_group and any(q.exclusive_group == p.exclusive_group for q in c):
            return False
        if any(q.name in p.conflicts or p.name in q.conflicts for q in c):
            return False
        return not (p.max_per_node and c.get(p, 0) >= p.max_per_node)

    def go(i):
        if i == len(items):
            return True
        p = items[i]
        for j in range(pool.count):
            if ok(p, j):
                content[j][p] = content[j].get(p, 0) + 1
                for d, v in enumerate(p.demand):
                    free[j][d] -= v
                if go(i + 1):
                    return True
                content[j][p] -= 1
                if not content[j][p]:
                    del content[j][p]
                for d, v in enumerate(p.demand):
                    free[j][d] += v
        return False

    return go(0)


def test_conflicts_agree_with_brute_force():
    rng = random.Random(14)
    seen = {True: 0, False: 0}
    for _ in range(80):
        n = rng.randint(2, 4)
        names = [f"t{i}" for i in range(n)]
        conflicts = {name: set() for name in names}
        for a in names:
            for b in names:
                if a < b and rng.random() < 0.4:
                    conflicts[a].add(b)
        pods = tuple(
            PodType(
                name,
                rng.randint(1, 8) * 100,
                rng.randint(1, 8) * GI,
                count=rng.randint(1, 3),
                exclusive_group=rng.choice([None, None, "g"]),
                conflicts=tuple(sorted(conflicts[name])),
            )
            for name in names
        )
        pool = NodeType("w", "c", rng.randint(1, 4), rng.randint(8, 20) * 100, rng.randint(8, 20) * GI, 8)
        truth = _brute(pods, pool)
        seen[truth] += 1
        assert (exact.solve_fixed(pods, [pool], 10, workers=1).status == "feasible") is truth
        r = pack(Problem(pods, (pool,)), time_budget=10, workers=1)
        assert r.feasible is truth, (pods, pool)
        for node in r.nodes if truth else ():
            here = {name for name, k in node.pods if k}
            for p in pods:
                assert not (p.name in here and here & set(p.conflicts))
    assert seen[True] > 10 and seen[False] > 10


# ------------------------------------------------------------------------ topology spread ---


def spread(skew: int, **extra) -> dict:
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": skew,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
                **extra,
            }
        ]
    }


def test_spread_counts_every_workload_its_selector_matches():
    text = "---\n".join(
        [
            deployment("a", 6, labels={"app": "a", "tier": "web"}, spec=spread(1)),
            deployment("b", 3, labels={"app": "b", "tier": "web"}),
        ]
    )
    inp = inputs(text, [WORKERS])
    caps = {p.name: p.max_per_node for p in inp.pods}
    assert caps == {"Deployment/shop/a": (9 + 2) // 3, "Deployment/shop/b": None}


def test_spread_domains_include_tainted_control_planes_unless_taints_are_honoured():
    text = deployment("a", 6, labels={"app": "a", "tier": "web"}, spec=spread(1))
    assert inputs(text, [WORKERS]).pods[0].max_per_node == 2  # ⌊(6 + 2) / 3⌋
    # the control plane is a domain where no pod of a can run: it stays at 0, so each worker holds 1
    assert inputs(text, [WORKERS, CONTROL]).pods[0].max_per_node == 1
    honour = deployment("a", 6, labels={"app": "a", "tier": "web"}, spec=spread(1, nodeTaintsPolicy="Honor"))
    assert inputs(honour, [WORKERS, CONTROL]).pods[0].max_per_node == 2
    few = deployment("a", 6, labels={"app": "a", "tier": "web"}, spec=spread(1, minDomains=5))
    assert inputs(few, [WORKERS]).pods[0].max_per_node == 1  # fewer domains than minDomains


# ------------------------------------------------------------------------------ PF601 ---


def test_pf601_points_at_the_pools_when_several_workloads_together_do_not_fit(tmp_path):
    tkc = (ROOT / "testdata/PF601/fail_packing.yaml").read_text().split("---")[0]
    f = tmp_path / "apps.yaml"
    f.write_text(tkc + "---\n" + deployment("a", 2, cpu="1500m") + "---\n" + deployment("b", 3, cpu="1500m"))
    res = run(["check", f, "--rule", "PF601", "--format", "json", "--fail-on", "never"])
    (finding,) = json.loads(res.output)["findings"]
    assert finding["object"]["kind"] == "TanzuKubernetesCluster" and finding["line"] == 9  # the node pool


def test_pf601_names_the_workload_no_pool_can_run_and_never_the_unknown_ones(tmp_path):
    tkc = (ROOT / "testdata/PF601/fail_packing.yaml").read_text().split("---")[0]
    f = tmp_path / "apps.yaml"
    f.write_text(
        tkc
        + "---\n"
        + deployment("ok", 1)
        + "---\n"
        + deployment("win", 1, spec={"nodeSelector": {"kubernetes.io/os": "windows"}})
        + "---\n"
        + deployment("many", 50, cpu="1", spec={"nodeSelector": {"team": "x"}})
    )
    res = run(["check", f, "--rule", "PF601", "--format", "json", "--fail-on", "never"])
    (finding,) = json.loads(res.output)["findings"]
    assert finding["object"]["name"] == "win" and "kubernetes.io/os=windows" in finding["message"]
    assert finding["details"]["unknown"] == [{"keys": ["team"], "pods": ["Deployment/shop/many"]}]


# ---------------------------------------------------------------------------------- CLI ---


def test_pack_pool_labels_and_taints_from_the_command_line(tmp_path):
    f = tmp_path / "apps.yaml"
    f.write_text(
        deployment(
            "train", 2, spec={"nodeSelector": {"gpu": "true"}, "tolerations": [{"key": "gpu", "operator": "Exists"}]}
        )
        + "---\n"
        + deployment("web", 2)
    )
    args = ["pack", f, "--pool", "best-effort-large=2", "--pool", "gpu:best-effort-xlarge=1", "--time-budget", "1s"]
    res = run(args + ["--format", "json"])
    assert res.exit_code == 1  # the gpu label is described nowhere: train is unknown
    d = json.loads(res.output)
    assert d["scheduling"]["unknown"][0]["keys"] == ["gpu"]
    res = run(args + ["--pool-label", "gpu:gpu=true", "--pool-taint", "gpu:gpu=true:NoSchedule", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    pods = {p["name"]: p for p in d["pods"]}
    assert pods["Deployment/shop/train"]["pools"] == ["gpu"]
    assert pods["Deployment/shop/web"]["pools"] == ["best-effort-large"]
    pools = {p["name"]: p for p in d["pools"]}
    assert pools["gpu"]["labels"]["gpu"] == "true" and pools["gpu"]["labels"]["kubernetes.io/os"] == "linux"
    text = run(args + ["--pool-label", "gpu:gpu=true"]).output
    assert "Scheduling: " not in text
    assert run(args + ["--pool-label", "nosuch:a=b"]).exit_code == 2
    assert run(args + ["--pool-label", "gpu-no-key"]).exit_code == 2
    assert run(args + ["--pool-taint", "gpu:gpu=true:Sometimes"]).exit_code == 2
    assert run(["pack", f, "--pool", "a:best-effort-large=1", "--pool", "a:best-effort-large=1"]).exit_code == 2
    unknown = run(["pack", f, "--pool", "best-effort-large=2", "--time-budget", "1s"]).output
    assert "Scheduling: unknown for these pods: Deployment/shop/train" in unknown


GPU_DAEMONSET = deployment(
    "gpu-plugin", kind="DaemonSet", cpu="1", ns="kube-system", spec={"nodeSelector": {"gpu": "true"}}
)


def _least_large(tmp_path, web: str) -> int:
    app = tmp_path / "app.yaml"
    app.write_text(GPU_DAEMONSET + "---\n" + web)
    res = run(
        ["pack", app, "--pool", "cpu:best-effort-large=1", "--pool", "g:best-effort-large=1"]
        + ["--pool-label", "g:gpu=true", "--format", "json", "--time-budget", "1s"]
    )
    return json.loads(res.output)["min_nodes"]["best-effort-large"]


def test_a_daemonset_on_nodes_the_pods_need_not_use_adds_no_node_to_least_nodes(tmp_path):
    # three 1-CPU pods fit one large node (3750m); the gpu DaemonSet's 1 CPU runs only on gpu nodes,
    # which these pods do not need
    assert _least_large(tmp_path, deployment("web", 3, cpu="1", ns="app")) == 1
    # pods that must run on gpu nodes take the DaemonSet with them: 4 CPUs on 3750m nodes → 2
    assert _least_large(tmp_path, deployment("web", 3, cpu="1", ns="app", spec={"nodeSelector": {"gpu": "true"}})) == 2
