"""Render an :class:`~podfit.packing.engine.Analysis` as JSON-ready data or a text table (pure)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..quantity import format_cpu, format_memory
from ..words import plural
from .engine import Analysis
from .model import UNBOUNDED, Bound, EmptyNodes, NodeList, NodeType, PackResult

if TYPE_CHECKING:
    from .adapter import PackInputs

__all__ = [
    "to_json",
    "to_text",
    "zones_text",
    "describe_bound",
    "describe_proof",
    "scheduling_notes",
    "scheduling_json",
]


def _vec(v) -> dict[str, Any]:
    out = {"cpu": v[0], "memory": v[1], "pods": v[2]}
    out["storage"] = None if v[3] >= UNBOUNDED // 2 else v[3]  # nodes that do not limit storage
    return out


def _bound(b: Bound) -> dict[str, Any]:
    return {
        "kind": b.kind,
        "needed": None if b.needed >= UNBOUNDED else b.needed,
        "available": b.available,
        "scope": list(b.scope),
        "detail": b.detail,
        "violated": b.violated,
    }


def _pool(n: NodeType) -> dict[str, Any]:
    return {
        "name": n.name,
        "vm_class": n.vm_class,
        "count": n.count,
        "labels": dict(n.labels),
        "capacity": {"cpu": n.capacity_cpu, "memory": n.capacity_memory},
        "allocatable": _vec(n.allocatable),
        # extended resources each node offers pods after its DaemonSets (null: the pool does not say)
        "extended": None if n.extended is None else dict(n.extended),
        "daemonsets": list(n.daemon_pods),
    }


def to_json(a: Analysis) -> dict[str, Any]:
    fit = a.fit
    rec = a.recommendation
    violated = [b for b in fit.bounds if b.violated]
    return {
        "feasible": fit.feasible,
        "proof": fit.proof,
        "method": fit.method,
        "solver_status": fit.solver_status,
        "pools": [_pool(n) for n in a.pools],
        "pods": [
            {
                "name": p.name,
                "count": p.count,
                "cpu": p.cpu,
                "memory": p.memory,
                "storage": p.storage,
                "cpu_limit": p.cpu_limit,
                "memory_limit": p.memory_limit,
                "anti_affinity_group": p.exclusive_group,
                "max_per_node": p.max_per_node,
                "node_selector": dict(p.node_selector),
                "pools": None if p.pools is None else list(p.pools),
                "anti_affinity_conflicts": list(p.conflicts),
                "host_ports": [f"{ip + ':' if ip else ''}{port}/{protocol}" for ip, port, protocol in p.host_ports],
                "daemonsets_avoided": list(p.avoids),
                "daemonsets_needed": [list(term) for term in p.needs],
                "pool_caps": [{"pools": list(pools), "most": cap} for pools, cap in p.pool_caps],
                "extended": dict(p.extended),
            }
            for p in a.pods
        ],
        "nodes": [
            {
                "name": n.name,
                "pool": n.pool,
                "vm_class": n.vm_class,
                "pods": dict(n.pods),
                "used": _vec(n.used),
                "free": _vec(n.free),
                "allocatable": _vec(n.allocatable),
            }
            for n in fit.nodes
        ],
        "unplaced": dict(fit.unplaced),
        "lower_bound": {
            "nodes": fit.lower_bound,
            "available": sum(n.count for n in a.pools),
            "violated": [_bound(b) for b in violated],
            "certificates": [_bound(b) for b in fit.bounds],
        },
        "min_nodes": {k: m.nodes for k, m in a.min_nodes.items()},
        "min_nodes_detail": {
            k: {"nodes": m.nodes, "lower_bound": m.lower_bound, "exact": m.exact, "method": m.method}
            for k, m in a.min_nodes.items()
        },
        "min_nodes_per_zone": {
            k: {"zones": dict(z.zones), "nodes": z.nodes, "lower_bound": z.lower_bound, "exact": z.exact}
            for k, z in a.zonal.items()
        },
        "stranded": {
            "cpu": a.stranded.cpu,
            "memory": a.stranded.memory,
            "nodes": list(a.stranded.nodes),
            "free_cpu": a.stranded.free_cpu,
            "free_memory": a.stranded.free_memory,
        },
        "headroom": {
            "share_percent": a.headroom.share_percent,
            "burst_cpu": a.headroom.burst_cpu,
            "burst_memory": a.headroom.burst_memory,
            "needed_cpu": a.headroom.needed_cpu,
            "needed_memory": a.headroom.needed_memory,
            "free_cpu": a.headroom.free_cpu,
            "free_memory": a.headroom.free_memory,
            "pods_without_limits": a.headroom.unbounded_pods,
            "measured_pods": a.headroom.measured_pods,
            "ok": a.headroom.ok,
            "devices": [{**dataclasses.asdict(d), "ok": d.ok} for d in a.headroom.devices],
        },
        "recommendation": {
            "vm_class": rec.vm_class,
            "nodes": rec.nodes,
            "candidates": [{**dataclasses.asdict(c), "zones": dict(c.zones)} for c in rec.candidates],
            "excluded": dict(rec.excluded),
        },
    }


def scheduling_notes(inputs: PackInputs) -> list[str]:
    """What the scheduling semantics kept out of packing or proved unschedulable, one line each
    (``inputs``: :class:`podfit.packing.adapter.PackInputs`)."""
    lines = [u.describe() + "; left out of packing" for u in inputs.unknown]
    if inputs.control_plane_only:
        lines.append("not packed, they run only on control-plane pools: " + ", ".join(inputs.control_plane_only))
    lines.extend(f"no worker pool can run {name}: {why}" for name, why in inputs.unschedulable.items())
    if inputs.run_to_completion is not None:
        lines.append(inputs.run_to_completion.describe())
    lines.extend(
        f"pool {n.name} ({n.vm_class}) has 0 nodes, which the cluster autoscaler may grow (scale from zero): "
        "not packed here; podfit check (PF601, PF606) takes it at its maximum"
        for n in inputs.standby
    )
    return lines


def scheduling_json(inputs: PackInputs) -> dict[str, Any]:
    return {
        "unknown": [{"keys": list(u.keys), "pods": list(u.pods), "message": u.describe()} for u in inputs.unknown],
        "control_plane_only": list(inputs.control_plane_only),
        "unschedulable": dict(inputs.unschedulable),
        "scales_from_zero": [n.name for n in inputs.standby],
        "run_to_completion": None
        if inputs.run_to_completion is None
        else {
            "packed": inputs.run_to_completion.packed,
            "packed_pods": list(inputs.run_to_completion.packed_pods),
            "left_out": list(inputs.run_to_completion.left_out),
        },
    }


def format_amount(dim: str, value: int) -> str:
    """An amount of one dimension for people: ``80 CPU``, ``1500m CPU``, ``6Gi``, ``110 pods``."""
    if dim == "cpu":
        return f"{format_cpu(value)} CPU"
    if dim in ("memory", "storage"):
        return format_memory(value, exact=False)
    return f"{value:,} {dim}"


def _bar(used: int, total: int, width: int = 20) -> str:
    if total <= 0:
        return "[" + "?" * width + "]"
    filled = min(width, (used * width + total - 1) // total) if used > 0 else 0
    return "[" + "#" * filled + "." * (width - filled) + "]"


def _amounts(b: Bound) -> tuple[str, str]:
    """What a bound needs and what is available, in words."""
    if b.kind.startswith("capacity-"):  # amounts of a resource, not node counts
        dim = b.kind.removeprefix("capacity-")
        return format_amount(dim, b.needed), format_amount(dim, b.available)
    need = "more than any node holds" if b.needed >= UNBOUNDED else plural(b.needed, "node")
    return need, f"{b.available:,}"


def describe_bound(b: Bound) -> str:
    detail = f"; {b.detail}" if b.detail else ""
    need, have = _amounts(b)
    return f"proven by a lower bound ({b.kind}: needs {need}, {have} available{detail})"


def _lower_bound_line(fit: PackResult, pools: Sequence[NodeType]) -> str:
    """The node-count bound over all pools where they are alike; where they differ (or a pod fits
    none of their nodes) there is none over all of them, and the bounds of the pools a workload
    may use (those the verdict cites) are named instead."""
    available = sum(n.count for n in pools)
    if fit.lower_bound is not None:
        return f"Lower bound: {plural(fit.lower_bound, 'node')}; {available:,} available"
    alike = len({(n.allocatable, n.extended) for n in pools if n.count}) <= 1
    why = "a pod fits none of them" if alike else "their pools differ"
    head = f"Lower bound: none over all {available:,} nodes ({why})"
    if not fit.violated_bounds:
        return head
    shown = []
    for b in fit.violated_bounds[:3]:
        need, have = _amounts(b)
        shown.append(f"{b.kind} needs {need}, {have} available" + (f" ({b.detail})" if b.detail else ""))
    more = len(fit.violated_bounds) - len(shown)
    return f"{head}; by the pools a workload may use: " + ", ".join(shown) + (f", and {more} more" if more else "")


def describe_proof(a: Analysis) -> str:
    fit = a.fit
    if fit.proof == "placement":
        return f"yes: a placement exists (found by {fit.method})"
    if fit.proof == "lower-bound":
        return "no: " + describe_bound(fit.violated_bounds[0])
    if fit.proof == "solver":
        return "no: CP-SAT proved that no placement exists"
    return f"unknown: no placement found and no proof within the time budget ({fit.solver_status})"


# Up to this many nodes, the text lists them one by one (more with --verbose); past it, per pool.
NODES_LISTED = 50


def _percent(used: int, total: int) -> str:
    return f"{used * 100 / total:.0f}%" if total > 0 else "-"


def _cpus(millicores: int) -> str:
    """CPU for a pool's total: whole CPUs from 100 on (``7,720``), else exact (``1500m``)."""
    return f"{round(millicores / 1000):,}" if millicores >= 100_000 else format_cpu(millicores)


