"""`podfit pack` and the packing rules (PF303, PF601–PF604) through the real CLI and fixtures."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
RULES = ("PF303", "PF601", "PF602", "PF603", "PF604", "PF606")
FIXTURES = sorted(p for r in RULES for p in (ROOT / "testdata" / r).glob("*.yaml"))
UPDATE = os.environ.get("PODFIT_UPDATE_EXPECTED") == "1"


def usage_files(fixture: Path) -> list[Path]:
    """The measured usage beside a fixture (``<fixture>.usage.txt``, ``<fixture>.usage.json``)."""
    return sorted(fixture.parent.glob(fixture.stem + ".usage.*"))


def run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_every_packing_rule_has_pass_and_fail_fixtures():
    for r in RULES:
        names = [p.name for p in (ROOT / "testdata" / r).glob("*.yaml")]
        assert any(n.startswith("pass_") for n in names) and any(n.startswith("fail_") for n in names), r


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path):
    """Each fixture, with its measured usage when it has some; a measured fail_ fixture's findings
    are compared whole with <fixture>.expected.json."""
    rule = path.parent.name
    usage = [a for u in usage_files(path) for a in ("--usage", u)]
    res = CliRunner().invoke(
        main, [str(a) for a in ["check", path, "--rule", rule, "--format", "json", "--fail-on", "never", *usage]]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    hits = [f for f in report["findings"] if f["rule"] == rule]
    if path.name.startswith("fail_"):
        assert hits, f"{rule} should fire on {path.name}"
        assert all(f["file"] == str(path) and f["line"] >= 1 for f in hits)
    else:
        assert not hits, hits
    if usage and hits:
        found = [
            {**{k: v for k, v in f.items() if k != "fix"}, "file": path.relative_to(ROOT).as_posix()} for f in hits
        ]
        expected = path.with_name(path.stem + ".expected.json")
        if UPDATE:
            expected.write_text(json.dumps(found, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        assert found == json.loads(expected.read_text())


def test_measured_peaks_replace_the_limits_in_the_burst_headroom():
    """The same manifest: without usage its limits (twice the requests) leave no headroom; measured,
    the pods peak 50m and 56Mi above their requests, which the free capacity absorbs."""
    doubled = ROOT / "testdata/PF603/fail_limits_double.yaml"
    measured = ROOT / "testdata/PF603/pass_measured_peak_fits.yaml"
    assert doubled.read_text().split("---", 1)[1] == measured.read_text().split("---", 1)[1]
    res = run(["pack", measured, "--format", "json"])
    assert json.loads(res.stdout)["headroom"]["needed_cpu"] == 4 * 1800
    res = run(["pack", measured, "--usage", measured.with_name(measured.stem + ".usage.txt"), "--format", "json"])
    h = json.loads(res.stdout)["headroom"]
    assert (h["needed_cpu"], h["needed_memory"], h["measured_pods"]) == (4 * 50, 4 * 56 * 2**20, 4)
    assert h["ok"] is True
    assert json.loads(res.stdout)["measured"]["cpu"] == {
        "pods": 4,
        "requests": 4 * 1800,
        "p95": 4 * 1850,
        "unmeasured_pods": 0,
    }
    text = run(["pack", measured, "--usage", measured.with_name(measured.stem + ".usage.txt")]).stdout
    assert "Burst headroom (100% of Σ(peak − request), measured peaks of 4 pods): CPU 200m needed" in text
    assert "CPU p95 7400m of 7200m requested (102%), 4 pods" in text


def test_rules_are_skipped_without_node_pools(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text((ROOT / "testdata/PF601/fail_packing.yaml").read_text().split("---", 1)[1])
    args = ["check", app, "--format", "json", "--fail-on", "never"]
    for r in RULES:
        args += ["--rule", r]
    report = json.loads(run(args).output)
    assert not [f for f in report["findings"] if f["rule"] in RULES]
    skipped = {s["rule"]: s["reason"] for s in report["skipped_rules"]}
    assert set(skipped) == set(RULES) and all("node pools" in why for why in skipped.values())


def test_pack_json_proves_misfit(tmp_path):
    res = run(["pack", ROOT / "testdata/PF601/fail_packing.yaml", "--format", "json"])
    assert res.exit_code == 1
    d = json.loads(res.output)
    assert d["feasible"] is False and d["proof"] in ("solver", "lower-bound")
    assert d["unplaced"] == {"Deployment/shop/api": 1}
    assert len(d["nodes"]) == 2 and all(n["allocatable"]["cpu"] == 3750 for n in d["nodes"])
    # five 1,500m pods need three large nodes
    assert d["min_nodes"]["best-effort-large"] == 3
    assert d["min_nodes_detail"]["best-effort-large"]["exact"] is True
    for key in ("lower_bound", "stranded", "headroom", "recommendation"):
        assert key in d


def test_pack_pool_option_overrides_and_fits():
    res = run(["pack", ROOT / "testdata/PF601/fail_packing.yaml", "--pool", "best-effort-large=3", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["feasible"] is True and d["proof"] == "placement"
    assert sum(sum(n["pods"].values()) for n in d["nodes"]) == 5
    assert all(n["free"]["cpu"] == n["allocatable"]["cpu"] - n["used"]["cpu"] for n in d["nodes"])


def test_pack_overhead_and_max_pods_options():
    base = ROOT / "testdata/PF601/pass_fits.yaml"
    d = json.loads(
        run(
            ["pack", base, "--overhead-cpu", "1", "--overhead-memory", "1Gi", "--max-pods", "3", "--format", "json"]
        ).output
    )
    assert d["pools"][0]["allocatable"]["cpu"] == 3000
    assert d["pools"][0]["allocatable"]["memory"] == 15 * 2**30
    assert d["pools"][0]["allocatable"]["pods"] == 3


def test_pack_text_table_has_bars():
    res = run(["pack", ROOT / "testdata/PF601/pass_fits.yaml", "--time-budget", "2s"])
    assert res.exit_code == 0
    assert "Fits: yes" in res.output and "[####" in res.output and "workers-0" in res.output


def test_pack_headroom_option_changes_the_answer():
    path = ROOT / "testdata/PF603/fail_limits_double.yaml"
    full = json.loads(run(["pack", path, "--format", "json"]).output)["headroom"]
    none = json.loads(run(["pack", path, "--headroom", "0%", "--format", "json"]).output)["headroom"]
    assert full["ok"] is False and none["ok"] is True and none["needed_cpu"] == 0


def test_pack_without_pools_is_a_usage_error(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text((ROOT / "testdata/PF601/fail_packing.yaml").read_text().split("---", 1)[1])
    res = run(["pack", app])
    assert res.exit_code == 2 and "node pools" in res.output
    assert run(["pack", app, "--pool", "no-such-class=2"]).exit_code == 2
    assert run(["pack", app, "--pool", "best-effort-large"]).exit_code == 2
    assert run(["pack", app, "--pool", "best-effort-large=2", "--headroom", "lots"]).exit_code == 2


def test_pack_reads_v1alpha1_workers_and_daemonsets(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("""\
apiVersion: run.tanzu.vmware.com/v1alpha1
kind: TanzuKubernetesCluster
metadata: {name: c}
spec:
  topology:
    controlPlane: {count: 1, class: best-effort-small}
    workers: {count: 2, class: best-effort-medium}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - {name: a, image: x, resources: {requests: {cpu: 250m, memory: 256Mi}}}
