"""Rego METADATA against the catalogue: every Rego rule has exactly one policy file, at
policies/<category>/<slug with underscores>.rego, package podfit.<category>.<slug>, whose package
METADATA has the catalogue's title, summary (description), id, severity and slug."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import tool
from podfit.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "policies"
CATALOGUE = load_catalogue()
REGO = {r.id: r for r in CATALOGUE.values() if r.engine == "rego"}


def rule_files() -> list[Path]:
    return sorted(p for p in POLICIES.rglob("*.rego") if "lib" not in p.parts and not p.name.endswith("_test.rego"))


def metadata(path: Path) -> tuple[dict, str]:
    """The package METADATA block (YAML in comments before `package`) and the package name."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"^# METADATA\n((?:#.*\n)+?)package ([\w.]+)", text, re.M)
    assert m, f"{path}: no METADATA block right before the package line"
    block = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in m.group(1).splitlines())
    return yaml.safe_load(block), m.group(2)


def test_one_policy_file_per_rego_rule():
    ids = [metadata(p)[0]["custom"]["id"] for p in rule_files()]
    assert sorted(ids) == sorted(REGO)


@pytest.mark.parametrize("path", rule_files(), ids=lambda p: p.stem)
def test_metadata_matches_catalogue(path: Path):
    meta, package = metadata(path)
    rule = REGO[meta["custom"]["id"]]
    assert meta["title"] == rule.title
    assert " ".join(meta["description"].split()) == " ".join(rule.summary.split())
    assert meta["custom"]["severity"] == rule.severity
    assert meta["custom"]["slug"] == rule.slug
    slug = rule.slug.replace("-", "_")
    assert path == POLICIES / rule.category / f"{slug}.rego"
    assert package == f"podfit.{rule.category}.{slug}"
    # id and severity are written once, in the METADATA: the rule builds its findings from its
    # annotation chain (podfit.lib.result.finding), and its body repeats neither
    body = path.read_text(encoding="utf-8").split(f"package {package}\n", 1)[1]
    assert re.search(r"^findings contains \w+ if", body, re.M)
    assert "result.finding(rego.metadata.chain()," in body
    assert rule.id not in body
    assert not re.search(r'"(error|warning|info)"', body)
    assert not re.search(r"^(deny|warn|violation)\b", body, re.M), "conftest's deny/warn come from podfit.lib.conftest"
    assert (path.parent / f"{slug}_test.rego").is_file(), "every rule has a _test.rego beside it"


def test_conftest_lib_collects_every_rule_category():
    """podfit.lib.conftest turns the findings of data.podfit[category][rule] into deny/warn lines
    for the categories it lists: a rule in a category it does not list would be invisible to plain
    conftest."""
    text = (POLICIES / "lib" / "conftest.rego").read_text(encoding="utf-8")
    (listed,) = re.findall(r"some category in \[([^\]]*)\]", text)
    assert "data.podfit[category][rule].findings" in text
    assert set(re.findall(r'"(\w+)"', listed)) == {r.category for r in REGO.values()}


@pytest.mark.tools
@pytest.mark.skipif(tool("opa") is None, reason="opa not built (make tools)")
def test_opa_reads_the_same_metadata():
    proc = subprocess.run(
        [tool("opa"), "inspect", "-a", "--format", "json", str(POLICIES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = {}
    for a in json.loads(proc.stdout).get("annotations") or ():
        ann = a["annotations"]
        if ann.get("scope") == "package" and "id" in (ann.get("custom") or {}):
            found[ann["custom"]["id"]] = (ann["title"], ann["custom"]["severity"], ann["custom"]["slug"])
    assert found == {r.id: (r.title, r.severity, r.slug) for r in REGO.values()}
