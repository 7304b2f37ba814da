"""## What it does
A HorizontalPodAutoscaler's or KEDA ScaledObject's maximum (maxReplicas × the pod's requests),
packed beside the other pods, does not fit the cluster's node pools (at their cluster-autoscaler
maximum where the platform declares one); the finding says how many replicas can run.

## Why it matters
The autoscaler's maximum is the capacity the workload is meant to reach under load. Replicas beyond
what the nodes hold stay Pending exactly when the load is highest, so the scale-out does not happen:
a reliability loss (warning), not a rejection — the objects are valid and the minimum runs. The
count is packed with PF601's model (DaemonSets on every node, anti-affinity, spread, host ports) and
reported only where it is proven not to fit (a lower bound or CP-SAT). Packing itself counts the
replicas the autoscaler keeps at least: spec.replicas raised to minReplicas, and minReplicas where
replicas is left out (KEDA minReplicaCount, default 0). A pool whose cluster autoscaler may add nodes
(the profile's `nodePools[].maxCount`, a Cluster API machine deployment's
`cluster-api-autoscaler-node-group-max-size` annotation) is taken at that maximum: the scale-out
brings its nodes.

## Example
```yaml
kind: HorizontalPodAutoscaler
spec: {minReplicas: 1, maxReplicas: 50}   # 700m pods on three nodes of 3750m allocatable: 15 fit
```

## How to fix
Lower maxReplicas to what the pools hold, add nodes or a larger VM class (or raise the cluster
autoscaler's maximum, `maxCount`, until it covers the scale-out), or lower the pod's requests.

## Source
Kubernetes HorizontalPodAutoscaler (autoscaling/v2); KEDA ScaledObject; kube-scheduler
NodeResourcesFit; kubernetes/autoscaler cluster-autoscaler (node group maximum size; Cluster API
provider: cluster-api-autoscaler-node-group-max-size)

## Implementation
For each Deployment, StatefulSet, ReplicaSet or ReplicationController an autoscaler scales
(podfit.workloads.autoscalers; KEDA maxReplicaCount defaults to 100), the replicas the placement
found takes without moving a pod come first; if short, the fit is packed again with the workload at
its maximum, on the pools grown to their autoscaler maximum (``NodePool.max_count``; the others as
they are; on vSphere no further than the hosts hold node VMs of the class). Proven not to fit, a binary search (at most PROBES packings within the rule's
time-budget) finds the most replicas a placement holds beside the other pods and the least count
proven not to fit (details replicas_that_fit, refused_replicas). A count neither placed nor proven
within the budget gives no finding, and so does a cluster whose pods at their packed counts do not
fit (PF601's) or are undecided. The finding is on the autoscaler.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from ..findings import Finding
from ..options import Option
from ..packing.bounds import certificates, pod_fits
from ..packing.engine import pack
from ..packing.model import NodeResult, NodeType, PodType, Problem, node_runs
from ..packing.rules_support import (
    PackingFacts,
    per_cluster,
    skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..quantity import format_cpu, format_memory

ID = "PF606"
SLUG = "autoscaler-ceiling-does-not-fit"
TITLE = "Autoscaler maximum does not fit the node pools"
SEVERITY = "warning"
CATEGORY = "packing"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "time-budget",
        "duration",
        5,
        "Time for the packing searches and proofs of each autoscaled workload (seconds, or 500ms, 10s, 2m).",
        minimum=0,
    ),
)

PROBES = 8  # packings per workload at most (a binary search between the placed and the refused count)


def room(p: PodType, node: NodeResult, pool: NodeType, others: dict[str, PodType]) -> int:
    """How many more pods of ``p`` the node of a placement takes without moving any pod: its free
    capacity, the extended resources its pods leave, the per-node cap, and no conflicting pod
    (anti-affinity, host port) on it."""
    if not p.allowed_on(pool) or not pod_fits(p, pool):
        return 0
    here = dict(node.pods)
    for name, k in here.items():
        q = others.get(name)
        if k and q is not None and q.name != p.name:
            if name in p.conflicts or p.name in q.conflicts:
                return 0
            if p.exclusive_group is not None and q.exclusive_group == p.exclusive_group:
                return 0
    free = node.free
    k = free[2]
    for dem, cap in zip(p.demand, free, strict=True):
        if dem:
            k = min(k, cap // dem)
    if p.extended and pool.extended is not None:  # the extended resources the node's pods leave
        left = dict(pool.extended)
        for name, n in here.items():
            for r, v in q.extended if (q := others.get(name)) is not None else ():
                left[r] = left.get(r, 0) - v * n
        k = min(k, *(left.get(r, 0) // v for r, v in p.extended))
    if p.per_node_cap is not None:
        k = min(k, p.per_node_cap - here.get(p.name, 0))
    return max(k, 0)


def ceiling(
    pods: tuple[PodType, ...],
    name: str,
    placed: int,
    refused: int | None,
    maximum: int,
    pools: tuple[NodeType, ...],
    budget: float,
) -> tuple[int, int | None]:
    """(placed, refused) for the pod type ``name``: the most replicas a placement was found for
    beside the other pods (at least ``placed``), and the least count proven not to fit (``refused``
    when already proven; else ``maximum`` is tried first; None: the maximum fits or is undecided),
    by a binary search of at most :data:`PROBES` packings within ``budget`` seconds."""

    def attempt(k: int, seconds: float) -> bool | None:
        trial = tuple(replace(q, count=k) if q.name == name else q for q in pods)
        return pack(Problem(trial, pools), max(seconds, 0.05)).feasible

    deadline = time.monotonic() + budget
    low, high = placed, refused
    for _ in range(PROBES):
        k = maximum if high is None else (low + high) // 2
        left = deadline - time.monotonic()
        if k <= low or left <= 0:
            break
        answer = attempt(k, left / 2)
        if answer is True:
            low = k
            if high is None:
                return k, None  # the maximum fits
        elif answer is False:
            high = k
        else:
            break
    return low, high


def check(ctx) -> Iterator[Finding]:
    budget = float(ctx.option("time-budget"))
    for facts in per_cluster(ctx):
        yield from _check(facts, budget)


def _check(facts: PackingFacts, budget: float) -> Iterator[Finding]:
    a = facts.analysis
    if a is None or a.fit.feasible is not True:
        return  # the minimum itself does not fit (PF601) or is undecided
    inputs = facts.inputs
    pools = grown(inputs.pools, inputs.pool_sources or {}, inputs.host_limits)
    pods = tuple(inputs.pods) + tuple(inputs.idle)
    by_name = {p.name: p for p in pods}
    for p in pods:
        w = inputs.workloads.get(p.name)
        if w is None or w.autoscaler is None or w.autoscaler.max_replicas <= p.count:
            continue
        scaler = w.autoscaler
        # beside the placement found, without moving a pod: a count that certainly runs
        placed = p.count + sum(
            room(p, n, pool, by_name) * alike
            for n, alike in node_runs(a.fit.nodes)  # a run of empty nodes: one node's room, times its count
            if (pool := _pool(inputs.pools, n.pool)) is not None
        )
        if placed >= scaler.max_replicas:
            continue
        at_max = tuple(replace(q, count=scaler.max_replicas) if q.name == p.name else q for q in pods)
        proof = [b for b in certificates(at_max, pools) if b.violated]
        refused = scaler.max_replicas if proof else None
        low, high = ceiling(pods, p.name, placed, refused, scaler.max_replicas, pools, budget)
        if high is None:
            continue  # the maximum fits, or no proof that it does not
        most = f"{low} can run beside the other pods" + (
            f" (no proof about {low + 1} to {high - 1} within the time budget)" if high - 1 > low else ""
        )
        yield Finding(
            rule=ID,
            message=(
                f"{facts.prefix}scales {w.ref} up to {scaler.max_replicas} replicas, and "
                f"{scaler.max_replicas} × {format_cpu(p.cpu)} CPU{f' / {format_memory(p.memory)}' if p.memory else ''} "
                f"do not fit the node pools{' at their cluster autoscaler maximum' if pools != inputs.pools else ''} "
                f"({', '.join(_size(n, g, inputs.pool_sources or {}) for n, g in zip(inputs.pools, pools, strict=True))})"
                f": {most}"
            ),
            location=scaler.location,
            object=scaler.ref,
            details=facts.details(
                {
                    "workload": str(w.ref),
                    "min_replicas": scaler.min_replicas,
                    "max_replicas": scaler.max_replicas,
                    "packed_replicas": p.count,
                    "replicas_that_fit": low,
                    "refused_replicas": high,
                    "certificate_at_max": proof[0].kind if proof else None,
                    "nodes_at_autoscaler_max": {g.name: g.count for g in pools if g.count != _pool_count(inputs, g)}
                    or None,
                }
            ),
        )


def grown(
    pools: tuple[NodeType, ...], sources: Mapping[str, Any], host_limits: Mapping[str, int] | None = None
) -> tuple[NodeType, ...]:
    """The pools at the most nodes their cluster autoscaler may give them (the pool's
    ``max_count``); a pool without one as it is. Where the platform's hosts bound the node VMs of a
    class (``host_limits``: vSphere), a pool grows no further than the hosts hold beside the
    cluster's other nodes of that class: the autoscaler cannot create a VM the hosts cannot run."""
    out = []
    for n in pools:
        src = sources.get(n.name)
        most = n.count if src is None else src.most_nodes
        limit = (host_limits or {}).get(n.vm_class)
        if limit is not None:
            others = sum(o.count for o in pools if o.vm_class == n.vm_class and o.name != n.name)
            most = min(most, max(limit - others, n.count))
        out.append(n.with_count(most) if most > n.count else n)
    return tuple(out)


def _size(now: NodeType, most: NodeType, sources: Mapping[str, Any]) -> str:
    src = sources.get(now.name)
    wanted = now.count if src is None else src.most_nodes
    held = f"; the hosts hold no more of the {wanted} it may grow to" if wanted > most.count else ""
    if most.count == now.count:
        return f"{now.count} × {now.vm_class}{held}"
    return f"{most.count} × {now.vm_class}, {now.count} now{held}"


def _pool_count(inputs: Any, pool: NodeType) -> int:
    return next((n.count for n in inputs.pools if n.name == pool.name), pool.count)


def _pool(pools: tuple[NodeType, ...], name: str) -> NodeType | None:
    return next((n for n in pools if n.name == name), None)
