"""Charts and overlays checked in place (podfit.render): `podfit check DIR` renders a Helm chart with
the real helm and builds a kustomization with the real kustomize (the pinned ones `make tools`
builds), and each finding names its source: the template's file and line, the values key and its
line; the resource or patch file and line of a kustomization. Without helm, one PF908 per chart.
The tools' bounds (time, output, environment, nothing left running) with stand-in executables."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import tool
from podfit.cli import main
from podfit.render import RenderError, outline, run_tool

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "testdata" / "render"
HELM = tool("helm")
KUSTOMIZE = tool("kustomize")
needs_helm = pytest.mark.skipif(HELM is None, reason="needs helm (make tools builds it into .tools/bin)")
needs_kustomize = pytest.mark.skipif(KUSTOMIZE is None, reason="needs kustomize (make tools)")


def check(monkeypatch, cwd: Path, *args: str, helm: str | None = HELM, kustomize: str | None = KUSTOMIZE):
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PODFIT_HELM", helm or "/nonexistent/helm")
    monkeypatch.setenv("PODFIT_KUSTOMIZE", kustomize or "off")
    r = CliRunner().invoke(main, ["check", *args, "--format", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.output)


def brief(report) -> list[tuple]:
    return [(f["rule"], f["file"], f["line"], f.get("container")) for f in report["findings"]]


def copy_chart(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "chart", tmp_path / "repo")
    return tmp_path / "repo"


# ------------------------------------------------------------------------------------ helm ---


@needs_helm
def test_chart_findings_name_template_line_and_values_key(monkeypatch):
    code, report = check(monkeypatch, FIXTURES / "chart", "shop")
    assert code == 1
    assert brief(report) == [
        # the memory request comes from values.yaml through `toYaml .Values.resources` at line 25
        ("PF103", "shop/templates/deployment.yaml", 25, "shop"),
        # the sidecar's resources are written in the template itself (its `resources:` line)
        ("PF102", "shop/templates/deployment.yaml", 29, "log-shipper"),
    ]
    pf103, pf102 = report["findings"]
    source = pf103["details"]["rendered"]
    assert source["by"] == "helm template shop"
    assert (source["values"], source["values-file"], source["values-line"]) == (
        "resources.requests.memory",
        "shop/values.yaml",
        23,
    )
    assert "values: resources.requests.memory (shop/values.yaml:23)" in pf103["message"]
    assert "values" not in pf102["details"]["rendered"]
    assert report["summary"]["objects"] == 2  # the Deployment and the Service, nothing read raw


@needs_helm
def test_chart_files_given_one_by_one_render_the_chart_once(monkeypatch):
    """What pre-commit passes: the chart's changed files, not its directory."""
    files = ["shop/Chart.yaml", "shop/values.yaml", "shop/templates/deployment.yaml", "shop/templates/service.yaml"]
    code, report = check(monkeypatch, FIXTURES / "chart", *files)
    assert code == 1
    assert [f[0] for f in brief(report)] == ["PF103", "PF102"]
    assert report["summary"]["objects"] == 2


@needs_helm
def test_values_files_and_kube_version_from_the_config(monkeypatch, tmp_path):
    repo = copy_chart(tmp_path)
    (repo / ".podfit.yaml").write_text("helm:\n  values:\n    shop: [values-prod.yaml]\n")
    code, report = check(monkeypatch, repo, "shop")
    # values-prod.yaml sets requests equal to limits: no PF103; the template's sidecar keeps its PF102
    assert brief(report) == [("PF102", "shop/templates/deployment.yaml", 29, "log-shipper")]
    assert report["findings"][0]["details"]["rendered"]["by"] == "helm template shop -f shop/values-prod.yaml"

    chart = repo / "shop" / "Chart.yaml"
    chart.write_text(chart.read_text() + 'kubeVersion: ">=1.40.0-0"\n')
    code, report = check(monkeypatch, repo, "shop")
    (pf908,) = report["findings"]
    assert (pf908["rule"], pf908["file"], code) == ("PF908", "shop/Chart.yaml", 1)
    assert "requires Kubernetes >=1.40.0-0 (kubeVersion in Chart.yaml)" in pf908["message"]
    (repo / ".podfit.yaml").write_text('helm:\n  kube-version: "1.40"\n')
    code, report = check(monkeypatch, repo, "shop")
    assert [f[0] for f in brief(report)] == ["PF103", "PF102"]


