"""CI-facing report formats (sarif, junit, github) and --format auto, through the real CLI."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from podfit.catalogue import load_catalogue
from podfit.cli import main
from podfit.formats import renderers
from podfit.formats.github import escape_data, escape_property

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = json.loads((ROOT / "schemas" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
RULES = ["--rule", "PF901", "--rule", "PF903"]  # Python rules: no Rego engine needed

BAD_QTY = """\
apiVersion: v1
kind: Pod
metadata:
  name: q
spec:
  containers:
    - name: a
      resources:
        requests: {cpu: 2cores, memory: 1Gi}
"""
GOOD = """\
apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  containers:
    - name: a
      resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1, memory: 1Gi}}
"""
BROKEN = "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A small repo: nested dir, a name with ':' and ',' (escaping), a clean file, a broken one."""
    (tmp_path / "k8s" / "apps").mkdir(parents=True)
    (tmp_path / "k8s" / "apps" / "pod, v1: odd.yaml").write_text(BAD_QTY)
    (tmp_path / "k8s" / "good.yaml").write_text(GOOD)
    (tmp_path / "k8s" / "broken.yaml").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(args, env=None, input=None):
    return CliRunner().invoke(main, args, env=env, input=input, catch_exceptions=False)


def json_findings(args):
    return json.loads(run([*args, "--format", "json"]).output)["findings"]


def test_format_choices_include_new_renderers_and_auto():
    assert {"sarif", "junit", "github", "text", "json"} <= set(renderers())
    r = run(["check", "--help"])
    for name in ("sarif", "junit", "github", "auto"):
        assert name in r.output


def test_sarif_validates_against_official_schema_and_mirrors_findings(tree):
    r = run(["check", "k8s", *RULES, "--format", "sarif"])
    assert r.exit_code == 1
    log = json.loads(r.output)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    cat = load_catalogue()
    assert [d["id"] for d in rules] == sorted(cat)
    for d in rules:
        rule = cat[d["id"]]
        assert d["name"] == rule.slug
        assert d["shortDescription"]["text"] == rule.title
        assert d["fullDescription"]["text"] == rule.summary
        assert rule.fix in d["help"]["text"] and d["help"]["markdown"].startswith(f"# {rule.id}")
        assert d["helpUri"].endswith(f"#{rule.id.lower()}-{rule.slug}")
        assert (
            d["defaultConfiguration"]["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[rule.severity]
        )
    expected = json_findings(["check", "k8s", *RULES])
    got = run_["results"]
    assert len(got) == len(expected) >= 2
    for res, f in zip(got, expected, strict=True):
        assert res["ruleId"] == f["rule"]
        assert rules[res["ruleIndex"]]["id"] == f["rule"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["region"]["startLine"] == f["line"] >= 1
        # relative to the current directory, '/'-separated, percent-encoded
        assert not loc["artifactLocation"]["uri"].startswith("/")
        assert loc["artifactLocation"]["uri"].replace("%20", " ").replace("%2C", ",").replace("%3A", ":") == f[
            "file"
        ].replace("\\", "/")
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in got}
    assert "k8s/broken.yaml" in uris
    assert any(u.startswith("k8s/apps/") for u in uris)


def test_sarif_paths_from_absolute_input_are_made_relative(tree):
    log = json.loads(run(["check", str(tree / "k8s" / "broken.yaml"), *RULES, "--format", "sarif"]).output)
    assert (
        log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k8s/broken.yaml"
    )


def test_sarif_stdin_and_clean_run(tree):
    log = json.loads(run(["check", "-", *RULES, "--format", "sarif"], input=BROKEN).output)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "<stdin>"
    r = run(["check", "k8s/good.yaml", *RULES, "--format", "sarif"])
    assert r.exit_code == 0
    clean = json.loads(r.output)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(clean)
    assert clean["runs"][0]["results"] == []


def test_sarif_schema_rejects_a_broken_log(tree):
    """The shipped schema has teeth: a result without a message fails it."""
    log = json.loads(run(["check", "k8s", *RULES, "--format", "sarif"]).output)
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)


def test_junit_is_well_formed_and_counts_match(tree):
    r = run(["check", "k8s", *RULES, "--format", "junit"])
    assert r.exit_code == 1
    root = ET.fromstring(r.output)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"k8s/apps/pod, v1: odd.yaml", "k8s/broken.yaml", "k8s/good.yaml"}
    findings = json_findings(["check", "k8s", *RULES])
    failures = [tc for s in suites.values() for tc in s.findall("testcase") if tc.find("failure") is not None]
    assert int(root.get("failures")) == len(failures) == len({(f["file"], json.dumps(f["object"])) for f in findings})
    assert sum(int(s.get("tests")) for s in suites.values()) == int(root.get("tests"))
    good = suites["k8s/good.yaml"]
    assert good.get("failures") == "0" and len(good.findall("testcase")) == 1
    odd = suites["k8s/apps/pod, v1: odd.yaml"].find("testcase")
    assert odd.get("name") == "Pod q"
    failure = odd.find("failure")
    assert failure.get("type") == "error" and "PF903" in failure.get("message")
    assert "2cores" in failure.text
    for f in findings:
        assert any(f["rule"] in (tc.find("failure").text or "") for tc in failures)


