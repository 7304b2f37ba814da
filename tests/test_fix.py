"""`podfit fix`: the text editor keeps every untouched byte, and the fixes do what they promise:
after `--write` the fixed findings are gone and nothing new appears, a second run changes nothing,
and the Kustomize overlay builds with the real kustomize into manifests that pass the same way."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT, tool
from fixkeys import brought
from podfit.cli import main
from podfit.fix import CannotPreserve, Edit, apply_edits

FIXABLE = ("PF101", "PF102", "PF103", "PF104", "PF105", "PF201")
DEFAULTS = ["--default-cpu", "100m", "--default-memory", "64Mi"]


def _run(*args: str) -> tuple[int, str, str]:
    """Exit code, output and standard error, each of its entries on one line again (fix wraps them
    at 160 characters, the rest indented: tests/test_command_inputs.py holds it to that)."""
    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr.replace("\n    ", " ")


def _findings(path: Path, *extra: str) -> list[tuple[str, str, str]]:
    code, out, err = _run("check", str(path), "--format", "json", "--fail-on", "never", "--allow-empty", *extra)
    assert code == 0, err
    return sorted(
        (f["rule"], json.dumps(f.get("object")), f.get("container") or "") for f in json.loads(out)["findings"]
    )


def _changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


# ------------------------------------------------------------------------------ the text editor ---

POD = """\
# a comment that must stay
apiVersion: v1
kind: Pod
metadata:
  name: web    # trailing comment
  labels: {app: web, tier: "front"}
spec:
  containers:
    - name: app
      image: 'nginx:1.27'
      resources:
        limits:
          cpu: "1500m"   # keep this comment
        requests: {cpu: 1500m, memory: 1Gi}
    - name: side
      image: busybox
      command: ["sh", "-c", "sleep 1d"]