@needs_helm
def test_vendored_dependency_is_rendered_with_its_parent(monkeypatch, tmp_path):
    repo = copy_chart(tmp_path)
    sub = repo / "shop" / "charts" / "cache"
    (sub / "templates").mkdir(parents=True)
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: cache\nversion: 1.0.0\n")
    (sub / "values.yaml").write_text("memory: 64Mi\n")
    (sub / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-cache\nspec:\n  containers:\n"
        "    - name: redis\n      image: redis:7.4\n      resources:\n        limits:\n"
        "          memory: {{ .Values.memory }}\n"
    )
    chart = repo / "shop" / "Chart.yaml"
    chart.write_text(chart.read_text() + "dependencies:\n  - name: cache\n    version: 1.0.0\n")
    code, report = check(monkeypatch, repo, "shop")
    assert ("PF101", "shop/charts/cache/templates/pod.yaml", 9, "redis") in brief(report)
    assert report["summary"]["objects"] == 3


@needs_helm
def test_files_of_a_chart_outside_what_helm_renders_are_left_out(monkeypatch, tmp_path):
    """helm-unittest suites, test values and examples are no manifests: no finding, -v says why."""
    repo = copy_chart(tmp_path)
    shop = repo / "shop"
    (shop / "tests" / "values").mkdir(parents=True)
    (shop / "tests" / "deployment_test.yaml").write_text(
        "suite: deployment\ntemplates: [templates/deployment.yaml]\ntests:\n  - it: sets the image\n"
        "    set:\n      image: {{ .Values.image }}\n    asserts:\n      - isKind: {of: Deployment}\n"
    )
    (shop / "tests" / "values" / "big.yaml").write_text("resources: {}\n")
    (shop / "examples").mkdir()
    (shop / "examples" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: example\nspec:\n  containers:\n  - name: a\n    image: busybox:1.37\n"
    )
    code, report = check(monkeypatch, repo, "shop")
    assert brief(report) == [
        ("PF103", "shop/templates/deployment.yaml", 25, "shop"),
        ("PF102", "shop/templates/deployment.yaml", 29, "log-shipper"),
    ]
    assert report["summary"]["objects"] == 2
    # the hook's way: the changed files one by one, a test suite among them
    code, report = check(
        monkeypatch, repo, "shop/tests/deployment_test.yaml", "shop/examples/pod.yaml", "--allow-empty"
    )
    assert (code, report["findings"]) == (0, [])
    r = CliRunner().invoke(main, ["check", "shop", "-v"], catch_exceptions=False)
    for name in ("tests/deployment_test.yaml", "tests/values/big.yaml", "examples/pod.yaml"):
        assert f"left out: shop/{name}: a file of the Helm chart shop outside what helm renders" in r.output


@needs_helm
def test_charts_render_for_the_release_podfit_targets(monkeypatch, tmp_path):
    """helm built from source assumes Kubernetes 1.20: a chart declaring kubeVersion >=1.23 (KEDA's,
    Traefik's) would never render, and .Capabilities would describe a cluster nobody runs."""
    from podfit.kubeversions import LATEST

    repo = copy_chart(tmp_path)
    chart = repo / "shop" / "Chart.yaml"
    chart.write_text(chart.read_text() + 'kubeVersion: ">=1.23.0-0"\n')
    (repo / "shop" / "templates" / "version.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: version\n"
        "data:\n  minor: {{ .Capabilities.KubeVersion.Minor | quote }}\n"
        '{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}\n  monitoring: "yes"\n{{- end }}\n'
    )
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PODFIT_HELM", str(HELM))
    r = CliRunner().invoke(main, ["check", "shop", "--format", "json"], catch_exceptions=False)
    report = json.loads(r.output)
    assert [f["rule"] for f in report["findings"]] == ["PF103", "PF102"]
    assert report["summary"]["objects"] == 3

    from podfit.config import Config
    from podfit.render import render_inputs, render_options

    def rendered(config_text: str) -> str:
        (repo / ".podfit.yaml").write_text(config_text)
        from podfit.config import parse_config_text

        config = parse_config_text(config_text, str(repo / ".podfit.yaml")) if config_text else Config()
        out = render_inputs(["shop/templates/version.yaml"], render_options(config))
        return b"".join(f.data for f in out.files if f.path.endswith("version.yaml")).decode()

    assert f'minor: "{LATEST[1]}"' in rendered("") and "monitoring" not in rendered("")
    text = rendered('helm:\n  kube-version: "1.31"\n  api-versions: [monitoring.coreos.com/v1]\n')
    assert 'minor: "31"' in text and 'monitoring: "yes"' in text
    # PF902's release is the target too
    assert 'minor: "30"' in rendered('thresholds:\n  PF902: {kubernetes-version: "1.30"}\n')

    chart.write_text(chart.read_text().replace(">=1.23.0-0", "<1.25.0-0"))
    (repo / ".podfit.yaml").unlink()
    r = CliRunner().invoke(main, ["check", "shop", "--format", "json"], catch_exceptions=False)
    (f,) = json.loads(r.output)["findings"]
    assert (f["rule"], f["file"], r.exit_code) == ("PF908", "shop/Chart.yaml", 1)
    assert (
        f"requires Kubernetes <1.25.0-0 (kubeVersion in Chart.yaml) and podfit renders for {LATEST[0]}.{LATEST[1]}.0"
        in f["message"]
    )
    assert "helm.kube-version" in f["message"]


