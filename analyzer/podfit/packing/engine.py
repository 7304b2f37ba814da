"""The packing analyzer: fit with proof, least nodes per VM class, stranded capacity, burst
headroom and right-sizing. Pure functions over :mod:`podfit.packing.model`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING

from ..words import plural
from . import exact, lns
from .bounds import ceil_div, certificates, lower_bound, pod_fits
from .heuristics import Packing, first_fit, run_all
from .model import (
    UNBOUNDED,
    Candidate,
    DaemonPod,
    DeviceHeadroom,
    EmptyNodes,
    Extended,
    Headroom,
    MinNodes,
    NodeList,
    NodeNames,
    NodeResult,
    NodeType,
    Overhead,
    PackResult,
    PodType,
    Problem,
    Recommendation,
    Stranded,
    VMClass,
    ZonalNodes,
    extended_room,
    node_runs,
    node_type,
)

if TYPE_CHECKING:
    from .adapter import PackInputs

__all__ = [
    "DEFAULT_TIME_BUDGET",
    "MAX_EXACT_CELLS",
    "pack",
    "min_nodes",
    "stranded",
    "headroom",
    "right_size",
    "Analysis",
    "analyze",
    "to_nodes",
    "node_list",
]

DEFAULT_TIME_BUDGET = 10.0
# Above this many (pod type × node) variables the CP-SAT model is not built (it would not finish).
MAX_EXACT_CELLS = 100_000
# Up to this many (pod type × node) cells CP-SAT minimises first (it proves such models at once).
SMALL_EXACT_CELLS = 2_000
# Share of the time left after the heuristics that the large-neighbourhood search may take (the rest
# goes to CP-SAT's own minimisation), and the share of that spent straight at the lower bound.
LNS_SHARE = 0.85
DIRECT_SHARE = 0.8
# Heuristics always get at least this long (seconds), even with no time budget for the solver.
HEURISTIC_MIN_TIME = 0.5


def _node(pods: Sequence[PodType], n: NodeType, index: int, content: Mapping[int, int]) -> NodeResult:
    used = [0, 0, 0, 0]
    for t, k in content.items():
        for d, v in enumerate(pods[t].demand):
            used[d] += v * k
    return NodeResult(
        pool=n.name,
        index=index,
        vm_class=n.vm_class,
        pods=tuple(sorted((pods[t].name, k) for t, k in content.items())),
        used=tuple(used),  # type: ignore[arg-type]
        allocatable=n.allocatable,
    )


def to_nodes(
    packing: Packing, pods: Sequence[PodType], pools: Sequence[NodeType], *, skip_empty: bool
) -> tuple[NodeResult, ...]:
    """The opened nodes of ``packing`` that hold pods (``skip_empty``: the least-nodes placements),
    or every opened node; numbered per pool in order. Unopened nodes: :func:`node_list`."""
    out = []
    seen: dict[int, int] = {}
    for j, pi in enumerate(packing.pool):
        content = packing.content[j]
        if skip_empty and not content:
            continue
        idx = seen.get(pi, 0)
        seen[pi] = idx + 1
        out.append(_node(pods, pools[pi], idx, content))
    return tuple(out)


def node_list(packing: Packing, pods: Sequence[PodType], pools: Sequence[NodeType]) -> NodeList:
    """Every node of fixed ``pools`` under ``packing``, pool by pool: the opened nodes one by one,
    then the pool's unopened ones as one run of empty nodes (a count, whatever the pool's size)."""
    by_pool: list[list[int]] = [[] for _ in pools]
    for j, pi in enumerate(packing.pool):
        by_pool[pi].append(j)
    parts: list[NodeResult | EmptyNodes] = []
    for pi, n in enumerate(pools):
        opened = by_pool[pi]
        parts.extend(_node(pods, n, idx, packing.content[j]) for idx, j in enumerate(opened))
        spare = packing.spare[pi] if pi < len(packing.spare) else 0
        parts.append(EmptyNodes(n.name, n.vm_class, len(opened), spare, n.allocatable))
    return NodeList(parts)


def _packing_from_exact(res: exact.ExactResult, n_types: int, name: str) -> Packing:
    return Packing(name, list(res.pool), [dict(c) for c in res.content], [0] * n_types)


def _spare_trailing(packing: Packing, pools: Sequence[NodeType]) -> Packing:
    """``packing`` over the first nodes of each of ``pools`` (pool by pool), with each pool's
    trailing empty nodes and its nodes not in the placement made its spare count."""
    keep = [True] * len(packing.pool)
    for j in range(len(packing.pool) - 1, -1, -1):
        pi = packing.pool[j]
        last_of_pool = j + 1 == len(packing.pool) or packing.pool[j + 1] != pi or not keep[j + 1]
        if not packing.content[j] and last_of_pool:
            keep[j] = False
    pool = [pi for j, pi in enumerate(packing.pool) if keep[j]]
    content = [c for j, c in enumerate(packing.content) if keep[j]]
    spare = [n.count - pool.count(pi) for pi, n in enumerate(pools)]
    return Packing(packing.name, pool, content, packing.unplaced, spare)


def _homogeneous_lower_bound(pods: Sequence[PodType], nodes: Sequence[NodeType]) -> int | None:
    allocs = {(n.allocatable, n.extended) for n in nodes if n.count}
    if len(allocs) != 1:
        return None
    lb, _ = lower_bound(pods, *next(iter(allocs)))
    return None if lb >= UNBOUNDED else lb


def pack(problem: Problem, time_budget: float = DEFAULT_TIME_BUDGET, *, workers: int = 2) -> PackResult:
    """Do ``problem.pods`` fit ``problem.nodes``? Always a proven answer or "budget-exhausted"."""
    pods = tuple(p for p in problem.pods if p.count > 0)
    pools = tuple(n for n in problem.nodes if n.count > 0)
    start = time.monotonic()
    certs = tuple(certificates(pods, pools))
    lb = _homogeneous_lower_bound(pods, pools)
    best, _ = run_all(pods, pools, deadline=start + max(time_budget / 4, HEURISTIC_MIN_TIME))
    nodes = node_list(best, pods, pools)
    unplaced = tuple(sorted((pods[t].name, k) for t, k in enumerate(best.unplaced) if k))
    result = partial(PackResult, bounds=certs, lower_bound=lb)
    if best.complete:
        return result(True, "placement", nodes, method=best.name)
    if any(b.violated for b in certs):
        return result(False, "lower-bound", nodes, unplaced, method="bounds")
    cells = len(pods) * problem.node_count
    remaining = time_budget - (time.monotonic() - start)
    if remaining <= 0 or cells > MAX_EXACT_CELLS or not exact.available():
        if not exact.available():
            status = exact.NOT_INSTALLED
        else:
            status = "not-run: model too large" if cells > MAX_EXACT_CELLS else "not-run: no time left"
        return result(None, "budget-exhausted", nodes, unplaced, method=best.name, solver_status=status)
    res = exact.solve_fixed(pods, pools, remaining, workers=workers)
    if res.status == "feasible":
        found = _spare_trailing(_packing_from_exact(res, len(pods), "cp-sat"), pools)
        return result(True, "placement", node_list(found, pods, pools), method="cp-sat", solver_status=res.status)
    if res.status == "infeasible":
        return result(False, "solver", nodes, unplaced, method="cp-sat", solver_status=res.status)
    return result(None, "budget-exhausted", nodes, unplaced, method="cp-sat", solver_status=res.status)


def _take_min(res: exact.ExactResult, packing: Packing, upper: int, lb: int, method: str, n_types: int):
    if res.objective is not None and res.objective < upper:
        packing = _packing_from_exact(res, n_types, "cp-sat")
        upper = res.objective
        method = "cp-sat"
    if res.bound is not None:
        lb = max(lb, res.bound)
    if res.status == "optimal":
        lb = max(lb, upper)
    if res.status == "infeasible":  # no placement on ``upper`` − 1 or fewer nodes at or above ``lb``
        lb = max(lb, upper)
    return packing, upper, lb, method


def _search_down(
    pods: Sequence[PodType], tmpl: NodeType, packing: Packing, lb: int, deadline: float
) -> tuple[list[dict[int, int]] | None, int]:
    """LNS toward ``lb`` nodes: a complete placement on fewer nodes than ``packing`` (or None), and
    the lower bound it proved on the way (``lb`` unless CP-SAT proved a count infeasible)."""
    used = [c for c in packing.content if c]
    upper = len(used)
    # 1. Straight at the lower bound: the best heuristic on ``lb`` fixed nodes, repaired.
    start = time.monotonic()
    part, _ = run_all(pods, [tmpl.with_count(lb)], deadline=start + (deadline - start) * 0.1)
    res = lns.fill(
        pods,
        [tmpl],
        lns.Search([dict(c) for c in part.expanded()[1]], list(part.unplaced), [0] * lb),
        start + (deadline - start) * DIRECT_SHARE,
    )
    if res.complete:
        return [c for c in res.content if c], lb
    if res.proven_infeasible:
        lb += 1  # ``lb`` nodes cannot hold the pods, so neither can fewer
    if upper <= lb:
        return None, lb
    # 2. One node at a time from the heuristic's placement.
    found, proven = lns.descend(pods, tmpl, used, lb, deadline)
    if proven:
        lb = max(lb, len(found))
    return (found if len(found) < upper else None), lb


MAX_MIN_NODES = 20_000  # beyond this, min_nodes reports nothing rather than search for hours


def _relax_selectors(pods: Iterable[PodType]) -> tuple[PodType, ...]:
    """The pods free of node selection and of zone caps: one class's nodes, in no zone."""
    return tuple(
        p
        if not p.node_selector and p.pools is None and not p.pool_caps
        else dataclasses.replace(p, node_selector=(), pools=None, pool_caps=())
        for p in pods
        if p.count > 0
    )


