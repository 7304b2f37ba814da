"""From the loader's model and a platform profile to packing inputs (pure).

* Every non-DaemonSet workload becomes a :class:`PodType` with ``count = replicas`` and its pod's
  effective requests (Kubernetes semantics are already applied by the loader).
* DaemonSets become :class:`DaemonPod` values: their requests come off every node they select.
* Required pod anti-affinity on ``kubernetes.io/hostname`` whose selector matches the pod's own
  labels puts the workload in an exclusive group (keyed by namespace and selector): workloads that
  share it never share a node. Anti-affinity against pods that do not declare it back is not
  modelled.
* A ``DoNotSchedule`` topology spread on hostname with maxSkew s over N eligible nodes caps pods per
  node at ⌊(count + (N − 1)·s) / N⌋ — a necessary condition of the skew (the other side, each node
  holding at least max − s, is not modelled).
* Control-plane pools are not used for workload pods (they are tainted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ..model import Workload
from .model import DaemonPod, NodeType, Overhead, PodType, VMClass, node_type, selector_matches

__all__ = ["PackInputs", "pod_name", "pods_from_workloads", "vm_classes", "pools_to_node_types", "family_of",
           "inputs_from"]


@dataclass(frozen=True)
class PackInputs:
    pods: tuple[PodType, ...]
    daemons: tuple[DaemonPod, ...]
    pools: tuple[NodeType, ...]
    classes: tuple[VMClass, ...]
    overhead: Overhead
    max_pods: int
    numa_cores: int | None
    numa_memory: int | None
    family: str | None
    workloads: Mapping[str, Workload]  # pod type / daemon name → workload (for findings)
    unknown_classes: tuple[str, ...] = ()
    pool_sources: Mapping[str, object] = None  # type: ignore[assignment]  # node type name → NodePool


def pod_name(w: Workload) -> str:
    ns = w.ref.namespace
    return f"{w.ref.kind}/{ns + '/' if ns and ns != 'default' else ''}{w.ref.name}"


def _exclusive_group(w: Workload) -> str | None:
    for selector in w.pod.anti_affinity_hostname:
        if selector and selector_matches(selector, w.pod.labels):
            ns = w.ref.namespace or "default"
            return f"{ns}:" + ",".join(f"{k}={v}" for k, v in selector)
    return None


def pods_from_workloads(workloads: Iterable[Workload], pools: Sequence[NodeType] = ()) -> tuple[
        tuple[PodType, ...], tuple[DaemonPod, ...], dict[str, Workload]]:
    pods: list[PodType] = []
    daemons: list[DaemonPod] = []
    by_name: dict[str, Workload] = {}
    for w in workloads:
        name = pod_name(w)
        base = name
        i = 2
        while name in by_name:
            name = f"{base}#{i}"
            i += 1
        by_name[name] = w
        p = w.pod
        if w.per_node:
            daemons.append(DaemonPod(name, p.cpu_request, p.memory_request, p.storage_request, p.node_selector))
            continue
        if w.replicas <= 0:
            continue
        max_per_node = None
        skew = p.hostname_spread_max_skew
        if skew:
            n = sum(t.count for t in pools if selector_matches(p.node_selector, t.labels))
            if n > 0:
                max_per_node = max(1, (w.replicas + (n - 1) * skew) // n)
        pods.append(PodType(
            name=name,
            cpu=p.cpu_request,
            memory=p.memory_request,
            count=w.replicas,
            storage=p.storage_request,
            cpu_limit=p.cpu_limit,
            memory_limit=p.memory_limit,
            exclusive_group=_exclusive_group(w),
            max_per_node=max_per_node,
            node_selector=p.node_selector,
        ))
    return tuple(pods), tuple(daemons), by_name


def vm_classes(platform) -> tuple[VMClass, ...]:
    return tuple(VMClass(c.name, c.cpus * 1000, c.memory_bytes) for c in platform.vm_classes)


def pools_to_node_types(node_pools, classes: Sequence[VMClass], *, overhead: Overhead, daemons: Sequence[DaemonPod],
                        max_pods: int, sources: dict | None = None) -> tuple[tuple[NodeType, ...], tuple[str, ...]]:
    """Worker node pools → node types; returns also the VM class names the catalogue lacks."""
    by_name = {c.name: c for c in classes}
    out: list[NodeType] = []
    unknown: list[str] = []
    used_names: set[str] = set()
    for i, p in enumerate(node_pools):
        if getattr(p, "role", "worker") == "control-plane" or p.count <= 0:
            continue
        c = by_name.get(p.vm_class)
        if c is None:
            unknown.append(p.vm_class)
            continue
        name = p.name or f"pool-{i}"
        if getattr(p, "cluster", "") and len({getattr(q, "cluster", "") for q in node_pools}) > 1:
            name = f"{p.cluster}/{name}"
        while name in used_names:
            name += "'"
        used_names.add(name)
        if sources is not None:
            sources[name] = p
        out.append(node_type(name, c, p.count, labels=p.labels, overhead=overhead, daemons=daemons,
                             max_pods=max_pods))
    return tuple(out), tuple(unknown)


def family_of(pools: Sequence[NodeType]) -> str | None:
    """``best-effort-`` or ``guaranteed-`` when every pool uses classes of that family."""
    for prefix in ("best-effort-", "guaranteed-"):
        if pools and all(p.vm_class.startswith(prefix) for p in pools):
            return prefix
    return None


def inputs_from(workloads: Iterable[Workload], platform, node_pools=None, *, overhead: Overhead | None = None,
                max_pods: int | None = None) -> PackInputs:
    """Packing inputs from workloads and a :class:`podfit.platform.Platform`.

    ``node_pools`` defaults to the platform's; the caller adds pools from cluster manifests or the
    command line. ``overhead`` / ``max_pods`` default to the platform's.
    """
    workloads = tuple(workloads)
    classes = vm_classes(platform)
    ov = overhead or Overhead(platform.overhead_cpu, platform.overhead_memory)
    mp = platform.kubelet.max_pods if max_pods is None else max_pods
    pools_in = tuple(platform.node_pools if node_pools is None else node_pools)
    _, daemons, _ = pods_from_workloads(workloads)
    sources: dict = {}
    pools, unknown = pools_to_node_types(pools_in, classes, overhead=ov, daemons=daemons, max_pods=mp,
                                         sources=sources)
    pods, daemons, by_name = pods_from_workloads(workloads, pools)
    return PackInputs(pods, daemons, pools, classes, ov, mp, platform.numa_node_cores, platform.numa_node_memory,
                      family_of(pools), by_name, unknown, sources)