def pool_summary(a: Analysis) -> list[str]:
    """One line per pool: the nodes the placement uses, how full they are, what is stranded."""
    stranded = a.stranded.nodes
    parts = a.fit.nodes.parts if isinstance(a.fit.nodes, NodeList) else tuple(a.fit.nodes)
    # per pool: nodes used, CPU used and allocatable, memory used and allocatable, and the nodes
    # stranded with their free CPU and memory; a run of empty nodes counted at once
    sums: dict[str, list[int]] = {}
    for part in parts:
        s = sums.setdefault(part.pool, [0] * 8)
        if isinstance(part, EmptyNodes):
            k = part.count
            s[2] += part.allocatable[0] * k
            s[4] += part.allocatable[1] * k
            if part.name(0) in stranded:  # a run is stranded whole or not at all
                s[5] += k
                s[6] += part.allocatable[0] * k
                s[7] += part.allocatable[1] * k
            continue
        s[0] += 1 if part.pods else 0
        s[1] += part.used[0]
        s[2] += part.allocatable[0]
        s[3] += part.used[1]
        s[4] += part.allocatable[1]
        if part.name in stranded:
            s[5] += 1
            s[6] += part.free[0]
            s[7] += part.free[1]
    lines = []
    for pool in a.pools:
        used, cpu_used, cpu_all, mem_used, mem_all, lost, lost_cpu, lost_mem = sums.get(pool.name, [0] * 8)
        cpu = (cpu_used, cpu_all)
        mem = (mem_used, mem_all)
        lost_text = (
            f"stranded {_cpus(lost_cpu)} CPU, {format_memory(lost_mem, exact=False)} on {plural(lost, 'node')}"
            if lost
            else "nothing stranded"
        )
        lines.append(
            f"  {pool.name}: {used:,} of {plural(pool.count, 'node')} used; CPU {_percent(*cpu)} full "
            f"({_cpus(cpu[0])}/{_cpus(cpu[1])} CPU), memory {_percent(*mem)} "
            f"({format_memory(mem[0], exact=False)}/{format_memory(mem[1], exact=False)}); {lost_text}"
        )
    return lines


