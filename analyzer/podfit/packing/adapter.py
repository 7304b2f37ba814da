"""From the loader's model and a platform profile to packing inputs (pure).

* Every node pool has labels and taints (:attr:`podfit.platform.NodePool.node_labels` /
  ``node_taints``: the declared ones and the well-known ones). :func:`podfit.scheduling.decide`
  says, per workload and pool, whether the pods fit, do not, or whether that is unknown (a selector
  on a label key that no pool of the run describes, or on the node's name). A key described by one
  pool is known to be absent from the others.
* Every non-DaemonSet workload becomes a :class:`PodType` with ``count = replicas``, its pod's
  effective requests (Kubernetes semantics are already applied by :mod:`podfit.workloads`) and the worker pools
  it fits (``pools``). A workload that fits no worker pool is still packed (a ``no-matching-pool``
  certificate proves the misfit), with the reason in ``PackInputs.unschedulable``; one that fits
  only control-plane pools is not packed (``control_plane_only``).
* A workload whose answer is unknown on some worker pool is left out of packing — of the fit, the
  least node counts and the right-sizing alike — and reported once per set of label keys
  (``PackInputs.unknown``): leaving pods out never turns a fit into a misfit, so a misfit proven
  without them is a misfit with them, and they are never the cause of one.
* DaemonSets become :class:`DaemonPod` values: their requests come off every node of the pools they
  fit (their nodeSelector, node affinity and tolerations, with the DaemonSet controller's own
  tolerations); an unknown answer counts as not running there (and is reported).
* Required pod anti-affinity on ``kubernetes.io/hostname`` (matchLabels and matchExpressions) is
  evaluated against the pod labels of every packed workload, in the namespaces the term selects. A
  workload its own term selects is in an exclusive group (at most one pod of the group per node;
  workloads declaring the same term in the same namespace share it); two workloads of which either
  selects the other conflict (their pods never share a node). Required pod affinity (except to
  DaemonSet pods alone) and terms on other topology keys are not modelled.
* Host ports (``PodSpec.host_ports``): a workload binding one has at most one pod per node
  (``PodType.host_ports``), and two workloads binding conflicting ones conflict.
* Against DaemonSet pods (on every node of the pools the DaemonSet fits): a workload avoids the
  DaemonSet's nodes when both bind a conflicting host port or either's required hostname
  anti-affinity selects the other (``PodType.avoids``); a required hostname pod affinity term that
  selects DaemonSet pods and no other workload's needs one of them on the node (``PodType.needs``).
  A workload that no pool it fits can then take is ``unschedulable``, with the reason.
* Under an autoscaler the count is the replicas it keeps (:func:`podfit.workloads.autoscaled_replicas`);
  an autoscaled workload at 0 is not packed but kept in ``PackInputs.idle`` for PF606.
* A ``DoNotSchedule`` topology spread over ``topology.kubernetes.io/zone`` splits the pod type into
  a part per zone of the least each zone must hold (``<name>@<zone>``, bound to that zone's pools)
  and the rest, capped per zone at the most less the least (``PodType.pool_caps``;
  :func:`_zone_parts`, which says when it applies): 4 pods over 2 zones at maxSkew 1 are 2 + 2, as
  the scheduler places them, not 4 in one zone.
* A ``DoNotSchedule`` topology spread on hostname whose selector counts the pod's own pods, with
  maxSkew s, caps pods per node at ⌊(M + (N − 1)·s) / N⌋, where M is the number of pods the
  selector counts (this workload's and those of other workloads it matches) and N the nodes that are
  domains: those matching the pod's node selection (``nodeAffinityPolicy: Honor``, the default) and,
  unless ``nodeTaintsPolicy: Honor``, tainted ones too — control planes included, as the scheduler
  counts them. When some domain can run none of the counted pods (it stays at 0), or there are
  fewer domains than ``minDomains``, the cap is s. A necessary condition of the skew (the other
  side, each node holding at least max − s, is not modelled).
* Control-plane pools are not used for workload pods.
* A pool's ``reserved_pods`` (the cluster's own pods, kube-system's or OpenShift's openshift-*, that are no DaemonSet's, such as
  coredns: :attr:`podfit.platform.NodePool.reserved_pods`) become pod types bound to that pool,
  named ``reserved/<pool>/<name>`` (``PackInputs.reserved``): they take their slots and requests
  there before any workload, as on the running cluster. They have no workload: findings about
  pods are never anchored on them.
* Pods that run to completion (Jobs, CronJobs, Helm hooks: :func:`run_kind`) are not packed as if
  always running: beside the long-running pods goes only the largest group of them that can run
  at one time — one Helm hook, or every Job, or every CronJob (:class:`RunToCompletion`, reported
  in ``PackInputs.run_to_completion`` and by ``podfit pack``). Leaving the other groups out never
  hides a misfit of the one packed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model import WORKLOAD_KINDS, Workload
from ..platform import is_extended_resource
from ..quantity import QuantityError, parse_memory
from ..scheduling import (
    FITS,
    HOSTNAME,
    NO,
    REVISION_KEYS,
    UNKNOWN,
    Decision,
    HostPort,
    SchedulingConstraints,
    decide,
    described_keys,
)
from .bounds import pod_fits
from .model import DaemonPod, NodeType, Overhead, PodType, VMClass, node_type

if TYPE_CHECKING:
    from ..platform import NodePool

__all__ = [
    "PackInputs",
    "UnknownPods",
    "pod_name",
    "pods_from_workloads",
    "vm_classes",
    "pools_to_node_types",
    "family_of",
    "inputs_from",
]


@dataclass(frozen=True)
class UnknownPods:
    """Workloads whose placement depends on ``keys``, labels (or fields) no node pool describes."""

    keys: tuple[str, ...]
    pods: tuple[str, ...]  # pod type / DaemonSet names

    def describe(self) -> str:
        labels = [k for k in self.keys if k != HOSTNAME and not k.startswith("field ")]
        names = [k.removeprefix("field ") for k in self.keys if k not in labels]
        parts = []
        if labels:
            parts.append(
                f"label {', '.join(labels)}, which no node pool describes "
                "(nodePools[].labels or pack --pool-label give it)"
            )
        if names:
            parts.append(f"the node's own name ({', '.join(names)}), which packing cannot know")
        return f"unknown for these pods: {', '.join(self.pods)} — their node selection depends on " + " and on ".join(
            parts
        )


@dataclass(frozen=True)
class PackInputs:
    pods: tuple[PodType, ...]
    daemons: tuple[DaemonPod, ...]
    pools: tuple[NodeType, ...]
    classes: tuple[VMClass, ...]
    overhead: Overhead
    max_pods: int
    numa_cores: int | None
    numa_memory: int | None
    family: str | None
    workloads: Mapping[str, Workload]  # pod type / daemon name → workload (for findings)
    unknown_classes: tuple[str, ...] = ()
    pool_sources: Mapping[str, NodePool] | None = None  # node type name → the pool it was made from
    unknown: tuple[UnknownPods, ...] = ()  # left out of packing: their answer is unknown
    control_plane_only: tuple[str, ...] = ()  # fit only control-plane pools: not packed
    unschedulable: Mapping[str, str] = field(default_factory=dict)  # pod name → why no worker pool fits
    # VM class → the most nodes of it the platform's hosts hold beside the VMs that stay (None: no hosts)
    host_limits: Mapping[str, int] | None = None
    # run-to-completion pods (Jobs, CronJobs, Helm hooks): the group packed and those left out
    run_to_completion: RunToCompletion | None = None
    # VM class → (overhead, pod slots) of the nodes of that class the platform describes with their
    # kubelet's allocatable (an imported cluster): sizing a class uses what its real nodes offer
    class_overheads: Mapping[str, tuple[Overhead, int]] = field(default_factory=dict)
    # autoscaled workloads at 0 replicas (KEDA scaled to zero): not packed, their scale-out is PF606's
    idle: tuple[PodType, ...] = ()
    # the pod types of the pools' reserved pods (the cluster's own, no workload's)
    reserved: tuple[str, ...] = ()
    # worker pools of no node now whose cluster autoscaler may grow them (scale from zero), as node
    # types of count 0: not in ``pools``; PF601 and PF606 take them at their maximum
    standby: tuple[NodeType, ...] = ()
    # pod type name → the extended resources (nvidia.com/gpu, …) one of its pods asks for
    extended: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # DaemonSet name → the node types it would run on whose nodes do not offer the extended
    # resources its pods ask for (those pods stay Pending: PF303)
    daemon_lacking: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # VM class → the extended resources every node of that class offers pods (pools stating their
    # allocatable; the least of them): what right-sizing may count on
    class_extended: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)


HOOK_ANNOTATION = "helm.sh/hook"


def run_kind(w: Workload) -> str:
    """How a workload's pods run: ``hook`` (a Helm hook: annotation ``helm.sh/hook`` on the object
    or its pod template), ``job`` (a Job), ``cronjob`` (a CronJob), else ``""`` (they keep running)."""
    if w.obj.annotation(HOOK_ANNOTATION) is not None or w.pod.annotation(HOOK_ANNOTATION) is not None:
        return "hook"
    return {"Job": "job", "CronJob": "cronjob"}.get(w.ref.kind, "")


@dataclass(frozen=True)
class RunToCompletion:
    """Which run-to-completion pods were packed beside the long-running ones.

    Pods that run to completion are not there all the time, so they are not all packed together
    with the Deployments. Their peak is the largest of these groups, each of which can run at one
    time beside every long-running pod:

    - ``hook NAME``: one Helm hook (Helm creates a release's hooks one at a time and waits for each);
    - ``jobs``: every Job that is no hook (applied together, they run together);
    - ``cronjobs``: every CronJob (podfit does not compare schedules, so they may coincide).

    "Largest" is by dominant share: Σ requests (CPU or memory, the larger share) over the node
    pools' total allocatable (ties: more pods, then the name). ``packed`` names the group packed;
    ``left_out`` the pod types not packed. A pod that no node can run at all is always packed (its
    misfit does not depend on when it runs).
    """

    packed: str
    packed_pods: tuple[str, ...]
    left_out: tuple[str, ...]

    def describe(self) -> str:
        left = f"; left out: {', '.join(self.left_out)}" if self.left_out else ""
        return (
            f"run-to-completion pods: packed the largest group that can run at once ({self.packed}: "
            f"{', '.join(self.packed_pods)}) beside the long-running pods{left}"
        )


def _peak_group(
    pods: Sequence[PodType], kinds: Mapping[str, str], pools: Sequence[NodeType]
) -> tuple[tuple[PodType, ...], RunToCompletion | None]:
    """The long-running pods plus the largest run-to-completion group (see :class:`RunToCompletion`)."""
    # a pod no node can ever run is a misfit whenever it runs: it stays, so PF303 / PF601 see it
    never = {p.name for p in pods if not any(p.allowed_on(n) and pod_fits(p, n) for n in pools)}
    groups: dict[str, list[PodType]] = {}
    for p in pods:
        kind = kinds.get(p.name, "")
        if not kind or p.name in never:
            continue
        if kind == "hook":
            groups[f"hook {p.name}"] = [p]
        else:
            groups.setdefault(kind + "s", []).append(p)
    if not groups:
        return tuple(pods), None  # none, or only pods that never run: all packed
    total_cpu = sum(n.allocatable[0] * n.count for n in pools) or 1
    total_mem = sum(n.allocatable[1] * n.count for n in pools) or 1

    def share(group: list[PodType]) -> tuple[int, int]:
        cpu = sum(p.cpu * p.count for p in group)
        mem = sum(p.memory * p.count for p in group)
        return max(cpu * 1_000_000 // total_cpu, mem * 1_000_000 // total_mem), sum(p.count for p in group)

    name = max(sorted(groups), key=lambda g: share(groups[g]))
    chosen = groups[name]
    packed = {p.name for p in chosen}
    out = tuple(p for p in pods if p.name in packed or p.name in never or not kinds.get(p.name, ""))
    left = tuple(p.name for p in pods if kinds.get(p.name, "") and p.name not in packed and p.name not in never)
    return out, RunToCompletion(name, tuple(p.name for p in chosen), left)


def pod_name(w: Workload) -> str:
    ns = w.ref.namespace
    return f"{w.ref.kind}/{ns + '/' if ns and ns != 'default' else ''}{w.ref.name}"


def _names(workloads: Iterable[Workload]) -> list[tuple[str, Workload]]:
    out: list[tuple[str, Workload]] = []
    seen: set[str] = set()
    for w in workloads:
        name = base = pod_name(w)
        i = 2
        while name in seen:
            name = f"{base}#{i}"
            i += 1
        seen.add(name)
        out.append((name, w))
    return out


@dataclass(frozen=True)
class _Pool:
    pool: Any  # podfit.platform.NodePool
    type_name: str | None  # the node type's name when workload pods are packed onto it
    labels: Mapping[str, str]
    taints: tuple


def _node_labels(p: Any) -> tuple[tuple[str, str], ...]:
    labels = getattr(p, "node_labels", None)
    return labels if labels is not None else tuple(getattr(p, "labels", ()))


class _Scheduling:
    """Decisions of :func:`podfit.scheduling.decide` for every pool of the run, cached per constraints."""

    def __init__(self, pools: Sequence[_Pool]) -> None:
        self.pools = pools
        self.described = described_keys(p.pool for p in pools)
        self._cache: dict[SchedulingConstraints, tuple[Decision, ...]] = {}

    def decisions(self, c: SchedulingConstraints) -> tuple[Decision, ...]:
        hit = self._cache.get(c)
        if hit is None:
            hit = self._cache[c] = tuple(decide(c, p.labels, p.taints, self.described) for p in self.pools)
        return hit


def _why_not(sched: _Scheduling, decisions: Sequence[Decision]) -> str:
    reasons: dict[str, list[str]] = {}
    for p, d in zip(sched.pools, decisions, strict=True):
        if p.type_name is not None:
            reasons.setdefault(d.reason, []).append(p.type_name)
    if len(reasons) == 1:
        return next(iter(reasons))
    return "; ".join(f"{', '.join(names)}: {why}" for why, names in reasons.items())


def _group_key(term: Any, ns: str, name: str) -> str:
    scope = ns
    if term.namespaces or term.namespace_selector is not None:
        scope = ",".join(term.namespaces)
        if term.namespace_selector is not None:
            scope += f"+namespaces({term.namespace_selector})"
    key = f"{scope}:{term.selector}"
    if term.match_label_keys or term.mismatch_label_keys:
        key += f" keys({','.join(term.match_label_keys)}/{','.join(term.mismatch_label_keys)})"
        if set(term.match_label_keys + term.mismatch_label_keys) & REVISION_KEYS:
            key += f"@{name}"
    return key


class _Index:
    """Workloads by namespace and by (namespace, label, value): a selector's candidates without
    looking at every workload (large inputs have thousands)."""

    def __init__(self, named: Sequence[tuple[str, Workload]]) -> None:
        self.all = [(name, w, w.ref.namespace or "default", dict(w.pod.labels)) for name, w in named]
        self.by_ns: dict[str, list] = {}
        self.by_label: dict[tuple[str, str, str], list] = {}
        for item in self.all:
            self.by_ns.setdefault(item[2], []).append(item)
            for k, v in item[3].items():
                self.by_label.setdefault((item[2], k, v), []).append(item)

    def candidates(self, namespaces: Iterable[str] | None, selector: Any) -> list:
        """Workloads of ``namespaces`` (None: every namespace) that may match ``selector``."""
        if namespaces is None:
            return self.all
        pair = selector.match_labels[0] if selector is not None and selector.match_labels else None
        out: list = []
        for ns in namespaces:
            out.extend(self.by_ns.get(ns, ()) if pair is None else self.by_label.get((ns, *pair), ()))
        return out


def _scope(term: Any, ns: str) -> tuple[str, ...] | None:
    """The namespaces an affinity term may select (None: any)."""
    if term.namespace_selector is not None:
        return None
    return term.namespaces or (ns,)


def _anti_affinity(packed: Sequence[tuple[str, Workload]]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Exclusive groups (name → group) and conflicts (name → names) of the packed workloads."""
    group: dict[str, str] = {}
    pairs: set[tuple[str, str]] = set()
    index = _Index(packed)
    for name, w, ns, labels in index.all:
        for term in w.pod.scheduling.hostname_anti_affinity():
            for other, u, u_ns, u_labels in index.candidates(_scope(term, ns), term.selector):
                if term.matches(ns, labels, u_ns, u_labels, u is w) is not True:
                    continue  # None (namespace labels unknown): not modelled
                if u is w:
                    group.setdefault(name, _group_key(term, ns, name))
                else:
                    pairs.add((min(name, other), max(name, other)))
    conflicts: dict[str, set[str]] = {}
    for a, b in pairs:
        if a in group and group.get(a) == group.get(b):
            continue  # the shared group already keeps them apart
        conflicts.setdefault(a, set()).add(b)
        conflicts.setdefault(b, set()).add(a)
    return group, conflicts


def _port_conflicts(packed: Sequence[tuple[str, Workload]]) -> set[tuple[str, str]]:
    """Pairs of workloads (names, in order) whose pods bind a conflicting host port: they never
    share a node (the scheduler's NodePorts filter). A workload's own pods are kept apart by
    ``PodType.host_ports`` (one pod per node)."""
    by_port: dict[tuple[int, str], list[tuple[str, HostPort]]] = {}
    for name, w in packed:
        for hp in w.pod.host_ports:
            by_port.setdefault((hp.port, hp.protocol), []).append((name, hp))
    pairs: set[tuple[str, str]] = set()
    for binders in by_port.values():
        for i, (a, pa) in enumerate(binders):
            for b, pb in binders[i + 1 :]:
                if a != b and pa.conflicts(pb):
                    pairs.add((min(a, b), max(a, b)))
    return pairs


@dataclass(frozen=True)
class _Daemons:
    """How a workload's pods stand to the DaemonSets' pods (see :class:`PodType` ``avoids`` /
    ``needs``), with the reasons in words."""

    avoids: tuple[str, ...]
    needs: tuple[tuple[str, ...], ...]
    reasons: tuple[str, ...]

    def why(self, pools: Sequence[str]) -> str:
        return f"{'; '.join(self.reasons)} (node pools it may use: {', '.join(pools)})"


class _DaemonPods:
    """A DaemonSet's pods as :func:`_daemon_relations` compares them (labels, ports, terms)."""

    def __init__(self, d: DaemonPod, w: Workload) -> None:
        self.d = d
        self.ns = w.ref.namespace or "default"
        self.labels = dict(w.pod.labels)
        self.ports = w.pod.host_ports
        self.anti = w.pod.scheduling.hostname_anti_affinity()


def _daemon_relations(
    w: Workload,
    daemons: Sequence[_DaemonPods],
    others: Sequence[tuple[str, Workload]],
    unsure: set[str],
) -> _Daemons:
    """The DaemonSets whose nodes ``w``'s pods cannot use — a host port both bind, required pod
    anti-affinity on hostname either declares against the other — and, per required pod affinity
    term on hostname that selects DaemonSet pods and no pod of another workload (``others``), the
    DaemonSets one of which must run on the node. A term whose DaemonSets' placement is unknown on
    some pool (``unsure``) is not modelled."""
    ns, labels = w.ref.namespace or "default", dict(w.pod.labels)
    own_anti = w.pod.scheduling.hostname_anti_affinity()
    avoids: dict[str, str] = {}
    for x in daemons:
        name = x.d.name
        ports = [hp for hp in w.pod.host_ports if any(hp.conflicts(q) for q in x.ports)]
        if ports:
            avoids.setdefault(
                name, f"hostPort {', '.join(map(str, ports))} is bound by {name} on every node it runs on"
            )
        elif any(t.matches(ns, labels, x.ns, x.labels, False) is True for t in own_anti):
            avoids.setdefault(
                name, f"required pod anti-affinity against {name}, whose pods run on every node it runs on"
            )
        elif any(t.matches(x.ns, x.labels, ns, labels, False) is True for t in x.anti):
            avoids.setdefault(name, f"{name}'s required pod anti-affinity selects these pods")
    needs: list[tuple[str, ...]] = []
    reasons = list(avoids.values())
    for t in w.pod.scheduling.pod_affinity:
        if t.topology_key != HOSTNAME:
            continue
        chosen = tuple(sorted(x.d.name for x in daemons if t.matches(ns, labels, x.ns, x.labels, False) is True))
        if not chosen or set(chosen) & unsure:
            continue
        if any(
            t.matches(ns, labels, o.ref.namespace or "default", dict(o.pod.labels), o is w) is not False
            for _, o in others
        ):
            continue  # a pod of a workload may satisfy it too: not modelled
        needs.append(chosen)
        reasons.append(f"required pod affinity to the pods of {' or '.join(chosen)}")
    return _Daemons(tuple(sorted(avoids)), tuple(needs), tuple(reasons))


def _spread_cap(
    name: str, w: Workload, decisions: Sequence[Decision], sched: _Scheduling, everyone: _Index
) -> int | None:
    caps = []
    labels = dict(w.pod.labels)
    ns = w.ref.namespace or "default"
    for s in w.pod.scheduling.hostname_spread():
        if not s.matches(labels, labels, True):
            continue  # the constraint does not count this workload's pods: no cap on them
        domains = [
            i
            for i, (p, d) in enumerate(zip(sched.pools, decisions, strict=True))
            if (s.node_affinity_policy != "Honor" or d.selected is True)
            and (s.node_taints_policy != "Honor" or d.tolerated)
        ]
        n = sum(sched.pools[i].pool.count for i in domains)
        if n <= 0:
            continue
        matching = [
            u for _, u, _, u_labels in everyone.candidates((ns,), s.selector) if s.matches(labels, u_labels, u is w)
        ]
        total = sum(n if u.per_node else max(u.replicas, 0) for u in matching)
        # a domain none of the counted pods can run on stays at 0: the global minimum is 0
        empty = any(all(sched.decisions(u.pod.scheduling)[i].answer == NO for u in matching) for i in domains)
        if empty or (s.min_domains is not None and n < s.min_domains):
            caps.append(s.max_skew)
        else:
            caps.append(max(1, (total + (n - 1) * s.max_skew) // n))
    return min(caps) if caps else None


ZONE = "topology.kubernetes.io/zone"


def _zone_parts(
    pod: PodType, w: Workload, decisions: Sequence[Decision], sched: _Scheduling, everyone: _Index
) -> list[PodType] | None:
    """``DoNotSchedule`` topology spreads over zones, as necessary conditions on each zone's count.

    The domains of a constraint are the zones of the worker pools it counts (node affinity honoured
    unless ``nodeAffinityPolicy: Ignore``, taints only under ``nodeTaintsPolicy: Honor``). The
    scheduler places a pod in zone z only if count(z) + 1 − min ≤ maxSkew, min being the least
    count over the domains, so once N pods are placed over Z domains with maxSkew s no two zones
    differ by more than s: each holds at least ⌈(N − (Z − 1)·s) / Z⌉ and at most
    ⌊(N + (Z − 1)·s) / Z⌋. When a domain can hold none of them (no pool of it the pods may use) or
    there are fewer domains than ``minDomains``, the minimum stays 0 and each zone holds at most s.
    Several constraints combine (the largest least, the smallest most).

    The pod type becomes a part of the least each zone must hold, bound to that zone's pools
    (``<name>@<zone>``), and the rest under its own name with ``pool_caps``: per zone, the most
    less the least. With N = 4 over 2 zones and maxSkew 1, 2 + 2, never 4 + 0. A constraint is not
    modelled (no cap, never a misfit it does not prove) when its selector counts other workloads'
    pods too or a domain pool has no zone label; the least is not split off (only the caps stay)
    when the pod type binds host ports or conflicts with others by name. None: nothing to model."""
    if pod.pools is None:
        return None
    labels = dict(w.pod.labels)
    ns = w.ref.namespace or "default"
    n = pod.count
    least: dict[str, int] = {}
    most: dict[str, int] = {}
    usable: dict[str, list[str]] = {}
    for s in w.pod.scheduling.spread:
        if s.topology_key != ZONE or s.when_unsatisfiable != "DoNotSchedule":
            continue
        if not s.matches(labels, labels, True):
            continue
        counted = [
            u for _, u, _, u_labels in everyone.candidates((ns,), s.selector) if s.matches(labels, u_labels, u is w)
        ]
        if any(u is not w for u in counted):
            continue  # other workloads' pods count too: not modelled
        zones: dict[str, list[str]] = {}
        known = True
        for pl, d in zip(sched.pools, decisions, strict=True):
            if pl.pool.count <= 0 or getattr(pl.pool, "role", "worker") == "control-plane":
                continue
            if (s.node_affinity_policy == "Honor" and d.selected is not True) or (
                s.node_taints_policy == "Honor" and not d.tolerated
            ):
                continue  # not a domain
            zone = pl.labels.get(ZONE)
            if not zone:
                known = False  # a domain of unknown zone
                break
            here = zones.setdefault(zone, [])
            if pl.type_name is not None and pl.type_name in pod.pools:
                here.append(pl.type_name)
        if not known or len(zones) < 2:
            continue  # one zone holds every pod whatever the skew
        z, skew = len(zones), s.max_skew
        if any(not here for here in zones.values()) or (s.min_domains is not None and z < s.min_domains):
            low, high = 0, skew  # the global minimum stays 0
        else:
            high = (n + (z - 1) * skew) // z
            low = max(0, -(-(n - (z - 1) * skew) // z), n - (z - 1) * high)
        for zone, here in zones.items():
            if here:
                usable[zone] = here
                least[zone] = max(least.get(zone, 0), low)
                most[zone] = min(most.get(zone, n), high)
    if not usable:
        return None
    for zone in usable:
        least[zone] = min(least[zone], most[zone])
    if sum(least.values()) > n or pod.conflicts or pod.host_ports:
        least = dict.fromkeys(usable, 0)
    caps = tuple(
        (tuple(usable[zone]), most[zone] - least[zone])
        for zone in sorted(usable)
        if most[zone] - least[zone] < n - sum(least.values())
    )
    parts = [
        dataclasses.replace(pod, name=f"{pod.name}@{zone}", count=least[zone], pools=tuple(usable[zone]))
        for zone in sorted(usable)
        if least[zone] > 0
    ]
    if not parts and not caps:
        return None
    rest = n - sum(least.values())
    return parts + ([dataclasses.replace(pod, count=rest, pool_caps=caps)] if rest or not parts else [])


def pods_from_workloads(
    workloads: Iterable[Workload], pools: Sequence[NodeType] = ()
) -> tuple[tuple[PodType, ...], tuple[DaemonPod, ...], dict[str, Workload]]:
    """Pod types and DaemonSet pods for workloads onto node types that carry their labels already
    (no taints, nothing unknown); :func:`inputs_from` is the whole story with node pools."""
    sched_pools = [_Pool(_Count(t.count, tuple(t.labels)), t.name, dict(t.labels), ()) for t in pools]
    plan = _plan(_names(workloads), _Scheduling(sched_pools))
    return plan.pods, plan.daemons, plan.by_name


@dataclass(frozen=True)
class _Count:
    count: int
    labels: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class _Plan:
    pods: tuple[PodType, ...]
    daemons: tuple[DaemonPod, ...]
    by_name: dict[str, Workload]
    unknown: tuple[UnknownPods, ...]
    control_plane_only: tuple[str, ...]
    unschedulable: dict[str, str]
    idle: tuple[PodType, ...] = ()
    extended: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    daemon_lacking: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def extended_requests(w: Workload) -> dict[str, int]:
    """The extended resources (``nvidia.com/gpu``, …) one pod of ``w`` asks for, as Kubernetes
    combines containers: max(Σ app containers and sidecars, each one-shot init container with the
    sidecars declared before it). A container's request is its limit when it sets only the limit
    (extended resources cannot be overcommitted: request = limit). Values that are not whole
    quantities are left out (the API server rejects them; they are PF903)."""
    path = WORKLOAD_KINDS.get(w.obj.kind)
    node: Any = w.obj.raw
    for key in path or ():
        node = node.get(key) if isinstance(node, Mapping) else None
    spec = node.get("spec") if isinstance(node, Mapping) else None
    if not isinstance(spec, Mapping):
        return {}

    def own(c: Any) -> dict[str, int]:
        res = c.get("resources") if isinstance(c, Mapping) else None
        if not isinstance(res, Mapping):
            return {}
        out: dict[str, int] = {}
        for kind in ("limits", "requests"):  # the request wins where both are set
            values = res.get(kind)
            for name, v in values.items() if isinstance(values, Mapping) else ():
                if is_extended_resource(str(name)):
                    try:
                        out[str(name)] = parse_memory(v)
                    except QuantityError:
                        continue
        return out

    def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
        return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}

    inits = [c for c in _list(spec.get("initContainers")) if isinstance(c, Mapping)]
    total: dict[str, int] = {}
    for c in _list(spec.get("containers")):
        total = add(total, own(c))
    sidecars: dict[str, int] = {}
    for c in inits:
        if c.get("restartPolicy") == "Always":
            sidecars = add(sidecars, own(c))
            total = add(total, own(c))
        else:
            here = add(own(c), sidecars)
            total = {k: max(total.get(k, 0), here.get(k, 0)) for k in total.keys() | here.keys()}
    return {k: v for k, v in total.items() if v > 0}


def pool_extended(pool) -> tuple[tuple[str, int], ...] | None:
    """The extended resources each node of ``pool`` offers; None where the pool does not say what
    its nodes offer (no ``allocatable``), which is not taken for "none"."""
    return tuple(getattr(pool, "extended", ())) if getattr(pool, "allocatable", None) else None


def _extended_offer(sched: _Scheduling) -> dict[str, dict[str, int] | None]:
    """Node type name → the extended resources each of its nodes offers; None where the pool does
    not say what its nodes offer (no ``allocatable``: a TanzuKubernetesCluster's pool, a profile's
    pool written without it), which is not taken for "none"."""
    return {
        pl.type_name: dict(getattr(pl.pool, "extended", ())) if getattr(pl.pool, "allocatable", None) else None
        for pl in sched.pools
        if pl.type_name is not None
    }


_UNKNOWN_CAP = 2**31 - 1  # a pool that does not state its extended resources limits nothing


def _extended_cap(need: Mapping[str, int], offer: Mapping[str, int] | None) -> int:
    """How many pods needing ``need`` one node offering ``offer`` holds (by extended resources)."""
    if offer is None:
        return _UNKNOWN_CAP
    return min(offer.get(r, 0) // v for r, v in need.items())


def _extended_conflicts(
    needs: Mapping[str, dict[str, int]],
    fits: Mapping[str, tuple[str, ...]],
    offer: Mapping[str, dict[str, int] | None],
) -> set[tuple[str, str]]:
    """Pairs of pod types asking for extended resources that no node they may both use can hold one
    pod of each."""
    out = set()
    names = sorted(needs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            common = set(fits.get(a, ())) & set(fits.get(b, ()))
            both = {r: needs[a].get(r, 0) + needs[b].get(r, 0) for r in needs[a].keys() | needs[b].keys()}
            if common and all(
                (o := offer[t]) is not None and any(o.get(r, 0) < v for r, v in both.items()) for t in common
            ):
                out.add((a, b))
    return out


def _plan(named: Sequence[tuple[str, Workload]], sched: _Scheduling) -> _Plan:
    by_name = dict(named)
    daemons: list[DaemonPod] = []
    unknown: dict[tuple[str, ...], list[str]] = {}
    cp_only: list[str] = []
    unschedulable: dict[str, str] = {}
    packed: list[tuple[str, Workload, tuple[Decision, ...], tuple[str, ...]]] = []
    offer = _extended_offer(sched)
    needs: dict[str, dict[str, int]] = {}  # extended resources each pod type asks for
    daemon_lacking: dict[str, tuple[str, ...]] = {}  # DaemonSet → pools whose nodes lack what its pods ask for
    for name, w in named:
        if not w.per_node and w.replicas <= 0 and not (w.autoscaler and w.autoscaler.max_replicas > 0):
            continue  # no pod (an autoscaled workload at 0 is kept: its scale-out is PF606's)
        ds = sched.decisions(w.pod.scheduling)
        fits = tuple(
            p.type_name for p, d in zip(sched.pools, ds, strict=True) if p.type_name is not None and d.answer == FITS
        )
        unknown_here = [
            d for p, d in zip(sched.pools, ds, strict=True) if p.type_name is not None and d.answer == UNKNOWN
        ]
        if unknown_here:
            keys = tuple(sorted({k for d in unknown_here for k in d.unknown_keys}))
            unknown.setdefault(keys, []).append(name)
        p = w.pod
        if w.per_node:
            need = extended_requests(w)
            if need:  # its pods run only where a node offers what they ask for; elsewhere they stay Pending
                lacking = tuple(t for t in fits if _extended_cap(need, offer[t]) == 0)
                if lacking:
                    daemon_lacking[name] = lacking
                    fits = tuple(t for t in fits if t not in lacking)
            daemons.append(
                DaemonPod(
                    name, p.cpu_request, p.memory_request, p.storage_request, (), fits, tuple(sorted(need.items()))
                )
            )
            continue
        if unknown_here:
            continue
        need = extended_requests(w)
        if need:
            needs[name] = need
            offered = tuple(t for t in fits if _extended_cap(need, offer[t]) > 0)
            if fits and not offered:
                asked = ", ".join(f"{v} {r}" for r, v in sorted(need.items()))
                unschedulable[name] = f"no node pool it may use offers {asked} per node"
            fits = offered
        if not fits and name not in unschedulable:
            if any(
                pl.type_name is None and getattr(pl.pool, "role", "") == "control-plane" and d.answer == FITS
                for pl, d in zip(sched.pools, ds, strict=True)
            ):
                cp_only.append(name)
                continue
            unschedulable[name] = _why_not(sched, ds)
        packed.append((name, w, ds, fits))
    group, conflicts = _anti_affinity([(name, w) for name, w, _, _ in packed])
    for a, b in _extended_conflicts(needs, {name: fits for name, _, _, fits in packed}, offer):
        conflicts.setdefault(a, set()).add(b)
        conflicts.setdefault(b, set()).add(a)
    for a, b in _port_conflicts([(name, w) for name, w, _, _ in packed]):
        conflicts.setdefault(a, set()).add(b)
        conflicts.setdefault(b, set()).add(a)
    ds_workloads = [_DaemonPods(d, by_name[d.name]) for d in daemons]
    ds_terms = any(x.anti for x in ds_workloads)
    unsure = {name for names in unknown.values() for name in names}  # DaemonSets not known to run everywhere
    others = [(name, w) for name, w in named if not w.per_node and w.replicas > 0]
    between: dict[str, _Daemons] = {}
    for name, w, _, fits in packed:
        c = w.pod.scheduling
        if not ds_workloads or not (w.pod.host_ports or c.anti_affinity or c.pod_affinity or ds_terms):
            continue  # nothing relates it to a DaemonSet's pods
        rel = _daemon_relations(w, ds_workloads, others, unsure)
        if rel.avoids or rel.needs:
            between[name] = rel
            if fits and name not in unschedulable:
                runs = {pool: {d.name for d in daemons if d.pools is None or pool in d.pools} for pool in fits}
                probe = PodType(name, 0, 0, avoids=rel.avoids, needs=rel.needs)
                if not any(probe.daemons_allow(here) for here in runs.values()):
                    unschedulable[name] = rel.why(fits)
    # only built when some workload spreads (and so never None where _spread_cap needs it)
    everyone = _Index(named) if any(w.pod.scheduling.spread for _, w, _, _ in packed) else None
    pods = []
    for name, w, ds, fits in packed:
        p = w.pod
        pods.append(
            PodType(
                name=name,
                cpu=p.cpu_request,
                memory=p.memory_request,
                count=w.replicas,
                storage=p.storage_request,
                cpu_limit=p.cpu_limit,
                memory_limit=p.memory_limit,
                exclusive_group=group.get(name),
                max_per_node=_min_cap(
                    _spread_cap(name, w, ds, sched, everyone) if everyone is not None and p.scheduling.spread else None,
                    _known_cap(min((_extended_cap(needs[name], offer[t]) for t in fits), default=None))
                    if name in needs
                    else None,
                ),
                node_selector=p.node_selector,
                pools=fits,
                conflicts=tuple(sorted(conflicts.get(name, ()))),
                host_ports=tuple((hp.ip, hp.port, hp.protocol) for hp in p.host_ports),
                avoids=between[name].avoids if name in between else (),
                needs=between[name].needs if name in between else (),
                extended=tuple(sorted(needs.get(name, {}).items())),
            )
        )
        if everyone is not None and p.scheduling.spread and w.autoscaler is None:
            parts = _zone_parts(pods[-1], w, ds, sched, everyone)
            if parts:
                pods[-1:] = parts
                by_name.update((part.name, w) for part in parts)
    return _Plan(
        tuple(p for p in pods if p.count > 0),
        tuple(daemons),
        by_name,
        tuple(UnknownPods(k, tuple(v)) for k, v in sorted(unknown.items())),
        tuple(cp_only),
        unschedulable,
        tuple(p for p in pods if p.count == 0),
        needs,
        daemon_lacking,
    )


def _known_cap(cap: int | None) -> int | None:
    return None if cap == _UNKNOWN_CAP else cap


def _min_cap(*caps: int | None) -> int | None:
    known = [c for c in caps if c is not None]
    return min(known) if known else None


def vm_classes(platform) -> tuple[VMClass, ...]:
    """The platform's whole VM class catalogue as packing's classes (what a pool's class is)."""
    return _as_packing(platform.vm_classes)


def _as_packing(classes) -> tuple[VMClass, ...]:
    return tuple(VMClass(c.name, c.cpus * 1000, c.memory_bytes) for c in classes)


def _worker_names(node_pools, classes: Sequence[VMClass]) -> tuple[list[str | None], tuple[str, ...]]:
    """Per pool: its node type's name (None for control planes, empty pools other than those that
    scale from zero, and unknown classes); and the VM class names the catalogue lacks."""
    by_name = {c.name for c in classes}
    names: list[str | None] = []
    unknown: list[str] = []
    used: set[str] = set()
    clusters = {getattr(q, "cluster", "") for q in node_pools}
    for i, p in enumerate(node_pools):
        if getattr(p, "role", "worker") == "control-plane" or (p.count <= 0 and not _standby(p)):
            names.append(None)
            continue
        if p.vm_class not in by_name:
            unknown.append(p.vm_class)
            names.append(None)
            continue
        name = p.name or f"pool-{i}"
        if getattr(p, "cluster", "") and len(clusters) > 1:
            name = f"{p.cluster}/{name}"
        while name in used:
            name += "'"
        used.add(name)
        names.append(name)
    return names, tuple(unknown)


def pools_to_node_types(
    node_pools,
    classes: Sequence[VMClass],
    *,
    overhead: Overhead,
    daemons: Sequence[DaemonPod],
    max_pods: int,
    sources: dict[str, NodePool] | None = None,
) -> tuple[tuple[NodeType, ...], tuple[str, ...]]:
    """Worker node pools → node types; returns also the VM class names the catalogue lacks."""
    by_name = {c.name: c for c in classes}
    names, unknown = _worker_names(node_pools, classes)
    out: list[NodeType] = []
    for p, name in zip(node_pools, names, strict=True):
        if name is None:
            continue
        if sources is not None:
            sources[name] = p
        vc = by_name[p.vm_class]
        ov, mp = _pool_overhead(p, vc, overhead, max_pods)
        out.append(
            node_type(
                name,
                vc,
                p.count,
                labels=_node_labels(p),
                overhead=ov,
                daemons=daemons,
                max_pods=mp,
                extended=pool_extended(p),
            )
        )
    return tuple(out), unknown


def _pool_overhead(pool, vc: VMClass, overhead: Overhead, max_pods: int) -> tuple[Overhead, int]:
    """The overhead and pod slots of one pool's nodes: the platform's, or, when the pool gives the
    kubelet's allocatable (an imported cluster), the VM class less allocatable plus the system pods
    already there."""
    alloc = getattr(pool, "allocatable", None)
    if alloc is None:
        return overhead, max_pods
    sys_cpu, sys_mem, sys_pods = getattr(pool, "system_pods", (0, 0, 0))
    pods = max_pods if alloc[2] is None else alloc[2]
    return Overhead(vc.cpu - alloc[0] + sys_cpu, vc.memory - alloc[1] + sys_mem), pods - sys_pods


def family_of(pools: Sequence[NodeType]) -> str | None:
    """``best-effort-`` or ``guaranteed-`` when every pool uses classes of that family."""
    for prefix in ("best-effort-", "guaranteed-"):
        if pools and all(p.vm_class.startswith(prefix) for p in pools):
            return prefix
    return None


def inputs_from(
    workloads: Iterable[Workload],
    platform,
    node_pools=None,
    *,
    overhead: Overhead | None = None,
    max_pods: int | None = None,
) -> PackInputs:
    """Packing inputs from workloads and a :class:`podfit.platform.Platform`.

    ``node_pools`` defaults to the platform's; the caller adds pools from cluster manifests or the
    command line. ``overhead`` / ``max_pods`` default to the platform's.
    """
    from ..platform import instance_classes, sizing_classes

    workloads = tuple(workloads)
    ov = overhead or Overhead(platform.overhead_cpu, platform.overhead_memory)
    mp = platform.kubelet.max_pods if max_pods is None else max_pods
    pools_in = tuple(platform.node_pools if node_pools is None else node_pools)
    # a pool's class is looked up here (a cloud pool's: its instance type); sizing weighs
    # sizing_classes and the instance types the pools use
    cloud = tuple(c for c in instance_classes(pools_in) if platform.vm_class(c.name) is None)
    catalogue = vm_classes(platform) + _as_packing(cloud)
    names, _ = _worker_names(pools_in, catalogue)
    sched = _Scheduling(
        [
            _Pool(p, name, dict(_node_labels(p)), tuple(getattr(p, "node_taints", ())))
            for p, name in zip(pools_in, names, strict=True)
            if p.count > 0 or _standby(p)
        ]
    )
    plan = _plan(_names(workloads), sched)
    sources: dict[str, NodePool] = {}
    every, unknown = pools_to_node_types(
        pools_in, catalogue, overhead=ov, daemons=plan.daemons, max_pods=mp, sources=sources
    )
    pools = tuple(n for n in every if n.count > 0)
    kinds = {name: kind for name, w in plan.by_name.items() if (kind := run_kind(w))}
    by_class = {c.name: c for c in catalogue}
    class_overheads: dict[str, tuple[Overhead, int]] = {}
    for p in pools_in:
        vc = by_class.get(p.vm_class)
        if (p.count <= 0 and not _standby(p)) or vc is None or getattr(p, "allocatable", None) is None:
            continue
        o, slots = _pool_overhead(p, vc, ov, mp)
        seen = class_overheads.get(p.vm_class)
        if seen is not None:  # two pools of one class: the larger overhead, the fewer slots
            o, slots = Overhead(max(o.cpu, seen[0].cpu), max(o.memory, seen[0].memory)), min(slots, seen[1])
        class_overheads[p.vm_class] = (o, slots)
    class_extended: dict[str, dict[str, int]] = {}
    for p in pools_in:
        offer = pool_extended(p)
        if (p.count <= 0 and not _standby(p)) or offer is None:
            continue
        seen_offer = class_extended.get(p.vm_class)
        here = dict(offer)
        class_extended[p.vm_class] = (
            here if seen_offer is None else {r: min(v, here[r]) for r, v in seen_offer.items() if r in here}
        )
    reserved = _reserved_pods(pools_in, names)
    pods, rtc = _peak_group(reserved + plan.pods, kinds, pools)
    return PackInputs(
        pods,
        plan.daemons,
        pools,
        _as_packing(sizing_classes(platform, pools_in) + cloud),
        ov,
        mp,
        platform.numa_node_cores,
        platform.numa_node_memory,
        family_of(pools),
        plan.by_name,
        unknown,
        sources,
        plan.unknown,
        plan.control_plane_only,
        plan.unschedulable,
        run_to_completion=rtc,
        class_overheads=class_overheads,
        idle=plan.idle,
        reserved=tuple(p.name for p in reserved),
        extended=plan.extended,
        daemon_lacking=plan.daemon_lacking,
        class_extended={c: tuple(sorted(o.items())) for c, o in class_extended.items()},
        standby=tuple(n for n in every if n.count == 0),
    )


def _standby(pool) -> bool:
    """A worker pool at 0 nodes that its cluster autoscaler may grow (scale from zero)."""
    return pool.count <= 0 and (getattr(pool, "max_count", None) or 0) > 0


def _reserved_pods(node_pools, names: Sequence[str | None]) -> tuple[PodType, ...]:
    """The worker pools' reserved pods as pod types bound to their pool (see the module docstring)."""
    return tuple(
        PodType(f"reserved/{name}/{r[0]}", r[2], r[3], count=r[1], pools=(name,))
        for p, name in zip(node_pools, names, strict=True)
        if name is not None and p.count > 0  # a pool at 0 nodes runs none of them
        for r in getattr(p, "reserved_pods", ())
        if r[1] > 0
    )
