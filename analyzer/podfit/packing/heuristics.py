"""Placement heuristics over grouped pod types.

* First fit over the nodes in order, pod types taken in decreasing order of a size key: dominant
  share, sum of shares (the cluster-autoscaler estimator's order), or Euclidean norm. A type's pods
  are placed together: first fit of identical items fills each node with as many as fit before
  moving on, which is exactly what placing them one at a time would do. In the "most constrained
  first" variants, types with fewer eligible nodes, an anti-affinity group or a per-node cap go
  before the others.
* Dot product (node-centric): fill one node at a time, each time with the fitting pod whose
  normalised demand has the largest dot product with the node's normalised free capacity.

All of them honour the pools each pod may use, exclusive (anti-affinity) groups, conflicts
between pod types, per-node caps and pool caps (the most pods of a type a zone's pools hold
together). In "open nodes" mode (``template`` given) they open new identical nodes as needed, so
the number of nodes they use is an upper bound on the least node count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from .model import DIMS, UNBOUNDED, NodeType, PodType, extended_room

__all__ = ["Packing", "ORDERINGS", "BASELINE", "ffd_order", "first_fit", "dot_product", "run_all"]


@dataclass
class Packing:
    """A (possibly partial) placement. Only opened nodes are materialised: node j is of pool
    ``pool[j]`` and holds ``content[j]``; ``spare[i]`` more nodes of pool i (fixed pools) were never
    opened and are empty. A pool's opened nodes come first among its nodes, in the order opened."""

    name: str
    pool: list[int]
    content: list[dict[int, int]]
    unplaced: list[int]  # per pod type
    spare: list[int] = field(default_factory=list)  # per pool: empty nodes never opened

    @property
    def complete(self) -> bool:
        return not any(self.unplaced)

    @property
    def used_nodes(self) -> int:
        return sum(1 for c in self.content if c)

    def score(self) -> tuple[int, int]:
        return (sum(self.unplaced), self.used_nodes)

    def expanded(self) -> tuple[list[int], list[dict[int, int]]]:
        """Every node, spare ones included, in the pools' order (pool by pool; in each, the opened
        nodes in the order opened, then the spare ones): the pool of each and what it holds. Its
        length is the node count: for small instances (tests, CP-SAT hints) only."""
        pools = max(len(self.spare), max(self.pool, default=-1) + 1)
        by_pool: list[list[int]] = [[] for _ in range(pools)]
        for j, i in enumerate(self.pool):
            by_pool[i].append(j)
        pool: list[int] = []
        content: list[dict[int, int]] = []
        for i, opened in enumerate(by_pool):
            spare = self.spare[i] if i < len(self.spare) else 0
            pool += [i] * (len(opened) + spare)
            content += [self.content[j] for j in opened] + [{} for _ in range(spare)]
        return pool, content