def zones_text(zones) -> str:
    """``eu-west-1a 1, eu-west-1b 2`` from (zone, nodes) pairs; a zone whose label value is empty
    (a valid label value: the nodes are a domain of their own) is shown as ``""``."""
    return ", ".join(f"{z or chr(34) * 2} {n}" for z, n in zones)


def _least(a: Analysis, budget: float | None) -> list[str]:
    """The least node count per VM class: the count, or the range the search proved it lies in."""
    if not a.min_nodes:
        return []
    parts = [f"{k} {m.nodes}" if m.exact else f"{k} {m.lower_bound}–{m.nodes}" for k, m in a.min_nodes.items()]
    lines = ["Least nodes per VM class: " + ", ".join(parts)]
    if a.zonal:
        lines.append(
            "Least nodes per zone: "
            + "; ".join(
                f"{k} {z.nodes if z.exact else f'{z.lower_bound}–{z.nodes}'} ({zones_text(z.zones)})"
                for k, z in a.zonal.items()
            )
        )
    if any(not m.exact for m in a.min_nodes.values()) or any(not z.exact for z in a.zonal.values()):
        from .exact import INSTALL_HINT, available

        within = f" within {budget:g} s" if budget is not None else ""
        how = (
            f"the search stopped{within}, --time-budget searches longer"
            if available()
            else f"the heuristics' count, not searched without the exact solver: {INSTALL_HINT}"
        )
        lines.append(f"  (a range: the least count is proven to lie in it; {how})")
    return lines


