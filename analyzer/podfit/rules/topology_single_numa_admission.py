"""## What it does
A Guaranteed pod needs more CPUs or memory than one NUMA node while the kubelet's Topology Manager
policy is single-numa-node.

## Why it matters
single-numa-node keeps only the topology hints that put a resource on one NUMA node. Exclusive CPUs
(static CPU Manager, whole CPUs) or guaranteed memory (Memory Manager Static) larger than a NUMA
node have no such hint, so the kubelet rejects the pod with TopologyAffinityError and it never runs.
(restricted admits it: the narrowest hints, two NUMA nodes, count as preferred.)

## Example
```yaml
kind: KubeletConfiguration
topologyManagerPolicy: single-numa-node   # and a Guaranteed pod with 96 CPUs on 64-CPU NUMA nodes
```

## How to fix
Split the work into containers (scope container) or pods that each fit one NUMA node, or use
topologyManagerPolicy restricted or best-effort on these nodes.

## Source
kubernetes pkg/kubelet/cm/topologymanager (single-numa-node policy), cpumanager
generateCPUTopologyHints; Kubernetes docs "Control Topology Management Policies on a node"

## Implementation
With ``topologyManagerPolicy: single-numa-node`` the kubelet keeps only the hints that place a
resource on one NUMA node; a container (``topologyManagerScope: container``, the default) or pod
(``pod``) whose exclusive CPUs (static CPU Manager, Guaranteed pod, whole CPUs) or guaranteed memory
(Memory Manager ``Static``) need more than one NUMA node gets no such hint, and the pod fails
admission with ``TopologyAffinityError``. In the pod scope the CPUs counted are the containers' whole CPU
requests only (:func:`pod_guaranteed_cpus`, as the kubelet counts them), so a pod whose total is
not whole is still judged. With ``restricted`` the narrowest hints (two NUMA nodes for
such a request) count as preferred (cpumanager ``generateCPUTopologyHints``), so the size alone is
no failure there and this rule stays silent. The NUMA node is the smallest of the platform's
bare-metal hosts (cores × hardware threads, memory / NUMA nodes); the Topology Manager, CPU Manager
and Memory Manager policies come from a KubeletConfiguration among the inputs.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..model import QOS_GUARANTEED, Container, PodSpec
from ..options import Option
from ..quantity import format_cpu, format_memory
from ..rule_context import RuleContext

ID = "PF206"
SLUG = "topology-single-numa-admission"
TITLE = "Guaranteed pod larger than one NUMA node under single-numa-node"
SEVERITY = "error"
CATEGORY = "cpu"
REQUIRES: tuple[str, ...] = ("numa-node",)
OPTIONS: tuple[Option, ...] = ()
REPLACES: tuple[str, ...] = ("PF302",)  # the pod never runs: PF302's advice on its size is moot


def skip_reason(ctx: RuleContext) -> str | None:
    if ctx.platform.runtime != "bare-metal":
        return "runtime bare-metal with hosts (the NUMA nodes the kubelet sees)"
    return None


def _too_big(cpu: int, memory: int, cpu_aligned: bool, mem_aligned: bool, numa_cpus: int, numa_mem: int) -> list[str]:
    out = []
    if cpu_aligned and cpu % 1000 == 0 and cpu > numa_cpus * 1000:
        out.append(f"{format_cpu(cpu)} exclusive CPUs > {numa_cpus} logical CPUs")
    if mem_aligned and memory > numa_mem:
        out.append(f"{format_memory(memory)} of memory > {format_memory(numa_mem)}")
    return out


def pod_guaranteed_cpus(pod: PodSpec) -> int:
    """The exclusive CPUs the static CPU Manager counts for a Guaranteed pod in the Topology
    Manager's pod scope (cpumanager ``podGuaranteedCPUs``): each container's CPU request when it is
    whole, else 0; the app containers and sidecars (restartable init containers) summed, against the
    largest one-shot init container with the sidecars started before it. 40 + 40 + 0.5 CPUs is 80."""

    def whole(c: Container) -> int:
        cpu = c.resources.cpu_request
        return cpu // 1000 if cpu is not None and cpu % 1000 == 0 else 0

    by_init = by_sidecars = 0
    for c in pod.all_containers:
        if not c.init:
            continue
        if c.sidecar:
            by_sidecars += whole(c)
        else:
            by_init = max(by_init, by_sidecars + whole(c))
    by_apps = sum(whole(c) for c in pod.all_containers if not c.init)
    return max(by_init, by_apps + by_sidecars)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    kub = facts.kubelet
    numa_cpus, numa_mem = facts.numa_node_logical_cpus, facts.numa_node_memory
    if kub.topology_manager_policy != "single-numa-node" or numa_cpus is None or numa_mem is None:
        return
    cpu_aligned = kub.policy == "static"
    mem_aligned = kub.memory_manager_policy == "Static"
    if not (cpu_aligned or mem_aligned):
        return
    for w in ctx.workloads:
        if w.pod.qos_class != QOS_GUARANTEED:
            continue
        if kub.topology_manager_scope == "pod":
            cpu, mem = pod_guaranteed_cpus(w.pod) * 1000, w.pod.memory_request
            too_big = _too_big(cpu, mem, cpu_aligned, mem_aligned, numa_cpus, numa_mem)
            if too_big:
                yield _finding(
                    w,
                    None,
                    w.obj.location,
                    "the Guaranteed pod",
                    too_big,
                    numa_cpus,
                    numa_mem,
                    kub.topology_manager_scope,
                )
            continue
        pinned = facts.exclusive_cpus(w)  # the containers the static CPU Manager aligns
        for c in w.pod.all_containers:
            too_big = _too_big(
                c.resources.cpu_request or 0,
                c.resources.memory_request or 0,
                c.name in pinned,
                mem_aligned,
                numa_cpus,
                numa_mem,
            )
            if too_big:
                yield _finding(
                    w,
                    c.name,
                    c.location,
                    f"container {c.name} of a Guaranteed pod",
                    too_big,
                    numa_cpus,
                    numa_mem,
                    "container",
                )


def _finding(w, container, location, what, too_big, numa_cpus, numa_mem, scope) -> Finding:
    return Finding(
        ID,
        f"{what} needs more than one NUMA node ({'; '.join(too_big)} of one NUMA node), "
        f"but the kubelet's Topology Manager policy is single-numa-node (scope {scope}): "
        "the pod fails admission with TopologyAffinityError",
        location,
        w.ref,
        container,
        details={"numa_node_logical_cpus": numa_cpus, "numa_node_memory": numa_mem, "scope": scope, "exceeds": too_big},
    )
