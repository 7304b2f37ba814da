"""Large-neighbourhood search: fit every pod on a fixed list of nodes, or empty a node.

A state is a (possibly partial) placement on a fixed list of nodes plus the pods left over. One step
takes a few nodes (those with the most free capacity and some at random), frees their pods, adds the
left-over pods, and asks CP-SAT for the placement of those pods on those nodes that holds the most
weighted volume (Σ CPU share + memory share). The step is kept when it holds at least as much as
before (ties are accepted, which moves the search along plateaus). The search ends when nothing is
left over (a complete placement), at the deadline, or when one neighbourhood is the whole problem
and CP-SAT proves that its optimum leaves pods over (then no placement on these nodes exists).

:func:`descend` uses it to lower an upper bound: starting from a complete placement on ``U`` nodes,
it removes the emptiest node (its pods become left-overs), repairs, and repeats down to a target.

Every answer is checked by construction (CP-SAT enforces every capacity, exclusive group, cap and
nodeSelector), and every node count it returns has a complete placement behind it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .bounds import pod_fits
from .exact import add_conflicts, add_extended
from .heuristics import conflict_indices
from .model import UNBOUNDED, NodeType, PodType, extended_room

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import IntVar

__all__ = ["Search", "fill", "descend"]

# Nodes per neighbourhood and CP-SAT time per step (seconds); measured on bench/pack.py instances.
NEIGHBOURHOOD = 4
STEP_TIME = 0.05


@dataclass
class Search:
    """A placement on ``len(pool_of)`` nodes (``content[j]``: type → count) and the pods left over."""

    content: list[dict[int, int]]
    left: list[int]
    pool_of: list[int]
    proven_infeasible: bool = False  # CP-SAT proved that these nodes cannot hold every pod
    steps: int = 0

    @property
    def complete(self) -> bool:
        return not any(self.left)


def _upper(p: PodType, n: NodeType) -> int:
    ub = n.pods
    for dem, cap in ((p.cpu, n.cpu), (p.memory, n.memory), (p.storage, n.storage)):
        if dem and cap < UNBOUNDED:
            ub = min(ub, cap // dem)
    if p.per_node_cap is not None:
        ub = min(ub, p.per_node_cap)
    if (room := extended_room(p.extended, n.extended)) is not None:
        ub = min(ub, room)
    return max(ub, 0)


def _weights(pods: Sequence[PodType], pools: Sequence[NodeType]) -> list[int]:
    cpu = max([n.cpu for n in pools] + [1])
    mem = max([n.memory for n in pools] + [1])
    return [p.cpu * 10_000 // cpu + p.memory * 10_000 // mem + 1 for p in pods]


def fill(
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    state: Search,
    deadline: float,
    *,
    seed: int = 0,
    k: int = NEIGHBOURHOOD,
    step_time: float = STEP_TIME,
) -> Search:
    """Improve ``state`` until nothing is left over, the deadline passes, or misfit is proven."""
    from ortools.sat.python import cp_model

    rng = random.Random(seed)
    n_nodes = len(state.pool_of)
    content = [dict(c) for c in state.content]
    left = list(state.left)
    steps = 0
    if n_nodes == 0:
        return Search(content, left, list(state.pool_of), False, 0)
    w = _weights(pods, pools)
    elig = [[p.allowed_on(n) and pod_fits(p, n) for n in pools] for p in pods]
    conf = conflict_indices(pods)
    ub = [[_upper(p, n) for n in pools] for p in pods]
    groups: dict[str, list[int]] = {}
    for t, p in enumerate(pods):
        if p.exclusive_group:
            groups.setdefault(p.exclusive_group, []).append(t)
    T = len(pods)

    def slack(j: int) -> float:
        n = pools[state.pool_of[j]]
        c = content[j]
        uc = sum(pods[t].cpu * v for t, v in c.items())
        um = sum(pods[t].memory * v for t, v in c.items())
        return (n.cpu - uc) / max(n.cpu, 1) + (n.memory - um) / max(n.memory, 1)

    proven = False
    while any(left):
        now = time.monotonic()
        if now >= deadline:
            break
        steps += 1
        size = min(k, n_nodes)
        ranked = sorted(range(n_nodes), key=lambda j: (-slack(j), j))
        nb = set(ranked[: max(size // 2, 1)])
        while len(nb) < size:
            nb.add(rng.randrange(n_nodes))
        nodes = sorted(nb)
        whole = len(nodes) == n_nodes
        avail = list(left)
        for j in nodes:
            for t, v in content[j].items():
                avail[t] += v
        m = cp_model.CpModel()
        x: dict[tuple[int, int], IntVar] = {}
        for t in range(T):
            if not avail[t]:
                continue
            for j in nodes:
                pi = state.pool_of[j]
                if elig[t][pi] and ub[t][pi] > 0:
                    x[t, j] = m.new_int_var(0, min(ub[t][pi], avail[t]), "")
        for t in range(T):
            vs = [x[t, j] for j in nodes if (t, j) in x]
            if len(vs) > 1:
                m.add(sum(vs) <= avail[t])
        add_conflicts(m, x, {(t, j): min(ub[t][state.pool_of[j]], avail[t]) for (t, j) in x}, conf, nodes)
        for j in nodes:
            n = pools[state.pool_of[j]]
            here = [t for t in range(T) if (t, j) in x]
            if not here:
                continue
            for attr, cap in (("cpu", n.cpu), ("memory", n.memory), ("storage", n.storage)):
                terms = [getattr(pods[t], attr) * x[t, j] for t in here if getattr(pods[t], attr)]
                if terms and cap < UNBOUNDED:
                    m.add(sum(terms) <= cap)
            m.add(sum(x[t, j] for t in here) <= n.pods)
            add_extended(m, x, pods, here, j, n)
            for members in groups.values():
                vs = [x[t, j] for t in members if (t, j) in x]
                if len(vs) > 1:
                    m.add(sum(vs) <= 1)
            for t in here:
                m.add_hint(x[t, j], content[j].get(t, 0))
        current = sum(w[t] * v for j in nodes for t, v in content[j].items())
        m.maximize(sum(w[t] * v for (t, _), v in x.items()))
        left_time = deadline - time.monotonic()
        if left_time <= 0:
            break
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = min(step_time, left_time)
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = rng.randrange(1 << 16)
        status = solver.Solve(m)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        value = int(round(solver.ObjectiveValue()))
        if value >= current:
            for j in nodes:
                content[j] = {}
            left = avail
            for (t, j), var in x.items():
                c = solver.Value(var)
                if c:
                    content[j][t] = c
                    left[t] -= c
        if whole and status == cp_model.OPTIMAL and any(left):
            # The neighbourhood was every node with every pod: the optimum leaves pods over.
            proven = True
            break
    return Search(content, left, list(state.pool_of), proven, state.steps + steps)


def descend(
    pods: Sequence[PodType],
    template: NodeType,
    content: Sequence[dict[int, int]],
    target: int,
    deadline: float,
    *,
    seed: int = 0,
) -> tuple[list[dict[int, int]], bool]:
    """From a complete placement on identical ``template`` nodes, find one on fewer nodes.

    Returns the placement on the fewest nodes reached (never below ``target``) and whether CP-SAT
    proved that one node fewer cannot hold the pods.
    """
    best = [dict(c) for c in content if c]
    proven = False
    while len(best) > target and time.monotonic() < deadline:
        order = sorted(range(len(best)), key=lambda j: (sum(best[j].values()), j))
        drop = order[0]
        left = [0] * len(pods)
        for t, v in best[drop].items():
            left[t] += v
        rest = [c for j, c in enumerate(best) if j != drop]
        res = fill(pods, [template], Search(rest, left, [0] * len(rest)), deadline, seed=seed + len(rest))
        if not res.complete:
            proven = res.proven_infeasible
            break
        best = [c for c in res.content if c]
    return best, proven
