"""A Platform profile from a snapshot of a cluster's nodes (``podfit platform import``).

Input: the documents of ``kubectl get nodes -o yaml`` (or ``-o json``, a ``List`` or single
``Node`` objects), optionally those of ``kubectl get pods -A -o yaml``. Output: a profile document
(``kind: Platform``) that validates against ``schemas/platform.schema.json``.

Nodes are grouped into pools by the label that defines a pool on their platform, first found:

=============  =====================================================================
EKS            ``eks.amazonaws.com/nodegroup`` (managed node groups), ``alpha.eksctl.io/nodegroup-name``
GKE            ``cloud.google.com/gke-nodepool``
AKS            ``kubernetes.azure.com/agentpool``, ``agentpool``
Karpenter      ``karpenter.sh/nodepool``, ``karpenter.sh/provisioner-name`` (before v0.32)
kOps           ``kops.k8s.io/instancegroup``
Cluster API    ``cluster.x-k8s.io/deployment-name``; else the node's ``cluster.x-k8s.io/owner-name``
               annotation (its MachineSet, the MachineDeployment's name and a hash) less the hash
OpenShift      the node's ``machine.openshift.io/machine`` annotation (``openshift-machine-api/``
               and its Machine's name): a MachineSet's Machine less its 5-character suffix (the
               MachineSet, ``<infra>-worker-us-east-1a``), a control plane's less its index
=============  =====================================================================

and otherwise by instance type (``node.kubernetes.io/instance-type``). A pool whose nodes differ in
instance type or capacity (a Karpenter NodePool spanning instance families) becomes one pool per
shape, named ``<pool>-<instance type>``; one whose nodes lie in several zones
(``topology.kubernetes.io/zone``) one pool per zone, named ``<pool>-<zone>``, each with its zone label. Each pool records its nodes' count, their shape as a VM
class (capacity), what the kubelet offers pods (``allocatable``), the labels and taints every node
of the pool carries (per-node and transient ones left out), the kubelet version, and, with pods,
the requests of the DaemonSet and static (mirror) pods on its busiest node (``systemPods``) and the
other kube-system (and OpenShift ``openshift-*``) pods its nodes run (``reservedPods``: coredns, metrics-server, each by the
workload that made it, with its count in the pool and one pod's requests), which packing places on
the pool before the checked workloads.

NODES may also be the directory ``kubectl cluster-info dump --output-directory DIR`` writes: its
``nodes.json``, and the ``pods.json`` of each namespace directory as the pods.

Nodes do not show the hosts under them, their NUMA layout or (except through a few distributions'
labels) the kubelet's CPU Manager policy: :data:`LEFT_FOR_THE_USER` lists what the profile leaves
out, and the CLI prints it. Pure: text in, document out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .platform import DEFAULT_VM_CLASSES, is_extended_resource
from .quantity import QuantityError, format_cpu, format_memory, parse_cpu, parse_memory
from .yamlio import iter_documents

__all__ = [
    "NodeImportError",
    "NodeInfo",
    "ImportedPool",
    "Imported",
    "POOL_LABELS",
    "LEFT_FOR_THE_USER",
    "parse_objects",
    "node_infos",
    "system_pods_per_node",
    "reserved_pods_per_node",
    "import_platform",
    "profile_document",
]

# (provider, label) in the order they are tried
POOL_LABELS: tuple[tuple[str, str], ...] = (
    ("eks", "eks.amazonaws.com/nodegroup"),
    ("eks", "alpha.eksctl.io/nodegroup-name"),
    ("gke", "cloud.google.com/gke-nodepool"),
    ("aks", "kubernetes.azure.com/agentpool"),
    ("aks", "agentpool"),
    ("karpenter", "karpenter.sh/nodepool"),
    ("karpenter", "karpenter.sh/provisioner-name"),
    ("kops", "kops.k8s.io/instancegroup"),
    ("cluster-api", "cluster.x-k8s.io/deployment-name"),
)
CAPI_OWNER = "cluster.x-k8s.io/owner-name"
OPENSHIFT_MACHINE = "machine.openshift.io/machine"
CAPI_OWNER_KIND = "cluster.x-k8s.io/owner-kind"
CAPI_CLUSTER = "cluster.x-k8s.io/cluster-name"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
BETA_INSTANCE_TYPE = "beta.kubernetes.io/instance-type"
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
CONTROL_PLANE_TAINTS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")

# labels that differ per node (or per hour) even when the pool's nodes are alike; the zone label is
# every pool's, as pools are split per zone
PER_NODE_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "kubernetes.azure.com/node-image-version",
        "eks.amazonaws.com/nodegroup-image",
        "cloud.google.com/gke-nodepool-version",
        "karpenter.sh/registered",
        "karpenter.sh/initialized",
        "node.kubernetes.io/exclude-from-external-load-balancers",
    }
)
# taints the node lifecycle puts on and takes off: not a property of the pool
TRANSIENT_TAINTS = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cluster.x-k8s.io/uninitialized",
        "karpenter.sh/unregistered",
        "karpenter.sh/disrupted",
        "karpenter.sh/disruption",
        "ToBeDeletedByClusterAutoscaler",
        "DeletionCandidateOfClusterAutoscaler",
    }
)
# labels through which some distributions show the CPU Manager policy (nodes do not otherwise)
CPU_MANAGER_LABELS: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("cpumanager", {"true": "static", "false": "none"}),  # OpenShift's documented convention
)

LEFT_FOR_THE_USER = (
    "spec.hosts: the hosts under the nodes (sockets, cores, NUMA nodes, memory); without them the NUMA",
    "  rules (PF301, PF302) and the vSphere capacity rules (PF5xx) stay skipped",
    "spec.ha: vSphere HA admission control, if the nodes run on vSphere",
    "spec.kubelet.cpuManagerPolicy, unless written below: nodes do not show it",
    "  (`kubectl get --raw /api/v1/nodes/NODE/proxy/configz` does)",
    "spec.nodePools[].maxCount: a node group's cluster-autoscaler maximum, for PF606",
)


class NodeImportError(ValueError):
    """Input that is not a node (or pod) list; the message names the file and what is wrong."""


@dataclass(frozen=True)
class NodeInfo:
    name: str
    provider: str  # which label (or rule) made its pool: eks, gke, aks, karpenter, kops, cluster-api, ""
    pool: str  # the pool it belongs to (before splitting by shape)
    cluster: str
    instance_type: str
    role: str  # worker | control-plane
    capacity_cpu: int
    capacity_memory: int
    allocatable_cpu: int
    allocatable_memory: int
    allocatable_pods: int
    labels: tuple[tuple[str, str], ...]
    taints: tuple[tuple[str, str, str], ...]  # (key, value, effect)
    os: str
    arch: str
    kubelet_version: str
    cpu_manager_policy: str | None
    tanzu: bool  # a vSphere with Tanzu / TKG node
    extended: tuple[tuple[str, int], ...] = ()  # extended resources in allocatable (nvidia.com/gpu, …)


@dataclass(frozen=True)
class ImportedPool:
    name: str
    provider: str
    cluster: str
    role: str
    vm_class: str
    count: int
    capacity_cpu: int
    capacity_memory: int
    allocatable_cpu: int
    allocatable_memory: int
    allocatable_pods: int
    labels: tuple[tuple[str, str], ...]
    taints: tuple[tuple[str, str, str], ...]
    kubelet_versions: tuple[str, ...]
    system_cpu: int = 0  # DaemonSet and static pods' requests on the pool's busiest node
    system_memory: int = 0
    system_pods: int = 0
    nodes: tuple[str, ...] = ()
    # the cluster's own pods (kube-system, openshift-*) that are no DaemonSet's or static: (name,
    # count in the pool, cpu, memory of one)
    reserved: tuple[tuple[str, int, int, int], ...] = ()
    # extended resources each node of the pool offers (the least of its nodes; left out where one has none)
    extended: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Imported:
    pools: tuple[ImportedPool, ...]
    runtime: str
    cpu_manager_policy: str | None  # when every node shows the same one
    notes: tuple[str, ...]  # what the user should know (skipped nodes, pods not on any node)


def parse_objects(text: str, source: str, kind: str) -> list[Mapping[str, Any]]:
    """The objects of ``kind`` in YAML/JSON text: ``List`` items, ``<Kind>List`` items or single objects."""
    out: list[Mapping[str, Any]] = []
    try:
        docs = [d.data for d in iter_documents(text) if d.data is not None]
    except Exception as e:  # yaml.YAMLError, YamlLimitError
        raise NodeImportError(f"{source}: cannot parse: {getattr(e, 'problem', None) or e}") from None

    def take(obj: Any, implied: str | None = None) -> None:
        if not isinstance(obj, Mapping):
            return
        list_kind = str(obj.get("kind", ""))
        if isinstance(obj.get("items"), list) and list_kind.endswith("List"):
            # the API server's list responses (`kubectl get --raw /api/v1/nodes`, client libraries,
            # `kubectl cluster-info dump`) leave the items' kind out: a NodeList's items are Nodes
            inner = list_kind[: -len("List")] or None
            for item in obj["items"]:
                take(item, inner)
        elif obj.get("kind", implied) == kind:
            out.append(obj if "kind" in obj else {**obj, "kind": kind})

    for d in docs:
        take(d)
    return out


def _qty(parse: Any, mapping: Mapping[str, Any], key: str, where: str) -> int:
    if key not in mapping:
        raise NodeImportError(f"{where}: no {key}")
    try:
        return int(parse(mapping[key]))
    except QuantityError as e:
        value = repr(e.value) if len(repr(e.value)) <= 40 else repr(e.value)[:37] + "..."
        raise NodeImportError(f"{where}: {key}: {value} is not a valid quantity: {e.reason}") from None


def _least_extended(members: Sequence[NodeInfo]) -> tuple[tuple[str, int], ...]:
    """The extended resources every node of a pool offers, each at the least any node offers."""
    offers = [dict(n.extended) for n in members]
    names = set().union(*offers) if offers else set()
    least = {r: min(o.get(r, 0) for o in offers) for r in names}
    return tuple(sorted((r, v) for r, v in least.items() if v > 0))


def _strip_hash(name: str) -> str:
    """A MachineSet's name less the hash suffix its MachineDeployment added (``workers-7f9c8d6b5b``)."""
    return re.sub(r"-[a-z0-9]{5,10}$", "", name)


