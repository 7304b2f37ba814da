"""Plain, frozen inputs and results of the packing analyzer.

Every quantity is an exact integer: CPU in millicores, memory and ephemeral storage in bytes, pods as
a count. A resource vector is a 4-tuple ``(cpu, memory, pods, storage)`` in that order (see
:data:`DIMS`). Nothing here knows about manifests; :mod:`podfit.packing.adapter` builds these from
the loader's model.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TypeVar, overload

__all__ = [
    "DIMS",
    "UNBOUNDED",
    "MI",
    "GI",
    "Vec",
    "PodType",
    "DaemonPod",
    "VMClass",
    "Overhead",
    "NodeType",
    "Problem",
    "NodeResult",
    "EmptyNodes",
    "NodeList",
    "NodeNames",
    "node_runs",
    "Bound",
    "PackResult",
    "MinNodes",
    "ZonalNodes",
    "Stranded",
    "Headroom",
    "DeviceHeadroom",
    "Candidate",
    "Recommendation",
    "selector_matches",
    "node_type",
    "Extended",
    "extended_room",
]

DIMS = ("cpu", "memory", "pods", "storage")
# Capacity of a dimension the nodes do not limit (ephemeral storage when no VM class states it).
UNBOUNDED = 2**62
MI = 2**20
GI = 2**30

Vec = tuple[int, int, int, int]
# Extended resources (``nvidia.com/gpu``, …) as sorted (name, whole units) pairs: what a pod asks
# for, or what a node offers its pods.
Extended = tuple[tuple[str, int], ...]


def extended_room(need: Extended, offer: Extended | None) -> int | None:
    """How many pods asking for ``need`` ``offer`` holds by extended resources alone; None when
    nothing limits it (the pod asks for none, or the node's offer is not known)."""
    if not need or offer is None:
        return None
    have = dict(offer)
    return min(have.get(r, 0) // v for r, v in need)


def selector_matches(selector: Iterable[tuple[str, str]], labels: Iterable[tuple[str, str]]) -> bool:
    """A nodeSelector (all pairs must be present) against a set of labels."""
    have = dict(labels)
    return all(have.get(k) == v for k, v in selector)


@dataclass(frozen=True)
class PodType:
    """``count`` identical pods (the replicas of one workload, usually).

    ``exclusive_group``: pods of every type with the same group go to different nodes (required pod
    anti-affinity on ``kubernetes.io/hostname``). ``conflicts``: names of other pod types none of
    whose pods may share a node with a pod of this one (anti-affinity between workloads, declared on
    either side; the relation is symmetric). ``max_per_node``: at most that many pods of this type
    per node (hostname topology spread). ``pools``: the node types (by name) the pods may run on, as
    the scheduling semantics decided (None: every pool whose labels match ``node_selector``).
    ``cpu_limit`` / ``memory_limit`` of ``None`` mean no limit (the pod may burst to whatever the
    node has). ``cpu_peak`` / ``memory_peak``: the measured peak of one pod (``--usage``: the sum of
    its containers' measured max), which the burst headroom takes in place of the limit; None when
    not measured. Packing never uses them: the scheduler packs requests.

    ``host_ports``: the ports each pod binds on its node (``(hostIP, port, protocol)``, hostIP ""
    for every address): at most one pod of the type per node, and types binding a conflicting port
    are in each other's ``conflicts`` (the adapter sets both). ``avoids``: DaemonSets (by name)
    whose nodes the pods cannot use (a host port both bind, or required anti-affinity between
    them); ``needs``: per required pod affinity term, the DaemonSets one of which must run on the
    node (the term selects their pods and no packed pod). ``extended``: the extended resources
    (``nvidia.com/gpu``, …) one pod asks for; a node holds no more of them than it offers
    (:attr:`NodeType.extended`), summed over every pod type on it.

    ``pool_caps``: per set of pools (by node type name), the most pods of this type the nodes of
    those pools hold together (a zone's pools under a zone topology spread: see
    :func:`podfit.packing.adapter._zone_parts`).
    """

    name: str
    cpu: int
    memory: int
    count: int = 1
    storage: int = 0
    cpu_limit: int | None = None
    memory_limit: int | None = None
    exclusive_group: str | None = None
    max_per_node: int | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    pools: tuple[str, ...] | None = None
    conflicts: tuple[str, ...] = ()
    cpu_peak: int | None = None
    memory_peak: int | None = None
    host_ports: tuple[tuple[str, int, str], ...] = ()
    avoids: tuple[str, ...] = ()
    needs: tuple[tuple[str, ...], ...] = ()
    pool_caps: tuple[tuple[tuple[str, ...], int], ...] = ()
    extended: Extended = ()

    def allowed_on(self, node: NodeType) -> bool:
        """Whether the pods may run on ``node``'s pool (labels, scheduling and the DaemonSets it
        runs; not capacity)."""
        return (
            (self.pools is None or node.name in self.pools)
            and selector_matches(self.node_selector, node.labels)
            and self.daemons_allow(node.daemon_pods)
        )

    def daemons_allow(self, daemon_pods: Iterable[str]) -> bool:
        """Whether a node running these DaemonSets' pods can take these pods (``avoids``, ``needs``)."""
        if not self.avoids and not self.needs:
            return True
        here = set(daemon_pods)
        return not here.intersection(self.avoids) and all(here.intersection(term) for term in self.needs)

    def __post_init__(self) -> None:
        for name in ("cpu", "memory", "storage", "count"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"PodType {self.name!r}: {name} must be a non-negative int, got {v!r}")
        if self.max_per_node is not None and self.max_per_node < 1:
            raise ValueError(f"PodType {self.name!r}: max_per_node must be at least 1")
        if any(cap < 0 for _, cap in self.pool_caps):
            raise ValueError(f"PodType {self.name!r}: a pool cap must be non-negative")

    def pool_cap(self, pool: str) -> int | None:
        """The cap of the pool set ``pool`` belongs to (None: not capped)."""
        for names, cap in self.pool_caps:
            if pool in names:
                return cap
        return None

    @property
    def demand(self) -> Vec:
        return (self.cpu, self.memory, 1, self.storage)

    def extended_fits(self, node: NodeType) -> bool:
        """Whether one pod's extended resources fit an empty node of ``node``'s pool."""
        room = extended_room(self.extended, node.extended)
        return room is None or room > 0

    @property
    def per_node_cap(self) -> int | None:
        """Most pods of this type one node may hold because of placement constraints alone."""
        one = 1 if self.exclusive_group or self.host_ports else None
        caps = [c for c in (self.max_per_node, one) if c is not None]
        return min(caps) if caps else None


@dataclass(frozen=True)
class DaemonPod:
    """A DaemonSet's pod: it takes its requests on every node it runs on — the pools in ``pools``
    (None: every pool) whose labels match ``node_selector``."""

    name: str
    cpu: int
    memory: int
    storage: int = 0
    node_selector: tuple[tuple[str, str], ...] = ()
    pools: tuple[str, ...] | None = None
    extended: Extended = ()

    def lands_on(self, pool: str, labels: Iterable[tuple[str, str]]) -> bool:
        return (self.pools is None or pool in self.pools) and selector_matches(self.node_selector, labels)


@dataclass(frozen=True)
class VMClass:
    """A VM class: the node VM's capacity (CPU in millicores, memory in bytes)."""

    name: str
    cpu: int
    memory: int
    storage: int | None = None

    @property
    def vcpus(self) -> int:
        return -(-self.cpu // 1000)

    def fits_numa(self, cores_per_numa_node: int | None, memory_per_numa_node: int | None) -> bool | None:
        """True when the class fits one NUMA node (vCPUs ≤ physical cores, memory ≤ NUMA memory).

        ``None`` when the platform does not give the NUMA node's size.
        """
        if cores_per_numa_node is None or memory_per_numa_node is None:
            return None
        return self.vcpus <= cores_per_numa_node and self.memory <= memory_per_numa_node


@dataclass(frozen=True)
class Overhead:
    """Per-node system overhead (the study's TKG node: 100Mi not allocatable, 250m for calico)."""

    cpu: int = 250
    memory: int = 100 * MI


@dataclass(frozen=True)
class NodeType:
    """``count`` identical nodes. ``cpu``/``memory``/``pods``/``storage`` are what pods can use."""

    name: str
    vm_class: str
    count: int
    cpu: int
    memory: int
    pods: int
    storage: int = UNBOUNDED
    labels: tuple[tuple[str, str], ...] = ()
    capacity_cpu: int = 0
    capacity_memory: int = 0
    daemon_pods: tuple[str, ...] = ()
    # extended resources each node offers pods (after its DaemonSets); None: not known, limits nothing
    extended: Extended | None = None

    @property
    def allocatable(self) -> Vec:
        return (self.cpu, self.memory, self.pods, self.storage)

    def with_count(self, count: int) -> NodeType:
        return NodeType(
            self.name,
            self.vm_class,
            count,
            self.cpu,
            self.memory,
            self.pods,
            self.storage,
            self.labels,
            self.capacity_cpu,
            self.capacity_memory,
            self.daemon_pods,
            self.extended,
        )


def node_type(
    name: str,
    vm_class: VMClass,
    count: int,
    *,
    labels: Iterable[tuple[str, str]] = (),
    overhead: Overhead = Overhead(),
    daemons: Iterable[DaemonPod] = (),
    max_pods: int = 110,
    extended: Extended | None = None,
) -> NodeType:
    """Node allocatable = class capacity − system overhead − the DaemonSet pods that land on it.

    Pod slots = max-pods − those DaemonSet pods. A value that would go negative is 0 (nothing fits).
    ``extended``: what each node offers of extended resources (None: not known), less what the
    DaemonSet pods landing there take.
    """
    labels = tuple(sorted(labels))
    landing = [d for d in daemons if d.lands_on(name, labels)]
    cpu = vm_class.cpu - overhead.cpu - sum(d.cpu for d in landing)
    mem = vm_class.memory - overhead.memory - sum(d.memory for d in landing)
    storage = UNBOUNDED if vm_class.storage is None else vm_class.storage - sum(d.storage for d in landing)
    pods = max_pods - len(landing)
    if extended is not None:
        taken: dict[str, int] = {}
        for d in landing:
            for r, v in d.extended:
                taken[r] = taken.get(r, 0) + v
        extended = tuple((r, max(v - taken.get(r, 0), 0)) for r, v in extended)
    return NodeType(
        name=name,
        vm_class=vm_class.name,
        count=count,
        cpu=max(cpu, 0),
        memory=max(mem, 0),
        pods=max(pods, 0),
        storage=max(storage, 0),
        labels=labels,
        capacity_cpu=vm_class.cpu,
        capacity_memory=vm_class.memory,
        daemon_pods=tuple(d.name for d in landing),
        extended=extended,
    )


@dataclass(frozen=True)
class Problem:
    """Do these pods fit these nodes?"""

    pods: tuple[PodType, ...]
    nodes: tuple[NodeType, ...]

    @property
    def node_count(self) -> int:
        return sum(n.count for n in self.nodes)


@dataclass(frozen=True)
class NodeResult:
    """One node of a placement: the pods on it (type name → count), used and allocatable vectors."""

    pool: str
    index: int
    vm_class: str
    pods: tuple[tuple[str, int], ...]
    used: Vec
    allocatable: Vec

    @property
    def free(self) -> Vec:
        a, u = self.allocatable, self.used
        return (a[0] - u[0], a[1] - u[1], a[2] - u[2], a[3] - u[3])

    @property
    def name(self) -> str:
        return f"{self.pool}-{self.index}"


@dataclass(frozen=True)
class EmptyNodes:
    """``count`` empty nodes of one pool, numbered ``start`` on: a pool's nodes that hold nothing,
    kept as a count."""

    pool: str
    vm_class: str
    start: int
    count: int
    allocatable: Vec

    def node(self, i: int) -> NodeResult:
        return NodeResult(self.pool, self.start + i, self.vm_class, (), (0, 0, 0, 0), self.allocatable)

    def name(self, i: int) -> str:
        return f"{self.pool}-{self.start + i}"


T = TypeVar("T")


class _Runs(Sequence[T]):
    """A sequence of items in order, runs of empty nodes (:class:`EmptyNodes`) kept as one entry
    each whatever their count: indexing and iterating give one item per node (``_expand`` makes a
    run's item when asked for)."""

    __slots__ = ("parts", "_ends")
    parts: tuple[T | EmptyNodes, ...]

    def __init__(self, parts: Iterable[T | EmptyNodes] = ()) -> None:
        self.parts = tuple(p for p in parts if not isinstance(p, EmptyNodes) or p.count > 0)
        self._ends = list(accumulate(p.count if isinstance(p, EmptyNodes) else 1 for p in self.parts))

    @staticmethod
    def _expand(run: EmptyNodes, i: int) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("node index out of range")
        at = bisect_right(self._ends, i)
        part = self.parts[at]
        if isinstance(part, EmptyNodes):
            return self._expand(part, i - (self._ends[at] - part.count))
        return part

    def __iter__(self) -> Iterator[T]:
        for part in self.parts:
            if isinstance(part, EmptyNodes):
                for i in range(part.count):
                    yield self._expand(part, i)
            else:
                yield part

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.parts)!r})"


