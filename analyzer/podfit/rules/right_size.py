"""PF604: the NUMA-fitting VM class and node count with least waste (and the headroom) differ from
the pools in use."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..packing.rules_support import (
    PackingFacts,
    advice_withheld,
    per_cluster,
    pool_location,
    skip_reason,  # noqa: F401 - the packing rules' shared test
)

ID = "PF604"
SLUG = "right-size"
TITLE = "Right-sizing advice"
SEVERITY = "info"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx) -> Iterator[Finding]:
    for facts in per_cluster(ctx):
        yield from _check(facts)


def _check(facts: PackingFacts) -> Iterator[Finding]:
    a = facts.analysis
    if a is None:
        return
    rec = a.recommendation
    if rec.vm_class is None or advice_withheld(facts.inputs):
        return
    classes = {n.vm_class for n in a.pools}
    if len(classes) != 1:
        return  # mixed pools: the single-class recommendation is not comparable (see `podfit pack`)
    (current,) = classes
    count = sum(n.count for n in a.pools)
    if rec.vm_class == current and rec.nodes == count:
        return
    by_class = {c.vm_class: c for c in rec.candidates}
    cur = by_class.get(current)
    best = by_class[rec.vm_class]
    if cur is not None and cur.nodes == count and cur.waste_ppm <= best.waste_ppm:
        return  # as good as the recommendation
    loc = pool_location(facts.inputs, a.pools[0].name)
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}right-size: {rec.nodes} × {rec.vm_class} fit with the least waste "
            f"({best.waste_ppm / 10_000:.1f}% idle) and the burst headroom; the pools use {count} × {current}"
        ),
        location=loc,
        details=facts.details(
            {
                "recommended": {"vm_class": rec.vm_class, "nodes": rec.nodes},
                "current": {"vm_class": current, "nodes": count},
                "candidates": [
                    {"vm_class": c.vm_class, "nodes": c.nodes, "waste_ppm": c.waste_ppm} for c in rec.candidates
                ],
            }
        ),
    )