"""


def test_replacing_a_value_touches_only_that_value_and_keeps_its_quotes():
    out = apply_edits(POD, [Edit(0, ("spec", "containers", 0, "resources", "limits", "cpu"), "2")])
    removed, added = _changed_lines(POD, out)
    assert removed == ['          cpu: "1500m"   # keep this comment']
    assert added == ['          cpu: "2"   # keep this comment']


def test_flow_mappings_are_edited_in_place():
    out = apply_edits(POD, [Edit(0, ("spec", "containers", 0, "resources", "requests", "cpu"), "2")])
    assert _changed_lines(POD, out) == (
        ["        requests: {cpu: 1500m, memory: 1Gi}"],
        ["        requests: {cpu: 2, memory: 1Gi}"],
    )
    out = apply_edits(POD, [Edit(0, ("spec", "containers", 0, "resources", "limits", "memory"), "1Gi")])
    assert _changed_lines(POD, out) == ([], ["          memory: 1Gi"])


def test_missing_mappings_are_added_as_blocks_at_the_files_indentation():
    out = apply_edits(POD, [Edit(0, ("spec", "containers", 1, "resources", "requests", "memory"), "64Mi")])
    removed, added = _changed_lines(POD, out)
    assert removed == []
    assert added == ["      resources:", "        requests:", "          memory: 64Mi"]
    assert out.startswith(POD)  # appended after the container's last line, the rest untouched


def test_multi_document_files_lists_and_crlf():
    text = "apiVersion: v1\r\nkind: List\r\nitems:\r\n- apiVersion: v1\r\n  kind: Pod\r\n  metadata: {name: a}\r\n"
    text += "  spec:\r\n    containers:\r\n    - name: c\r\n      image: x\r\n---\r\n# second\r\nkind: Pod\r\n"
    out = apply_edits(text, [Edit(0, ("items", 0, "spec", "containers", 0, "resources", "limits", "cpu"), "1")])
    assert "\r\n      resources:\r\n        limits:\r\n          cpu: 1\r\n---" in out
    assert out.replace("      resources:\r\n        limits:\r\n          cpu: 1\r\n", "") == text


def test_json_files_keep_json():
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "j"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
        indent=2,
    )
    out = apply_edits(
        text, [Edit(0, ("spec", "containers", 0, "resources", "requests", "cpu"), "250m")], json_like=True
    )
    assert json.loads(out)["spec"]["containers"][0] == {
        "name": "c",
        "image": "x",
        "resources": {"requests": {"cpu": "250m"}},
    }
    assert out.splitlines()[:8] == text.splitlines()[:8]


def test_anchors_and_aliases_are_refused():
    text = "kind: Pod\nx: &r {cpu: 1}\nspec:\n  containers:\n  - name: a\n    resources: {limits: *r}\n"
    with pytest.raises(CannotPreserve, match="anchors"):
        apply_edits(text, [Edit(0, ("spec", "containers", 0, "resources", "limits", "cpu"), "2")])


def test_a_file_pyyaml_cannot_read_is_left_alone_with_the_reason():
    from podfit.fix import Change, edit_file
    from podfit.model import ObjectRef

    change = Change("PF103", "x.yaml", ObjectRef("v1", "Pod", "", "p"), 1, ("spec",), "1", None, "why")
    result = edit_file("x.yaml", "kind: Pod\nspec: [unclosed\n", [change])
    assert result.new_text is None and result.error.startswith("cannot parse:")


def test_an_edit_that_would_change_anything_else_is_refused():
    # a scalar where a mapping is needed: no edit can add a key there
    with pytest.raises(CannotPreserve):
        apply_edits("kind: Pod\nspec: 3\n", [Edit(0, ("spec", "containers"), "2")])


# ------------------------------------------------------------------------------------ the fixes ---


def _fail_fixtures() -> list[Path]:
    return sorted(p for rule in FIXABLE for p in (ROOT / "testdata" / rule).glob("fail_*.y*ml"))


@pytest.mark.parametrize("fixture", _fail_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_write_removes_the_fixed_findings_adds_nothing_and_is_idempotent(fixture, tmp_path):
    target = tmp_path / fixture.name
    shutil.copy(fixture, target)
    before = _findings(target)
    code, _out, err = _run("fix", str(target), "--write", *DEFAULTS)
    assert code in (0, 1), err
    unfixed = {line.split(": ")[1].split()[0] for line in err.splitlines() if ": no fix: " in line}
    after = _findings(target)
    fixed = [f for f in before if f[0] in FIXABLE and f[0] not in unfixed]
    assert fixed, f"nothing fixed in {fixture}: {err}"
    assert not set(fixed) & set(after), err
    assert not brought(after, before), f"new findings: {brought(after, before)}"
    text = target.read_text()
    code, out, err = _run("fix", str(target), "--write", *DEFAULTS)  # twice: nothing left to change
    assert target.read_text() == text and "\n0 changes made in 0 files" in f"\n{err}", err


def _usage_fixtures() -> list[Path]:
    rules = ("PF107", "PF108", "PF109", "PF110")
    return sorted(p for rule in rules for p in (ROOT / "testdata" / rule).glob("fail_*.yaml"))


@pytest.mark.parametrize("fixture", _usage_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixes_from_measured_usage_clear_the_usage_rules(fixture, tmp_path):
    usage: list[str] = []
    for p in sorted(fixture.parent.glob(fixture.stem + ".*")):
        if p.suffix != ".yaml" and not p.name.endswith(".expected.json"):
            usage += ["--usage", str(p)]
    target = tmp_path / fixture.name
    shutil.copy(fixture, target)
    rule = fixture.parent.name
    before = _findings(target, *usage)
    assert rule in {f[0] for f in before}
    code, _out, err = _run("fix", str(target), "--write", *usage, "--rule", rule)
    after = _findings(target, *usage)
    assert set(after) <= set(before), f"new findings: {set(after) - set(before)}"
    if code == 0 and "until usage is measured again" in err:
        assert [f for f in after if f[0] == rule] == [f for f in before if f[0] == rule]  # the kill is history
    elif code == 0:
        assert rule not in {f[0] for f in after}, err
    else:  # what it could not fix, it says why (an OOM kill below the sampled peak has no right value)
        assert f"{rule} " in err and "no fix: " in err


def test_requests_come_from_the_measured_steady_state(tmp_path):
    fixture = ROOT / "testdata" / "PF110" / "fail_memory_request_below_p50.yaml"
    usage = ROOT / "testdata" / "PF110" / "fail_memory_request_below_p50.memory.json"
    target = tmp_path / fixture.name
    shutil.copy(fixture, target)
    code, _out, err = _run("fix", str(target), "--usage", str(usage), "--rule", "PF110")
    assert code == 0, err
    # the reason says how much was measured, as the finding does: 10 samples of each of 2 pods
    assert "request set to the measured steady state, p50 608Mi of 20 samples over 9h, 2 pods:" in err


def test_one_snapshot_is_no_steady_state_for_a_missing_request(tmp_path):
    """kubectl top's one sample per pod never becomes a request: fix says what is missing."""
    fixture = ROOT / "testdata" / "PF110" / "pass_one_top_snapshot.yaml"
    usage = ROOT / "testdata" / "PF110" / "pass_one_top_snapshot.usage.txt"
    target = tmp_path / fixture.name
    app = "resources: {requests: {cpu: 100m, memory: 256Mi}, limits: {cpu: 500m, memory: 1Gi}}"
    target.write_text(fixture.read_text().replace(app, "resources: {}"))
    code, _out, err = _run("fix", str(target), "--usage", str(usage), "--rule", "PF101")
    assert code == 1, err
    assert (
        "2 measured samples are a point, not a steady state (2 samples in one kubectl top snapshot, 2 pods; "
        "at least 10: export a range with `podfit usage export`)"
    ) in err


