"""Exact answers with OR-Tools CP-SAT, over pod types × nodes.

Variables ``x[t, j]`` = pods of type t on node j (0 where the node's pool is not eligible or too
small). Constraints: every pod placed; per node and dimension Σ demand·x ≤ allocatable; one pod per
node and exclusive group; per-node caps; per pod type, Σ over the nodes of a capped pool set
(a zone) ≤ its cap; conflicting types never together (a Boolean "type t is on
node j" for the types in a conflict, at most one of each conflicting pair true). Symmetry breaking:
identical nodes (same pool) are ordered by CPU load (then memory load), and in the minimisation
model a node is used only if the one before it is — any solution can be permuted into that form,
so no answer is lost.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .bounds import pod_fits
from .heuristics import conflict_indices
from .model import UNBOUNDED, NodeType, PodType, extended_room

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import IntVar

__all__ = ["ExactResult", "solve_fixed", "solve_min", "available", "NOT_INSTALLED", "INSTALL_HINT"]

# OR-Tools is the optional extra ``podfit[exact]`` (80 MB, with pandas and numpy 240 MB): the
# install a pre-commit hook makes for ``check`` leaves it out. Without it the answers are the
# heuristics' and the bounds' (docs/packing.md, "Without the exact solver").
INSTALL_HINT = "pip install 'podfit[exact]'"
NOT_INSTALLED = f"not-run: the exact solver (OR-Tools) is not installed: {INSTALL_HINT}"


def available() -> bool:
    """Whether OR-Tools' CP-SAT can be imported (looked up once per process)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        from importlib.util import find_spec

        try:
            _AVAILABLE = find_spec("ortools") is not None
        except (ImportError, ValueError):
            _AVAILABLE = False
    return _AVAILABLE


_AVAILABLE: bool | None = None


@dataclass(frozen=True)
class ExactResult:
    status: str  # "feasible" | "optimal" | "infeasible" | "unknown"
    content: tuple[tuple[tuple[int, int], ...], ...] = ()  # per node: (type, count)
    pool: tuple[int, ...] = ()
    objective: int | None = None
    bound: int | None = None


class OutOfTime(Exception):
    """Building the model took the whole time budget (building counts against it)."""


