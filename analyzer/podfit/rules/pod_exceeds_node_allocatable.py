"""## What it does
A pod's requests exceed the allocatable resources of every node pool after system overhead and
DaemonSets.

## Why it matters
Such a pod can never be scheduled; it stays Pending.

## Example
```yaml
resources: {requests: {cpu: 1500m, memory: 9Gi}}   # on medium nodes
```

## How to fix
Use a larger VM class for a node pool, or lower the pod's requests.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), system pod overhead
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..packing.bounds import fits
from ..packing.rules_support import (
    per_cluster,
    skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..quantity import format_cpu, format_memory

ID = "PF303"
SLUG = "pod-exceeds-node-allocatable"
TITLE = "Pod larger than any node"
SEVERITY = "error"
CATEGORY = "packing"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx) -> Iterator[Finding]:
    for facts in per_cluster(ctx, analyse=False):
        inputs = facts.inputs
        for p in inputs.pods:
            allowed = [n for n in inputs.pools if p.allowed_on(n)]
            if not allowed or any(fits(p.demand, n.allocatable) for n in allowed):
                continue  # no pool it may use at all is PF601's (no-matching-pool)
            w = inputs.workloads.get(p.name)
            if w is None:  # a pool's reserved pods: the cluster's own, no manifest's
                continue
            best = max(allowed, key=lambda n: (n.cpu, n.memory))
            yield Finding(
                rule=ID,
                message=(
                    f"{facts.prefix}pod requests {format_cpu(p.cpu)} CPU / {format_memory(p.memory, exact=False)} but the largest "
                    f"node {'it may run on ' if len(allowed) < len(inputs.pools) else ''}({best.vm_class}) has "
                    f"{format_cpu(best.cpu)} CPU / {format_memory(best.memory, exact=False)} allocatable after system overhead and "
                    "DaemonSets: it can never be scheduled"
                ),
                location=w.location,
                object=w.ref,
                details=facts.details(
                    {
                        "cpu_request": p.cpu,
                        "memory_request": p.memory,
                        "allocatable": {n.name: {"cpu": n.cpu, "memory": n.memory, "pods": n.pods} for n in allowed},
                    }
                ),
            )
