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
3. the platform, when the profile describes one Kubernetes cluster (it has node pools, or its
   runtime is ``bare-metal`` or ``vsphere-pods``): named after its node pools' one ``cluster``, else
   the profile's name;
4. a TanzuKubernetesCluster / Cluster API ``Cluster`` manifest: a cluster manifest belongs to the
   cluster it declares; any other object to the cluster declared in its own file, else in the
   nearest directory above it holding cluster manifests (a file or directory declaring several
   clusters decides nothing);
5. the one cluster the input's manifests declare, if exactly one; else the unnamed cluster ""
   (the whole input taken as one cluster).

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .clusters import cluster_objects, node_pools_from_objects
from .findings import Finding
from .loader import STDIN_NAME, LimitRangeDefaults, build_workloads, limit_range_defaults
from .model import K8sObject, Location, ObjectRef, Workload
from .platform import NodePool, Platform, VMClass
from .usage import Series, UsageFacts, match_usage

__all__ = [
    "Facts",
    "ClusterScope",
    "build_facts",
    "facts_data",
    "missing_fact",
    "REQUIREMENTS",
    "CFS_PERIOD_US",
    "CFS_SLICE_US",
]

CFS_PERIOD_US = 100_000  # the kernel's default cfs_period_us
CFS_SLICE_US = 5_000  # the kernel's default sched_cfs_bandwidth_slice_us


@dataclass(frozen=True, eq=False)
class ClusterScope:
    """One Kubernetes cluster of the run and what deploys to it.

    ``source`` says where the assignment came from: ``option`` (``--cluster``), ``config`` (the
    ``clusters:`` mapping), ``platform``, ``manifest`` (a TanzuKubernetesCluster / Cluster API
    Cluster) or ``input`` (nothing named a cluster: the whole input is one, named ""). ``objects``
    and ``workloads`` hold each object (API group/kind/namespace/name) once, the first in input order;
    ``duplicates`` pairs each later copy with the object it would replace, as (first, second).
    ``node_pools`` are the pools its workloads land on.
    """

    name: str
    source: str
    objects: tuple[K8sObject, ...]
    workloads: tuple[Workload, ...]
    node_pools: tuple[NodePool, ...] = ()
    duplicates: tuple[tuple[K8sObject, K8sObject], ...] = ()
    location: Location | None = None  # where the cluster is declared (manifest, config or profile)

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
    usage: UsageFacts | None = None  # measured usage (`check --usage`), matched to the workloads' containers

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
        runtime = self.platform.runtime
        if runtime == "vsphere-pods":
            return None
        if runtime == "bare-metal":
            return max((h.logical_cpus for h in self.platform.hosts), default=None)
        cpus = [vc.cpus for p in self.worker_pools if (vc := self.vm_class(p.vm_class)) is not None]
        return max(cpus, default=None)

    @property
    def numa_node_cores(self) -> int | None:
        return self.platform.numa_node_cores

    @property
    def numa_node_memory(self) -> int | None:
        return self.platform.numa_node_memory

    @property
    def smt(self) -> bool | None:
        hosts = self.platform.hosts
        return any(h.threads_per_core > 1 for h in hosts) if hosts else None


def build_facts(
    objects: Sequence[K8sObject],
    platform: Platform,
    cluster: str | None = None,
    cluster_for_path: Callable[[str], str | None] | None = None,
    usage: Sequence[Series] | None = None,
) -> Facts:
    """The facts of ``objects`` on ``platform``. ``cluster`` is ``--cluster``; ``cluster_for_path``
    the config's ``clusters:`` mapping (a file path → its cluster, or None); ``usage`` the
    measured series (``--usage``), matched here to the workloads' containers. Pure."""
    objects = tuple(objects)
    findings: list[Finding] = []
    ranges = limit_range_defaults(objects, findings)
    workloads, workload_findings = build_workloads(objects, ranges)
    scopes, scope_of, pools = _cluster_scopes(objects, workloads, platform, cluster, cluster_for_path)
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
        usage=match_usage(usage, workloads) if usage is not None else None,
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


