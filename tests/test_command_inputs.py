"""Every command that reads manifests reads them as `podfit check` does: one option vocabulary
(--platform, --config, --select/--ignore, --exclude/--extend-exclude, --respect-gitignore, the
config found in the current directory) and charts and kustomizations rendered in place, with what
each command reports about them at the template's file and line; `fix` never writes rendered
output."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from conftest import tool
from podfit.cli import main
from podfit.words import LINE_LIMIT

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


# ------------------------------------------------------------- charts rendered in place ---


def chart_repo(tmp_path: Path, monkeypatch) -> Path:
    """The chart of tests/test_render.py beside a plain manifest with a request above its limit."""
    repo = tmp_path / "repo"
    shutil.copytree(CHART, repo)
    (repo / "plain.yaml").write_text(
        DEPLOYMENT.format(name="plain")
        .replace("requests: {cpu: 1500m, memory: 256Mi}", "requests: {cpu: 500m, memory: 512Mi}")
        .replace("limits: {cpu: 1500m, memory: 256Mi}", "limits: {cpu: 1, memory: 256Mi}")
    )
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PODFIT_HELM", HELM or "/nonexistent/helm")
    return repo


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@needs_helm
def test_fix_renders_a_chart_and_never_writes_its_output(tmp_path, monkeypatch):
    repo = chart_repo(tmp_path, monkeypatch)
    before = snapshot(repo)
    code, out, err = run("fix", ".", "--write", "--default-cpu", "100m", "--default-memory", "64Mi")
    assert code == 1, err  # the chart's findings have no fix fix can make
    after = snapshot(repo)
    assert {k for k in after if after[k] != before.get(k)} == {"plain.yaml"}  # the plain manifest only
    assert "requests: {cpu: 500m, memory: 256Mi}" in after["plain.yaml"].decode()
    assert all(len(line) <= LINE_LIMIT for line in err.splitlines())
    lines = err.replace("\n    ", " ").splitlines()  # each entry on one line again
    # the memory request set through values.yaml: the values key and its line, and the value to set
    assert (
        "shop/templates/deployment.yaml:25: PF103 Deployment release-name-shop: no fix: rendered by "
        "`helm template shop`, whose output fix never writes; the fix belongs in the chart's values, key "
        "resources.requests.memory (shop/values.yaml:23): set requests.memory to 128Mi"
    ) in lines
    # the sidecar's resources written in the template itself: its line there
    assert any(
        line.startswith("shop/templates/deployment.yaml:29: PF102 Deployment release-name-shop: no fix: rendered")
        and line.endswith(
            "the fix belongs in the chart's template (shop/templates/deployment.yaml:29): set requests.memory to 64Mi"
        )
        for line in lines
    ), err
    assert lines[-1] == "1 change made in 1 file; 2 findings without a safe fix"


@needs_helm
def test_fix_diff_of_a_chart_alone_proposes_nothing(tmp_path, monkeypatch):
    repo = chart_repo(tmp_path, monkeypatch)
    (repo / "plain.yaml").unlink()
    code, out, err = run("fix", "shop", "--select", "PF103")
    assert code == 1 and out == ""
    assert err.splitlines()[-1] == "0 changes proposed in 0 files; 1 finding without a safe fix"
    assert "key resources.requests.memory (shop/values.yaml:23)" in err


@needs_helm
def test_fix_kustomize_overlay_takes_no_chart_template_as_a_resource(tmp_path, monkeypatch):
    repo = chart_repo(tmp_path, monkeypatch)
    code, _, err = run("fix", ".", "--kustomize", "overlay", "--select", "PF103")
    assert code == 1, err
    kustomization = (repo / "overlay" / "kustomization.yaml").read_text()
    assert "plain.yaml" in kustomization and "templates" not in kustomization


def test_fix_without_helm_says_the_chart_is_not_checked(tmp_path, monkeypatch):
    repo = chart_repo(tmp_path, monkeypatch)
    monkeypatch.setenv("PODFIT_HELM", str(tmp_path / "no-helm"))
    before = snapshot(repo)
    code, out, err = run("fix", ".", "--select", "PF103")
    assert code == 1  # the chart was not checked, so not fixed: never a success
    assert "plain.yaml" in out and "shop/" not in out  # the plain manifest's change; no template touched
    assert "podfit: shop/Chart.yaml: left alone: PF908 Helm chart shop not checked: helm is not installed" in err
    assert err.splitlines()[-1] == "1 change proposed in 1 file; 1 file left alone"
    code, _, err = run("fix", ".", "--select", "PF103", "--ignore", "PF908")  # the user's choice
    assert code == 0 and "PF908" not in err
    assert snapshot(repo) == before


@needs_helm
def test_pack_and_vsphere_render_a_chart_and_name_the_template_line(tmp_path, monkeypatch):
    chart_repo(tmp_path, monkeypatch)
    code, out, err = run("vsphere", "crx", "shop", "--platform", str(VSPHERE), "--format", "json")
    assert code == 0, err
    (pod,) = json.loads(out)["pods"]
    assert (pod["name"], pod["file"], pod["line"]) == ("release-name-shop", "shop/templates/deployment.yaml", 1)
    code, out, err = run("pack", "shop", "--pool", "best-effort-xlarge=1", "--format", "json")
    assert code == 0, err
    assert [p["name"] for p in json.loads(out)["pods"]] == ["Deployment/release-name-shop"]


def test_pack_and_vsphere_without_helm_report_pf908_never_a_fit(tmp_path, monkeypatch):
    chart_repo(tmp_path, monkeypatch)
    monkeypatch.setenv("PODFIT_HELM", str(tmp_path / "no-helm"))
    code, _, err = run("vsphere", "crx", "shop", "--platform", str(VSPHERE))
    assert code == 2 and "shop/Chart.yaml:1: PF908: Helm chart shop not checked: helm is not installed" in err
    code, _, err = run("pack", "shop", "--pool", "best-effort-xlarge=1")
    assert "PF908" in err and "helm is not installed" in err


@needs_helm
def test_pack_and_vsphere_problems_on_rendered_text_are_at_the_template_line(tmp_path, monkeypatch):
    """A stand-in helm prints a document with a duplicate key: PF905 at the template's line (as check)."""
    repo = chart_repo(tmp_path, monkeypatch)
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(
        "---\n# Source: shop/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n"
        "  name: shop\n  name: shop-again\nspec:\n  ports: [{port: 80}]\n"
    )
    fake = tmp_path / "helm"
    fake.write_text(f"#!/bin/sh\ncat {rendered}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PODFIT_HELM", str(fake))
    _, out, _ = run("check", "shop", "--format", "json")
    (pf905,) = [f for f in json.loads(out)["findings"] if f["rule"] == "PF905"]
    where = f"{pf905['file']}:{pf905['line']}: PF905"
    assert pf905["file"] == "shop/templates/service.yaml"
    code, _, err = run("pack", "shop", "plain.yaml", "--pool", "best-effort-xlarge=1")
    assert f"podfit: {where}" in err
    code, out, err = run("vsphere", "crx", "shop", "plain.yaml", "--platform", str(VSPHERE), "--format", "json")
    assert any(p.startswith(where) for p in json.loads(out)["input_problems"]), out
    assert repo.exists()


# --------------------------------------------------------- lines of at most 160 characters ---

TEXT_RUNS = {
    "check": ["check", "testdata", "--no-color"],
    "fix": ["fix", *(f"testdata/{d}" for d in ("PF101", "PF105", "PF201", "PF301", "PF604", "examples"))]
    + ["--default-cpu", "100m", "--default-memory", "64Mi"],
    "pack": ["pack", "testdata", "--pool", "best-effort-xlarge=20", "--time-budget", "0"],
    "vsphere crx": ["vsphere", "crx", "testdata", "--platform", str(VSPHERE)],
    "vsphere capacity": ["vsphere", "capacity", "testdata", "--platform", str(VSPHERE), "--time-budget", "1s"],
    "throttle": ["throttle", "--limit", "1500m", "--cpus", "4", "--seconds", "1"],
}
# the exit status each run gives over the fixtures (1: findings, inputs not read, or no proven fit)
TEXT_EXIT = {"check": 1, "fix": 1, "pack": 1, "vsphere crx": 0, "vsphere capacity": 0, "throttle": 0}


@pytest.mark.parametrize("name", sorted(TEXT_RUNS))
def test_text_output_lines_are_at_most_160_characters(name, monkeypatch):
    """Over every fixture: a finding's line in check (the rest in -v and JSON); every line of the
    other commands' text, on standard output and standard error, a longer entry going on below
    its first line, indented (nothing of it cut)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PODFIT_KUSTOMIZE", "off")  # the fixtures' kustomizations are read as files
    r = CliRunner().invoke(main, TEXT_RUNS[name])
    # an exception podfit does not handle is exit 1 in CliRunner too: only a SystemExit is the command's
    assert r.exit_code == TEXT_EXIT[name] and isinstance(r.exception, (SystemExit, type(None))), r.exception
    lines = (r.stdout + r.stderr).splitlines()
    assert len(lines) > 10, r.output
    if name == "check":
        lines = [line for line in lines if re.match(r"\s+\d+\s+(error|warning|info)\s+PF\d+", line)]
        assert len(lines) > 100
    long = [line for line in lines if len(line) > LINE_LIMIT]
    assert not long, long[:3]


def test_wrap_line_keeps_every_word_and_the_entry_margin():
    from podfit.words import wrap_line, wrap_text

    text = "  podfit: a.yaml:1: PF908: " + " ".join(f"word{i}" for i in range(80))
    wrapped = wrap_line(text)
    first, *rest = wrapped.split("\n")
    assert len(first) <= LINE_LIMIT and first.startswith("  podfit:") and rest
    assert all(line.startswith("      word") and len(line) <= LINE_LIMIT for line in rest)
    assert " ".join(wrapped.split()) == " ".join(text.split())
    assert wrap_line("short") == "short"
    assert wrap_text("a\n" + text + "\nb\n") == "a\n" + wrapped + "\nb\n"


# ----------------------------------------------------------------------- counted nouns ---


def test_throttle_counts_one_thread_one_cpu_and_one_period_in_the_singular():
    code, out, _ = run("throttle", "--limit", "500m", "--cpus", "1", "--threads", "1", "--seconds", "0.1")
    assert code == 0
    assert "1 request thread on 1 CPU," in out and "1 threads" not in out and "1 CPUs" not in out
    code, out, _ = run("throttle", "--limit", "1", "--cpus", "1", "--threads", "1", "--cpu-manager")
    assert code == 0 and out.startswith("CPU limit 1, 1 thread on 1 CPU: ") and "gets 1 exclusive CPU and" in out
    code, _, err = run("throttle", "--limit", "2", "--cpus", "1", "--cpu-manager")
    assert code == 2 and "2 exclusive CPUs do not fit 1 CPU" in err


def test_pack_of_no_object_is_never_a_fit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.yaml").write_text("# nothing here\n")
    code, out, err = run("pack", "empty.yaml", "--pool", "best-effort-xlarge=1")
    assert code == 2 and out == ""
    assert "no Kubernetes object found in empty.yaml" in err and "nothing to pack" in err