class NodeList(_Runs[NodeResult]):
    """The nodes of a placement in order: the nodes that hold pods, each a :class:`NodeResult`,
    and runs of empty nodes, each one :class:`EmptyNodes` whatever its count. Indexing and
    iterating give a :class:`NodeResult` per node (an empty one made when asked for); ``parts``
    gives the runs themselves, for sums that need not visit every empty node."""

    __slots__ = ()

    @staticmethod
    def _expand(run: EmptyNodes, i: int) -> NodeResult:
        return run.node(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(self) != len(other):
            return False
        if isinstance(other, NodeList) and self.parts == other.parts:
            return True
        return all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        # equal lists have the same length and the same nodes with pods in order, however their
        # empty nodes are kept (one by one or as runs)
        return hash((len(self), tuple(p for p in self.parts if isinstance(p, NodeResult) and p.pods)))

    @property
    def placed(self) -> tuple[NodeResult, ...]:
        """The nodes kept one by one (those that hold pods, and any empty one a solver placed
        before a fuller one)."""
        return tuple(p for p in self.parts if isinstance(p, NodeResult))

    def free_total(self) -> tuple[int, int]:
        """Free CPU and memory summed over every node (a run counted once, times its count)."""
        cpu = mem = 0
        for p in self.parts:
            if isinstance(p, EmptyNodes):
                cpu += p.allocatable[0] * p.count
                mem += p.allocatable[1] * p.count
            else:
                f = p.free
                cpu += f[0]
                mem += f[1]
        return cpu, mem

    def allocatable_total(self) -> tuple[int, int]:
        """Allocatable CPU and memory summed over every node."""
        cpu = mem = 0
        for p in self.parts:
            k = p.count if isinstance(p, EmptyNodes) else 1
            cpu += p.allocatable[0] * k
            mem += p.allocatable[1] * k
        return cpu, mem


def node_runs(nodes: Sequence[NodeResult]) -> Iterator[tuple[NodeResult, int]]:
    """The nodes as (node, how many alike): a :class:`NodeList`'s run of empty nodes once, with its
    count; every other node with 1."""
    if not isinstance(nodes, NodeList):
        for n in nodes:
            yield n, 1
        return
    for part in nodes.parts:
        if isinstance(part, EmptyNodes):
            yield part.node(0), part.count
        else:
            yield part, 1


class NodeNames(_Runs[str]):
    """Node names in order, a run of empty nodes (:class:`EmptyNodes`) kept as one entry."""

    __slots__ = ("_names", "_runs")

    def __init__(self, parts: Iterable[str | EmptyNodes] = ()) -> None:
        super().__init__(parts)
        self._names = frozenset(p for p in self.parts if isinstance(p, str))
        self._runs: dict[str, list[EmptyNodes]] = {}
        for p in self.parts:
            if isinstance(p, EmptyNodes):
                self._runs.setdefault(p.pool, []).append(p)

    @staticmethod
    def _expand(run: EmptyNodes, i: int) -> str:
        return run.name(i)

    def __contains__(self, name: object) -> bool:
        if name in self._names:
            return True
        if not isinstance(name, str):
            return False
        pool, _, index = name.rpartition("-")
        if not index.isdigit():
            return False
        return any(r.start <= int(index) < r.start + r.count for r in self._runs.get(pool, ()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(self) != len(other):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        # equal sequences have the same length, first and last name, however a run is kept
        return hash((len(self), self[0], self[-1]) if len(self) else 0)


@dataclass(frozen=True)
class Bound:
    """A lower-bound certificate: ``needed`` nodes (or capacity) against ``available``.

    ``kind`` names the argument (``continuous-cpu``, ``l2-memory``, ``anti-affinity``,
    ``max-per-node``, ``pod-too-large``, ``capacity-cpu``…); ``scope`` the pools it is about.
    When ``needed > available`` it proves that the pods do not fit.
    """

    kind: str
    needed: int
    available: int
    scope: tuple[str, ...] = ()
    detail: str = ""

    @property
    def violated(self) -> bool:
        return self.needed > self.available


PROOFS = ("placement", "lower-bound", "solver", "budget-exhausted")


@dataclass(frozen=True)
class PackResult:
    """The answer to a :class:`Problem`.

    ``feasible`` True with proof ``placement`` (``nodes`` is the placement); False with proof
    ``lower-bound`` (``bounds`` holds a violated certificate) or ``solver`` (CP-SAT proved
    infeasibility); None with proof ``budget-exhausted``. On a misfit or exhausted budget ``nodes``
    holds the best heuristic attempt and ``unplaced`` what it could not place.
    """

    feasible: bool | None
    proof: str
    nodes: Sequence[NodeResult]  # a NodeList from pack(): empty nodes are runs
    unplaced: tuple[tuple[str, int], ...] = ()
    bounds: tuple[Bound, ...] = ()
    lower_bound: int | None = None
    method: str = ""
    solver_status: str | None = None

    def __post_init__(self) -> None:
        if self.proof not in PROOFS:
            raise ValueError(f"unknown proof {self.proof!r}")
        expected = {"placement": True, "lower-bound": False, "solver": False, "budget-exhausted": None}[self.proof]
        if self.feasible is not expected:
            raise ValueError(f"proof {self.proof!r} requires feasible={expected!r}")

    @property
    def violated_bounds(self) -> tuple[Bound, ...]:
        return tuple(b for b in self.bounds if b.violated)


@dataclass(frozen=True)
class MinNodes:
    """Least nodes of one class: ``nodes`` fits (a placement exists); ``lower_bound`` is proven.

    ``exact`` when they meet (the count is proven least).
    """

    vm_class: str
    nodes: int
    lower_bound: int
    exact: bool
    method: str
    node_type: NodeType = field(repr=False, compare=False, default=None)  # type: ignore[assignment]


@dataclass(frozen=True)
class ZonalNodes:
    """Least nodes of one class when the pools lie in zones: a placement on ``zones`` (zone, nodes
    of the class there), ``nodes`` in all, and the proven ``lower_bound`` (the larger of the
    class's own and the sum over zones of what the pods bound to each zone need there); ``exact``
    when they meet."""

    vm_class: str
    zones: tuple[tuple[str, int], ...]
    nodes: int
    lower_bound: int
    exact: bool


@dataclass(frozen=True)
class Stranded:
    """Free capacity on nodes that no pod of the workload could use (per node and in total)."""

    cpu: int
    memory: int
    nodes: Sequence[str]  # names of nodes whose free capacity is stranded (NodeNames: runs kept whole)
    free_cpu: int
    free_memory: int


@dataclass(frozen=True)
class DeviceHeadroom:
    """The burst headroom of the pods asking for one extended resource (``nvidia.com/gpu``): they
    run only on nodes that offer it, so their burst must fit those nodes' free capacity."""

    resource: str
    pods: int
    needed_cpu: int  # ceil(their burst × share / 100)
    needed_memory: int
    free_cpu: int  # free after packing on the nodes whose pool offers the resource
    free_memory: int
    nodes: int = 0  # those nodes
    measured_pods: int = 0  # of the pods, those whose burst is their measured peak − request

    @property
    def ok(self) -> bool:
        return self.free_cpu >= self.needed_cpu and self.free_memory >= self.needed_memory


@dataclass(frozen=True)
class Headroom:
    """Burst headroom: Σ(limit − request) × share against the free capacity after packing; a pod
    whose peak was measured counts its measured peak − request instead of its limit − request.
    ``devices``: the same per extended resource, for the pods asking for it against the nodes
    offering it (:class:`DeviceHeadroom`); the headroom is ok when every one of them is too."""

    share_percent: int
    burst_cpu: int  # Σ(limit − request) of pods with a CPU limit
    burst_memory: int
    needed_cpu: int  # ceil(burst × share / 100)
    needed_memory: int
    free_cpu: int
    free_memory: int
    unbounded_pods: int  # pods without a CPU or memory limit or measured peak (their burst is not known)
    measured_pods: int = 0  # pods whose CPU or memory burst is their measured peak − request
    devices: tuple[DeviceHeadroom, ...] = ()

    @property
    def cluster_ok(self) -> bool:
        """The burst of every pod fits the free capacity of every node."""
        return self.free_cpu >= self.needed_cpu and self.free_memory >= self.needed_memory

    @property
    def ok(self) -> bool:
        return self.cluster_ok and all(d.ok for d in self.devices)


@dataclass(frozen=True)
class Candidate:
    vm_class: str
    nodes: int
    min_nodes: int
    exact: bool
    waste_cpu: int
    waste_memory: int
    headroom_cpu: int
    headroom_memory: int
    waste_ppm: int  # mean of the CPU and memory shares of provisioned capacity left idle, parts per million
    host_limit: int | None = None  # the most nodes of the class the hosts hold (None: no hosts described)
    # when the pools lie in zones: the nodes per zone (zone, nodes), summing to ``nodes``
    zones: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Recommendation:
    vm_class: str | None
    nodes: int | None
    candidates: tuple[Candidate, ...]
    excluded: Mapping[str, str] = field(default_factory=dict)  # class → why not a candidate