def test_the_diff_is_what_write_does(tmp_path):
    src = ROOT / "testdata" / "PF201" / "fail_app_server_1500m.yaml"
    target = tmp_path / "app.yaml"
    shutil.copy(src, target)
    code, diff, err = _run("fix", str(target))
    assert code == 0, err
    assert err.endswith("\n2 changes proposed in 1 file\n")  # the limit and the request
    assert diff.startswith(f"--- {target}\n+++ {target}\n")
    patched = tmp_path / "patched"
    patched.mkdir()
    shutil.copy(src, patched / "app.yaml")
    subprocess.run(["patch", "-s", "-p0", str(patched / "app.yaml")], input=diff, text=True, check=True)
    _run("fix", str(target), "--write")
    assert (patched / "app.yaml").read_text() == target.read_text()


def test_findings_without_a_safe_value_say_why_and_exit_1(tmp_path):
    target = tmp_path / "pod.yaml"
    target.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n"
        "    resources: {requests: {memory: 64Mi}}\n"
    )
    code, out, err = _run("fix", str(target), "--write")
    assert code == 1
    assert "PF101 Pod p: no fix: no value is known for the cpu request: pass --default-cpu" in err
    assert err.endswith("\n0 changes made in 0 files; 1 finding without a safe fix\n")
    assert out == "" and "memory: 64Mi}}\n" in target.read_text()


def test_a_value_from_a_limitrange_default_is_fixed_in_the_limitrange(tmp_path):
    target = tmp_path / "app.yaml"
    target.write_text(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: shop}\nspec:\n  limits:\n"
        "    - {type: Container, default: {memory: 1Gi}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n"
        "  annotations: {podfit.io/peak-memory: 200Mi}\nspec:\n  containers:\n  - name: c\n    image: x\n"
        "    resources: {requests: {cpu: 100m, memory: 100Mi}}\n"
    )
    code, out, err = _run("fix", str(target), "--rule", "PF104")  # the 1Gi limit is the LimitRange's
    assert code == 1 and out == ""
    assert "PF104 Pod shop/p: no fix: the limit comes from a LimitRange default; fix the LimitRange" in err


def test_a_guaranteed_pod_keeps_its_qos_and_whole_cpus(tmp_path):
    target = tmp_path / "pod.yaml"
    target.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {podfit.io/peak-cpu: 1500m}\nspec:\n"
        "  containers:\n  - name: c\n    image: x\n    resources:\n      requests: {cpu: 4, memory: 1Gi}\n"
        "      limits: {cpu: 4, memory: 1Gi}\n"
    )
    code, _out, err = _run("fix", str(target), "--write")
    assert code == 1
    assert "no whole CPU count lies between the peak 1500m and 1650m" in err
    target.write_text(target.read_text().replace("1500m", "1900m"))  # 2 CPUs lie within 10 % of 1.9
    code, _out, err = _run("fix", str(target), "--write")
    assert code == 0, err
    c = yaml.safe_load(target.read_text())["spec"]["containers"][0]["resources"]
    assert c == {"requests": {"cpu": 2, "memory": "1Gi"}, "limits": {"cpu": 2, "memory": "1Gi"}}


