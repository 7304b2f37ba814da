"""The check pipeline across engines and rules: what per-object Rego cannot see, podfit corrects."""

import json

import pytest
from click.testing import CliRunner

from podfit.cli import main

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def check(*args):
    r = CliRunner().invoke(main, ["check", *args, "--format", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.output)


@pytest.mark.parametrize("engine", ["embedded", "opa"])
def test_limitrange_default_request_silences_pf101_in_its_namespace_only(engine):
    if engine == "opa" and not (ROOT / ".tools/bin/opa").exists():
        pytest.skip("opa not built (make tools)")
    code, report = check(
        str(ROOT / "testdata/pipeline/limitrange-defaults.yaml"), "--engine", engine, "--rule", "PF101"
    )
    assert [(f["rule"], f["object"]["namespace"], f["line"]) for f in report["findings"]] == [("PF101", "other", 32)]
    assert code == 1


def test_peak_tolerance_comes_from_config(tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {podfit.io/peak-cpu: '1'}\nspec:\n"
        "  containers:\n    - name: a\n      resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 1150m, memory: 1Gi}}\n"
    )
    _, report = check(str(manifest), "--engine", "embedded", "--rule", "PF104")
    assert [f["rule"] for f in report["findings"]] == ["PF104"]  # 15% over the peak, default tolerance 10%
    cfg = tmp_path / "c.yaml"
    cfg.write_text("thresholds: {PF104: {tolerance-percent: 20}}\n")
    _, report = check(str(manifest), "--engine", "embedded", "--rule", "PF104", "--config", str(cfg))
    assert report["findings"] == []


def test_examples_report_validates_and_is_deterministic():
    import jsonschema

    from podfit.paths import load_schema

    _, a = check(str(ROOT / "testdata/examples"), "--engine", "embedded")
    _, b = check(str(ROOT / "testdata/examples"), "--engine", "embedded")
    jsonschema.validate(a, load_schema("report.schema.json"))
    assert a == b and a["findings"]
    keys = [(f["file"], f["line"], f["rule"]) for f in a["findings"]]
    assert keys == sorted(keys)


def test_cluster_option_groups_loadbalancers_under_one_cluster(tmp_path):
    # 11 + 10 LoadBalancer Services in two files: each file alone is under 20, together over
    def services(prefix, n):
        return "---\n".join(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: {prefix}-{i}, namespace: ns}}\nspec: {{type: LoadBalancer, ports: [{{port: 80}}]}}\n"
            for i in range(n)
        )

    (tmp_path / "a.yaml").write_text(services("a", 11))
    (tmp_path / "b.yaml").write_text(services("b", 10))
    _, report = check(str(tmp_path), "--rule", "PF701", "--cluster", "prod")
    assert [(f["rule"], f["details"]["cluster"], f["details"]["services"]) for f in report["findings"]] == [
        ("PF701", "prod", 21)
    ]


def test_pf301_for_pools_declared_only_in_the_platform_profile():
    profile = ROOT / "tests/data/platform-wide-pool.yaml"
    code, report = check(
        str(ROOT / "testdata/examples/cache.yaml"),
        "--platform",
        str(profile),
        "--rule",
        "PF301",
        "--engine",
        "embedded",
    )
    assert code == 1
    assert [(f["rule"], f["file"], f["line"], f["details"]["pool"]) for f in report["findings"]] == [
        ("PF301", str(profile), 11, "too-wide")
    ]


def test_pf304_for_a_critical_profile_with_best_effort_pools():
    profile = ROOT / "tests/data/platform-critical.yaml"
    _, report = check(
        str(ROOT / "testdata/examples/cache.yaml"),
        "--platform",
        str(profile),
        "--rule",
        "PF304",
        "--engine",
        "embedded",
    )
    assert [(f["rule"], f["line"], f["details"]["pool"]) for f in report["findings"]] == [
        ("PF304", 9, "small-ok"),
        ("PF304", 12, "too-wide"),
    ]


def test_pf202_is_listed_as_skipped_when_only_a_control_plane_is_known(tmp_path):
    # the Rego data gets no node CPUs from control planes, so the report must not claim PF202 ran
    tkc = tmp_path / "tkc.yaml"
    tkc.write_text(
        "apiVersion: run.tanzu.vmware.com/v1alpha3\nkind: TanzuKubernetesCluster\nmetadata: {name: c}\n"
        "spec:\n  topology:\n    controlPlane: {replicas: 3, vmClass: best-effort-small}\n"
    )
    _, report = check(str(tkc), "--rule", "PF202", "--engine", "embedded")
    assert [s["rule"] for s in report["skipped_rules"]] == ["PF202"]


CLUSTER_RULES = ("PF301", "PF304")  # Python rules over the facts' node pools (Rego rules before the facts stage)
CLUSTER_FIXTURES = sorted(
    p for r in CLUSTER_RULES for p in (ROOT / "testdata" / r).glob("*.yaml") if p.name != "platform.yaml"
)


def test_every_cluster_rule_has_pass_and_fail_fixtures():
    for rule in CLUSTER_RULES:
        names = [p.name for p in (ROOT / "testdata" / rule).glob("*.yaml")]
        assert any(n.startswith("fail_") for n in names) and any(n.startswith("pass_") for n in names), rule


@pytest.mark.parametrize("path", CLUSTER_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_cluster_rule_fixture(path):
    """Each fail_ fixture raises its own rule (and not the other), at its node pool's line and
    about its cluster object; each pass_ fixture raises neither."""
    from podfit.catalogue import get_rule

    rule = path.parent.name
    args = [str(path), "--fail-on", "never"] + [a for r in CLUSTER_RULES for a in ("--rule", r)]
    if (path.parent / "platform.yaml").is_file():
        args += ["--platform", str(path.parent / "platform.yaml")]
    code, report = check(*args)
    assert code == 0
    assert not [s for s in report["skipped_rules"] if s["rule"] == rule], report["skipped_rules"]
    if path.name.startswith("fail_"):
        assert report["findings"] and {f["rule"] for f in report["findings"]} == {rule}
        for f in report["findings"]:
            assert f["file"] == str(path) and f["line"] > 1 and f["severity"] == get_rule(rule).severity
            assert f["object"]["kind"] in ("TanzuKubernetesCluster", "Cluster")
    else:
        assert report["findings"] == []


def test_unnamed_containers_are_reported_by_their_place(tmp_path):
    """A container without a name is initContainers[i] / containers[i] in the Rego findings, at its
    own line, as in the Python facts (test_facts_agree holds the two sides to the same names)."""
    manifest = tmp_path / "unnamed.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n    - image: x\n"
        "      resources: {requests: {memory: 64Mi}}\n  containers:\n    - name: app\n      image: x\n"
        "      resources: {requests: {cpu: 100m, memory: 64Mi}}\n    - image: y\n      resources: {requests: {memory: 64Mi}}\n"
    )
    for engine in ("embedded",) + (("opa",) if (ROOT / ".tools/bin/opa").exists() else ()):
        code, report = check(str(manifest), "--rule", "PF101", "--rule", "PF113", "--engine", engine)
        assert code == 1
        assert [(f["container"], f["line"], f["message"][:56]) for f in report["findings"]] == [
            # the app containers reserve the pod, in which the one-shot init container runs alone
            ("initContainers[0]", 6, 'init container "initContainers[0]" sets no CPU request; '),
            ("containers[1]", 12, 'container "containers[1]" sets no CPU request'),
        ], engine
