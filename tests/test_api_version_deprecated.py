"""PF911 api-version-deprecated: fixtures compared whole; with a target release, an apiVersion a
later release removes is PF911 (info) and becomes PF906 (error) from that release on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.schemas_k8s import REMOVED_APIS, deprecated_api

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "testdata" / "PF911"

PDB = "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n"


def check_json(*args):
    r = CliRunner().invoke(main, ["check", *args, "--format", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.output)


def test_fixtures_compared_whole():
    code, report = check_json(str(FIXTURES / "fail_endpoints_for_external_database.yaml"))
    assert code == 0  # info does not fail the default --fail-on error
    assert [(f["rule"], f["severity"], f["line"], f["object"]["kind"], f["message"]) for f in report["findings"]] == [
        (
            "PF911",
            "info",
            12,
            "Endpoints",
            "Endpoints (v1) is deprecated since Kubernetes 1.33: still served, no removal scheduled. Use "
            "discovery.k8s.io/v1 EndpointSlice; an EndpointSlice names its Service in the label "
            "kubernetes.io/service-name",
        )
    ]
    code, report = check_json(str(FIXTURES / "pass_endpointslice.yaml"))
    assert (code, report["findings"]) == (0, [])


@pytest.mark.parametrize(
    "version, expected",
    [
        ("1.21", [("PF911", "info")]),
        ("1.24", [("PF911", "info")]),
        ("1.25", [("PF906", "error")]),
        (None, [("PF906", "error")]),
    ],
)
def test_a_target_release_decides_deprecated_or_removed(tmp_path, monkeypatch, version, expected):
    (tmp_path / "pdb.yaml").write_text(PDB)
    if version is not None:
        (tmp_path / ".podfit.yaml").write_text(f'thresholds:\n  PF906: {{kubernetes-version: "{version}"}}\n')
    monkeypatch.chdir(tmp_path)
    _, report = check_json("pdb.yaml", "--rule", "PF906", "--rule", "PF911")
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == expected
    if expected[0][0] == "PF911":
        assert report["findings"][0]["message"] == (
            f"apiVersion policy/v1beta1 of PodDisruptionBudget is deprecated: Kubernetes 1.25 removes it (the "
            f"target, {version}, still serves it). Use policy/v1 PodDisruptionBudget; an empty spec.selector "
            f"selects every pod of the namespace"
        )


def test_endpoints_before_their_deprecation_is_no_finding():
    assert deprecated_api("v1", "Endpoints", "1.32") is None
    assert deprecated_api("v1", "Endpoints", "1.33") is not None


def test_every_removal_is_a_deprecation_just_before_it():
    for (api, kind), removal in REMOVED_APIS.items():
        major, minor = removal.removed_in.split(".")
        before = f"{major}.{int(minor) - 1}"
        d = deprecated_api(api, kind, before)
        assert d is not None and d.removed_in == removal.removed_in, (api, kind)
        assert deprecated_api(api, kind, removal.removed_in) is None