def test_generated_corpus_fixes_hold(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from gen import generate

    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(yaml.safe_dump_all(generate(150, seed=11)), encoding="utf-8")
    before = _findings(corpus)
    code, _out, err = _run("fix", str(corpus), "--write", *DEFAULTS)
    assert code in (0, 1), err
    after = _findings(corpus)
    assert not brought(after, before), f"new findings: {sorted(brought(after, before))[:5]}"
    remaining = [f for f in after if f[0] in FIXABLE]
    unfixed = err.count(": no fix: ")
    assert len(remaining) <= unfixed, (remaining[:5], err[-2000:])
    assert sum(1 for f in before if f[0] in FIXABLE) > len(remaining) + 20  # it fixed a good share
    text = corpus.read_text()
    _run("fix", str(corpus), "--write", *DEFAULTS)
    assert corpus.read_text() == text


def _kustomize_build(overlay: Path, out_file: Path) -> tuple[str, Path]:
    """What the real ``kustomize build`` makes of the overlay fix wrote, also written to ``out_file``."""
    built = subprocess.run(
        [str(tool("kustomize")), "build", "--load-restrictor", "LoadRestrictionsNone", str(overlay)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out_file.write_text(built)
    return built, out_file


@pytest.mark.skipif(tool("kustomize") is None, reason="kustomize not built: make tools")
def test_kustomize_overlay_builds_and_passes(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    for rel in ("PF103/fail_cpu_request_above_limit.yaml", "PF201/fail_app_server_1500m.yaml"):
        shutil.copy(ROOT / "testdata" / rel, app / rel.replace("/", "-"))
    original = {p.name: p.read_text() for p in app.iterdir()}
    before = _findings(app)
    overlay = tmp_path / "overlay"
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay))
    assert code == 0, err
    assert {p.name: p.read_text() for p in app.iterdir()} == original  # the sources are not touched
    _, out_file = _kustomize_build(overlay, tmp_path / "built.yaml")
    after = _findings(out_file)
    assert [f for f in before if f[0] in ("PF103", "PF201")]
    assert not [f for f in after if f[0] in ("PF103", "PF201")]
    assert {f[0] for f in after} <= {f[0] for f in before}


def test_kustomize_refuses_objects_it_cannot_tell_apart(tmp_path):
    for rel in ("PF103/fail_cpu_request_above_limit.yaml", "PF103/fail_memory_request_above_limit.yaml"):
        shutil.copy(ROOT / "testdata" / rel, tmp_path / rel.replace("/", "-"))
    code, _out, err = _run("fix", str(tmp_path), "--kustomize", str(tmp_path / "overlay"))
    assert code == 2 and err.startswith("podfit: error: Deployment calc appears in 2 files")  # no change listed
    assert not (tmp_path / "overlay").exists()


def test_stdin_and_unknown_rules_are_usage_errors():
    assert _run("fix", "-")[0] == 2
    code, _out, err = _run("fix", str(ROOT / "testdata" / "PF201"), "--rule", "PF601")
    assert code == 2 and "PF601 has no fix" in err


# ---------------------------------------------------------------------------- vSphere Pods (PF402) ---

TOP = """\
NAMESPACE     POD                                 NAME         CPU(cores)   MEMORY(bytes)
shop          orders                              envoy        300m         200Mi
shop          orders                              orders       1500m        1400Mi
default       redis                               redis        2900m        3000Mi
"""


@pytest.mark.parametrize("name", ["fail_requests_only.yaml", "fail_sidecar_before_init.yaml"])
def test_vsphere_pods_get_limits_from_the_measured_peak(name, tmp_path):
    platform = ["--platform", str(ROOT / "testdata" / "PF402" / "platform.yaml")]
    (tmp_path / "top.txt").write_text(TOP)
    usage = ["--usage", str(tmp_path / "top.txt")]
    target = tmp_path / "m" / name
    target.parent.mkdir()
    shutil.copy(ROOT / "testdata" / "PF402" / name, target)
    before = _findings(target, *platform, *usage)
    assert "PF402" in {f[0] for f in before}
    code, _out, err = _run("fix", str(target), "--write", "--rule", "PF402", *platform, *usage)
    assert code == 0, err
    after = _findings(target, *platform, *usage)
    assert "PF402" not in {f[0] for f in after}, err
    assert set(after) <= set(before), f"new findings: {set(after) - set(before)}"
    limits = [c["resources"].get("limits") for c in yaml.safe_load(target.read_text())["spec"]["containers"]]
    # peak + 10 %; a limit is set only where the peak plus headroom is above the request
    assert limits == ([{"cpu": "3190m"}] if name.startswith("fail_req") else [{"cpu": "1650m", "memory": "1540Mi"}])
    text = target.read_text()
    code, out, err = _run("fix", str(target), "--write", "--rule", "PF402", *platform, *usage)  # nothing left
    assert target.read_text() == text and "\n0 changes made in 0 files" in f"\n{err}", err


def test_vsphere_pods_without_measured_usage_have_no_limit_fix(tmp_path):
    target = tmp_path / "p.yaml"
    shutil.copy(ROOT / "testdata" / "PF402" / "fail_requests_only.yaml", target)
    platform = ["--platform", str(ROOT / "testdata" / "PF402" / "platform.yaml")]
    code, out, err = _run("fix", str(target), "--rule", "PF402", *platform)
    assert code == 1 and out == ""
    assert "PF402 Pod redis: no fix: no measured usage: pass --usage" in err


# ------------------------------------------------------------- node pools of cluster manifests ---

POOL_FIXTURES = [
    (p, ["--platform", str(ROOT / "testdata" / "PF301" / "platform.yaml")])
    for p in sorted((ROOT / "testdata" / "PF301").glob("fail_*.yaml"))
] + [(ROOT / "testdata" / "PF604" / "fail_twelve_nodes.yaml", [])]


@pytest.mark.parametrize("fixture,platform", POOL_FIXTURES, ids=lambda p: getattr(p, "name", ""))
def test_pool_fixes_edit_the_cluster_manifest(fixture, platform, tmp_path):
    rule = fixture.parent.name
    target = tmp_path / fixture.name
    shutil.copy(fixture, target)
    before = _findings(target, *platform)
    assert rule in {f[0] for f in before}
    code, _out, err = _run("fix", str(target), "--write", "--rule", rule, *platform)
    assert code == 0, err
    after = _findings(target, *platform)
    assert rule not in {f[0] for f in after}, err
    assert set(after) <= set(before), f"new findings: {set(after) - set(before)}"
    text = target.read_text()
    code, out, err = _run("fix", str(target), "--write", "--rule", rule, *platform)  # nothing left
    assert target.read_text() == text and "\n0 changes made in 0 files" in f"\n{err}", err


def test_numa_fix_keeps_the_pools_capacity(tmp_path):
    target = tmp_path / "c.yaml"
    shutil.copy(ROOT / "testdata" / "PF301" / "fail_8xlarge_v1alpha1.yaml", target)
    platform = ["--platform", str(ROOT / "testdata" / "PF301" / "platform.yaml")]
    _run("fix", str(target), "--write", "--rule", "PF301", *platform)
    workers = yaml.safe_load(target.read_text())["spec"]["topology"]["workers"]
    # 4 × 32 vCPUs / 256Gi wide VMs become 16 × 8 vCPUs / 64Gi, the largest class within 16 cores and 64Gi
    assert workers == {"class": "best-effort-2xlarge", "count": 16, "storageClass": "vsan"}


def test_a_cluster_variable_shared_by_other_pools_is_not_changed(tmp_path):
    text = (ROOT / "testdata" / "PF301" / "fail_capi_variable.yaml").read_text()
    text = text.replace(", variables: {overrides: [{name: vmClass, value: best-effort-xlarge}]}", "")
    target = tmp_path / "c.yaml"
    target.write_text(text)
    platform = ["--platform", str(ROOT / "testdata" / "PF301" / "platform.yaml")]
    code, out, err = _run("fix", str(target), "--rule", "PF301", *platform)
    assert code == 1 and out == ""
    assert "capi-control-plane takes its class from the cluster's vmClass variable, which pool-a share" in err


@pytest.mark.skipif(tool("kustomize") is None, reason="kustomize not built: make tools")
def test_kustomize_overlay_patches_cluster_manifests(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(ROOT / "testdata" / "PF301" / "fail_4xlarge_memory_v1alpha3.yaml", app / "tkc.yaml")
    shutil.copy(ROOT / "testdata" / "PF301" / "fail_capi_variable.yaml", app / "capi.yaml")
    platform = ["--platform", str(ROOT / "testdata" / "PF301" / "platform.yaml")]
    before = _findings(app, *platform)
    overlay = tmp_path / "overlay"
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay), "--rule", "PF301", *platform)
    assert code == 0, err
    built, out_file = _kustomize_build(overlay, tmp_path / "built.yaml")
    after = _findings(out_file, *platform)
    assert len([f for f in before if f[0] == "PF301"]) == 2
    assert not [f for f in after if f[0] == "PF301"]
    assert {f[0] for f in after} <= {f[0] for f in before}
    pools = [d for d in yaml.safe_load_all(built) if d["kind"] == "TanzuKubernetesCluster"][0]["spec"]["topology"]
    assert pools["nodePools"][0] == {
        "name": "workers",
        "replicas": 6,
        "vmClass": "guaranteed-2xlarge",
        "storageClass": "vsan",
    }


def test_a_pool_of_the_platform_profile_names_the_field_to_change(tmp_path):
    profile = tmp_path / "platform.yaml"
    profile.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: p}\nspec:\n  runtime: tkg\n"
        "  nodePools:\n    - {name: workers, vmClass: best-effort-xlarge, count: 12}\n"
    )
    app = tmp_path / "app.yaml"
    app.write_text((ROOT / "testdata" / "PF604" / "fail_twelve_nodes.yaml").read_text().split("---\n", 1)[1])
    code, out, err = _run("fix", str(app), "--rule", "PF604", "--platform", str(profile))
    assert code == 1 and out == ""
    assert f"no fix: the pool workers comes from the platform profile ({profile}:7)" in err