class _State:
    """The opened nodes of a placement and each pool's count of nodes not yet opened (``spare``):
    a pool's unopened nodes are identical and empty, so they are a count, never one entry each,
    and at most the nodes that take pods are ever opened. With a ``template`` there is one pool,
    the template's, of ``max_open`` nodes."""

    def __init__(
        self, pods: Sequence[PodType], pools: Sequence[NodeType], template: NodeType | None, max_open: int
    ) -> None:
        self.pods = pods
        self.template = template
        self.max_open = max_open
        self.pools = [template] if template is not None else list(pools)
        self.spare = [max_open] if template is not None else [n.count for n in pools]
        self.pool: list[int] = []
        self.fc: list[int] = []
        self.fm: list[int] = []
        self.fp: list[int] = []
        self.fs: list[int] = []
        # per node, the extended resources it has left (None: its pool's offer is not known)
        self.fx: list[dict[str, int] | None] = []
        self.groups: dict[int, set[str]] = {}  # node → exclusive groups on it (nodes with any)
        self.content: list[dict[int, int]] = []
        self.elig = [[p.allowed_on(n) for n in self.pools] for p in pods]
        self.conf = conflict_indices(pods)

    def open(self, pool: int, count: int = 1) -> int:
        """Open ``count`` empty nodes of pool ``pool`` (taken from its spare count); the index of the
        first."""
        n = self.pools[pool]
        j = len(self.pool)
        self.spare[pool] -= count
        self.pool += [pool] * count
        self.fc += [n.cpu] * count
        self.fm += [n.memory] * count
        self.fp += [n.pods] * count
        self.fs += [n.storage] * count
        self.fx += [None if n.extended is None else dict(n.extended) for _ in range(count)]
        self.content += [{} for _ in range(count)]
        return j

    def close_last(self) -> None:
        """Give the last opened node, still empty, back to its pool's spare count."""
        i = self.pool.pop()
        for free in (self.fc, self.fm, self.fp, self.fs, self.fx):
            free.pop()
        self.content.pop()
        self.spare[i] += 1

    def can_open(self) -> bool:
        return self.template is not None and self.spare[0] > 0

    def room(self, t: int, j: int) -> int:
        """How many pods of type t node j can still take."""
        p = self.pods[t]
        if not self.elig[t][self.pool[j]]:
            return 0
        g = p.exclusive_group
        if g is not None and g in self.groups.get(j, ()):
            return 0
        if self.conf[t] and any(self.content[j].get(u) for u in self.conf[t]):
            return 0
        k = self.fp[j]
        if p.cpu:
            k = min(k, self.fc[j] // p.cpu)
        if p.memory:
            k = min(k, self.fm[j] // p.memory)
        if p.storage:
            k = min(k, self.fs[j] // p.storage)
        left = self.fx[j]
        if p.extended and left is not None:
            k = min(k, *(left.get(r, 0) // v for r, v in p.extended))
        cap = p.per_node_cap
        if cap is not None:
            k = min(k, cap - self.content[j].get(t, 0))
        return max(k, 0)

    def place(self, t: int, j: int, k: int) -> None:
        p = self.pods[t]
        self.fc[j] -= p.cpu * k
        self.fm[j] -= p.memory * k
        self.fp[j] -= k
        self.fs[j] -= p.storage * k
        left = self.fx[j]
        if p.extended and left is not None:
            for r, v in p.extended:
                left[r] = left.get(r, 0) - v * k
        if p.exclusive_group is not None:
            self.groups.setdefault(j, set()).add(p.exclusive_group)
        self.content[j][t] = self.content[j].get(t, 0) + k

    def result(self, name: str, unplaced: list[int]) -> Packing:
        # with a template the unopened nodes are no part of the placement: it opens what it needs
        return Packing(name, self.pool, self.content, unplaced, [] if self.template is not None else list(self.spare))


def empty_room(p: PodType, n: NodeType) -> int:
    """How many pods of ``p`` one empty node of ``n`` takes (capacity, the extended resources the
    node offers and per-node cap; not the pool's eligibility nor a pool cap)."""
    k = n.pods
    for dem, cap in ((p.cpu, n.cpu), (p.memory, n.memory), (p.storage, n.storage)):
        if dem:
            k = min(k, cap // dem)
    if (devices := extended_room(p.extended, n.extended)) is not None:
        k = min(k, devices)
    if p.per_node_cap is not None:
        k = min(k, p.per_node_cap)
    return max(k, 0)


def conflict_indices(pods: Sequence[PodType]) -> list[tuple[int, ...]]:
    """Per pod type, the indices of the types it may not share a node with (both directions)."""
    index = {p.name: t for t, p in enumerate(pods)}
    out: list[set[int]] = [set() for _ in pods]
    for t, p in enumerate(pods):
        for name in p.conflicts:
            u = index.get(name)
            if u is not None and u != t:
                out[t].add(u)
                out[u].add(t)
    return [tuple(sorted(c)) for c in out]


def _reference(pods: Sequence[PodType], pools: Sequence[NodeType]) -> tuple[float, ...]:
    """Per-dimension normalisers: the largest allocatable (or the largest demand if unbounded)."""
    ref = []
    for d in range(len(DIMS)):
        caps = [n.allocatable[d] for n in pools if n.allocatable[d] < UNBOUNDED]
        if caps:
            ref.append(float(max(max(caps), 1)))
        else:
            ref.append(float(max([p.demand[d] for p in pods] + [1])))
    return tuple(ref)


def _shares(p: PodType, ref: tuple[float, ...]) -> list[float]:
    # cpu, memory and storage; the pod slot is the same for every pod and does not order them
    return [p.cpu / ref[0], p.memory / ref[1], p.storage / ref[3]]


ORDERINGS: dict[str, Callable[[PodType, tuple[float, ...]], float]] = {
    "dominant": lambda p, r: max(_shares(p, r)),
    "sum": lambda p, r: sum(_shares(p, r)),
    "norm": lambda p, r: math.sqrt(sum(s * s for s in _shares(p, r))),
}
# The cluster-autoscaler binpacking estimator's order: CPU share + memory share, decreasing.
BASELINE = "ffd-sum"


def ffd_order(
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    key: str,
    *,
    constrained_first: bool = True,
    template: NodeType | None = None,
) -> list[int]:
    """The order in which :func:`first_fit` places the pod types: decreasing size by ``key``
    (ties by name); with ``constrained_first``, fewer eligible nodes first, then the types with an
    anti-affinity group, a per-node cap or conflicts."""
    ref = _reference(pods, [template] if template else pools)
    size = ORDERINGS[key]

    def eligible_nodes(p: PodType) -> int:
        return sum(n.count for n in pools if p.allowed_on(n)) if template is None else 0

    def order_key(t: int) -> tuple:
        p = pods[t]
        if constrained_first:
            capped = p.exclusive_group or p.max_per_node or p.conflicts or p.host_ports or p.pool_caps
            constrained = 0 if capped else 1
            return (eligible_nodes(p), constrained, -size(p, ref), p.name)
        return (-size(p, ref), p.name)

    return sorted(range(len(pods)), key=order_key)


def first_fit(
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    key: str,
    *,
    constrained_first: bool = True,
    template: NodeType | None = None,
    max_open: int = 0,
    order: Sequence[int] | None = None,
) -> Packing:
    """First fit of the pod types in :func:`ffd_order` (``order``, when given, is that order)."""
    if order is None:
        order = ffd_order(pods, pools, key, constrained_first=constrained_first, template=template)
    st = _State(pods, pools, template, max_open)
    unplaced = [0] * len(pods)
    if template is None:
        _fill_pools(st, order, unplaced)
    else:
        _fill_in_order(st, order, unplaced)
    name = f"ffd-{key}" + ("" if constrained_first else "-plain")
    if not constrained_first and key == "sum":
        name = BASELINE
    return st.result(name, unplaced)


def _fill_pools(st: _State, order: Sequence[int], unplaced: list[int]) -> None:
    """First fit of each type in ``order`` over fixed pools, the nodes in the pools' order: pool by
    pool, the opened nodes in turn take as many of the type's pods as fit, then as many of the
    pool's unopened nodes are opened as the pods left need (each takes the same number: they are
    empty and alike). The same result as visiting every node one by one: a pool's unopened nodes
    come after its opened ones, and when one empty node takes none of the type none does (they are
    left unopened; a later type that fits opens them at the same place). A node takes no more of
    an extended resource than it has left (an unopened one: all its pool offers; a pool whose offer
    is not known limits nothing), and the nodes of a capped pool set (a zone), in order, take no
    more of the type than its pool cap together: an unopened node is opened only for the pods the
    cap leaves. Per pool the opened nodes' room is computed at once (numpy); nothing is ever kept
    per unopened node."""
    import numpy as np

    pods = st.pods
    n_pools = len(st.pools)
    free = [np.zeros((4, 0), dtype=np.int64) for _ in range(n_pools)]  # per pool: cpu, memory, slots, storage
    # extended resources the pods ask for: per pool whose nodes' offer is known, what each of its
    # opened nodes has left of each (rows: resources); None where the offer is not known
    res = sorted({r for p in pods for r, _ in p.extended})
    xfree: list[np.ndarray | None] = [
        None if n.extended is None else np.zeros((len(res), 0), dtype=np.int64) for n in st.pools
    ]
    offer = [np.array([dict(n.extended or ()).get(r, 0) for r in res], dtype=np.int64)[:, None] for n in st.pools]
    groups: dict[str, list[np.ndarray]] = {}  # group → per pool, the opened nodes holding a pod of it
    where: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}  # type → (pool, nodes, pods on each)
    for t in order:
        p = pods[t]
        rem = p.count
        if rem <= 0:
            continue
        demand = (p.cpu, p.memory, 0, p.storage)
        cap = p.per_node_cap
        need = [(res.index(r), v) for r, v in p.extended]
        # per pool, the pool caps its nodes count against, and what each cap has left of the type
        sets = [frozenset(names) for names, _ in p.pool_caps]
        caps_of = [[c for c, names in enumerate(sets) if n.name in names] for n in st.pools] if sets else None
        cap_left = [most for _, most in p.pool_caps]
        placed: list[tuple[int, np.ndarray, np.ndarray]] = []
        for i, pool in enumerate(st.pools):
            if rem == 0:
                break
            if not st.elig[t][i]:
                continue
            limit = min((cap_left[c] for c in caps_of[i]), default=None) if caps_of is not None else None
            if limit == 0:
                continue
            f = free[i]
            xf = xfree[i]
            m = f.shape[1]
            taken = 0
            if m:
                k = f[2].copy()
                for d in (0, 1, 3):
                    if demand[d]:
                        np.minimum(k, f[d] // demand[d], out=k)
                if xf is not None:
                    for ri, v in need:
                        np.minimum(k, xf[ri] // v, out=k)
                if p.exclusive_group is not None and p.exclusive_group in groups:
                    held = groups[p.exclusive_group][i]
                    k[: len(held)][held] = 0
                for u in st.conf[t]:
                    for ui, nodes, _ in where.get(u, ()):
                        if ui == i:
                            k[nodes] = 0
                if cap is not None:
                    np.minimum(k, cap, out=k)
                np.maximum(k, 0, out=k)
                if limit is not None:  # the nodes in order take no more than the cap leaves
                    k = np.diff(np.minimum(np.cumsum(k), limit), prepend=0)
                upto = np.cumsum(k)
                if upto[-1] <= rem:
                    nodes = np.flatnonzero(k)
                    counts = k[nodes]
                    rem -= int(upto[-1])
                else:
                    last = int(np.searchsorted(upto, rem))  # the node where the running room reaches the pods
                    nodes = np.flatnonzero(k[: last + 1])
                    counts = k[nodes]
                    counts[-1] -= int(upto[last]) - rem
                    rem = 0
                taken = int(counts.sum())
                if len(nodes):
                    placed.append((i, nodes, counts))
            want = rem if limit is None else min(rem, limit - taken)
            if want > 0 and st.spare[i] > 0:
                r = empty_room(p, pool)
                if r > 0:
                    more = min(-(-want // r), st.spare[i])
                    st.spare[i] -= more
                    fresh = np.array(pool.allocatable, dtype=np.int64)[:, None]
                    free[i] = np.concatenate([f, np.repeat(fresh, more, axis=1)], axis=1)
                    if xf is not None:
                        xfree[i] = np.concatenate([xf, np.repeat(offer[i], more, axis=1)], axis=1)
                    extra = np.full(more, r, dtype=np.int64)
                    extra[-1] = min(r, want - r * (more - 1))
                    placed.append((i, np.arange(m, m + more), extra))
                    rem -= int(extra.sum())
                    taken += int(extra.sum())
            for c in caps_of[i] if caps_of is not None else ():
                cap_left[c] -= taken
        for i, nodes, counts in placed:
            f = free[i]
            for d in (0, 1, 3):
                if demand[d]:
                    f[d, nodes] -= counts * demand[d]
            f[2, nodes] -= counts
            xf = xfree[i]
            if xf is not None:
                for ri, v in need:
                    xf[ri, nodes] -= counts * v
            if p.exclusive_group is not None:
                per_pool = groups.setdefault(p.exclusive_group, [np.zeros(0, dtype=bool) for _ in range(n_pools)])
                held = per_pool[i]
                if len(held) < f.shape[1]:
                    held = per_pool[i] = np.concatenate([held, np.zeros(f.shape[1] - len(held), dtype=bool)])
                held[nodes] = True
        where[t] = placed
        unplaced[t] = rem
    # back to the state's lists, pool by pool (a pool's opened nodes in the order opened)
    start = []
    for i, pool in enumerate(st.pools):
        start.append(len(st.pool))
        opened = free[i].shape[1]
        st.pool += [i] * opened
        st.content += [{} for _ in range(opened)]
        xf = xfree[i]
        if xf is None:
            st.fx += [None] * opened
        else:
            other = {r: v for r, v in pool.extended or () if r not in res}
            st.fx += [{r: int(xf[ri, j]) for ri, r in enumerate(res)} | other for j in range(opened)]
    for d, out in enumerate((st.fc, st.fm, st.fp, st.fs)):
        out[:] = [v for i in range(n_pools) for v in free[i][d].tolist()]
    for t, placed in where.items():
        g = pods[t].exclusive_group
        for i, nodes, counts in placed:
            for j, k in zip(nodes.tolist(), counts.tolist(), strict=True):
                st.content[start[i] + j][t] = k
                if g is not None:
                    st.groups.setdefault(start[i] + j, set()).add(g)


def _fill_in_order(st: _State, order: Sequence[int], unplaced: list[int]) -> None:
    """First fit of each type in ``order`` when opening template nodes: every node in turn takes as
    many of its pods as fit, then new template nodes, while ``st`` may open them. Computed per type over all nodes at once
    (numpy), with the same result as visiting the nodes one by one: placing a type's pods on one
    node changes no other node's room for that type. Template nodes lie in no zone: pool caps
    do not apply (the least counts relax them)."""
    import numpy as np

    pods = st.pods
    n = len(st.pool)
    size = n if st.template is None else max(n, st.max_open)
    pool_of = np.zeros(size, dtype=np.int64)
    pool_of[:n] = st.pool
    free = np.zeros((4, size), dtype=np.int64)  # cpu, memory, pod slots, storage
    free[:, :n] = [st.fc, st.fm, st.fp, st.fs]
    tmpl = st.pools[0] if st.template is not None else None
    # extended resources the pods ask for: what each node has left of each, where its pool states it
    # (``xknown``; a node whose offer is not known limits nothing)
    res = sorted({r for p in pods for r, _ in p.extended})
    xfree = np.zeros((len(res), size), dtype=np.int64)
    xknown = np.zeros(size, dtype=bool)
    for j, left in enumerate(st.fx):
        if left is not None:
            xfree[:, j] = [left.get(r, 0) for r in res]
            xknown[j] = True
    fresh_known = tmpl is not None and tmpl.extended is not None
    xfresh = [dict(tmpl.extended or ()).get(r, 0) if fresh_known and tmpl is not None else 0 for r in res]
    groups: dict[str, np.ndarray] = {}
    where: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # type → (nodes, pods on each)
    elig = np.array(st.elig, dtype=bool).reshape(len(pods), len(st.pools))
    everywhere = [all(row) for row in st.elig]  # types every pool takes
    for t in order:
        p = pods[t]
        rem = p.count
        if rem <= 0:
            continue
        demand = (p.cpu, p.memory, 0, p.storage)
        cap = p.per_node_cap

        # room of every node for this type
        k = free[2, :n].copy()
        for d in (0, 1, 3):
            if demand[d]:
                np.minimum(k, free[d, :n] // demand[d], out=k)
        need = [(res.index(r), v) for r, v in p.extended]
        for i, v in need:
            np.minimum(k, np.where(xknown[:n], xfree[i, :n] // v, k), out=k)
        if not everywhere[t]:
            k[~elig[t][pool_of[:n]]] = 0
        if p.exclusive_group is not None and p.exclusive_group in groups:
            k[groups[p.exclusive_group][:n]] = 0
        for u in st.conf[t]:
            if u in where:
                k[where[u][0]] = 0
        if cap is not None:
            np.minimum(k, cap, out=k)
        np.maximum(k, 0, out=k)
        # the nodes in order take all they can until the type's pods run out
        upto = np.cumsum(k)
        if n == 0 or upto[-1] <= rem:
            nodes = np.flatnonzero(k)
            counts = k[nodes]
            rem -= int(upto[-1]) if n else 0
        else:
            last = int(np.searchsorted(upto, rem))  # the node where the running room reaches the pods
            nodes = np.flatnonzero(k[: last + 1])
            counts = k[nodes]
            counts[-1] -= int(upto[last]) - rem
            rem = 0
        if rem > 0 and tmpl is not None and n < st.max_open:
            # new template nodes: each empty one takes the same number
            fresh = min(
                [
                    tmpl.pods,
                    *(tmpl.allocatable[d] // demand[d] for d in (0, 1, 3) if demand[d]),
                    *(xfresh[i] // v for i, v in need if fresh_known),
                ]
            )
            if not (elig[t][0] and fresh > 0):
                # the node-by-node fit opens one node, finds it cannot take the type and stops (it
                # opens none when the last node is such an empty one); later types may use it
                if n == 0 or free[2, n - 1] < tmpl.pods:  # the last node holds pods
                    free[:, n] = [tmpl.cpu, tmpl.memory, tmpl.pods, tmpl.storage]
                    xfree[:, n] = xfresh
                    xknown[n] = fresh_known
                    n += 1
            else:
                fresh = min(fresh, cap) if cap is not None else fresh
                more = min(-(-rem // fresh), st.max_open - n)
                free[:, n : n + more] = np.array([tmpl.cpu, tmpl.memory, tmpl.pods, tmpl.storage])[:, None]
                xfree[:, n : n + more] = np.array(xfresh, dtype=np.int64).reshape(len(res), 1)
                xknown[n : n + more] = fresh_known
                extra = np.full(more, fresh, dtype=np.int64)
                extra[-1] = min(fresh, rem - fresh * (more - 1))
                nodes = np.concatenate([nodes, np.arange(n, n + more)])
                counts = np.concatenate([counts, extra])
                n += more
                rem -= int(extra.sum())
        where[t] = (nodes, counts)
        for d in (0, 1, 3):
            if demand[d]:
                free[d, nodes] -= counts * demand[d]
        free[2, nodes] -= counts
        if need:
            known = xknown[nodes]
            for i, v in need:  # (within what a known node has left: no overflow)
                xfree[i, nodes[known]] -= counts[known] * v
        if p.exclusive_group is not None:
            present = groups.setdefault(p.exclusive_group, np.zeros(size, dtype=bool))
            present[nodes] = True
        unplaced[t] = rem
    # back to the state's per-node lists
    st.open(0, n - len(st.pool))
    st.fc, st.fm, st.fp, st.fs = (free[d, :n].tolist() for d in range(4))
    for j in range(n):
        if st.fx[j] is not None:  # (the nodes whose offer is known: xknown)
            st.fx[j] = {r: int(xfree[i, j]) for i, r in enumerate(res)} | {
                r: v for r, v in (st.fx[j] or {}).items() if r not in res
            }
    for t, (nodes, counts) in where.items():
        for j, k in zip(nodes.tolist(), counts.tolist(), strict=True):
            st.content[j][t] = k
            g = pods[t].exclusive_group
            if g is not None:
                st.groups.setdefault(j, set()).add(g)


def dot_product(
    pods: Sequence[PodType], pools: Sequence[NodeType], *, template: NodeType | None = None, max_open: int = 0
) -> Packing:
    """Node-centric dot-product heuristic: each node in turn takes, one pod at a time, the fitting
    pod with the largest score (normalised demand · normalised free capacity; ties to the first type).

    Placing a pod of a type outside exclusive groups changes, for the choices that follow on the
    node, only its free capacity (and rules out the types in conflict with it), so after such a type
    is chosen the choices that would follow are computed at once for every further pod of that type
    the node could take; its run ends where another type would win. The scores are summed per
    dimension in a fixed order, elementwise, so a choice never depends on how many are computed
    together (nor on the BLAS build). The result is that of choosing one pod at a time."""
    import numpy as np

    ref = np.array(_reference(pods, [template] if template else pools), dtype=float)
    st = _State(pods, pools, template, max_open)
    n_types = len(pods)
    demand = np.array([p.demand for p in pods], dtype=np.int64).reshape(n_types, 4)
    norm = demand / ref
    dims = [d for d in range(4) if norm[:, d].any()]

    def score(free: np.ndarray) -> np.ndarray:
        """Scores of every type for each row of free capacities (rows × 4 → rows × types), summed
        per dimension in a fixed order (elementwise, so every row's score is computed alike)."""
        share = free / ref
        out = np.zeros((len(free), n_types))
        for d in dims:
            out += share[:, d : d + 1] * norm[:, d]
        return out

    # extended resources: what one pod of each type asks for of each (rows: types)
    res = sorted({r for p in pods for r, _ in p.extended})
    xdemand = np.array([[dict(p.extended).get(r, 0) for r in res] for p in pods], dtype=np.int64).reshape(
        n_types, len(res)
    )
    rem = np.array([p.count for p in pods], dtype=np.int64)
    elig = np.array(st.elig, dtype=bool).reshape(n_types, len(st.pools))
    caps = np.array([p.per_node_cap or 2**31 for p in pods], dtype=np.int64)
    # (type, pool) → the index of the type's pool cap the pool's nodes count against (absent: none),
    # and per capped type what each of its caps has left
    capped = [t for t, p in enumerate(pods) if p.pool_caps]
    cap_sets = {t: [frozenset(names) for names, _ in pods[t].pool_caps] for t in capped}
    cap_of = {
        (t, i): c
        for t in capped
        for i, n in enumerate(st.pools)
        for c, names in enumerate(cap_sets[t])
        if n.name in names
    }
    cap_left = {t: [cap for _, cap in pods[t].pool_caps] for t in capped}

    def node_caps(pool: int) -> np.ndarray:
        if not capped:
            return caps
        out = caps.copy()
        for t in capped:
            c = cap_of.get((t, pool))
            if c is not None:
                out[t] = min(out[t], cap_left[t][c])
        return out

    def spend(pool: int, runs: Sequence[tuple[int, int]]) -> None:
        for t, k in runs:
            c = cap_of.get((t, pool))
            if c is not None:
                cap_left[t][c] -= k

    group_ids: dict[str, int] = {}
    gid = np.array(
        [group_ids.setdefault(p.exclusive_group, len(group_ids)) if p.exclusive_group else -1 for p in pods],
        dtype=np.int64,
    )

    def _fill_node(st: _State, j: int, rem: np.ndarray) -> list[tuple[int, int]]:
        """Fill node j pod by pod (a run of one type at a time); the runs (type, pods) placed."""
        runs: list[tuple[int, int]] = []
        free = np.array([st.fc[j], st.fm[j], st.fp[j], st.fs[j]], dtype=np.int64)
        left = st.fx[j]
        xlimits = bool(res) and left is not None  # a node whose offer is not known limits nothing
        xfree = np.array([0 if left is None else left.get(r, 0) for r in res], dtype=np.int64)
        placed_here = np.zeros(n_types, dtype=np.int64)
        allowed = (rem > 0) & elig[:, st.pool[j]]  # types not excluded on this node so far
        here_caps = node_caps(st.pool[j])
        while True:
            ok = allowed & (rem > 0) & (placed_here < here_caps) & (demand <= free).all(axis=1)
            if xlimits:
                ok &= (xdemand <= xfree).all(axis=1)
            if not ok.any():
                break
            t = int(np.argmax(np.where(ok, score(free[None, :])[0], -1.0)))
            # further pods of type t the node could take, and whether t would be chosen for them
            k = min(int(rem[t]), int(here_caps[t] - placed_here[t]))
            for d in range(4):
                if demand[t, d]:
                    k = min(k, int(free[d] // demand[t, d]))
            for i in range(len(res) if xlimits else 0):
                if xdemand[t, i]:
                    k = min(k, int(xfree[i] // xdemand[t, i]))
            run = 1
            if gid[t] >= 0:
                allowed &= gid != gid[t]  # the group's other pods may not join it on this node
            elif k > 1:
                rest = ok.copy()
                rest[list(st.conf[t])] = False
                frees = free - np.arange(1, k, dtype=np.int64)[:, None] * demand[t]
                fit = (demand[None, :, :] <= frees[:, None, :]).all(axis=2) & rest
                if xlimits:
                    xfrees = xfree - np.arange(1, k, dtype=np.int64)[:, None] * xdemand[t]
                    fit &= (xdemand[None, :, :] <= xfrees[:, None, :]).all(axis=2)
                best = np.where(fit, score(frees), -1.0).argmax(axis=1)
                other = np.flatnonzero(best != t)
                run += int(other[0]) if len(other) else k - 1
            st.place(t, j, run)
            runs.append((t, run))
            free -= demand[t] * run
            if xlimits:
                xfree -= xdemand[t] * run
            rem[t] -= run
            placed_here[t] += run
            if st.conf[t]:
                allowed[list(st.conf[t])] = False
        return runs

    # Per pool, the runs (type, pods) of the last node computed. Every node starts empty, so a node
    # of the same pool starts from the same free capacity and the same choices, among the types
    # left, which are a subset of the types then left: as long as each type of those runs still has
    # the pods they took (and its pool cap that many left), every choice is the same (the winner is
    # still there; dropping a type that did not win changes no choice), and the node is filled the
    # same way without computing it. Nodes are filled in the pools' order, each opened from its
    # pool's count of unopened nodes when its turn comes. In fixed pools a node that takes nothing
    # is given back: every later node of its pool is alike (the same free capacity and extended
    # resources) and takes nothing either, so the pool's rest stays a count.
    last: dict[int, list[tuple[int, int]]] = {}
    for i in range(len(st.pools)):
        while rem.any() and st.spare[i] > 0:
            pattern = last.get(i)
            if pattern is not None:
                totals = _totals(pattern)
                times = min(
                    [
                        st.spare[i],
                        *(int(rem[t]) // k for t, k in totals.items()),
                        *(cap_left[t][c] // k for t, k in totals.items() if (c := cap_of.get((t, i))) is not None),
                    ]
                )
                if times > 0:
                    for _ in range(times):
                        j = st.open(i)
                        for t, k in pattern:
                            st.place(t, j, k)
                    for t, k in totals.items():
                        rem[t] -= k * times
                    spend(i, [(t, k * times) for t, k in totals.items()])
                    continue
            j = st.open(i)
            runs = _fill_node(st, j, rem)
            if not runs:
                if template is not None:
                    break  # a fresh node took nothing: the rest never fits
                st.close_last()
                break
            spend(i, runs)
            last[i] = runs
    return st.result("dot-product", [int(r) for r in rem])


def _totals(runs: Sequence[tuple[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for t, k in runs:
        out[t] = out.get(t, 0) + k
    return out


def run_all(
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    *,
    template: NodeType | None = None,
    max_open: int = 0,
    deadline: float | None = None,
    dot: bool = True,
) -> tuple[Packing, Packing]:
    """Run every heuristic (until ``deadline``, the baseline always) and return (best, baseline)."""
    import time

    # first fit in an order already tried places the same way: each order is run once
    tried = [ffd_order(pods, pools, "sum", constrained_first=False, template=template)]
    baseline = first_fit(
        pods, pools, "sum", constrained_first=False, template=template, max_open=max_open, order=tried[0]
    )
    best = baseline
    runs: list[Callable[[], Packing]] = []
    for k in ORDERINGS:
        order = ffd_order(pods, pools, k, template=template)
        if order not in tried:
            tried.append(order)
            runs.append(partial(first_fit, pods, pools, k, template=template, max_open=max_open, order=order))
    if dot:
        runs.append(lambda: dot_product(pods, pools, template=template, max_open=max_open))
    for run in runs:
        if best.complete and best.used_nodes <= 1:
            break
        if deadline is not None and time.monotonic() > deadline:
            break
        cand = run()
        if cand.score() < best.score():
            best = cand
    return best, baseline
