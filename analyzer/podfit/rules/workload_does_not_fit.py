"""## What it does
The pods (replicas, DaemonSets on every node, anti-affinity) cannot be packed onto the node pools;
or two DaemonSets bind the same host port on the same nodes, where only one of them can run.

## Why it matters
Pods that do not fit stay Pending; a total that fits can still fail to pack because pods are
indivisible.

## Example
```yaml
# three 850m and three 400m pods on two 2,000m nodes
# node-exporter (hostNetwork, 9100) from kube-prometheus and from the prometheus-node-exporter chart
```

## How to fix
Add nodes, use a larger VM class (see PF604), or lower requests. Two DaemonSets on one host port:
keep one, move the other to another port, or give them node selections that do not overlap.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Select a virtual machine size
for worker nodes"

## Implementation
The finding points at what the proof is about: the workload a certificate names (no pool can run
it, its anti-affinity group, spread cap or host port needs more nodes than it may use), else each workload that
alone does not fit the pools it may use, else the node pool that the pods together do not fit (its
cluster manifest or platform profile). Pods whose scheduling answer is unknown were left out of packing
(see podfit.packing.adapter): they never cause this finding; its details list them. A pod asking
for an extended resource (`nvidia.com/gpu`, …) may only use pools whose `allocatable` offers enough of
it per node, and a node holds no more of it than it offers, summed over every pod on the node (after
the DaemonSets there take theirs): three one-GPU pods on two one-GPU nodes do not fit, nor do five
two-GPU pods of three workloads on two five-GPU nodes.

A pool at 0 nodes whose cluster autoscaler may grow it (scale from zero: the profile's `count: 0`
with `maxCount`, a Cluster API machine deployment or TanzuKubernetesCluster node pool at 0 replicas
with the autoscaler's max-size annotation) runs nothing until pods are Pending. When the pods do not
fit the pools that have nodes (or there are none), they are packed again with those pools at their
maximum: fitting then is one info finding on the pool, saying that the verdict assumes the
autoscaler adds the nodes (and how many of them the placement uses); not fitting is this rule's
finding as above, judged on the grown pools and saying so; a workload that does not fit the nodes
there are and is no longer named once the pools are grown gets its finding at the current counts
as info, saying that its fit rests on the autoscaler.

DaemonSets are not packed: each runs one pod on every node of the pools it fits. Two of them
whose pods bind a conflicting host port (the same port and protocol, the same hostIP or either
binding every address; a hostNetwork pod binds its containerPorts) on worker pools both run on:
the scheduler's NodePorts filter admits one pod per node for that port, so on each such node one
DaemonSet's pod stays Pending. The finding is on the later DaemonSet of the input, naming the earlier one, the
ports and the nodes they share, whether or not the rest fits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..findings import Finding
from ..options import Option
from ..packing import exact
from ..packing.bounds import certificates, eligible_pools, pod_fits, port_cliques
from ..packing.model import Bound, node_runs
from ..packing.report import describe_bound, describe_proof
from ..packing.rules_support import (
    PackingFacts,
    per_cluster,
    pool_anchor,
    skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..words import plural

ID = "PF601"
SLUG = "workload-does-not-fit"
TITLE = "Workloads do not fit the node pools"
SEVERITY = "error"
CATEGORY = "packing"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "time-budget",
        "duration",
        10,
        "Time for the packing search and exact proofs (seconds, or 500ms, 10s, 2m).",
        minimum=0,
    ),
)

# Certificates that are about one pod type (named in ``detail``) or one anti-affinity group.
_ABOUT_A_POD = ("no-matching-pool", "pod-too-large", "max-per-node", "zone-spread")


def _pods_of(b: Bound, inputs) -> list[str]:
    """The pod types a violated certificate is about (empty: about the pools as a whole)."""
    names = [p.name for p in inputs.pods]
    if b.kind in _ABOUT_A_POD:
        return [b.detail] if b.detail in names else []
    if b.kind == "anti-affinity":
        group = b.detail.removeprefix("group ")
        return [p.name for p in inputs.pods if p.exclusive_group == group]
    if b.kind == "host-port":
        port = b.detail.removeprefix("hostPort ")
        return [p.name for key, members in port_cliques(inputs.pods) if key == port for p in members]
    scope = set(b.scope)
    inside = []
    for p in inputs.pods:
        elig = {inputs.pools[i].name for i in eligible_pools(p, inputs.pools)}
        if elig and elig <= scope:
            inside.append(p.name)
    return inside or names


def _message(b: Bound, name: str, inputs) -> str:
    p = next(p for p in inputs.pods if p.name == name)
    if b.kind == "no-matching-pool":
        why = inputs.unschedulable.get(name, "its node selection matches no pool")
        return f"no node pool can run its {plural(p.count, 'pod')}: {why}"
    if b.kind == "anti-affinity":
        return (
            f"{b.needed} pods that must run on different nodes (required pod anti-affinity on hostname, "
            f"{b.detail}) and only {plural(b.available, 'node')} they may use"
        )
    if b.kind == "host-port":
        return (
            f"{b.needed} pods that bind {b.detail} on their node (one pod per node for each host port) "
            f"and only {plural(b.available, 'node')} they may use"
        )
    if b.kind == "max-per-node":
        why = ["topology spread on hostname"] if _spreads(inputs, name) else []
        asked = getattr(inputs, "extended", {}).get(name)
        if asked:
            why.append("each asking for " + ", ".join(f"{v} {r}" for r, v in sorted(asked.items())))
        return (
            f"{plural(p.count, 'pod')} at most {p.max_per_node} per node ({'; '.join(why)}) need "
            f"{plural(b.needed, 'node')} and only {plural(b.available, 'node')} they may use"
        )
    if b.kind == "zone-spread":
        caps = ", ".join(f"{cap} on {', '.join(zone)}" for zone, cap in p.pool_caps)
        return (
            f"{plural(p.count, 'pod')} under a zone topology spread (DoNotSchedule) may take at most "
            f"{caps}: {b.available} in all"
        )
    return f"{plural(p.count, 'pod')} larger than the allocatable of every node they may use"


def _spreads(inputs, name: str) -> bool:
    w = inputs.workloads.get(name)
    return w is None or bool(w.pod.scheduling.spread)


def _unknown(inputs) -> list[dict]:
    return [{"keys": list(u.keys), "pods": list(u.pods)} for u in inputs.unknown]


def check(ctx) -> Iterator[Finding]:
    for facts in per_cluster(ctx):
        yield from _daemonset_ports(facts)
        if facts.scaled is None:
            yield from _check(ctx, facts)
        elif facts.scaled.fit.feasible is True:
            yield _from_zero(facts, facts.scaled)
        else:
            # judged with the pools that scale from zero at their maximum: what the cluster
            # autoscaler can add for Pending pods
            grown = PackingFacts(facts.scaled_inputs, facts.scaled, facts.cluster, facts.several)
            said = _grown_from_zero(facts)
            named = set()
            for f in _check(ctx, grown):
                named.add(f.object)
                yield replace(
                    f, message=f"{f.message} ({said})", details={**f.details, "scaled_from_zero": _sizes(facts)}
                )
            yield from _rescued(ctx, facts, named, said)


def _rescued(ctx, facts: PackingFacts, named: set, said: str) -> Iterator[Finding]:
    """The workloads that do not fit the nodes there are and are no longer named once the pools
    that scale from zero are grown: each one info finding, saying that its fit rests on the
    autoscaler (another workload's misfit keeps the whole from fitting either way)."""
    if facts.analysis is None:
        return  # no node now: every pod rests on the autoscaler, and the findings above judge them
    for f in _check(ctx, facts):
        if f.object is None or f.object in named or f.object.kind in ("Cluster", "TanzuKubernetesCluster"):
            continue
        yield replace(
            f,
            message=f"{f.message}: it fits only {said} (assumed: the cluster autoscaler adds those nodes)",
            details={**f.details, "assumes": "cluster-autoscaler scale-from-zero", "scaled_from_zero": _sizes(facts)},
            severity="info",
        )


def _undecided_without_solver(facts: PackingFacts) -> Finding:
    """No heuristic placed every pod and no bound proves a misfit: the exact solver would settle
    it, and it is not installed. An info finding (a verdict not reached is no misfit), never a
    silent pass."""
    a = facts.analysis
    assert a is not None
    inputs = facts.inputs
    nodes = sum(n.count for n in inputs.pools)
    left = sum(k for _, k in a.fit.unplaced)
    pods = sum(p.count for p in inputs.pods)
    loc, obj = pool_anchor(facts, inputs.pools[0].name)
    return Finding(
        rule=ID,
        message=f"{facts.prefix}undecided whether {plural(pods, 'pod')} fit {plural(nodes, 'node')}: the heuristics "
        f"leave {left} unplaced and no bound proves a misfit; the proof needs the exact solver: {exact.INSTALL_HINT}",
        location=loc,
        object=obj,
        details=facts.details(
            {"proof": a.fit.proof, "solver_status": a.fit.solver_status, "unplaced": dict(a.fit.unplaced)}
        ),
        severity="info",
    )


def _sizes(facts: PackingFacts) -> dict[str, int]:
    """The pools that scale from zero and the nodes they were grown to: their cluster autoscaler's
    maximum, or fewer where the vSphere hosts hold no more."""
    standby = {n.name for n in facts.inputs.standby}
    return {n.name: n.count for n in facts.scaled_inputs.pools if n.name in standby}


def _grown_from_zero(facts: PackingFacts) -> str:
    sources = facts.inputs.pool_sources or {}
    parts = []
    for name, nodes in _sizes(facts).items():
        most = sources[name].most_nodes if name in sources else nodes
        if nodes < most:
            parts.append(
                f"{name} grown from 0 to {plural(nodes, 'node')} (the hosts hold no more of its autoscaler maximum, {most})"
            )
        else:
            parts.append(f"{name} grown from 0 to its cluster autoscaler maximum, {plural(nodes, 'node')}")
    return "with " + ", ".join(parts)


def _from_zero(facts: PackingFacts, a) -> Finding:
    """The pods fit only once the cluster autoscaler adds nodes to pools at 0 nodes: said (info),
    since that verdict rests on the autoscaler (its node group's maximum, its quota, the cloud's
    capacity) and the pods stay Pending until the nodes join."""
    sizes = _sizes(facts)
    # nodes with pods on them (a run of empty nodes is one entry of node_runs, and has none)
    used = {
        name: sum(1 for n, _ in node_runs(a.fit.nodes) if n.pool == name and any(k for _, k in n.pods))
        for name in sizes
    }
    pods = sum(p.count for p in facts.inputs.pods)
    now = sum(n.count for n in facts.inputs.pools)
    grown = ", ".join(f"{used[name]} of at most {most} on {name}" for name, most in sizes.items())
    loc, obj = pool_anchor(facts, next(iter(sizes)))
    return Finding(
        rule=ID,
        message=(
            f"{facts.prefix}{plural(pods, 'pod')} fit only once the cluster autoscaler adds nodes to the pools it "
            f"scales from zero ({grown}) beside the {plural(now, 'node')} there are: the pods wait Pending until "
            "those nodes join, and this verdict assumes the autoscaler may add them"
        ),
        location=loc,
        object=obj,
        details=facts.details(
            {
                "assumes": "cluster-autoscaler scale-from-zero",
                "scaled_from_zero": sizes,
                "nodes_used": used,
                "fits_without": False if facts.analysis is None else facts.analysis.fit.feasible,
            }
        ),
        severity="info",
    )


def _daemonset_ports(facts: PackingFacts) -> Iterator[Finding]:
    """Two DaemonSets binding a conflicting host port on the nodes of a pool both run on."""
    inputs = facts.inputs
    daemons = [(d.name, w) for d in inputs.daemons if (w := inputs.workloads.get(d.name)) is not None]
    for i, (name, w) in enumerate(daemons):
        if not w.pod.host_ports:
            continue
        for other, v in daemons[:i]:
            ports = sorted({str(hp) for hp in w.pod.host_ports if any(hp.conflicts(q) for q in v.pod.host_ports)})
            shared = [n for n in inputs.pools if name in n.daemon_pods and other in n.daemon_pods]
            if not ports or not shared:
                continue
            nodes = sum(n.count for n in shared)
            yield Finding(
                rule=ID,
                message=(
                    f"{facts.prefix}its pods bind hostPort {', '.join(ports)}, which {v.ref} binds too on the same "
                    f"{plural(nodes, 'node')} ({', '.join(f'{n.count} × {n.vm_class}' for n in shared)}): one pod per "
                    "node for each host port, so on each of them one of the two DaemonSets' pods stays Pending"
                ),
                location=w.location,
                object=w.ref,
                details=facts.details(
                    {
                        "certificate": "daemonset-host-port",
                        "host_ports": ports,
                        "daemonset": str(v.ref),
                        "pools": [n.name for n in shared],
                        "nodes": nodes,
                    }
                ),
            )
            break  # one finding per DaemonSet: the first it collides with


def _check(ctx, facts: PackingFacts) -> Iterator[Finding]:
    a = facts.analysis
    if a is not None and a.fit.feasible is None and a.fit.solver_status == exact.NOT_INSTALLED:
        yield _undecided_without_solver(facts)
        return
    if a is None or a.fit.feasible is not False:
        # True: fits. None: undecided within the time budget — not a proven misfit, so no finding.
        return
    inputs = facts.inputs
    too_large = {
        p.name
        for p in inputs.pods
        if any(p.allowed_on(n) for n in inputs.pools)
        and not any(p.allowed_on(n) and pod_fits(p, n) for n in inputs.pools)
    }
    unplaced = [name for name, _ in a.fit.unplaced]
    if unplaced and all(name in too_large for name in unplaced) and set(unplaced) == too_large:
        return  # PF303 already says it, pod by pod
    details = facts.details(
        {
            "proof": a.fit.proof,
            "lower_bound": a.fit.lower_bound,
            "unplaced": dict(a.fit.unplaced),
            "violated": [b.kind for b in a.fit.violated_bounds],
            "min_nodes": {k: m.nodes for k, m in a.min_nodes.items()},
            "unknown": _unknown(inputs),
            # Jobs, CronJobs and Helm hooks: the group packed, and those left out (see the adapter)
            "run_to_completion": None
            if inputs.run_to_completion is None
            else {"packed": inputs.run_to_completion.packed, "left_out": list(inputs.run_to_completion.left_out)},
        }
    )
    # 1. Certificates about one workload: a finding on each such workload.
    about: dict[str, Bound] = {}
    for b in a.fit.violated_bounds:
        if b.kind in _ABOUT_A_POD or b.kind in ("anti-affinity", "host-port"):
            for name in _pods_of(b, inputs):
                if name not in inputs.workloads:  # a pool's reserved pods: no manifest's
                    continue
                if not (b.kind == "pod-too-large" and name in too_large):  # PF303's
                    about.setdefault(name, b)
    for name, b in about.items():
        w = inputs.workloads[name]
        yield Finding(
            rule=ID,
            message=facts.prefix + _message(b, name, inputs),
            location=w.location,
            object=w.ref,
            details={**details, "certificate": b.kind},
        )
    if about:
        return
    # 2. The pools as a whole: the one workload concerned, else the pools' declaration.
    nodes = sum(n.count for n in inputs.pools)
    pods = sum(p.count for p in inputs.pods)
    rec = a.recommendation
    if rec.vm_class:
        fix = f"; recommended: {rec.nodes} × {rec.vm_class} (PF604)"
    elif any(why.startswith("the hosts hold at most") for why in rec.excluded.values()):
        fix = "; no VM class fits: the hosts cannot run enough nodes (PF604)"
    else:
        fix = ""
    # PF303 already names each pod too large for any node: the proof given is another bound when
    # one holds (the pods together exceed the pools), as the findings below are about the others
    violated = [b for b in a.fit.violated_bounds if b.kind != "pod-too-large"]
    if a.fit.proof == "lower-bound" and violated:
        proof = describe_bound(violated[0])
    else:
        proof = describe_proof(a).removeprefix("no: ")
    message = (
        f"{facts.prefix}{plural(pods, 'pod')} do not fit {plural(nodes, 'node')} ({', '.join(f'{n.count} × {n.vm_class}' for n in inputs.pools)}): "
        f"{proof}{fix}"
    )
    concerned = _pods_of(violated[0], inputs) if violated else [p.name for p in inputs.pods]
    alone = False
    for p in inputs.pods:
        if p.name not in concerned or p.name in too_large or p.name not in inputs.workloads:
            continue
        own = [b for b in certificates([p], inputs.pools) if b.violated]
        if own:
            alone = True
            w = inputs.workloads[p.name]
            yield Finding(
                rule=ID,
                message=f"{facts.prefix}its {plural(p.count, 'pod')} alone do not fit the {plural(nodes, 'node')}: "
                f"{describe_bound(own[0])}",
                location=w.location,
                object=w.ref,
                details={**details, "certificate": own[0].kind},
            )
    if alone:
        return
    if len(concerned) == 1 and concerned[0] in inputs.workloads:
        w = inputs.workloads[concerned[0]]
        yield Finding(rule=ID, message=message, location=w.location, object=w.ref, details=details)
        return
    scope = violated[0].scope if violated and violated[0].scope else tuple(n.name for n in inputs.pools)
    loc, obj = pool_anchor(facts, scope[0])
    yield Finding(
        rule=ID,
        message=message,
        location=loc,
        object=obj,
        details=details,
    )
