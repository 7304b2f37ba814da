"""## What it does
A Guaranteed pod needs more CPUs or memory than one NUMA node while the kubelet's Topology Manager
policy is single-numa-node; or the Topology Manager runs (any policy but none) on hosts with more
NUMA nodes than it allows (8, or its max-allowable-numa-nodes option), where the kubelet does not
start at all.

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
kubernetes pkg/kubelet/cm/topologymanager (single-numa-node policy; topology_manager.go NewManager:
"unsupported on machines with more than 8 NUMA Nodes"; policy_options.go
defaultMaxAllowableNUMANodes, max-allowable-numa-nodes, KEP-4622), cpumanager
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

Before any pod: with a policy other than ``none`` the kubelet's Topology Manager refuses a machine
with more NUMA nodes than ``max-allowable-numa-nodes`` (``topologyManagerPolicyOptions``; 8 when
not set) and the kubelet exits. The hosts' NUMA nodes are sockets × NUMA nodes per socket of the
platform's largest host. The option counts where the kubelet accepts it: from 1.31 (beta, with
TopologyManagerPolicyBetaOptions, on by default; GA from 1.35: the stages are podfit.kubeversions'
``TOPOLOGY_MANAGER_OPTIONS``), as a whole number of at least 8. Then one finding on the
KubeletConfiguration takes the place of the pods' (none of them is admitted). Where the kubelet
refuses the option itself (before 1.31, its gate off, a value it cannot parse) PF213 reports it,
and this rule says nothing: that kubelet does not start either.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import kubelet_options, kubeversions
from ..facts import KubeletFacts, is_kubelet_configuration
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


MAX_NUMA_OPTION = "max-allowable-numa-nodes"
DEFAULT_MAX_NUMA_NODES = kubelet_options.DEFAULT_MAX_NUMA_NODES


def numa_node_limit(kub: KubeletFacts) -> tuple[int | None, str]:
    """The most NUMA nodes the kubelet's Topology Manager accepts, and why: None where the kubelet
    refuses the max-allowable-numa-nodes option itself (unknown at its version, its gate off, not
    a whole number of at least 8: PF213 reports it)."""
    raw = dict(kub.topology_manager_policy_options).get(MAX_NUMA_OPTION)
    if raw is None:
        return DEFAULT_MAX_NUMA_NODES, f"the default ({MAX_NUMA_OPTION} not set)"
    refused = kubelet_options.accepted_value(
        kubelet_options.TOPOLOGY_MANAGER, MAX_NUMA_OPTION, raw, dict(kub.feature_gates), kub.version
    )
    if refused is not None:
        return None, f"{refused}: the kubelet refuses it"
    return int(raw), f"{MAX_NUMA_OPTION} {int(raw)}"


def _too_many_numa_nodes(ctx: RuleContext) -> Finding | None:
    """The kubelet does not start: its Topology Manager refuses the hosts' NUMA node count."""
    kub = ctx.facts.kubelet
    hosts = ctx.platform.hosts
    config = next((o for o in ctx.facts.objects if is_kubelet_configuration(o)), None)
    if kub.topology_manager_policy == "none" or not hosts or config is None:
        return None
    nodes = max(h.numa_nodes for h in hosts)
    limit, why = numa_node_limit(kub)
    if limit is None or nodes <= limit:
        return None  # a refused option is PF213's: the kubelet stops on it whatever the NUMA nodes
    set_here = MAX_NUMA_OPTION in dict(kub.topology_manager_policy_options)
    where = ("topologyManagerPolicyOptions", MAX_NUMA_OPTION) if set_here else ("topologyManagerPolicy",)
    return Finding(
        ID,
        f"the hosts have {nodes} NUMA nodes and the Topology Manager (policy {kub.topology_manager_policy}) "
        f"allows {limit} ({why}): the kubelet does not start, so no pod runs on these nodes; set "
        f'topologyManagerPolicyOptions {MAX_NUMA_OPTION}: "{nodes}" (Kubernetes '
        f"{kubeversions.release_text(kubeversions.TOPOLOGY_MANAGER_OPTIONS[MAX_NUMA_OPTION].first)} on) "
        "or topologyManagerPolicy none",
        config.location_at(where),
        config.ref,
        None,
        details={"numa_nodes": nodes, "max_allowable_numa_nodes": limit, "policy": kub.topology_manager_policy},
    )


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    kub = facts.kubelet
    refused = _too_many_numa_nodes(ctx)
    if refused is not None:
        yield refused
        return  # no pod is admitted by a kubelet that does not start
    if kub.topology_manager_policy != "none" and numa_node_limit(kub)[0] is None:
        return  # the kubelet refuses the option itself and does not start: PF213 says so
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