@needs_helm
def test_dependencies_not_vendored_name_helm_dependency_build(monkeypatch, tmp_path):
    repo = copy_chart(tmp_path)
    chart = repo / "shop" / "Chart.yaml"
    with _listener() as hits:
        chart.write_text(
            chart.read_text()
            + f"dependencies:\n  - name: redis\n    version: 1.0.0\n    repository: http://127.0.0.1:{hits.port}/charts\n"
        )
        code, report = check(monkeypatch, repo, "shop")
    (f,) = report["findings"]
    assert (f["rule"], f["file"], code) == ("PF908", "shop/Chart.yaml", 1)
    assert "redis are not vendored under shop/charts/ (helm needs every dependency" in f["message"]
    assert "`helm dependency build shop`" in f["message"]
    assert hits.count == 0


def test_without_helm_one_pf908_per_chart_never_a_pass(monkeypatch, tmp_path):
    repo = copy_chart(tmp_path)
    shutil.copytree(repo / "shop", repo / "other")
    (repo / "other" / "Chart.yaml").write_text("apiVersion: v2\nname: other\nversion: 0.1.0\n")
    code, report = check(monkeypatch, repo, ".", helm=None)
    assert code == 1
    assert brief(report) == [("PF908", "other/Chart.yaml", 1, None), ("PF908", "shop/Chart.yaml", 1, None)]
    message = report["findings"][1]["message"]
    assert "helm is not installed" in message and "helm.sh/helm/v3/cmd/helm@" in message
    assert "PODFIT_HELM" in message and "ignore: ['shop/**']" in message


