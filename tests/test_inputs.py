"""What podfit is given and what it makes of it: input rules (PF9xx) on their fixtures, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.catalogue import load_catalogue
from podfit.cli import main
from podfit.loader import InputFile, load, parse_file

ROOT = Path(__file__).resolve().parents[1]
# rules raised by the loader about files and documents (no Rego engine, no platform facts needed)
INPUT_RULES = ["PF901", "PF905", "PF907", "PF908", "PF909"]
FIXTURES = sorted(
    p for r in INPUT_RULES for p in (ROOT / "testdata" / r).iterdir() if p.name.startswith(("pass_", "fail_"))
)


def run(args, input=None):
    return CliRunner().invoke(main, args, input=input, catch_exceptions=False)


def check_json(*args):
    # --allow-empty: a fixture may hold no Kubernetes object (a kustomization, a values file)
    r = run(
        ["check", *args, "--format", "json", "--allow-empty", *[x for rule in INPUT_RULES for x in ("--rule", rule)]]
    )
    return r, json.loads(r.output)


def test_every_input_rule_has_pass_and_fail_fixtures():
    for rule in INPUT_RULES:
        names = [p.name for p in (ROOT / "testdata" / rule).iterdir()]
        assert any(n.startswith("fail_") for n in names) and any(n.startswith("pass_") for n in names), rule


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_input_fixture(path):
    """A fail_ fixture (a file, or a directory where the rule goes by file names) raises its rule
    and no other input rule; a pass_ one raises none."""
    rule = path.parent.name
    r, report = check_json(str(path))
    found = {f["rule"] for f in report["findings"]}
    if path.name.startswith("fail_"):
        assert found == {rule}, report["findings"]
        severity = load_catalogue()[rule].severity
        assert r.exit_code == (1 if severity == "error" else 0)
    else:
        assert found == set(), report["findings"]
        assert r.exit_code == 0


# ------------------------------------------------------------------- files that were not read ---

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: ok, namespace: shop}
spec:
  containers:
    - name: a
      image: a:1
      resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1, memory: 1Gi}}
"""


