"""Baselines (issue 38): --write-baseline writes the findings with fingerprints that survive moved
lines and renamed files; --baseline reports and fails only on findings not in it, counts the rest,
and SARIF marks each result new or unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from podfit.baseline import message_key
from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = json.loads((ROOT / "schemas" / "sarif-2.1.0.json").read_text())
REPORT_SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())

GUARANTEED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: shop}}
spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      containers: [{{name: app, image: nginx, resources: {{limits: {{cpu: {cpu}, memory: 1Gi}}}}}}]
"""


def manifest(name: str = "api", cpu: str = "1500m") -> str:
    return GUARANTEED.format(name=name, cpu=cpu)


def run(args: list[str]):
    """The run; its .stdout is the report alone, .output has the errors too."""
    return CliRunner().invoke(main, args)


def findings(args: list[str]) -> list[dict]:
    r = run([*args, "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["findings"]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "api.yaml").write_text(manifest())
    return tmp_path


def test_a_baselined_run_passes_and_says_how_many(repo):
    before = findings(["check", "k8s"])
    assert [f["rule"] for f in before] == ["PF201"]
    r = run(["check", "k8s", "--write-baseline", "baseline.json"])
    assert r.exit_code == 0  # the findings written are accepted
    r = run(["check", "k8s", "--baseline", "baseline.json", "--no-color"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == "1 file, 1 object: no findings (1 baselined in baseline.json)"
    report = json.loads(run(["check", "k8s", "--baseline", "baseline.json", "--format", "json"]).stdout)
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(report)
    assert report["findings"] == [] and report["summary"]["baselined"] == 1
    assert "baselined" not in json.loads(run(["check", "k8s", "--format", "json"]).stdout)["summary"]


def test_fingerprints_survive_moved_lines_and_renamed_files(repo):
    run(["check", "k8s", "--write-baseline", "baseline.json"])
    (repo / "k8s" / "api.yaml").unlink()
    (repo / "deploy").mkdir()
    (repo / "deploy" / "renamed.yml").write_text("# moved\n\n---\n" + manifest())
    r = run(["check", "deploy", "--baseline", "baseline.json", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]["baselined"] == 1


def test_only_new_findings_are_reported_and_fail(repo):
    run(["check", "k8s", "--write-baseline", "baseline.json"])
    (repo / "k8s" / "web.yaml").write_text(manifest("web"))  # another object
    r = run(["check", "k8s", "--baseline", "baseline.json", "--format", "json", "--fail-on", "warning"])
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert [(f["rule"], f["object"]["name"]) for f in report["findings"]] == [("PF201", "web")]
    assert report["summary"]["baselined"] == 1
    # a changed fact (another CPU amount) is another finding
    (repo / "k8s" / "web.yaml").unlink()
    (repo / "k8s" / "api.yaml").write_text(manifest(cpu="1700m"))
    assert [f["message"] for f in findings(["check", "k8s", "--baseline", "baseline.json"])][0].count("1700m") == 1


def test_each_entry_accepts_one_finding(repo):
    (repo / "k8s" / "copy.yaml").write_text(manifest())  # the same finding twice (and a PF910 note)
    run(["check", "k8s/api.yaml", "--write-baseline", "baseline.json"])
    left = findings(["check", "k8s", "--baseline", "baseline.json"])
    assert sorted(f["rule"] for f in left) == ["PF201", "PF910"]


def test_the_file_is_sorted_and_deterministic(repo):
    (repo / "k8s" / "web.yaml").write_text(manifest("web", "2500m") + "---\n" + manifest("db", "3500m"))
    run(["check", "k8s", "--write-baseline", "a.json"])
    run(["check", "k8s", "--write-baseline", "b.json"])
    text = (repo / "a.json").read_text()
    assert text == (repo / "b.json").read_text()
    doc = json.loads(text)
    assert doc["podfit-baseline"] == 1 and len(doc["findings"]) == 3
    prints = [e["fingerprint"] for e in doc["findings"]]
    assert prints == sorted(prints) and len(set(prints)) == 3
    assert all(set(e) == {"fingerprint", "rule", "object", "container", "message"} for e in doc["findings"])
    assert '"line"' not in text and "k8s/" not in text


def test_sarif_marks_results_new_or_unchanged(repo):
    run(["check", "k8s", "--write-baseline", "baseline.json"])
    (repo / "k8s" / "web.yaml").write_text(manifest("web"))
    log = json.loads(run(["check", "k8s", "--baseline", "baseline.json", "--format", "sarif"]).stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    states = {r["locations"][0]["logicalLocations"][0]["name"]: r["baselineState"] for r in log["runs"][0]["results"]}
    assert states == {"Deployment shop/web container app": "new", "Deployment shop/api container app": "unchanged"}
    unchanged = [r for r in log["runs"][0]["results"] if r["baselineState"] == "unchanged"]
    assert unchanged[0]["suppressions"][0]["kind"] == "external"
    plain = json.loads(run(["check", "k8s", "--format", "sarif"]).stdout)
    assert all("baselineState" not in r for r in plain["runs"][0]["results"])


def test_the_baseline_in_the_checked_tree_is_no_input_and_can_be_updated(repo):
    run(["check", ".", "--write-baseline", "k8s/baseline.json"])
    r = run(["check", ".", "--baseline", "k8s/baseline.json", "--write-baseline", "k8s/baseline.json", "-v"])
    assert r.exit_code == 0, r.output
    assert "left out: ./k8s/baseline.json: the baseline, not a manifest" in r.stdout
    assert json.loads((repo / "k8s/baseline.json").read_text())["findings"][0]["rule"] == "PF201"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("not json", "not JSON"),
        ('{"findings": []}', "not a podfit baseline"),
        ('{"podfit-baseline": 1, "findings": [{"fingerprint": "x"}]}', "findings[0]: no fingerprint"),
        ('{"podfit-baseline": 1, "findings": {}}', '"findings" is not a list'),
    ],
)
def test_a_bad_baseline_is_exit_2_naming_it(repo, content, why):
    (repo / "b.json").write_text(content)
    r = run(["check", "k8s", "--baseline", "b.json"])
    assert r.exit_code == 2 and f"baseline b.json: {why}" in r.output


def test_writing_the_baseline_over_another_file_or_the_output_is_refused(repo):
    r = run(["check", "k8s", "--write-baseline", "k8s/api.yaml"])  # a manifest, not a baseline
    assert r.exit_code == 2 and "--write-baseline k8s/api.yaml exists and is not a podfit baseline" in r.output
    assert (repo / "k8s" / "api.yaml").read_text() == manifest()
    (repo / "p.yaml").write_text((ROOT / "testdata/PF203/platform.yaml").read_text())
    r = run(["check", "k8s", "--platform", "p.yaml", "--write-baseline", "p.yaml"])
    assert r.exit_code == 2 and "not a podfit baseline" in r.output
    r = run(["check", "k8s", "-o", "out.json", "--write-baseline", "out.json"])
    assert r.exit_code == 2 and "--write-baseline" in r.output and not (repo / "out.json").exists()
    assert run(["check", "k8s", "--write-baseline", "b.json"]).exit_code == 0
    written = (repo / "b.json").read_text()
    (repo / "k8s" / "web.yaml").write_text(manifest("web"))  # a second finding: the file must change
    assert run(["check", "k8s", "--write-baseline", "b.json"]).exit_code == 0  # a baseline is replaced
    replaced = json.loads((repo / "b.json").read_text())
    assert len(json.loads(written)["findings"]) == 1 and len(replaced["findings"]) == 2


def test_message_key_drops_paths_and_lines():
    assert message_key("declared in deploy/a.yaml:12 and b.yml") == "declared in <file> and <file>"
    assert message_key("see line 14 of x", ["x"]) == "see line <n> of x"
    assert message_key("in ./k8s/web.yaml", ["./k8s/web.yaml"]) == "in <file>"
    assert message_key("CPU limit 1500m on 16-CPU nodes") == "CPU limit 1500m on 16-CPU nodes"
