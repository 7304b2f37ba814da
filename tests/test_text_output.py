"""The text report people read, compared whole: findings grouped by file, one line each, each rule's
fix once, the skipped rules in one line, totals with singular and plural right, colour only when
asked for or on a terminal."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from podfit.cli import main

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
        - name: wait
          image: busybox
      containers:
        - name: web
          image: nginx
          resources:
            requests: {cpu: 2cores, memory: 256Mi}
            limits: {cpu: 1500m, memory: 1Gi}
"""
BROKEN = "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n"
# PF401 and PF601 lack their facts on the default platform: the skipped line names both
RULES = [a for r in ("PF101", "PF102", "PF901", "PF903", "PF401", "PF601") for a in ("--rule", r)]

FINDINGS = """\
k8s/broken.yaml
   3  error    PF901  cannot parse: while parsing a flow node: did not find expected node content

k8s/web.yaml
  11  error    PF101  Deployment shop/web: init container "wait" sets no CPU request
  11  error    PF102  Deployment shop/web: init container "wait" sets no memory request
  17  error    PF903  Deployment shop/web, container web: requests.cpu: expected a number with an optional suffix such as m, k, Mi, Gi or e3 ('2cores')

"""
FIXES = """\
fix PF101 cpu-request-missing: Set resources.requests.cpu to the CPU the container needs at its usual load (e.g. "500m").
fix PF102 memory-request-missing: Set resources.requests.memory to the container's working set (e.g. "512Mi").
fix PF901 yaml-invalid: Fix the syntax at the reported line and column.
fix PF903 quantity-invalid: Use a Kubernetes quantity: "500m", "1.5", "2", "512Mi", "2Gi", "1e9".
(podfit explain ID tells why and shows an example)

"""
PLATFORM = "platform: built-in default (4 hosts × 2 × 16 cores, 2,300 MHz, HA 1), runtime tkg; engine: embedded\n"
SKIPPED = (
    "2 rules skipped for want of runtime vsphere-pods (spec.runtime), node pools (spec.nodePools or a "
    "TanzuKubernetesCluster); --verbose lists them\n"
)
TOTALS = "2 files (1 failed), 1 object: 4 errors, 0 warnings, 0 info\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "web.yaml").write_text(WEB)
    (tmp_path / "k8s" / "broken.yaml").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> str:
    r = CliRunner().invoke(main, ["check", "k8s", *RULES, "--engine", "embedded", *args], catch_exceptions=False)
    assert r.exit_code == 1
    return r.output


def test_default_output_is_grouped_with_each_fix_once(repo):
    assert run() == FINDINGS + FIXES + PLATFORM + SKIPPED + TOTALS


def test_quiet_prints_only_findings_and_totals(repo):
    assert run("--quiet") == FINDINGS + TOTALS
    assert run("-q") == FINDINGS + TOTALS


def test_show_fixes_puts_the_fix_under_every_finding_and_verbose_lists_what_was_skipped(repo):
    out = run("--show-fixes", "--verbose")
    assert out == (
        "k8s/broken.yaml\n"
        "   3  error    PF901  cannot parse: while parsing a flow node: did not find expected node content\n"
        "      fix: Fix the syntax at the reported line and column.\n"
        "\n"
        "k8s/web.yaml\n"
        '  11  error    PF101  Deployment shop/web: init container "wait" sets no CPU request\n'
        '      fix: Set resources.requests.cpu to the CPU the container needs at its usual load (e.g. "500m").\n'
        '  11  error    PF102  Deployment shop/web: init container "wait" sets no memory request\n'
        '      fix: Set resources.requests.memory to the container\'s working set (e.g. "512Mi").\n'
        "  17  error    PF903  Deployment shop/web, container web: requests.cpu: expected a number with an "
        "optional suffix such as m, k, Mi, Gi or e3 ('2cores')\n"
        '      fix: Use a Kubernetes quantity: "500m", "1.5", "2", "512Mi", "2Gi", "1e9".\n'
        "\n" + PLATFORM + "failed: k8s/broken.yaml: YAML error at line 3: while parsing a flow node: did not find "
        "expected node content\n"
        "2 rules skipped for want of facts:\n"
        "  PF401 vsphere-pod-no-resources: needs runtime vsphere-pods in the platform (spec.runtime)\n"
        "  PF601 workload-does-not-fit: needs node pools: spec.nodePools in the platform, --nodes, or a "
        "TanzuKubernetesCluster, Cluster API Cluster, eksctl ClusterConfig or Karpenter NodePool among the "
        "manifests\n" + TOTALS
    )