@pytest.fixture
def unread_tree(tmp_path, monkeypatch):
    """A directory with one good manifest and every kind of file podfit does not read."""
    d = tmp_path / "k8s"
    d.mkdir()
    (d / "ok.yaml").write_text(POD)
    (d / "big.yaml").write_text(POD + "".join(f"# padding {i}\n" for i in range(100)))  # over the limit below
    (d / "bin.yaml").write_bytes(b"\x1f\x8b\x08\x00\x00\x00")
    (d / "loop.yaml").symlink_to(d / "loop.yaml")
    (d / "empty.yaml").write_text("")
    (tmp_path / ".podfit.yaml").write_text("limits: {max-file-bytes: 1000}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


NOT_READ = {
    "k8s/big.yaml": "larger than 1,000 bytes",
    "k8s/bin.yaml": "binary file",
    "k8s/loop.yaml": "symbolic link loop",
}


def test_files_not_read_are_pf907_errors_in_json_and_text(unread_tree):
    r = run(["check", "k8s", "--format", "json"])
    assert r.exit_code == 1
    report = json.loads(r.output)
    pf907 = {f["file"]: f for f in report["findings"] if f["rule"] == "PF907"}
    assert sorted(pf907) == sorted(NOT_READ)
    for path, why in NOT_READ.items():
        assert why in pf907[path]["message"] and pf907[path]["severity"] == "error" and pf907[path]["line"] == 0
    assert report["summary"]["skipped"] == 4  # the empty file too, which is no finding
    text = run(["check", "k8s", "--no-color"]).output
    for path, why in NOT_READ.items():
        assert f"{path}\n  -  error    PF907  not checked: {why}" in text
    assert "skipped: k8s/empty.yaml: empty file" in text


def test_files_not_read_show_in_sarif_junit_and_github(unread_tree):
    import xml.etree.ElementTree as ET

    log = json.loads(run(["check", "k8s", "--format", "sarif"]).output)
    results = log["runs"][0]["results"]
    assert sorted(
        x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in results if x["ruleId"] == "PF907"
    ) == sorted(NOT_READ)
    assert all(x["level"] == "error" for x in results if x["ruleId"] == "PF907")
    root = ET.fromstring(run(["check", "k8s", "--format", "junit"]).output)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    for path in NOT_READ:
        failure = suites[path].find("testcase/failure")
        assert failure is not None and "PF907" in failure.get("message")
    assert suites["k8s/empty.yaml"].find("testcase/skipped").get("message") == "empty file"
    gh = run(["check", "k8s", "--format", "github"]).output.splitlines()
    for path, why in NOT_READ.items():
        assert any(
            line.startswith(f"::error file={path},title=PF907 file-not-checked::not checked: {why}") for line in gh
        ), gh
    assert "::notice file=k8s/empty.yaml,title=podfit::skipped: empty file" in gh
    assert gh[-1] == "podfit: 5 files (4 skipped), 1 object: 3 errors, 0 warnings, 0 info"


def test_files_not_read_count_towards_fail_on(unread_tree):
    assert run(["check", "k8s", "--fail-on", "never"]).exit_code == 0
    Path(".podfit.yaml").write_text("limits: {max-file-bytes: 1000}\nseverity: {PF907: warning}\n")
    assert run(["check", "k8s"]).exit_code == 0
    assert run(["check", "k8s", "--fail-on", "warning"]).exit_code == 1


def test_unreadable_file_is_pf907_with_the_reason():
    r = parse_file(InputFile("secret.yaml", None, error="Permission denied"))
    assert (r.record.status, r.record.reason) == ("failed", "Permission denied")
    assert [(f.rule, f.message, f.location.line) for f in r.findings] == [
        ("PF907", "not checked: cannot be read: Permission denied", 0)
    ]


# ------------------------------------------------------------------------- nothing checked ---


def _error_line(r):
    lines = [line for line in r.output.splitlines() if line.startswith("podfit: error: ")]
    assert len(lines) == 1, r.output
    return lines[0]


def test_empty_stdin_exits_2_naming_it():
    r = run(["check", "-"], input="")
    assert r.exit_code == 2
    assert _error_line(r) == (
        "podfit: error: no Kubernetes object found in <stdin> (empty file); pass --allow-empty if that is expected"
    )
    assert run(["check", "-", "--fail-on", "never"], input="").exit_code == 2  # nothing checked is no pass either
    assert run(["check", "-", "--allow-empty"], input="").exit_code == 0


def test_directory_without_manifests_exits_2(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("# not a manifest\n")
    r = run(["check", str(tmp_path)])
    assert r.exit_code == 2
    assert f"no Kubernetes object found: no *.yaml, *.yml or *.json file in {tmp_path};" in _error_line(r)
    assert run(["check", str(tmp_path), "--allow-empty"]).exit_code == 0


def test_yaml_without_kubernetes_objects_exits_2_with_an_account_of_each_file(tmp_path):
    (tmp_path / "ci.yaml").write_text("on: push\njobs: {}\n")
    (tmp_path / "empty.yml").write_text("# nothing\n")
    (tmp_path / "two.yaml").write_text("a: 1\n---\nb: 2\n")
    (tmp_path / "z1.yaml").write_text("c: 3\n")
    r = run(["check", str(tmp_path), "--format", "json", "--output", str(tmp_path / "report.json")])
    assert r.exit_code == 2
    assert _error_line(r) == (
        f"podfit: error: no Kubernetes object found in 4 files: {tmp_path}/ci.yaml (1 document without a kind), "
        f"{tmp_path}/empty.yml (empty file), {tmp_path}/two.yaml (2 documents without a kind), and 1 more; "
        "pass --allow-empty if that is expected"
    )
    report = json.loads((tmp_path / "report.json").read_text())  # the report is written all the same
    assert report["summary"]["files"] == 4 and report["summary"]["objects"] == 0


def test_inputs_all_ignored_by_the_config_exit_2_and_say_so(tmp_path):
    (tmp_path / "pod.yaml").write_text(POD)
    cfg = tmp_path / "cfg.yml"
    cfg.write_text("ignore: ['*.yaml', '*.yml']\n")
    r = run(["check", str(tmp_path), "--config", str(cfg)])
    assert r.exit_code == 2 and "(2 left out by the path selection; -v lists them)" in _error_line(r)
    listed = run(["check", str(tmp_path), "--config", str(cfg), "-v"]).output
    assert "pod.yaml: the config's ignore *.yaml" in listed and "cfg.yml: the config's ignore *.yml" in listed


def test_findings_that_fail_the_run_win_over_nothing_checked(tmp_path):
    """A lone broken file: the PF901 error already fails the run (exit 1) and says why; only a run
    that would otherwise pass is turned into exit 2."""
    f = tmp_path / "broken.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    r = run(["check", str(f)])
    assert r.exit_code == 1 and "podfit: error:" not in r.output
    r = run(["check", str(f), "--fail-on", "never"])
    assert r.exit_code == 2 and f"no Kubernetes object found in {f} (failed: YAML error at line 3" in _error_line(r)


def test_allow_empty_is_documented():
    assert "--allow-empty" in run(["check", "--help"]).output
    assert "--allow-empty" in (ROOT / "README.md").read_text()
    assert "podfit check --allow-empty" in (ROOT / ".pre-commit-hooks.yaml").read_text()


# -------------------------------------------------------------------- unrendered templates ---

TEMPLATES = sorted((ROOT / "testdata" / "PF908").glob("fail_*.yaml"))
NO_REQUESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "registry.example/api:1"}]
"""


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_a_template_is_one_finding_and_nothing_else_with_every_rule(path):
    """Every rule, the Rego ones through the embedded engine: the template file gets exactly one
    finding, PF908, never PF901/PF902/PF903 or a Rego finding on its template text."""
    r = run(["check", str(path), "--engine", "embedded", "--format", "json"])
    report = json.loads(r.output)
    assert [f["rule"] for f in report["findings"]] == ["PF908"]
    assert report["findings"][0]["severity"] == "error" and r.exit_code == 1
    # a file outside a chart: the hint names no chart, and no tool but as an example
    assert (
        "render it first: <the tool that fills its placeholders, e.g. helm template CHART>"
        in report["findings"][0]["message"]
    )
    assert report["files"][0]["status"] == "skipped" and report["summary"]["objects"] == 0


def test_templates_beside_manifests_leave_the_manifests_checked(tmp_path, monkeypatch):
    chart = tmp_path / "deploy" / "charts" / "shop"
    (chart / "templates").mkdir(parents=True)
    (chart / "templates" / "deployment.yaml").write_text((ROOT / "testdata/PF908/fail_chart_template.yaml").read_text())
    (tmp_path / "deploy" / "api.yaml").write_text(NO_REQUESTS)
    monkeypatch.chdir(tmp_path)
    report = json.loads(run(["check", "deploy", "--engine", "embedded", "--format", "json"]).output)
    by_file = {}
    for f in report["findings"]:
        by_file.setdefault(f["file"], set()).add(f["rule"])
    assert by_file["deploy/charts/shop/templates/deployment.yaml"] == {"PF908"}
    assert by_file["deploy/api.yaml"] & {"PF101", "PF102", "PF105"}  # the manifest beside it is checked
    (finding,) = [f for f in report["findings"] if f["rule"] == "PF908"]
    assert finding["line"] == 5
    assert finding["message"] == (
        'unrendered Go/Helm template {{ include "shop.fullname" . }}: the file is not checked; '
        "render it first: helm template deploy/charts/shop | podfit check -"
    )


@pytest.mark.parametrize(
    "text,line",
    [
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-web\n", 4),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n    - name: a\n"
            '      resources: {requests: {cpu: "{{ .Values.cpu }}"}}\n',
            7,
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n    - name: a\n"
            "      resources: {requests: {cpu: '{{ cpu }}'}}\n",
            7,
        ),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-{{ name }}\n", 4),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ name }}\n", 4),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n{{- if x }}\ndata: {a: b}\n{{- end }}\n", 4),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n    - name: a\n      args: [{{ x }}]\n",
            7,
        ),
    ],
    ids=[
        "unquoted-helm",
        "quoted-helm-quantity",
        "quoted-other-quantity",
        "name-in-plain-scalar",
        "unquoted-name",
        "control-lines",
        "flow-sequence",
    ],
)
def test_template_forms_on_stdin(text, line):
    r = run(["check", "-", "--format", "json", "--engine", "embedded"], input=text)
    findings = json.loads(r.output)["findings"]
    assert [(f["rule"], f["line"], f["file"]) for f in findings] == [("PF908", line, "<stdin>")]
    assert (
        "<the tool that fills its placeholders, e.g. helm template CHART> | podfit check -" in (findings[0]["message"])
    )


INJECTOR = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: injector, namespace: mesh}
data:
  config: |-
    templates:
      sidecar: |
        {{- if .Values.global.proxy.resources }}
          {{ toYaml .Values.global.proxy.resources | indent 6 }}
        {{- end }}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: mesh}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers: [{name: a, image: a:1}]
"""


