"""Selection as ruff does it (issue 38): --exclude / --extend-exclude globs, .gitignore respected,
hidden directories checked, -v naming every path left out and why, --select / --ignore by id, slug
or prefix (on the command line and in the config), suppression by slug, and the platform profile
and config never checked as manifests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.selection import pattern_matches

ROOT = Path(__file__).resolve().parents[1]

BEST_EFFORT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}{annotations}}}
spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      containers: [{{name: c, image: nginx}}]
"""


def deployment(name: str, annotations: str = "") -> str:
    return BEST_EFFORT.format(name=name, annotations=annotations)


# PF102 (no memory request) and PF201 (a Guaranteed pod's fractional CPU)
API = (
    deployment("api").replace("image: nginx}", "image: nginx, resources: {requests: {cpu: 100m}}}")
    + "---\n"
    + deployment("db").replace("image: nginx}", "image: pg, resources: {limits: {cpu: 1500m, memory: 1Gi}}}")
)


def run(args: list[str]) -> object:
    return CliRunner().invoke(main, args)


def checked(args: list[str]) -> list[str]:
    """The files a JSON report says were read."""
    r = run([*args, "--format", "json", "--allow-empty"])
    assert r.exit_code in (0, 1), r.output
    return sorted(Path(f["path"]).as_posix() for f in json.loads(r.output)["files"])


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository: a hidden Argo CD directory, a .gitignored build directory, .git, a platform."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "junk.yaml").write_text("kind: Junk\n")
    (tmp_path / ".argocd").mkdir()
    (tmp_path / ".argocd" / "app.yaml").write_text(deployment("hidden"))
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.yaml").write_text(deployment("built"))
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "web.yaml").write_text(deployment("web"))
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "api.yaml").write_text(API)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "platform.yaml").write_text((ROOT / "testdata/PF203/platform.yaml").read_text())
    return tmp_path


def test_hidden_directories_are_checked_and_gitignore_and_git_left_out(repo):
    assert checked(["check", "."]) == [".argocd/app.yaml", "k8s/web.yaml", "platform.yaml", "rules/api.yaml"]
    r = run(["check", ".", "--no-color"])
    assert r.exit_code == 1 and "Deployment hidden" in r.output  # the BestEffort pod under .argocd/ fails


def test_verbose_names_every_path_left_out_and_why(repo):
    out = run(["check", ".", "--platform", "platform.yaml", "-v", "--no-color"]).output
    assert "left out: ./.git/: exclude .git" in out
    assert "left out: ./build/: ignored by .gitignore: build/" in out
    assert "left out: ./platform.yaml: the platform profile (--platform), not a manifest" in out
    assert "left out" not in run(["check", ".", "--platform", "platform.yaml", "--no-color"]).output


def test_the_platform_and_config_files_are_never_checked(repo):
    (repo / ".podfit.yaml").write_text("fail-on: warning\n")
    assert checked(["check", ".", "--platform", "platform.yaml"]) == [
        ".argocd/app.yaml",
        "k8s/web.yaml",
        "rules/api.yaml",
    ]
    # named on the command line too: the profile is read once, as the profile
    assert checked(["check", "platform.yaml", "k8s", "--platform", "./platform.yaml"]) == ["k8s/web.yaml"]
    (repo / "podfit.yaml").write_text("fail-on: warning\n")
    assert "podfit.yaml" not in checked(["check", ".", "--config", "podfit.yaml"])


def test_gitignore_nested_negation_and_parents_up_to_the_repository_root(repo):
    (repo / "k8s" / ".gitignore").write_text("*.yaml\n!keep.yaml\n")
    (repo / "k8s" / "keep.yaml").write_text(deployment("keep"))
    assert checked(["check", "k8s"]) == ["k8s/keep.yaml"]
    (repo / ".gitignore").write_text("build/\nk8s/keep.yaml\n")  # a parent's pattern, the deeper one decides
    assert checked(["check", "k8s"]) == ["k8s/keep.yaml"]
    (repo / "k8s" / ".gitignore").unlink()
    assert checked(["check", "k8s"]) == ["k8s/web.yaml"]  # the root's .gitignore applies to k8s/