@dataclass(frozen=True)
class MinNodesResult:
    """The least count found, and the placement on that many nodes (built when asked for)."""

    summary: MinNodes
    _packing: Packing | None = field(default=None, repr=False, compare=False)
    _pods: tuple[PodType, ...] = field(default=(), repr=False, compare=False)

    @cached_property
    def nodes(self) -> tuple[NodeResult, ...]:
        if self._packing is None:
            return ()
        return to_nodes(self._packing, self._pods, [self.summary.node_type], skip_empty=True)


def min_nodes(
    pods: Sequence[PodType],
    template: NodeType,
    time_budget: float = DEFAULT_TIME_BUDGET,
    *,
    workers: int = 2,
    dot: bool = True,
    search: bool = True,
) -> MinNodesResult | None:
    """Least number of ``template`` nodes holding every pod (node selection ignored: the pool is
    assumed to carry the labels the pods ask for and only taints they tolerate). ``None`` when some
    pod never fits such a node, or when the lower bound alone exceeds ``MAX_MIN_NODES`` (no
    placement is searched at a scale no cluster has; the misfit itself is still proven by the bound
    in ``pack``). Without ``search``: the lower bound and first-fit-decreasing's count only (no
    other heuristic, no search), in milliseconds."""
    pods = _relax_selectors(pods)
    tmpl = template.with_count(1)
    if any(not pod_fits(p, tmpl) or not p.daemons_allow(tmpl.daemon_pods) for p in pods):
        return None  # too large for the class, or barred from every node by a DaemonSet that runs there
    start = time.monotonic()
    lb, _ = lower_bound(pods, tmpl.allocatable, tmpl.extended)
    if lb > MAX_MIN_NODES:
        return None
    total = sum(p.count for p in pods)
    if total == 0:
        return MinNodesResult(MinNodes(template.vm_class, 0, 0, True, "empty", tmpl))
    if search:
        best, _ = run_all(
            pods, [], template=tmpl, max_open=total, deadline=start + max(time_budget / 4, HEURISTIC_MIN_TIME), dot=dot
        )
    else:  # bounds only: the lower bound and first-fit-decreasing's count (run_all's baseline), no search
        time_budget = 0
        best = first_fit(pods, [], "sum", constrained_first=False, template=tmpl, max_open=total)
    upper = best.used_nodes
    method = best.name
    packing = best
    lb = max(lb, 1)
    deadline = start + time_budget
    cells = len(pods) * upper
    solver = exact.available()  # LNS repairs and the proofs are CP-SAT's: without it, the heuristics and the bound
    if upper > lb and time_budget > 0 and cells <= SMALL_EXACT_CELLS and solver:
        # Small models: CP-SAT settles them (proves the least count) in a fraction of a second.
        res = exact.solve_min(
            pods, tmpl, upper, lb, max(deadline - time.monotonic(), 0) / 2, workers=workers, hint_content=best.content
        )
        packing, upper, lb, method = _take_min(res, packing, upper, lb, method, len(pods))
    if upper > lb and time.monotonic() < deadline and solver:
        # Large-neighbourhood search, first straight at the lower bound, then one node at a time.
        now = time.monotonic()
        found, proven_lb = _search_down(pods, tmpl, packing, lb, now + (deadline - now) * LNS_SHARE)
        if found is not None and len(found) < upper:
            packing = Packing("lns", [0] * len(found), found, [0] * len(pods))
            upper, method = len(found), "lns"
        lb = max(lb, proven_lb)
    if upper > lb and time.monotonic() < deadline and len(pods) * upper <= MAX_EXACT_CELLS and solver:
        res = exact.solve_min(
            pods, tmpl, upper, lb, deadline - time.monotonic(), workers=workers, hint_content=packing.content
        )
        packing, upper, lb, method = _take_min(res, packing, upper, lb, method, len(pods))
    return MinNodesResult(MinNodes(template.vm_class, upper, lb, upper == lb, method, tmpl), packing, pods)