""")
    d = json.loads(run(["pack", f, "--format", "json"]).output)
    assert [(p["vm_class"], p["count"]) for p in d["pools"]] == [("best-effort-medium", 2)]  # no control plane
    assert d["pools"][0]["allocatable"]["cpu"] == 2000 - 250 - 250
    assert d["pools"][0]["allocatable"]["pods"] == 109
    assert d["feasible"] is True


def test_pack_works_per_cluster_like_check(monkeypatch):
    # the layout's .podfit.yaml maps each provider's directory to its own cluster: each cluster's
    # controller is packed once onto its own copy of the pools, never the four copies together
    layout = ROOT / "testdata" / "repos" / "ingress-controller-clusters"
    monkeypatch.chdir(layout)
    res = run(["pack", "deploy", "--pool", "best-effort-large=2", "--format", "json", "--time-budget", "0"])
    d = json.loads(res.output)
    names = [c["cluster"] for c in d["clusters"]]
    assert names == sorted(names) and {"eks-prod", "gke-prod", "kind-dev"} <= set(names)
    for c in d["clusters"]:
        placed: dict[str, int] = {}
        for n in c["nodes"]:
            for name, k in n["pods"].items():
                placed[name] = placed.get(name, 0) + k
        assert all(k == 1 for k in placed.values()), (c["cluster"], placed)
    text = run(["pack", "deploy", "--pool", "best-effort-large=2", "--time-budget", "0"]).output
    assert [line for line in text.splitlines() if line.startswith("== cluster ")] == [
        f"== cluster {n} ==" for n in names
    ]


def test_pf601_gives_the_shortfall_not_the_pod_pf303_names():
    """Beside a pod too large for any node (PF303's), the pools-wide PF601 proves the rest do not
    fit either with the bound that shows it (the CPU they ask together), not the pod again."""
    path = ROOT / "testdata/PF601/fail_capacity_beside_too_large.yaml"
    res = run(["check", path, "--rule", "PF601", "--rule", "PF303", "--format", "json", "--fail-on", "never"])
    found = sorted((f["rule"], f["message"]) for f in json.loads(res.stdout)["findings"])
    assert [r for r, _ in found] == ["PF303", "PF601"]
    assert found[1][1] == (
        "7 pods do not fit 2 nodes (2 × best-effort-large): proven by a lower bound (capacity-cpu: needs 9 CPU, "
        "7500m CPU available; Σ cpu of pods limited to these pools); recommended: 1 × best-effort-4xlarge (PF604)"
    )


def _cloud_profile(runtime: str, classes: str, pool_class: str = "Standard_D4s_v5", count: int = 2) -> str:
    """An AKS-like profile: node pools of Azure VM sizes, no vSphere hosts."""
    return f"""apiVersion: podfit.io/v1alpha1
kind: Platform
metadata: {{name: aks}}
spec:
  runtime: {runtime}
  vmClasses:
{classes}
  nodePools:
    - {{name: nodepool1, vmClass: {pool_class}, count: {count}, labels: {{agentpool: nodepool1}}}}
"""


D4 = "    - {name: Standard_D4s_v5, cpus: 4, memory: 16Gi}\n"
E4 = "    - {name: Standard_E4s_v5, cpus: 4, memory: 32Gi}\n"


def _sizing(tmp_path, profile: str, manifest: Path) -> list[dict]:
    platform = tmp_path / "platform.yaml"
    platform.write_text(profile)
    res = run(
        ["check", manifest, "--platform", platform, "--rule", "PF602", "--rule", "PF604"]
        + ["--format", "json", "--fail-on", "never"]
    )
    return json.loads(res.stdout)["findings"]


def test_a_cloud_platform_is_never_advised_a_built_in_vsphere_class(tmp_path):
    """On runtime kubernetes (AKS, EKS, …) the built-in vSphere with Tanzu classes cannot be
    provisioned: PF604 and PF602 weigh only the classes the profile declares and the pools use."""
    from podfit.platform import DEFAULT_VM_CLASSES

    builtin = {c.name for c in DEFAULT_VM_CLASSES}
    app = tmp_path / "app.yaml"
    app.write_text((ROOT / "testdata/PF602/fail_memory_heavy.yaml").read_text().split("---", 1)[1])
    # the pools' own class alone: a node count, and the finding says no other class was compared
    twelve = tmp_path / "twelve.yaml"
    twelve.write_text((ROOT / "testdata/PF604/fail_twelve_nodes.yaml").read_text().split("---", 1)[1])
    (f,) = _sizing(tmp_path, _cloud_profile("kubernetes", D4, count=12), twelve)
    assert f["rule"] == "PF604" and not builtin & set(f["message"].split())
    assert [c["vm_class"] for c in f["details"]["candidates"]] == ["Standard_D4s_v5"]
    assert f["details"]["recommended"]["vm_class"] == "Standard_D4s_v5"
    assert f["message"].endswith("the platform declares no other VM class to compare (spec.vmClasses)")
    # memory-heavy pods strand CPU on D4s_v5, and the pools already are the least waste among the
    # classes known: PF602 has nothing better to offer
    assert _sizing(tmp_path, _cloud_profile("kubernetes", D4), app) == []
    # a declared memory-optimised class is weighed, and suggested by both rules
    found = _sizing(tmp_path, _cloud_profile("kubernetes", D4 + E4), app)
    assert sorted(f["rule"] for f in found) == ["PF602", "PF604"]
    for f in found:
        assert "Standard_E4s_v5" in f["message"] and not builtin & set(f["message"].split())
        assert "declares no other" not in f["message"]
    (pf604,) = (f for f in found if f["rule"] == "PF604")
    assert {c["vm_class"] for c in pf604["details"]["candidates"]} == {"Standard_D4s_v5", "Standard_E4s_v5"}
    # bare metal provisions no vSphere VM either
    (f,) = _sizing(tmp_path, _cloud_profile("bare-metal", D4, count=12), twelve)
    assert [c["vm_class"] for c in f["details"]["candidates"]] == ["Standard_D4s_v5"]
    # podfit pack weighs the same classes
    platform = tmp_path / "platform.yaml"
    platform.write_text(_cloud_profile("kubernetes", D4 + E4))
    res = run(["pack", app, "--platform", platform, "--format", "json", "--time-budget", "0"])
    cands = json.loads(res.stdout)["recommendation"]["candidates"]
    assert {c["vm_class"] for c in cands} == {"Standard_D4s_v5", "Standard_E4s_v5"}


def test_a_vsphere_platform_still_weighs_the_built_in_classes(tmp_path):
    """The same kind of profile on runtime tkg (vSphere with Tanzu provisions its built-in classes):
    they are weighed beside the declared one, and one of them wins over twelve oversized nodes."""
    twelve = tmp_path / "twelve.yaml"
    twelve.write_text((ROOT / "testdata/PF604/fail_twelve_nodes.yaml").read_text().split("---", 1)[1])
    d16 = "    - {name: Standard_D16s_v5, cpus: 16, memory: 64Gi}\n"
    (f,) = _sizing(tmp_path, _cloud_profile("tkg", d16, pool_class="Standard_D16s_v5", count=12), twelve)
    names = {c["vm_class"] for c in f["details"]["candidates"]}
    assert "Standard_D16s_v5" in names and {"best-effort-large", "guaranteed-xlarge"} <= names
    assert f["details"]["recommended"] == {"vm_class": "best-effort-large", "nodes": 2}
    assert "declares no other" not in f["message"]


SMALL_NODES = """\
apiVersion: podfit.io/v1alpha1
kind: Platform
metadata: {name: eks-small}
spec:
  runtime: kubernetes
  vmClasses:
    - {name: t3.small, cpus: 2, memory: 2Gi, reserved: false}
  kubelet: {maxPods: 11}
  nodePools:
    - name: small
      vmClass: t3.small
      count: 3
      allocatable: {cpu: 1930m, memory: 1450Mi, pods: 11}
      systemPods: {cpu: 150m, memory: 120Mi, pods: 3}
"""
TWO_800MI = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: web:1
          resources: {requests: {cpu: 100m, memory: 800Mi}, limits: {cpu: 100m, memory: 800Mi}}
"""


def test_sizing_a_class_uses_its_nodes_own_allocatable(tmp_path):
    """t3.small nodes whose kubelet offers 1450Mi, 120Mi of it taken by system pods: two 800Mi pods
    need two nodes. Sized with the default 100Mi overhead, one 2Gi node looked enough."""
    (tmp_path / "platform.yaml").write_text(SMALL_NODES)
    (tmp_path / "app.yaml").write_text(TWO_800MI)
    res = run(["pack", str(tmp_path / "app.yaml"), "--platform", str(tmp_path / "platform.yaml"), "--format", "json"])
    out = json.loads(res.stdout)
    assert out["min_nodes"] == {"t3.small": 2}
    assert out["min_nodes_detail"]["t3.small"]["lower_bound"] == 2
    assert (out["recommendation"]["vm_class"], out["recommendation"]["nodes"]) == ("t3.small", 2)


@pytest.mark.parametrize("provider", ["eks", "kops", "tkg"])
def test_least_nodes_never_below_the_bound_on_the_real_nodes(provider, tmp_path):
    """For every class an imported pool uses, the least count podfit states is at least the lower
    bound of the same pods on that pool's real nodes (their allocatable and system pods)."""
    from podfit.config import Config
    from podfit.facts import build_facts
    from podfit.loader import discover, load, read_files
    from podfit.packing.engine import analyze_inputs, min_nodes
    from podfit.packing.rules_support import cluster_inputs
    from podfit.platform import parse_platform

    path = ROOT / "testdata" / "platform-import" / provider / "platform.yaml"
    platform = parse_platform(path.read_text(), str(path))
    app = str(tmp_path / "app.yaml")
    (tmp_path / "app.yaml").write_text(TWO_800MI.replace("replicas: 2", "replicas: 7"))
    loaded = load(read_files(discover([app]), Config().limits), Config().limits)
    facts = build_facts(loaded.objects, platform)
    (scope,) = facts.clusters
    inputs = cluster_inputs(platform, scope.workloads, scope.node_pools, facts.node_pools, usage=None, ratio=0)
    analysis = analyze_inputs(inputs, 100, 2.0, search=())
    checked = 0
    for pool in inputs.pools:
        stated = analysis.min_nodes.get(pool.vm_class)
        real = min_nodes(inputs.pods, pool, 0, search=False)
        if stated is None or real is None:
            assert stated is None or real is not None, pool.vm_class
            continue
        assert stated.nodes >= real.summary.lower_bound, (pool.name, stated, real.summary)
        checked += 1
    assert checked


# ---------------------------------------------------------------- verdict first, per pool (#38) ---


def _many_nodes(tmp_path, nodes: int) -> Path:
    """One Deployment of ``nodes`` pods, one per node (required anti-affinity on hostname)."""
    path = tmp_path / "spread.yaml"
    path.write_text(
        f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: spread, namespace: shop}}