def test_gitignore_can_be_turned_off_and_does_not_leave_out_a_file_named(repo):
    assert "build/out.yaml" in checked(["check", ".", "--no-respect-gitignore"])
    assert checked(["check", "build/out.yaml"]) == ["build/out.yaml"]
    (repo / ".podfit.yaml").write_text("respect-gitignore: false\n")
    assert "build/out.yaml" in checked(["check", "."])
    assert "build/out.yaml" not in checked(["check", ".", "--respect-gitignore"])


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(repo):
    assert ".git/junk.yaml" in checked(["check", ".", "--exclude", ".argocd"])
    assert ".argocd/app.yaml" not in checked(["check", ".", "--exclude", ".argocd"])
    files = checked(["check", ".", "--extend-exclude", ".argocd,platform.yaml", "--extend-exclude", "rules"])
    assert files == ["k8s/web.yaml"]
    assert checked(["check", "k8s", ".argocd", "--extend-exclude", "k8s/*.yaml"]) == [".argocd/app.yaml"]
    # an exclude leaves out a file named on the command line too (pre-commit names the files)
    assert checked(["check", "k8s/web.yaml", "--extend-exclude", "k8s"]) == []


def test_config_exclude_extend_exclude_and_legacy_ignore_globs(repo):
    (repo / ".podfit.yaml").write_text("extend-exclude: [.argocd, rules/]\nignore: ['platform.*']\n")
    assert checked(["check", "."]) == ["k8s/web.yaml"]
    (repo / ".podfit.yaml").write_text("exclude: [k8s]\n")
    assert ".git/junk.yaml" in checked(["check", "."]) and "k8s/web.yaml" not in checked(["check", "."])