ZONE = "topology.kubernetes.io/zone"
# Above this many nodes (zones × the class's least count) the per-zone count is not searched.
MAX_ZONAL_NODES = 2_000


def pool_zones(pools: Sequence[NodeType]) -> dict[str, str] | None:
    """Pool name → its zone, when every pool with nodes has a zone label and there are two zones
    or more (else None: the least counts need no zones)."""
    zones = {n.name: dict(n.labels).get(ZONE) for n in pools if n.count > 0}
    if not zones or any(z is None for z in zones.values()) or len(set(zones.values())) < 2:
        return None
    return {k: v for k, v in zones.items() if v is not None}


def zonal_min_nodes(
    pods: Sequence[PodType],
    zone_of: Mapping[str, str],
    template: NodeType,
    least: MinNodes,
    deadline: float | None = None,
) -> ZonalNodes | None:
    """Least nodes of ``template``'s class with the zones kept: a pod type bound to pools of some
    zones (a zone-pinned workload, a zone spread's ``<name>@<zone>`` part, a pool's reserved pods)
    may only use nodes of those zones, and a zone spread's caps hold per zone. The nodes are
    interleaved by zone (a0, b0, a1, b1, …) so that pods free to go anywhere fill what the bound
    ones leave before a new node opens; every heuristic runs (until ``deadline``), each zone
    offering as many nodes as the class's least count (the pods of one zone are a subset of all, so
    they fit that many). The lower bound is the larger of ``least``'s and Σ over zones of the bound
    of the pods that only that zone can take; the count, a placement, is never below it. None when
    no heuristic places every pod, or the zones would offer more than ``MAX_ZONAL_NODES`` nodes."""
    zones = sorted(set(zone_of.values()))
    each = max(least.nodes, 1)
    if each * len(zones) > MAX_ZONAL_NODES:
        return None
    # one pool entry per node, named by its zone (names repeat: a pod type's pools are zone names)
    nodes = [dataclasses.replace(template.with_count(1), name=z) for _ in range(each) for z in zones]

    def zones_of(p: PodType) -> list[str]:
        here = sorted({zone_of[n] for n in p.pools or () if n in zone_of})
        return here or zones

    def zonal(p: PodType) -> PodType:
        caps = tuple((tuple(sorted({zone_of[n] for n in pools if n in zone_of})), cap) for pools, cap in p.pool_caps)
        return dataclasses.replace(p, node_selector=(), pools=tuple(zones_of(p)), pool_caps=caps)

    live = [p for p in pods if p.count > 0]
    where = [zones_of(p) for p in live]
    placed = [zonal(p) for p in live]
    best, _ = run_all(placed, nodes, deadline=deadline)
    if not best.complete:
        return None
    used = {z: 0 for z in zones}
    for j, content in enumerate(best.content):
        if content:
            used[nodes[best.pool[j]].name] += 1
    total = sum(used.values())
    alloc = template.allocatable
    bound = sum(lower_bound([p for p, w in zip(placed, where, strict=True) if w == [z]], alloc)[0] for z in zones)
    lb = max(least.lower_bound, bound)
    return ZonalNodes(least.vm_class, tuple(used.items()), total, lb, lb == total)


