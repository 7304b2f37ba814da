"""Glue between the packing analyzer and the Python rules PF303, PF601–PF605.

Packing works per cluster (``Facts.clusters``): each cluster's workloads, every object once
(duplicates within a cluster left out), onto that cluster's node pools. The analysis runs once
per check and cluster (cached on the run's facts and config) and every packing rule reads from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..clusters import cluster_objects
from ..facts import ClusterScope
from ..model import Location, ObjectRef
from ..platform import NodePool, Platform
from ..vsphere import critical_workloads, nodes_hosts_hold
from .adapter import PackInputs, inputs_from
from .engine import Analysis, analyze_inputs
from .measured import with_measured_peaks
from .model import NodeType

__all__ = [
    "MISSING_POOLS",
    "PackingFacts",
    "per_cluster",
    "skip_reason",
    "skip_reason_without_nodes",
    "time_budget",
    "headroom_share",
    "pool_location",
    "pool_anchor",
    "cluster_inputs",
    "with_standby",
]

MISSING_POOLS = (
    "node pools (platform nodePools, --nodes, a TanzuKubernetesCluster, a Cluster API Cluster with topology, "
    "an eksctl ClusterConfig or a Karpenter NodePool)"
)


@dataclass(frozen=True)
class PackingFacts:
    inputs: PackInputs
    analysis: Analysis | None
    cluster: ClusterScope | None = None
    several: bool = False  # the run has several clusters: findings name theirs
    # the analysis with the pools that scale from zero (``inputs.standby``) at their cluster
    # autoscaler maximum, beside the others as they are: made when there are such pools and the
    # pods do not fit (or are undecided) without them
    scaled: Analysis | None = None

    @property
    def scaled_inputs(self) -> PackInputs:
        """The inputs with the pools that scale from zero at their autoscaler maximum."""
        return with_standby(self.inputs)

    @property
    def prefix(self) -> str:
        """``cluster NAME: `` when the run has several clusters, else nothing."""
        return f"{self.cluster.label}: " if self.several and self.cluster is not None else ""

    def details(self, values: dict) -> dict:
        return {"cluster": self.cluster.name, **values} if self.several and self.cluster is not None else values


def time_budget(ctx) -> float:
    return float(ctx.for_rule("PF601").option("time-budget"))


def headroom_share(ctx) -> int:
    return int(ctx.for_rule("PF603").option("headroom"))


def _clusters(ctx) -> list[ClusterScope]:
    """The clusters packing looks at: those with node pools and workloads (or the only one)."""
    scopes = list(ctx.facts.clusters)
    if len(scopes) <= 1:
        return [c for c in scopes if c.node_pools]
    return [c for c in scopes if c.node_pools and c.workloads]


def skip_reason(ctx) -> str | None:
    if not ctx.node_pools:
        return MISSING_POOLS  # before building the pod inputs: that costs on large corpora
    found = per_cluster(ctx, analyse=False)
    if not found:
        unknown = sorted({c for f in _cache_inputs(ctx) for c in f.unknown_classes})
        if unknown:
            return (
                "the size of " + ", ".join(unknown) + " (a VM class in the platform's vmClasses, or an instance type "
                "podfit knows: docs/platform.md)"
            )
        return MISSING_POOLS
    return None


def skip_reason_without_nodes(ctx) -> str | None:
    """:func:`skip_reason`, and for the rules about the nodes there are (stranded capacity,
    headroom, right-sizing): a run whose every worker pool scales from zero has none."""
    reason = skip_reason(ctx)
    if reason is None and not any(f.inputs.pools for f in per_cluster(ctx, analyse=False)):
        return "node pools with nodes now (every worker pool scales from zero)"
    return reason


def _cache_inputs(ctx) -> list[PackInputs]:
    return [f.inputs for f in _fill(ctx, analyse=False)]


def overcommit_ratio(ctx) -> int:
    """PF503's vCPU : core ratio for this run (the critical one where critical workloads run)."""
    rule = ctx.for_rule("PF503")
    critical = critical_workloads(ctx.platform, ctx.objects)
    return int(rule.option("critical-ratio-percent") if critical else rule.option("ratio-percent"))


def host_limits(platform: Platform, pools: Sequence[NodePool], all_pools: Sequence[NodePool], ratio: int):
    """Per VM class, the most nodes of it the hosts hold in place of ``pools`` (a cluster's worker
    pools), beside every other pool of ``all_pools`` (control planes, other clusters); None when the
    platform describes no hosts."""
    replaced = {id(p) for p in pools if p.role != "control-plane"}
    others = [p for p in all_pools if id(p) not in replaced]
    limits = {c.name: nodes_hosts_hold(platform, c.name, others, ratio) for c in platform.vm_classes}
    found = {k: v for k, v in limits.items() if v is not None}
    return found or None


