"""Issue 32, "no internal error" and "no silent pass": each hostile input once reported as an
internal error (or a traceback), and each input once passed unchecked, is now a finding with its
file and line (PF901, PF902) or a usage error (exit 2) naming the option or key and its range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import tool
from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
EKS_PLATFORM = ROOT / "testdata" / "platform-import" / "eks" / "platform.yaml"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: d}}}}
  template:
    metadata: {{labels: {{app: d}}}}
    spec:
      containers:
        - name: app
          image: app:1
          resources: {{requests: {{cpu: 100m, memory: 64Mi}}, limits: {{memory: 64Mi}}}}
"""


def _run(*args: str):
    r = CliRunner().invoke(main, list(args))
    assert "internal error" not in r.output and "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def _check(*args: str, engine: str = "embedded") -> tuple[int, dict]:
    r = _run("check", *args, "--engine", engine, "--format", "json", "--fail-on", "never", "--allow-empty")
    assert r.exit_code == 0, r.output
    return r.exit_code, json.loads(r.stdout)


def _findings(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


# --------------------------------------------------------------------------- findings ---


@pytest.mark.parametrize("opener,closer", [('{"a":', "}"), ("[", "]")])
def test_json_nested_past_the_interpreter_stack_is_pf901(tmp_path, opener, closer):
    p = tmp_path / "deep.json"
    body = opener * 1500 + "1" + closer * 1500
    p.write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": ' + body + "}}")
    _, report = _check(str(p))
    (f,) = _findings(report, "PF901")
    assert f["file"] == str(p) and f["line"] == 1
    assert report["files"][0]["status"] == "failed"


@pytest.mark.parametrize(
    "name,text,line",
    [
        (
            "cpu.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
            "    - name: a\n      resources: {requests: {cpu: " + "1" * 4400 + "}}\n",
            7,
        ),
        ("replicas.yaml", DEPLOYMENT.format(replicas="9" * 5000), 5),
        (
            "cpu.json",
            '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},\n"spec": {"containers": '
            '[{"name": "a", "resources": {"requests": {"cpu": ' + "1" * 4400 + "}}}]}}\n",
            2,
        ),
    ],
)
def test_number_past_python_int_limit_is_pf901_at_its_line(tmp_path, name, text, line):
    p = tmp_path / name
    p.write_text(text)
    _, report = _check(str(p))
    (f,) = _findings(report, "PF901")
    assert f["line"] == line
    assert "too long" in f["message"]


def test_quoted_quantity_of_4400_digits_is_pf903_with_a_short_message(tmp_path):
    p = tmp_path / "q.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: a\n      resources: {requests: {cpu: '" + "1" * 4400 + "'}}\n"
    )
    _, report = _check(str(p))
    (f,) = _findings(report, "PF903")
    assert f["line"] == 7


@pytest.mark.parametrize("replicas", [2**63, 2**31, -1])
def test_replicas_outside_int32_are_pf902_and_pack_nothing(tmp_path, replicas):
    p = tmp_path / "d.yaml"
    p.write_text(DEPLOYMENT.format(replicas=replicas))
    _, report = _check(str(p), "--platform", str(EKS_PLATFORM))
    (f,) = _findings(report, "PF902")
    assert f["line"] == 5 and "spec.replicas" in f["message"]
    assert ("int32" in f["message"]) == (replicas > 0)
    assert not _findings(report, "PF601")  # an object the API server rejects is not packed


def test_replicas_at_int32_max_are_valid_and_packed(tmp_path):
    p = tmp_path / "d.yaml"
    p.write_text(DEPLOYMENT.format(replicas=2**31 - 1))
    _, report = _check(str(p), "--platform", str(EKS_PLATFORM))
    assert not _findings(report, "PF902")
    assert _findings(report, "PF601")  # two billion pods do not fit the EKS pools


@pytest.mark.parametrize("pools", ["5", "true", '"abc"', "{a: 1}"])
def test_cluster_manifest_with_scalar_lists_is_pf902(tmp_path, pools):
    p = tmp_path / "tkc.yaml"
    p.write_text(
        "apiVersion: run.tanzu.vmware.com/v1alpha3\nkind: TanzuKubernetesCluster\nmetadata: {name: t}\n"
        f"spec:\n  topology:\n    controlPlane: {{vmClass: best-effort-small, replicas: 1}}\n    nodePools: {pools}\n"
        "---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c}\n"
        f"spec:\n  topology:\n    variables: {pools}\n    workers: {{machineDeployments: {pools}}}\n"
    )
    _, report = _check(str(p))
    assert any(f["line"] == 7 and "nodePools" in f["message"] for f in _findings(report, "PF902"))
    r = _run("pack", str(p), "--time-budget", "0")
    assert r.exit_code in (1, 2)


