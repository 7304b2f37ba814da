"""Lower bounds on the nodes a set of pods needs.

For identical nodes of allocatable ``C`` (a 4-vector):

* continuous, per dimension: ⌈Σ demand / C⌉;
* Martello–Toth L2, per dimension (one-dimensional bin packing on that dimension alone);
* Fekete–Schepers dual-feasible functions u^(k), k = 1…20, per dimension: each maps the sizes in one
  node to values summing to at most the capacity, so ⌈Σ u^(k)(size) / C⌉ nodes are needed;
* anti-affinity: the pods of one exclusive group need one node each; a type with at most ``m`` per
  node needs ⌈count / m⌉ nodes;
* host ports: the pods that bind one host port (or a conflicting one: the same port and protocol
  on the same address or on every address) need one node each (:func:`port_cliques`).

Each is valid because any placement of the pods also packs every single dimension, and respects
the constraints. For a fixed, possibly mixed set of nodes, :func:`certificates` adds capacity
checks per set of eligible pools (a Hall-type condition) and per-pool bounds.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence

from ..words import plural
from .model import DIMS, UNBOUNDED, Bound, Extended, NodeType, PodType, Vec, extended_room

__all__ = [
    "ceil_div",
    "fits",
    "pod_fits",
    "l2_bound",
    "dff_value",
    "dff_bound",
    "DFF_KS",
    "node_bounds",
    "lower_bound",
    "eligible_pools",
    "certificates",
    "port_cliques",
]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def fits(demand: Vec, capacity: Vec) -> bool:
    return all(d <= c for d, c in zip(demand, capacity, strict=True))


def pod_fits(pod: PodType, node: NodeType) -> bool:
    """One pod of ``pod`` fits an empty node of ``node``: allocatable and extended resources."""
    return fits(pod.demand, node.allocatable) and pod.extended_fits(node)


def l2_bound(items: Iterable[tuple[int, int]], capacity: int) -> int:
    """Martello–Toth L2 for 1-D bin packing; ``items`` are (size, count), sizes ≤ capacity.

    For each k in {0} ∪ {sizes ≤ C/2}: J1 = sizes > C − k, J2 = C − k ≥ size > C/2,
    J3 = C/2 ≥ size ≥ k; L(k) = |J1| + |J2| + max(0, ⌈(Σ J3 − (|J2|·C − Σ J2)) / C⌉).
    Each k takes three binary searches over the sizes in order, with running sums of the counts
    and of size × count.
    """
    items = sorted((w, n) for w, n in items if n > 0 and w > 0)
    if not items or capacity <= 0:
        return 0
    sizes = [w for w, _ in items]
    count_upto = [0]  # count_upto[i]: pods of the i smallest sizes
    sum_upto = [0]  # sum_upto[i]: their total size
    for w, n in items:
        count_upto.append(count_upto[-1] + n)
        sum_upto.append(sum_upto[-1] + w * n)
    half = bisect_right(sizes, capacity // 2)  # sizes[:half] are ≤ C/2, the rest > C/2
    best = 0
    for k in {0} | {w for w in sizes[:half]}:
        big = bisect_right(sizes, capacity - k)  # sizes[big:] are > C − k (J1)
        n1 = count_upto[-1] - count_upto[big]
        n2 = count_upto[big] - count_upto[half]  # C − k ≥ size > C/2 (J2)
        s2 = sum_upto[big] - sum_upto[half]
        s3 = sum_upto[half] - sum_upto[bisect_left(sizes, k)]  # C/2 ≥ size ≥ k (J3)
        rest = s3 - (n2 * capacity - s2)
        best = max(best, n1 + n2 + (ceil_div(rest, capacity) if rest > 0 else 0))
    return best


# Parameters k of the Fekete–Schepers family tried (k = 1 counts items above half; large k tends to
# the continuous bound).
DFF_KS = tuple(range(1, 21))


def dff_value(size: int, capacity: int, k: int) -> int:
    """Fekete–Schepers u^(k)(size / C), scaled by k·C to stay an integer.

    u^(k)(x) = x when (k + 1)·x is a whole number, else ⌊(k + 1)·x⌋ / k. For sizes in one node
    (Σ x ≤ 1), Σ u^(k)(x) ≤ 1; scaled: Σ dff_value ≤ k·C.
    """
    if (k + 1) * size % capacity == 0:
        return k * size
    return capacity * ((k + 1) * size // capacity)


def dff_bound(items: Iterable[tuple[int, int]], capacity: int, ks: Iterable[int] = DFF_KS) -> int:
    """max over k of ⌈Σ count · u^(k)(size / C)⌉ (exact integer arithmetic); sizes ≤ capacity."""
    merged: dict[int, int] = {}
    for w, n in items:
        if n > 0 and w > 0:
            merged[w] = merged.get(w, 0) + n
    if not merged or capacity <= 0:
        return 0
    best = 0
    for k in ks:
        total = 0
        for w, n in merged.items():  # dff_value inlined: this runs for every size and every k
            x = (k + 1) * w
            total += n * (k * w if x % capacity == 0 else capacity * (x // capacity))
        best = max(best, ceil_div(total, k * capacity))
    return best


def node_bounds(pods: Sequence[PodType], allocatable: Vec, extended: Extended | None = None) -> list[Bound]:
    """Every bound for ``pods`` on identical nodes of ``allocatable`` offering ``extended`` (None:
    not known) (``available`` left at 0)."""
    out: list[Bound] = []
    too_large = [
        p for p in pods if p.count and (not fits(p.demand, allocatable) or extended_room(p.extended, extended) == 0)
    ]
    if too_large:
        # No number of such nodes fits them: report "needed" above any count.
        names = ", ".join(p.name for p in too_large[:5])
        out.append(Bound("pod-too-large", UNBOUNDED, 0, detail=f"larger than a node's allocatable: {names}"))
        return out
    for d, dim in enumerate(DIMS):
        cap = allocatable[d]
        if cap >= UNBOUNDED:
            continue
        total = sum(p.demand[d] * p.count for p in pods)
        if total == 0:
            continue
        out.append(Bound(f"continuous-{dim}", ceil_div(total, cap), 0, detail=f"Σ {dim} {total} / {cap} per node"))
        if dim != "pods":
            items = [(p.demand[d], p.count) for p in pods]
            out.append(Bound(f"l2-{dim}", l2_bound(items, cap), 0))
            out.append(Bound(f"dff-{dim}", dff_bound(items, cap), 0, detail="Fekete–Schepers u^(k), best k"))
    if extended is not None:
        asked: dict[str, int] = defaultdict(int)
        for p in pods:
            for r, v in p.extended:
                asked[r] += v * p.count
        offer = dict(extended)
        for r, v in sorted(asked.items()):  # every r is offered: a pod it does not fit is too large
            out.append(Bound(f"continuous-{r}", ceil_div(v, offer[r]), 0, detail=f"Σ {r} {v} / {offer[r]} per node"))
    groups: dict[str, int] = defaultdict(int)
    for p in pods:
        if p.exclusive_group:
            groups[p.exclusive_group] += p.count
    for g, n in sorted(groups.items()):
        out.append(Bound("anti-affinity", n, 0, detail=f"group {g}: {plural(n, 'pod')}, one per node"))
    for p in pods:
        if p.max_per_node and p.count:
            out.append(
                Bound(
                    "max-per-node",
                    ceil_div(p.count, p.max_per_node),
                    0,
                    detail=f"{p.name}: {plural(p.count, 'pod')}, at most {p.max_per_node} per node",
                )
            )
    for port, members in port_cliques(pods):
        n = sum(p.count for p in members)
        if n:
            out.append(Bound("host-port", n, 0, detail=f"hostPort {port}: {plural(n, 'pod')}, one per node"))
    return out


def _extended_capacity(inside: Sequence[PodType], pools: Sequence[NodeType], scope: tuple[str, ...]) -> list[Bound]:
    """Per extended resource the pods limited to ``pools`` ask for: their total against what those
    pools' nodes offer (skipped when a pool's offer is not known)."""
    if any(n.extended is None for n in pools):
        return []
    total: dict[str, int] = defaultdict(int)
    for p in inside:
        for r, v in p.extended:
            total[r] += v * p.count
    out = []
    for r, need in sorted(total.items()):
        have = sum(dict(n.extended or ()).get(r, 0) * n.count for n in pools)
        out.append(Bound(f"capacity-{r}", need, have, scope, f"Σ {r} of pods limited to these pools"))
    return out


def port_cliques(pods: Sequence[PodType]) -> list[tuple[str, list[PodType]]]:
    """Sets of pod types whose pods pairwise conflict on a host port, each named by the port: for
    every port and protocol, the types binding it on every address, and with them those binding it
    on each one address. No node holds two pods of one set."""
    by_port: dict[tuple[int, str], dict[str, list[PodType]]] = defaultdict(lambda: defaultdict(list))
    for p in pods:
        for ip, port, protocol in p.host_ports:
            if p not in by_port[port, protocol][ip]:
                by_port[port, protocol][ip].append(p)
    out: list[tuple[str, list[PodType]]] = []
    for (port, protocol), by_ip in sorted(by_port.items()):
        every = by_ip.get("", [])
        if every:
            out.append((f"{port}/{protocol}", list(every)))
        for ip, members in sorted(by_ip.items()):
            if ip:
                out.append((f"{ip}:{port}/{protocol}", members + [p for p in every if p not in members]))
    return out


def lower_bound(
    pods: Sequence[PodType], allocatable: Vec, extended: Extended | None = None
) -> tuple[int, Bound | None]:
    """The best node-count bound for identical nodes, and the certificate that gives it."""
    bounds = node_bounds(pods, allocatable, extended)
    if not bounds:
        return (0, None)
    best = max(bounds, key=lambda b: b.needed)
    return (best.needed, best)


def eligible_pools(pod: PodType, nodes: Sequence[NodeType]) -> tuple[int, ...]:
    """Indices of pools the pod may run on (scheduling) and whose nodes can hold it."""
    return tuple(i for i, n in enumerate(nodes) if n.count > 0 and pod.allowed_on(n) and pod_fits(pod, n))


def certificates(pods: Sequence[PodType], nodes: Sequence[NodeType]) -> list[Bound]:
    """Bounds for a fixed set of pools; any with ``needed > available`` proves a misfit."""
    out: list[Bound] = []
    pods = [p for p in pods if p.count > 0]
    elig = {p.name: eligible_pools(p, nodes) for p in pods}
    for p in pods:
        if not elig[p.name]:
            out.append(
                Bound(
                    "pod-too-large" if any(p.allowed_on(n) for n in nodes) else "no-matching-pool", 1, 0, detail=p.name
                )
            )
    # Exclusive groups and per-node caps against the nodes the pods may use.
    groups: dict[str, list[PodType]] = defaultdict(list)
    for p in pods:
        if p.exclusive_group:
            groups[p.exclusive_group].append(p)
    for g, members in sorted(groups.items()):
        pools = sorted({i for p in members for i in elig[p.name]})
        avail = sum(nodes[i].count for i in pools)
        n = sum(p.count for p in members)
        out.append(Bound("anti-affinity", n, avail, tuple(nodes[i].name for i in pools), f"group {g}"))
    for p in pods:
        if p.max_per_node:
            avail = sum(nodes[i].count for i in elig[p.name])
            out.append(
                Bound(
                    "max-per-node",
                    ceil_div(p.count, p.max_per_node),
                    avail,
                    tuple(nodes[i].name for i in elig[p.name]),
                    p.name,
                )
            )
    for p in pods:
        if p.pool_caps and elig[p.name]:
            # every pool it may use lies in a capped set (a zone): it holds no more than the caps
            names = [nodes[i].name for i in elig[p.name]]
            zone_caps = [(sum(1 for n in names if n in zone), cap) for zone, cap in p.pool_caps]
            if all(any(n in zone for zone, _ in p.pool_caps) for n in names):
                out.append(
                    Bound(
                        "zone-spread",
                        p.count,
                        sum(cap for used, cap in zone_caps if used),
                        tuple(names),
                        p.name,
                    )
                )
    for port, members in port_cliques(pods):
        pools = sorted({i for p in members for i in elig[p.name]})
        n = sum(p.count for p in members)
        out.append(
            Bound(
                "host-port",
                n,
                sum(nodes[i].count for i in pools),
                tuple(nodes[i].name for i in pools),
                f"hostPort {port}",
            )
        )
    # Hall-type capacity checks: pods that can only use the pools in S need S's capacity.
    for s in sorted({e for e in elig.values() if e}):
        sset = set(s)
        inside = [p for p in pods if elig[p.name] and set(elig[p.name]) <= sset]
        scope = tuple(nodes[i].name for i in s)
        for d, dim in enumerate(DIMS):
            caps = [nodes[i].allocatable[d] for i in s]
            if any(c >= UNBOUNDED for c in caps):
                continue
            total = sum(p.demand[d] * p.count for p in inside)
            have = sum(nodes[i].allocatable[d] * nodes[i].count for i in s)
            if total:
                out.append(Bound(f"capacity-{dim}", total, have, scope, f"Σ {dim} of pods limited to these pools"))
        out.extend(_extended_capacity(inside, [nodes[i] for i in s], scope))
        allocs = {(nodes[i].allocatable, nodes[i].extended) for i in s}
        if len(allocs) == 1:
            ((alloc, ext),) = allocs
            avail = sum(nodes[i].count for i in s)
            for b in node_bounds(inside, alloc, ext):
                if b.kind in ("anti-affinity", "max-per-node", "host-port"):
                    continue  # already checked against the exact eligible nodes above
                out.append(Bound(b.kind, b.needed, avail, scope, b.detail))
    return out
