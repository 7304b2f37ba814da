"""The regression corpus: repository layouts under testdata/repos/, each checked with every platform.

Each directory of ``testdata/repos/`` is a small repository tree written for podfit (no third-party
files), shaped like what public repositories hold: kustomize bases and overlays, provider variants of
one controller (with and without a ``.podfit.yaml`` mapping them to clusters), an unrendered Helm
chart, kube-system DaemonSets beside a TanzuKubernetesCluster, LimitRanges per namespace, Jobs as
Helm hooks, a dozen microservices of mixed quality, vSphere Namespace workloads, a collection of
independent examples, and a well-sized app that must pass.

For every layout and every platform (the built-in default and each ``testdata/platforms/*.yaml``)
the test runs, from the layout's directory (so that its ``.podfit.yaml``, when it has one, is found
the way a user's is: in the current directory)::

    podfit check <the layout's top-level entries but expected/> [--platform ../../platforms/P.yaml] --format json

reduces the report to a stable form (the exit status; the config file found; the summary counts; the files that were not
parsed and why; the rules skipped for want of facts; each finding as rule, severity, file relative to
the layout, line, object, container and message) and compares it whole with
``testdata/repos/<layout>/expected/<platform>.json`` (``default.json`` for the built-in platform).

A changed verdict anywhere in the corpus fails here. When the change is intended, regenerate the
expected files and read the diff before committing it::

    PODFIT_UPDATE_EXPECTED=1 .venv/bin/python -m pytest tests/test_repos.py

The expected files record what podfit says, not what it should say: a wrong verdict is flagged in
review (and fixed in podfit), never edited into an expected file by hand.
"""

from __future__ import annotations

import difflib
import gc
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "testdata" / "repos"
PLATFORMS = ROOT / "testdata" / "platforms"
UPDATE = os.environ.get("PODFIT_UPDATE_EXPECTED") == "1"
DEFAULT = "default"


def layouts() -> list[str]:
    return sorted(p.name for p in REPOS.iterdir() if p.is_dir() and not p.name.startswith("."))


def platforms() -> list[str]:
    return [DEFAULT] + sorted(p.stem for p in PLATFORMS.glob("*.yaml"))


def inputs(layout: Path) -> list[str]:
    """What a user would name: the layout's top-level entries, without hidden ones (.podfit.yaml is
    read as the config) and without expected/ (the stored reports)."""
    return sorted(p.name for p in layout.iterdir() if not p.name.startswith(".") and p.name != "expected")


def command(layout: Path, platform: str) -> list[str]:
    args = ["check", *inputs(layout)]
    if platform != DEFAULT:
        args += ["--platform", os.path.relpath(PLATFORMS / f"{platform}.yaml", layout)]
    return args + ["--format", "json"]


def _object(obj: dict[str, Any] | None) -> str | None:
    if not obj:
        return None
    ns = obj.get("namespace") or ""
    return f"{obj.get('kind')} {ns + '/' if ns else ''}{obj.get('name')}"


def _file(path: str | None, layout: Path) -> str | None:
    if not path:
        return path
    p = Path(path)
    return os.path.relpath(p if p.is_absolute() else layout / p, layout).replace(os.sep, "/")


_K8S_RELEASE = re.compile(r"\(Kubernetes \d+\.\d+\)")


def reduce(report: dict[str, Any], exit_code: int, args: list[str], layout: Path) -> dict[str, Any]:
    """The stable form of one run: everything a verdict depends on, nothing that moves with the
    checkout (absolute paths, versions, the engine's name, fix texts and details)."""
    findings = [
        {
            "rule": f["rule"],
            "severity": f["severity"],
            "file": _file(f.get("file"), layout),
            "line": f.get("line"),
            "object": _object(f.get("object")),
            "container": f.get("container"),
            # the schemas' release is the newest podfit ships (schemas/kubernetes), which a new release moves
            "message": _K8S_RELEASE.sub("(Kubernetes N)", f["message"]),
        }
        for f in report["findings"]
    ]
    findings.sort(
        key=lambda f: (
            f["file"] or "",
            f["line"] or 0,
            f["rule"],
            f["object"] or "",
            f["container"] or "",
            f["message"],
        )
    )
    return {
        "command": "podfit " + " ".join(args),
        "exit": exit_code,
        "config": report.get("config"),
        "summary": report["summary"],
        "not_parsed": [
            {"path": _file(f["path"], layout), "status": f["status"], "reason": f["reason"]}
            for f in report["files"]
            if f["status"] != "parsed"
        ],
        "skipped_rules": sorted(r["rule"] for r in report.get("skipped_rules", [])),
        "findings": findings,
    }