def test_api_version_too_long_to_serve_is_pf902(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text("apiVersion: " + "a" * 150 + "/" + "v" * 150 + "\nkind: Pod\nmetadata: {name: p}\n")
    _, report = _check(str(p))
    (f,) = _findings(report, "PF902")
    assert f["line"] == 1 and "at most 63" in f["message"] and len(f["message"]) < 250


def test_kind_too_long_for_a_file_name_is_not_an_error(tmp_path):
    p = tmp_path / "k.yaml"
    p.write_text("apiVersion: v1\nkind: " + "K" * 300 + "\nmetadata: {name: p}\n")
    _, report = _check(str(p))
    assert report["summary"]["objects"] == 1


@pytest.mark.parametrize("merge", ['"notamap"', "3", "null", "[{a: b}, 3]"])
def test_scalar_merge_key_is_pf901_as_kubectl_rejects_it(tmp_path, merge):
    p = tmp_path / "m.yaml"
    p.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: m}}\ndata:\n  <<: {merge}\n  a: b\n")
    _, report = _check(str(p))
    (f,) = _findings(report, "PF901")
    assert f["line"] == 5 and "merge key" in f["message"]
    assert report["summary"]["objects"] == 0


def test_merge_key_of_a_mapping_still_merges(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nx: &b {a: b}\ndata:\n  <<: *b\n")
    _, report = _check(str(p))
    assert not _findings(report, "PF901") and report["summary"]["objects"] == 1


# ------------------------------------------------------------------------ usage errors ---


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan", "inf", "-1", "0", "1e400"])
def test_throttle_seconds_out_of_range_is_a_usage_error(value):
    r = _run("throttle", "--cpus", "2", "--limit", "1", "--seconds", value)
    assert r.exit_code == 2
    assert "--seconds" in r.output and "0.001<=x<=3600" in r.output


@pytest.mark.parametrize(
    ("count", "said"),
    [
        ("1e20", "expected [NAME:]CLASS=COUNT"),  # not a count at all
        ("100000000000000000000", "COUNT of 21 digits: at least 1 and at most 5,000 nodes"),
        ("0", "COUNT 0: at least 1 and at most 5,000 nodes"),
        ("5001", "COUNT 5001: at least 1 and at most 5,000 nodes"),
        ("9" * 5000, "COUNT of 5,000 digits: at least 1 and at most 5,000 nodes"),
    ],
)
def test_pack_pool_count_out_of_range_is_a_usage_error(tmp_path, count, said):
    p = tmp_path / "d.yaml"
    p.write_text(DEPLOYMENT.format(replicas=1))
    r = _run("pack", str(p), "--pool", f"best-effort-small={count}")
    assert r.exit_code == 2 and "Invalid value for --pool" in r.output
    assert said in r.output
    assert len(r.output) < 1000


def test_pack_max_pods_beyond_int32_is_a_usage_error(tmp_path):
    p = tmp_path / "d.yaml"
    p.write_text(DEPLOYMENT.format(replicas=1))
    r = _run("pack", str(p), "--pool", "best-effort-small=2", "--max-pods", str(2**31))
    assert r.exit_code == 2 and "--max-pods" in r.output and "2147483647" in r.output


def test_vsphere_pool_nodes_out_of_range_is_a_usage_error(tmp_path):
    r = _run("vsphere", "capacity", "--add-pool", "best-effort-small", "--pool-nodes", str(10**20))
    assert r.exit_code == 2 and "--pool-nodes" in r.output and "1<=x<=5000" in r.output


def _config(tmp_path: Path, text: str, name: str = ".podfit.yaml") -> tuple[int, str]:
    cfg = tmp_path / name
    cfg.write_text(text)
    m = tmp_path / "d.yaml"
    m.write_text(DEPLOYMENT.format(replicas=1))
    r = _run("check", str(m), "--config", str(cfg), "--engine", "embedded")
    return r.exit_code, r.output


@pytest.mark.parametrize(
    "text,name,expected",
    [
        ("limits:\n  max-file-bytes: 100000000000000000000000\n", ".podfit.yaml", "limits/max-file-bytes"),
        ("[tool.podfit.limits]\nmax-file-bytes = 1e23\n", "pyproject.toml", "limits/max-file-bytes"),
        ("limits:\n  max-file-bytes: 1e23\n", ".podfit.yaml", "limits/max-file-bytes"),
        ("thresholds:\n  PF104: {tolerance-percent: .nan}\n", ".podfit.yaml", "tolerance-percent"),
    ],
)
def test_config_limits_and_options_out_of_range_are_exit_2(tmp_path, text, name, expected):
    code, out = _config(tmp_path, text, name)
    assert code == 2 and expected in out and "invalid config" in out


# ------------------------------------------------------------------------ silent passes ---


@pytest.mark.parametrize("engine", ["embedded", "opa"])
def test_lists_nested_three_deep_are_seen_by_python_and_rego_rules(tmp_path, engine):
    if engine == "opa" and tool("opa") is None:
        pytest.skip("opa not built (make tools)")
    p = tmp_path / "nested.yaml"
    p.write_text(
        """\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: List
        items:
          - apiVersion: v1
            kind: Pod
            metadata: {name: deep}
            spec:
              containers:
                - name: a
                  image: nginx
                  resources: {limits: {memory: 1Gi}}
                  requestz: 1
      - apiVersion: apps/v1
        kind: DeploymentList
        items:
          - metadata: {name: typed}
            spec:
              selector: {matchLabels: {a: b}}
              template:
                metadata: {labels: {a: b}}
                spec:
                  containers:
                    - name: b
                      image: nginx
                      resources: {limits: {memory: 1Gi}}
"""
    )
    _, report = _check(str(p), engine=engine)
    assert report["summary"]["objects"] == 2
    by = {(f["rule"], f["object"]["name"]): f["line"] for f in report["findings"] if f.get("object")}
    assert by[("PF101", "deep")] == 15  # Rego: the container without a CPU request
    assert by[("PF902", "deep")] == 18  # Python: the unknown field, at its own line
    assert ("PF101", "typed") in by  # a typed list's item inside a List


def test_list_nested_deeper_than_python_recursion_is_flattened(tmp_path):
    depth = 1200
    doc: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "leaf"}}
    for _ in range(depth):
        doc = {"apiVersion": "v1", "kind": "List", "items": [doc]}
    from podfit.loader import flat_items

    ((path, item),) = flat_items(doc)
    assert item["metadata"]["name"] == "leaf" and len(path) == 2 * depth