@needs_helm
def test_a_chart_rendering_nothing_says_so(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PODFIT_HELM", str(HELM))
    r = CliRunner().invoke(main, ["check", "testdata/PF909/fail_helm_chart"], catch_exceptions=False)
    assert r.exit_code == 2  # nothing checked is no pass
    assert "PF909  Helm chart testdata/PF909/fail_helm_chart renders no Kubernetes object" in r.output


def test_a_failing_render_is_pf908_with_the_tools_words(monkeypatch, tmp_path):
    repo = copy_chart(tmp_path)
    (repo / "shop" / "templates" / "broken.yaml").write_text('{{ fail "set image.digest" }}\n')
    code, report = check(
        monkeypatch, repo, "shop", helm=HELM or _fake(tmp_path, "echo 'Error: set image.digest' >&2; exit 1")
    )
    (f,) = report["findings"]
    assert (f["rule"], f["file"], code) == ("PF908", "shop/Chart.yaml", 1)
    assert "set image.digest" in f["message"]
    if HELM is not None:  # helm's advice to its own user is replaced by podfit's
        assert "--debug" not in f["message"] and "helm.values" in f["message"]


# ------------------------------------------------------------------------------- kustomize ---


@needs_kustomize
def test_overlay_is_built_and_findings_name_base_and_patch_lines(monkeypatch):
    code, report = check(monkeypatch, FIXTURES / "kustomize", "overlays/prod")
    assert code == 1
    assert brief(report) == [
        ("PF101", "base/deployment.yaml", 18, "metrics"),
        ("PF102", "base/deployment.yaml", 18, "metrics"),
        # the overlay's patch sets the request above the limit: its line, not the base's
        ("PF103", "overlays/prod/api-resources.yaml", 13, "api"),
    ]
    assert {f["object"]["name"] for f in report["findings"]} == {"prod-api"}
    assert {f["object"]["namespace"] for f in report["findings"]} == {"shop-prod"}
    assert report["findings"][0]["details"]["rendered"]["by"] == "kustomize build overlays/prod"


@needs_kustomize
def test_a_tree_builds_the_overlay_not_its_base_again(monkeypatch):
    code, report = check(monkeypatch, FIXTURES / "kustomize", ".")
    assert report["summary"]["objects"] == 2  # prod-api and its Service, the base's files not read raw
    assert [f[0] for f in brief(report)] == ["PF101", "PF102", "PF103"]


@needs_kustomize
def test_two_overlays_of_one_base_each_checked_as_built(monkeypatch):
    """testdata/repos/kustomize-app: prod patches the worker's resources in and deletes the debug
    toolbox, staging does neither; generated objects (a configMapGenerator's) are filed under the
    kustomization that makes them, with no PF909."""
    code, report = check(monkeypatch, ROOT / "testdata" / "repos" / "kustomize-app", "base", "overlays")
    found = [(f["rule"], f["file"], f["line"], f["object"]["namespace"]) for f in report["findings"]]
    assert found == [
        ("PF105", "base/debug-toolbox.yaml", 2, "storefront-staging"),
        ("PF105", "base/worker/deployment.yaml", 2, "storefront-staging"),
        ("PF201", "overlays/prod/web-resources.yaml", 10, "storefront-prod"),
    ]
    assert report["summary"]["objects"] == 11 and code == 1


def test_without_kustomize_a_kustomization_is_an_error_as_a_chart_without_helm_is(monkeypatch):
    code, report = check(monkeypatch, FIXTURES / "kustomize", "overlays/prod", "--allow-empty", kustomize="off")
    assert code == 1  # nothing checked is no pass
    (f,) = report["findings"]  # its patches are no manifests: this one finding answers for them
    assert (f["rule"], f["file"]) == ("PF908", "overlays/prod/kustomization.yaml")
    assert len(f["details"]["files"]) > 1
    assert "kustomize is not installed" in f["message"] and "sigs.k8s.io/kustomize/kustomize/v5@" in f["message"]
    assert "ignore: ['overlays/prod/**']" in f["message"]


class _Hits:
    def __init__(self, port: int) -> None:
        self.port = port
        self.count = 0


class _listener:
    """A TCP listener on the loopback address that counts the connections it is offered."""

    def __enter__(self) -> _Hits:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.hits = _Hits(self.sock.getsockname()[1])
        self.stop = threading.Event()

        def serve() -> None:
            while not self.stop.is_set():
                try:
                    conn, _ = self.sock.accept()
                except OSError:
                    continue
                self.hits.count += 1
                conn.close()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        return self.hits

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@needs_kustomize
def test_remote_bases_and_resources_are_never_fetched(monkeypatch, tmp_path):
    """A pull request's author chooses the URLs a kustomization names; checking it must reach none."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize", repo)
    with _listener() as hits:
        url = f"http://127.0.0.1:{hits.port}"
        (repo / "remote").mkdir()
        (repo / "remote" / "kustomization.yaml").write_text(
            "resources:\n"
            f"  - {url}/evil.yaml\n"
            f"  - https://127.0.0.1:{hits.port}/other.yaml\n"
            f"  - git::{url}/org/repo//deploy?ref=v1\n"
            f"  - 127.0.0.1:{hits.port}/org/repo/deploy\n"
            "  - ../base\n"
        )
        (repo / "nested").mkdir()
        (repo / "nested" / "kustomization.yaml").write_text("resources:\n  - ../remote\n")
        (repo / "component").mkdir()
        (repo / "component" / "kustomization.yaml").write_text(
            f"resources: [../base]\ncomponents:\n  - {url}/component.yaml\n"
        )
        code, report = check(monkeypatch, repo, "remote", "nested", "component", "--allow-empty")
        assert hits.count == 0
    found = sorted((f["rule"], f["file"], f["line"], f["details"]["remote"]) for f in report["findings"])
    assert found == sorted(
        [
            ("PF908", "component/kustomization.yaml", 3, f"{url}/component.yaml"),
            ("PF908", "remote/kustomization.yaml", 2, f"{url}/evil.yaml"),
            ("PF908", "remote/kustomization.yaml", 3, f"https://127.0.0.1:{hits.port}/other.yaml"),
            ("PF908", "remote/kustomization.yaml", 4, f"git::{url}/org/repo//deploy?ref=v1"),
            ("PF908", "remote/kustomization.yaml", 5, f"127.0.0.1:{hits.port}/org/repo/deploy"),
        ]
    )
    assert code == 1
    message = next(f["message"] for f in report["findings"] if f["file"] == "component/kustomization.yaml")
    assert "podfit fetches nothing" in message and "kustomize build component | podfit check -" in message
    # nested builds remote as its base: refused for remote's entries, each named where it is written
    assert {f["message"].split(":")[0] for f in report["findings"] if f["file"] == "remote/kustomization.yaml"} == {
        "kustomization nested not checked"
    }


def test_remote_entries_are_told_from_local_ones(tmp_path):
    from podfit.render import is_remote

    (tmp_path / "base").mkdir()
    (tmp_path / "example.com").mkdir()
    (tmp_path / "example.com" / "app").mkdir()
    for entry in (
        "https://x.io/a.yaml",
        "git@github.com:org/repo.git",
        "github.com/org/repo//base?ref=v1",
        "oci://registry/app",
        "ssh://git@host/repo",
        "example.org/org/repo//dir",
        "git::https://h/r",
    ):
        assert is_remote(entry, str(tmp_path)), entry
    for entry in ("base", "../base", "deploy.yaml", "example.com/app/", "./x.io/a"):
        assert not is_remote(entry, str(tmp_path)), entry


# ------------------------------------------------------------------------------ the bounds ---


def _fake(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-tool"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_tool_past_its_time_is_stopped_with_what_it_started(tmp_path):
    pids = tmp_path / "pids"
    script = _fake(tmp_path, f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; wait")
    with pytest.raises(RenderError, match="ran longer than 1 s"):
        run_tool([script], str(tmp_path), 1000, timeout=1)
    for pid in map(int, pids.read_text().split()):
        assert not _running(pid), f"process {pid} still running"


def _running(pid: int) -> bool:
    """Whether the process runs (an unreaped zombie, whose parent died, does not: it is over); a
    killed process may take a moment to be reaped on a loaded machine, so this waits up to 10 s."""
    for _ in range(500):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.02)
    return True


def test_a_tool_writing_too_much_is_refused(tmp_path):
    script = _fake(tmp_path, "yes apiVersion: v1 | head -c 100000")
    with pytest.raises(RenderError, match="wrote more than 1,000 bytes"):
        run_tool([script], str(tmp_path), 1000, timeout=30)


def test_a_tool_gets_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-helm")
    script = _fake(tmp_path, "env")
    env = dict(line.split("=", 1) for line in run_tool([script], str(tmp_path), 100_000, 30).decode().splitlines())
    assert "AWS_SECRET_ACCESS_KEY" not in env and env["HOME"] != os.environ.get("HOME")
    assert (
        set(env)
        <= {
            "HOME",
            "PATH",
            "LANG",
            "HELM_CACHE_HOME",
            "HELM_CONFIG_HOME",
            "HELM_DATA_HOME",
            "KUBECONFIG",
            "PWD",
            "SHLVL",
            "_",
        }
        | NETWORK_OFF
    )
    # no network: every proxy refuses, git takes local files only
    from podfit.render import NO_NETWORK_PROXY

    assert all(env[k] == NO_NETWORK_PROXY for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "https_proxy"))
    assert env["GIT_ALLOW_PROTOCOL"] == "file" and env["NO_PROXY"] == ""


NETWORK_OFF = {
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "GIT_ALLOW_PROTOCOL",
    "GIT_TERMINAL_PROMPT",
    "GIT_CONFIG_NOSYSTEM",
}


def test_rendered_text_is_parsed_as_files_are(monkeypatch, tmp_path):
    """A stand-in helm prints a document with a duplicate key: PF905 at the template's line."""
    repo = copy_chart(tmp_path)
    out = tmp_path / "rendered.yaml"
    out.write_text(
        "---\n# Source: shop/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n"
        "  name: release-name-shop\n  name: again\nspec:\n  ports:\n  - port: 80\n"
        "---\n# Source: shop/../../../outside.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "spec:\n  containers:\n  - name: a\n    image: busybox:1.37\n"
    )
    code, report = check(monkeypatch, repo, "shop", helm=_fake(tmp_path, f"cat {out}"))
    assert ("PF905", "shop/templates/service.yaml", 4, None) in brief(report)
    # a source outside the chart is none of its files: the chart's Chart.yaml stands for it
    assert ("PF105", "shop/Chart.yaml", 1, None) in brief(report)


def test_outline_follows_keys_lists_and_skips_actions():
    text = "a:\n  b:\n    {{- toYaml .Values.x | nindent 4 }}\n  c:\n  - d: 1\n    e: |\n      f: 2\n    g: 3\n"
    assert outline(text) == [
        ("a",),
        ("a", "b"),
        None,
        ("a", "c"),
        ("a", "c", "d"),
        ("a", "c", "e"),
        None,
        ("a", "c", "g"),
    ]


COLLECTOR = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: collector}
spec:
  selector: {matchLabels: {app: collector}}
  template:
    metadata: {labels: {app: collector}}
    spec:
      containers:
        - name: otel
          image: otel/opentelemetry-collector:0.110.0