def stranded(pods: Sequence[PodType], nodes: Sequence[NodeResult], pools: Sequence[NodeType]) -> Stranded:
    """Free capacity on nodes where not even one more pod of any type (eligible there) would fit,
    by its free capacity and the extended resources it has left.

    A run of empty nodes (:class:`NodeList`) is looked at once (with all the extended resources
    its pool offers) and counted times its size; its names stay one run in the result
    (:class:`NodeNames`)."""
    import numpy as np

    by_name = {n.name: n for n in pools}
    live = [p for p in pods if p.count > 0]
    cpu = mem = free_cpu = free_mem = 0
    names: list[str | EmptyNodes] = []
    if not nodes:
        return Stranded(0, 0, (), 0, 0)
    parts = nodes.parts if isinstance(nodes, NodeList) else tuple(nodes)
    free = np.array([p.allocatable if isinstance(p, EmptyNodes) else p.free for p in parts], dtype=np.int64).reshape(
        len(parts), 4
    )
    demand = np.array([p.demand for p in live], dtype=np.int64).reshape(len(live), 4)
    # which pod types may run on each node's pool (a node of an unknown pool takes any)
    pool_names = sorted({n.pool for n in parts})
    allowed = {
        name: np.array([p.allowed_on(by_name[name]) for p in live], dtype=bool)
        if name in by_name
        else np.ones(len(live), dtype=bool)
        for name in pool_names
    }
    devices = _devices_left(live, parts, by_name)
    for i, n in enumerate(parts):
        f = free[i]
        k = n.count if isinstance(n, EmptyNodes) else 1
        free_cpu += int(f[0]) * k
        free_mem += int(f[1]) * k
        fitting = allowed[n.pool] & (demand <= f).all(axis=1)
        if devices[i] is not None:  # and the extended resources the node has left
            fitting &= np.array([extended_room(p.extended, devices[i]) != 0 for p in live], dtype=bool)
        usable = bool(len(live)) and bool(fitting.any())
        if not usable and (f[0] > 0 or f[1] > 0):
            cpu += int(f[0]) * k
            mem += int(f[1]) * k
            names.append(n if isinstance(n, EmptyNodes) else n.name)
    return Stranded(cpu, mem, NodeNames(names), free_cpu, free_mem)


