"""`podfit platform-data` writes the facts plain conftest needs: the same verdicts as podfit itself."""

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from podfit.cli import main

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
CONFTEST = ROOT / ".tools/bin/conftest"


def test_platform_data_shape():
    r = CliRunner().invoke(main, ["platform-data", "--platform", str(ROOT / "testdata/platforms/bare-metal-256.yaml")])
    assert r.exit_code == 0, r.output
    document = json.loads(r.output)["podfit"]
    assert set(document) == {"platform", "namespaces", "options"}  # data.podfit, as facts_data writes it
    data = document["platform"]
    assert data["runtime"] == "bare-metal" and data["node_logical_cpus"] == 256
    # on bare metal a NUMA node holds cores × threads of the CPUs a pod counts
    assert data["numa_node"] == {"cores": 64, "cpus": 128, "memory": 2**40 // 2}


def test_platform_data_is_the_facts_podfit_check_uses(tmp_path):
    """The document equals facts_data(build_facts(...)), the configured Rego options included."""
    from podfit.facts import build_facts, facts_data
    from podfit.loader import InputFile, load
    from podfit.platform import DEFAULT_PLATFORM

    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text("thresholds: {PF104: {tolerance-percent: 25}}\n")
    manifest = ROOT / "testdata/pipeline/limitrange-defaults.yaml"
    r = CliRunner().invoke(main, ["platform-data", "--config", str(cfg), str(manifest)])
    assert r.exit_code == 0, r.output
    document = json.loads(r.output)["podfit"]
    objects = load([InputFile(str(manifest), manifest.read_bytes())]).objects
    assert document == json.loads(
        json.dumps(facts_data(build_facts(objects, DEFAULT_PLATFORM), {"PF104": {"tolerance-percent": 25}}))
    )
    assert document["options"] == {"PF104": {"tolerance-percent": 25}}
    assert document["namespaces"]  # the manifest's LimitRange gives its namespace container defaults


def test_tkc_in_paths_adds_node_pools():
    r = CliRunner().invoke(main, ["platform-data", str(ROOT / "testdata/examples/tkg-cluster.yaml")])
    data = json.loads(r.output)["podfit"]["platform"]
    assert {p["vm_class"] for p in data["node_pools"]} == {"best-effort-small", "best-effort-xlarge"}
    assert data["node_logical_cpus"] == 4


@pytest.mark.skipif(not CONFTEST.exists() and not shutil.which("conftest"), reason="conftest not built (make tools)")
def test_plain_conftest_with_the_data_file_raises_pf202(tmp_path):
    data = tmp_path / "platform-data.json"
    r = CliRunner().invoke(
        main, ["platform-data", "--platform", str(ROOT / "testdata/platforms/bare-metal-256.yaml"), "-o", str(data)]
    )
    assert r.exit_code == 0
    fixture = str(ROOT / "testdata/PF202/fail_1500m_on_256_cpus.yaml")
    binary = str(CONFTEST) if CONFTEST.exists() else shutil.which("conftest")

    def rules(*extra):
        """(failures, warnings) as rule ids: podfit.lib.conftest's lines start with the rule id."""
        p = subprocess.run(
            [binary, "test", "--policy", str(ROOT / "policies"), "--all-namespaces", "-o", "json", *extra, fixture],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode in (0, 1), p.stdout + p.stderr
        results = json.loads(p.stdout)
        return tuple(
            {f["msg"].split(" ", 1)[0] for res in results for f in res.get(kind) or []}
            for kind in ("failures", "warnings")
        )

    failures, warnings = rules("--data", str(data))
    assert "PF202" in warnings and "PF202" not in failures  # a warning: conftest's warn, not deny
    assert "PF202" not in set().union(*rules())  # without platform facts the rule stays silent


def test_control_plane_class_does_not_decide_node_cpus(tmp_path):
    tkc = tmp_path / "tkc.yaml"
    tkc.write_text(
        "apiVersion: run.tanzu.vmware.com/v1alpha3\nkind: TanzuKubernetesCluster\nmetadata: {name: c}\nspec:\n  topology:\n"
        "    controlPlane: {replicas: 3, vmClass: best-effort-8xlarge}\n"
        "    nodePools: [{name: w, replicas: 3, vmClass: best-effort-large}]\n"
    )
    r = CliRunner().invoke(main, ["platform-data", str(tkc)])
    assert json.loads(r.output)["podfit"]["platform"]["node_logical_cpus"] == 4  # large, not 8xlarge's 32