def test_singular_counts_and_no_colour_unless_asked(repo):
    (repo / "k8s" / "broken.yaml").unlink()
    r = CliRunner().invoke(main, ["check", "k8s/web.yaml", "--rule", "PF903", "-q"], catch_exceptions=False)
    assert r.output.endswith("\n1 file, 1 object: 1 error, 0 warnings, 0 info\n")
    assert "\x1b[" not in r.output  # not a terminal
    colored = CliRunner().invoke(main, ["check", "k8s/web.yaml", "--rule", "PF903", "-q", "--color"]).output
    assert "\x1b[31merror  \x1b[0m" in colored and "\x1b[31m1 error\x1b[0m" in colored


def test_a_clean_run_says_so(repo):
    (repo / "k8s" / "broken.yaml").unlink()
    r = CliRunner().invoke(main, ["check", "k8s", "--rule", "PF901", "-q"], catch_exceptions=False)
    assert r.exit_code == 0 and r.output == "1 file, 1 object: no findings\n"


def test_a_nameless_object_is_named_by_its_kind(tmp_path):
    """A KubeletConfiguration has no metadata.name: its findings name the kind alone."""
    f = tmp_path / "kubelet.yaml"
    f.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n"
        "reservedSystemCPUs: '0'\ncpuManagerPolicyOptions: {full-pcpus-only: true}\n"
    )
    r = CliRunner().invoke(main, ["check", str(f), "--rule", "PF902", "-q", "--no-color"])
    assert "  5  error    PF902  KubeletConfiguration: fails the kubelet.config.k8s.io/v1beta1" in r.output


# ------------------------------------------------------------------ one line per finding (#38) ---

PF203_ARGS = ["check", "testdata/PF203/", "--platform", "testdata/PF203/platform.yaml", "--no-color"]


def test_a_finding_line_is_at_most_160_characters_and_verbose_shows_the_whole_message():
    import json

    from podfit.formats.text import LINE_LIMIT

    runner = CliRunner()
    text = runner.invoke(main, PF203_ARGS).output
    whole = [
        f["message"] for f in json.loads(runner.invoke(main, [*PF203_ARGS, "--format", "json"]).output)["findings"]
    ]
    longest = max(whole, key=len)
    assert len(longest) > 500  # PF203's message: the case this is about
    lines = [line for line in text.splitlines() if re.match(r"\s+\d+\s+(error|warning|info)\s+PF", line)]
    assert lines and all(len(line) <= LINE_LIMIT for line in lines)
    assert longest not in text
    assert "cut to one line; -v or --format json shows them whole" in text
    verbose = runner.invoke(main, [*PF203_ARGS, "-v"]).output
    assert " ".join(verbose.split()).count(" ".join(longest.split())) == 1  # wrapped, whole
    assert all(len(line) <= LINE_LIMIT for line in verbose.splitlines() if line.startswith("    "))


def test_headline_keeps_whole_sentences_or_cuts_after_a_word():
    from podfit.formats.text import headline

    assert headline("Short.", 40) == "Short."
    assert headline("First sentence here. Second one is longer than fits.", 30) == "First sentence here."
    cut = headline("one two three four five six seven eight nine ten", 20)
    assert len(cut) <= 20 and cut.endswith("…") and cut == "one two three four…"


@pytest.mark.parametrize(
    ("n", "word", "expect"),
    [(1, "warning", "1 warning"), (2, "warning", "2 warnings"), (1, "info", "1 info"), (1_200, "node", "1,200 nodes")],
)
def test_plural(n, word, expect):
    from podfit.words import plural

    assert plural(n, word) == expect


def test_pack_bound_says_one_node_not_one_nodes():
    from podfit.packing.model import Bound
    from podfit.packing.report import describe_bound

    assert "needs 1 node," in describe_bound(Bound("anti-affinity", 1, 0))
    assert "needs 2 nodes," in describe_bound(Bound("anti-affinity", 2, 1))