def _devices_left(
    live: Sequence[PodType], parts: Sequence[NodeResult | EmptyNodes], by_name: Mapping[str, NodeType]
) -> list[tuple[tuple[str, int], ...] | None]:
    """Per node of a placement (a run of empty nodes once: each has all its pool offers), the
    extended resources it has left (None: nothing asks for any, or its pool does not say what it
    offers)."""
    if not any(p.extended for p in live):
        return [None] * len(parts)
    need = {p.name: dict(p.extended) for p in live}
    out: list[tuple[tuple[str, int], ...] | None] = []
    for n in parts:
        pool = by_name.get(n.pool)
        if pool is None or pool.extended is None:
            out.append(None)
            continue
        left = dict(pool.extended)
        for name, k in () if isinstance(n, EmptyNodes) else n.pods:
            for r, v in need.get(name, {}).items():
                left[r] = left.get(r, 0) - v * k
        out.append(tuple(sorted(left.items())))
    return out


def burst(
    pods: Sequence[PodType], node_cpu: int | None = None, node_memory: int | None = None
) -> tuple[int, int, int, int]:
    """Σ(limit − request) for CPU and memory over pods with a limit, the pods with neither a limit
    nor a measured peak, and the pods with a measured peak.

    A pod with a measured peak (``cpu_peak`` / ``memory_peak``) counts peak − request instead: what
    it did burst to, not what it may. A pod bursts on its own node only: with ``node_cpu`` /
    ``node_memory`` (a node's allocatable), a limit above it counts as the node's size (a 1,000-CPU
    limit on 4-CPU nodes bursts to 4 CPUs).
    """

    def gap(limit: int | None, peak: int | None, request: int, cap: int | None) -> int:
        top = peak if peak is not None else limit
        if top is None:
            return 0
        if cap is not None:
            top = min(top, max(cap, request))
        return max(top - request, 0)

    b_cpu = sum(gap(p.cpu_limit, p.cpu_peak, p.cpu, node_cpu) * p.count for p in pods)
    b_mem = sum(gap(p.memory_limit, p.memory_peak, p.memory, node_memory) * p.count for p in pods)
    unbounded = sum(
        p.count
        for p in pods
        if (p.cpu_limit is None and p.cpu_peak is None) or (p.memory_limit is None and p.memory_peak is None)
    )
    measured = sum(p.count for p in pods if p.cpu_peak is not None or p.memory_peak is not None)
    return b_cpu, b_mem, unbounded, measured


