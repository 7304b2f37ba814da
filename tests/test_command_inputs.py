"""Every command that reads manifests reads them as `podfit check` does: one option vocabulary
(--platform, --config, --select/--ignore, --exclude/--extend-exclude, --respect-gitignore, the
config found in the current directory) and charts and kustomizations rendered in place, with what
each command reports about them at the template's file and line; `fix` never writes rendered
output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from conftest import tool
from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
VSPHERE = ROOT / "testdata" / "platforms" / "vsphere-pods.yaml"
TKC = ROOT / "testdata" / "examples" / "tkg-cluster.yaml"
CHART = ROOT / "testdata" / "render" / "chart"
HELM = tool("helm")
needs_helm = pytest.mark.skipif(HELM is None, reason="needs helm (make tools builds it into .tools/bin)")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: ns}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
        - name: c
          image: x
          resources:
            requests: {{cpu: 1500m, memory: 256Mi}}
            limits: {{cpu: 1500m, memory: 256Mi}}
"""

# every command that reads manifests, and the rule-selection verb of its help (None: no rules)
READERS = {
    "check": "run",
    "fix": "fix",
    "pack": "report",
    "vsphere crx": "report",
    "vsphere capacity": "report",
    "platform-data": None,
}
PATH_OPTIONS = ("--exclude", "--extend-exclude", "--respect-gitignore")
RULE_OPTIONS = ("--select", "--ignore")


def options(path: str) -> dict[str, click.Option]:
    ctx = click.Context(main)
    cmd: click.Command | None = main
    for name in path.split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.get_command(ctx, name)
    assert cmd is not None
    return {o.opts[0]: o for o in cmd.params if isinstance(o, click.Option)}


