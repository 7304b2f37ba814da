"""What podfit is given and what it makes of it: input rules (PF9xx) on their fixtures, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.catalogue import load_catalogue
from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
# rules raised by the loader about files and documents (no Rego engine, no platform facts needed)
INPUT_RULES = ["PF901", "PF905"]
FIXTURES = sorted(p for r in INPUT_RULES for p in (ROOT / "testdata" / r).iterdir() if p.name.startswith(("pass_", "fail_")))


def run(args, input=None):
    return CliRunner().invoke(main, args, input=input, catch_exceptions=False)


def check_json(*args):
    r = run(["check", *args, "--format", "json", *[x for rule in INPUT_RULES for x in ("--rule", rule)]])
    return r, json.loads(r.output)


def test_every_input_rule_has_pass_and_fail_fixtures():
    for rule in INPUT_RULES:
        names = [p.name for p in (ROOT / "testdata" / rule).iterdir()]
        assert any(n.startswith("fail_") for n in names) and any(n.startswith("pass_") for n in names), rule


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_input_fixture(path):
    rule = path.parent.name
    r, report = check_json(str(path))
    found = {f["rule"] for f in report["findings"]}
    if path.name.startswith("fail_"):
        assert found == {rule}, report["findings"]
        severity = load_catalogue()[rule].severity
        assert r.exit_code == (1 if severity == "error" else 0)
    else:
        assert found == set(), report["findings"]
        assert r.exit_code == 0