def headroom(
    pods: Sequence[PodType],
    nodes: Sequence[NodeResult],
    share_percent: int = 100,
    pools: Sequence[NodeType] = (),
) -> Headroom:
    """The burst headroom after packing (:class:`Headroom`). Pods asking for an extended resource
    run only on the nodes of the pools offering it (packing places them nowhere else: a node whose
    devices are all taken takes no other device pod), so their burst is also checked against the
    free capacity of those nodes alone, one resource at a time (``pools``: the pools packed, for
    what each offers; a pool that does not say is taken to offer it, as packing takes it)."""
    parts = nodes.parts if isinstance(nodes, NodeList) else nodes  # a run's nodes are alike
    largest_cpu = max((n.allocatable[0] for n in parts), default=None)
    largest_mem = max((n.allocatable[1] for n in parts), default=None)
    b_cpu, b_mem, unbounded, measured = burst(pods, largest_cpu, largest_mem)
    free = (
        nodes.free_total()
        if isinstance(nodes, NodeList)
        else (sum(n.free[0] for n in nodes), sum(n.free[1] for n in nodes))
    )
    offers = {p.name: p.extended for p in pools}
    devices = []
    for r in sorted({r for p in pods for r, _ in p.extended}):
        asking = [p for p in pods if dict(p.extended).get(r)]
        # the nodes whose pool offers r (a node of an unknown pool, or of a pool not saying, may),
        # a run of empty nodes once with its count
        where = [(n, k) for n, k in node_runs(nodes) if (o := offers.get(n.pool)) is None or dict(o).get(r, 0) > 0]
        d_cpu, d_mem, _, d_measured = burst(
            asking,
            max((n.allocatable[0] for n, _ in where), default=None),
            max((n.allocatable[1] for n, _ in where), default=None),
        )
        devices.append(
            DeviceHeadroom(
                resource=r,
                pods=sum(p.count for p in asking),
                needed_cpu=ceil_div(d_cpu * share_percent, 100),
                needed_memory=ceil_div(d_mem * share_percent, 100),
                free_cpu=sum(n.free[0] * k for n, k in where),
                free_memory=sum(n.free[1] * k for n, k in where),
                nodes=sum(k for _, k in where),
                measured_pods=d_measured,
            )
        )
    return Headroom(
        share_percent=share_percent,
        burst_cpu=b_cpu,
        burst_memory=b_mem,
        needed_cpu=ceil_div(b_cpu * share_percent, 100),
        needed_memory=ceil_div(b_mem * share_percent, 100),
        free_cpu=free[0],
        free_memory=free[1],
        unbounded_pods=unbounded,
        measured_pods=measured,
        devices=tuple(devices),
    )


