"""The install a pre-commit hook makes (bench/footprint.py): pip install of podfit, no extras,
into a fresh virtualenv stays within 150 MB beyond the virtualenv's own, carries neither the exact
solver nor every Kubernetes release's schemas, and checks manifests (PF902 included) as it is."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from footprint import MB, distributions, du, empty, install  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hook_env():
    with tempfile.TemporaryDirectory() as tmp:
        base = empty(Path(tmp) / "empty")
        site, _ = install(Path(tmp) / "venv", "")
        yield Path(tmp) / "venv", site, base


def test_the_hook_install_is_within_150_mb(hook_env):
    _, site, base = hook_env
    added = du(site) - base
    sizes = distributions(site)
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    assert added <= 150 * MB, (added / MB, largest)
    assert not {"ortools", "pandas", "kubernetes_validate"} & set(sizes), sorted(sizes)


def test_the_hook_install_checks_schemas_and_packs_without_the_solver(hook_env, tmp_path):
    venv, _, _ = hook_env
    podfit = str(venv / "bin" / "podfit")
    bad = ROOT / "testdata/PF902/fail_misspelt_requests.yaml"
    p = subprocess.run(
        [podfit, "check", "--rule", "PF902", "--format", "json", str(bad)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert p.returncode == 1, p.stderr
    (f,) = json.loads(p.stdout)["findings"]
    assert f["rule"] == "PF902" and "unknown field 'request'" in f["message"]
    # a fit the heuristics prove needs no solver
    p = subprocess.run(
        [podfit, "pack", str(ROOT / "testdata/PF601/pass_fits.yaml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