def _machine_set(machine: str) -> str:
    """The pool of an OpenShift Machine (``openshift-machine-api/<name>``): a MachineSet's Machine
    is the MachineSet's name and a 5-character suffix (``ocp-7x2kq-worker-us-east-1a-9bxqk``), a
    control-plane Machine ``<infra>-master-<index>`` (or, under a ControlPlaneMachineSet,
    ``<infra>-master-<hash>-<index>``): both less what differs per Machine."""
    name = machine.rsplit("/", 1)[-1]
    if re.search(r"-master(-[a-z0-9]{5})?-\d+$", name):
        return re.sub(r"(-[a-z0-9]{5})?-\d+$", "", name)
    return re.sub(r"-[a-z0-9]{5}$", "", name)


def node_infos(nodes: Sequence[Mapping[str, Any]], source: str) -> list[NodeInfo]:
    out = []
    for i, n in enumerate(nodes):
        meta = n.get("metadata") or {}
        name = str(meta.get("name") or f"items[{i}]")
        where = f"{source}: node {name}"
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        status = n.get("status") or {}
        cap = status.get("capacity") or {}
        alloc = status.get("allocatable") or {}
        info = status.get("nodeInfo") or {}
        provider, pool = "", ""
        for prov, key in POOL_LABELS:
            if labels.get(key):
                provider, pool = prov, labels[key]
                break
        if not pool and annotations.get(CAPI_OWNER):
            provider = "cluster-api"
            pool = (
                annotations[CAPI_OWNER]
                if annotations.get(CAPI_OWNER_KIND) == "KubeadmControlPlane"
                else _strip_hash(annotations[CAPI_OWNER])
            )
        if not pool and annotations.get(OPENSHIFT_MACHINE):
            provider, pool = "openshift", _machine_set(annotations[OPENSHIFT_MACHINE])
        instance = labels.get(INSTANCE_TYPE) or labels.get(BETA_INSTANCE_TYPE) or ""
        role = "control-plane" if any(k in labels for k in CONTROL_PLANE_LABELS) else "worker"
        taints = tuple(
            (str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
            for t in (n.get("spec") or {}).get("taints") or ()
            if isinstance(t, Mapping) and t.get("key") not in TRANSIENT_TAINTS
        )
        if any(t[0] in CONTROL_PLANE_TAINTS and t[2] == "NoSchedule" for t in taints):
            role = "control-plane"
        policy = None
        for key, values in CPU_MANAGER_LABELS:
            if labels.get(key) in values:
                policy = values[labels[key]]
        capacity_cpu = _qty(parse_cpu, cap, "cpu", where + " status.capacity")
        out.append(
            NodeInfo(
                name=name,
                provider=provider,
                pool=pool,
                cluster=annotations.get(CAPI_CLUSTER) or labels.get("alpha.eksctl.io/cluster-name") or "",
                instance_type=instance,
                role=role,
                capacity_cpu=capacity_cpu,
                capacity_memory=_qty(parse_memory, cap, "memory", where + " status.capacity"),
                allocatable_cpu=_qty(parse_cpu, alloc, "cpu", where + " status.allocatable"),
                allocatable_memory=_qty(parse_memory, alloc, "memory", where + " status.allocatable"),
                allocatable_pods=_qty(parse_memory, alloc, "pods", where + " status.allocatable")
                if "pods" in alloc
                else 110,
                labels=tuple(sorted(labels.items())),
                taints=taints,
                os=labels.get("kubernetes.io/os") or str(info.get("operatingSystem") or "linux"),
                arch=labels.get("kubernetes.io/arch") or str(info.get("architecture") or "amd64"),
                kubelet_version=str(info.get("kubeletVersion") or ""),
                cpu_manager_policy=policy,
                tanzu=any(k.startswith("run.tanzu.vmware.com/") for k in labels),
                extended=tuple(
                    sorted(
                        (str(k), _qty(parse_memory, alloc, k, where + " status.allocatable"))
                        for k in alloc
                        if is_extended_resource(str(k))
                    )
                ),
            )
        )
    return out


def _owner(pod: Mapping[str, Any]) -> tuple[str, str]:
    """The pod's controller: (kind, name); ("", "") for none."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller", True):
            return str(ref.get("kind", "")), str(ref.get("name", ""))
    return "", ""


def _owner_kind(pod: Mapping[str, Any]) -> str:
    return _owner(pod)[0]


def _running(pod: Mapping[str, Any]) -> bool:
    """Whether the pod holds its requests: not finished (Succeeded, Failed)."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _is_system(pod: Mapping[str, Any]) -> bool:
    """A DaemonSet's pod or a static (mirror) pod: on every node, counted in ``systemPods``."""
    mirror = "kubernetes.io/config.mirror" in ((pod.get("metadata") or {}).get("annotations") or {})
    return mirror or _owner_kind(pod) == "DaemonSet"


def _requests(pods: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Each pod's effective (CPU, memory) request, as podfit computes it for every workload."""
    from .loader import make_object
    from .workloads import build_workloads

    workloads, problems = build_workloads([make_object(p, "pods") for p in pods], {})
    if problems:
        raise NodeImportError(f"pods: {problems[0].object}: {problems[0].message}")
    return [(w.pod.cpu_request, w.pod.memory_request) for w in workloads]


def _made_by(pod: Mapping[str, Any]) -> str:
    """The name of the workload that made the pod: a ReplicaSet's Deployment (its name less the
    pod-template-hash), else the controller, else the pod itself."""
    kind, name = _owner(pod)
    meta = pod.get("metadata") or {}
    if kind == "ReplicaSet":
        h = str((meta.get("labels") or {}).get("pod-template-hash") or "")
        if h and name.endswith("-" + h):
            return name[: -len(h) - 1]
        return re.sub(r"-[bcdfghjklmnpqrstvwxz0-9]{1,10}$", "", name)
    return name or str(meta.get("name") or "")


RESERVED_NAMESPACE = "kube-system"
# OpenShift runs its own workloads (router, registry, monitoring, operators) in openshift-*
# namespaces, which users cannot create
RESERVED_PREFIX = "openshift-"


def _cluster_namespace(ns: Any) -> bool:
    return ns == RESERVED_NAMESPACE or (isinstance(ns, str) and ns.startswith(RESERVED_PREFIX))


def reserved_pods_per_node(pods: Sequence[Mapping[str, Any]]) -> dict[str, list[tuple[str, int, int]]]:
    """Per node name: the cluster's own pods that are neither a DaemonSet's nor static (coredns,
    metrics-server in kube-system; OpenShift's router, registry and Prometheus in openshift-*
    namespaces), each as (workload name, CPU, memory requested): the cluster runs them whatever is
    deployed, on some of the pool's nodes, not on every one. Pods that have finished or are on no
    node yet are left out; pods of other namespaces are the user's, as the manifests may hold them."""
    chosen = [
        p
        for p in pods
        if _cluster_namespace((p.get("metadata") or {}).get("namespace"))
        and _running(p)
        and not _is_system(p)
        and (p.get("spec") or {}).get("nodeName")
    ]
    per: dict[str, list[tuple[str, int, int]]] = {}
    for p, (cpu, mem) in zip(chosen, _requests(chosen), strict=True):
        per.setdefault(str(p["spec"]["nodeName"]), []).append((_made_by(p), cpu, mem))
    return per


def system_pods_per_node(pods: Sequence[Mapping[str, Any]]) -> tuple[dict[str, tuple[int, int, int]], int]:
    """Per node name: (CPU, memory, pod count) requested by its DaemonSet and static (mirror) pods,
    the pods every node of a pool runs whatever is deployed; and how many such pods name no node.
    Finished pods (Succeeded, Failed) hold nothing. A pod's request is Kubernetes' effective one, as
    podfit computes it for every workload (max of the containers and init containers, plus overhead)."""
    system = []
    unplaced = 0
    for p in pods:
        if not _running(p) or not _is_system(p):
            continue
        if not (p.get("spec") or {}).get("nodeName"):
            unplaced += 1
            continue
        system.append(p)
    per: dict[str, tuple[int, int, int]] = {}
    for p, (cpu, mem) in zip(system, _requests(system), strict=True):
        node = str(p["spec"]["nodeName"])
        c, m, n = per.get(node, (0, 0, 0))
        per[node] = (c + cpu, m + mem, n + 1)
    return per, unplaced


def _common_labels(nodes: Sequence[NodeInfo]) -> tuple[tuple[str, str], ...]:
    common = dict(nodes[0].labels)
    for n in nodes[1:]:
        mine = dict(n.labels)
        common = {k: v for k, v in common.items() if mine.get(k) == v}
    return tuple(sorted((k, v) for k, v in common.items() if k not in PER_NODE_LABELS))


def _common_taints(nodes: Sequence[NodeInfo]) -> tuple[tuple[str, str, str], ...]:
    common = set(nodes[0].taints)
    for n in nodes[1:]:
        common &= set(n.taints)
    return tuple(t for t in nodes[0].taints if t in common)


def import_platform(
    nodes: Sequence[NodeInfo],
    system: Mapping[str, tuple[int, int, int]] | None = None,
    reserved: Mapping[str, Sequence[tuple[str, int, int]]] | None = None,
) -> Imported:
    """Group the nodes into pools (see the module docstring). ``system`` is
    :func:`system_pods_per_node`'s per-node requests and ``reserved``
    :func:`reserved_pods_per_node`'s pods, when pods were given."""
    groups: dict[tuple[str, str, str, str, int, int], list[NodeInfo]] = {}
    for n in nodes:
        base = n.pool or n.instance_type or f"{format_cpu(n.capacity_cpu)}cpu-{format_memory(n.capacity_memory)}"
        key = (n.cluster, base, n.role, n.instance_type, n.capacity_cpu, n.capacity_memory)
        groups.setdefault(key, []).append(n)
    shapes_of: dict[tuple[str, str, str], int] = {}
    for cluster, base, role, *_ in groups:
        shapes_of[(cluster, base, role)] = shapes_of.get((cluster, base, role), 0) + 1
    split: list[tuple[str, tuple[str, str, str, int, int], list[NodeInfo], list[NodeInfo]]] = []
    for (cluster, base, role, instance, cap_cpu, cap_mem), shaped in groups.items():
        name = base
        if shapes_of[(cluster, base, role)] > 1:  # one pool per shape: the profile gives a pool one VM class
            name = f"{base}-{instance or f'{format_cpu(cap_cpu)}cpu-{format_memory(cap_mem)}'}"
        by_zone: dict[str, list[NodeInfo]] = {}
        for n in shaped:
            by_zone.setdefault(_zone(n), []).append(n)
        for zone, members in by_zone.items():
            # one pool per zone: the pool keeps its zone label, so zone-pinned pods and zone spread
            # see where its nodes are
            zoned = f"{name}-{zone}" if zone and len(by_zone) > 1 else name
            split.append((zoned, (cluster, role, instance, cap_cpu, cap_mem), members, shaped))
    pools = []
    for name, (cluster, role, instance, cap_cpu, cap_mem), members, shaped in split:
        # the DaemonSet and static pods of the group's busiest node, in every zone: the group's
        # nodes run the same DaemonSets (a node without them in the snapshot is still starting)
        sys_of = [system.get(n.name, (0, 0, 0)) for n in shaped] if system else [(0, 0, 0)]
        pools.append(
            ImportedPool(
                name=name,
                provider=members[0].provider,
                cluster=cluster,
                role=role,
                vm_class=_vm_class_name(instance, cap_cpu, cap_mem),
                count=len(members),
                capacity_cpu=cap_cpu,
                capacity_memory=cap_mem,
                # the least any node of the pool offers: a pod placed by the profile fits every node
                allocatable_cpu=min(n.allocatable_cpu for n in members),
                allocatable_memory=min(n.allocatable_memory for n in members),
                allocatable_pods=min(n.allocatable_pods for n in members),
                labels=_common_labels(members),
                taints=_common_taints(members),
                kubelet_versions=tuple(sorted({n.kubelet_version for n in members if n.kubelet_version})),
                system_cpu=max(s[0] for s in sys_of),
                system_memory=max(s[1] for s in sys_of),
                system_pods=max(s[2] for s in sys_of),
                nodes=tuple(n.name for n in members),
                reserved=_reserved_of(members, reserved or {}),
                extended=_least_extended(members),
            )
        )
    pools.sort(key=lambda p: (p.cluster, p.role != "control-plane", p.name))
    policies = {n.cpu_manager_policy for n in nodes}
    notes = []
    if len(policies) > 1:
        notes.append("the nodes show different CPU Manager policies; spec.kubelet.cpuManagerPolicy left unset")
    return Imported(
        pools=tuple(pools),
        runtime="tkg" if nodes and all(n.tanzu for n in nodes) else "kubernetes",
        cpu_manager_policy=next(iter(policies)) if len(policies) == 1 else None,
        notes=tuple(notes),
    )


ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def _zone(node: NodeInfo) -> str:
    labels = dict(node.labels)
    return next((labels[k] for k in ZONE_LABELS if labels.get(k)), "")


def _reserved_of(
    members: Sequence[NodeInfo], reserved: Mapping[str, Sequence[tuple[str, int, int]]]
) -> tuple[tuple[str, int, int, int], ...]:
    """The pool's reserved pods by workload: (name, count, CPU, memory of one pod; the largest
    request when its pods differ)."""
    by: dict[str, tuple[int, int, int]] = {}
    for n in members:
        for name, cpu, mem in reserved.get(n.name, ()):
            count, c, m = by.get(name, (0, 0, 0))
            by[name] = (count + 1, max(c, cpu), max(m, mem))
    return tuple((name, *by[name]) for name in sorted(by))


def _vm_class_name(instance: str, cpu: int, memory: int) -> str:
    return instance or f"{format_cpu(cpu)}cpu-{format_memory(memory)}"


_DEFAULT_CLASSES = {c.name: c for c in DEFAULT_VM_CLASSES}


def _whole_cpus(millicores: int) -> int:
    return -(-millicores // 1000)


def profile_document(imported: Imported, name: str, source: str) -> dict[str, Any]:
    """The Platform profile document for ``imported`` (quantities written exactly)."""
    classes: dict[str, dict[str, Any]] = {}
    for p in imported.pools:
        known = _DEFAULT_CLASSES.get(p.vm_class)
        if known is not None:
            continue  # a vSphere with Tanzu class: its nominal size, the nodes' real one is in allocatable
        classes.setdefault(
            p.vm_class,
            {
                "name": p.vm_class,
                "cpus": _whole_cpus(p.capacity_cpu),
                "memory": format_memory(p.capacity_memory),
                "reserved": False,
            },
        )
    pools_doc = []
    for p in imported.pools:
        d: dict[str, Any] = {"name": p.name}
        if p.cluster:
            d["cluster"] = p.cluster
        if p.role != "worker":
            d["role"] = p.role
        d["vmClass"] = p.vm_class
        d["count"] = p.count
        d["allocatable"] = {
            "cpu": format_cpu(p.allocatable_cpu),
            "memory": format_memory(p.allocatable_memory),
            "pods": p.allocatable_pods,
        }
        for r, v in p.extended:
            d["allocatable"][r] = str(v)
        if p.system_pods:
            d["systemPods"] = {
                "cpu": format_cpu(p.system_cpu),
                "memory": format_memory(p.system_memory),
                "pods": p.system_pods,
            }
        if p.reserved:
            d["reservedPods"] = [
                {"name": n, "count": count, "cpu": format_cpu(cpu), "memory": format_memory(mem)}
                for n, count, cpu, mem in p.reserved
            ]
        if len(p.kubelet_versions) == 1:
            d["kubeletVersion"] = p.kubelet_versions[0]
        elif p.kubelet_versions:
            d["kubeletVersion"] = ", ".join(p.kubelet_versions)
        if p.labels:
            d["labels"] = dict(p.labels)
        if p.taints:
            d["taints"] = [{"key": k, **({"value": v} if v else {}), "effect": e} for k, v, e in p.taints]
        pools_doc.append(d)
    spec: dict[str, Any] = {"runtime": imported.runtime}
    if classes:
        spec["vmClasses"] = list(classes.values())
    spec["nodePools"] = pools_doc
    kubelet: dict[str, Any] = {"maxPods": min((p.allocatable_pods for p in imported.pools), default=110)}
    if imported.cpu_manager_policy is not None:
        kubelet["cpuManagerPolicy"] = imported.cpu_manager_policy
    spec["kubelet"] = kubelet
    return {
        "apiVersion": "podfit.io/v1alpha1",
        "kind": "Platform",
        "metadata": {
            "name": name,
            "description": f"Imported from {source} by `podfit platform import`. Not visible on nodes, left "
            "for you to add: spec.hosts (sockets, cores, NUMA nodes), spec.ha"
            + ("" if imported.cpu_manager_policy is not None else ", spec.kubelet.cpuManagerPolicy")
            + ".",
        },
        "spec": spec,
    }


def node_names(pools: Iterable[ImportedPool]) -> dict[str, str]:
    """Node name → the pool it went to."""
    return {n: p.name for p in pools for n in p.nodes}
