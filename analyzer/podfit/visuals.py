"""What the pictures of the HTML report show, gathered from a check's facts and analyses (pure).

The HTML format draws; this module only collects the figures, all exact integers: per cluster and
node pool the packing podfit computed for PF601-PF605 (each node's capacity split into system
overhead, DaemonSets, requested and free or stranded capacity; the pods left unplaced), the vSphere
capacity after HA with what node VMs and CRXs reserve, each CRX's size, and for every PF203 finding
the throttling of its container over a range of CPU limits (:mod:`podfit.throttle.sweep`) from the
very scenario the rule simulated, its suggested limit among them. Packings and simulations come from
the rules' shared analyses (``Report.analyses``); nothing the findings rest on is computed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .facts import Facts
from .findings import Finding
from .model import Workload
from .platform import Platform
from .throttle.sweep import Sweep, sweep_scenario

__all__ = [
    "NodeBar",
    "PoolPicture",
    "PackingPicture",
    "CrxRow",
    "VsphereCapacity",
    "ThrottleCurve",
    "Visuals",
    "collect",
    "packing_picture",
    "crx_rows",
    "vsphere_capacity",
]


@dataclass(frozen=True)
class NodeBar:
    """One node: its VM class's capacity, what the system and DaemonSets take, what pods request."""

    name: str
    pool: str
    vm_class: str
    capacity_cpu: int
    capacity_memory: int
    overhead_cpu: int
    overhead_memory: int
    daemon_cpu: int
    daemon_memory: int
    allocatable_cpu: int
    allocatable_memory: int
    used_cpu: int
    used_memory: int
    pods: tuple[tuple[str, int], ...]
    stranded: bool  # its free capacity holds no further pod of any type that may run there

    @property
    def free_cpu(self) -> int:
        return max(self.allocatable_cpu - self.used_cpu, 0)

    @property
    def free_memory(self) -> int:
        return max(self.allocatable_memory - self.used_memory, 0)


@dataclass(frozen=True)
class PoolPicture:
    name: str
    vm_class: str
    count: int
    daemonsets: tuple[str, ...]
    nodes: tuple[NodeBar, ...]


@dataclass(frozen=True)
class PackingPicture:
    """The packing of one cluster's workloads onto its worker pools."""

    cluster: str  # "" when the run has one cluster
    verdict: str  # does it fit, and how that was shown
    feasible: bool | None
    pools: tuple[PoolPicture, ...]
    unplaced: tuple[tuple[str, int], ...]
    stranded_cpu: int
    stranded_memory: int
    notes: tuple[str, ...]  # pods left out of packing, and why

    @property
    def node_count(self) -> int:
        return sum(len(p.nodes) for p in self.pools)


@dataclass(frozen=True)
class CrxRow:
    name: str
    replicas: int
    vcpus: int
    cpu_limit_mhz: int | None
    cpu_reservation_mhz: int | None
    memory_bytes: int
    memory_reservation_bytes: int


@dataclass(frozen=True)
class VsphereCapacity:
    platform: str
    ha_policy: str
    cpu_total_mhz: int
    cpu_ha_reserved_mhz: int
    cpu_nodes_mhz: int  # reserved by node VMs (guaranteed classes)
    cpu_crx_mhz: int  # reserved by CRXs of vSphere Pods
    memory_total_bytes: int
    memory_ha_reserved_bytes: int
    memory_nodes_bytes: int
    memory_crx_bytes: int
    crxs: tuple[CrxRow, ...]

    @property
    def cpu_free_mhz(self) -> int:
        """Negative when the reservations exceed what HA leaves (PF501)."""
        return self.cpu_total_mhz - self.cpu_ha_reserved_mhz - self.cpu_nodes_mhz - self.cpu_crx_mhz

    @property
    def memory_free_bytes(self) -> int:
        return self.memory_total_bytes - self.memory_ha_reserved_bytes - self.memory_nodes_bytes - self.memory_crx_bytes


@dataclass(frozen=True)
class ThrottleCurve:
    finding: int | None  # index of the PF203 finding in the report's findings (None: podfit throttle)
    subject: str  # Deployment ns/name container c
    sweep: Sweep


@dataclass(frozen=True)
class Visuals:
    packing: tuple[PackingPicture, ...] = ()
    vsphere: VsphereCapacity | None = None
    throttle: tuple[ThrottleCurve, ...] = ()