def cluster_inputs(
    platform: Platform,
    workloads,
    pools: Sequence[NodePool],
    all_pools: Sequence[NodePool],
    *,
    usage,
    ratio: int,
    overhead=None,
    max_pods: int | None = None,
) -> PackInputs:
    """One cluster's packing inputs (:func:`inputs_from`), with the pods' measured peaks (``usage``,
    None without ``--usage``) and the most nodes per VM class the hosts hold (:func:`host_limits`)."""
    inputs = inputs_from(workloads, platform, pools, overhead=overhead, max_pods=max_pods)
    return replace(with_measured_peaks(inputs, usage), host_limits=host_limits(platform, pools, all_pools, ratio))


def _fill(ctx, analyse: bool) -> list[PackingFacts]:
    """The run's packing facts, computed once per run (``ctx.memo`` is shared by the rules' contexts)."""
    memo = ctx.memo
    if "packing" not in memo:
        several = len(ctx.facts.clusters) > 1
        ratio = overcommit_ratio(ctx) if ctx.platform.hosts else 0
        memo["packing"] = [
            PackingFacts(
                cluster_inputs(
                    ctx.platform, c.workloads, c.node_pools, ctx.facts.node_pools, usage=ctx.facts.usage, ratio=ratio
                ),
                None,
                c,
                several,
            )
            for c in _clusters(ctx)
        ]
    if analyse and not memo.get("packing-analysed"):
        memo["packing"] = [_analyse(ctx, f) for f in memo["packing"]]
        memo["packing-analysed"] = True
    return memo["packing"]


def with_standby(inputs: PackInputs) -> PackInputs:
    """``inputs`` with the pools that scale from zero grown to their cluster autoscaler maximum
    (after the pools that have nodes, so that a placement fills those first). Where the platform's
    hosts bound the node VMs of a class (vSphere), a pool grows no further than they hold beside
    the cluster's other nodes of that class, as PF606 grows pools."""
    sources = inputs.pool_sources or {}
    limits = inputs.host_limits or {}
    grown: list[NodeType] = []
    for n in inputs.standby:
        if n.name not in sources:
            continue
        most = sources[n.name].most_nodes
        if n.vm_class in limits:
            others = sum(o.count for o in inputs.pools + tuple(grown) if o.vm_class == n.vm_class)
            most = min(most, max(limits[n.vm_class] - others, 0))
        if most > 0:
            grown.append(n.with_count(most))
    return replace(inputs, pools=inputs.pools + tuple(grown), standby=())


def _analyse(ctx, f: PackingFacts) -> PackingFacts:
    inputs = f.inputs
    analysis = analyze_inputs(inputs, headroom_share(ctx), time_budget(ctx)) if inputs.pools else None
    scaled = None
    if inputs.standby and (analysis is None or analysis.fit.feasible is not True):
        grown = with_standby(inputs)
        if len(grown.pools) > len(inputs.pools):  # the hosts may leave no room to grow any of them
            scaled = analyze_inputs(grown, headroom_share(ctx), time_budget(ctx))
    return PackingFacts(inputs, analysis, f.cluster, f.several, scaled)


def per_cluster(ctx, analyse: bool = True) -> list[PackingFacts]:
    """The packing facts of each cluster whose workloads have node pools to land on (or pools that
    scale from zero), in the clusters' order; with ``analyse`` the packing analysis too."""
    return [f for f in _fill(ctx, analyse) if f.inputs.pools or f.inputs.standby]


def pool_location(inputs: PackInputs, pool_name: str) -> Location:
    """Where a node pool was declared (profile or cluster manifest); else the first workload's file."""
    source = (inputs.pool_sources or {}).get(pool_name)
    if source is not None and source.location is not None:
        return source.location
    first = next(iter(inputs.workloads.values()), None)
    return Location(first.location.file if first is not None else "", 0)


def pool_anchor(facts: PackingFacts, pool_name: str) -> tuple[Location, ObjectRef | None]:
    """Where a finding about a node pool points: the pool's declaration, and the cluster manifest
    (TanzuKubernetesCluster / Cluster API Cluster) that declares it, when it comes from one (a
    platform profile's pool is no object of the input: None)."""
    loc = pool_location(facts.inputs, pool_name)
    source = (facts.inputs.pool_sources or {}).get(pool_name)
    if source is None or not source.cluster or source.location is None or facts.cluster is None:
        return loc, None
    for o in cluster_objects(facts.cluster.objects):
        if o.ref.name == source.cluster and o.location.file == source.location.file:
            return loc, o.ref
    return loc, None


def advice_withheld(inputs: PackInputs) -> str | None:
    """Why sizing advice (PF602, PF604) would mislead, or None: pods left out of packing because
    their node selection is unknown, or no pod that requests anything (no pod at all, e.g. a chart
    left unrendered, or pods without requests): every class would look idle and every node stranded."""
    if inputs.unknown:
        return "some pods were left out of packing (PF605)"
    if not inputs.pods:
        return "no pod to pack"
    if not any(p.cpu or p.memory for p in inputs.pods):
        return "no pod requests CPU or memory (PF101, PF102, PF105)"
    return None