def test_actions_in_block_scalars_are_data_outside_a_chart(tmp_path):
    """Rendered YAML may carry another tool's template as string data (a mesh's sidecar injector
    ConfigMap, `.Values` and all): outside a chart's templates/ the file is checked as it parsed; in
    a chart's templates/ the same text is an unrendered template."""
    r = run(["check", "-", "--format", "json", "--engine", "embedded"], input=INJECTOR)
    report = json.loads(r.output)
    assert [(f["rule"], f["line"], f["object"]["name"]) for f in report["findings"]] == [("PF105", 12, "app")]
    assert report["summary"]["objects"] == 2
    chart = tmp_path / "mesh" / "templates"
    chart.mkdir(parents=True)
    (chart / "injector.yaml").write_text(INJECTOR)
    r = run(["check", str(chart / "injector.yaml"), "--format", "json", "--engine", "embedded"])
    findings = json.loads(r.output)["findings"]
    assert [(f["rule"], f["line"]) for f in findings] == [("PF908", 8)]
    assert "helm template " + str(tmp_path / "mesh") in findings[0]["message"]


@pytest.mark.parametrize(
    "text",
    [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "{{ x }}", b: [\n',  # braces in a string, a real syntax error
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}  # {{ .Values.x }}\ndata: {a: [\n",  # in a comment
    ],
)
def test_braces_that_are_no_template_leave_a_syntax_error_pf901(text):
    assert [f.rule for f in parse_file(InputFile("x.yaml", text.encode())).findings] == ["PF901"]