def rules_found(args: list[str]) -> set[str]:
    r = run([*args, "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return {f["rule"] for f in json.loads(r.output)["findings"]}


def test_select_and_ignore_by_id_slug_and_prefix(repo):
    everything = rules_found(["check", "k8s", "rules"])
    assert {"PF102", "PF105", "PF201"} <= everything
    assert rules_found(["check", "k8s", "rules", "--select", "best-effort-pod"]) == {"PF105"}
    assert rules_found(["check", "k8s", "rules", "--rule", "PF105"]) == {"PF105"}  # --rule: --select's old name
    assert rules_found(["check", "k8s", "rules", "--select", "PF1", "--ignore", "PF105,memory-request-missing"]) == (
        {r for r in everything if r.startswith("PF1")} - {"PF105", "PF102"}
    )
    assert rules_found(["check", "k8s", "rules", "--ignore", "PF1"]) == {
        r for r in everything if not r.startswith("PF1")
    }
    assert "PF201" in everything - {r for r in everything if r.startswith("PF1")}


def test_config_select_and_ignore_rules(repo):
    (repo / ".podfit.yaml").write_text("select: [PF1]\nignore: [best-effort-pod]\n")
    found = rules_found(["check", "k8s", "rules"])
    assert "PF102" in found and all(r.startswith("PF1") for r in found) and "PF105" not in found
    assert run(["check", "k8s", "--select", "PF105"]).exit_code == 2  # the config's ignore still holds: none left
    (repo / ".podfit.yaml").write_text("select: [PF105]\n")
    assert rules_found(["check", "rules", "--select", "PF201"]) == {"PF201"}  # --select replaces it


@pytest.mark.parametrize(
    ("args", "hint"),
    [(["--ignore", "no-such-rule"], "--ignore"), (["--select", "PF999"], "--select"), (["--rule", "x"], "--select")],
)
def test_unknown_rule_is_a_usage_error_naming_the_option(repo, args, hint):
    r = run(["check", "k8s", *args])
    assert r.exit_code == 2 and hint in r.output and "unknown rule" in r.output


def test_no_rule_left_to_run_is_a_usage_error(repo):
    r = run(["check", "k8s", "--ignore", "ALL"])
    assert r.exit_code == 2 and "--ignore" in r.output and "no rule is left to run" in r.output
    (repo / ".podfit.yaml").write_text("ignore: [PF1]\n")
    r = run(["check", "k8s", "--select", "PF105"])
    assert r.exit_code == 2 and "--select" in r.output


def test_config_ignore_of_an_unknown_rule_id_is_an_error(repo):
    (repo / ".podfit.yaml").write_text("ignore: [PF999]\n")
    r = run(["check", "k8s"])
    assert r.exit_code == 2 and ".podfit.yaml:1: ignore: unknown rule 'PF999'" in r.output


def test_suppression_by_slug(repo):
    (repo / "k8s" / "web.yaml").write_text(
        deployment("web", ", annotations: {ignore.podfit.io/best-effort-pod: 'batch job, no SLO'}")
    )
    r = run(["check", "k8s", "--format", "json"])
    report = json.loads(r.output)
    assert "PF105" not in {f["rule"] for f in report["findings"]} and report["summary"]["suppressed"] == 1
    (repo / "k8s" / "web.yaml").write_text(deployment("web", ", annotations: {ignore.podfit.io/no-such-slug: why}"))
    found = json.loads(run(["check", "k8s", "--format", "json"]).output)["findings"]
    assert [f["message"] for f in found if f["rule"] == "PF904"] == ["suppression names unknown rule NO-SUCH-SLUG"]
    (repo / "k8s" / "web.yaml").write_text(deployment("web", ", annotations: {ignore.podfit.io/best-effort-pod: ''}"))
    found = json.loads(run(["check", "k8s", "--format", "json"]).output)["findings"]
    pf904 = [f for f in found if f["rule"] == "PF904"]
    assert [f["message"] for f in pf904] == ["suppression of PF105 has no reason"] and pf904[0]["line"] == 3
    # a typo in the rule id suppresses nothing: that is what to say, with or without a reason
    (repo / "k8s" / "web.yaml").write_text(deployment("web", ", annotations: {ignore.podfit.io/PF111x: ''}"))
    found = json.loads(run(["check", "k8s", "--format", "json"]).output)["findings"]
    assert [f["message"] for f in found if f["rule"] == "PF904"] == ["suppression names unknown rule PF111X"]


def test_pack_and_fix_take_the_same_path_options(repo):
    r = run(["pack", ".", "--pool", "best-effort-xlarge=2", "--format", "json", "--extend-exclude", ".argocd,rules"])
    assert r.exit_code in (0, 1), r.output
    assert {p["name"].split("/")[-1] for p in json.loads(r.output)["pods"]} == {"web"}
    r = run(["fix", ".", "--default-cpu", "100m", "--default-memory", "64Mi", "--extend-exclude", ".argocd"])
    assert "k8s/web.yaml" in r.output and ".argocd" not in r.output
    r = run(["fix", ".", "--select", "PF105,PF101", "--ignore", "PF105", "--default-cpu", "100m"])
    assert r.exit_code in (0, 1), r.output
    args = ["fix", ".", "--default-cpu", "100m", "--default-memory", "64Mi", "--extend-exclude", ".argocd"]
    both = run([*args, "--select", "PF105,PF102"]).stdout
    assert "k8s/web.yaml" in both and "rules/api.yaml" in both
    one = run([*args, "--select", "PF105,PF102", "--ignore", "best-effort-pod"]).stdout
    assert "k8s/web.yaml" not in one and "rules/api.yaml" in one
    r = run(["fix", ".", "--select", "PF105", "--ignore", "best-effort-pod"])
    assert r.exit_code == 2 and "--ignore" in r.output and "no rule with a fix is left" in r.output


@pytest.mark.parametrize(
    ("pattern", "path", "expect"),
    [
        (".git", "repo/.git/x.yaml", True),
        ("*.json", "a/b/c.json", True),
        ("*.json", "a/b/c.yaml", False),
        ("k8s/*.yaml", "k8s/a.yaml", True),
        ("k8s/*.yaml", "k8s/sub/a.yaml", False),
        ("k8s/**/*.yaml", "k8s/sub/a.yaml", True),
        ("charts", "./charts/x/templates/a.yaml", True),
        ("./k8s/", "k8s/a.yaml", True),
        ("node_modules", "app/node_modules_extra/a.yaml", False),
    ],
)
def test_pattern_matches(pattern, path, expect):
    assert pattern_matches(pattern, path) is expect


def test_pattern_relative_to_the_config_directory(tmp_path):
    base = tmp_path / "proj"
    assert pattern_matches("deploy/prod", str(base / "deploy/prod/a.yaml"), str(base))
    assert not pattern_matches("deploy/prod", str(base / "deploy/staging/a.yaml"), str(base))
    assert os.path.isabs(str(base))
