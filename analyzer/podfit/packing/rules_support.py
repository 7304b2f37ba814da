"""Glue between the packing analyzer and the Python rules PF303, PF601–PF604.

The analysis runs once per check (cached on the rule context's objects and platform) and every
packing rule reads from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import Location
from .adapter import PackInputs, inputs_from
from .engine import Analysis, analyze

__all__ = ["MISSING_POOLS", "PackingFacts", "facts_for", "skip_reason", "time_budget", "headroom_share",
           "pool_location"]

MISSING_POOLS = "node pools (platform nodePools, a TanzuKubernetesCluster or a Cluster API Cluster with topology)"


@dataclass(frozen=True)
class PackingFacts:
    inputs: PackInputs
    analysis: Analysis | None


_cache: dict[str, Any] = {}


def _seconds(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    from ..commands.pack import parse_duration

    return parse_duration(str(value))


def time_budget(ctx) -> float:
    return float(ctx.for_rule("PF601").option("time-budget"))


def headroom_share(ctx) -> int:
    return int(ctx.for_rule("PF603").option("headroom"))


def _inputs(ctx) -> PackInputs:
    return inputs_from(ctx.workloads, ctx.platform, ctx.node_pools)


def skip_reason(ctx) -> str | None:
    if not ctx.node_pools:
        return MISSING_POOLS  # before building the pod inputs: that costs on large corpora
    inputs = facts_for(ctx, analyse=False).inputs
    if not inputs.pools:
        if ctx.node_pools and inputs.unknown_classes:
            return "VM classes " + ", ".join(sorted(set(inputs.unknown_classes))) + " in the platform's vmClasses"
        return MISSING_POOLS
    return None


def facts_for(ctx, analyse: bool = True) -> PackingFacts:
    key = (id(ctx.objects), id(ctx.platform), id(ctx.config))
    hit = _cache.get("facts")
    if hit is not None and hit[0] == key and hit[1] is ctx.objects and (hit[2].analysis is not None or not analyse):
        return hit[2]
    inputs = hit[2].inputs if hit is not None and hit[0] == key and hit[1] is ctx.objects else _inputs(ctx)
    analysis = None
    if analyse and inputs.pools:
        analysis = analyze(inputs.pods, inputs.pools, inputs.classes, overhead=inputs.overhead,
                           daemons=inputs.daemons, max_pods=inputs.max_pods, numa_cores=inputs.numa_cores,
                           numa_memory=inputs.numa_memory, share_percent=headroom_share(ctx),
                           time_budget=time_budget(ctx), family=inputs.family)
    facts = PackingFacts(inputs, analysis)
    _cache["facts"] = (key, ctx.objects, facts)
    return facts


def pool_location(inputs: PackInputs, pool_name: str) -> Location:
    """Where a node pool was declared (profile or cluster manifest); else the first workload's file."""
    loc = getattr((inputs.pool_sources or {}).get(pool_name), "location", None)
    if loc is not None:
        return loc
    first = next(iter(inputs.workloads.values()), None)
    return Location(first.location.file if first is not None else "", 0)


def advice_withheld(inputs: PackInputs) -> str | None:
    """Why sizing advice (PF602, PF604) would mislead, or None: pods left out of packing because
    their node selection is unknown, or pods that request nothing (every class would look idle)."""
    if inputs.unknown:
        return "some pods were left out of packing (PF605)"
    if inputs.pods and not any(p.cpu or p.memory for p in inputs.pods):
        return "no pod requests CPU or memory (PF101, PF102, PF105)"
    return None