def test_templates_read_the_same_in_parse_workers(monkeypatch):
    files = [InputFile(p.name, p.read_bytes()) for p in sorted((ROOT / "testdata" / "PF908").glob("*.yaml"))]
    files += [InputFile("api.yaml", NO_REQUESTS.encode())]

    def summary(jobs):
        monkeypatch.setenv("PODFIT_JOBS", str(jobs))
        res = load(files)
        return (
            res.files,
            [(f.rule, f.location.file, f.location.line, f.message) for f in res.findings],
            len(res.objects),
        )

    assert summary(1) == summary(3)


# ------------------------------------------------------------------ kustomize and Helm sources ---


def test_a_kustomization_beside_its_resources_is_an_error_and_the_resources_are_checked(tmp_path, monkeypatch):
    """A kustomization with fields podfit does not apply (here images:) cannot be checked without
    kustomize: an error, as a chart without helm is; its resources are checked all the same."""
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources: [api.yaml]\nimages: [{name: api, newTag: '2'}]\n")
    (base / "api.yaml").write_text(NO_REQUESTS)
    monkeypatch.chdir(tmp_path)
    report = json.loads(run(["check", "base", "--engine", "embedded", "--format", "json"]).output)
    (pf908,) = [f for f in report["findings"] if f["rule"] == "PF908"]
    assert (pf908["file"], pf908["severity"], pf908["line"]) == ("base/kustomization.yaml", "error", 1)
    assert pf908["message"].startswith(
        "kustomization base not built: kustomize is not installed (or PODFIT_KUSTOMIZE=off)"
    )
    assert "render it yourself: kustomize build base | podfit check -" in pf908["message"]
    assert any(f["file"] == "base/api.yaml" for f in report["findings"] if f["rule"] != "PF908")
    assert report["summary"]["objects"] == 1