def _build(
    model,
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    pool_of: Sequence[int],
    hint=None,
    deadline: float | None = None,
):
    def check() -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise OutOfTime()

    x: dict[tuple[int, int], IntVar] = {}
    ubs: dict[tuple[int, int], int] = {}
    for t, p in enumerate(pods):
        check()
        for j, pi in enumerate(pool_of):
            n = pools[pi]
            if p.count == 0 or not p.allowed_on(n) or not pod_fits(p, n):
                continue
            ub = min(p.count, n.pods)
            for dem, cap in ((p.cpu, n.cpu), (p.memory, n.memory), (p.storage, n.storage)):
                if dem:
                    ub = min(ub, cap // dem)
            if (room := extended_room(p.extended, n.extended)) is not None:
                ub = min(ub, room)
            if p.per_node_cap is not None:
                ub = min(ub, p.per_node_cap)
            if ub > 0:
                x[t, j] = model.new_int_var(0, ub, f"x{t}_{j}")
                ubs[t, j] = ub
    for t, p in enumerate(pods):
        vs = [x[t, j] for j in range(len(pool_of)) if (t, j) in x]
        model.add(sum(vs) == p.count)
        for names, cap in p.pool_caps:
            capped = [x[t, j] for j, pi in enumerate(pool_of) if (t, j) in x and pools[pi].name in names]
            if capped:
                model.add(sum(capped) <= cap)
    groups: dict[str, list[int]] = {}
    for t, p in enumerate(pods):
        if p.exclusive_group:
            groups.setdefault(p.exclusive_group, []).append(t)
    add_conflicts(model, x, ubs, conflict_indices(pods), range(len(pool_of)))
    loads = []
    for j, pi in enumerate(pool_of):
        if j % 16 == 0:
            check()
        n = pools[pi]
        here = [t for t in range(len(pods)) if (t, j) in x]
        for attr, cap in (("cpu", n.cpu), ("memory", n.memory), ("storage", n.storage)):
            terms = [getattr(pods[t], attr) * x[t, j] for t in here if getattr(pods[t], attr)]
            if terms and cap < UNBOUNDED:
                model.add(sum(terms) <= cap)
        if here:
            model.add(sum(x[t, j] for t in here) <= n.pods)
        add_extended(model, x, pods, here, j, n)
        for members in groups.values():
            vs = [x[t, j] for t in members if (t, j) in x]
            if len(vs) > 1:
                model.add(sum(vs) <= 1)
        loads.append(
            (
                sum(pods[t].cpu * x[t, j] for t in here) if here else 0,
                sum(pods[t].memory * x[t, j] for t in here) if here else 0,
            )
        )
    # Symmetry breaking between consecutive identical nodes: CPU load non-increasing.
    for j in range(len(pool_of) - 1):
        if pool_of[j] == pool_of[j + 1] and not isinstance(loads[j][0], int):
            model.add(loads[j][0] >= loads[j + 1][0])
    if hint is not None:
        for (t, j), v in x.items():
            model.add_hint(v, hint.get((t, j), 0))
    return x, ubs


def add_extended(model, x, pods: Sequence[PodType], here: Sequence[int], j: int, node: NodeType) -> None:
    """Per extended resource node ``j`` offers: the pods placed there ask for no more than that."""
    if node.extended is None:
        return
    for r, cap in node.extended:
        terms = [v * x[t, j] for t in here for name, v in pods[t].extended if name == r]
        if terms:
            model.add(sum(terms) <= cap)


def add_conflicts(model, x, ubs, conf, nodes) -> None:
    """Conflicting pod types never share a node: y[t, j] ≥ [x[t, j] > 0], y[t, j] + y[u, j] ≤ 1."""
    if not any(conf):
        return
    for j in nodes:
        y = {}
        for t, others in enumerate(conf):
            if others and (t, j) in x:
                y[t] = model.new_bool_var(f"y{t}_{j}")
                model.add(x[t, j] <= ubs[t, j] * y[t])
        for t, others in enumerate(conf):
            for u in others:
                if t < u and t in y and u in y:
                    model.add(y[t] + y[u] <= 1)


def _solver(time_budget: float, workers: int):
    from ortools.sat.python import cp_model

    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = max(float(time_budget), 0.01)
    s.parameters.num_workers = workers
    return s


def _content(solver, x, n_nodes: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    per: list[list[tuple[int, int]]] = [[] for _ in range(n_nodes)]
    for (t, j), v in sorted(x.items()):
        k = solver.Value(v)
        if k:
            per[j].append((t, k))
    return tuple(tuple(c) for c in per)


def _hint_from(hint_content) -> dict[tuple[int, int], int] | None:
    if hint_content is None:
        return None
    return {(t, j): k for j, c in enumerate(hint_content) for t, k in c.items()}


def _pods_for(pods: Sequence[PodType], n: NodeType) -> int:
    """How many of the pods may run on a node of ``n`` (scheduling, size and extended resources)."""
    return sum(p.count for p in pods if p.allowed_on(n) and pod_fits(p, n))


def solve_fixed(
    pods: Sequence[PodType],
    pools: Sequence[NodeType],
    time_budget: float,
    *,
    workers: int = 2,
    hint_content: Sequence[dict[int, int]] | None = None,
) -> ExactResult:
    """Is there a placement of every pod on exactly these nodes?

    A pool enters the model with at most as many nodes as there are pods that may run on it: a
    placement never uses more, and its nodes are alike. ``pool`` in the result lists the nodes
    modelled (pool by pool); the pool's other nodes are empty."""
    from ortools.sat.python import cp_model

    deadline = time.monotonic() + time_budget
    pool_of = [i for i, n in enumerate(pools) for _ in range(min(n.count, _pods_for(pods, n)))]
    model = cp_model.CpModel()
    hint = _hint_from(hint_content) if hint_content is not None and len(hint_content) == len(pool_of) else None
    try:
        x, _ = _build(model, pods, pools, pool_of, hint, deadline)
    except OutOfTime:
        return ExactResult("unknown")
    left = deadline - time.monotonic()
    if left <= 0:
        return ExactResult("unknown")
    solver = _solver(left, workers)
    status = solver.Solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ExactResult("feasible", _content(solver, x, len(pool_of)), tuple(pool_of))
    if status == cp_model.INFEASIBLE:
        return ExactResult("infeasible")
    return ExactResult("unknown")


def solve_min(
    pods: Sequence[PodType],
    template: NodeType,
    upper: int,
    lower: int,
    time_budget: float,
    *,
    workers: int = 2,
    hint_content: Sequence[dict[int, int]] | None = None,
) -> ExactResult:
    """Least number of ``template`` nodes (at most ``upper``, at least ``lower``) that hold every pod."""
    from ortools.sat.python import cp_model

    deadline = time.monotonic() + time_budget
    pools = [template.with_count(upper)]
    pool_of = [0] * upper
    model = cp_model.CpModel()
    hint = None
    n_hint = 0  # nodes the hint uses
    if hint_content is not None:
        nonempty = [c for c in hint_content if c][:upper]
        # in the order the symmetry breaking asks for (CPU load non-increasing), so the hint is feasible
        nonempty.sort(key=lambda c: -sum(pods[t].cpu * k for t, k in c.items()))
        n_hint = len(nonempty)
        hint = _hint_from(nonempty)
    try:
        x, ubs = _build(model, pods, pools, pool_of, hint, deadline)
    except OutOfTime:
        return ExactResult("unknown", bound=lower)
    used = [model.new_bool_var(f"u{j}") for j in range(upper)]
    for (t, j), v in x.items():
        model.add(v <= ubs[t, j] * used[j])
    for j in range(upper - 1):
        model.add_implication(used[j + 1], used[j])
    model.add(sum(used) >= lower)
    if hint is not None:
        for j, u in enumerate(used):
            model.add_hint(u, 1 if j < n_hint else 0)
    model.minimize(sum(used))
    left = deadline - time.monotonic()
    if left <= 0:
        return ExactResult("unknown", bound=lower)
    solver = _solver(left, workers)
    status = solver.Solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        obj = int(round(solver.ObjectiveValue()))
        bound = int(round(solver.BestObjectiveBound()))
        return ExactResult(
            "optimal" if status == cp_model.OPTIMAL else "feasible",
            _content(solver, x, upper),
            tuple(pool_of),
            obj,
            max(bound, lower),
        )
    if status == cp_model.INFEASIBLE:
        return ExactResult("infeasible")
    return ExactResult("unknown", bound=lower)