"""


@needs_kustomize
def test_a_component_is_checked_where_kustomizations_list_it(monkeypatch, tmp_path):
    """A Kustomize Component (kind: Component) only patches the kustomizations that list it: built
    alone it fails (microservices-demo's components were each a false PF908 error). Listed by no
    kustomization among the inputs it is a PF909 note; its resource, built by two overlays that
    list it, is one finding at its source, not one per build."""
    repo = tmp_path / "repo"
    (repo / "components" / "ops").mkdir(parents=True)
    (repo / "components" / "lonely").mkdir(parents=True)
    (repo / "components" / "ops" / "collector.yaml").write_text(COLLECTOR)
    (repo / "components" / "ops" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [collector.yaml]\n"
    )
    (repo / "components" / "lonely" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
        "  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata: {name: nothing-here}\n"
    )
    for env in ("dev", "prod"):
        (repo / env).mkdir()
        (repo / env / "kustomization.yaml").write_text("components: [../components/ops]\n")
    code, report = check(monkeypatch, repo, ".", "--select", "PF105,PF908,PF909")
    rules = sorted((f["rule"], f["file"]) for f in report["findings"])
    assert ("PF909", "components/lonely/kustomization.yaml") in rules
    assert not [r for r in rules if r[0] == "PF908"], rules
    assert [r for r in rules if r[0] == "PF105"] == [("PF105", "components/ops/collector.yaml")]


@needs_helm
@pytest.mark.parametrize("plant", ["link-out", "fifo"])
def test_a_chart_with_a_link_out_or_a_pipe_is_not_given_to_helm(monkeypatch, tmp_path, plant):
    """helm follows a symbolic link wherever it leads (its content would reach the rendered text and
    the findings quoting it) and would wait on a named pipe: the chart is one PF908 naming the file,
    and the foreign file's content appears nowhere."""
    repo = copy_chart(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("root:$6$NOT-FOR-THE-REPORT:19000:0:99999:7:::\n")
    planted = repo / "shop" / "templates" / "planted.yaml"
    if plant == "link-out":
        planted.symlink_to(secret)
    else:
        os.mkfifo(planted)
    code, report = check(monkeypatch, repo, "shop")
    (f,) = [f for f in report["findings"] if f["rule"] == "PF908"]
    assert f["file"] == "shop/Chart.yaml" and "planted.yaml" in f["message"]
    assert "NOT-FOR-THE-REPORT" not in json.dumps(report)
    assert not [g for g in report["findings"] if g["rule"] not in ("PF908",)]


@needs_kustomize
def test_a_kustomization_listing_a_named_pipe_is_not_built(monkeypatch, tmp_path):
    """kustomize would wait on the pipe until its 120 s limit: one PF908 naming it, at once."""
    repo = tmp_path / "repo"
    (repo / "k").mkdir(parents=True)
    (repo / "k" / "a.yaml").write_text(COLLECTOR)
    os.mkfifo(repo / "k" / "pipe.yaml")
    (repo / "k" / "kustomization.yaml").write_text("resources: [a.yaml, pipe.yaml]\n")
    code, report = check(monkeypatch, repo, "k", "--select", "PF908")
    (f,) = report["findings"]
    assert f["file"] == "k/kustomization.yaml" and "pipe.yaml is a named pipe (FIFO)" in f["message"]


@needs_kustomize
def test_a_patch_named_bare_under_patches_is_a_patch_even_when_the_build_fails(monkeypatch, tmp_path):
    """`patches: [x.yaml]` (a form kustomize 5 refuses; BuoyantIO/emojivoto ships
    it): the build's failure is the one finding, and the patch, a Deployment without selector or
    template, is never read as a manifest (it was 2 PF902 per patched object)."""
    repo = tmp_path / "repo"
    (repo / "k").mkdir(parents=True)
    (repo / "k" / "a.yaml").write_text(COLLECTOR)
    (repo / "k" / "service-name.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: collector}\nspec:\n  serviceName: collector\n"
    )
    (repo / "k" / "kustomization.yaml").write_text("resources: [a.yaml]\npatches: [service-name.yaml]\n")
    code, report = check(monkeypatch, repo, "k")
    assert [(f["rule"], f["file"]) for f in report["findings"]] == [("PF908", "k/kustomization.yaml")]
    assert code == 1


def test_patch_files_of_a_kustomization():
    """Every way a kustomization names a patch file, each once, and nothing else."""
    from podfit.kustomize import patch_files

    doc = {
        "resources": ["r.yaml"],
        "patchesStrategicMerge": ["a.yaml"],
        "patches": ["b.yaml", {"path": "c.yaml", "target": {"kind": "Deployment"}}, {"patch": "inline"}],
        "patchesJson6902": [{"path": "d.yaml"}, "e.yaml"],
    }
    assert patch_files(doc) == ["a.yaml", "b.yaml", "c.yaml", "d.yaml"]
    assert patch_files({"patches": "not a list", "patchesStrategicMerge": {"a": 1}}) == []


@needs_kustomize
def test_a_workload_whose_kind_a_patch_changed_is_found_in_its_base(monkeypatch, tmp_path):
    """An overlay that patches /kind (emojivoto builds its Deployments as DaemonSets and Jobs) keeps
    its findings at the base's file and line, not on the kustomization without a line; a Service
    of the same name does not make the owner ambiguous."""
    repo = tmp_path / "repo"
    (repo / "base").mkdir(parents=True)
    (repo / "ds").mkdir()
    service = "---\napiVersion: v1\nkind: Service\nmetadata: {name: collector}\nspec: {ports: [{port: 80}]}\n"
    (repo / "base" / "collector.yaml").write_text(COLLECTOR + service)
    (repo / "base" / "kustomization.yaml").write_text("resources: [collector.yaml]\n")
    (repo / "ds" / "kind.yaml").write_text("- {op: replace, path: /kind, value: DaemonSet}\n")
    (repo / "ds" / "kustomization.yaml").write_text(
        "resources: [../base]\n"
        "patches:\n- path: kind.yaml\n  target: {group: apps, version: v1, kind: Deployment, name: collector}\n"
    )
    code, report = check(monkeypatch, repo, "ds", "--select", "PF105")
    assert [(f["rule"], f["file"], f["line"]) for f in report["findings"]] == [("PF105", "base/collector.yaml", 1)]
    assert report["findings"][0]["object"]["kind"] == "DaemonSet"


# ------------------------------------------------------------------- side by side, cached ---


def _logging_helm(tmp_path: Path, body: str = "") -> tuple[str, Path]:
    """The real helm behind a script that logs each run (the chart directory it was given)."""
    log = tmp_path / "helm-runs.log"
    script = tmp_path / "helm"
    script.write_text(f'#!/bin/sh\necho "$3" >> {log}\n{body}\nexec {HELM} "$@"\n')
    script.chmod(0o755)
    return str(script), log


def _rendered_once(monkeypatch, tmp_path):
    """The shop chart checked once through the logging helm, with a cache of its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = copy_chart(tmp_path)
    helm, log = _logging_helm(tmp_path)
    return repo, helm, log, check(monkeypatch, repo, "shop", helm=helm)


@needs_helm
def test_an_unchanged_chart_is_not_rendered_again(monkeypatch, tmp_path):
    repo, helm, log, first = _rendered_once(monkeypatch, tmp_path)
    assert check(monkeypatch, repo, "shop", helm=helm) == first
    assert len(log.read_text().splitlines()) == 1  # the second run read the cache
    entries = list((tmp_path / "cache" / "podfit" / "render").iterdir())
    assert len(entries) == 1 and entries[0].stat().st_mode & 0o777 == 0o600
    # any file of the chart changed: rendered again, and the new values decide the verdict
    values = repo / "shop" / "values.yaml"
    values.write_text(values.read_text().replace("256Mi", "64Mi"))
    code, report = check(monkeypatch, repo, "shop", helm=helm)
    assert "PF103" not in {f["rule"] for f in report["findings"]}
    assert len(log.read_text().splitlines()) == 2
    # another target release is another render
    (repo / ".podfit.yaml").write_text('helm:\n  kube-version: "1.31"\n')
    check(monkeypatch, repo, "shop", helm=helm)
    assert len(log.read_text().splitlines()) == 3


@needs_helm
def test_a_cache_entry_someone_else_could_write_is_not_read(monkeypatch, tmp_path):
    repo, helm, log, first = _rendered_once(monkeypatch, tmp_path)
    (entry,) = (tmp_path / "cache" / "podfit" / "render").iterdir()
    entry.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: planted}\n")
    entry.chmod(0o666)
    assert check(monkeypatch, repo, "shop", helm=helm) == first
    assert len(log.read_text().splitlines()) == 2


@needs_helm
def test_charts_render_side_by_side(monkeypatch, tmp_path):
    """The first chart's helm waits for the second's to start: run one after the other, it would
    wait until its render's time limit stops it (PF908); side by side both render, however slowly
    the machine starts them."""
    from podfit.render import RenderOptions, render_inputs

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = copy_chart(tmp_path)
    shutil.copytree(repo / "shop", repo / "zshop")
    marker = tmp_path / "second-started"
    wait = f'case "$3" in *zshop) touch {marker};; *) while [ ! -e {marker} ]; do sleep 0.1; done;; esac'
    helm, _ = _logging_helm(tmp_path, wait)
    monkeypatch.chdir(repo)
    out = render_inputs(["shop/Chart.yaml", "zshop/Chart.yaml"], RenderOptions(helm=helm, workers=2, timeout=60.0))
    assert out.findings == ()
    assert sorted({f.path.split("/")[0] for f in out.files}) == ["shop", "zshop"]


@needs_kustomize
def test_an_overlay_is_built_again_when_its_base_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize", repo)
    log = tmp_path / "runs.log"
    script = tmp_path / "kustomize"
    script.write_text(f'#!/bin/sh\necho run >> {log}\nexec {KUSTOMIZE} "$@"\n')
    script.chmod(0o755)
    first = check(monkeypatch, repo, "overlays/prod", kustomize=str(script))
    assert check(monkeypatch, repo, "overlays/prod", kustomize=str(script)) == first
    assert len(log.read_text().splitlines()) == 1
    base = next(p for p in sorted((repo / "base").iterdir()) if p.name != "kustomization.yaml")
    base.write_text(base.read_text() + "\n# edited\n")
    check(monkeypatch, repo, "overlays/prod", kustomize=str(script))
    assert len(log.read_text().splitlines()) == 2


@needs_kustomize
def test_one_path_form_for_plain_and_built_files(monkeypatch, tmp_path):
    """`check .` names a plain file as it names a kustomization's resource: k8s/x.yaml, never ./k8s/x.yaml."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize", repo)
    (repo / "k8s").mkdir()
    (repo / "k8s" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: busybox:1.37}]\n"
    )
    code, report = check(monkeypatch, repo, ".")
    files = {f["file"] for f in report["findings"]}
    assert "k8s/pod.yaml" in files and any(f.startswith("base/") for f in files)
    assert not any(f.startswith("./") for f in files)
    assert not any(r["path"].startswith("./") for r in report["files"])