@pytest.mark.parametrize(
    ("kustomization", "render_first"),
    [
        ("namespace: shop\ncommonLabels: {app: api}\nresources: [api.yaml, worker]\n", False),
        ("namespace: shop\nresources: [api.yaml, worker]\nnamePrefix: prod-\n", True),
        ("resources: [api.yaml, worker, ../shared]\n", True),
        ("resources: [api.yaml, worker, missing.yaml]\n", True),
        (
            "labels: [{pairs: {a: b}, fields: [{path: spec/x, kind: Deployment}]}]\nresources: [api.yaml, worker]\n",
            True,
        ),
    ],
    ids=["applied", "name-prefix", "outside-resource", "resource-not-given", "label-field-specs"],
)
def test_a_kustomization_podfit_applies_whole_needs_no_rendering(tmp_path, monkeypatch, kustomization, render_first):
    """Where podfit gives the resources everything the build would (namespace, labels, annotations;
    every resource among the inputs, a nested one applied too), there is nothing left to render."""
    base = tmp_path / "base"
    (base / "worker").mkdir(parents=True)
    (base / "kustomization.yaml").write_text(kustomization)
    (base / "api.yaml").write_text(NO_REQUESTS)
    (base / "worker" / "kustomization.yaml").write_text("resources: [w.yaml]\n")
    (base / "worker" / "w.yaml").write_text(NO_REQUESTS.replace("name: api", "name: worker"))
    monkeypatch.chdir(tmp_path)
    report = json.loads(run(["check", "base", "--engine", "embedded", "--format", "json"]).output)
    assert sorted(f["file"] for f in report["findings"] if f["rule"] == "PF908") == (
        ["base/kustomization.yaml"] if render_first else []
    )
    # the nested kustomization is applied in every case: not among the files left unread
    not_parsed = [r["path"] for r in report["files"] if r["status"] != "parsed"]
    assert "base/worker/kustomization.yaml" not in not_parsed
    assert ("base/kustomization.yaml" in not_parsed) == render_first


def test_only_a_kustomization_exits_2_naming_the_command(tmp_path, monkeypatch):
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yml").write_text("resources: [../base]\n")
    monkeypatch.chdir(tmp_path)
    r = run(["check", "overlay"])
    assert "  1  error    PF908  kustomization overlay not built: kustomize is not installed" in r.output
    # nothing checked: the finding fails the run; with it ignored, no object is no pass either
    assert r.exit_code == 1
    r = run(["check", "overlay", "--ignore", "PF908"])
    assert r.exit_code == 2
    assert _error_line(r) == (
        "podfit: error: no Kubernetes object found in overlay/kustomization.yml (a Kustomize kustomization: "
        "render first: kustomize build overlay | podfit check -); pass --allow-empty if that is expected"
    )
    assert run(["check", "overlay", "--ignore", "PF908", "--allow-empty"]).exit_code == 0