def right_size(
    pods: Sequence[PodType],
    classes: Sequence[VMClass],
    least: Mapping[str, MinNodes],
    *,
    numa_cores: int | None = None,
    numa_memory: int | None = None,
    share_percent: int = 100,
    host_limits: Mapping[str, int] | None = None,
    why_not: Mapping[str, str] | None = None,
    zonal: Mapping[str, ZonalNodes] | None = None,
) -> Recommendation:
    """Among NUMA-fitting classes that hold the largest pod, the class and count with least waste.

    Count = the least count that fits, raised until the free capacity covers the burst headroom, and
    never above what the hosts hold (``host_limits``, per class): a class whose least count the
    hosts cannot hold is excluded; one whose headroom would take more nodes than the hosts hold gets
    the hosts' number (its headroom is then short, as ``headroom_cpu``/``headroom_memory`` show).
    Waste = provisioned capacity − requests − headroom, scored as the mean of the CPU and memory
    shares of provisioned capacity left idle (parts per million); ties go to fewer nodes, then the name.
    ``why_not``: per class without a least count, why (default: it cannot hold the largest pod).
    ``zonal``: per class, its least count with the pools' zones kept (:func:`zonal_min_nodes`):
    the count is never below it, and the nodes are given per zone (those the headroom adds go one
    at a time to the zone with the fewest).
    """
    req_cpu = sum(p.cpu * p.count for p in pods)
    req_mem = sum(p.memory * p.count for p in pods)
    excluded: dict[str, str] = {}
    cands = []
    for c in classes:
        numa = c.fits_numa(numa_cores, numa_memory)
        if numa is False:
            excluded[c.name] = "larger than a NUMA node"
            continue
        mn = least.get(c.name)
        if mn is None:
            excluded[c.name] = (why_not or {}).get(c.name, "cannot hold the largest pod")
            continue
        z = (zonal or {}).get(c.name)
        least_nodes, least_exact = (z.nodes, z.exact) if z is not None else (mn.nodes, mn.exact)
        limit = (host_limits or {}).get(c.name)
        if limit is not None and (least_nodes > limit or limit == 0):
            excluded[c.name] = f"the hosts hold at most {plural(limit, 'such node')}, the pods need {least_nodes}"
            continue
        t = mn.node_type
        n = least_nodes
        b_cpu, b_mem, _, _ = burst(pods, t.cpu, t.memory)  # each pod bursts within one node of this class
        need_cpu = ceil_div(b_cpu * share_percent, 100)
        need_mem = ceil_div(b_mem * share_percent, 100)
        if t.cpu > 0 and need_cpu:
            n = max(n, ceil_div(req_cpu + need_cpu, t.cpu))
        if t.memory > 0 and need_mem:
            n = max(n, ceil_div(req_mem + need_mem, t.memory))
        n = max(n, 1)
        if limit is not None:
            n = min(n, limit)
        per_zone: dict[str, int] = dict(z.zones) if z is not None else {}
        for _ in range(n - least_nodes if per_zone else 0):
            fewest = min(sorted(per_zone), key=lambda k: per_zone[k])
            per_zone[fewest] += 1
        prov_cpu, prov_mem = n * c.cpu, n * c.memory
        w_cpu = max(prov_cpu - req_cpu - need_cpu, 0)
        w_mem = max(prov_mem - req_mem - need_mem, 0)
        cands.append(
            Candidate(
                vm_class=c.name,
                nodes=n,
                min_nodes=least_nodes,
                exact=least_exact,
                waste_cpu=w_cpu,
                waste_memory=w_mem,
                headroom_cpu=n * t.cpu - req_cpu,
                headroom_memory=n * t.memory - req_mem,
                waste_ppm=(w_cpu * 1_000_000 // prov_cpu + w_mem * 1_000_000 // prov_mem) // 2,
                host_limit=limit,
                zones=tuple(per_zone.items()),
            )
        )
    cands.sort(key=lambda c: (c.waste_ppm, c.nodes, c.vm_class))
    top = cands[0] if cands else None
    return Recommendation(top.vm_class if top else None, top.nodes if top else None, tuple(cands), excluded)


@dataclass(frozen=True)
class Analysis:
    fit: PackResult
    pools: tuple[NodeType, ...]
    min_nodes: Mapping[str, MinNodes]
    stranded: Stranded
    headroom: Headroom
    recommendation: Recommendation
    pods: tuple[PodType, ...] = field(default=())
    # per VM class, the least count with the pools' zones kept (only when the pools lie in zones)
    zonal: Mapping[str, ZonalNodes] = field(default_factory=dict)


def daemons_for_min_nodes(
    daemons: Sequence[DaemonPod], pods: Sequence[PodType], pools: Sequence[NodeType]
) -> tuple[DaemonPod, ...]:
    """The DaemonSets whose pods take room on every node of a class in the least-nodes count (the
    class's nodes replace the pools the pods use): those that run on every worker pool, and those
    some pod cannot avoid (every pool it may run on runs the DaemonSet). A DaemonSet that only runs
    on pools the pods need not use (one selecting ``gpu=true`` beside pods that run anywhere) adds
    nothing: the pods do not need such nodes."""
    live = [n for n in pools if n.count > 0]
    out = []
    for d in daemons:
        on = {n.name for n in live if d.lands_on(n.name, n.labels)}
        if not on:
            continue
        everywhere = len(on) == len(live)
        unavoidable = any(
            p.count > 0 and (allowed := {n.name for n in live if p.allowed_on(n)}) and allowed <= on for p in pods
        )
        if everywhere or unavoidable:
            out.append(d)
    return tuple(out)


def analyze(
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    classes: Sequence[VMClass],
    *,
    overhead: Overhead = Overhead(),
    daemons: Sequence[DaemonPod] = (),
    max_pods: int = 110,
    numa_cores: int | None = None,
    numa_memory: int | None = None,
    share_percent: int = 100,
    time_budget: float = DEFAULT_TIME_BUDGET,
    workers: int = 2,
    family: str | None = None,
    host_limits: Mapping[str, int] | None = None,
    search: Sequence[str] | None = None,
    class_overheads: Mapping[str, tuple[Overhead, int]] | None = None,
    class_extended: Mapping[str, Extended] | None = None,
) -> Analysis:
    """Everything ``podfit pack`` reports. ``family`` (e.g. ``best-effort-``) limits the classes
    considered for min nodes and right-sizing to names with that prefix. ``search``: the classes
    whose least count is searched for (LNS, CP-SAT) within the time budget; the others get the
    lower bound and first-fit-decreasing's count. None: every class (the rules' choice).
    ``class_overheads``: per VM class, the overhead and pod slots its real nodes show (imported
    allocatable), used instead of ``overhead`` and ``max_pods`` to size that class.
    ``class_extended``: per VM class, the extended resources its nodes offer (the pools of that
    class that state them); when some pod asks for an extended resource, a class not listed offers
    none, so it is never sized for pods that need one."""
    pods = tuple(p for p in pods if p.count > 0)
    pools = tuple(pools)
    start = time.monotonic()
    fit = pack(Problem(pods, pools), time_budget, workers=workers)
    stranded_ = stranded(pods, fit.nodes, pools)
    headroom_ = headroom(pods, fit.nodes, share_percent, pools)
    cands = [c for c in classes if family is None or c.name.startswith(family)]
    least: dict[str, MinNodes] = {}
    why_not: dict[str, str] = {}
    landing = [
        dataclasses.replace(d, node_selector=(), pools=None) for d in daemons_for_min_nodes(daemons, pods, pools)
    ]
    searched = [c for c in cands if search is None or c.name in search]
    relaxed = _relax_selectors(pods)  # every class's nodes are taken to suit every pod
    asks_extended = any(p.extended for p in relaxed)
    for c in sorted(cands, key=lambda c: c in searched):  # bounds first: the search takes what is left
        left = max(time_budget - (time.monotonic() - start), 0.0)
        ov, slots = (class_overheads or {}).get(c.name, (overhead, max_pods))
        offer = (class_extended or {}).get(c.name, ()) if asks_extended else None
        t = node_type(c.name, c, 1, overhead=ov, daemons=landing, max_pods=slots, extended=offer)
        if c in searched:
            share = left / (len(searched) - searched.index(c))
            r = min_nodes(relaxed, t, share, workers=workers)
        else:
            r = min_nodes(relaxed, t, 0, workers=workers, search=False)
        if r is not None:
            least[c.name] = r.summary
        elif barred := sorted({p.name for p in relaxed if not p.daemons_allow(t.daemon_pods)}):
            why_not[c.name] = f"its nodes run DaemonSets that {', '.join(barred)} cannot share a node with"
        elif lacking := sorted(
            {f"{v} {r}" for p in relaxed for r, v in p.extended if dict(t.extended or ()).get(r, 0) < v}
        ):
            why_not[c.name] = f"its nodes do not offer {', '.join(lacking)} per node (no pool of the class states it)"
    least = {c.name: least[c.name] for c in cands if c.name in least}  # the catalogue's order
    zonal: dict[str, ZonalNodes] = {}
    zone_of = pool_zones(pools)
    for name, mn in least.items() if zone_of is not None else ():
        left = max(time_budget - (time.monotonic() - start), 0.0) / max(len(least), 1)
        z = zonal_min_nodes(pods, zone_of or {}, mn.node_type, mn, deadline=time.monotonic() + left)
        if z is None:
            continue
        zonal[name] = z
        if z.nodes < mn.nodes:  # the zones' placement is one of the class's too
            least[name] = dataclasses.replace(mn, nodes=z.nodes, exact=z.nodes == mn.lower_bound, method="zones")
    rec = right_size(
        pods,
        cands,
        least,
        numa_cores=numa_cores,
        numa_memory=numa_memory,
        share_percent=share_percent,
        host_limits=host_limits,
        why_not=why_not,
        zonal=zonal,
    )
    return Analysis(fit, pools, least, stranded_, headroom_, rec, pods, zonal)


def analyze_inputs(
    inputs: PackInputs, share_percent: int, time_budget: float, search: Sequence[str] | None = None
) -> Analysis:
    """:func:`analyze` over what :func:`podfit.packing.adapter.inputs_from` gathered (the pods,
    pools, classes, overhead, DaemonSets and NUMA size of one cluster)."""
    return analyze(
        inputs.pods,
        inputs.pools,
        inputs.classes,
        overhead=inputs.overhead,
        daemons=inputs.daemons,
        max_pods=inputs.max_pods,
        numa_cores=inputs.numa_cores,
        numa_memory=inputs.numa_memory,
        share_percent=share_percent,
        time_budget=time_budget,
        family=inputs.family,
        host_limits=inputs.host_limits,
        search=search,
        class_overheads=inputs.class_overheads,
        class_extended=inputs.class_extended,
    )