@pytest.mark.parametrize(
    "text,key",
    [
        ("enable: []\n", "enable"),
        ("enable: [PF101]\ndisable: [cpu-request-missing]\n", "enable/disable"),
    ],
)
def test_config_that_disables_every_rule_is_exit_2_naming_the_key(tmp_path, text, key):
    code, out = _config(tmp_path, text)
    assert code == 2 and f"{key}: no rule is left to run" in out


def test_config_disabling_every_rule_by_disable_is_exit_2(tmp_path):
    from podfit.catalogue import load_catalogue

    code, out = _config(tmp_path, "disable: [" + ", ".join(load_catalogue()) + "]\n")
    assert code == 2 and "disable: no rule is left to run" in out


@pytest.mark.parametrize(
    "version,expected",
    [
        ("1.2", "the known versions are 1."),
        ("9.99", "the known versions are 1."),
        ("abc", "is not a Kubernetes version"),
        ("1." + "9" * 5000, "is not a Kubernetes version"),
    ],
)
def test_unknown_pf902_kubernetes_version_is_exit_2_naming_the_key(tmp_path, version, expected):
    code, out = _config(tmp_path, f'thresholds:\n  PF902: {{kubernetes-version: "{version}"}}\n')
    assert code == 2 and "thresholds.PF902.kubernetes-version" in out and expected in out
    assert len(out) < 600


@pytest.mark.parametrize("form", ["{v}", "v{v}.3", "{v}.0-eks-a737599", "latest"])
def test_known_pf902_kubernetes_version_runs(tmp_path, form):
    from podfit.schemas_k8s import shipped_versions

    version = form.format(v=shipped_versions()[0])
    code, out = _config(tmp_path, f'thresholds:\n  schema-invalid: {{kubernetes-version: "{version}"}}\n')
    assert code == 0, out


def test_platform_pool_of_count_0_is_exit_2_naming_the_key(tmp_path):
    import re

    (r,) = _runs_on_platform(tmp_path, re.sub(r"count: \d+", "count: 0", EKS_PLATFORM.read_text(), count=1), BOTH[:1])
    assert r.exit_code == 2 and "spec.nodePools[0].count: 0 nodes" in r.output
    assert "no node pools" not in r.output


def test_fix_edits_an_object_in_a_list_inside_a_list(tmp_path):
    p = tmp_path / "nested.yaml"
    p.write_text(
        "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: List\n    items:\n"
        "      - apiVersion: v1\n        kind: Pod\n        metadata: {name: deep}\n        spec:\n"
        "          containers:\n            - {name: a, image: nginx}\n"
    )
    r = _run("fix", str(p), "--default-cpu", "100m", "--default-memory", "64Mi", "--write")
    assert r.exit_code == 0, r.output
    from podfit.loader import InputFile, parse_file

    (obj,) = parse_file(InputFile(str(p), p.read_bytes())).objects
    assert obj.raw["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "64Mi"}}


BOTH = (["check", "--engine", "embedded"], ["pack", "--time-budget", "0"])


def _runs_on_platform(tmp_path, text, commands=BOTH):
    """Each of ``commands`` over a one-replica Deployment with the platform profile ``text``."""
    platform = tmp_path / "platform.yaml"
    platform.write_text(text)
    m = tmp_path / "d.yaml"
    m.write_text(DEPLOYMENT.format(replicas=1))
    return [_run(command[0], str(m), "--platform", str(platform), *command[1:]) for command in commands]


@pytest.mark.parametrize(
    "old,new,where",
    [
        ("maxPods: 58", "maxPods: 99999999999999999999999", "spec/kubelet/maxPods"),
        ("pods: 58}", "pods: 99999999999999999999999}", "spec/nodePools/0/allocatable/pods"),
        ("pods: 3}", "pods: 2147483648}", "spec/nodePools/0/systemPods/pods"),
    ],
)
def test_platform_pod_counts_beyond_int32_are_exit_2_naming_the_key(tmp_path, old, new, where):
    text = EKS_PLATFORM.read_text()
    assert old in text
    for r in _runs_on_platform(tmp_path, text.replace(old, new, 1)):
        assert r.exit_code == 2 and where in r.output and "at most 2147483647" in r.output


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("composer", ["libyaml", "python"])  # (the pure-Python one takes what may nest deeply)
def test_scalar_merge_key_fails_on_every_parser_path(monkeypatch, fast, composer):
    import yaml as pyyaml

    from podfit import yamlio

    if composer == "python":
        monkeypatch.setattr(yamlio, "_c_composer_safe", lambda chunk: False)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n  <<: notamap\n  k: v\n"
    with pytest.raises(pyyaml.YAMLError) as e:
        list(yamlio.iter_documents(text, fast=fast))
    assert e.value.problem_mark.line + 1 == 5 and "merge key" in str(e.value)


@pytest.mark.parametrize("old,new", [(r"count: (\d+)", r"count: \1.0"), (r"maxPods: \d+", "maxPods: 1.0e+23")])
def test_platform_integer_given_as_a_whole_float_is_exit_2(tmp_path, old, new):
    """JSON Schema's integer takes 1.0; podfit's counts do not (found by make fuzz)."""
    import re

    text, n = re.subn(old, new, EKS_PLATFORM.read_text(), count=1)
    assert n == 1
    (r,) = _runs_on_platform(tmp_path, text, BOTH[:1])
    assert r.exit_code == 2 and "expected an integer" in r.output


@pytest.mark.parametrize(
    "old,new,shown",
    [
        ("allocatable: {cpu: 3920m", "allocatable: {cpu: 9223372036854776.0", "at most 1,000,000 CPUs"),
        ("memory: 15896872Ki, reserved", "memory: 2Ei, reserved", "at most 1 PiB"),
    ],
)
def test_platform_node_figures_beyond_any_machine_are_exit_2(tmp_path, old, new, shown):
    """A node of 9.2e15 CPUs overflowed packing's 64-bit sums (found by make fuzz)."""
    text = EKS_PLATFORM.read_text()
    assert old in text
    for r in _runs_on_platform(tmp_path, text.replace(old, new, 1)):
        assert r.exit_code == 2 and shown in r.output and "more than a machine has" in r.output


@pytest.mark.parametrize("option", ["--baseline", "--usage"])
def test_json_nested_past_the_stack_in_a_baseline_or_usage_file_is_a_clear_error(tmp_path, option):
    """A baseline or usage file of 3,000 nested arrays: exit 2 naming the file, not an internal error."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 3000 + "]" * 3000)
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n")
    value = str(deep) if option == "--baseline" else f"cpu={deep}"
    res = CliRunner().invoke(main, ["check", str(manifest), option, value])
    assert res.exit_code == 2
    assert "nested too deeply" in res.output and str(deep) in res.output.replace("cpu=", "")
    assert "internal error" not in res.output


def test_a_document_as_deep_as_the_highest_max_depth_is_checked(tmp_path):
    """`limits: max-depth` at the highest value the config schema takes admits a document that
    deep; the real command (its engine started early, engines.wasm.prestart) checks it: a finding,
    not an internal error from a recursion limit (Python's, pickle's, the schema validator's)."""
    import os
    import subprocess
    import sys

    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text())
    highest = schema["properties"]["limits"]["properties"]["max-depth"]["maximum"]
    (tmp_path / ".podfit.yaml").write_text(f"limits:\n  max-depth: {highest}\n")
    levels = min(highest, 1200) - 4  # under spec.x; block style (flow style has its own limit)
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n  x:\n"
    text += "".join(" " * (4 + i) + "a:\n" for i in range(levels)) + " " * (5 + levels) + "1\n"
    (tmp_path / "deep.yaml").write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PODFIT_PRESTART")}
    env["PYTHONPATH"] = str(ROOT / "analyzer")
    proc = subprocess.run(
        [sys.executable, "-m", "podfit", "check", "--format", "json", "deep.yaml"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["findings"]
