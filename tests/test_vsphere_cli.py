"""`podfit vsphere crx|capacity` through the real CLI, the PF401–PF403 and PF501–PF503/PF701
fixtures through `podfit check`, and PF401–PF403 against the CRX sizes `podfit vsphere crx`
prints."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from podfit.cli import main
from podfit.facts import build_facts
from podfit.loader import InputFile, load
from podfit.platform import parse_platform
from podfit.vsphere import fmt_memory, fmt_mhz

RULES = ("PF501", "PF502", "PF503", "PF701")
FIXTURES = sorted(p for r in RULES for p in (ROOT / "testdata" / r).glob("*_*.yaml"))
POD_RULES = ("PF401", "PF402", "PF403")
POD_FIXTURES = sorted(p for r in POD_RULES for p in (ROOT / "testdata" / r).glob("*_*.yaml"))


def run(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)


def test_every_rule_has_pass_and_fail_fixtures():
    for r in RULES + POD_RULES:
        names = [p.name for p in (ROOT / "testdata" / r).glob("*.yaml")]
        assert any(n.startswith("pass_") for n in names) and any(n.startswith("fail_") for n in names), r


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path: Path):
    rule = path.parent.name
    args = ["check", path, "--format", "json", "--fail-on", "warning"]
    for r in RULES:
        args += ["--rule", r]
    platform = path.parent / "platform.yaml"
    if platform.exists():
        args += ["--platform", platform]
    res = run(args)
    report = json.loads(res.output)
    fired = {f["rule"] for f in report["findings"]}
    if path.name.startswith("fail_"):
        assert rule in fired, report["findings"]
        assert res.exit_code == 1
        mine = [f for f in report["findings"] if f["rule"] == rule]
        assert all(f["file"] == str(path) and f["line"] > 1 for f in mine)
    else:
        assert not fired & set(RULES), report["findings"]
        assert res.exit_code == 0


@pytest.mark.parametrize("path", POD_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_vsphere_pod_fixture(path: Path):
    """Every rule runs: a fail_ fixture raises its own rule and no other, a pass_ fixture nothing."""
    res = run(["check", path, "--format", "json", "--platform", path.parent / "platform.yaml"])
    findings = json.loads(res.output)["findings"]
    if path.name.startswith("fail_"):
        assert {f["rule"] for f in findings} == {path.parent.name}, findings
        assert all(f["file"] == str(path) and f["line"] > 1 for f in findings)
    else:
        assert findings == []
        assert res.exit_code == 0


def test_fixture_rules_are_skipped_without_hosts(tmp_path):
    prof = tmp_path / "p.yaml"
    prof.write_text("apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: nohosts}\nspec: {runtime: tkg}\n")
    res = run(
        [
            "check",
            ROOT / "testdata/PF501/fail_guaranteed_workers.yaml",
            "--platform",
            prof,
            "--format",
            "json",
            "--rule",
            "PF501",
            "--rule",
            "PF502",
            "--rule",
            "PF503",
        ]
    )
    report = json.loads(res.output)
    assert not report["findings"]
    skipped = {r["rule"]: r["reason"] for r in report["skipped_rules"]}
    assert set(skipped) == {"PF501", "PF502", "PF503"} and "hosts" in skipped["PF501"]


# ----------------------------------------------------------------------------------------- crx ---

REDIS = """apiVersion: v1
kind: Pod
metadata: {name: none, namespace: bench}
spec:
  containers: [{name: redis, image: redis}]
---
apiVersion: v1
kind: Pod
metadata: {name: request-2, namespace: bench}
spec:
  containers: [{name: redis, image: redis, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: request-2-limit-8, namespace: bench}
spec:
  containers: [{name: redis, image: redis, resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "8", memory: 8Gi}}}]