spec:
  replicas: {nodes}
  selector: {{matchLabels: {{app: spread}}}}
  template:
    metadata: {{labels: {{app: spread}}}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {{labelSelector: {{matchLabels: {{app: spread}}}}, topologyKey: kubernetes.io/hostname}}
      containers:
      - {{name: app, image: x, resources: {{requests: {{cpu: 100m, memory: 64Mi}}, limits: {{cpu: 100m, memory: 64Mi}}}}}}
"""
    )
    return path


def test_pack_text_starts_with_the_verdict_and_summarises_each_pool(tmp_path):
    path = _many_nodes(tmp_path, 60)
    args = ["pack", path, "--pool", "a:best-effort-large=40", "--pool", "b:best-effort-xlarge=30", "--time-budget", "0"]
    res = run(args)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "(built-in default platform profile)"
    assert lines[1].startswith("Fits: yes: a placement exists (found by ")
    pools = [line for line in lines if line.startswith("  a: ") or line.startswith("  b: ")]
    used = {line.split(":")[0].strip(): line for line in pools if " used; CPU " in line}
    assert set(used) == {"a", "b"}
    assert sum(int(line.split(": ")[1].split(" of ")[0]) for line in used.values()) == 60
    assert "of 40 nodes used" in used["a"] and "of 30 nodes used" in used["b"]
    # 70 nodes: not listed one by one, and the stranded line counts them
    assert "(70 nodes: -v lists them one by one)" in lines
    assert not any(line.startswith("a-0 ") for line in lines)
    stranded = next(line for line in lines if line.startswith("Stranded: "))
    assert "a-0" not in stranded
    verbose = run([*args, "-v"]).stdout.splitlines()
    assert sum(1 for line in verbose if line.startswith(("a-", "b-"))) == 70


def test_pack_lists_up_to_50_nodes_without_verbose(tmp_path):
    res = run(["pack", _many_nodes(tmp_path, 3), "--pool", "w:best-effort-large=50", "--time-budget", "0"])
    assert sum(1 for line in res.stdout.splitlines() if line.startswith("w-")) == 50


def test_pack_default_budget_is_2s_and_an_unproven_count_is_a_range():
    from podfit.commands.pack import command
    from podfit.packing.model import MinNodes
    from podfit.packing.report import _least

    assert next(p for p in command.params if p.name == "time_budget").default == "2s"

    class A:
        min_nodes = {"c": MinNodes("c", 12, 10, False, "lns", None), "d": MinNodes("d", 3, 3, True, "exact", None)}
        zonal: dict = {}  # pools in no zone

    lines = _least(A(), 2.0)  # only min_nodes and zonal are read
    assert lines[0] == "Least nodes per VM class: c 10–12, d 3"
    assert "proven to lie in it; the search stopped within 2 s, --time-budget searches longer" in lines[1]


@pytest.mark.parametrize("name", ["fail_gpu_pods_burst_on_gpu_nodes", "pass_gpu_pods_burst_fits_gpu_nodes"])
def test_gpu_pods_burst_on_the_gpu_nodes_alone(name):
    """PF603 checks the burst of the pods asking for a GPU against the GPU nodes' free capacity:
    45 CPUs free on the CPU nodes do not help them."""
    folder = ROOT / "testdata" / "PF603" / name
    args = ["check", folder / "deploy", "--platform", folder / "platform.yaml", "--rule", "PF603"]
    res = run([*args, "--format", "json", "--fail-on", "never"])
    assert res.exit_code == 0, res.output
    hits = [f for f in json.loads(res.stdout)["findings"] if f["rule"] == "PF603"]
    if name.startswith("pass_"):
        assert hits == []
        return
    ((f,),) = [hits]
    assert f["message"].startswith("no burst headroom for the 2 pods asking for nvidia.com/gpu")
    assert "(CPU 12 needed, 3 free)" in f["message"]
    assert (f["details"]["resource"], f["details"]["nodes"], f["details"]["free_cpu"]) == ("nvidia.com/gpu", 1, 3000)
    assert f["line"] == 13  # the gpu pool of the platform


def test_right_sizing_says_how_many_pods_it_gave_nothing(tmp_path):
    """Three database pods without requests (BestEffort, PF105) are packed as needing nothing: the
    advice of one xsmall node rests on that, and the finding says so beside it."""
    path = ROOT / "testdata/PF604/fail_best_effort_databases.yaml"
    res = run(["check", path, "--rule", "PF604", "--format", "json", "--fail-on", "never"])
    (f,) = json.loads(res.stdout)["findings"]
    assert f["details"]["unrequested"] == {"pods": 3, "workloads": ["StatefulSet shop/store"]}
    assert f["message"].endswith(
        "; 3 pods request no CPU or memory (StatefulSet shop/store; PF105): the count gives them nothing"
    )
    # with requests on every pod the note is gone
    fixed = path.read_text().replace(
        "image: registry.example.com/mongo:7.0",
        "image: registry.example.com/mongo:7.0\n        resources: {requests: {cpu: 500m, memory: 2Gi}}",
    )
    app = tmp_path / "app.yaml"
    app.write_text(fixed)
    res = run(["check", app, "--rule", "PF604", "--format", "json", "--fail-on", "never"])
    (f,) = json.loads(res.stdout)["findings"]
    assert "unrequested" not in f["details"] and "request no CPU" not in f["message"]


def test_the_lower_bound_line_names_the_bound_the_verdict_cites():
    """Pools with no node-count bound over all of them (a GPU pod no pool can take): the verdict's
    lower bound is the one the 'Lower bound' line names, never 'n/a'."""
    folder = ROOT / "testdata" / "PF601" / "fail_gpu_pod_without_gpu_pool"
    res = run(["pack", folder / "deploy", "--platform", folder / "platform.yaml"])
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    verdict = next(line for line in lines if line.startswith("Fits: "))
    bound = next(line for line in lines if line.startswith("Lower bound: "))
    assert verdict.startswith("Fits: no: proven by a lower bound (no-matching-pool: needs 1 node, 0 available")
    assert "n/a" not in bound and bound.startswith("Lower bound: none over all ")
    assert "no-matching-pool needs 1 node, 0 available (Deployment/ml/infer)" in bound
    # pools alike: one count over all of them
    alike = run(["pack", ROOT / "testdata/PF601/fail_packing.yaml"]).stdout.splitlines()
    assert any(
        line.startswith("Lower bound: ") and line.endswith(" available") and "none" not in line for line in alike
    )
