"""`podfit export gatekeeper` proven with Gatekeeper's own evaluator: gator runs the exported
templates over every fixture under testdata/, and its verdicts agree with `podfit check` rule by
rule; a compliant object of every kind the policies match is admitted by each of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from podfit.admission import ADMISSION_KINDS, PolicySource, admission_rules

ROOT = Path(__file__).resolve().parent.parent
GATOR = ROOT / ".tools" / "bin" / "gator"
KINDS = {k for _, ks in ADMISSION_KINDS for k in ks}
# objects podfit reads from several documents (a namespace's LimitRange gives defaults, a
# platform object gives facts): at admission the mutating stage and the cluster hold those, so
# files that carry such objects are compared by the tests of their own rules, not here
CONTEXT_KINDS = {"LimitRange", "ResourceQuota", "Namespace", "TanzuKubernetesCluster", "Cluster", "Node"}

needs_gator = pytest.mark.skipif(not GATOR.exists(), reason="gator not built (scripts/install-tools.sh gator)")


def _rule_ids() -> list[str]:
    root = ROOT / "policies"
    sources = [PolicySource(p.relative_to(root).as_posix(), p.read_text()) for p in sorted(root.rglob("*.rego"))]
    return [r.id for r in admission_rules(sources)]


def _podfit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podfit", *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gk") / "podfit-gatekeeper.yaml"
    done = _podfit("export", "gatekeeper", "-o", str(out), cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return out


def _fixtures() -> list[Path]:
    files = []
    for path in sorted((ROOT / "testdata").glob("PF*/*.yaml")):
        if path.parent.name.startswith("PF9"):  # file checks: unrendered templates, schema errors
            continue
        try:
            docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        kinds = {d.get("kind") for d in docs}
        if kinds & KINDS and not kinds & CONTEXT_KINDS and all(isinstance(d.get("metadata"), dict) for d in docs):
            files.append(path)
    return files


def _gator(stream: Path, objects: Path) -> set[tuple[str, str, str]]:
    done = subprocess.run(
        [str(GATOR), "test", "-f", str(stream), "-f", str(objects), "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HOME": str(stream.parent)},
    )
    assert done.returncode in (0, 1), done.stderr
    results = json.loads(done.stdout or "[]") or []
    out = set()
    for r in results:
        obj = r.get("violatingObject") or r.get("resource") or {}
        rule = r["msg"].split(" ", 1)[0]
        out.add((obj.get("kind", ""), obj.get("metadata", {}).get("name", ""), rule))
    return out


def _check(path: Path, rules: list[str], cwd: Path) -> set[tuple[str, str, str]]:
    done = _podfit("check", str(path), "--format", "json", "--select", ",".join(rules), cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return {
        (f["object"]["kind"], f["object"]["name"], f["rule"])
        for f in report["findings"]
        if f["object"] and f["object"]["kind"] in KINDS
    }


@needs_gator
@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gator_agrees_with_check(fixture: Path, exported: Path) -> None:
    rules = _rule_ids()
    denied = _gator(exported, fixture)
    assert denied == _check(fixture, rules, exported.parent)
    if fixture.name.startswith("fail_") and fixture.parent.name in rules:
        assert fixture.parent.name in {rule for _, _, rule in denied}


def test_fixtures_cover_every_exported_rule() -> None:
    covered = {p.parent.name for p in _fixtures()}
    assert set(_rule_ids()) <= covered


def _compliant(kind: str) -> dict:
    container = {
        "name": "app",
        "image": "app:1",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
    }
    pod_spec = {"containers": [container]}
    template = {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}
    group = next(g for g, ks in ADMISSION_KINDS if kind in ks)
    obj: dict = {
        "apiVersion": f"{group}/v1" if group else "v1",
        "kind": kind,
        "metadata": {"name": f"ok-{kind.lower()}"},
    }
    if kind == "Pod":
        obj["spec"] = pod_spec
    elif kind == "CronJob":
        obj["spec"] = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}
    else:
        obj["spec"] = {"selector": {"matchLabels": {"app": "a"}}, "template": template}
    return obj


@needs_gator
def test_compliant_object_of_every_kind_is_admitted(exported: Path, tmp_path: Path) -> None:
    objects = tmp_path / "compliant.yaml"
    objects.write_text(yaml.safe_dump_all([_compliant(k) for k in sorted(KINDS)]))
    assert _check(objects, _rule_ids(), tmp_path) == set()
    assert _gator(exported, objects) == set()


@needs_gator
def test_suppression_annotation_exempts_at_admission(exported: Path, tmp_path: Path) -> None:
    pod = _compliant("Pod")
    del pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    del pod["spec"]["containers"][0]["resources"]["limits"]["cpu"]
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump(pod))
    assert ("Pod", "ok-pod", "PF101") in _gator(exported, plain)
    pod["metadata"]["annotations"] = {"ignore.podfit.io/cpu-request-missing": "batch pod, measured"}
    quiet = tmp_path / "quiet.yaml"
    quiet.write_text(yaml.safe_dump(pod))
    assert ("Pod", "ok-pod", "PF101") not in _gator(exported, quiet)


@pytest.mark.parametrize(
    "args",
    [
        ["--select", "PF999"],
        ["--option", "PF104.tolerance-percent=-1"],
        ["--option", "PF104.no-such=1"],
        ["--select", "PF202"],
    ],
    ids=["unknown-rule", "out-of-range", "unknown-option", "nothing-at-admission"],
)
def test_bad_input_is_a_usage_error(args: list[str], tmp_path: Path) -> None:
    done = _podfit("export", "gatekeeper", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr


def test_config_that_suppresses_everything_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / ".podfit.yaml"
    config.write_text("ignore: [" + ", ".join(_rule_ids()) + "]\n")
    done = _podfit("export", "gatekeeper", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert "no rule" in done.stderr


def test_stream_names_what_stays_in_ci(exported: Path) -> None:
    head = [line for line in exported.read_text().splitlines() if line.startswith("#")]
    text = "\n".join(head)
    for rid in ("PF202", "PF302"):
        assert rid in text
    assert "packing" in text
    docs = [d for d in yaml.safe_load_all(exported.read_text()) if d]
    actions = {
        d["metadata"]["annotations"]["podfit.io/rule"]: d["spec"]["enforcementAction"]
        for d in docs
        if d["kind"].startswith("PodfitPF")
    }
    assert actions["PF101"] == "deny" and actions["PF104"] == "warn" and actions["PF113"] == "dryrun"


@needs_gator
def test_threshold_and_namespace_reach_gator(tmp_path: Path) -> None:
    """PF104's tolerance, given on the command line, is what gator applies (a 4-CPU limit over a
    1-CPU peak is 300% above it), and an excluded namespace is not judged."""
    fixture = ROOT / "testdata" / "PF104" / "fail_cpu_limit_above_peak.yaml"

    def denied(*args: str) -> set[str]:
        out = tmp_path / "gk.yaml"
        done = _podfit("export", "gatekeeper", "--select", "PF104", "-o", str(out), *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return {rule for _, _, rule in _gator(out, fixture)}

    assert denied("--option", "PF104.tolerance-percent=299") == {"PF104"}
    assert denied("--option", "PF104.tolerance-percent=300") == set()
    shop = tmp_path / "shop.yaml"
    doc = yaml.safe_load(fixture.read_text())
    doc["metadata"]["namespace"] = "batch"
    shop.write_text(yaml.safe_dump(doc))
    fixture = shop
    assert denied() == {"PF104"}
    assert denied("--exclude-namespace", "batch") == set()


def test_libraries_move_under_gatekeeper_lib_namespace() -> None:
    """Every module a template carries lives under lib. and references nothing outside it (what
    Gatekeeper's rewriter accepts), and no METADATA call is left (Gatekeeper parses none)."""
    from podfit.admission import _libs, _under_lib

    root = ROOT / "policies"
    sources = [PolicySource(p.relative_to(root).as_posix(), p.read_text()) for p in sorted(root.rglob("*.rego"))]
    for source in _libs(sources):
        text = _under_lib(source.text)
        assert text.count("package lib.podfit.") == 1, source.path
        code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
        assert not [line for line in code if "data.podfit." in line], source.path
        calls = [line for line in code if "data.lib.podfit.lib." in line and not line.startswith("import ")]
        assert not [line for line in calls if "(" in line.split("data.lib.podfit.lib.", 1)[1]], source.path


def test_exported_stream_is_no_workload_to_podfit(exported: Path) -> None:
    """podfit itself reads the stream without findings or failure (a CI job may lint it)."""
    done = _podfit("check", str(exported), "--format", "json", "--allow-empty", cwd=exported.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["findings"] == []


CEL_EVAL = ROOT / ".tools" / "bin" / "cel-eval"
needs_cel = pytest.mark.skipif(not CEL_EVAL.exists(), reason="cel-eval not built (make cel-eval)")


def _cel(stream: str, objects: list[dict]) -> set[tuple[str, str, str]]:
    policies = [
        {
            "name": d["metadata"]["annotations"]["podfit.io/rule"],
            "matchConditions": d["spec"].get("matchConditions", []),
            "variables": d["spec"].get("variables", []),
            "validations": d["spec"]["validations"],
        }
        for d in yaml.safe_load_all(stream)
        if d and d["kind"] == "ValidatingAdmissionPolicy"
    ]
    done = subprocess.run(
        [str(CEL_EVAL)],
        input=json.dumps({"policies": policies, "objects": objects}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = set()
    for v in json.loads(done.stdout):
        assert v["message"].startswith(v["policy"] + " "), v  # an evaluation error is no verdict
        obj = objects[v["object"]]
        out.add((obj["kind"], obj["metadata"]["name"], v["policy"]))
    return out


@pytest.fixture(scope="module")
def vap_stream(tmp_path_factory: pytest.TempPathFactory) -> str:
    cwd = tmp_path_factory.mktemp("vap")
    done = _podfit("export", "vap", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _cel_rules(stream: str) -> list[str]:
    return [
        d["metadata"]["annotations"]["podfit.io/rule"]
        for d in yaml.safe_load_all(stream)
        if d and d["kind"] == "ValidatingAdmissionPolicy"
    ]


@needs_cel
def test_cel_agrees_with_check(vap_stream: str, tmp_path: Path) -> None:
    """Every fixture's objects of a matched kind, judged by the API server's CEL environment, get
    the verdicts `podfit check` gives for the rules with CEL."""
    rules = _cel_rules(vap_stream)
    assert rules
    fired: set[str] = set()
    for fixture in _fixtures():
        objects = [d for d in yaml.safe_load_all(fixture.read_text()) if isinstance(d, dict) and d.get("kind") in KINDS]
        got = _cel(vap_stream, objects)
        assert got == _check(fixture, rules, tmp_path), fixture
        fired |= {rule for _, _, rule in got}
    assert fired == set(rules)


@needs_cel
def test_cel_admits_a_compliant_object_of_every_kind(vap_stream: str) -> None:
    assert _cel(vap_stream, [_compliant(k) for k in sorted(KINDS)]) == set()


def test_vap_actions_follow_severity(vap_stream: str) -> None:
    bindings = [d for d in yaml.safe_load_all(vap_stream) if d and d["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {b["metadata"]["annotations"]["podfit.io/rule"]: b["spec"]["validationActions"] for b in bindings} == {
        "PF103": ["Deny"],
        "PF105": ["Deny"],
    }


@pytest.mark.parametrize("args", [["--select", "PF999"], ["--select", "PF101"]], ids=["unknown-rule", "no-cel"])
def test_vap_bad_input_is_a_usage_error(args: list[str], tmp_path: Path) -> None:
    done = _podfit("export", "vap", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr
