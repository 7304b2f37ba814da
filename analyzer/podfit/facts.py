"""The facts stage: what every rule reads, computed once.

``build_facts(objects, platform, cluster, cluster_for_path)`` is a pure function from the loaded
objects, the Platform profile, ``--cluster`` and the config's ``clusters:`` mapping to a frozen
:class:`Facts`: the workloads with every Kubernetes defaulting applied (LimitRange defaults,
request = limit, sidecar init containers, pod overhead), the node pools of the platform and of the
cluster manifests in the input, their VM classes, the hosts' NUMA node size, the logical CPUs of
the nodes pods land on, and the cluster each object deploys to (:class:`ClusterScope`).

Clusters. Rules over several objects (packing, PF303, PF5xx, PF701) look at one cluster at a time.
The cluster of an object is, first that applies:

1. ``--cluster NAME``: every object;
2. the config's ``clusters: {glob: name}``: the first pattern matching the object's file;
3. a TanzuKubernetesCluster / Cluster API ``Cluster`` manifest: a cluster manifest belongs to the
   cluster it declares; any other object to the cluster declared in its own file, else in the
   nearest directory above it holding cluster manifests (a file or directory declaring several
   clusters decides nothing);
4. the platform, when the profile describes one Kubernetes cluster (it has node pools, or its
   runtime is ``bare-metal`` or ``vsphere-pods``): named after its node pools' one ``cluster``, else
   the profile's name;
5. the one cluster the input's manifests declare, if exactly one; else the unnamed cluster ""
   (the whole input taken as one cluster).

A cluster whose name a TanzuKubernetesCluster / Cluster API manifest of the input declares is a
guest cluster (``ClusterScope.guest``): its workloads run on its node VMs, never as vSphere Pods,
even when the platform's runtime is ``vsphere-pods`` (the Supervisor): ``ClusterScope.runtime`` is
then ``tkg``, and the vSphere Pod rules and CRX sizing leave its workloads out.

Node pools: a cluster manifest's pools belong to the cluster it declares; a platform pool to the
cluster it names, else to the platform's cluster (when no object is in it: to the one cluster of the
run that no cluster manifest declares, if there is one). A cluster that none of them reach has no pools
(the packing rules skip it), except when the run is one cluster named by ``--cluster``, by nothing,
or by the platform: that cluster gets every pool of the run.

Within a cluster, the same API group/kind/namespace/name twice is one object applied twice (the
version of the apiVersion does not matter, the namespace is compared as written): the second
replaces the first. The first counts (``ClusterScope.objects``/``workloads``), the pair is
listed in ``ClusterScope.duplicates`` (PF910 reports it).

Python rules read the :class:`Facts` directly. Rego rules read the same facts as ``data.podfit``,
serialised by :func:`facts_data`; ``podfit platform-data`` writes exactly that document for plain
conftest. The Rego library derives none of these facts itself: it only parses the quantities of the
object it is given, which per-object conftest use needs without podfit.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

from . import kubelet_options, kubeversions, schemas_k8s
from .clusters import cluster_objects, node_pools_from_objects, pool_objects
from .findings import Finding
from .loader import STDIN_NAME
from .model import CustomWorkloadKind, K8sObject, Location, ObjectRef, Workload
from .platform import NodePool, Platform, VMClass
from .scheduling import BETA_OS, NO, NO_CONSTRAINTS, OS, SchedulingConstraints, decide, described_keys
from .scheduling import _node_requirement as node_requirement
from .workloads import (
    LimitRangeConstraint,
    LimitRangeDefaults,
    build_workloads,
    limit_range_constraints,
    limit_range_defaults,
)

if TYPE_CHECKING:  # podfit.usage is imported only by a run with measured usage
    from .model import Container
    from .usage import Series, UsageFacts

__all__ = [
    "Facts",
    "ClusterScope",
    "build_facts",
    "facts_data",
    "missing_fact",
    "REQUIREMENTS",
    "CFS_PERIOD_US",
    "CFS_SLICE_US",
    "cfs_screen_limit",
    "cfs_slices",
    "KubeletFacts",
    "kubelet_facts",
    "is_kubelet_configuration",
    "parse_version",
    "linux_excluded",
    "CPU_MANAGER_OPTIONS",
    "CPU_MANAGER_OPTION_CONFLICTS",
    "OPTION_GATES",
    "cpu_manager_option_stage",
]

# CFS bandwidth control as the nodes' kernels run it: the defaults of cpu.cfs_period_us (the
# kubelet sets no other) and of the sched_cfs_bandwidth_slice_us sysctl. The one home of both: the
# throttling simulator, PF203 and (through facts_data) PF202 read them from here.
CFS_PERIOD_US = 100_000
CFS_SLICE_US = 5_000


def cfs_slices(limit_millicores: int, period_us: int = CFS_PERIOD_US) -> int:
    """Whole CFS slices in one period's quota of a CPU limit (quota = limit × period)."""
    return limit_millicores * period_us // (CFS_SLICE_US * 1000)


def cfs_screen_limit(cpus: int, period_us: int = CFS_PERIOD_US) -> int:
    """PF202's screen on nodes of ``cpus`` logical CPUs: the smallest CPU limit (millicores) whose
    quota holds one slice per logical CPU (limit × period ≥ cpus × slice). A lower limit has fewer
    slices per period than the node has CPUs to run its threads: they can be throttled while
    quota sits unused on other CPUs. ``period_us``: the kubelet's cpuCFSQuotaPeriod."""
    return -(-cpus * CFS_SLICE_US * 1000 // period_us)


_DURATION = re.compile(r"^(?:(\d+)(?:\.(\d+))?(ns|us|µs|ms|s|m|h))+$")
_UNIT_US = {"ns": 0.001, "us": 1, "µs": 1, "ms": 1000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000}


def duration_us(text: object) -> int | None:
    """A Go duration ("100ms", "1.5ms", "1m30s") in whole microseconds; None when it is not one."""
    if not isinstance(text, str) or not _DURATION.match(text):
        return None
    total = Fraction(0)
    for whole, frac, unit in re.findall(r"(\d+)(?:\.(\d+))?(ns|us|µs|ms|s|m|h)", text):
        value = Fraction(int(whole)) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
        total += value * Fraction(_UNIT_US[unit]).limit_denominator(1000)
    return int(total)


# Kubelet feature gates and CPU Manager options by release: the one table is podfit.kubeversions;
# these are views of it in the shapes the rules read.
DISABLE_CPU_QUOTA_WITH_EXCLUSIVE_CPUS = "DisableCPUQuotaWithExclusiveCPUs"
CUSTOM_CFS_PERIOD_GATE = "CustomCPUCFSQuotaPeriod"  # a cpuCFSQuotaPeriod other than 100ms needs it on
DRA_NODE_ALLOCATABLE = "DRANodeAllocatableResources"
NODE_SWAP = "NodeSwap"  # memorySwap.swapBehavior is read (and may be set at all) with it on
# CPU Manager static policy options: (first version, stage) steps. The kubelet refuses to start on an
# unknown option, on an alpha one unless CPUManagerPolicyAlphaOptions is on (off by default), on a
# beta one when CPUManagerPolicyBetaOptions is off (on by default), and on the pairs below.
CPU_MANAGER_OPTIONS: Mapping[str, tuple[tuple[tuple[int, int], str], ...]] = {
    name: tuple((s.since, s.stage) for s in entry.steps) for name, entry in kubeversions.CPU_MANAGER_OPTIONS.items()
}
CPU_MANAGER_OPTION_CONFLICTS: tuple[tuple[str, str], ...] = (
    ("full-pcpus-only", "distribute-cpus-across-cores"),
    ("distribute-cpus-across-numa", "distribute-cpus-across-cores"),
    ("prefer-align-cpus-by-uncorecache", "distribute-cpus-across-cores"),
    ("prefer-align-cpus-by-uncorecache", "distribute-cpus-across-numa"),
)
OPTION_GATES = {
    stage: (gate, kubeversions.FEATURE_GATES[gate].steps[-1].default)
    for stage, gate in (("alpha", "CPUManagerPolicyAlphaOptions"), ("beta", "CPUManagerPolicyBetaOptions"))
}


def cpu_manager_option_stage(name: str, version: tuple[int, int] | None) -> str | None:
    """ "alpha", "beta", "GA" for the version (the latest stage when the version is unknown), "absent"
    before the option existed, None for a name the kubelet does not know (podfit.kubelet_options)."""
    return kubelet_options.option_stage(kubelet_options.CPU_MANAGER, name, version)


def parse_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of a Kubernetes version as written ("1.33", "v1.33.2+vmware.1"); None if not one."""
    try:
        return schemas_k8s.parse_version(text)
    except schemas_k8s.SchemaError:
        return None


@dataclass(frozen=True)
class KubeletFacts:
    """What the run knows of the kubelet on the nodes.

    ``cpu_manager_policy``: "none" or "static", or None when nothing states it (the kubelet's
    default, "none", is then assumed by :attr:`policy`). It comes from a KubeletConfiguration among
    the inputs, else the platform's ``spec.kubelet.cpuManagerPolicy``; ``policy_source`` says which.
    ``version``: the nodes' Kubernetes version, from the platform's ``spec.kubelet.kubernetesVersion``,
    else the one version the input's TanzuKubernetesCluster / Cluster API Cluster manifests give.
    ``feature_gates``: a KubeletConfiguration's, else the platform's.
    """

    cpu_manager_policy: str | None = None
    cpu_manager_policy_options: tuple[tuple[str, str], ...] = ()
    feature_gates: tuple[tuple[str, bool], ...] = ()
    version: tuple[int, int] | None = None
    policy_source: str = ""
    version_source: str = ""
    topology_manager_policy: str = "none"  # a KubeletConfiguration's topologyManagerPolicy
    topology_manager_scope: str = "container"
    memory_manager_policy: str = "None"
    # cpuCFSQuota (false: the kubelet sets no CFS quota, so CPU limits throttle nothing) and
    # cpuCFSQuotaPeriod (the CFS period its quotas use), from a KubeletConfiguration
    cfs_quota: bool = True
    cfs_period_us: int = CFS_PERIOD_US
    # a cpuCFSQuotaPeriod other than the default without the CustomCPUCFSQuotaPeriod gate on: the
    # kubelet refuses to start (ValidateKubeletConfiguration), so cfs_period_us stays the default
    cfs_period_refused_us: int | None = None
    topology_manager_policy_options: tuple[tuple[str, str], ...] = ()  # a KubeletConfiguration's
    # a KubeletConfiguration's memorySwap.swapBehavior; None when none states it (the kubelet's
    # default, NoSwap: no container swaps, whatever swap the node has)
    swap_behavior: str | None = None

    @property
    def limited_swap(self) -> bool:
        """memorySwap.swapBehavior LimitedSwap with the NodeSwap gate on (GA 1.34): on nodes with
        swap and cgroup v2, the containers of Burstable pods (not critical) whose memory request
        differs from their limit may swap, each up to its request's share of the node's swap
        (pkg/kubelet/kuberuntime/kuberuntime_container_linux.go GetContainerSwapBehavior)."""
        return self.effective_swap_behavior == "LimitedSwap" and self.feature(NODE_SWAP) is not False

    @property
    def effective_swap_behavior(self) -> str:
        """memorySwap.swapBehavior as the kubelet reads it: as stated, else its default for the
        version (NoSwap from 1.30, LimitedSwap before: podfit.kubeversions' swap-behaviour-no-swap)."""
        if self.swap_behavior is not None:
            return self.swap_behavior
        return "NoSwap" if kubeversions.behaviour("swap-behaviour-no-swap", self.version) else "LimitedSwap"

    @property
    def policy(self) -> str:
        return self.cpu_manager_policy or "none"

    @property
    def version_text(self) -> str | None:
        return f"{self.version[0]}.{self.version[1]}" if self.version else None

    def feature(self, name: str) -> bool | None:
        """Whether a feature gate is on: as set, else its default for the version; None when unknown."""
        for k, v in self.feature_gates:
            if k == name:
                return v
        return kubeversions.feature_default(name, self.version)

    @property
    def exclusive_cpus_without_quota(self) -> bool | None:
        """Containers given exclusive CPUs by the static CPU Manager get no CFS quota
        (DisableCPUQuotaWithExclusiveCPUs); None when neither the version nor the gate is known."""
        return self.feature(DISABLE_CPU_QUOTA_WITH_EXCLUSIVE_CPUS)

    def exclusive_cpus(self, qos: str, cpu_millicores: int | None) -> bool:
        """The static CPU Manager gives this container exclusive CPUs: Guaranteed pod, whole CPUs."""
        return (
            self.policy == "static"
            and qos == "Guaranteed"
            and cpu_millicores is not None
            and cpu_millicores > 0
            and cpu_millicores % 1000 == 0
        )


def _cluster_version(obj: K8sObject) -> str | None:
    spec = obj.raw.get("spec")
    if not isinstance(spec, Mapping):
        return None
    if obj.kind == "TanzuKubernetesCluster":
        dist = spec.get("distribution")
        if isinstance(dist, Mapping):
            v = dist.get("version") or dist.get("fullVersion")
            return str(v) if v else None
        return None
    if obj.kind == "Cluster":
        topo = spec.get("topology")
        if isinstance(topo, Mapping) and topo.get("version"):
            return str(topo["version"])
    return None


def is_kubelet_configuration(obj: K8sObject) -> bool:
    """Whether ``obj`` is a kubelet's configuration file (kind KubeletConfiguration of the
    kubelet.config.k8s.io group, whatever its version)."""
    return obj.kind == "KubeletConfiguration" and obj.ref.api_version.startswith("kubelet.config.k8s.io/")


def kubelet_facts(platform: Platform, objects: Sequence[K8sObject]) -> KubeletFacts:
    """The kubelet facts of a run (see :class:`KubeletFacts`). The first KubeletConfiguration of the
    input wins over the platform."""
    kub = platform.kubelet
    # a policy other than the default counts as stated however the profile was built
    stated = kub.cpu_manager_policy_stated or kub.cpu_manager_policy != "none"
    policy: str | None = kub.cpu_manager_policy if stated else None
    policy_source = f"platform {platform.name}" if policy else ""
    options, gates = kub.cpu_manager_policy_options, kub.feature_gates
    topology, scope, memory = "none", "container", "None"
    topology_options: tuple[tuple[str, str], ...] = ()
    cfs_quota, cfs_period, refused = True, CFS_PERIOD_US, None
    swap: str | None = None
    for o in objects:
        if is_kubelet_configuration(o):
            raw = o.raw
            p = raw.get("cpuManagerPolicy")
            policy = str(p) if p else "none"
            policy_source = f"KubeletConfiguration {o.location.file}:{o.location.line}"
            opts = raw.get("cpuManagerPolicyOptions")
            options = tuple(sorted((str(k), str(v)) for k, v in opts.items())) if isinstance(opts, Mapping) else ()
            fg = raw.get("featureGates")
            if isinstance(fg, Mapping):
                gates = tuple(sorted((str(k), v is True or str(v).lower() == "true") for k, v in fg.items()))
            topology = str(raw.get("topologyManagerPolicy") or "none")
            scope = str(raw.get("topologyManagerScope") or "container")
            topts = raw.get("topologyManagerPolicyOptions")
            if isinstance(topts, Mapping):
                topology_options = tuple(sorted((str(k), str(v)) for k, v in topts.items()))
            memory = str(raw.get("memoryManagerPolicy") or "None")
            mswap = raw.get("memorySwap")
            if isinstance(mswap, Mapping) and isinstance(mswap.get("swapBehavior"), str):
                swap = mswap["swapBehavior"] or None  # "" is the default, NoSwap
            cfs_quota = raw.get("cpuCFSQuota") is not False
            period = duration_us(raw.get("cpuCFSQuotaPeriod"))
            # the kubelet refuses a period outside 1 ms to 1 s (validation.go); keep the default then
            if period is not None and 1_000 <= period <= 1_000_000:
                cfs_period = period
            break
    version = parse_version(kub.version) if kub.version else None
    version_source = f"platform {platform.name}" if version else ""
    if version is None:
        found = {v for o in objects if (t := _cluster_version(o)) and (v := parse_version(t))}
        if len(found) == 1:
            version = found.pop()
            version_source = "cluster manifests"
    if cfs_period != CFS_PERIOD_US:
        # ValidateKubeletConfiguration: a period other than 100ms needs CustomCPUCFSQuotaPeriod on
        gate = dict(gates).get(CUSTOM_CFS_PERIOD_GATE)
        if not (gate if gate is not None else kubeversions.feature_default(CUSTOM_CFS_PERIOD_GATE, version)):
            cfs_period, refused = CFS_PERIOD_US, cfs_period
    return KubeletFacts(
        policy,
        options,
        gates,
        version,
        policy_source,
        version_source,
        topology,
        scope,
        memory,
        cfs_quota,
        cfs_period,
        refused,
        topology_options,
        swap_behavior=swap,
    )


def linux_excluded(c: SchedulingConstraints) -> bool:
    """The pod can only run on non-Linux nodes (``kubernetes.io/os: windows``): its nodeSelector or
    every term of its required node affinity rules Linux out. Such nodes have no CFS quota."""
    linux = {OS: "linux", BETA_OS: "linux"}
    for k, v in c.node_selector:
        if k in linux and v != "linux":
            return True
    if c.node_affinity is None:
        return False

    def term_excludes(term: Any) -> bool:
        return any(
            r.key in linux and node_requirement(r, linux, frozenset(linux)) is False for r in term.match_expressions
        )

    return all(term_excludes(t) for t in c.node_affinity)


@dataclass(frozen=True, eq=False)
class ClusterScope:
    """One Kubernetes cluster of the run and what deploys to it.

    ``source`` says where the assignment came from: ``option`` (``--cluster``), ``config`` (the
    ``clusters:`` mapping), ``platform``, ``manifest`` (a TanzuKubernetesCluster / Cluster API
    Cluster) or ``input`` (nothing named a cluster: the whole input is one, named ""). ``objects``
    and ``workloads`` hold each object (API group/kind/namespace/name) once, the first in input order;
    ``duplicates`` pairs each later copy with the object it would replace, as (first, second);
    ``rejected`` holds the objects the API server rejects for a removed apiVersion (PF906), which
    ``objects`` and ``workloads`` leave out.
    ``node_pools`` are the pools its workloads land on.
    """

    name: str
    source: str
    objects: tuple[K8sObject, ...]
    workloads: tuple[Workload, ...]
    node_pools: tuple[NodePool, ...] = ()
    duplicates: tuple[tuple[K8sObject, K8sObject], ...] = ()
    # objects of an apiVersion the API server no longer serves (PF906): never created, so left out
    # of ``objects`` and ``workloads`` (packing, capacity, quotas), in input order
    rejected: tuple[K8sObject, ...] = ()
    location: Location | None = None  # where the cluster is declared (manifest, config or profile)
    guest: bool = False  # declared by a TanzuKubernetesCluster / Cluster API manifest of the input
    runtime: str = "tkg"  # how its pods run: the platform's runtime, but tkg for a guest cluster

    @property
    def label(self) -> str:
        """How a message names it."""
        return f"cluster {self.name}" if self.name else "one cluster (the whole input)"


@dataclass(frozen=True, eq=False)
class Facts:
    """The facts of one run. ``findings`` are those the facts stage itself raised (PF903 on a
    LimitRange's or container's quantity)."""

    objects: tuple[K8sObject, ...]
    workloads: tuple[Workload, ...]
    platform: Platform
    node_pools: tuple[NodePool, ...]
    limit_ranges: tuple[tuple[str, LimitRangeDefaults], ...]
    findings: tuple[Finding, ...] = ()
    cluster: str | None = None  # `--cluster`: every object of the run deploys to this cluster
    clusters: tuple[ClusterScope, ...] = ()  # the clusters of the run, each object in exactly one
    _scope_of: Mapping[int, int] = field(default_factory=dict, repr=False)  # id(object) → index in clusters
    # each namespace's LimitRange min/max/maxLimitRequestRatio bounds (what admission rejects)
    limit_constraints: Mapping[str, tuple[LimitRangeConstraint, ...]] = field(default_factory=dict)
    usage: UsageFacts | None = None  # measured usage (`check --usage`), matched to the workloads' containers
    # the config's workload kinds (`workload-kinds:`): (API group, kind) -> CustomWorkloadKind
    workload_kinds: Mapping[tuple[str, str], CustomWorkloadKind] = field(default_factory=dict)

    def cluster_of(self, obj: K8sObject) -> ClusterScope | None:
        """The cluster ``obj`` (one of ``objects``) deploys to."""
        i = self._scope_of.get(id(obj))
        return self.clusters[i] if i is not None else None

    @cached_property
    def unique_objects(self) -> tuple[K8sObject, ...]:
        """Every object once per cluster (duplicates within a cluster left out), in input order."""
        keep = {id(o) for c in self.clusters for o in c.objects}
        return tuple(o for o in self.objects if id(o) in keep)

    @cached_property
    def unique_workloads(self) -> tuple[Workload, ...]:
        """The workloads of :attr:`unique_objects`, in input order."""
        keep = {id(o) for c in self.clusters for o in c.objects}
        return tuple(w for w in self.workloads if id(w.obj) in keep)

    @cached_property
    def rejected(self) -> tuple[K8sObject, ...]:
        """The objects the API server rejects for a removed apiVersion (PF906), which every cluster's
        objects and workloads (and so :attr:`unique_objects`) leave out, in input order."""
        keep = {id(o) for c in self.clusters for o in c.rejected}
        return tuple(o for o in self.objects if id(o) in keep)

    def runs_as_vsphere_pod(self, w: Workload) -> bool:
        """Whether ``w``'s pods run as vSphere Pods (a CRX each): the platform's runtime is
        ``vsphere-pods`` and ``w`` is not in a guest cluster (TanzuKubernetesCluster / Cluster API)."""
        if self.platform.runtime != "vsphere-pods":
            return False
        scope = self.cluster_of(w.obj)
        return scope is None or scope.runtime == "vsphere-pods"

    def is_apart(self, scope: ClusterScope | None) -> bool:
        """Whether ``scope``'s pods run on another runtime than the platform's: a guest cluster
        (TanzuKubernetesCluster, Cluster API) on a vSphere Pods Supervisor, whose pods run on its own
        nodes. The Rego rules evaluate such a cluster's objects apart (``facts_data``'s scope)."""
        return scope is not None and scope.runtime != self.platform.runtime

    @cached_property
    def apart_clusters(self) -> tuple[ClusterScope, ...]:
        """The clusters :meth:`is_apart`, in order."""
        return tuple(c for c in self.clusters if self.is_apart(c))

    @cached_property
    def crx_workloads(self) -> tuple[Workload, ...]:
        """The workloads of :attr:`unique_objects` that run as vSphere Pods, in input order."""
        return tuple(w for w in self.unique_workloads if self.runs_as_vsphere_pod(w))

    def vm_class(self, name: str) -> VMClass | None:
        return self.platform.vm_class(name)

    @cached_property
    def worker_pools(self) -> tuple[NodePool, ...]:
        """The pools workloads land on (control planes run none)."""
        return tuple(p for p in self.node_pools if p.role != "control-plane")

    @cached_property
    def node_logical_cpus(self) -> int | None:
        """Logical CPUs of the largest node pods land on: the largest host on bare metal, else the
        largest VM class of the worker pools; None when unknown, and on vSphere Pods (each pod is
        its own CRX, there is no shared node)."""
        return self._node_cpus(self.platform.runtime, self.worker_pools)

    def _pools_of(self, scope: ClusterScope | None, workers: bool = True) -> tuple[NodePool, ...]:
        """The pools of ``scope``'s nodes: a guest cluster on a Supervisor its own, every other
        cluster the run's; with ``workers``, those that run workloads (no control plane)."""
        if scope is None or not self.is_apart(scope):
            return self.worker_pools if workers else self.node_pools
        return tuple(p for p in scope.node_pools if not workers or p.role != "control-plane")

    def landing_pools(self, w: Workload) -> tuple[NodePool, ...]:
        """The worker pools ``w``'s pods may run on: those its nodeSelector, required node affinity
        and tolerations do not rule out (:func:`podfit.scheduling.decide`; a label the platform does
        not describe leaves a pool in). Where every pool is ruled out, all of them: the pod fits
        nowhere (PF601 says so), and the rules that size it against a node take the largest."""
        return self._landing(w.pod.scheduling, self.cluster_of(w.obj))

    def _landing(self, c: SchedulingConstraints, scope: ClusterScope | None) -> tuple[NodePool, ...]:
        # keyed by the scope's identity, not its pools: hashing NodePools costs more than deciding
        key = (c, id(scope) if self.is_apart(scope) else None)
        hit = self._landing_memo.get(key)
        if hit is None:
            pools = self._pools_of(scope)
            described = described_keys(self._pools_of(scope, workers=False))
            fits = tuple(p for p in pools if decide(c, p.node_labels, p.node_taints, described).answer != NO)
            hit = self._landing_memo[key] = fits or pools
        return hit

    @cached_property
    def _landing_memo(self) -> dict[tuple[SchedulingConstraints, int | None], tuple[NodePool, ...]]:
        """_landing's answers, per constraints and pools offered (most workloads share both)."""
        return {}

    def _node_cpus(self, runtime: str, pools: Sequence[NodePool]) -> int | None:
        """Logical CPUs of the largest node among ``pools`` on ``runtime``: the largest host on bare
        metal, else the largest VM class of the pools; None when unknown, and on vSphere Pods (each
        pod is its own CRX, there is no shared node)."""
        if runtime == "vsphere-pods":
            return None
        if runtime == "bare-metal":
            return max((h.logical_cpus for h in self.platform.hosts), default=None)
        return max((vc.cpus for p in pools if (vc := self.vm_class(p.vm_class)) is not None), default=None)

    def workload_node_logical_cpus(self, w: Workload) -> int | None:
        """Logical CPUs of the largest node ``w``'s pods may land on (:meth:`landing_pools`, on its
        cluster's runtime). PF202 (through ``facts_data``) and PF203 both read this."""
        scope = self.cluster_of(w.obj)
        runtime = scope.runtime if scope is not None else self.platform.runtime
        return self._node_cpus(runtime, self.landing_pools(w))

    def linux_excluded(self, w: Workload) -> bool:
        """Whether ``w``'s pods can only run on non-Linux nodes (see :func:`linux_excluded`), which
        have no CFS quota."""
        return linux_excluded(w.pod.scheduling)

    def exclusive_cpus(self, w: Workload) -> frozenset[str]:
        """The names of ``w``'s containers the static CPU Manager on the nodes gives exclusive CPUs
        (Guaranteed pod, whole CPUs: :meth:`KubeletFacts.exclusive_cpus`). From Kubernetes 1.33
        they run without CFS quota, before it their quota covers exactly the pinned CPUs; either
        way CFS cannot over-throttle them."""
        kub = self.kubelet
        if kub.policy != "static":
            return frozenset()
        qos = w.pod.qos_class
        return frozenset(c.name for c in w.pod.all_containers if kub.exclusive_cpus(qos, c.resources.cpu_limit))

    def cfs_screen(self, w: Workload) -> tuple[Container, ...]:
        """PF202's screen, which PF203 simulates: the containers of ``w`` whose CPU limit, enforced
        by CFS quota, has fewer slices per period than the largest node ``w``'s pods may land on
        has logical CPUs (below :func:`cfs_screen_limit`). Empty when the pods run only on
        non-Linux nodes or the node size is unknown (vSphere Pods: no shared node); never a
        container given exclusive CPUs."""
        cpus = self.workload_node_logical_cpus(w)
        if cpus is None or self.linux_excluded(w) or not self.kubelet.cfs_quota:
            return ()
        below = cfs_screen_limit(cpus, self.kubelet.cfs_period_us)
        pinned = self.exclusive_cpus(w)
        return tuple(
            c
            for c in w.pod.all_containers
            if (limit := c.resources.cpu_limit) is not None and 0 < limit < below and c.name not in pinned
        )

    def plain_node_logical_cpus(self, scope: ClusterScope | None = None) -> int | None:
        """What :meth:`workload_node_logical_cpus` gives a workload of ``scope`` (default: of the
        platform's runtime) that neither selects nodes nor tolerates taints: the node size
        ``facts_data`` states once, listing only the workloads that differ from it."""
        runtime = scope.runtime if scope is not None else self.platform.runtime
        return self._node_cpus(runtime, self._landing(NO_CONSTRAINTS, scope))

    @cached_property
    def kubelet(self) -> KubeletFacts:
        """The kubelet on the nodes: CPU Manager policy, feature gates, Kubernetes version."""
        return kubelet_facts(self.platform, self.objects)

    @property
    def numa_node_cores(self) -> int | None:
        return self.platform.numa_node_cores

    @property
    def numa_node_memory(self) -> int | None:
        return self.platform.numa_node_memory

    @property
    def numa_node_cpus(self) -> int | None:
        """CPUs of the smallest NUMA node as a pod's CPUs count them: logical CPUs on bare metal,
        where a Kubernetes CPU is a hardware thread; physical cores under vSphere, whose NUMA
        scheduler places a VM's (or a vSphere Pod's) vCPUs on a node's cores, not its threads."""
        if self.platform.runtime == "bare-metal":
            return self.numa_node_logical_cpus
        return self.numa_node_cores

    @property
    def numa_node_logical_cpus(self) -> int | None:
        """Logical CPUs (cores × hardware threads) of the smallest NUMA node of any host."""
        return min((h.numa_node_cores * h.threads_per_core for h in self.platform.hosts), default=None)

    @property
    def smt(self) -> bool | None:
        hosts = self.platform.hosts
        return any(h.threads_per_core > 1 for h in hosts) if hosts else None


def _matched_usage(usage: Sequence[Series], workloads: Sequence[Workload]) -> UsageFacts:
    from .usage import match_usage

    return match_usage(usage, workloads)


def build_facts(
    objects: Sequence[K8sObject],
    platform: Platform,
    cluster: str | None = None,
    cluster_for_path: Callable[[str], str | None] | None = None,
    usage: Sequence[Series] | None = None,
    kubernetes_version: str | None = None,
    workload_kinds: Mapping[tuple[str, str], CustomWorkloadKind] | None = None,
) -> Facts:
    """The facts of ``objects`` on ``platform``. ``cluster`` is ``--cluster``; ``cluster_for_path``
    the config's ``clusters:`` mapping (a file path → its cluster, or None); ``usage`` the
    measured series (``--usage``), matched here to the workloads' containers;
    ``kubernetes_version`` the release the manifests target (PF906's), whose removed apiVersions'
    objects the clusters leave out (None: every removal so far); ``workload_kinds`` the config's
    workload CRDs (``workload-kinds:``). Pure."""
    objects = tuple(objects)
    findings: list[Finding] = []
    ranges = limit_range_defaults(objects, findings)
    kinds = dict(workload_kinds or {})
    workloads, workload_findings = build_workloads(objects, ranges, kinds)
    scopes, scope_of, pools = _cluster_scopes(
        objects, workloads, platform, cluster, cluster_for_path, _rejected_by(kubernetes_version)
    )
    return Facts(
        objects=objects,
        workloads=workloads,
        platform=platform,
        node_pools=pools,
        limit_ranges=tuple(sorted(ranges.items())),
        findings=tuple(findings) + tuple(workload_findings),
        cluster=cluster,
        clusters=scopes,
        _scope_of=scope_of,
        limit_constraints=limit_range_constraints(objects),
        usage=_matched_usage(usage, workloads) if usage is not None else None,
        workload_kinds=kinds,
    )


# ---------------------------------------------------------------------------------- clusters ---


def platform_cluster(platform: Platform) -> str | None:
    """The cluster the profile itself describes, or None when it describes only vSphere hosts
    (runtime tkg without node pools: the TKG clusters are declared elsewhere)."""
    if not (platform.node_pools or platform.runtime in ("bare-metal", "vsphere-pods")):
        return None
    named = {p.cluster for p in platform.node_pools if p.cluster}
    return next(iter(named)) if len(named) == 1 else platform.name


def _manifest_clusters(manifests: Sequence[K8sObject]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Cluster names declared per file and per directory (only where a manifest stands: the
    search for an object's cluster goes upwards from its file)."""
    by_file: dict[str, set[str]] = {}
    by_dir: dict[str, set[str]] = {}
    for o in manifests:
        f = o.location.file
        by_file.setdefault(f, set()).add(o.ref.name)
        if f != STDIN_NAME:
            by_dir.setdefault(_dir(f), set()).add(o.ref.name)
    return by_file, by_dir


def _dir(path: str) -> str:
    return posixpath.dirname(posixpath.normpath(path.replace("\\", "/")))


def _manifest_cluster_of(file: str, by_file: Mapping[str, set[str]], by_dir: Mapping[str, set[str]]) -> str | None:
    """The cluster declared in ``file``, else in the nearest directory above it that declares any;
    None when that place declares several (ambiguous) or none does."""
    names = by_file.get(file)
    if names:
        return next(iter(names)) if len(names) == 1 else None
    if file == STDIN_NAME or not by_dir:
        return None
    d = _dir(file)
    while True:
        names = by_dir.get(d)
        if names:
            return next(iter(names)) if len(names) == 1 else None
        if d in ("", "/", "."):
            return None
        parent = posixpath.dirname(d)
        d = "" if parent == d else parent


def _rejected_by(version: str | None) -> Callable[[K8sObject], bool]:
    """Whether the API server of Kubernetes ``version`` (None: any release so far; a version that
    does not parse counts as None, PF906 reports it) rejects an object for its removed apiVersion."""
    from .schemas_k8s import SchemaError, parse_version, removed_api

    if version not in (None, "", "latest"):
        try:
            parse_version(str(version))
        except SchemaError:
            version = None
    return lambda o: removed_api(o.ref.api_version, o.kind, version) is not None


def _cluster_scopes(
    objects: Sequence[K8sObject],
    workloads: Sequence[Workload],
    platform: Platform,
    option: str | None,
    cluster_for_path: Callable[[str], str | None] | None,
    rejected: Callable[[K8sObject], bool] = lambda _o: False,
) -> tuple[tuple[ClusterScope, ...], dict[int, int], tuple[NodePool, ...]]:
    """Each object's cluster (the order in the module docstring), then each cluster's objects
    with duplicates set aside and the node pools its workloads land on."""
    of_platform = platform_cluster(platform)
    manifests = cluster_objects(objects)
    declared = sorted({o.ref.name for o in manifests})
    by_file, by_dir = _manifest_clusters(manifests)
    only = declared[0] if len(declared) == 1 else None

    def assign_file(f: str) -> tuple[str, str]:
        name = cluster_for_path(f) if cluster_for_path is not None else None
        if name is not None:
            return name, "config"
        name = _manifest_cluster_of(f, by_file, by_dir)
        if name is not None:
            return name, "manifest"
        if of_platform is not None:
            return of_platform, "platform"
        if only is not None:
            return only, "manifest"
        return "", "input"

    members: dict[str, list[K8sObject]] = {}
    sources: dict[str, str] = {}

    def note(name: str, source: str) -> None:
        # a cluster named both ways keeps the stronger source (option > config > platform > manifest)
        if name not in sources or _SOURCE_RANK[source] < _SOURCE_RANK[sources[name]]:
            sources[name] = source

    if option is not None:
        if objects:
            members[option] = list(objects)
            note(option, "option")
    else:
        own = {id(o) for o in manifests}  # a cluster manifest belongs to the cluster it declares
        by_path: dict[str, tuple[str, str]] = {}
        for o in objects:
            f = o.location.file
            hit = by_path.get(f)
            if hit is None:
                hit = by_path[f] = assign_file(f)
                note(*hit)
            if own and hit[1] in ("manifest", "input") and id(o) in own:
                hit = (o.ref.name, "manifest")
                note(*hit)
            members.setdefault(hit[0], []).append(o)

    scope_of: dict[int, int] = {}
    drafts: list[tuple[str, list[K8sObject], list[tuple[K8sObject, K8sObject]]]] = []
    refused: list[list[K8sObject]] = []
    for i, name in enumerate(sorted(members)):
        first: dict[tuple[str, str, str, str], K8sObject] = {}
        unique: list[K8sObject] = []
        dups: list[tuple[K8sObject, K8sObject]] = []
        refused.append([])
        for o in members[name]:
            scope_of[id(o)] = i
            meta = o.raw.get("metadata")
            if not (isinstance(meta, dict) and meta.get("name")):  # generateName: a new object every time
                (refused[i] if rejected(o) else unique).append(o)
                continue
            key = _identity(o.ref)
            seen = first.get(key)
            if seen is None:
                first[key] = o
                # a rejected object is never created, but still names its object twice (PF910)
                (refused[i] if rejected(o) else unique).append(o)
            elif seen.location.file != o.location.file or seen.location.line != o.location.line:
                dups.append((seen, o))
                if rejected(seen) and not rejected(o):
                    unique.append(o)  # the first copy is rejected: this one is what gets created
        drafts.append((name, unique, dups))

    # node pools: those of each cluster's unique cluster manifests (in input order), to the cluster
    # the manifest declares, else to the one holding it; the platform's to the cluster they name,
    # else the platform's cluster, else every cluster that has no pools of its own
    index = {d[0]: i for i, d in enumerate(drafts)}
    unique_ids = {id(o) for d in drafts for o in d[1]}
    pools_of: list[list[NodePool]] = [[] for _ in drafts]
    manifest_pools: list[NodePool] = []
    for o in manifests + pool_objects(objects):
        if id(o) not in unique_ids:
            continue
        for p in node_pools_from_objects((o,), objects):
            manifest_pools.append(p)
            pools_of[index.get(p.cluster, scope_of[id(o)])].append(p)
    from_platform: list[list[NodePool]] = [[] for _ in drafts]
    # unnamed platform pools with no platform cluster among the run's: the one cluster that no
    # cluster manifest declares, if there is exactly one (a config naming the profile's cluster)
    undeclared = [i for i, d in enumerate(drafts) if d[0] not in declared]
    for p in platform.node_pools:
        if p.cluster and p.cluster in index:
            from_platform[index[p.cluster]].append(p)
        elif not p.cluster and of_platform is not None and of_platform in index:
            from_platform[index[of_platform]].append(p)
        elif not p.cluster and len(undeclared) == 1:
            from_platform[undeclared[0]].append(p)
    for i in range(len(drafts)):
        if len(drafts) == 1 and sources[drafts[i][0]] in ("option", "input", "platform"):
            pools_of[i] = list(platform.node_pools) + manifest_pools  # the run is one cluster: every pool
        else:
            pools_of[i] = from_platform[i] + pools_of[i]

    workloads_of: list[list[Workload]] = [[] for _ in drafts]
    for w in workloads:
        if id(w.obj) in unique_ids:
            workloads_of[scope_of[id(w.obj)]].append(w)
    by_name: dict[str, K8sObject] = {}
    for o in manifests:
        by_name.setdefault(o.ref.name, o)
    guests = set(declared)
    scopes = []
    for i, (name, unique, dups) in enumerate(drafts):
        source = sources[name]
        where = (
            by_name[name].location
            if source == "manifest" and name in by_name
            else Location(platform.source)
            if source == "platform"
            else None
        )
        scopes.append(
            ClusterScope(
                name=name,
                source=source,
                objects=tuple(unique),
                workloads=tuple(workloads_of[i]),
                node_pools=tuple(pools_of[i]),
                duplicates=tuple(dups),
                rejected=tuple(refused[i]),
                location=where,
                guest=name in guests,
                runtime="tkg" if name in guests and platform.runtime == "vsphere-pods" else platform.runtime,
            )
        )
    return tuple(scopes), scope_of, tuple(platform.node_pools) + tuple(manifest_pools)


def _identity(ref: ObjectRef) -> tuple[str, str, str, str]:
    """What the API server keys an object by: API group (not version: apps/v1 and apps/v1beta2
    name the same object), kind, namespace (as written) and name."""
    group = ref.api_version.rpartition("/")[0]
    return group, ref.kind, ref.namespace, ref.name


_SOURCE_RANK = {"option": 0, "config": 1, "platform": 2, "manifest": 3, "input": 4}


def _resources(r: Any, kind: str) -> dict[str, int]:
    return {res: v for res in ("cpu", "memory") if (v := getattr(r, f"{res}_{kind}")) is not None}


def facts_data(
    facts: Facts, options: Mapping[str, Mapping[str, Any]] | None = None, scope: ClusterScope | None = None
) -> dict[str, Any]:
    """The facts as the Rego rules read them, ``data.podfit`` (shape in docs/rego.md)::

        {"platform": {"runtime", "assumed": {"facts", "note"}, "numa_node": {"cores", "cpus", "memory"},
                      "smt", "node_logical_cpus",
                      "cfs_screen_limit",
                      "workloads": {"KIND/NAMESPACE/NAME": {"node_logical_cpus", "cfs_screen_limit",
                                                            "linux_excluded", "exclusive_cpus": [name],
                                                            "injected": [{"name", "request", "limit"}]}},
                      "vm_classes": {name: {"cpus", "memory", "reserved"}},
                      "node_pools": [{"name", "cluster", "role", "vm_class", "count"}],
                      "kubelet": {"cpu_manager_policy", "cpu_manager_policy_known", "version": [major, minor],
                                  "exclusive_cpus_without_quota", "dra_node_allocatable",
                                  "swap_behavior", "limited_swap"},
                      "cfs": {"period_us", "slice_us"}},
         "namespaces": {ns: {"container_defaults": {"request": {...}, "limit": {...}}}},
         "options": {rule id: {option: value}},
         "workload_kinds": {"GROUP/KIND": [key, ...]}}  (the config's workload CRDs, when it names some)

    A fact the platform does not give is left out; the rules that need it stay silent.
    ``workloads`` lists the workloads whose own facts differ from what the others get; it is
    absent when the facts were computed over no workload (``podfit platform-data`` without
    manifests), and PF202 then names what it assumes of each workload.
    ``options`` are the rules' configured options (defaults live in each rule's METADATA).
    ``scope``: the facts as the objects of that cluster see them, where they differ from the run's:
    a guest cluster on a Supervisor (runtime ``vsphere-pods``) has runtime ``tkg`` and the logical
    CPUs of its own worker nodes.
    """
    platform = facts.platform
    runtime = scope.runtime if scope is not None else platform.runtime
    p: dict[str, Any] = {"runtime": runtime}
    if platform.is_default:  # the built-in profile stands in for a cluster nobody described
        p["assumed"] = {"facts": sorted(BUILT_IN_FACTS), "note": ASSUMED_PLATFORM}
    if facts.numa_node_cores is not None and facts.numa_node_memory is not None:
        p["numa_node"] = {
            "cores": facts.numa_node_cores,
            "cpus": facts.numa_node_cpus,
            "memory": facts.numa_node_memory,
        }
    if facts.smt is not None:
        p["smt"] = facts.smt
    apart = scope if facts.is_apart(scope) else None
    node_cpus = facts.plain_node_logical_cpus(apart)
    if node_cpus is not None:
        p["node_logical_cpus"] = node_cpus
        if facts.kubelet.cfs_quota:  # cpuCFSQuota: false: no quota, nothing for PF202 to screen
            p["cfs_screen_limit"] = cfs_screen_limit(node_cpus, facts.kubelet.cfs_period_us)
    if facts.workloads:  # (absent: the facts saw no workload, and say nothing of any)
        listed = _workload_facts(facts, apart, node_cpus)
        for key, proxies in _injected_facts(facts, apart).items():
            listed.setdefault(key, {})["injected"] = proxies
        p["workloads"] = dict(sorted(listed.items()))
    p["vm_classes"] = {
        c.name: {"cpus": c.cpus, "memory": c.memory_bytes, "reserved": bool(c.reserved)} for c in platform.vm_classes
    }
    p["node_pools"] = [
        {
            "name": pool.name or pool.vm_class,
            "cluster": pool.cluster,
            "role": pool.role,
            "vm_class": pool.vm_class,
            "count": pool.count,
        }
        for pool in facts.node_pools
    ]
    kub = facts.kubelet
    p["kubelet"] = {"cpu_manager_policy": kub.policy, "cpu_manager_policy_known": kub.cpu_manager_policy is not None}
    if kub.version is not None:
        p["kubelet"]["version"] = list(kub.version)
    if kub.exclusive_cpus_without_quota is not None:
        p["kubelet"]["exclusive_cpus_without_quota"] = kub.exclusive_cpus_without_quota
    # KEP-5517: CPU and memory may come from DRA claims; PF101/PF102 then do not call a container
    # that uses a claim "request missing"
    if kub.feature(DRA_NODE_ALLOCATABLE) is not None:
        p["kubelet"]["dra_node_allocatable"] = kub.feature(DRA_NODE_ALLOCATABLE)
    if kub.swap_behavior is not None or kub.limited_swap:  # as the kubelet reads it; limited_swap: in force
        p["kubelet"]["swap_behavior"] = kub.effective_swap_behavior
        p["kubelet"]["limited_swap"] = kub.limited_swap
    p["cfs"] = {"period_us": kub.cfs_period_us, "slice_us": CFS_SLICE_US, "quota": kub.cfs_quota}
    namespaces = {
        ns: {"container_defaults": {"request": _resources(d.request, "request"), "limit": _resources(d.limit, "limit")}}
        for ns, d in facts.limit_ranges
    }
    out: dict[str, Any] = {
        "platform": p,
        "namespaces": namespaces,
        "options": {rule: dict(values) for rule, values in sorted((options or {}).items()) if values},
    }
    if facts.workload_kinds:  # the config's workload CRDs: "GROUP/KIND" -> path to the pod template
        out["workload_kinds"] = {f"{g}/{k}": list(c.template) for (g, k), c in sorted(facts.workload_kinds.items())}
    return out


def workload_key(raw: Mapping[str, Any]) -> str:
    """How ``data.podfit.platform.workloads`` names a workload, from the object as written (the Rego
    library builds the same key from its input): kind/namespace/name, the namespace "" unless it is
    a string, the name metadata.name if a string, else metadata.generateName if a string, else ""."""

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    return "/".join(
        (
            text(raw.get("kind")),
            text(meta.get("namespace")),
            name if isinstance(name, str) else text(meta.get("generateName")),
        )
    )


def _injected_facts(facts: Facts, scope: ClusterScope | None) -> dict[str, list[dict[str, Any]]]:
    """The containers a service mesh injects into the pods of each workload of the evaluation
    (``scope``'s objects, or those of the platform's runtime) that gets some, by key:
    ``[{"name", "request": {"cpu", "memory"}, "limit": {...}}]`` (effective values; a resource left
    out is unset). Two workloads of one key take the first's."""
    out: dict[str, list[dict[str, Any]]] = {}
    for w in facts.workloads:
        own = facts.cluster_of(w.obj)
        if w.pod.injected and (own is scope if scope is not None else not facts.is_apart(own)):
            out.setdefault(
                workload_key(w.obj.raw),
                [
                    {
                        "name": c.name,
                        "request": _resources(c.resources, "request"),
                        "limit": _resources(c.resources, "limit"),
                    }
                    for c in w.pod.injected
                ],
            )
    return out


def _workload_facts(facts: Facts, scope: ClusterScope | None, plain: int | None) -> dict[str, dict[str, Any]]:
    """The workloads of the evaluation (``scope``'s objects, or those of the platform's runtime)
    whose facts differ from what an unlisted workload gets, with those facts: ``node_logical_cpus``
    and ``cfs_screen_limit`` where their node selection or tolerations give them nodes of another
    size than ``plain``, ``linux_excluded`` where they run only on non-Linux nodes,
    ``exclusive_cpus`` (container names) where the static CPU Manager pins some of their containers.
    Nothing without a node size (PF202, their reader, is silent then). Two workloads of one key
    (copies in different clusters) share the facts under which PF202 rates most: the larger node,
    Linux unless both rule it out, exclusive CPUs only for a container both pin."""
    if plain is None:
        return {}
    runtime = scope.runtime if scope is not None else facts.platform.runtime
    # one node size (a single size of pool; bare metal, whose size is the largest host's): every
    # workload has it, and no workload's landing pools need deciding
    sizes = len({facts._node_cpus(runtime, (p,)) for p in facts._pools_of(scope)} - {None}) > 1
    evaluated: list[tuple[Workload, int, bool, frozenset[str]]] = []
    differs = False
    for w in facts.workloads:
        own = facts.cluster_of(w.obj)
        if not (own is scope if scope is not None else not facts.is_apart(own)):
            continue
        cpus = (facts.workload_node_logical_cpus(w) or plain) if sizes else plain
        excluded = facts.linux_excluded(w)
        pinned = facts.exclusive_cpus(w)
        differs = differs or cpus != plain or excluded or bool(pinned)
        evaluated.append((w, cpus, excluded, pinned))
    if not differs:
        return {}  # the common case: no workload's key needs building
    merged: dict[str, tuple[int, bool, frozenset[str]]] = {}
    for w, cpus, excluded, pinned in evaluated:
        key = workload_key(w.obj.raw)
        seen = merged.get(key)
        merged[key] = (
            (cpus, excluded, pinned)
            if seen is None
            else (
                max(cpus, seen[0]),
                excluded and seen[1],
                pinned & seen[2],
            )
        )
    out: dict[str, dict[str, Any]] = {}
    for key, (cpus, excluded, pinned) in sorted(merged.items()):
        entry: dict[str, Any] = {}
        if cpus != plain:
            entry["node_logical_cpus"] = cpus
            if facts.kubelet.cfs_quota:
                entry["cfs_screen_limit"] = cfs_screen_limit(cpus, facts.kubelet.cfs_period_us)
        if excluded:
            entry["linux_excluded"] = True
        if pinned:
            entry["exclusive_cpus"] = sorted(pinned)
        if entry:
            out[key] = entry
    return out


# The facts a rule can require (REQUIRES in a Python rule, custom.requires in a Rego rule's
# METADATA): whether the run has it, and what would give it. A rule whose facts are missing stays
# silent and is listed as skipped with the first missing fact's hint.
REQUIREMENTS: Mapping[str, tuple[Any, str]] = {
    "hosts": (lambda f: bool(f.platform.hosts), "vSphere hosts in the platform (spec.hosts)"),
    "numa-node": (
        lambda f: f.numa_node_cores is not None,
        "the hosts' NUMA node size: spec.hosts in the platform",
    ),
    "node-pools": (
        lambda f: bool(f.node_pools),
        "node pools: spec.nodePools in the platform, --nodes, or a TanzuKubernetesCluster, Cluster API "
        "Cluster, eksctl ClusterConfig or Karpenter NodePool among the manifests",
    ),
    "node-logical-cpus": (
        # on a Supervisor, a guest cluster's workloads run on its nodes (its objects' facts give them)
        lambda f: (
            f.node_logical_cpus is not None
            or any(any(p.role != "control-plane" for p in c.node_pools) for c in f.apart_clusters)
        ),
        "the node size: worker node pools (platform or TanzuKubernetesCluster) on runtime tkg, or hosts on bare-metal",
    ),
    "runtime-vsphere-pods": (
        lambda f: f.platform.runtime == "vsphere-pods",
        "runtime vsphere-pods in the platform (spec.runtime)",
    ),
    "nsx-t-load-balancer": (
        lambda f: f.platform.runtime in ("tkg", "vsphere-pods"),
        "an NSX-T load balancer: runtime tkg or vsphere-pods in the platform (spec.runtime); bare-metal has none",
    ),
    "usage": (
        lambda f: f.usage is not None,
        "measured usage: check --usage FILE (Prometheus query results or kubectl top output)",
    ),
    "runtime-nodes": (
        lambda f: f.platform.runtime != "vsphere-pods",
        "runtime tkg or bare-metal in the platform (vSphere Pods share no node)",
    ),
}


# The facts the built-in platform profile supplies when the run is given none (no --platform, no
# platform in the config): vSphere hosts (their NUMA size) and an NSX-T load balancer. A verdict of a
# rule that requires one of them rests on a cluster the user never described: at most info, and its
# message names the assumption (podfit.check).
BUILT_IN_FACTS = frozenset({"hosts", "numa-node", "nsx-t-load-balancer"})
ASSUMED_PLATFORM = (
    "assumes the built-in vSphere profile (4 ESXi hosts of 2 × 16 cores, 16-core NUMA nodes, a small NSX-T "
    "load balancer) since no platform was given: describe yours with --platform FILE"
)


def rests_on_built_in(facts: Facts, requires: Sequence[str]) -> bool:
    """Whether a rule requiring ``requires`` judges only by the built-in profile's facts."""
    return facts.platform.is_default and not BUILT_IN_FACTS.isdisjoint(requires)


def missing_fact(facts: Facts, requires: Sequence[str]) -> str | None:
    """The hint for the first fact of ``requires`` this run lacks, or None when it has them all."""
    for name in requires:
        has, hint = REQUIREMENTS[name]
        if not has(facts):
            return hint
    return None
