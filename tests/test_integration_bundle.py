"""GitOps without podfit: `make bundle` builds an OPA bundle of policies/, a local HTTP server serves
it, `conftest pull` fetches it, and `conftest test --namespace podfit.lib.conftest` with the facts
(`podfit platform-data`'s document) passed by `--data` gives every Rego rule's fixtures podfit's own
verdict: a failure for each of podfit's error findings, a warning for each of the others, with the
same message."""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

from conftest import tool
from podfit.catalogue import load_catalogue
from test_rego_fixtures import expected_rules

pytestmark = pytest.mark.tools
ROOT = Path(__file__).resolve().parents[1]
REGO_RULES = sorted(r.id for r in load_catalogue().values() if r.engine == "rego")


def _need(name: str) -> str:
    path = tool(name)
    if path is None:
        pytest.skip(f"{name} not built (make tools)")
    return path


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    _need("opa")
    out = tmp_path_factory.mktemp("dist") / "podfit-policies.tar.gz"
    p = subprocess.run(["make", "-s", "bundle", f"BUNDLE={out}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


@pytest.fixture(scope="module")
def served(bundle):
    """http://127.0.0.1:PORT/ serving the bundle's directory (ephemeral port, stopped afterwards)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(bundle.parent))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{bundle.name}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def pulled(served, tmp_path_factory) -> Path:
    conftest = _need("conftest")
    work = tmp_path_factory.mktemp("pull")
    p = subprocess.run(
        [conftest, "pull", "--policy", "policy", served], cwd=work, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return work / "policy"


def test_bundle_holds_policies_without_tests(bundle):
    with tarfile.open(bundle) as tar:
        names = [n.lstrip("/") for n in tar.getnames()]
        manifest = json.load(tar.extractfile(next(m for m in tar.getmembers() if m.name.lstrip("/") == ".manifest")))
    rego = sorted(n for n in names if n.endswith(".rego"))
    source = sorted(
        str(p.relative_to(ROOT / "policies"))
        for p in (ROOT / "policies").rglob("*.rego")
        if not p.name.endswith("_test.rego")
    )
    assert rego == source and rego
    assert not any(n.endswith("_test.rego") for n in names)
    assert manifest["revision"] and manifest["rego_version"] == 1


def test_pull_unpacks_the_bundle(pulled):
    files = sorted(str(p.relative_to(pulled)) for p in pulled.rglob("*.rego"))
    assert "resources/cpu_request_missing.rego" in files and "lib/k8s.rego" in files and "lib/conftest.rego" in files


def _platform_data(rule_dir: Path, fixture: Path) -> dict:
    """What `podfit platform-data --platform <rule_dir>/platform.yaml <fixture>` writes."""
    from podfit.facts import build_facts, facts_data
    from podfit.loader import make_object
    from podfit.platform import DEFAULT_PLATFORM, parse_platform

    profile = rule_dir / "platform.yaml"
    platform = parse_platform(profile.read_text(), str(profile)) if profile.is_file() else DEFAULT_PLATFORM
    docs = [d for d in yaml.safe_load_all(fixture.read_text()) if d is not None]
    return {"podfit": facts_data(build_facts([make_object(d, str(fixture)) for d in docs], platform))}


def _conftest(pulled: Path, files: list[Path], data_file: Path) -> dict[str, dict[str, set[str]]]:
    """conftest test with the pulled bundle: {file: {"failures": lines, "warnings": lines}}."""
    p = subprocess.run(
        [
            _need("conftest"),
            "test",
            "--policy",
            str(pulled),
            "--namespace",
            "podfit.lib.conftest",
            "--data",
            str(data_file),
            "--output",
            "json",
            "--no-color",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert p.returncode == (1 if '"failures"' in p.stdout else 0)  # failures fail the run, warnings alone do not
    out: dict[str, dict[str, set[str]]] = {str(f): {"failures": set(), "warnings": set()} for f in files}
    for entry in json.loads(p.stdout):
        for kind in ("failures", "warnings"):
            for r in entry.get(kind) or ():
                out[entry["filename"]][kind].add(r["msg"])
    return out


def _rules(lines: set[str]) -> set[str]:
    return {line.split(" ", 1)[0] for line in lines}


def _podfit(fixture: Path) -> dict[str, set[str]]:
    """podfit check's Rego findings on the fixture as conftest lines: errors, and the others."""
    from click.testing import CliRunner

    from podfit.cli import main

    args = ["check", str(fixture), "--format", "json", "--fail-on", "never"] + [
        a for r in REGO_RULES for a in ("--rule", r)
    ]
    if (fixture.parent / "platform.yaml").is_file():
        args += ["--platform", str(fixture.parent / "platform.yaml")]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out: dict[str, set[str]] = {"failures": set(), "warnings": set()}
    for f in json.loads(res.output)["findings"]:
        ref = f["object"]
        subject = (
            f"{ref['kind']} {ref['namespace']}/{ref['name']}" if ref["namespace"] else f"{ref['kind']} {ref['name']}"
        )
        out["failures" if f["severity"] == "error" else "warnings"].add(f"{f['rule']} {subject}: {f['message']}")
    return out


def fixtures():
    return sorted(p for r in REGO_RULES for p in (ROOT / "testdata" / r).glob("*.yaml") if p.name != "platform.yaml")


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_conftest_with_pulled_bundle_and_platform_data(pulled, tmp_path, fixture):
    data = tmp_path / "platform.json"
    data.write_text(json.dumps(_platform_data(fixture.parent, fixture)))
    found = _conftest(pulled, [fixture], data)[str(fixture)]
    assert found == _podfit(fixture)  # errors as failures, warnings and advice as warnings, same lines
    rules = _rules(found["failures"] | found["warnings"])
    assert rules == expected_rules(fixture)
    for rule in rules:  # errors as failures, the others as warnings
        kind = "failures" if load_catalogue()[rule].severity == "error" else "warnings"
        assert rule in _rules(found[kind])


def test_platform_data_changes_the_verdict(pulled, tmp_path):
    """The same pod: PF202 with the profile's 256-CPU nodes, nothing with the default profile (which
    gives no node size)."""
    fixture = next((ROOT / "testdata" / "PF202").glob("fail_*.yaml"))
    with_profile = tmp_path / "nodes.json"
    with_profile.write_text(json.dumps(_platform_data(fixture.parent, fixture)))
    default = tmp_path / "default.json"
    default.write_text(json.dumps(_platform_data(tmp_path, fixture)))  # no platform.yaml there: the default
    assert json.loads(with_profile.read_text())["podfit"]["platform"]["node_logical_cpus"] == 256
    on_nodes = _conftest(pulled, [fixture], with_profile)[str(fixture)]
    assert _rules(on_nodes["warnings"]) == {"PF202"} and not on_nodes["failures"]
    assert _conftest(pulled, [fixture], default)[str(fixture)] == {"failures": set(), "warnings": set()}
