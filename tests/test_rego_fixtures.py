"""Every Rego rule's fixtures: each fail_*.yaml raises its own rule and no other, each pass_*.yaml
raises nothing. Fixtures run on the facts of the platform in testdata/<RULE>/platform.yaml when
there is one, else of podfit's built-in default profile (as `podfit check` would): data.podfit is
facts_data(build_facts(objects, platform))."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from podfit.catalogue import load_catalogue
from podfit.engines import get_engine
from podfit.facts import build_facts, facts_data
from podfit.loader import make_object
from podfit.platform import DEFAULT_PLATFORM, parse_platform

ROOT = Path(__file__).resolve().parents[1]
REGO_RULES = sorted(r.id for r in load_catalogue().values() if r.engine == "rego")


def fixture_platform(rule_dir: Path):
    profile = rule_dir / "platform.yaml"
    if profile.is_file():
        return parse_platform(profile.read_text(encoding="utf-8"), str(profile))
    return DEFAULT_PLATFORM


def fixture_inputs(path: Path) -> tuple[list[dict], dict]:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    objects = [make_object(d, str(path)) for d in docs]
    return docs, facts_data(build_facts(objects, fixture_platform(path.parent)))


_ALSO = re.compile(r"^# also raises (PF\d{3}): \S", re.M)


def expected_rules(path: Path) -> set[str]:
    """The Rego rules a fixture raises: its own rule for a fail_ fixture, none for a pass_ one, and
    those a comment line "# also raises PFnnn: why" names (a pass fixture of PF111 showing that a
    BestEffort pod is PF105's alone)."""
    own = {path.parent.name} if path.name.startswith("fail_") else set()
    return own | set(_ALSO.findall(path.read_text(encoding="utf-8")))


def fixtures() -> list[Path]:
    return sorted(p for r in REGO_RULES for p in (ROOT / "testdata" / r).glob("*.yaml") if p.name != "platform.yaml")


@pytest.fixture(scope="module")
def engine():
    return get_engine("embedded")


def test_every_rego_rule_has_pass_and_fail_fixtures():
    for rule in REGO_RULES:
        names = [p.name for p in (ROOT / "testdata" / rule).glob("*.yaml")]
        assert any(n.startswith("fail_") for n in names), f"{rule} has no fail_ fixture"
        assert any(n.startswith("pass_") for n in names), f"{rule} has no pass_ fixture"


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path: Path, engine):
    docs, data = fixture_inputs(path)
    results = engine.evaluate(docs, data)
    rules = {r.rule for r in results}
    assert rules == expected_rules(path), [r.msg for r in results]
    # the severity each result carries is the one its METADATA declares
    assert {(r.rule, r.severity) for r in results} == {(r, load_catalogue()[r].severity) for r in rules}