def test_a_render_reading_a_huge_tree_is_not_cached(tmp_path):
    """Hashing every file a render may read is bounded: past 5,000 entries (directories count,
    empty ones too) the render runs every time instead."""
    from podfit.render import Job, _cache_key

    tool_path = _fake(tmp_path, "exit 0")
    small = tmp_path / "small"
    small.mkdir()
    (small / "kustomization.yaml").write_text("resources: []\n")
    job = Job((tool_path, "build", str(small)), str(small), (str(small),))
    assert _cache_key(job, 1000) is not None
    (small / "kustomization.yaml").write_text("resources: [a.yaml]\n")
    assert _cache_key(job, 1000) != _cache_key(Job(job.argv, job.cwd, ()), 1000)
    big = tmp_path / "big"
    for i in range(5001):
        (big / f"d{i}").mkdir(parents=True)
    assert _cache_key(Job((tool_path, "build", str(big)), str(big), (str(big),)), 1000) is None


@pytest.mark.parametrize(
    "kustomize", [pytest.param(KUSTOMIZE, marks=needs_kustomize), None], ids=["kustomize", "without"]
)
def test_a_chain_of_a_thousand_bases_is_walked_not_recursed(monkeypatch, tmp_path, kustomize):
    """Each kustomization the base of the next, deeper than Python's recursion limit: built (or,
    without kustomize, one PF908 for the outermost, its bases folded into it), never an internal
    error."""
    depth = 1050
    for i in range(depth):
        (tmp_path / f"k{i}").mkdir()
        (tmp_path / f"k{i}" / "kustomization.yaml").write_text(f"resources: [../k{i + 1}]\nnamePrefix: p-\n")
    (tmp_path / f"k{depth}").mkdir()
    (tmp_path / f"k{depth}" / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (tmp_path / f"k{depth}" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    code, report = check(monkeypatch, tmp_path, ".", "--allow-empty", kustomize=kustomize or "off")
    if kustomize is not None:
        assert (code, report["findings"], report["summary"]["objects"]) == (0, [], 1)
    else:
        (f,) = report["findings"]
        assert (f["rule"], f["file"], code) == ("PF908", "k0/kustomization.yaml", 1)
        assert len(f["details"]["files"]) == depth  # every base but the innermost, which applies whole


def test_remote_entries_are_placed_on_their_lines_in_one_pass(tmp_path):
    """20,000 remote entries (a hostile kustomization) are each placed on their line without a
    search of the file per entry; a flow list's entry on the line that holds it."""
    from podfit.render import remote_references

    k = tmp_path / "kustomization.yaml"
    k.write_text(
        "components: [https://a.example/c.yaml]\nresources:\n"
        + "".join(f"  - 'https://example.com/{i}.yaml'  # remote\n" for i in range(20000))
    )
    found = {r.entry: r.line for r in remote_references(str(k), 64 * 2**20)}
    assert len(found) == 20001 and found["https://a.example/c.yaml"] == 1
    assert all(found[f"https://example.com/{i}.yaml"] == i + 3 for i in range(20000))


def test_an_interrupted_run_of_renders_leaves_nothing_running(tmp_path, monkeypatch):
    """Ctrl-C while two renders run: both tools and what they started are stopped."""
    from podfit import render

    pids = tmp_path / "pids"
    tool_path = _fake(tmp_path, f"sleep 60 & echo $! >> {pids}; echo $$ >> {pids}; wait")
    jobs = [render.Job((tool_path, str(i)), str(tmp_path), ()) for i in range(2)]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    real_sleep = time.sleep

    def interrupt(seconds: float) -> None:  # the poll loop's wait: interrupted once both have started
        if pids.exists() and len(pids.read_text().split()) >= 4:
            raise KeyboardInterrupt
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        render.run_jobs(jobs, 1000, 120.0, 2)
    monkeypatch.setattr(time, "sleep", real_sleep)
    for pid in map(int, pids.read_text().split()):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        status = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}/status").exists() else ""
        assert "zombie" in status, f"{pid} still running"
