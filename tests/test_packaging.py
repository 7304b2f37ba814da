"""A wheel-installed podfit carries its policies, schemas and catalogue and works from any directory."""

import json
import subprocess
import sys
import zipfile

import pytest

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    # setuptools copies into build/ and keeps files that have since left the sources (a deleted
    # policy would ship and make the compiled module look stale): build from a clean state
    __import__("shutil").rmtree(ROOT / "build", ignore_errors=True)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp / "dist"), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # the build tool has nothing to complain about (make demo shows its output to every new user);
    # a license as a TOML table, for one, gave six lines of SetuptoolsDeprecationWarning
    assert "Deprecat" not in build.stdout + build.stderr, build.stdout + build.stderr
    (wheel,) = (tmp / "dist").glob("podfit-*.whl")
    target = tmp / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(target)
        names = z.namelist()
    return target, names


def test_wheel_contains_policies_schemas_and_catalogue(installed):
    _, names = installed
    assert "podfit/catalogue.yaml" in names
    assert "podfit/_schemas/platform.schema.json" in names
    assert "podfit/_schemas/report.schema.json" in names
    # PF902's Kubernetes schemas: one file per release podfit targets (kubeversions.RELEASES)
    from podfit.kubeversions import RELEASES

    shipped = sorted(n for n in names if n.startswith("podfit/_schemas/kubernetes/"))
    assert shipped == sorted(f"podfit/_schemas/kubernetes/v{a}.{b}.json.gz" for a, b in RELEASES)
    assert any(n.startswith("podfit/_policies/") and n.endswith(".rego") for n in names)
    assert "podfit/data/policies.wasm" in names and "podfit/data/policies.wasm.json" in names


def test_wheel_carries_no_lab_and_no_benchmarks(installed):
    """The kernel calibration (lab/) and the benchmarks (bench/) are measured from a checkout and never
    installed: only the package, its policies and its schemas go into the wheel."""
    _, names = installed
    # the lab's program and saved tables stay out; the simulator's summary of the results
    # (podfit/throttle/calibration.py: each row's configuration and error) is product code
    lab = [n for n in names if n.startswith(("lab/", "bench/")) or "calibrate" in n or "calibration-" in n]
    assert not lab, lab
    assert {top for top in (n.split("/")[0] for n in names) if not top.endswith(".dist-info")} == {"podfit"}


def test_installed_podfit_runs_from_elsewhere(installed, tmp_path):
    site, _ = installed
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: a, resources: {requests: {cpu: lots}}}\n"
    )
    code = (
        "import podfit.paths as p, sys; "
        "assert str(p.policies_dir()).startswith(sys.argv[1]), p.policies_dir(); "
        "assert str(p.schemas_dir()).startswith(sys.argv[1]), p.schemas_dir(); "
        "from podfit.engines import get_engine; e = get_engine('auto'); "
        "assert type(e).__name__ == 'WasmEngine', e; "  # the compiled module matches the installed policies
        "from podfit.cli import main; main(sys.argv[2:])"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sys.executable, "-c", code, str(site), "check", str(manifest), "--rule", "PF903", "--format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert [f["rule"] for f in json.loads(r.stdout)["findings"]] == ["PF903"]


def test_editable_install_is_a_plain_path_entry_without_build_warnings(tmp_path):
    """`make venv` (pip install -e) prints nothing from the build tool, and the editable install is a
    static path entry to analyzer/ (no import hook to load at every start of podfit)."""
    import venv

    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    python = target / "bin" / "python"
    p = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-e", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Warning" not in p.stdout + p.stderr and "!!" not in p.stderr, p.stdout + p.stderr
    (pth,) = target.glob("lib/python*/site-packages/__editable__*podfit*.pth")
    assert pth.read_text().strip() == str(ROOT / "analyzer")
