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
Use a larger VM class for a node pool, or lower the pod's requests; for an extended resource, run
the pods (or the DaemonSet, with a nodeSelector) on the pools whose nodes offer it.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), system pod overhead

## Implementation
A pod asking for an extended resource (`nvidia.com/gpu`, …) counts it too: a pool whose nodes offer
less of it per node (their `allocatable`, less what DaemonSets there take) cannot run the pod. A
DaemonSet asking for an extended resource that the nodes of a pool it runs on do not offer gets one
finding naming those pools: its pods there stay Pending. A pool at 0 nodes that its cluster
autoscaler scales from zero (`maxCount`) counts among the nodes a pod may get: a pod larger than
every node there is now that fits such a pool is one info finding, saying that it runs only once
the autoscaler adds that node.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..packing.bounds import fits, pod_fits
from ..packing.rules_support import (
    per_cluster,
    skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..quantity import format_cpu, format_memory
from ..words import plural

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
        every = inputs.pools + inputs.standby  # a pool the autoscaler scales from zero is a node it may get
        for p in inputs.pods:
            allowed = [n for n in every if p.allowed_on(n)]
            now = [n for n in allowed if n.count > 0]
            if now and not any(pod_fits(p, n) for n in now) and any(pod_fits(p, n) for n in allowed):
                if (w := inputs.workloads.get(p.name)) is not None:
                    yield _from_zero(facts, p, w, now, [n for n in allowed if n.count == 0 and pod_fits(p, n)])
                continue
            if not allowed or any(pod_fits(p, n) for n in allowed):
                continue  # no pool it may use at all is PF601's (no-matching-pool)
            w = inputs.workloads.get(p.name)
            if w is None:  # a pool's reserved pods: the cluster's own, no manifest's
                continue
            best = max(allowed, key=lambda n: (n.cpu, n.memory))
            if any(fits(p.demand, n.allocatable) for n in allowed):  # CPU and memory fit: an extended resource does not
                asked = ", ".join(f"{v} {r}" for r, v in p.extended)
                offered = "; ".join(
                    f"{n.name}: {', '.join(f'{dict(n.extended or ()).get(r, 0)} {r}' for r, _ in p.extended)}"
                    for n in allowed
                )
                text = (
                    f"pod asks for {asked} but no node it may run on offers that much per node after DaemonSets "
                    f"({offered}): it can never be scheduled"
                )
            else:
                text = (
                    f"pod requests {format_cpu(p.cpu)} CPU / {format_memory(p.memory, exact=False)} but the largest "
                    f"node {'it may run on ' if len(allowed) < len(every) else ''}({best.vm_class}) has "
                    f"{format_cpu(best.cpu)} CPU / {format_memory(best.memory, exact=False)} allocatable after system overhead and "
                    "DaemonSets: it can never be scheduled"
                )
            yield Finding(
                rule=ID,
                message=facts.prefix + text,
                location=w.location,
                object=w.ref,
                details=facts.details(
                    {
                        "cpu_request": p.cpu,
                        "memory_request": p.memory,
                        "allocatable": {
                            n.name: {"cpu": n.cpu, "memory": n.memory, "pods": n.pods, **dict(n.extended or ())}
                            for n in allowed
                        },
                        **({"extended": dict(p.extended)} if p.extended else {}),
                    }
                ),
            )
        yield from _daemons(facts)


def _from_zero(facts, p, w, now, standby) -> Finding:
    """A pod larger than every node there is now that fits a pool the cluster autoscaler scales
    from zero: it runs once the autoscaler adds such a node, which this verdict assumes (info)."""
    best = max(now, key=lambda n: (n.cpu, n.memory))
    sources = facts.inputs.pool_sources or {}
    grown = ", ".join(
        f"{n.name} ({n.vm_class}, 0 now, at most {sources[n.name].most_nodes if n.name in sources else '?'})"
        for n in standby
    )
    return Finding(
        rule=ID,
        message=(
            f"{facts.prefix}pod requests {format_cpu(p.cpu)} CPU / {format_memory(p.memory, exact=False)}, more than "
            f"the largest node there is now ({best.vm_class}: {format_cpu(best.cpu)} CPU / "
            f"{format_memory(best.memory, exact=False)} allocatable): it runs only once the cluster autoscaler adds "
            f"a node to {grown}, which this assumes"
        ),
        location=w.location,
        object=w.ref,
        details=facts.details(
            {
                "cpu_request": p.cpu,
                "memory_request": p.memory,
                "assumes": "cluster-autoscaler scale-from-zero",
                "scaled_from_zero": [n.name for n in standby],
            }
        ),
        severity="info",
    )


def _daemons(facts) -> Iterator[Finding]:
    """DaemonSets whose pods ask for an extended resource that some pool they run on lacks."""
    inputs = facts.inputs
    by_name = {d.name: d for d in inputs.daemons}
    for name, lacking in sorted(inputs.daemon_lacking.items()):
        w = inputs.workloads.get(name)
        d = by_name.get(name)
        if w is None or d is None:
            continue
        asked = ", ".join(f"{v} {r}" for r, v in d.extended)
        nodes = sum(n.count for n in inputs.pools if n.name in lacking)
        yield Finding(
            rule=ID,
            message=(
                f"{facts.prefix}its pods ask for {asked}, which the nodes of "
                f"{', '.join(lacking)} do not offer: its pods on those {plural(nodes, 'node')} "
                "can never be scheduled (add a nodeSelector for the nodes that offer it)"
            ),
            location=w.location,
            object=w.ref,
            details=facts.details({"extended": dict(d.extended), "pools_lacking": list(lacking)}),
        )
