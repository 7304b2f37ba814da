"""Plain conftest gives what `podfit check` gives, as the README's conftest section promises: over
every rule fixture under testdata/ (each rule's directory with its platform profile when it has
one), `podfit platform-data --platform P FILES -o data.json` then `conftest test --policy policies/
--all-namespaces --data data.json FILES` reports, file by file, object by object and rule by rule,
the same findings as `podfit check --platform P FILES --format json`, for exactly the rules the
README names as running under conftest. The differences the README names are asserted as such:
PF203 (a simulation) takes PF202's place in `podfit check`, and PF206 PF302's on the same pod."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import tool
from podfit.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = tool("conftest")
PODFIT = [sys.executable, "-m", "podfit"]

pytestmark = [
    pytest.mark.tools,
    pytest.mark.skipif(CONFTEST is None, reason="conftest not built (make tools)"),
]


def readme_conftest_rules() -> tuple[set[str], set[str]]:
    """(the rules the README's conftest section says run under plain conftest, those it says run
    only in `podfit check`), from its two lists of ids."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Plain conftest", 1)[1].split("\n### ", 1)[0] + "\n"
    runs = re.search(r"Under plain conftest run: ([^.]+)\.", section)
    only = re.search(r"Only `podfit check` runs: (.+?)\n\n", section, re.S)
    assert runs and only, "the README's conftest section lists the rules it runs and those it does not"
    return set(re.findall(r"PF\d{3}", runs.group(1))), set(re.findall(r"PF\d{3}", only.group(1)))


def test_readme_names_every_rule_once():
    runs, only = readme_conftest_rules()
    catalogue = load_catalogue()
    assert runs == {r.id for r in catalogue.values() if r.engine == "rego"}
    assert not runs & only and runs | only == set(catalogue)


def groups() -> list[tuple[Path, list[Path]]]:
    """Each rule's fixture directory and its manifests (the YAML directly in it, but its profile)."""
    out = []
    for d in sorted(p for p in (ROOT / "testdata").glob("PF*") if p.is_dir()):
        files = sorted(p for p in d.iterdir() if p.suffix in (".yaml", ".yml", ".json") and p.name != "platform.yaml")
        if files:
            out.append((d, files))
    return out


def _subject(obj: dict) -> str:
    return f"{obj['kind']} {obj['namespace']}/{obj['name']}" if obj.get("namespace") else f"{obj['kind']} {obj['name']}"


def podfit_check(d: Path, files: list[Path], *extra: str) -> tuple[dict, Counter]:
    """The report of `podfit check`, and its findings as conftest lines: (file, failures|warnings, line)."""
    platform = ["--platform", str(d / "platform.yaml")] if (d / "platform.yaml").is_file() else []
    cmd = [*PODFIT, "check", *platform, "--format", "json", "--fail-on", "never", *extra, *map(str, files)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    lines = Counter(
        (
            str(ROOT / f["file"]),
            "failures" if f["severity"] == "error" else "warnings",
            f"{f['rule']} {_subject(f['object'])}: {f['message']}",
        )
        for f in report["findings"]
        if f["object"] is not None
    )
    return report, lines


def plain_conftest(d: Path, files: list[Path], tmp: Path) -> tuple[Counter, set[str]]:
    """conftest's lines over the files, with the data `podfit platform-data` writes for them; and the
    files conftest could not parse."""
    platform = ["--platform", str(d / "platform.yaml")] if (d / "platform.yaml").is_file() else []
    data = tmp / f"{d.name}.json"
    proc = subprocess.run(
        [*PODFIT, "platform-data", *platform, *map(str, files), "-o", str(data)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    lines: Counter = Counter()
    refused: set[str] = set()
    for f in files:  # one run per file: conftest stops at the first file it cannot parse
        proc = subprocess.run(
            [CONFTEST, "test", "--policy", str(ROOT / "policies"), "--all-namespaces", "--no-color"]
            + ["--data", str(data), "-o", "json", str(f)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode in (0, 1), proc.stderr
        if "parse configurations" in proc.stderr:  # (exit 1, as for a failed check)
            refused.add(str(f))
            continue
        for entry in json.loads(proc.stdout):
            for kind in ("failures", "warnings"):
                for r in entry.get(kind) or ():
                    assert entry["namespace"] == "podfit.lib.conftest", r
                    lines[(entry["filename"], kind, r["msg"])] += 1
    return lines, refused


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[tuple[Path, list[Path], dict, Counter, Counter, set[str]]]:
    tmp = tmp_path_factory.mktemp("parity")
    out = []
    for d, files in groups():
        report, checked = podfit_check(d, files)
        found, refused = plain_conftest(d, files, tmp)
        out.append((d, files, report, checked, found, refused))
    return out


def _rule(line: tuple[str, str, str]) -> str:
    return line[2].split(" ", 1)[0]


def test_conftest_equals_podfit_check_on_every_fixture(runs):
    named, _ = readme_conftest_rules()
    compared = Counter()
    for d, _files, report, checked, found, refused in runs:
        # a file conftest cannot parse is one in which podfit checks no object either: it does not
        # parse (PF901, PF907, PF908), or holds no Kubernetes object (JSON lines)
        unchecked = {str(ROOT / f["path"]) for f in report["files"] if f["status"] != "parsed" or not f["objects"]}
        assert refused <= unchecked, d
        want = Counter({k: n for k, n in checked.items() if _rule(k) in named})
        assert set(map(_rule, found)) <= named, d
        only_conftest = found - want
        only_podfit = want - found
        assert not only_podfit, (d, only_podfit)
        ran = {f["rule"] for f in report["findings"]}
        skipped = {s["rule"] for s in report["skipped_rules"]}
        for line in only_conftest:
            rule = _rule(line)
            # the README's named differences, and nothing else
            if rule == "PF202":
                assert "PF203" not in skipped, (d, line)
            else:
                assert rule == "PF302" and "PF206" in ran, (d, line)
                subject = line[2].split(": ", 1)[0].split(" ", 1)[1]
                assert any(
                    f["rule"] == "PF206" and str(ROOT / f["file"]) == line[0] and subject == _subject(f["object"])
                    for f in report["findings"]
                ), (d, line)
        compared.update(_rule(k) for k in found)
    # every named rule is compared on some fixture that raises it
    assert set(compared) == named, named - set(compared)


def test_podfit_check_without_pf203_reports_pf202_as_conftest_does(runs):
    """PF202's difference is PF203's supersession alone: with PF203 left out, `podfit check`
    reports the PF202 findings conftest reports, line for line."""
    seen = 0
    for d, files, _report, _checked, found, _refused in runs:
        conftest_pf202 = Counter({k: n for k, n in found.items() if _rule(k) == "PF202"})
        if not conftest_pf202:
            continue
        _, checked = podfit_check(d, files, "--ignore", "PF203")
        assert Counter({k: n for k, n in checked.items() if _rule(k) == "PF202"}) == conftest_pf202, d
        seen += len(conftest_pf202)
    assert seen > 0
