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
    pool_anchor,
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
    if advice_withheld(facts.inputs):
        return
    if rec.vm_class is None:
        yield from _no_class_fits(facts)
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
    loc, obj = pool_anchor(facts, a.pools[0].name)
    headroom = "and the burst headroom"
    if best.host_limit is not None and best.nodes == best.host_limit and best.nodes > best.min_nodes:
        headroom = f"and as much burst headroom as the hosts allow (they hold at most {best.host_limit} such nodes)"
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}right-size: {rec.nodes} × {rec.vm_class} fit with the least waste "
            f"({best.waste_ppm / 10_000:.1f}% idle) {headroom}; the pools use {count} × {current}"
        ),
        location=loc,
        object=obj,
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


_HOSTS = "the hosts hold at most"


def _no_class_fits(facts: PackingFacts) -> Iterator[Finding]:
    """No VM class can take the pods because the hosts cannot run enough nodes of any class that
    holds them: said once per cluster, with the classes' limits."""
    a = facts.analysis
    assert a is not None
    rec = a.recommendation
    loc, obj = pool_anchor(facts, a.pools[0].name)
    by_hosts = {c: why for c, why in rec.excluded.items() if why.startswith(_HOSTS)}
    if not by_hosts:
        return  # no class holds the largest pod, or none fits a NUMA node: PF303 / PF304 say so
    shown = "; ".join(f"{c}: {why}" for c, why in sorted(by_hosts.items())[:3])
    more = f" (and {len(by_hosts) - 3} more)" if len(by_hosts) > 3 else ""
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}right-size: no VM class fits: the platform's hosts cannot run enough nodes of any "
            f"class that holds the pods ({shown}{more}); add hosts or reduce the requests"
        ),
        location=loc,
        object=obj,
        details=facts.details({"recommended": None, "excluded": dict(sorted(rec.excluded.items()))}),
    )