def test_junit_escapes_markup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a&b<c>.yaml").write_text(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: "x"}\nspec:\n  containers:\n    - name: "<&>"\n      resources: {requests: {cpu: "1<2"}}\n'
    )
    root = ET.fromstring(run(["check", ".", *RULES, "--format", "junit"]).output)
    assert root.find("testsuite").get("name").endswith("a&b<c>.yaml")
    assert "1<2" in root.find("testsuite/testcase/failure").text


def parse_command(line):
    """Parse a workflow command back as the Actions runner does."""
    m = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert m, line

    def unesc(s: str) -> str:
        return s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")

    props = dict(p.split("=", 1) for p in m.group(2).split(","))
    return m.group(1), {k: unesc(v) for k, v in props.items()}, unesc(m.group(3))


def test_github_annotations_escape_and_round_trip(tree):
    r = run(["check", "k8s", *RULES, "--format", "github"])
    assert r.exit_code == 1
    lines = r.output.splitlines()
    findings = json_findings(["check", "k8s", *RULES])
    cmds = [parse_command(line) for line in lines if line.startswith("::")]
    assert len(cmds) == len(findings)
    cat = load_catalogue()
    for (kind, props, msg), f in zip(cmds, findings, strict=True):
        assert kind == {"error": "error", "warning": "warning", "info": "notice"}[f["severity"]]
        assert props["file"] == f["file"] and int(props["line"]) == f["line"]
        assert props["title"] == f"{f['rule']} {cat[f['rule']].slug}"
        assert f["message"] in msg and "\n" in msg  # message and fix on two lines, escaped as %0A
    assert any("," in p["file"] and ":" in p["file"] for _, p, _ in cmds)
    assert lines[-1].startswith("podfit: ")


def test_github_escaping_functions():
    assert escape_data("100%\r\nx:y,z") == "100%25%0D%0Ax:y,z"
    assert escape_property("100%\r\nx:y,z") == "100%25%0D%0Ax%3Ay%2Cz"


@pytest.mark.parametrize("env,expect_github", [({"GITHUB_ACTIONS": "true"}, True), ({"GITHUB_ACTIONS": ""}, False)])
def test_format_auto_follows_github_actions(tree, env, expect_github):
    r = run(["check", "k8s/broken.yaml", *RULES, "--format", "auto"], env=env)
    assert r.exit_code == 1
    assert r.output.startswith("::error file=k8s/broken.yaml,line=3,title=PF901 yaml-invalid::") is expect_github
    if not expect_github:
        assert "PF901" in r.output and "::error" not in r.output


def test_full_run_on_examples_all_formats_agree(monkeypatch):
    """Every rule (Rego through the embedded engine, Python rules): the three CI formats report the
    same findings as the JSON report."""
    monkeypatch.chdir(ROOT)
    args = ["check", "testdata/examples", "--platform", "testdata/platforms/study-4-hosts.yaml"]
    expected = json.loads(run([*args, "--format", "json"]).output)["findings"]
    assert any(f["rule"] == "PF101" for f in expected)
    log = json.loads(run([*args, "--format", "sarif"]).output)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    got = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"].get("region", {}).get("startLine", 0),
        )
        for r in log["runs"][0]["results"]
    ]
    assert got == [(f["rule"], f["file"], f["line"]) for f in expected]
    gh = [
        parse_command(line) for line in run([*args, "--format", "github"]).output.splitlines() if line.startswith("::")
    ]
    assert [(p["title"].split()[0], p["file"], int(p.get("line", 0))) for _, p, _ in gh] == got
    root = ET.fromstring(run([*args, "--format", "junit"]).output)
    failed = "\n".join(f.text or "" for f in root.iter("failure"))
    below = "\n".join(f.text or "" for f in root.iter("system-out"))
    for f in expected:  # failures are the findings at or above --fail-on (error); the others are listed
        line = f"{f['file']}:{f['line']}: {f['severity']} {f['rule']}"
        assert (line in failed, line in below) == ((True, False) if f["severity"] == "error" else (False, True))


JUNIT_XSD = ROOT / "tests" / "data" / "junit-10.xsd"  # the Jenkins xUnit plugin's schema (MIT)
MIXED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          resources:
            requests: {cpu: 1500m, memory: 1Gi}
            limits: {cpu: 1500m, memory: 1Gi}
