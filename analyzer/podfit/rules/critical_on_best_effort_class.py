"""## What it does
A cluster marked critical (annotation podfit.io/critical) uses best-effort VM classes for its nodes.

## Why it matters
Best-effort VM classes reserve nothing, so under vSphere contention the nodes of a critical cluster
get no guaranteed CPU or memory.

## Example
```yaml
metadata: {annotations: {podfit.io/critical: "true"}}
... class: best-effort-large
```

## How to fix
Use guaranteed-<size> VM classes for the critical cluster's control plane and node pools.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Choose between guaranteed and
best-effort VM classes"

## Implementation
A best-effort class reserves no CPU or memory, so under vSphere contention a critical cluster's
nodes get no more than any other VM. "Critical" is the platform's ``critical: true`` or the
annotation ``podfit.io/critical: "true"`` on a TanzuKubernetesCluster or Cluster API Cluster.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..clusters import cluster_objects, is_critical
from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext

ID = "PF304"
SLUG = "critical-on-best-effort-class"
TITLE = "Critical cluster on best-effort VM classes"
SEVERITY = "warning"
CATEGORY = "vsphere"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    clusters = {o.ref.name: o for o in cluster_objects(facts.objects)}
    for pool in facts.node_pools:
        owner = clusters.get(pool.cluster) if pool.cluster else None
        critical = is_critical(owner) if owner is not None else facts.platform.critical
        vc = facts.vm_class(pool.vm_class)
        reserved = vc.reserved if vc is not None else not pool.vm_class.startswith("best-effort-")
        if not critical or reserved or pool.location is None:
            continue
        marked = f"{owner.kind} {owner.ref.name} is" if owner is not None else "the platform is"
        yield Finding(
            ID,
            f"{marked} marked critical but node pool {pool.name} uses the best-effort VM class {pool.vm_class}, "
            "which reserves no CPU or memory under vSphere contention",
            pool.location,
            owner.ref if owner is not None else None,
            details={"pool": pool.name, "vm_class": pool.vm_class},
        )
