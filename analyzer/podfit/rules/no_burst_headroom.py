"""## What it does
After packing, the nodes cannot absorb the gap between requests and limits (the expected peak).

## Why it matters
Pods packed by requests on nodes without room for their limits are throttled or OOM-killed at peak;
the study chose four nodes over three for this headroom. With measured usage (check --usage), a pod
whose running containers were all measured counts its measured peak (the sum of their max) − request
instead of its limit − request: the burst it took, not the one it may take; a pod without limits
then has a burst.

## Example
```yaml
# requests fill the nodes; limits are twice the requests
```

## How to fix
Add a node or use a larger VM class so that Σ(limit − request) (with --usage, Σ(measured peak −
request)) fits the free capacity.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Select the number of worker
nodes"

## Implementation
With measured usage (``check --usage``) a pod whose running containers were all measured counts its
measured peak − request instead of its limit − request: the burst it took, not the one it may take.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..packing.rules_support import (
    PackingFacts,
    per_cluster,
    pool_anchor,
)
from ..packing.rules_support import (
    skip_reason_without_nodes as skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..quantity import format_cpu, format_memory

ID = "PF603"
SLUG = "no-burst-headroom"
TITLE = "No burst headroom"
SEVERITY = "warning"
CATEGORY = "packing"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "headroom",
        "integer",
        100,
        "Share of the gap between requests and limits the nodes must absorb, in percent.",
        minimum=0,
    ),
)


def burst_term(measured_pods: int, pods: int) -> str:
    """What the burst is the sum of: the limits, or the measured peaks where measured."""
    if not measured_pods:
        return "Σ(limit − request)"
    if measured_pods >= pods:
        return f"Σ(measured peak − request) over {pods} pod{'s' if pods != 1 else ''}"
    return f"Σ(peak − request) (the measured peak of {measured_pods} of {pods} pods, the limit of the others)"


def check(ctx) -> Iterator[Finding]:
    for facts in per_cluster(ctx):
        yield from _check(facts)


def _check(facts: PackingFacts) -> Iterator[Finding]:
    a = facts.analysis
    if a is None or not a.fit.feasible or a.headroom.ok:
        return
    h = a.headroom
    short = []
    if h.free_cpu < h.needed_cpu:
        short.append(f"CPU {format_cpu(h.needed_cpu)} needed, {format_cpu(h.free_cpu)} free")
    if h.free_memory < h.needed_memory:
        short.append(
            f"memory {format_memory(h.needed_memory, exact=False)} needed, {format_memory(h.free_memory, exact=False)} free"
        )
    pool = a.pools[0].name
    loc, obj = pool_anchor(facts, pool)
    extra = {"measured_pods": h.measured_pods} if h.measured_pods else {}
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}no burst headroom: {h.share_percent}% of {burst_term(h.measured_pods, sum(p.count for p in facts.inputs.pods))} does not fit "
            f"the free capacity after packing ({'; '.join(short)})"
        ),
        location=loc,
        object=obj,
        details=facts.details(
            {
                "share_percent": h.share_percent,
                "burst_cpu": h.burst_cpu,
                "burst_memory": h.burst_memory,
                "needed_cpu": h.needed_cpu,
                "needed_memory": h.needed_memory,
                "free_cpu": h.free_cpu,
                "free_memory": h.free_memory,
                **extra,
            }
        ),
    )