def dump(reduced: dict[str, Any]) -> str:
    """JSON with one finding per line, so that a changed verdict is a one-line diff."""
    lines = ["{"]
    keys = list(reduced)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = reduced[key]
        if isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            lines += [
                f"    {json.dumps(v, ensure_ascii=False)}{',' if j < len(value) - 1 else ''}"
                for j, v in enumerate(value)
            ]
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def run(layout: Path, platform: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    args = command(layout, platform)
    monkeypatch.chdir(layout)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        gc.enable()  # `check` turns the cyclic collector off for its (normally whole-process) run
    stdout = getattr(result, "stdout", result.output)
    assert result.exit_code in (0, 1), f"podfit {' '.join(args)} exited {result.exit_code}:\n{result.output}"
    return reduce(json.loads(stdout), result.exit_code, args, layout)


CASES = [pytest.param(layout, platform, id=f"{layout}-{platform}") for layout in layouts() for platform in platforms()]


@pytest.mark.parametrize(("name", "platform"), CASES)
def test_layout_on_platform(name: str, platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = REPOS / name
    expected_path = layout / "expected" / f"{platform}.json"
    actual = run(layout, platform, monkeypatch)
    text = dump(actual)
    if UPDATE:
        expected_path.parent.mkdir(exist_ok=True)
        if not expected_path.exists() or expected_path.read_text(encoding="utf-8") != text:
            expected_path.write_text(text, encoding="utf-8")
            # a run that rewrote a verdict is never a pass: read the diff, then run again without it
            pytest.fail(f"PODFIT_UPDATE_EXPECTED: wrote {expected_path.relative_to(ROOT)}; review the diff")
        return
    assert expected_path.exists(), (
        f"{expected_path.relative_to(ROOT)} is missing: run with PODFIT_UPDATE_EXPECTED=1 and review it"
    )
    expected_text = expected_path.read_text(encoding="utf-8")
    if json.loads(expected_text) != actual:
        diff = "".join(
            difflib.unified_diff(
                expected_text.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"expected/{platform}.json",
                tofile="podfit now",
            )
        )
        pytest.fail(f"{name} on {platform}: the verdicts changed (PODFIT_UPDATE_EXPECTED=1 regenerates):\n{diff}")


def test_expected_files_match_the_platforms() -> None:
    """Every layout has an expected report for each platform, and none for a platform that is gone."""
    if UPDATE:
        removed = []
        for name in layouts():
            for stale in set(p.stem for p in (REPOS / name / "expected").glob("*.json")) - set(platforms()):
                (REPOS / name / "expected" / f"{stale}.json").unlink()
                removed.append(f"{name}/expected/{stale}.json")
        if removed:
            pytest.fail(f"PODFIT_UPDATE_EXPECTED: removed {', '.join(removed)}; review the diff")
    problems = []
    for name in layouts():
        have = {p.stem for p in (REPOS / name / "expected").glob("*.json")}
        if have != set(platforms()):
            problems.append(f"{name}: expected/ has {sorted(have)}, the platforms are {platforms()}")
    assert not problems, "\n".join(problems)


def test_corpus_covers_the_layouts_it_promises() -> None:
    """The layouts the corpus exists for are all there (a renamed one must be renamed here too)."""
    assert {
        "kustomize-app",
        "ingress-controller",
        "ingress-controller-clusters",
        "helm-chart",
        "kube-system",
        "team-namespaces",
        "jobs-hooks",
        "microservices",
        "vsphere-pods",
        "examples-collection",
        "well-sized-app",
    } <= set(layouts())
    assert (REPOS / "ingress-controller-clusters" / ".podfit.yaml").is_file()
    assert not (REPOS / "ingress-controller" / ".podfit.yaml").exists()


@pytest.mark.parametrize("platform", platforms())
def test_the_well_sized_app_passes_on_every_platform(platform: str) -> None:
    """The layout with nothing wrong: a regenerated expected file may not turn it into a failure
    (a false positive there is a bug in podfit, not a new expectation)."""
    expected = json.loads((REPOS / "well-sized-app" / "expected" / f"{platform}.json").read_text(encoding="utf-8"))
    assert expected["exit"] == 0 and expected["summary"]["findings"]["error"] == 0, expected["findings"]