def test_a_chart_directory_gives_render_first_and_template_findings(tmp_path, monkeypatch):
    chart = tmp_path / "shop"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(
        "replicaCount: 2\nannotations: {note: '{{ .Release.Name }}'}\n"
    )  # tpl-style value
    (chart / "environments" / "prod").mkdir(parents=True)
    (chart / "environments" / "prod" / "values.yaml").write_text("replicaCount: 6\n")
    (chart / "templates" / "deployment.yaml").write_text((ROOT / "testdata/PF908/fail_chart_template.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    r = run(["check", "shop", "--format", "json", "--engine", "embedded"])
    assert r.exit_code == 1  # the template was not checked: an error
    got = sorted((f["file"], f["rule"], f["severity"]) for f in json.loads(r.output)["findings"])
    # Chart.yaml and the default values.yaml only repeat the template's render command: no finding
    # of their own; a values file of another variant says how to render that one
    assert got == [
        ("shop/environments/prod/values.yaml", "PF909", "info"),
        ("shop/templates/deployment.yaml", "PF908", "error"),
    ]
    messages = {f["file"]: f["message"] for f in json.loads(r.output)["findings"]}
    assert messages["shop/environments/prod/values.yaml"].endswith(
        "render first: helm template shop -f shop/environments/prod/values.yaml | podfit check -"
    )
    assert messages["shop/templates/deployment.yaml"].endswith("render it first: helm template shop | podfit check -")


def test_a_charts_templates_are_one_finding(tmp_path, monkeypatch):
    """Three unrendered templates of one chart: one PF908 at the first (by file), counting them and
    answering for the chart's files, so the text report lists none of them again."""
    chart = tmp_path / "shop"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 0.1.0\n")
    template = (ROOT / "testdata/PF908/fail_chart_template.yaml").read_text()
    for name in ("web.yaml", "api.yaml", "worker.yaml"):
        (chart / "templates" / name).write_text(template)
    monkeypatch.chdir(tmp_path)
    (f,) = json.loads(run(["check", "shop", "--format", "json", "--allow-empty"]).output)["findings"]
    assert (f["rule"], f["file"], f["line"]) == ("PF908", "shop/templates/api.yaml", 5)
    assert f["message"] == (
        'unrendered Helm chart shop: 3 templates not checked (this one from {{ include "shop.fullname" . }}); '
        "render it first: helm template shop | podfit check -"
    )
    assert f["details"]["files"] == [
        "shop/Chart.yaml",
        "shop/templates/api.yaml",
        "shop/templates/web.yaml",
        "shop/templates/worker.yaml",
    ]
    text = run(["check", "shop", "--allow-empty", "--no-color"]).output
    assert "skipped:" not in text and "4 files (4 skipped), 0 objects: 1 error" in text


def test_values_files_count_as_chart_files_only_in_a_chart():
    assert parse_file(InputFile("deploy/values.yaml", b"a: 1\n")).findings == ()
    assert [f.rule for f in parse_file(InputFile("charts/web/values-dev.yaml", b"a: 1\n")).findings] == ["PF909"]
    assert [f.rule for f in parse_file(InputFile("deploy/values.yaml", b"a: 1\n", chart="deploy")).findings] == [
        "PF909"
    ]


def test_discover_finds_files_named_kustomization(tmp_path):
    from podfit.loader import discover

    (tmp_path / "Kustomization").write_text("resources: []\n")
    (tmp_path / "README").write_text("no\n")
    assert [p.rsplit("/", 1)[1] for p in discover([str(tmp_path)])] == ["Kustomization"]


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "a: '" + "{{" * (8 * n) + "'\n",  # braces that never close, on one line
        lambda n: 'a: "' + "{{ x " * (4 * n) + '"\n',
        lambda n: "- " + "{{ .Values.x }} " * (20 * n) + "\n",
        lambda n: "".join(f'k{i}: "{{{{ v }}}}"\n' for i in range(n // 2)),
    ],
    ids=["unclosed", "unclosed-spaced", "many-actions", "many-lines"],
)
def test_template_detection_is_linear_in_hostile_input(make):
    """Four times the input costs about four times the CPU (a scan per action start would cost
    sixteen). CPU time of this process, the better of three runs: other processes do not count."""
    import time

    def cost(n: int) -> float:
        data = make(n).encode()
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            r = parse_file(InputFile("hostile.yaml", data))
            best = min(best, time.process_time() - t0)
        assert r.record.status in ("parsed", "skipped", "failed")
        return best

    small, large = cost(10_000), cost(40_000)
    assert large < 8 * small + 0.02, (small, large)


def test_kustomize_patches_are_render_first_not_objects(tmp_path, monkeypatch):
    """Files a kustomization names as patches are partial objects: no schema, request or packing
    finding on them; without kustomize, the kustomization's one PF908 answers for them (its
    ``files``), since they only repeat its build command."""
    monkeypatch.chdir(ROOT / "testdata" / "PF908")
    report = json.loads(run(["check", "fail_kustomize_patches", "--format", "json", "--allow-empty"]).output)
    (f,) = report["findings"]
    assert (f["rule"], f["file"]) == ("PF908", "fail_kustomize_patches/kustomization.yaml")
    assert f["details"]["files"] == [
        "fail_kustomize_patches/kustomization.yaml",
        "fail_kustomize_patches/replicas.yaml",
        "fail_kustomize_patches/resources.yaml",
    ]
    assert report["summary"]["objects"] == 0


def test_patches_named_only_in_commented_out_entries_are_patches_too(monkeypatch):
    """A scaffold's patches whose `#- path:` entries under `patches:` are commented out are partial
    objects all the same: named by the kustomization's PF908, no PF902 for the fields a patch
    leaves out; the resource beside them is still checked."""
    monkeypatch.chdir(ROOT / "testdata" / "PF908")
    d = "fail_kustomize_commented_patches"
    report = json.loads(run(["check", d, "--format", "json", "--allow-empty"]).output)
    (f,) = report["findings"]
    assert (f["rule"], f["file"]) == ("PF908", f"{d}/kustomization.yaml")
    assert f["details"]["files"] == [
        f"{d}/kustomization.yaml",
        f"{d}/patches/cainjection_in_widgets.yaml",
        f"{d}/patches/webhook_in_widgets.yaml",
    ]
    assert report["summary"]["objects"] == 1  # the CRD listed under resources


def test_chart_inputs_by_any_values_name_are_render_first_and_rendered_output_is_checked(tmp_path, monkeypatch):
    """Inside a chart (Chart.yaml above), values files by any name holding "values", everything
    under ci/ and Helm 2's requirements.yaml are chart inputs (PF909 at their first line); crds/
    are manifests; any other file of the chart (a committed `helm template` output, a test suite)
    is left out: helm deploys none of it."""
    chart = tmp_path / "redis"
    (chart / "ci").mkdir(parents=True)
    (chart / "crds").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v1\nname: redis\nversion: 1.0.0\n")
    (chart / "ci" / "prod-values.yaml").write_text(
        "# production\nreplicas: 3\nimage: {tag: '{{ .Chart.AppVersion }}'}\n"
    )
    (chart / "ci" / "lint.yaml").write_text("persistence: {enabled: false}\n")
    (chart / "values-ha.yaml").write_text("ha: true\n")
    (chart / "requirements.yaml").write_text("dependencies:\n  - name: common\n")
    (chart / "crds" / "crd.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.example.com}\n"
    )
    (chart / "upstream.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: redis}\ndata: {a: b}\n")
    monkeypatch.chdir(tmp_path)
    report = json.loads(run(["check", "redis", "--format", "json", "--engine", "embedded"]).output)
    assert [(f["rule"], f["file"], f["line"]) for f in report["findings"] if f["rule"] == "PF909"] == [
        ("PF909", "redis/Chart.yaml", 1),
        ("PF909", "redis/ci/lint.yaml", 1),
        ("PF909", "redis/ci/prod-values.yaml", 2),
        ("PF909", "redis/requirements.yaml", 1),
        ("PF909", "redis/values-ha.yaml", 1),
    ]
    assert report["summary"]["objects"] == 1  # the CRD
    assert "redis/upstream.yaml" not in [r["path"] for r in report["files"]]
    verbose = run(["check", "redis", "-v", "--engine", "embedded"]).output
    assert "left out: redis/upstream.yaml: a file of the Helm chart redis outside what helm renders" in verbose
    messages = {f["file"]: f["message"] for f in report["findings"]}
    assert messages["redis/ci/prod-values.yaml"] == (
        "Helm values of the chart redis, not a manifest: render first: "
        "helm template redis -f redis/ci/prod-values.yaml | podfit check -"
    )
    assert messages["redis/requirements.yaml"] == (
        "Helm dependencies of the chart redis, not a manifest: render first: helm template redis | podfit check -"
    )


def test_kustomizations_that_list_each_other_are_each_an_error(tmp_path, monkeypatch):
    """A cycle of bases has no outermost kustomization to answer for the others: without
    kustomize, each is a PF908 of its own, never folded into a finding that does not exist."""
    for name, other in (("a", "b"), ("b", "a")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kustomization.yaml").write_text(f"resources: [../{other}]\nnamePrefix: {name}-\n")
    monkeypatch.chdir(tmp_path)
    report = json.loads(run(["check", ".", "--format", "json", "--allow-empty"]).output)
    assert sorted((f["rule"], f["file"], f["severity"]) for f in report["findings"]) == [
        ("PF908", "a/kustomization.yaml", "error"),
        ("PF908", "b/kustomization.yaml", "error"),
    ]
