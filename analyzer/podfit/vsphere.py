"""The vSphere analyzer: CRX sizing of vSphere Pods, HA-adjusted capacity, reservations, DRS
placement, vCPU overcommit and what-if admission. Pure functions over frozen dataclasses.

Units: CPU in millicores (Kubernetes side) or MHz (vSphere side), memory in bytes, all ``int``.
The formulas, and how the cases the best-practices study leaves open are decided, are in
``docs/vsphere.md``; the ``WHY_*`` strings below name the study's rule behind each figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from .clusters import cluster_objects, is_critical
from .model import Container, K8sObject, Location, ObjectRef, PodSpec, Workload
from .platform import HostGroup, NodePool, Platform
from .words import plural

if TYPE_CHECKING:
    from .facts import ClusterScope

__all__ = [
    "GiB",
    "CrxSize",
    "crx_size",
    "describe_crx",
    "fmt_memory",
    "fmt_mhz",
    "mhz",
    "reference_mhz",
    "HostCapacity",
    "Capacity",
    "capacity",
    "nodes_hosts_hold",
    "VM",
    "vms_from_node_pools",
    "vms_from_workloads",
    "reservations_of",
    "Placement",
    "HostUse",
    "place",
    "CapacityReport",
    "analyze_capacity",
    "overcommit_exceeds",
    "WhatIf",
    "what_if",
    "critical_workloads",
    "loadbalancer_groups",
    "is_loadbalancer_service",
    "LB_VIRTUAL_SERVERS",
    "LB_DEFAULT_SIZE",
    "object_at",
    "finding_anchor",
    "reservation_share",
    "describe_vms",
]

GiB = 2**30
DEFAULT_PLACEMENT_BUDGET = 5.0  # seconds for one DRS placement proof

WHY_CPU_NONE = "no CPU request or limit in any container: 1 vCPU"
WHY_CPU_REQUESTS = "CPU requests but no limits: ceil(Σ CPU requests) vCPUs"
WHY_CPU_LIMITS = "CPU requests and limits: ceil(Σ CPU limits) vCPUs"
WHY_CPU_LIMIT_MHZ = "CPU limits set: vSphere CPU limit = Σ CPU limits × base MHz of one core"
WHY_CPU_NO_LIMIT = "no CPU limit: no vSphere CPU limit (the vCPU count is the ceiling)"
WHY_CPU_RES = "CPU reservation = Σ CPU requests × base MHz of one physical core"
WHY_MEM_NONE = "no memory request or limit in any container: 1 GiB"
WHY_MEM_REQUESTS = "memory requests but no limits: Σ memory requests"
WHY_MEM_LIMITS = "memory requests and limits: Σ memory limits"
WHY_MEM_CAPPED = "memory requests and limits: capped at max(3 × Σ requests, largest container limit)"
WHY_MEM_RES = "memory reservation = Σ memory requests"
WHY_NO_MHZ = "platform has no hosts: base MHz unknown"


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def mhz(millicores: int, base_mhz: int) -> int:
    """Millicores as MHz of physical cores at ``base_mhz`` (1 CPU = one core's clock), rounded up."""
    return _ceil_div(millicores * base_mhz, 1000)


# --------------------------------------------------------------------------------- CRX sizing ---


@dataclass(frozen=True)
class CrxSize:
    """The CRX VM of one vSphere Pod. MHz figures are ``None`` when the base clock is unknown;
    ``cpu_limit_mhz`` is ``None`` when the CRX has no vSphere CPU limit.

    ``cpu_from`` / ``memory_from`` name what sized each resource: ``"none"`` (no container sets a
    request or limit: the default), ``"requests"`` (requests, no limit) or ``"limits"``.
    ``memory_limits_bytes`` is the memory the limits add up to before the cap and
    ``memory_cap_bytes`` the cap max(3 × Σ requests, largest limit); both ``None`` without a
    memory limit."""

    vcpus: int
    cpu_limit_mhz: int | None
    cpu_reservation_mhz: int | None
    memory_bytes: int
    memory_reservation_bytes: int
    cpu_request_millicores: int
    cpu_limit_millicores: int | None
    cpu_from: str = "none"
    memory_from: str = "none"
    memory_limits_bytes: int | None = None
    memory_cap_bytes: int | None = None
    why: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def memory_capped(self) -> bool:
        """The memory limits add up to more than the CRX is given."""
        return self.memory_cap_bytes is not None and (self.memory_limits_bytes or 0) > self.memory_cap_bytes

    def figures(self) -> dict[str, int | None]:
        """The CRX's figures as ``podfit vsphere crx --format json`` writes them."""
        return {
            "vcpus": self.vcpus,
            "cpu_limit_mhz": self.cpu_limit_mhz,
            "cpu_reservation_mhz": self.cpu_reservation_mhz,
            "memory_bytes": self.memory_bytes,
            "memory_reservation_bytes": self.memory_reservation_bytes,
        }


def fmt_memory(n: int | None) -> str:
    """Memory as ``podfit vsphere`` prints it: :func:`podfit.quantity.format_memory`, rounded for
    reading ("4Gi", "640Mi", "1.5Gi"); "-" for unknown (as :func:`fmt_mhz`)."""
    from .quantity import format_memory

    return "-" if n is None else format_memory(n, exact=False)


def fmt_mhz(n: int | None) -> str:
    """MHz as ``podfit vsphere`` prints them ("5,200 MHz"); "-" for unknown."""
    return "-" if n is None else f"{n:,} MHz"


def describe_crx(size: CrxSize) -> str:
    """The CRX in words, with the figures ``podfit vsphere crx`` prints: "2 vCPUs (CPU limit 5,200 MHz,
    2,600 MHz reserved) and 8Gi of memory". MHz figures appear only when the base clock is known."""
    cpu = []
    if size.cpu_limit_mhz is not None:
        cpu.append(f"CPU limit {fmt_mhz(size.cpu_limit_mhz)}")
    if size.cpu_reservation_mhz is not None:
        cpu.append(f"{fmt_mhz(size.cpu_reservation_mhz)} reserved")
    vcpus = f"{plural(size.vcpus, 'vCPU')}"
    return f"{vcpus}{' (' + ', '.join(cpu) + ')' if cpu else ''} and {fmt_memory(size.memory_bytes)} of memory"


def crx_size(pod: PodSpec, base_mhz: int | None) -> CrxSize:
    """Size the CRX of a vSphere Pod from its containers' effective requests and limits, or from
    its pod-level ``spec.resources`` for the resources it sets there.

    Uses ``Container.resources`` (Kubernetes defaulting applied: a limit without a request makes
    the request equal to the limit; LimitRange defaults filled in). See docs/vsphere.md.
    """
    why: dict[str, str] = {}
    everyone = pod.counted

    def req(res: str):
        return lambda c: getattr(c.resources, f"{res}_request")

    def lim_or_req(res: str):
        # a container without a limit is bounded by its request inside a CRX sized from limits
        def f(c: Container) -> int | None:
            v = getattr(c.resources, f"{res}_limit")
            return v if v is not None else getattr(c.resources, f"{res}_request")

        return f

    def any_set(res: str, part: str) -> bool:
        return any(getattr(c.resources, f"{res}_{part}") is not None for c in everyone)

    # CPU
    # a pod-level (spec.resources) request or limit replaces the containers' combined values
    own_cpu, own_cpu_limit = pod.pod_level("cpu_request"), pod.pod_level("cpu_limit")
    cpu_req = own_cpu if own_cpu is not None else pod.combined(req("cpu"))
    cpu_limit_mc: int | None = None
    if own_cpu_limit is not None or any_set("cpu", "limit"):
        cpu_from = "limits"
        limits = own_cpu_limit if own_cpu_limit is not None else pod.combined(lim_or_req("cpu"))
        cpu_limit_mc = max(limits, cpu_req)
        vcpus = _ceil_div(cpu_limit_mc, 1000)
        why["vcpus"] = WHY_CPU_LIMITS
        why["cpu_limit_mhz"] = WHY_CPU_LIMIT_MHZ
    elif own_cpu is not None or any_set("cpu", "request"):
        cpu_from = "requests"
        vcpus = _ceil_div(cpu_req, 1000)
        why["vcpus"] = WHY_CPU_REQUESTS
        why["cpu_limit_mhz"] = WHY_CPU_NO_LIMIT
    else:
        cpu_from = "none"
        vcpus = 1
        why["vcpus"] = WHY_CPU_NONE
        why["cpu_limit_mhz"] = WHY_CPU_NO_LIMIT
    if vcpus < 1:  # explicit zero requests: a VM has at least one vCPU
        vcpus = 1
        why["vcpus"] += " (at least 1)"
    why["cpu_reservation_mhz"] = WHY_CPU_RES if base_mhz else WHY_NO_MHZ
    if base_mhz:
        cpu_res_mhz: int | None = mhz(cpu_req, base_mhz)
        cpu_limit_mhz = mhz(cpu_limit_mc, base_mhz) if cpu_limit_mc is not None else None
    else:
        cpu_res_mhz = cpu_limit_mhz = None
        if cpu_limit_mc is not None:
            why["cpu_limit_mhz"] = WHY_NO_MHZ

    # memory
    own_mem, own_mem_limit = pod.pod_level("memory_request"), pod.pod_level("memory_limit")
    mem_req = own_mem if own_mem is not None else pod.combined(req("memory"))
    mem_total: int | None = None
    mem_cap: int | None = None
    if own_mem_limit is not None or any_set("memory", "limit"):
        memory_from = "limits"
        if own_mem_limit is not None:
            mem_total = largest = own_mem_limit
        else:
            mem_total = pod.combined(lim_or_req("memory"))
            largest = max((c.resources.memory_limit or 0) for c in everyone)
        mem_cap = max(3 * mem_req, largest)
        memory = min(mem_total, mem_cap)
        why["memory_bytes"] = WHY_MEM_CAPPED if mem_total > mem_cap else WHY_MEM_LIMITS
        memory = max(memory, mem_req)  # never below what is reserved
    elif own_mem is not None or any_set("memory", "request"):
        memory_from = "requests"
        memory = mem_req
        why["memory_bytes"] = WHY_MEM_REQUESTS
    else:
        memory_from = "none"
        memory = GiB
        why["memory_bytes"] = WHY_MEM_NONE
    if memory <= 0:
        memory = GiB
        why["memory_bytes"] += " (zero: the 1 GiB default)"
    why["memory_reservation_bytes"] = WHY_MEM_RES
    return CrxSize(
        vcpus=vcpus,
        cpu_limit_mhz=cpu_limit_mhz,
        cpu_reservation_mhz=cpu_res_mhz,
        memory_bytes=memory,
        memory_reservation_bytes=mem_req,
        cpu_request_millicores=cpu_req,
        cpu_limit_millicores=cpu_limit_mc,
        cpu_from=cpu_from,
        memory_from=memory_from,
        memory_limits_bytes=mem_total,
        memory_cap_bytes=mem_cap,
        why=why,
    )


# ----------------------------------------------------------------------------------- capacity ---


def _capacity_groups(platform: Platform) -> tuple[HostGroup, ...]:
    return tuple(h for h in platform.hosts if not h.dedicated_failover and h.count > 0)


def reference_mhz(platform: Platform) -> int | None:
    """The base clock used to turn CPUs into MHz: the fastest host that runs VMs (a reservation
    converted at that clock is never smaller than on any host). None without hosts."""
    groups = _capacity_groups(platform) or tuple(h for h in platform.hosts if h.count > 0)
    return max((h.base_mhz for h in groups), default=None)


@dataclass(frozen=True)
class HostCapacity:
    group: str
    index: int
    cpu_mhz: int
    memory_bytes: int
    cores: int
    failover: bool

    @property
    def name(self) -> str:
        return f"{self.group}-{self.index}"


@dataclass(frozen=True)
class Capacity:
    cpu_total_mhz: int
    cpu_ha_reserved_mhz: int
    memory_total_bytes: int
    memory_ha_reserved_bytes: int
    physical_cores: int  # cores of hosts that run VMs (dedicated failover hosts excluded)
    hosts: tuple[HostCapacity, ...]
    ha_policy: str

    @property
    def cpu_available_mhz(self) -> int:
        return self.cpu_total_mhz - self.cpu_ha_reserved_mhz

    @property
    def memory_available_bytes(self) -> int:
        return self.memory_total_bytes - self.memory_ha_reserved_bytes


def _largest(values: Sequence[int], n: int) -> int:
    return sum(sorted(values, reverse=True)[:n])


def capacity(platform: Platform) -> Capacity:
    """Σ hosts' physical cores × base MHz (no hyper-threads, no turbo) and memory, less HA.

    HA: dedicated failover hosts are reserved whole; then, over the remaining hosts, a
    percentage policy reserves that share (rounded up) of each resource it names, and n host
    failures tolerated reserve the n largest hosts (by CPU, and by memory, separately).

    A percentage policy that names one resource only (``cpuPercent`` without ``memoryPercent``, or
    the reverse) and no host failures: vSphere's percentage policy always has both, so the other
    is taken to be the same percentage, and ``ha_policy`` says so ("assumed").
    """
    hosts: list[HostCapacity] = []
    for g in platform.hosts:
        for i in range(g.count):
            hosts.append(HostCapacity(g.name, i, g.cpu_mhz, g.memory_bytes, g.cores, g.dedicated_failover))
    cpu_total = sum(h.cpu_mhz for h in hosts)
    mem_total = sum(h.memory_bytes for h in hosts)
    failover = [h for h in hosts if h.failover]
    running = [h for h in hosts if not h.failover]
    cpu_res = sum(h.cpu_mhz for h in failover)
    mem_res = sum(h.memory_bytes for h in failover)
    policies = ["dedicated failover hosts"] if failover else []
    ha = platform.ha
    run_cpu = sum(h.cpu_mhz for h in running)
    run_mem = sum(h.memory_bytes for h in running)
    n = ha.host_failures_tolerated or 0
    cpu_percent, memory_percent = ha.cpu_percent, ha.memory_percent
    assumed = ""
    if not n and (cpu_percent is None) != (memory_percent is None):
        if cpu_percent is None:
            cpu_percent = memory_percent
            assumed = f"{cpu_percent}% CPU assumed (the profile gives memoryPercent only)"
        else:
            memory_percent = cpu_percent
            assumed = f"{memory_percent}% memory assumed (the profile gives cpuPercent only)"
    if cpu_percent is not None:
        cpu_res += _ceil_div(run_cpu * cpu_percent, 100)
        if ha.cpu_percent is not None:
            policies.append(f"{cpu_percent}% CPU")
    elif n:
        cpu_res += _largest([h.cpu_mhz for h in running], n)
    if memory_percent is not None:
        mem_res += _ceil_div(run_mem * memory_percent, 100)
        if ha.memory_percent is not None:
            policies.append(f"{memory_percent}% memory")
    elif n:
        mem_res += _largest([h.memory_bytes for h in running], n)
    if assumed:
        policies.append(assumed)
    if n and (ha.cpu_percent is None or ha.memory_percent is None):
        what = "CPU" if ha.cpu_percent is None and ha.memory_percent is not None else "memory"
        scope = f" (for {what})" if (ha.cpu_percent is None) != (ha.memory_percent is None) else ""
        policies.append(f"{plural(n, 'host failure')} tolerated{scope}")
    return Capacity(
        cpu_total_mhz=cpu_total,
        cpu_ha_reserved_mhz=cpu_res,
        memory_total_bytes=mem_total,
        memory_ha_reserved_bytes=mem_res,
        physical_cores=sum(h.cores for h in running),
        hosts=tuple(hosts),
        ha_policy=", ".join(policies) or "none",
    )


def nodes_hosts_hold(
    platform: Platform, vm_class: str, others: Iterable[NodePool] = (), ratio_percent: int = 300
) -> int | None:
    """The most node VMs of ``vm_class`` the platform's hosts can run beside the VMs of ``others``
    (node pools that stay: control planes, other clusters). None when the platform describes no
    hosts, or runs no node VMs (bare metal), or the class is unknown.

    The hosts hold ``n`` such VMs when, after HA (:func:`capacity`):

    - one VM fits one host (vCPUs ≤ the host's logical CPUs, memory ≤ the host's memory);
    - memory: n × the class's memory, with the others' memory, fits the hosts' memory, host by host
      (a VM's memory is backed by one host; a best-effort class reserves nothing, yet a node's pods
      use that memory), the HA share left out;
    - CPU: n × vCPUs, with the others' vCPUs, stays within ``ratio_percent`` of the physical cores
      (PF503's overcommit ratio);
    - a guaranteed class's CPU reservations (vCPUs × base MHz), with the others', fit the CPU left after HA.
    """
    if platform.runtime == "bare-metal":
        return None
    groups = _capacity_groups(platform)
    cls = platform.vm_class(vm_class)
    if not groups or cls is None:
        return None
    if not any(cls.cpus <= g.logical_cpus and cls.memory_bytes <= g.memory_bytes for g in groups):
        return 0
    cap = capacity(platform)
    other_vms, _ = vms_from_node_pools(others, platform)
    o_mem = o_vcpus = o_mhz = 0
    for v in other_vms:
        o_cls = platform.vm_class(v.source)
        o_mem += v.count * (o_cls.memory_bytes if o_cls is not None else v.memory_reservation_bytes)
        o_vcpus += v.count * v.vcpus
        o_mhz += v.count * v.cpu_reservation_mhz
    # memory, host by host: each running host holds floor(memory / class memory) VMs; host failures
    # tolerated take the hosts holding most, a percentage policy its share of the total
    per_host = sorted(
        (
            g.memory_bytes // cls.memory_bytes if cls.cpus <= g.logical_cpus else 0
            for g in groups
            for _ in range(g.count)
        ),
        reverse=True,
    )
    ha = platform.ha
    failures = ha.host_failures_tolerated or 0
    by_memory = sum(per_host[failures:]) if ha.memory_percent is None else sum(per_host)
    by_memory = min(by_memory, max(cap.memory_available_bytes - o_mem, 0) // cls.memory_bytes)
    limits = [by_memory]
    if cap.physical_cores > 0:
        limits.append(max(ratio_percent * cap.physical_cores - 100 * o_vcpus, 0) // (100 * cls.cpus))
    if cls.reserved:
        base = reference_mhz(platform) or 0
        if base:
            limits.append(max(cap.cpu_available_mhz - o_mhz, 0) // (cls.cpus * base))
    return min(limits)


# ------------------------------------------------------------------------------- reservations ---


@dataclass(frozen=True)
class VM:
    """``count`` identical powered-on VMs: node VMs of a pool, or the CRXs of a workload's pods."""

    name: str
    kind: str  # "node" | "control-plane" | "crx"
    count: int
    vcpus: int
    cpu_reservation_mhz: int
    memory_reservation_bytes: int
    cluster: str = ""
    location: Location | None = None
    source: str = ""  # VM class or workload description

    @property
    def reserves(self) -> bool:
        return self.cpu_reservation_mhz > 0 or self.memory_reservation_bytes > 0


def vms_from_node_pools(pools: Iterable[NodePool], platform: Platform) -> tuple[tuple[VM, ...], tuple[str, ...]]:
    """Node VMs of every pool (control planes included); returns (VMs, unknown class names).
    Guaranteed classes reserve vCPUs × base MHz and all memory; best-effort classes nothing."""
    base = reference_mhz(platform) or 0
    vms, unknown = [], []
    for p in pools:
        cls = platform.vm_class(p.vm_class)
        if cls is None:
            unknown.append(p.vm_class)
            continue
        vms.append(
            VM(
                name=f"{p.cluster}/{p.name}" if p.cluster else p.name,
                kind="control-plane" if p.role == "control-plane" else "node",
                count=p.count,
                vcpus=cls.cpus,
                cpu_reservation_mhz=cls.cpus * base if cls.reserved else 0,
                memory_reservation_bytes=cls.memory_bytes if cls.reserved else 0,
                cluster=p.cluster,
                location=p.location,
                source=cls.name,
            )
        )
    return tuple(vms), tuple(sorted(set(unknown)))


def crx_sizes(workloads: Iterable[Workload], platform: Platform) -> Iterator[tuple[Workload, CrxSize]]:
    """Each workload whose pods run as CRXs, with its CRX size: DaemonSets and workloads of no
    replicas left out (vSphere Pods run no DaemonSet)."""
    base = reference_mhz(platform)
    for w in workloads:
        if not w.per_node and w.replicas > 0:
            yield w, crx_size(w.pod, base)


def vms_from_workloads(
    workloads: Iterable[Workload], platform: Platform, cluster_of: Callable[[Workload], str] | None = None
) -> tuple[VM, ...]:
    """The CRX of every vSphere Pod: ``replicas`` CRXs per workload. DaemonSets are left out
    (vSphere Pods do not run them). ``cluster_of`` names each workload's cluster (default: none)."""
    out = []
    for w, size in crx_sizes(workloads, platform):
        out.append(
            VM(
                name=str(w.ref),
                kind="crx",
                count=w.replicas,
                vcpus=size.vcpus,
                cpu_reservation_mhz=size.cpu_reservation_mhz or 0,
                memory_reservation_bytes=size.memory_reservation_bytes,
                cluster=cluster_of(w) if cluster_of is not None else "",
                location=w.location,
                source=str(w.ref),
            )
        )
    return tuple(out)


def reservations_of(
    workloads: Sequence[Workload],
    platform: Platform,
    node_pools: Sequence[NodePool],
    cluster_of: Callable[[Workload], str] | None = None,
) -> tuple[VM, ...]:
    """Every powered-on VM: node VMs of the node pools (the platform's and those of TKC / Cluster
    API manifests, as the facts gather them), plus, when the runtime is ``vsphere-pods``, the CRXs
    of ``workloads`` (give those that run as vSphere Pods: ``Facts.crx_workloads``)."""
    vms, _ = vms_from_node_pools(node_pools, platform)
    if platform.runtime == "vsphere-pods":
        vms = vms + vms_from_workloads(workloads, platform, cluster_of)
    return vms


# -------------------------------------------------------------------------------- placement ---


@dataclass(frozen=True)
class HostUse:
    name: str
    cpu_capacity_mhz: int
    cpu_reserved_mhz: int
    memory_capacity_bytes: int
    memory_reserved_bytes: int
    vms: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Placement:
    """DRS admission host by host. ``feasible`` None: neither a placement nor a proof was found
    within the time budget."""

    feasible: bool | None
    proof: str  # "placement" | "lower-bound" | "solver" | "budget-exhausted" | "nothing-reserved" | "no-hosts"
    hosts: tuple[HostUse, ...] = ()
    unplaced: tuple[tuple[str, int], ...] = ()
    detail: str = ""
    # the proof's subject: VM names of a "pod-too-large" bound (each larger than every host), or the
    # dimension ("cpu", "memory") of a capacity bound; empty when the proof names neither
    about: tuple[str, ...] = ()


def place(vms: Sequence[VM], platform: Platform, time_budget: float = DEFAULT_PLACEMENT_BUDGET) -> Placement:
    """Is there an assignment of every reserving VM to a host (dedicated failover hosts excluded)
    such that no host's reservations exceed its CPU MHz or memory? A 2-D bin packing problem,
    answered with proof by the packing engine."""
    groups = _capacity_groups(platform)
    reserving = [v for v in vms if v.reserves and v.count > 0]
    host_uses = lambda: tuple(  # noqa: E731
        HostUse(f"{g.name}-{i}", g.cpu_mhz, 0, g.memory_bytes, 0, ()) for g in groups for i in range(g.count)
    )
    if not reserving:
        return Placement(True, "nothing-reserved", host_uses())
    if not groups:
        return Placement(False, "no-hosts", (), tuple((v.name, v.count) for v in reserving), "no hosts that run VMs")
    from .packing import NodeType, PodType, Problem, pack  # imported only when there is something to place

    # identical reservations form one item type (the engine groups by type)
    types: dict[tuple[int, int], list] = {}
    for v in reserving:
        key = (v.cpu_reservation_mhz, v.memory_reservation_bytes)
        types.setdefault(key, []).append(v)
    pods = []
    names = {}
    for (cpu, mem), members in sorted(types.items(), reverse=True):
        name = members[0].name if len(members) == 1 else f"{members[0].name} (+{len(members) - 1} alike)"
        names[name] = members
        pods.append(PodType(name, cpu=cpu, memory=mem, count=sum(m.count for m in members)))
    slots = sum(p.count for p in pods)
    nodes = tuple(NodeType(g.name, "host", g.count, cpu=g.cpu_mhz, memory=g.memory_bytes, pods=slots) for g in groups)
    res = pack(Problem(tuple(pods), nodes), time_budget)
    uses = []
    placed = {(n.pool, n.index): n for n in res.nodes}
    for g in groups:
        for i in range(g.count):
            n = placed.get((g.name, i))
            uses.append(
                HostUse(
                    f"{g.name}-{i}",
                    g.cpu_mhz,
                    n.used[0] if n else 0,
                    g.memory_bytes,
                    n.used[1] if n else 0,
                    n.pods if n else (),
                )
            )
    detail = ""
    about: tuple[str, ...] = ()
    if res.violated_bounds:
        b = res.violated_bounds[0]
        amount = {"capacity-cpu": fmt_mhz, "capacity-memory": fmt_memory}.get(b.kind, str)  # hosts: MHz, bytes
        detail = f"{b.kind}: needs {amount(b.needed)}, has {amount(b.available)}" + (
            f" ({b.detail})" if b.detail else ""
        )
        if b.kind == "pod-too-large":
            about = tuple(v.name for v in names.get(b.detail, ()))  # the bound's detail: the item's name
        elif b.kind.startswith("capacity-"):
            about = (b.kind.removeprefix("capacity-"),)
    elif res.proof == "solver":
        detail = "the CP-SAT solver proved that no assignment exists"
    elif res.proof == "budget-exhausted":
        detail = f"no placement found and no proof within {time_budget:g}s ({res.solver_status})"
    return Placement(res.feasible, res.proof, tuple(uses), res.unplaced, detail, about)


# ------------------------------------------------------------------------------ the analysis ---


@dataclass(frozen=True)
class CapacityReport:
    capacity: Capacity
    vms: tuple[VM, ...]
    cpu_reserved_mhz: int
    memory_reserved_bytes: int
    vcpus: int  # Σ vCPUs of powered-on VMs (control planes and CRXs included)
    placement: Placement | None
    base_mhz: int | None

    @property
    def cpu_over_ha(self) -> bool:
        return self.cpu_reserved_mhz > self.capacity.cpu_available_mhz

    @property
    def memory_over_ha(self) -> bool:
        return self.memory_reserved_bytes > self.capacity.memory_available_bytes

    @property
    def overcommit_percent(self) -> int | None:
        """vCPUs per physical core in percent, rounded down (None without cores)."""
        cores = self.capacity.physical_cores
        return self.vcpus * 100 // cores if cores else None


def analyze_capacity(
    vms: Sequence[VM],
    platform: Platform,
    *,
    placement: bool = True,
    time_budget: float = DEFAULT_PLACEMENT_BUDGET,
) -> CapacityReport:
    cap = capacity(platform)
    return CapacityReport(
        capacity=cap,
        vms=tuple(vms),
        cpu_reserved_mhz=sum(v.cpu_reservation_mhz * v.count for v in vms),
        memory_reserved_bytes=sum(v.memory_reservation_bytes * v.count for v in vms),
        vcpus=sum(v.vcpus * v.count for v in vms),
        placement=place(vms, platform, time_budget) if placement else None,
        base_mhz=reference_mhz(platform),
    )


def overcommit_exceeds(vcpus: int, cores: int, threshold_percent: int) -> bool:
    """vcpus / cores > threshold %, exactly (integers only)."""
    return cores > 0 and vcpus * 100 > threshold_percent * cores


def critical_workloads(platform: Platform, objects: Iterable[K8sObject]) -> bool:
    """Critical work runs on the vSphere cluster: the platform says so, or a cluster manifest in
    the input is annotated ``podfit.io/critical``."""
    return platform.critical or any(is_critical(o) for o in cluster_objects(objects))


# ------------------------------------------------------------------------------------ what-if ---


@dataclass(frozen=True)
class WhatIf:
    """How many more units (a replica's CRX, or a node pool) are admitted.

    ``ha_limit``: by HA admission (cluster totals); ``admitted``: by HA and DRS placement together;
    ``overcommit_limit``: before the vCPU overcommit passes the threshold. ``None`` = unbounded
    (the unit reserves nothing, or adds no vCPU). ``proven`` False: the placement search ran out
    of time above ``admitted``, so the true answer may be larger.
    """

    unit: str
    unit_vms: int
    unit_vcpus: int
    unit_cpu_reservation_mhz: int
    unit_memory_reservation_bytes: int
    ha_limit: int | None
    admitted: int | None
    proven: bool
    overcommit_limit: int | None
    overcommit_threshold_percent: int


def _ha_limit(free: int, need: int) -> int | None:
    if need <= 0:
        return None
    return free // need if free >= 0 else 0


def what_if(
    base: Sequence[VM],
    unit: Sequence[VM],
    platform: Platform,
    *,
    overcommit_threshold_percent: int = 300,
    time_budget: float = DEFAULT_PLACEMENT_BUDGET,
    max_units: int = 100_000,
) -> WhatIf:
    """The largest k such that ``base`` plus k copies of ``unit`` passes HA admission (totals) and
    DRS admission (a host-by-host placement exists). Placement is monotone in k, so a binary
    search over [0, HA limit] with proofs from the packing engine finds it."""
    cap = capacity(platform)
    b_cpu = sum(v.cpu_reservation_mhz * v.count for v in base)
    b_mem = sum(v.memory_reservation_bytes * v.count for v in base)
    b_vcpus = sum(v.vcpus * v.count for v in base)
    u_cpu = sum(v.cpu_reservation_mhz * v.count for v in unit)
    u_mem = sum(v.memory_reservation_bytes * v.count for v in unit)
    u_vcpus = sum(v.vcpus * v.count for v in unit)
    limits = [
        x
        for x in (_ha_limit(cap.cpu_available_mhz - b_cpu, u_cpu), _ha_limit(cap.memory_available_bytes - b_mem, u_mem))
        if x is not None
    ]
    ha_limit = min(limits) if limits else None
    cores = cap.physical_cores
    oc_limit: int | None = None
    if u_vcpus > 0 and cores > 0:
        oc_limit = max(overcommit_threshold_percent * cores - b_vcpus * 100, -1) // (u_vcpus * 100)
        oc_limit = max(oc_limit, 0)
    name = unit[0].source if unit else ""
    result = partial(
        WhatIf,
        unit=name,
        unit_vms=sum(v.count for v in unit),
        unit_vcpus=u_vcpus,
        unit_cpu_reservation_mhz=u_cpu,
        unit_memory_reservation_bytes=u_mem,
        ha_limit=ha_limit,
        overcommit_limit=oc_limit,
        overcommit_threshold_percent=overcommit_threshold_percent,
    )
    if ha_limit is None:  # reserves nothing: admission control never refuses it
        return result(admitted=None, proven=True)

    def with_k(k: int) -> list[VM]:
        from dataclasses import replace

        return list(base) + [replace(v, count=v.count * k, name=f"+{v.name}") for v in unit]

    def feasible(k: int) -> bool | None:
        return place(with_k(k), platform, time_budget).feasible

    hi = min(ha_limit, max_units)
    now = feasible(0)
    if now is not True:  # the base itself cannot be placed: nothing more is admitted
        return result(admitted=0, proven=now is False)
    lo, proven = 0, True
    if feasible(hi) is True:
        return result(admitted=hi, proven=hi == ha_limit)
    # invariant: lo placeable; hi not (or unknown)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        f = feasible(mid)
        if f is True:
            lo = mid
        else:
            if f is None:
                proven = False
            hi = mid
    return result(admitted=lo, proven=proven)


# ------------------------------------------------------------------------------ load balancers ---

# Virtual servers of the NSX-T load balancer sizes (vSphere Automation API, NSX-T load balancer
# sizes): one LoadBalancer Service takes at least one virtual server. The study: each TKG cluster
# gets a small load balancer, LoadBalancer Services of vSphere Pods a medium one; NCP allocates the
# latter per vSphere Namespace.
LB_VIRTUAL_SERVERS: Mapping[str, int] = {"small": 20, "medium": 100, "large": 1000}
LB_DEFAULT_SIZE: Mapping[str, str] = {"tkg": "small", "vsphere-pods": "medium"}


def is_loadbalancer_service(obj: K8sObject) -> bool:
    spec = obj.raw.get("spec")
    return obj.kind == "Service" and isinstance(spec, Mapping) and spec.get("type") == "LoadBalancer"


def loadbalancer_groups(clusters: Iterable[ClusterScope], runtime: str) -> dict[tuple[str, str], list[K8sObject]]:
    """Services of type LoadBalancer grouped by the NSX-T load balancer that serves them, keyed
    (cluster name, vSphere Namespace): on ``vsphere-pods`` one per vSphere Namespace (the Service's
    namespace) of each cluster, but one per guest cluster (a TKC / Cluster API cluster on the
    Supervisor: its ``runtime`` is tkg); on ``tkg`` one per cluster (namespace ""); none elsewhere.
    ``clusters`` are the run's :class:`~podfit.facts.ClusterScope` values, each object once."""
    groups: dict[tuple[str, str], list[K8sObject]] = {}
    if runtime not in LB_DEFAULT_SIZE:
        return groups
    for c in clusters:
        pods = runtime == "vsphere-pods" and c.runtime == "vsphere-pods"
        for o in c.objects:
            if is_loadbalancer_service(o):
                ns = (o.ref.namespace or "default") if pods else ""
                groups.setdefault((c.name, ns), []).append(o)
    return groups


# ------------------------------------------------------------- where capacity findings point ---


def object_at(objects: Sequence[K8sObject], loc: Location | None) -> ObjectRef | None:
    """The input object that holds ``loc`` (same file, nearest start line at or before it)."""
    if loc is None:
        return None
    best = None
    for o in objects:
        if o.location.file == loc.file and o.location.line <= loc.line:
            if best is None or o.location.line > best.location.line:
                best = o
    return best.ref if best is not None else None


def finding_anchor(
    vms: Sequence[VM],
    objects: Sequence[K8sObject],
    platform_source: str,
    key=lambda v: (v.cpu_reservation_mhz * v.count, v.memory_reservation_bytes * v.count),
):
    """(location, object) of the VM group contributing most (by ``key``), preferring VMs declared
    in the input over the platform profile's pools."""
    input_files = {o.location.file for o in objects}
    located = [v for v in vms if v.location is not None]
    from_input = [v for v in vms if v.location is not None and v.location.file in input_files]
    pool = from_input or located
    if not pool:
        return Location(platform_source), None
    top = max(pool, key=key)
    return top.location, object_at(objects, top.location)


def reservation_share(platform: Platform, dimension: str | None = None):
    """A key for :func:`finding_anchor` / :func:`describe_vms`: a VM group's reservations as a
    share (parts per million) of the hosts' capacity, in ``dimension`` ("cpu" or "memory"), else the
    larger of the two (MHz and bytes are never added up)."""
    groups = _capacity_groups(platform)
    cpu = sum(g.cpu_mhz * g.count for g in groups) or 1
    mem = sum(g.memory_bytes * g.count for g in groups) or 1

    def key(v: VM) -> int:
        c = v.cpu_reservation_mhz * v.count * 1_000_000 // cpu
        m = v.memory_reservation_bytes * v.count * 1_000_000 // mem
        return c if dimension == "cpu" else m if dimension == "memory" else max(c, m)

    return key


def describe_vms(vms: Sequence[VM], key, limit: int = 3) -> str:
    top = sorted((v for v in vms if key(v) > 0), key=key, reverse=True)[:limit]
    return ", ".join(f"{v.count} × {v.name} ({v.source})" for v in top)
