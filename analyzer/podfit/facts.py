"""The facts stage: what every rule reads, computed once.

``build_facts(objects, platform, config)`` is a pure function from the loaded objects, the
Platform profile and the config to a frozen :class:`Facts`: the workloads with every Kubernetes
defaulting applied (LimitRange defaults, request = limit, sidecar init containers, pod overhead),
the node pools of the platform and of the cluster manifests in the input, their VM classes, the
hosts' NUMA node size and the logical CPUs of the nodes pods land on.

Python rules read the :class:`Facts` directly. Rego rules read the same facts as ``data.podfit``,
serialised by :func:`facts_data`; ``podfit platform-data`` writes exactly that document for plain
conftest. The Rego library derives none of these facts itself: it only parses the quantities of the
object it is given, which per-object conftest use needs without podfit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Sequence

from .clusters import node_pools_from_objects
from .findings import Finding
from .loader import LimitRangeDefaults, build_workloads, limit_range_defaults
from .model import K8sObject, Workload
from .platform import NodePool, Platform, VMClass

__all__ = ["Facts", "build_facts", "facts_data", "missing_fact", "REQUIREMENTS", "CFS_PERIOD_US", "CFS_SLICE_US"]

CFS_PERIOD_US = 100_000  # the kernel's default cfs_period_us
CFS_SLICE_US = 5_000  # the kernel's default sched_cfs_bandwidth_slice_us


@dataclass(frozen=True, eq=False)
class Facts:
    """The facts of one run. ``findings`` are those the facts stage itself raised (PF903 on a
    LimitRange's or container's quantity)."""

    objects: tuple[K8sObject, ...]
    workloads: tuple[Workload, ...]
    platform: Platform
    node_pools: tuple[NodePool, ...]
    limit_ranges: tuple[tuple[str, LimitRangeDefaults], ...]
    findings: tuple[Finding, ...] = ()
    cluster: str | None = None  # `--cluster`: every object of the run deploys to this cluster

    def vm_class(self, name: str) -> VMClass | None:
        return self.platform.vm_class(name)

    @cached_property
    def worker_pools(self) -> tuple[NodePool, ...]:
        """The pools workloads land on (control planes run none)."""
        return tuple(p for p in self.node_pools if p.role != "control-plane")

    @cached_property
    def node_logical_cpus(self) -> int | None:
        """Logical CPUs of the largest node pods land on: the largest host on bare metal, else the
        largest VM class of the worker pools; None when unknown, and on vSphere Pods (each pod is
        its own CRX, there is no shared node)."""
        runtime = self.platform.runtime
        if runtime == "vsphere-pods":
            return None
        if runtime == "bare-metal":
            return max((h.logical_cpus for h in self.platform.hosts), default=None)
        cpus = [vc.cpus for p in self.worker_pools if (vc := self.vm_class(p.vm_class)) is not None]
        return max(cpus, default=None)

    @property
    def numa_node_cores(self) -> int | None:
        return self.platform.numa_node_cores

    @property
    def numa_node_memory(self) -> int | None:
        return self.platform.numa_node_memory

    @property
    def smt(self) -> bool | None:
        hosts = self.platform.hosts
        return any(h.threads_per_core > 1 for h in hosts) if hosts else None


def build_facts(objects: Sequence[K8sObject], platform: Platform, cluster: str | None = None) -> Facts:
    """The facts of ``objects`` on ``platform``. Pure."""
    objects = tuple(objects)
    findings: list[Finding] = []
    ranges = limit_range_defaults(objects, findings)
    workloads, workload_findings = build_workloads(objects, ranges)
    pools = tuple(platform.node_pools) + tuple(node_pools_from_objects(objects))
    return Facts(
        objects=objects,
        workloads=workloads,
        platform=platform,
        node_pools=pools,
        limit_ranges=tuple(sorted(ranges.items())),
        findings=tuple(findings) + tuple(workload_findings),
        cluster=cluster,
    )


def _resources(r: Any, kind: str) -> dict[str, int]:
    return {res: v for res in ("cpu", "memory") if (v := getattr(r, f"{res}_{kind}")) is not None}


def facts_data(facts: Facts, options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The facts as the Rego rules read them, ``data.podfit`` (shape in docs/rego.md)::

        {"platform": {"runtime", "numa_node": {"cores", "memory"}, "smt", "node_logical_cpus",
                      "vm_classes": {name: {"cpus", "memory", "reserved"}},
                      "node_pools": [{"name", "cluster", "role", "vm_class", "count"}],
                      "kubelet": {"cpu_manager_policy"}, "cfs": {"period_us", "slice_us"}},
         "namespaces": {ns: {"container_defaults": {"request": {...}, "limit": {...}}}},
         "options": {rule id: {option: value}}}

    A fact the platform does not give is left out; the rules that need it stay silent.
    ``options`` are the rules' configured options (defaults live in each rule's METADATA).
    """
    platform = facts.platform
    p: dict[str, Any] = {"runtime": platform.runtime}
    if facts.numa_node_cores is not None and facts.numa_node_memory is not None:
        p["numa_node"] = {"cores": facts.numa_node_cores, "memory": facts.numa_node_memory}
    if facts.smt is not None:
        p["smt"] = facts.smt
    if facts.node_logical_cpus is not None:
        p["node_logical_cpus"] = facts.node_logical_cpus
    p["vm_classes"] = {
        c.name: {"cpus": c.cpus, "memory": c.memory_bytes, "reserved": bool(c.reserved)} for c in platform.vm_classes
    }
    p["node_pools"] = [
        {"name": pool.name or pool.vm_class, "cluster": pool.cluster, "role": pool.role, "vm_class": pool.vm_class,
         "count": pool.count}
        for pool in facts.node_pools
    ]  # fmt: skip
    p["kubelet"] = {"cpu_manager_policy": platform.kubelet.cpu_manager_policy or "none"}
    p["cfs"] = {"period_us": CFS_PERIOD_US, "slice_us": CFS_SLICE_US}
    namespaces = {
        ns: {"container_defaults": {"request": _resources(d.request, "request"), "limit": _resources(d.limit, "limit")}}
        for ns, d in facts.limit_ranges
    }
    return {
        "platform": p,
        "namespaces": namespaces,
        "options": {rule: dict(values) for rule, values in sorted((options or {}).items()) if values},
    }