def packing_picture(inputs: Any, analysis: Any, cluster: str = "") -> PackingPicture:
    """The picture of one packing analysis (:class:`podfit.packing.engine.Analysis`) of ``inputs``
    (:class:`podfit.packing.adapter.PackInputs`)."""
    from .packing.report import describe_proof, scheduling_notes

    a = analysis
    ov = inputs.overhead
    stranded = a.stranded.nodes  # NodeNames: membership without listing a run of empty nodes
    pools = []
    for pool in a.pools:
        # the system's share: the kubelet's reservation where the pool gives its nodes' allocatable
        # (an imported cluster), else the platform's overhead; the DaemonSets' share is the rest
        source = (inputs.pool_sources or {}).get(pool.name)
        alloc = getattr(source, "allocatable", None)
        sys_cpu = pool.capacity_cpu - alloc[0] if alloc is not None else ov.cpu
        sys_mem = pool.capacity_memory - alloc[1] if alloc is not None else ov.memory
        sys_cpu = min(max(sys_cpu, 0), pool.capacity_cpu)
        sys_mem = min(max(sys_mem, 0), pool.capacity_memory)
        daemon_cpu = max(pool.capacity_cpu - sys_cpu - pool.cpu, 0)
        daemon_mem = max(pool.capacity_memory - sys_mem - pool.memory, 0)
        bars = tuple(
            NodeBar(
                name=n.name,
                pool=n.pool,
                vm_class=n.vm_class,
                capacity_cpu=pool.capacity_cpu,
                capacity_memory=pool.capacity_memory,
                overhead_cpu=sys_cpu,
                overhead_memory=sys_mem,
                daemon_cpu=daemon_cpu,
                daemon_memory=daemon_mem,
                allocatable_cpu=n.allocatable[0],
                allocatable_memory=n.allocatable[1],
                used_cpu=n.used[0],
                used_memory=n.used[1],
                pods=n.pods,
                stranded=n.name in stranded,
            )
            for n in a.fit.nodes
            if n.pool == pool.name
        )
        pools.append(PoolPicture(pool.name, pool.vm_class, pool.count, pool.daemon_pods, bars))
    return PackingPicture(
        cluster=cluster,
        verdict=describe_proof(a),
        feasible=a.fit.feasible,
        pools=tuple(pools),
        unplaced=a.fit.unplaced,
        stranded_cpu=a.stranded.cpu,
        stranded_memory=a.stranded.memory,
        notes=tuple(scheduling_notes(inputs)),
    )


def _packing(memo: dict[str, Any]) -> tuple[PackingPicture, ...]:
    """The packings the rules computed (PF303, PF601-PF605 share them through the memo); none when
    no packing rule ran: the report draws what was analysed, never a packing of its own."""
    return tuple(
        packing_picture(pf.inputs, pf.analysis, pf.cluster.name if pf.several and pf.cluster is not None else "")
        for pf in memo.get("packing", ())
        if pf.analysis is not None and pf.inputs.pools
    )


def crx_rows(workloads: Sequence[Workload], platform: Platform) -> tuple[CrxRow, ...]:
    """The CRX of each workload's pods as vSphere Pods would run them (DaemonSets left out)."""
    from .vsphere import crx_sizes

    return tuple(
        CrxRow(
            str(w.ref),
            w.replicas,
            s.vcpus,
            s.cpu_limit_mhz,
            s.cpu_reservation_mhz,
            s.memory_bytes,
            s.memory_reservation_bytes,
        )
        for w, s in crx_sizes(workloads, platform)
    )


def vsphere_capacity(facts: Facts) -> VsphereCapacity | None:
    """Capacity after HA and the reservations of the node VMs and CRXs; None without vSphere hosts."""
    from .vsphere import capacity, reservations_of

    platform = facts.platform
    if not platform.hosts or platform.runtime == "bare-metal":
        return None
    cap = capacity(platform)
    vms = reservations_of(facts.crx_workloads, platform, facts.node_pools)
    crxs = crx_rows(facts.crx_workloads, platform)

    def total(kind: str, attr: str) -> int:
        return sum(getattr(v, attr) * v.count for v in vms if (v.kind == "crx") == (kind == "crx"))

    return VsphereCapacity(
        platform=platform.name,
        ha_policy=cap.ha_policy,
        cpu_total_mhz=cap.cpu_total_mhz,
        cpu_ha_reserved_mhz=cap.cpu_ha_reserved_mhz,
        cpu_nodes_mhz=total("node", "cpu_reservation_mhz"),
        cpu_crx_mhz=total("crx", "cpu_reservation_mhz"),
        memory_total_bytes=cap.memory_total_bytes,
        memory_ha_reserved_bytes=cap.memory_ha_reserved_bytes,
        memory_nodes_bytes=total("node", "memory_reservation_bytes"),
        memory_crx_bytes=total("crx", "memory_reservation_bytes"),
        crxs=crxs,
    )


def _throttle(findings: Sequence[Finding], memo: dict[str, Any]) -> tuple[ThrottleCurve, ...]:
    """The limit sweep behind each PF203 finding, from the scenario the rule simulated."""
    from .rules.throttling_simulated_high import MEMO_KEY, ThrottleBasis

    bases: dict[tuple[str, str], ThrottleBasis] = memo.get(MEMO_KEY, {})
    out = []
    for i, f in enumerate(findings):
        basis = bases.get((str(f.object), f.container or "")) if f.rule == "PF203" else None
        if basis is None:
            continue
        subject = f"{f.object}" + (f" container {f.container}" if f.container else "")
        out.append(ThrottleCurve(i, subject, sweep_scenario(basis.scenario, basis.threshold, basis.suggested)))
    return tuple(out)


def collect(
    facts: Facts,
    findings: Sequence[Finding],
    memo: dict[str, Any] | None = None,
) -> Visuals:
    """The figures of every picture. ``memo`` is the check's shared analyses (``Report.analyses``):
    the packings and simulations the rules computed, drawn as they are."""
    memo = memo if memo is not None else {}
    return Visuals(
        packing=_packing(memo),
        vsphere=vsphere_capacity(facts),
        throttle=_throttle(findings, memo),
    )
