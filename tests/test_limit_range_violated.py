"""PF106 limit-range-violated: the fixtures' findings compared whole, and the admission
semantics (defaults first, an unset default limit taking max, Pod-type sums)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.model import Location, ObjectRef
from podfit.workloads import LimitRangeConstraint, limit_range_violations

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "testdata" / "PF106"

EXPECTED = {
    "fail_container_max_and_ratio.yaml": [
        (
            35,
            "migrate",
            'init container "migrate": LimitRange team-a/container-bounds: memory max limit to request ratio '
            "per Container is 2, but the ratio is 32: the API server rejects the pod",
        ),
        (
            41,
            "api",
            'container "api": LimitRange team-a/container-bounds: maximum cpu usage per Container is 2, '
            "but the limit is 4: the API server rejects the pod",
        ),
        (
            41,
            "api",
            'container "api": LimitRange team-a/container-bounds: memory max limit to request ratio per '
            "Container is 2, but the ratio is 4: the API server rejects the pod",
        ),
    ],
    "fail_pod_min.yaml": [
        (
            13,
            None,
            "LimitRange batch/pod-floor: minimum memory usage per Pod is 256Mi, but the request is 128Mi: "
            "the API server rejects the pod",
        )
    ],
    "pass_within_bounds_after_defaults.yaml": [],
}


def test_every_fixture_has_its_expectation():
    assert sorted(p.name for p in FIXTURES.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings_compared_whole(name):
    r = CliRunner().invoke(main, ["check", str(FIXTURES / name), "--format", "json", "--engine", "embedded"])
    report = json.loads(r.output)
    got = [(f["line"], f["container"], f["message"]) for f in report["findings"] if f["rule"] == "PF106"]
    assert got == EXPECTED[name]
    # fail_ fixtures raise this rule only; pass_ fixtures raise nothing
    assert {f["rule"] for f in report["findings"]} == ({"PF106"} if name.startswith("fail_") else set())
    assert all(f["severity"] == "error" for f in report["findings"])
    assert r.exit_code == (1 if name.startswith("fail_") else 0)


def bound(kind: str, resource: str, value: int, text: str, scope: str = "Container") -> LimitRangeConstraint:
    return LimitRangeConstraint(
        ObjectRef("v1", "LimitRange", "ns", "lr"), Location("f", 1), scope, kind, resource, value, text
    )


@pytest.mark.parametrize(
    "request_, limit, constraint, why",
    [
        (
            None,
            None,
            bound("min", "cpu", 100, "100m"),
            "minimum cpu usage per Container is 100m, but no request is specified",
        ),
        (100, 200, bound("min", "cpu", 100, "100m"), None),
        (50, 200, bound("min", "cpu", 100, "100m"), "minimum cpu usage per Container is 100m, but the request is 50m"),
        (200, 50, bound("min", "cpu", 100, "100m"), "minimum cpu usage per Container is 100m, but the limit is 50m"),
        (100, None, bound("max", "cpu", 2000, "2"), "maximum cpu usage per Container is 2, but no limit is specified"),
        (3000, 2000, bound("max", "cpu", 2000, "2"), "maximum cpu usage per Container is 2, but the request is 3"),
        (2000, 2000, bound("max", "cpu", 2000, "2"), None),
        (
            0,
            100,
            bound("maxLimitRequestRatio", "cpu", 2000, "2"),
            "cpu max limit to request ratio per Container is 2, but no request is specified or the request is 0",
        ),
        (100, 200, bound("maxLimitRequestRatio", "cpu", 2000, "2"), None),
        (
            100,
            201,
            bound("maxLimitRequestRatio", "cpu", 2000, "2"),
            "cpu max limit to request ratio per Container is 2, but the ratio is 2.01",
        ),
        (2**30, 3 * 2**29, bound("maxLimitRequestRatio", "memory", 1500, "1.5"), None),
    ],
)
def test_admission_semantics(request_, limit, constraint, why):
    assert limit_range_violations(request_, limit, constraint) == why