# The facts a rule can require (REQUIRES in a Python rule, custom.requires in a Rego rule's
# METADATA): whether the run has it, and what would give it. A rule whose facts are missing stays
# silent and is listed as skipped with the first missing fact's hint.
REQUIREMENTS: Mapping[str, tuple[Any, str]] = {
    "hosts": (lambda f: bool(f.platform.hosts), "vSphere hosts in the platform (spec.hosts)"),
    "numa-node": (
        lambda f: f.numa_node_cores is not None,
        "the hosts' NUMA node size: spec.hosts in the platform",
    ),
    "node-pools": (
        lambda f: bool(f.node_pools),
        "node pools: spec.nodePools in the platform, or a TanzuKubernetesCluster or Cluster API Cluster among the manifests",
    ),
    "node-logical-cpus": (
        lambda f: f.node_logical_cpus is not None,
        "the node size: worker node pools (platform or TanzuKubernetesCluster) on runtime tkg, or hosts on bare-metal",
    ),
    "runtime-vsphere-pods": (
        lambda f: f.platform.runtime == "vsphere-pods",
        "runtime vsphere-pods in the platform (spec.runtime)",
    ),
    "runtime-nodes": (
        lambda f: f.platform.runtime != "vsphere-pods",
        "runtime tkg or bare-metal in the platform (vSphere Pods share no node)",
    ),
}


def missing_fact(facts: Facts, requires: Sequence[str]) -> str | None:
    """The hint for the first fact of ``requires`` this run lacks, or None when it has them all."""
    for name in requires:
        has, hint = REQUIREMENTS[name]
        if not has(facts):
            return hint
    return None
