"""`podfit vsphere crx|capacity` through the real CLI, the PF501–PF503/PF701 fixtures through
`podfit check`, and the analyzer side of PF401–PF403 against the Rego policies (opa)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT, tool
from podfit.cli import main
from podfit.loader import InputFile, build_workloads, load
from podfit.vsphere import crx_lint

RULES = ("PF501", "PF502", "PF503", "PF701")
FIXTURES = sorted(p for r in RULES for p in (ROOT / "testdata" / r).glob("*_*.yaml"))


def run(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)


def test_every_rule_has_pass_and_fail_fixtures():
    for r in RULES:
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


def test_fixture_rules_are_skipped_without_hosts(tmp_path):
    prof = tmp_path / "p.yaml"
    prof.write_text("apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: nohosts}\nspec: {runtime: tkg}\n")
    res = run(["check", ROOT / "testdata/PF501/fail_guaranteed_workers.yaml", "--platform", prof, "--format", "json",
               "--rule", "PF501", "--rule", "PF502", "--rule", "PF503"])  # fmt: skip
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
    keys = {"name", "namespace", "file", "line", "vcpus", "cpu_limit_mhz", "cpu_reservation_mhz", "memory_bytes",
            "memory_reservation_bytes", "why"}  # fmt: skip
    assert all(keys <= set(p) for p in pods.values())
    assert [pods[n]["vcpus"] for n in ("none", "request-2", "request-2-limit-8")] == [1, 2, 8]
    big = pods["request-2-limit-8"]
    assert (big["cpu_reservation_mhz"], big["cpu_limit_mhz"]) == (5200, 20800)
    assert (big["memory_bytes"], big["memory_reservation_bytes"]) == (8 * 2**30, 2**30)
    assert big["file"] == str(f) and big["line"] == 13 and big["namespace"] == "bench"
    assert set(big["why"]) == {"vcpus", "cpu_limit_mhz", "cpu_reservation_mhz", "memory_bytes", "memory_reservation_bytes"}
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
    res = run(["vsphere", "capacity", "--platform", ROOT / "testdata/platforms/vsphere-pods.yaml", "--add-replicas", one])
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
    res = run(["vsphere", "capacity", ROOT / "testdata/PF502/fail_one_per_host.yaml", "--platform",
               ROOT / "testdata/PF502/platform.yaml", "--format", "json"])  # fmt: skip
    d = json.loads(res.output)
    assert d["cpu_reserved_mhz"] <= d["cpu_available_mhz"]
    assert d["placement"]["feasible"] is False and d["placement"]["proof"] in ("lower-bound", "solver")


# ------------------------------------------------------------ PF401–PF403: Python against Rego ---


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
        if init and rng.random() < 0.3:
            c["restartPolicy"] = "Always"
        return c

    spec = {"containers": [cont(f"c{j}") for j in range(rng.randint(1, 3))]}
    if rng.random() < 0.3:
        spec["initContainers"] = [cont("init", init=True)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": spec}


@pytest.mark.tools
def test_crx_lint_agrees_with_the_rego_policies(tmp_path):
    opa = tool("opa")
    if opa is None:
        pytest.skip("opa not built (make tools)")
    rng = random.Random(8)
    pods = [_random_pod(rng, i) for i in range(150)]
    (tmp_path / "in.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    (tmp_path / "data.json").write_text(json.dumps({"podfit": {"platform": {"runtime": "vsphere-pods"}}}))
    out = subprocess.run(
        [opa, "eval", "--format", "json", "-d", ROOT / "policies/lib", "-d", ROOT / "policies/vsphere",
         "-d", tmp_path / "data.json", "-i", tmp_path / "in.json", "data.podfit.vsphere"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    value = json.loads(out.stdout)["result"][0]["expressions"][0]["value"]
    rego = set()
    for pkg in value.values():
        for r in pkg.get("findings", ()):
            if r["rule"] in ("PF401", "PF402", "PF403"):
                assert r["object"]["kind"] == "Pod"
                rego.add((r["object"]["name"], r["rule"]))
    text = "---\n".join(yaml.safe_dump(p) for p in pods)
    ws, _ = build_workloads(load([InputFile("in.yaml", text.encode())]).objects)
    python = {(w.ref.name, rule) for w in ws for rule in crx_lint(w.pod)}
    assert python == rego
    assert {r for _, r in rego} == {"PF401", "PF402", "PF403"}  # every rule exercised


def test_thresholds_come_from_the_config(tmp_path):
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("thresholds:\n  PF701: {max-services: 15}\n  PF503: {ratio-percent: 200}\n")
    args = ["check", "--config", cfg, "--format", "json", "--rule", "PF701", "--rule", "PF503"]
    lb = json.loads(run(args + [ROOT / "testdata/PF701/pass_twenty.yaml"]).output)["findings"]
    assert [(f["rule"], f["details"]["services"], f["details"]["threshold"]) for f in lb] == [("PF701", 20, 15)]
    oc = json.loads(run(args + [ROOT / "testdata/PF503/pass_exactly_300.yaml"]).output)["findings"]
    assert [(f["rule"], f["details"]["percent"], f["details"]["threshold_percent"]) for f in oc] == [("PF503", 300, 200)]