"""


def test_crx_json_redis_cases(tmp_path):
    f = tmp_path / "redis.yaml"
    f.write_text(REDIS)
    res = run(["vsphere", "crx", f, "--platform", ROOT / "testdata/platforms/vsphere-pods.yaml", "--format", "json"])
    assert res.exit_code == 0, res.output
    pods = {p["name"]: p for p in json.loads(res.output)["pods"]}
    keys = {
        "name",
        "namespace",
        "file",
        "line",
        "vcpus",
        "cpu_limit_mhz",
        "cpu_reservation_mhz",
        "memory_bytes",
        "memory_reservation_bytes",
        "why",
    }
    assert all(keys <= set(p) for p in pods.values())
    assert [pods[n]["vcpus"] for n in ("none", "request-2", "request-2-limit-8")] == [1, 2, 8]
    big = pods["request-2-limit-8"]
    assert (big["cpu_reservation_mhz"], big["cpu_limit_mhz"]) == (5200, 20800)
    assert (big["memory_bytes"], big["memory_reservation_bytes"]) == (8 * 2**30, 2**30)
    assert big["file"] == str(f) and big["line"] == 13 and big["namespace"] == "bench"
    assert set(big["why"]) == {
        "vcpus",
        "cpu_limit_mhz",
        "cpu_reservation_mhz",
        "memory_bytes",
        "memory_reservation_bytes",
    }
    assert pods["none"]["memory_bytes"] == 2**30 and pods["none"]["cpu_limit_mhz"] is None


def test_crx_text_table_names_the_rules(tmp_path):
    f = tmp_path / "redis.yaml"
    f.write_text(REDIS)
    res = run(["vsphere", "crx", f])
    assert res.exit_code == 0
    assert "ceil(Σ CPU limits)" in res.output and "20,800" not in res.output  # default platform: 2,300 MHz
    assert "18,400 MHz" in res.output  # 8 × 2,300


def test_crx_bad_input_exits_2(tmp_path):
    assert run(["vsphere", "crx", tmp_path / "missing.yaml"]).exit_code == 2
    bad = tmp_path / "p.yaml"
    bad.write_text("kind: Platform\nspec: {hosts: nope}\n")
    f = tmp_path / "r.yaml"
    f.write_text(REDIS)
    assert run(["vsphere", "crx", f, "--platform", bad]).exit_code == 2


# ------------------------------------------------------------------------------------ capacity ---


def test_capacity_json_default_platform():
    res = run(["vsphere", "capacity", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert (d["cpu_total_mhz"], d["cpu_ha_reserved_mhz"], d["cpu_available_mhz"]) == (294_400, 73_600, 220_800)
    assert d["memory_available_bytes"] == d["memory_total_bytes"] - d["memory_ha_reserved_bytes"] == 1536 * 2**30
    assert d["cpu_reserved_mhz"] == 0 and d["memory_reserved_bytes"] == 0
    assert d["placement"]["feasible"] is True and len(d["placement"]["hosts"]) == 4


def test_capacity_with_clusters_and_what_if():
    path = ROOT / "testdata/PF501/pass_at_ha_limit.yaml"
    res = run(["vsphere", "capacity", path, "--format", "json", "--add-pool", "guaranteed-small"])
    d = json.loads(res.output)
    assert d["cpu_reserved_mhz"] == 3 * 32 * 2300 == d["cpu_available_mhz"]
    assert d["vcpus"] == 3 * 32 + 8 * 8 + 2
    assert d["overcommit_ratio"] == round(162 / 128, 4)
    hosts = d["placement"]["hosts"]
    assert d["placement"]["feasible"] is True
    assert sum(h["cpu_reserved_mhz"] for h in hosts) == d["cpu_reserved_mhz"]
    assert all(h["cpu_reserved_mhz"] <= h["cpu_capacity_mhz"] for h in hosts)
    w = d["what_if"]["pools"]
    assert (w["ha_limit"], w["admitted"]) == (0, 0)  # nothing left after HA


def test_capacity_what_if_replicas_text(tmp_path):
    one = tmp_path / "one.yaml"
    one.write_text(REDIS.split("---")[2])
    res = run(
        ["vsphere", "capacity", "--platform", ROOT / "testdata/platforms/vsphere-pods.yaml", "--add-replicas", one]
    )
    assert res.exit_code == 0, res.output
    # 4 × 16 × 2,600 = 166,400 MHz, 124,800 after HA; each CRX reserves 5,200 MHz and 1 GiB → 24
    assert "what-if more replicas of Pod bench/request-2-limit-8: 24 (HA allows 24)" in res.output
    # overcommit counts every physical core (HA reserves capacity, not cores): 64 cores, 300 % =
    # 192 vCPUs, 8 per CRX → 24
    assert "before overcommit passes 300%: 24" in res.output


def test_capacity_errors_exit_2(tmp_path):
    assert run(["vsphere", "capacity", "--add-pool", "no-such-class"]).exit_code == 2
    prof = tmp_path / "p.yaml"
    prof.write_text("apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: x}\nspec: {runtime: tkg}\n")
    assert run(["vsphere", "capacity", "--platform", prof]).exit_code == 2
    empty = tmp_path / "e.yaml"
    empty.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    assert run(["vsphere", "capacity", "--add-replicas", empty]).exit_code == 2


def test_capacity_infeasible_placement_is_reported():
    res = run(
        [
            "vsphere",
            "capacity",
            ROOT / "testdata/PF502/fail_one_per_host.yaml",
            "--platform",
            ROOT / "testdata/PF502/platform.yaml",
            "--format",
            "json",
        ]
    )
    d = json.loads(res.output)
    assert d["cpu_reserved_mhz"] <= d["cpu_available_mhz"]
    assert d["placement"]["feasible"] is False and d["placement"]["proof"] in ("lower-bound", "solver")


# --------------------------------------------------- PF401–PF403 against `podfit vsphere crx` ---

SUPERVISOR = ROOT / "testdata" / "PF401" / "platform.yaml"


def _random_pod(rng: random.Random, i: int) -> dict:
    def res() -> dict:
        out: dict = {}
        for part in ("requests", "limits"):
            for r, values in (("cpu", ["250m", "1", "2", "8"]), ("memory", ["512Mi", "1Gi", "4Gi", "8Gi"])):
                if rng.random() < 0.35:
                    out.setdefault(part, {})[r] = rng.choice(values)
        return out

    def cont(name: str, init: bool = False) -> dict:
        c = {"name": name, "image": "x"}
        r = res()
        if r:
            c["resources"] = r
        if init and rng.random() < 0.4:
            c["restartPolicy"] = "Always"
        return c

    spec = {"containers": [cont(f"c{j}") for j in range(rng.randint(1, 3))]}
    if rng.random() < 0.4:
        spec["initContainers"] = [cont(f"init{j}", init=True) for j in range(rng.randint(1, 3))]
    ns = rng.choice(["plain", "default-requests", "default-limits"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": ns}, "spec": spec}


LIMIT_RANGES = [
    {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "lr", "namespace": "default-requests"},
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "250m"}}]},
    },
    {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "lr", "namespace": "default-limits"},
        "spec": {"limits": [{"type": "Container", "default": {"memory": "1Gi"}}]},
    },
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """150 generated pods (init containers, sidecars, LimitRange defaults) as `podfit check` and
    `podfit vsphere crx` see them on a Supervisor, and their facts."""
    rng = random.Random(8)
    docs = LIMIT_RANGES + [_random_pod(rng, i) for i in range(150)]
    path = tmp_path_factory.mktemp("crx") / "pods.yaml"
    path.write_text("---\n".join(yaml.safe_dump(d) for d in docs))
    check = json.loads(run(["check", path, "--platform", SUPERVISOR, "--format", "json"]).output)
    crx = json.loads(run(["vsphere", "crx", path, "--platform", SUPERVISOR, "--format", "json"]).output)
    facts = build_facts(
        load([InputFile(str(path), path.read_bytes())]).objects, parse_platform(SUPERVISOR.read_text(), str(SUPERVISOR))
    )
    return check["findings"], {r["name"]: r for r in crx["pods"]}, {w.ref.name: w for w in facts.workloads}


def _by_rule(findings, rule):
    return [f for f in findings if f["rule"] == rule]


def test_vsphere_pod_rules_fire_on_the_facts_conditions(corpus):
    findings, _, workloads = corpus
    pf401 = {(f["object"]["name"], f["container"]) for f in _by_rule(findings, "PF401")}
    pf402 = {f["object"]["name"] for f in _by_rule(findings, "PF402")}
    pf403 = {f["object"]["name"] for f in _by_rule(findings, "PF403")}
    # on the facts' containers (LimitRange defaults and request = limit applied)
    assert pf401 == {(n, c.name) for n, w in workloads.items() for c in w.pod.all_containers if c.resources.is_empty}
    requests_only = set()
    for n, w in workloads.items():
        rs = [c.resources for c in w.pod.all_containers]
        if any(r.cpu_request is not None or r.memory_request is not None for r in rs) and all(
            r.cpu_limit is None and r.memory_limit is None for r in rs
        ):
            requests_only.add(n)
    assert pf402 == requests_only
    assert pf401 and pf402 and pf403  # every rule exercised
    # and LimitRange defaults decided some of it
    assert any(
        c.declared.is_empty and not c.resources.is_empty for w in workloads.values() for c in w.pod.all_containers
    )


def test_vsphere_pod_rules_give_the_numbers_of_podfit_vsphere_crx(corpus):
    findings, crx, _ = corpus
    keys = ("vcpus", "cpu_limit_mhz", "cpu_reservation_mhz", "memory_bytes", "memory_reservation_bytes")
    for f in _by_rule(findings, "PF401") + _by_rule(findings, "PF402") + _by_rule(findings, "PF403"):
        row = crx[f["object"]["name"]]
        assert {k: f["details"][k] for k in keys} == {k: row[k] for k in keys}, f
        vcpus = f"{row['vcpus']} vCPU{'s' if row['vcpus'] != 1 else ''}"
        assert f"{vcpus} (" in f["message"] and f"{fmt_memory(row['memory_bytes'])} of memory" in f["message"]
        assert f"{fmt_mhz(row['cpu_reservation_mhz'])} reserved" in f["message"]
        if row["cpu_limit_mhz"] is not None:
            assert f"CPU limit {fmt_mhz(row['cpu_limit_mhz'])}" in f["message"]
    # PF403 fires exactly where `podfit vsphere crx` says the memory is capped
    capped = {n for n, r in crx.items() if "capped" in r["why"]["memory_bytes"]}
    assert {f["object"]["name"] for f in _by_rule(findings, "PF403")} == capped
    for f in _by_rule(findings, "PF403"):
        assert (
            f["details"]["memory_limits_bytes"]
            > f["details"]["memory_cap_bytes"]
            == crx[f["object"]["name"]]["memory_bytes"]
        )


def test_a_container_without_resources_is_reported_once(corpus):
    """PF101/PF102 (Rego) leave a vSphere Pod's containers without any resources to PF401, and a
    one-shot init container whose missing request does not matter to its pod to PF113 (info): each
    container missing a request is reported by exactly one of them."""
    findings, _, workloads = corpus
    by = {}
    for f in findings:
        by.setdefault((f["object"]["name"], f["container"]), set()).add(f["rule"])
    for n, w in workloads.items():
        for c in w.pod.all_containers:
            rules = by.get((n, c.name), set())
            if c.resources.cpu_request is None:
                assert len(rules & {"PF101", "PF401", "PF113"}) == 1, (n, c.name, rules)
            if c.resources.memory_request is None:
                assert len(rules & {"PF102", "PF401", "PF113"}) == 1, (n, c.name, rules)


def test_pods_with_unreadable_quantities_are_left_to_pf903(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - {name: a, image: x, resources: {requests: {cpu: 2x}}}\n"
        "    - {name: b, image: x}\n"
    )
    findings = json.loads(run(["check", path, "--platform", SUPERVISOR, "--format", "json"]).output)["findings"]
    assert sorted((f["rule"], f["container"]) for f in findings if f["rule"] in ("PF401", "PF402", "PF903")) == [
        ("PF401", "b"),
        ("PF903", "a"),
    ]


def test_thresholds_come_from_the_config(tmp_path):
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("thresholds:\n  PF701: {max-services: 15}\n  PF503: {ratio-percent: 200}\n")
    args = ["check", "--config", cfg, "--format", "json", "--rule", "PF701", "--rule", "PF503"]
    lb = json.loads(run(args + [ROOT / "testdata/PF701/pass_twenty.yaml"]).output)["findings"]
    assert [(f["rule"], f["details"]["services"], f["details"]["threshold"]) for f in lb] == [("PF701", 20, 15)]
    oc = json.loads(run(args + [ROOT / "testdata/PF503/pass_exactly_300.yaml"]).output)["findings"]
    assert [(f["rule"], f["details"]["percent"], f["details"]["threshold_percent"]) for f in oc] == [
        ("PF503", 300, 200)
    ]


def test_crx_and_capacity_name_each_pod_s_cluster_and_leave_guest_clusters_out():
    # a TKC's workloads beside vSphere Namespace workloads on a Supervisor: crx names each pod's
    # cluster and says which run as vSphere Pods; capacity counts CRXs of those only
    root = ROOT
    tkc = root / "testdata/repos/kube-system/clusters"
    ns = root / "testdata/repos/vsphere-pods/namespaces/shop"
    platform = root / "testdata/platforms/vsphere-pods.yaml"
    res = CliRunner().invoke(
        main, ["vsphere", "crx", str(tkc), str(ns), "--platform", str(platform), "--format", "json"]
    )
    rows = json.loads(res.output)["pods"]
    by_cluster = {(r["cluster"], r["vsphere_pod"]) for r in rows}
    assert by_cluster == {("tkc-prod", False), ("supervisor", True)}
    assert all(r["vsphere_pod"] == (r["cluster"] == "supervisor") for r in rows)
    text = CliRunner().invoke(main, ["vsphere", "crx", str(tkc), str(ns), "--platform", str(platform)]).output
    assert "== cluster supervisor ==" in text and "== cluster tkc-prod ==" in text
    res = CliRunner().invoke(
        main, ["vsphere", "capacity", str(tkc), str(ns), "--platform", str(platform), "--format", "json"]
    )
    vms = json.loads(res.output)["vms"]
    crx = [v for v in vms if v["kind"] == "crx"]
    assert crx and all(v["cluster"] == "supervisor" for v in crx)
    assert {v["cluster"] for v in vms if v["kind"] != "crx"} == {"tkc-prod"}


SIDECAR_BEFORE_INIT = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  initContainers:
  - name: envoy
    image: envoy
    restartPolicy: Always
    resources: {requests: {cpu: "1", memory: 512Mi}}
  - name: migrate
    image: migrate
    resources: {requests: {cpu: "2", memory: 2Gi}}
  containers:
  - name: app
    image: app
    resources: {requests: {cpu: "1", memory: 1Gi}}
"""


def test_crx_sizing_and_packing_count_a_sidecar_the_same_way(tmp_path):
    # while migrate runs, the sidecar declared before it runs beside it: 2 + 1 CPUs, 2Gi + 512Mi
    app = tmp_path / "pod.yaml"
    app.write_text(SIDECAR_BEFORE_INIT)
    platform = ROOT / "testdata/platforms/vsphere-pods.yaml"
    crx = json.loads(
        CliRunner().invoke(main, ["vsphere", "crx", str(app), "--platform", str(platform), "--format", "json"]).output
    )["pods"][0]
    assert (crx["vcpus"], crx["cpu_reservation_mhz"], crx["memory_reservation_bytes"]) == (3, 7800, 2560 * 2**20)
    packed = json.loads(
        CliRunner()
        .invoke(main, ["pack", str(app), "--pool", "best-effort-xlarge=1", "--format", "json", "--time-budget", "0"])
        .output
    )["pods"][0]
    assert (packed["cpu"], packed["memory"]) == (3000, crx["memory_reservation_bytes"])
