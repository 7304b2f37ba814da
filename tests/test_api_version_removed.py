"""PF906 api-version-removed: fixtures, whole messages, the target Kubernetes version, no PF902 on
the same objects, and the removal table against the schemas each Kubernetes release ships."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.schemas_k8s import (
    REMOVED_APIS,
    _release,
    kubernetes_schema_root,
    removed_api,
    schema_file_name,
    shipped_versions,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "testdata" / "PF906"


def check_json(args):
    r = CliRunner().invoke(main, ["check", *args, "--format", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.output)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.yaml")), ids=lambda p: p.name)
def test_fixtures(path):
    code, report = check_json([str(path), "--rule", "PF906"])
    if path.name.startswith("fail_"):
        lines = path.read_text().splitlines()
        assert code == 1 and report["findings"]
        for f in report["findings"]:
            assert f["rule"] == "PF906" and f["severity"] == "error"
            assert lines[f["line"] - 1] == f"apiVersion: {f['object']['apiVersion']}"
        assert len(report["findings"]) == sum(1 for line in lines if line.startswith("apiVersion: "))
    else:
        assert code == 0 and report["findings"] == []


def test_messages_compared_whole():
    _, report = check_json([str(FIXTURES / "fail_extensions_v1beta1.yaml"), "--rule", "PF906"])
    assert [(f["line"], f["message"]) for f in report["findings"]] == [
        (
            2,
            "apiVersion extensions/v1beta1 of Deployment was removed in Kubernetes 1.16: the API server rejects the "
            "object, and the rules over several objects (packing, capacity, quotas) leave it out. Use apiVersion apps/v1 (served since 1.9); spec.selector is required there",
        ),
        (
            18,
            "apiVersion extensions/v1beta1 of DaemonSet was removed in Kubernetes 1.16: the API server rejects the "
            "object, and the rules over several objects (packing, capacity, quotas) leave it out. Use apiVersion apps/v1 (served since 1.9); spec.selector is required there",
        ),
        (
            31,
            "apiVersion extensions/v1beta1 of Ingress was removed in Kubernetes 1.22: the API server rejects the "
            "object, and the rules over several objects (packing, capacity, quotas) leave it out. Use apiVersion networking.k8s.io/v1 (served since 1.19); spec.backend becomes "
            "spec.defaultBackend, serviceName/servicePort become service.name/service.port, pathType is required",
        ),
    ]
    (f,) = [
        f
        for f in check_json([str(FIXTURES / "fail_policy_batch_autoscaling.yaml"), "--rule", "PF906"])[1]["findings"]
        if f["object"]["kind"] == "PodSecurityPolicy"
    ]
    assert f["details"]["replacement"] is None and "Pod Security Admission" in f["message"]


@pytest.mark.skipif(kubernetes_schema_root() is None, reason="no Kubernetes schemas (schemas/kubernetes)")
def test_no_pf902_besides_pf906():
    """Every rule on: a removed apiVersion is PF906's finding, never also PF902's."""
    for path in sorted(FIXTURES.glob("fail_*.yaml")):
        _, report = check_json([str(path)])
        assert "PF906" in {f["rule"] for f in report["findings"]}
        assert "PF902" not in {f["rule"] for f in report["findings"]}, path.name


def test_target_version_from_pf906_or_pf902(tmp_path):
    """An apiVersion still served by the targeted release passes; PF902's version applies when
    PF906 names none."""
    fixture = str(FIXTURES / "fail_policy_batch_autoscaling.yaml")
    removed = {}
    for name, cfg in {
        "1.25 (PF906)": 'thresholds:\n  PF906: {kubernetes-version: "1.25"}\n',
        "1.29 (PF906)": 'thresholds:\n  PF906: {kubernetes-version: "1.29"}\n',
        "1.29 (PF902)": 'thresholds:\n  PF902: {kubernetes-version: "1.29"}\n',
        "v1.24.3": 'thresholds:\n  PF906: {kubernetes-version: "v1.24.3"}\n',
        "latest": "thresholds:\n  PF906: {kubernetes-version: latest}\n",
    }.items():
        p = tmp_path / "podfit.yaml"
        p.write_text(cfg)
        _, report = check_json([fixture, "--rule", "PF906", "--config", str(p)])
        removed[name] = sorted(f["object"]["apiVersion"] + " " + f["object"]["kind"] for f in report["findings"])
    assert removed["1.29 (PF906)"] == removed["1.29 (PF902)"]
    assert set(removed["1.25 (PF906)"]) <= set(removed["1.29 (PF906)"])
    assert removed["1.25 (PF906)"] == [
        "autoscaling/v2beta1 HorizontalPodAutoscaler",
        "batch/v1beta1 CronJob",
        "policy/v1beta1 PodDisruptionBudget",
        "policy/v1beta1 PodSecurityPolicy",
    ]
    assert removed["v1.24.3"] == []
    assert len(removed["latest"]) == 5


def test_malformed_version_is_a_config_error_naming_the_key(tmp_path):
    """A version that is no version would check nothing: exit 2 naming the key, never a skip."""
    p = tmp_path / "podfit.yaml"
    p.write_text("thresholds:\n  PF906: {kubernetes-version: soon}\n")
    args = ["check", str(FIXTURES / "fail_apps_beta.yaml"), "--rule", "PF906", "--config", str(p)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2
    assert "thresholds.PF906.kubernetes-version: 'soon' is not a Kubernetes version" in res.output


def test_removed_api_by_release():
    r = removed_api("apps/v1beta2", "Deployment")
    assert (r.removed_in, r.replacement, r.since) == ("1.16", "apps/v1", "1.9")
    assert removed_api("apps/v1beta2", "Deployment", "1.15") is None
    assert removed_api("apps/v1beta2", "Deployment", "1.16") == r
    assert removed_api("apps/v1", "Deployment") is None
    assert removed_api("example.com/v1beta1", "Deployment") is None


@pytest.mark.skipif(kubernetes_schema_root() is None, reason="no Kubernetes schemas (schemas/kubernetes)")
def test_table_agrees_with_the_shipped_schemas():
    """The schemas shipped per release (from kubernetes-validate) are an independent record of what each
    release serves: a removed apiVersion has no schema from its removal on, one where the release
    before it is shipped, and every replacement has one in the newest release."""
    root = kubernetes_schema_root()
    versions = shipped_versions()

    def has_schema(version, api, kind):
        return _release(root, version, True).has(schema_file_name(api, kind))

    checked_before = 0
    for (api, kind), r in REMOVED_APIS.items():
        for v in versions:
            if removed_api(api, kind, v) is not None:
                assert not has_schema(v, api, kind), (api, kind, v)
        before = [v for v in versions if removed_api(api, kind, v) is None]
        if before:  # the last release serving it
            assert has_schema(before[-1], api, kind), (api, kind, before[-1])
            checked_before += 1
        if r.replacement:
            assert has_schema(versions[-1], r.replacement, kind), (r.replacement, kind)
    # the removals after the oldest shipped release (1.29) were seen served before: 1.29 and 1.32's
    assert checked_before >= 2