def to_text(a: Analysis, *, verbose: bool = False, budget: float | None = None) -> str:
    """The text of ``podfit pack``: the verdict first, then the pools, each node (with ``verbose``
    or up to :data:`NODES_LISTED` nodes), the bounds, stranded capacity, headroom and the
    recommendation. ``budget``: the --time-budget the least-node search had."""
    fit = a.fit
    lines = [f"Fits: {describe_proof(a)}"]
    n_pods = sum(p.count for p in a.pods)
    pools = ", ".join(f"{n.name}: {n.count} × {n.vm_class}" for n in a.pools)
    # a pool's reserved pods (adapter: ``reserved/<pool>/<name>``) are the cluster's, no workload's
    reserved = sum(p.count for p in a.pods if p.name.startswith("reserved/"))
    kinds = sum(1 for p in a.pods if not p.name.startswith("reserved/"))
    of = plural(kinds, "workload") + (f" and {plural(reserved, 'reserved pod')} of the cluster" if reserved else "")
    lines.append(f"{plural(n_pods, 'pod')} of {of} on {plural(sum(n.count for n in a.pools), 'node')} ({pools})")
    for n in a.pools:
        ds = f", DaemonSets: {', '.join(n.daemon_pods)}" if n.daemon_pods else ""
        devices = "".join(f", {v:,} {r}" for r, v in n.extended or ())
        lines.append(
            f"  {n.name}: allocatable per node {format_cpu(n.cpu)} CPU, {format_memory(n.memory, exact=False)}, "
            f"{plural(n.pods, 'pod')}{devices}{ds}"
        )
    lines.append("Placement per pool:")
    lines.extend(pool_summary(a))
    lines.append("")
    listed = verbose or len(fit.nodes) <= NODES_LISTED
    w = max([len(n.name) for n in fit.nodes] + [4]) if listed else 4
    if listed:
        lines.append(f"{'node':<{w}}  {'pods':>4}  {'CPU used':<36}  memory used")
    else:
        lines.append(f"({plural(len(fit.nodes), 'node')}: -v lists them one by one)")
    for node in fit.nodes if listed else ():
        lines.append(
            f"{node.name:<{w}}  {node.used[2]:>4}  {_bar(node.used[0], node.allocatable[0])} {format_cpu(node.used[0]):>6}/{format_cpu(node.allocatable[0]):<6}"
            f"  {_bar(node.used[1], node.allocatable[1])} {format_memory(node.used[1], exact=False)}/{format_memory(node.allocatable[1], exact=False)}"
        )
        for name, k in node.pods:
            lines.append(f"{'':<{w}}    {k} × {name}")
    if fit.unplaced:
        lines.append("not placed: " + ", ".join(f"{k} × {name}" for name, k in fit.unplaced))
    lines.append("")
    lines.append(_lower_bound_line(fit, a.pools))
    lines.extend(_least(a, budget))
    s = a.stranded
    where = ""
    if s.nodes:
        where = f" on {', '.join(s.nodes)}" if listed else f" on {plural(len(s.nodes), 'node')}"
    lines.append(
        f"Stranded: {format_cpu(s.cpu)} CPU, {format_memory(s.memory, exact=False)} memory"
        + where
        + f" (free in total: {format_cpu(s.free_cpu)} CPU, {format_memory(s.free_memory, exact=False)})"
    )
    h = a.headroom
    lines.append(
        f"Burst headroom ({h.share_percent}% of "
        + (
            "Σ(limit − request)"
            if not h.measured_pods
            else f"Σ(peak − request), measured peaks of {plural(h.measured_pods, 'pod')}"
        )
        + f"): CPU {format_cpu(h.needed_cpu)} needed, "
        f"{format_cpu(h.free_cpu)} free; memory {format_memory(h.needed_memory, exact=False)} needed, {format_memory(h.free_memory, exact=False)} free"
        f" — {'ok' if h.cluster_ok else 'NOT ENOUGH'}"
        + (f"; {plural(h.unbounded_pods, 'pod')} without a limit" if h.unbounded_pods else "")
    )
    for d in h.devices:
        lines.append(
            f"  pods asking for {d.resource} ({d.pods}), on the {plural(d.nodes, 'node')} offering it: "
            f"CPU {format_cpu(d.needed_cpu)} needed, {format_cpu(d.free_cpu)} free; memory "
            f"{format_memory(d.needed_memory, exact=False)} needed, {format_memory(d.free_memory, exact=False)} free"
            f" — {'ok' if d.ok else 'NOT ENOUGH'}"
        )
    r = a.recommendation
    if r.vm_class:
        top = next((c for c in r.candidates if c.vm_class == r.vm_class), None)
        per_zone = f" ({zones_text(top.zones)})" if top is not None and top.zones else ""
        lines.append(f"Recommendation: {r.nodes} × {r.vm_class}{per_zone}")
        lines.append(f"  {'class':<24} {'nodes':>5} {'least':>5}  {'waste CPU':>9} {'waste mem':>9}  waste")
        for c in r.candidates:
            lines.append(
                f"  {c.vm_class:<24} {c.nodes:>5} {c.min_nodes:>5}{'' if c.exact else '*'} "
                f"{format_cpu(c.waste_cpu):>9} {format_memory(c.waste_memory, exact=False):>9}  {c.waste_ppm / 10_000:.1f}%"
            )
        if any(not c.exact for c in r.candidates):
            lines.append("  * least count not proven (a count that fits; the lower bound is in the JSON output)")
    else:
        lines.append("Recommendation: none (no NUMA-fitting class holds the largest pod)")
    for vm_class, why in r.excluded.items():
        lines.append(f"  not considered: {vm_class} ({why})")
    return "\n".join(lines) + "\n"