def _cluster_scopes(
    objects: Sequence[K8sObject],
    workloads: Sequence[Workload],
    platform: Platform,
    option: str | None,
    cluster_for_path: Callable[[str], str | None] | None,
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
        if of_platform is not None:
            return of_platform, "platform"
        name = _manifest_cluster_of(f, by_file, by_dir) or only
        if name is not None:
            return name, "manifest"
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
    for i, name in enumerate(sorted(members)):
        first: dict[tuple[str, str, str, str], K8sObject] = {}
        unique: list[K8sObject] = []
        dups: list[tuple[K8sObject, K8sObject]] = []
        for o in members[name]:
            scope_of[id(o)] = i
            meta = o.raw.get("metadata")
            if not (isinstance(meta, dict) and meta.get("name")):  # generateName: a new object every time
                unique.append(o)
                continue
            key = _identity(o.ref)
            seen = first.get(key)
            if seen is None:
                first[key] = o
                unique.append(o)
            elif seen.location.file != o.location.file or seen.location.line != o.location.line:
                dups.append((seen, o))
        drafts.append((name, unique, dups))

    # node pools: those of each cluster's unique cluster manifests (in input order), to the cluster
    # the manifest declares, else to the one holding it; the platform's to the cluster they name,
    # else the platform's cluster, else every cluster that has no pools of its own
    index = {d[0]: i for i, d in enumerate(drafts)}
    unique_ids = {id(o) for d in drafts for o in d[1]}
    pools_of: list[list[NodePool]] = [[] for _ in drafts]
    manifest_pools: list[NodePool] = []
    for o in manifests:
        if id(o) not in unique_ids:
            continue
        for p in node_pools_from_objects((o,)):
            manifest_pools.append(p)
            pools_of[index.get(p.cluster, scope_of[id(o)])].append(p)
    from_platform: list[list[NodePool]] = [[] for _ in drafts]
    unplaced: list[NodePool] = []
    for p in platform.node_pools:
        if p.cluster and p.cluster in index:
            from_platform[index[p.cluster]].append(p)
        elif of_platform is not None and of_platform in index:
            from_platform[index[of_platform]].append(p)
        else:
            unplaced.append(p)
    for i in range(len(drafts)):
        if len(drafts) == 1:  # one cluster: every pool of the run
            pools_of[i] = list(platform.node_pools) + manifest_pools
        else:
            pools_of[i] = from_platform[i] + pools_of[i] or list(unplaced)

    workloads_of: list[list[Workload]] = [[] for _ in drafts]
    for w in workloads:
        if id(w.obj) in unique_ids:
            workloads_of[scope_of[id(w.obj)]].append(w)
    by_name: dict[str, K8sObject] = {}
    for o in manifests:
        by_name.setdefault(o.ref.name, o)
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
                location=where,
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


def facts_data(facts: Facts, options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The facts as the Rego rules read them, ``data.podfit`` (shape in docs/rego.md)::

        {"platform": {"runtime", "numa_node": {"cores", "memory"}, "smt", "node_logical_cpus",
                      "vm_classes": {name: {"cpus", "memory", "reserved"}},
                      "node_pools": [{"name", "cluster", "role", "vm_class", "count"}],
                      "kubelet": {"cpu_manager_policy"}, "cfs": {"period_us", "slice_us"}},
         "namespaces": {ns: {"container_defaults": {"request": {...}, "limit": {...}}}},
         "options": {rule id: {option: value}}}

    A fact the platform does not give is left out; the rules that need it stay silent.
    ``options`` are the rules' configured options (defaults live in each rule's METADATA).
    """
    platform = facts.platform
    p: dict[str, Any] = {"runtime": platform.runtime}
    if facts.numa_node_cores is not None and facts.numa_node_memory is not None:
        p["numa_node"] = {"cores": facts.numa_node_cores, "memory": facts.numa_node_memory}
    if facts.smt is not None:
        p["smt"] = facts.smt
    if facts.node_logical_cpus is not None:
        p["node_logical_cpus"] = facts.node_logical_cpus
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
    p["kubelet"] = {"cpu_manager_policy": platform.kubelet.cpu_manager_policy or "none"}
    p["cfs"] = {"period_us": CFS_PERIOD_US, "slice_us": CFS_SLICE_US}
    namespaces = {
        ns: {"container_defaults": {"request": _resources(d.request, "request"), "limit": _resources(d.limit, "limit")}}
        for ns, d in facts.limit_ranges
    }
    return {
        "platform": p,
        "namespaces": namespaces,
        "options": {rule: dict(values) for rule, values in sorted((options or {}).items()) if values},
    }


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
        "node pools: spec.nodePools in the platform, or a TanzuKubernetesCluster or Cluster API Cluster among the manifests",
    ),
    "node-logical-cpus": (
        lambda f: f.node_logical_cpus is not None,
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


def missing_fact(facts: Facts, requires: Sequence[str]) -> str | None:
    """The hint for the first fact of ``requires`` this run lacks, or None when it has them all."""
    for name in requires:
        has, hint = REQUIREMENTS[name]
        if not has(facts):
            return hint
    return None
