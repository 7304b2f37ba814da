"""## What it does
After packing, capacity is left on nodes that no pod could use; fewer or other nodes would do.

## Why it matters
Stranded capacity is paid for but never used (for example CPU left on nodes whose memory is full,
or on GPU nodes whose GPUs the pods allowed there have all taken).
Not reported when the pools already are the least-waste VM class and node count (PF604's advice),
since no class of the platform strands less.

## Example
```yaml
# memory-heavy pods on CPU-heavy nodes
```

## How to fix
Choose a VM class whose CPU-to-memory ratio matches the workloads, or fewer nodes (see PF604).

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), right-sizing
"""

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
from ..quantity import format_cpu, format_memory
from ..words import plural

ID = "PF602"
SLUG = "stranded-capacity"
TITLE = "Stranded node capacity"
SEVERITY = "info"
CATEGORY = "packing"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = (
    Option("percent", "integer", 10, "Stranded share of a pool's capacity worth reporting, in percent.", minimum=0),
)


def check(ctx) -> Iterator[Finding]:
    percent = int(ctx.option("percent"))
    for facts in per_cluster(ctx):
        yield from _check(facts, percent)


def _check(facts: PackingFacts, percent: int) -> Iterator[Finding]:
    a = facts.analysis
    if a is None or not a.fit.feasible or advice_withheld(facts.inputs):
        return
    # every node of the pools is in the placement: their allocatable, pool by pool
    total_cpu = sum(p.allocatable[0] * p.count for p in a.pools)
    total_mem = sum(p.allocatable[1] * p.count for p in a.pools)
    s = a.stranded
    if not (s.cpu * 100 > percent * total_cpu or s.memory * 100 > percent * total_mem):
        return
    rec = a.recommendation
    if rec.vm_class is not None and {p.vm_class for p in a.pools} == {rec.vm_class}:
        if sum(p.count for p in a.pools) == rec.nodes:
            return  # the pools already are the least-waste choice (PF604): no class strands less
    pool = next(n.pool for n in a.fit.nodes if n.name in s.nodes)
    loc, obj = pool_anchor(facts, pool)
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}{format_cpu(s.cpu)} CPU and {format_memory(s.memory, exact=False)} memory are stranded on "
            f"{plural(len(s.nodes), 'node')} ({', '.join(s.nodes[:5])}{'…' if len(s.nodes) > 5 else ''}): no pod fits "
            "what is left there"
            + (
                f"; consider {a.recommendation.nodes} × {a.recommendation.vm_class}"
                if a.recommendation.vm_class
                else ""
            )
        ),
        location=loc,
        object=obj,
        details=facts.details(
            {
                "stranded_cpu": s.cpu,
                "stranded_memory": s.memory,
                "nodes": list(s.nodes),
                "allocatable_cpu": total_cpu,
                "allocatable_memory": total_mem,
                "threshold_percent": percent,
            }
        ),
    )