"""  # PF201 (warning): a Guaranteed pod with a fractional CPU


@pytest.mark.parametrize("fail_on", ["error", "warning", "never"])
def test_junit_validates_against_junit_10_xsd_and_fails_only_at_fail_on(tree, fail_on):
    import xmlschema

    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    (tree / "k8s" / "mixed.yaml").write_text(MIXED)
    (tree / "k8s" / "empty.yaml").write_text("")
    args = ["check", "k8s", "--rule", "PF901", "--rule", "PF903", "--rule", "PF201", "--fail-on", fail_on]
    out = run([*args, "--format", "junit"]).output
    schema.validate(out)
    root = ET.fromstring(out)
    assert root.get("skipped") is None  # not an attribute of <testsuites> in junit-10.xsd
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    mixed = suites["k8s/mixed.yaml"].find("testcase")
    assert mixed.get("name") == "Deployment web"
    failure, skipped = mixed.find("failure"), mixed.find("skipped")
    if fail_on == "warning":
        assert failure is not None and failure.get("type") == "warning" and skipped is None
        assert "PF201" in failure.text and mixed.find("system-out") is None
    else:  # below the threshold: listed, not failed
        assert failure is None and skipped.get("message") == f"below --fail-on {fail_on}: 1 finding: PF201"
        assert "PF201" in mixed.find("system-out").text
    broken = suites["k8s/broken.yaml"].find("testcase")
    assert (broken.find("failure") is not None) is (fail_on != "never")
    assert [c.get("name") for c in suites["k8s/good.yaml"]] == ["k8s/good.yaml (1 object)"]  # a clean file passes
    assert int(root.get("failures")) == sum(1 for _ in root.iter("failure"))
    for s in suites.values():
        assert int(s.get("skipped")) == len(s.findall("testcase/skipped"))
        assert int(s.get("failures")) == len(s.findall("testcase/failure"))


def test_junit_schema_has_teeth():
    """The schema rejects what the renderer once wrote: ``skipped`` on <testsuites>."""
    import xmlschema

    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    bad = '<testsuites name="podfit" tests="1" failures="0" errors="0" skipped="0"></testsuites>'
    assert not schema.is_valid(bad)
    assert schema.is_valid(bad.replace(' skipped="0"', ""))


def _sarif_multitool() -> str | None:
    import os
    import shutil

    bundled = ROOT / ".cache/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
    for candidate in (os.environ.get("PODFIT_SARIF_MULTITOOL"), str(bundled), shutil.which("sarif-multitool")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def test_sarif_passes_the_sarif_multitool(tmp_path, monkeypatch):
    """Microsoft's SARIF Multitool finds no error or warning in a full report (its notes are style
    advice: camelCase rule names, message arguments). `make sarif-multitool` installs it."""
    import subprocess

    tool = _sarif_multitool()
    if tool is None:
        pytest.skip("SARIF Multitool not installed: `make sarif-multitool` (npm) or PODFIT_SARIF_MULTITOOL=PATH")
    monkeypatch.chdir(ROOT)
    log = tmp_path / "podfit.sarif"
    args = ["check", "testdata/examples", "--platform", "testdata/platforms/study-4-hosts.yaml", "--format", "sarif"]
    assert run([*args, "-o", str(log)]).exit_code == 1
    assert json.loads(log.read_text())["runs"][0]["results"]
    out = tmp_path / "validation.sarif"
    env = {"PATH": "/usr/bin:/bin", "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1", "HOME": str(tmp_path)}
    options: dict = {"capture_output": True, "text": True, "timeout": 300, "env": env}
    p = subprocess.run([tool, "validate", str(log), "-o", str(out), "--level", "Error;Warning"], **options)
    assert p.returncode == 0, p.stdout + p.stderr
    problems = json.loads(out.read_text())["runs"][0]["results"]
    assert problems == [], problems
    # the validator does judge: a result whose rule index points past the rules is an error (SARIF1009)
    broken = json.loads(log.read_text())
    broken["runs"][0]["results"][0]["ruleIndex"] = len(broken["runs"][0]["tool"]["driver"]["rules"]) + 5
    log.write_text(json.dumps(broken))
    out = tmp_path / "validation-of-broken.sarif"
    subprocess.run([tool, "validate", str(log), "-o", str(out), "--level", "Error;Warning"], **options)
    assert [r["ruleId"] for r in json.loads(out.read_text())["runs"][0]["results"]] == ["SARIF1009"]


def test_sarif_has_one_rule_id_per_rule(tree):
    log = json.loads(run(["check", "k8s", *RULES, "--format", "sarif"]).output)
    ids = [d["id"] for d in log["runs"][0]["tool"]["driver"]["rules"]]
    names = [d["name"] for d in log["runs"][0]["tool"]["driver"]["rules"]]
    assert len(ids) == len(set(ids)) == len(set(names)) == len(load_catalogue())


def test_format_names_are_the_renderer_modules():
    from podfit.cli import FORMATS
    from podfit.formats import NAMES, renderer

    assert set(NAMES) == set(FORMATS) == set(renderers())
    assert all(renderer(n) is renderers()[n] for n in NAMES)


def test_junit_names_a_rule_once_when_its_message_opens_with_the_slug():
    args = ["check", str(ROOT / "testdata/PF604/fail_twelve_nodes.yaml"), "--format", "junit", "--fail-on", "info"]
    r = CliRunner().invoke(main, args)
    lines = [x for e in ET.fromstring(r.output).iter("failure") for x in (e.text or "").splitlines() if " PF604" in x]
    assert lines and all("right-size: right-size" not in x for x in lines)
    assert all(re.search(r":9: info PF604: right-size: [0-9]", x) for x in lines)
