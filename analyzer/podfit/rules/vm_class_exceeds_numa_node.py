"""## What it does
A node pool's VM class has more vCPUs than there are physical cores in a NUMA node, or more memory
than a NUMA node holds.

## Why it matters
Such a VM is "wide": ESXi splits it into several NUMA clients, and memory accesses that cross NUMA
nodes are slower. Worker nodes that fit one NUMA node run faster.

## Example
```yaml
kind: TanzuKubernetesCluster
... workers: {class: best-effort-8xlarge}   # 32 vCPUs on 16-core NUMA nodes
```

## How to fix
Choose a VM class whose vCPUs and memory fit one NUMA node, and add nodes instead.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), VM size; The CPU Scheduler in
VMware vSphere 5.1, wide VMs

## Implementation
A VM with more vCPUs than a NUMA node has physical cores, or more memory than it holds, is a "wide"
VM: ESXi splits it into NUMA clients, and its memory accesses cross the interconnect. The pools
come from the facts: the platform's own and those of the cluster manifests in the input.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..clusters import cluster_objects
from ..findings import Finding
from ..options import Option
from ..quantity import format_memory
from ..rule_context import RuleContext

ID = "PF301"
SLUG = "vm-class-exceeds-numa-node"
TITLE = "Node VM class wider than a NUMA node"
SEVERITY = "error"
CATEGORY = "numa"
REQUIRES: tuple[str, ...] = ("numa-node", "node-pools")
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    cores, memory = facts.numa_node_cores, facts.numa_node_memory
    if cores is None or memory is None:
        return
    clusters = {o.ref.name: o for o in cluster_objects(facts.objects)}
    for pool in facts.node_pools:
        vc = facts.vm_class(pool.vm_class)
        if vc is None or pool.location is None:
            continue
        wide = []
        if vc.cpus > cores:
            wide.append(f"{vc.cpus} vCPUs > {cores} cores")
        if vc.memory_bytes > memory:
            wide.append(f"{format_memory(vc.memory_bytes)} > {format_memory(memory)} of memory")
        if not wide:
            continue
        owner = clusters.get(pool.cluster) if pool.cluster else None
        yield Finding(
            ID,
            f"node pool {pool.name} uses VM class {vc.name}, wider than one NUMA node ({'; '.join(wide)}): "
            "ESXi splits the VM into NUMA clients",
            pool.location,
            owner.ref if owner is not None else None,
            details={
                "pool": pool.name,
                "vm_class": vc.name,
                "vcpus": vc.cpus,
                "memory": vc.memory_bytes,
                "numa_node_cores": cores,
                "numa_node_memory": memory,
            },
        )
