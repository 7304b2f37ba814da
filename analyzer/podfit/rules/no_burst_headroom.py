"""## What it does
After packing, the nodes cannot absorb the gap between requests and limits (the expected peak).

## Why it matters
Pods packed by requests on nodes without room for their limits are throttled or OOM-killed at peak;
the study chose four nodes over three for this headroom. With measured usage (check --usage), a pod
whose running containers were all measured counts its measured peak (the sum of their max) − request
instead of its limit − request: the burst it took, not the one it may take; a pod without limits
then has a burst. Pods asking for an extended resource (a GPU) run only on the nodes offering it:
their burst must also fit those nodes' free capacity, whatever the other nodes have free.

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
The check is cluster-wide (the placement is one of many the scheduler may choose), and once more
per extended resource the pods ask for (``nvidia.com/gpu``): the burst of the pods asking for it
against the free capacity of the nodes whose pool offers it (a pool that does not state what it
offers counts, as packing lets such pods land there). Packing places device pods nowhere else, and
a node whose devices are all taken takes no other device pod, so the free CPU and memory of the
other nodes is out of their reach. One finding per scope that is short (the device scopes only
when the cluster-wide check holds).
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
from ..words import plural

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
        return f"Σ(measured peak − request) over {plural(pods, 'pod')}"
    return f"Σ(peak − request) (the measured peak of {measured_pods} of {pods} pods, the limit of the others)"


def check(ctx) -> Iterator[Finding]:
    for facts in per_cluster(ctx):
        yield from _check(facts)


def _short(needed_cpu: int, free_cpu: int, needed_memory: int, free_memory: int) -> str:
    short = []
    if free_cpu < needed_cpu:
        short.append(f"CPU {format_cpu(needed_cpu)} needed, {format_cpu(free_cpu)} free")
    if free_memory < needed_memory:
        short.append(
            f"memory {format_memory(needed_memory, exact=False)} needed, {format_memory(free_memory, exact=False)} free"
        )
    return "; ".join(short)


def _check(facts: PackingFacts) -> Iterator[Finding]:
    a = facts.analysis
    if a is None or not a.fit.feasible or a.headroom.ok:
        return
    h = a.headroom
    pool = a.pools[0].name
    loc, obj = pool_anchor(facts, pool)
    for d in h.devices:
        if d.ok or not h.cluster_ok:
            continue  # short everywhere: the finding below says so
        # the first pool offering the device, where the finding points
        offering = next((p.name for p in a.pools if p.extended is None or dict(p.extended).get(d.resource)), pool)
        d_loc, d_obj = pool_anchor(facts, offering)
        yield Finding(
            rule=ID,
            message=(
                f"{facts.prefix}no burst headroom for the {plural(d.pods, 'pod')} asking for "
                f"{d.resource}: they run only on the {plural(d.nodes, 'node')} offering it, whose "
                f"free capacity after packing does not hold {h.share_percent}% of their "
                f"{burst_term(d.measured_pods, d.pods)} ({_short(d.needed_cpu, d.free_cpu, d.needed_memory, d.free_memory)}); "
                "the other nodes' free capacity is out of their reach"
            ),
            location=d_loc,
            object=d_obj,
            details=facts.details(
                {
                    "share_percent": h.share_percent,
                    "resource": d.resource,
                    "pods": d.pods,
                    "nodes": d.nodes,
                    "needed_cpu": d.needed_cpu,
                    "needed_memory": d.needed_memory,
                    "free_cpu": d.free_cpu,
                    "free_memory": d.free_memory,
                }
            ),
        )
    if h.cluster_ok:
        return
    short = _short(h.needed_cpu, h.free_cpu, h.needed_memory, h.free_memory)
    extra = {"measured_pods": h.measured_pods} if h.measured_pods else {}
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}no burst headroom: {h.share_percent}% of {burst_term(h.measured_pods, sum(p.count for p in facts.inputs.pods))} does not fit "
            f"the free capacity after packing ({short})"
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