def test_no_numa_fix_when_a_pod_would_fit_no_narrower_node(tmp_path):
    target = tmp_path / "c.yaml"
    big_pod = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: team}
spec:
  replicas: 1
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers:
      - {name: app, image: x:1, resources: {requests: {cpu: "12", memory: 8Gi}, limits: {cpu: "12", memory: 8Gi}}}
"""
    target.write_text((ROOT / "testdata" / "PF301" / "fail_8xlarge_v1alpha1.yaml").read_text() + big_pod)
    platform = ["--platform", str(ROOT / "testdata" / "PF301" / "platform.yaml")]
    code, out, err = _run("fix", str(target), "--rule", "PF301", *platform)
    assert code == 1 and out == ""  # 8 vCPUs (the largest class within the NUMA node) cannot take 12 CPUs
    assert "no fix: no VM class that fits one NUMA node (16 cores, 64Gi) holds the largest pod" in err


def test_a_limit_from_usage_says_how_much_was_measured(tmp_path):
    """PF108's new limit names the peak with its samples, window and pods, as the finding does."""
    pf108 = ROOT / "testdata" / "PF108" / "fail_cpu_limit_far_above.yaml"
    usage = pf108.parent / "fail_cpu_limit_far_above.cpu.json"
    target = tmp_path / pf108.name
    shutil.copy(pf108, target)
    code, _out, err = _run("fix", str(target), "--usage", str(usage), "--rule", "PF108")
    assert code == 0, err
    code, out, err_check = _run("check", str(pf108), "--format", "json", "--fail-on", "never", "--usage", str(usage))
    assert code == 0, err_check
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "PF108"]
    samples, pods = finding["details"]["samples"], len(finding["details"]["pods"])
    assert re.search(rf"the measured peak \S+ \({samples} samples over \w+, {pods} pods?\) plus", err), err