@pytest.mark.parametrize("path", sorted(READERS))
def test_every_manifest_reader_has_the_selection_options_of_check(path):
    mine, theirs = options(path), options("check")
    names = PATH_OPTIONS + (RULE_OPTIONS if READERS[path] else ())
    for name in ("--platform", "--config", *PATH_OPTIONS):
        assert (mine[name].name, mine[name].opts, mine[name].secondary_opts, mine[name].help) == (
            theirs[name].name,
            theirs[name].opts,
            theirs[name].secondary_opts,
            theirs[name].help,
        ), (path, name)
    for name in names:
        assert name in mine, (path, name)
        assert mine[name].multiple == theirs[name].multiple
    if READERS[path]:
        assert mine["--select"].opts == ["--select", "--rule"]
        assert f"{READERS[path].capitalize()} only this rule" in (mine["--select"].help or "")
    else:
        assert not set(RULE_OPTIONS) & set(mine)


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    """app.yaml, and under skip/ another Deployment, a cluster manifest and a file that is no YAML."""
    (tmp_path / "skip").mkdir()
    (tmp_path / "app.yaml").write_text(DEPLOYMENT.format(name="app"))
    (tmp_path / "skip" / "other.yaml").write_text(DEPLOYMENT.format(name="skipped"))
    (tmp_path / "skip" / "broken.yaml").write_text("a: [\n")
    shutil.copy(TKC, tmp_path / "skip" / "cluster.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def crx_names(*extra: str) -> set[str]:
    code, out, err = run("vsphere", "crx", ".", "--platform", str(VSPHERE), "--format", "json", *extra)
    assert code == 0, err
    return {p["name"] for p in json.loads(out)["pods"]}


SELECTIONS = [
    ("--exclude", "skip"),
    ("--extend-exclude", "skip/**"),
]


@pytest.mark.parametrize(("option", "glob"), SELECTIONS)
def test_vsphere_crx_leaves_out_what_the_selection_excludes(tree, option, glob):
    assert crx_names() == {"app", "skipped"}
    assert crx_names(option, glob) == {"app"}


def test_vsphere_reads_the_config_found_in_the_current_directory(tree):
    (tree / ".podfit.yaml").write_text("extend-exclude: [skip]\n")
    assert crx_names() == {"app"}
    code, _, err = run("vsphere", "crx", ".", "--platform", str(VSPHERE), "--config", "missing.yaml")
    assert code == 2 and "missing.yaml" in err


def test_vsphere_respects_gitignore_unless_told_not_to(tree):
    (tree / ".gitignore").write_text("skip/\n")
    assert crx_names() == {"app"}
    assert crx_names("--no-respect-gitignore") == {"app", "skipped"}


@pytest.mark.parametrize("sub", ["crx", "capacity"])
def test_vsphere_input_problems_follow_the_rule_selection(tree, sub):
    def problems(*extra: str) -> list[str]:
        code, out, err = run("vsphere", sub, ".", "--platform", str(VSPHERE), "--format", "json", *extra)
        assert code == 0, err
        return json.loads(out)["input_problems"]

    assert any("PF901" in p for p in problems())
    assert not any("PF901" in p for p in problems("--ignore", "PF901"))
    assert not any("PF901" in p for p in problems("--ignore", "yaml-invalid"))  # by slug too
    code, _, err = run("vsphere", sub, ".", "--platform", str(VSPHERE), "--ignore", "PF999")
    assert code == 2 and "--ignore" in err and "unknown rule 'PF999'" in err


def test_vsphere_capacity_leaves_out_what_the_selection_excludes(tree):
    def vms(*extra: str) -> set[str]:
        code, out, err = run("vsphere", "capacity", ".", "--platform", str(VSPHERE), "--format", "json", *extra)
        assert code == 0, err
        return {v["name"] for v in json.loads(out)["vms"]}

    everything = vms()
    pools = {v for v in everything if v.startswith("shop-cluster/")}  # the cluster under skip/
    assert pools and "Deployment ns/app" in everything
    assert vms("--exclude", "skip") == everything - pools


def test_vsphere_never_reads_the_platform_profile_in_the_tree_as_a_manifest(tree):
    shutil.copy(VSPHERE, tree / "platform.yaml")
    code, out, err = run("vsphere", "crx", ".", "--platform", "platform.yaml", "--format", "json")
    assert code == 0, err
    assert not any("platform.yaml" in p for p in json.loads(out)["input_problems"])


def pack_pods(*extra: str) -> tuple[set[str], str]:
    code, out, err = run("pack", ".", "--pool", "best-effort-xlarge=2", "--format", "json", *extra)
    assert code == 0, err
    return {p["name"] for p in json.loads(out)["pods"]}, err


def test_pack_selection_of_paths_and_of_the_problems_it_reports(tree):
    pods, err = pack_pods()
    assert pods == {"Deployment/ns/app", "Deployment/ns/skipped"} and "PF901" in err
    pods, err = pack_pods("--exclude", "skip")
    assert pods == {"Deployment/ns/app"} and "PF901" not in err
    pods, err = pack_pods("--ignore", "PF9")
    assert pods == {"Deployment/ns/app", "Deployment/ns/skipped"} and "PF901" not in err
    (tree / ".podfit.yaml").write_text("extend-exclude: [skip]\n")
    pods, _ = pack_pods()
    assert pods == {"Deployment/ns/app"}


def test_platform_data_leaves_out_what_the_selection_excludes(tree):
    def pools(*extra: str) -> list:
        code, out, err = run("platform-data", ".", *extra)
        assert code == 0, err
        return json.loads(out)["podfit"]["platform"]["node_pools"]

    assert pools()  # the cluster manifest under skip/ declares node pools
    assert pools("--exclude", "skip") == []
    assert pools("--extend-exclude", "skip/cluster.yaml") == []


def test_fix_leaves_out_what_the_selection_excludes(tree):
    for name in ("app.yaml", "skip/other.yaml"):
        (tree / name).write_text((tree / name).read_text().replace("cpu: 1500m", "cpu: 1300m"))
    code, out, err = run("fix", ".", "--select", "PF201")
    assert code == 0, err
    assert "app.yaml" in out and "skip/other.yaml" in out
    code, out, err = run("fix", ".", "--select", "PF201", "--exclude", "skip")
    assert code == 0, err
    assert "app.yaml" in out and "skip/other.yaml" not in out
