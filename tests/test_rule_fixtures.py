"""Every Python rule on its own fixtures, through the real CLI, with no list of rules to extend:
each testdata/<ID>/fail_* raises the rule, each pass_* does not, and the rule is not skipped.
podfit runs in the fixture's folder: a file fixture with testdata/<ID>/platform.yaml when there is
one and its usage files (<fixture>.<kind>.json, .usage.json, .usage.txt); a directory fixture is a
repository, its manifests under deploy/, with its own platform.yaml and .podfit.yaml. Rego rules'
fixtures are test_rego_fixtures.py's; what a finding says is each rule's own tests'."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.catalogue import load_catalogue
from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
EMPTY_CONFIG = ROOT / "tests" / "data" / "empty-config.yaml"
PYTHON_RULES = sorted(
    r.id for r in load_catalogue().values() if r.engine == "python" and r.defined_in != "catalogue.yaml"
)


def fixtures() -> list[Path]:
    return sorted(
        p
        for rule in PYTHON_RULES
        for p in (ROOT / "testdata" / rule).glob("*")
        if p.name.startswith(("fail_", "pass_")) and (p.is_dir() or p.suffix == ".yaml")
    )


def usage_files(fixture: Path) -> list[Path]:
    return sorted(
        p
        for p in fixture.parent.glob(fixture.stem + ".*")
        if p.suffix != ".yaml" and not p.name.endswith(".expected.json")
    )


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path: Path):
    rule = path.parent.name
    args = ["check", "--rule", rule, "--format", "json", "--engine", "embedded", "--fail-on", "never"]
    where = path.parent if path.is_file() else path  # podfit runs in the fixture's folder
    if (where / "platform.yaml").is_file():
        args += ["--platform", "platform.yaml"]
    args += ["--config", ".podfit.yaml" if (where / ".podfit.yaml").is_file() else str(EMPTY_CONFIG)]
    if path.is_file():
        args += [path.name, *[a for u in usage_files(path) for a in ("--usage", u.name)]]
    else:  # a repository: its manifests under deploy/
        args.append("deploy")
    cwd = os.getcwd()
    os.chdir(where)
    try:
        res = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    fired = [f for f in report["findings"] if f["rule"] == rule]
    if path.name.startswith("fail_"):
        assert not [s for s in report["skipped_rules"] if s["rule"] == rule], report["skipped_rules"]
        assert fired, report["findings"]
    else:  # silent, or skipped where its facts are absent (PF701 without an NSX-T load balancer)
        assert fired == [], fired
