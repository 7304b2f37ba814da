"""Node pools declared by cluster manifests in the input.

Reads TanzuKubernetesCluster (run.tanzu.vmware.com v1alpha1, v1alpha2, v1alpha3) and Cluster API
``Cluster`` objects with a ``topology`` (vmClass given as a cluster variable, or as a
per-machine-deployment override) into :class:`~podfit.platform.NodePool` values. Pure.

Node labels and taints: a TKC node pool's ``labels`` and ``taints``; for a Cluster API machine
deployment, the ``nodePoolLabels`` / ``nodePoolTaints`` variables (the vSphere with Tanzu
ClusterClass's; per machine deployment in ``variables.overrides``, else the cluster's) and those of
its ``metadata.labels`` that Cluster API copies from Machines to Nodes (the
``node-role.kubernetes.io/`` prefix and the ``node-restriction.kubernetes.io`` and
``node.cluster.x-k8s.io`` domains; other Machine labels never reach the Node).

A topology's machine pools (``workers.machinePools``) are read as its machine deployments are.

The cluster autoscaler's maximum of a Cluster API machine deployment (or machine pool): its
``cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size`` annotation (``NodePool.max_count``);
a machine deployment without ``replicas`` under the autoscaler starts at its ``...-min-size``, as
Cluster API's MachineDeployment webhook defaults it. The autoscaler's Cluster API provider watches
only node groups with both annotations, so one alone is no maximum. A machine deployment at 0
replicas (or a min-size of 0) with a maximum is a pool the autoscaler scales from zero
(``NodePool.scales_from_zero``). A TanzuKubernetesCluster's node pools have no field for
annotations (v1alpha2/v1alpha3 CRD schemas in ``schemas/crds``: labels, taints, replicas, vmClass,
…), so they declare no autoscaler range and podfit reads none there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .cloud import CloudError, InstanceType, instance_types, lookup
from .model import K8sObject
from .platform import MAX_NODES, NodePool, Taint, instance_pool
from .quantity import QuantityError, parse_cpu, parse_memory

__all__ = ["node_pools_from_objects", "cluster_objects", "is_critical", "pool_fields"]

TKC_KIND = "TanzuKubernetesCluster"


def _m(x: Any) -> Mapping[str, Any]:
    return x if isinstance(x, dict) else {}


def _seq(x: Any) -> list[Any]:
    """A list field, or nothing when the manifest gives something else (an int, a bool, a string:
    PF902 reports the type; the pools are read from what is a list)."""
    return x if isinstance(x, list) else []


def _count(x: Any, default: int = 1) -> int:
    """A pool's node count as written, at most MAX_NODES (Kubernetes' nodes per cluster): a
    TanzuKubernetesCluster above it is PF902 (its schema's maximum), and no count makes the
    analyses hold more nodes than a cluster can have."""
    return min(x, MAX_NODES) if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else default


Path = tuple[str | int, ...]
EKSCTL_KIND = "ClusterConfig"


def is_eksctl(obj: K8sObject) -> bool:
    return obj.kind == EKSCTL_KIND and obj.ref.api_version.startswith("eksctl.io/")


def is_karpenter(obj: K8sObject) -> bool:
    """A Karpenter NodePool (karpenter.sh): a pool of the cluster holding it, declaring no cluster."""
    return obj.kind == "NodePool" and obj.ref.api_version.startswith("karpenter.sh/")


def cluster_objects(objects: Iterable[K8sObject]) -> list[K8sObject]:
    return [
        o
        for o in objects
        if o.kind == TKC_KIND
        or (o.kind == "Cluster" and o.ref.api_version.startswith("cluster.x-k8s.io/"))
        or is_eksctl(o)
    ]


def is_machine_deployment(obj: K8sObject) -> bool:
    """A Cluster API MachineDeployment of its own (outside a ClusterClass topology)."""
    return obj.kind == "MachineDeployment" and obj.ref.api_version.startswith("cluster.x-k8s.io/")


def pool_objects(objects: Iterable[K8sObject]) -> list[K8sObject]:
    """Objects that add node pools without declaring a cluster: Karpenter NodePools (to the cluster
    holding them), Cluster API MachineDeployments (to their ``spec.clusterName``)."""
    return [o for o in objects if is_karpenter(o) or is_machine_deployment(o)]


def is_critical(obj: K8sObject) -> bool:
    return (obj.annotation("podfit.io/critical") or "").lower() in ("true", "yes", "1")


def _labels(x: Any) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), "" if v is None else str(v)) for k, v in _m(x).items()))


_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taints(x: Any) -> tuple[Taint, ...]:
    """A list of ``{key, value, effect}`` (a Node's spec.taints); entries without a key or a known
    effect are left out (the API server rejects them)."""
    out = []
    for t in x if isinstance(x, list) else ():
        t = _m(t)
        if t.get("key") and t.get("effect") in _EFFECTS:
            out.append(Taint(str(t["key"]), "" if t.get("value") is None else str(t["value"]), t["effect"]))
    return tuple(out)


def _synced_to_node(key: str) -> bool:
    """Whether Cluster API copies a Machine label with this key to the Node."""
    prefix, _, _ = key.rpartition("/")
    return (
        key.startswith("node-role.kubernetes.io/")
        or prefix in ("node-restriction.kubernetes.io", "node.cluster.x-k8s.io")
        or prefix.endswith((".node-restriction.kubernetes.io", ".node.cluster.x-k8s.io"))
    )


def _tkc_pools(obj: K8sObject) -> list[NodePool]:
    topo = _m(_m(obj.raw.get("spec")).get("topology"))
    name = obj.ref.name
    pools = []
    cp = _m(topo.get("controlPlane"))
    cp_class = cp.get("vmClass") or cp.get("class")
    if cp_class:
        pools.append(
            NodePool(
                str(cp_class),
                _count(cp.get("replicas", cp.get("count"))),
                f"{name}-control-plane",
                name,
                "control-plane",
                (),
                obj.location_at(("spec", "topology", "controlPlane")),
            )
        )
    workers = _m(topo.get("workers"))  # v1alpha1
    if workers.get("class"):
        pools.append(
            NodePool(
                str(workers["class"]),
                _count(workers.get("count")),
                f"{name}-workers",
                name,
                "worker",
                (),
                obj.location_at(("spec", "topology", "workers")),
            )
        )
    for i, np in enumerate(_seq(topo.get("nodePools"))):
        np = _m(np)
        cls = np.get("vmClass") or np.get("class")
        if cls:
            pools.append(
                NodePool(
                    str(cls),
                    _count(np.get("replicas")),
                    str(np.get("name") or f"pool-{i}"),
                    name,
                    "worker",
                    _labels(np.get("labels")),
                    obj.location_at(("spec", "topology", "nodePools", i)),
                    taints=_taints(np.get("taints")),
                )
            )
    return pools


def _var(variables: Any, key: str) -> Any:
    for v in _seq(variables):
        if isinstance(v, dict) and v.get("name") == key:
            return v.get("value")
    return None


AUTOSCALER_MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
AUTOSCALER_MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"


def _size(annotations: Mapping[str, Any], key: str) -> int | None:
    """An autoscaler size annotation (a decimal string), at most MAX_NODES; None when absent or not
    a count (the autoscaler then ignores the node group)."""
    v = annotations.get(key)
    if isinstance(v, str) and v.strip().isdigit() and v.strip().isascii():
        return min(int(v), MAX_NODES)
    return None


def _capi_pools(obj: K8sObject) -> list[NodePool]:
    topo = _m(_m(obj.raw.get("spec")).get("topology"))
    name = obj.ref.name
    default_class = _var(topo.get("variables"), "vmClass")
    pools = []
    cp = _m(topo.get("controlPlane"))
    cp_class = _var(_m(cp.get("variables")).get("overrides"), "vmClass") or default_class
    if cp_class and cp:
        pools.append(
            NodePool(
                str(cp_class),
                _count(cp.get("replicas")),
                f"{name}-control-plane",
                name,
                "control-plane",
                (),
                obj.location_at(("spec", "topology", "controlPlane")),
            )
        )
    cluster_labels = _var(topo.get("variables"), "nodePoolLabels")
    cluster_taints = _var(topo.get("variables"), "nodePoolTaints")
    for group, i, md in _worker_groups(topo):
        overrides = _m(md.get("variables")).get("overrides")
        cls = _var(overrides, "vmClass") or default_class
        if cls:
            labels = {k: v for k, v in _labels(_m(md.get("metadata")).get("labels")) if _synced_to_node(k)}
            var_labels = _var(overrides, "nodePoolLabels")
            for item in _seq(var_labels if var_labels is not None else cluster_labels):
                item = _m(item)
                if item.get("key"):
                    labels[str(item["key"])] = "" if item.get("value") is None else str(item["value"])
            var_taints = _var(overrides, "nodePoolTaints")
            annotations = _m(_m(md.get("metadata")).get("annotations"))
            most, least = _size(annotations, AUTOSCALER_MAX), _size(annotations, AUTOSCALER_MIN)
            if most is None or least is None:  # the autoscaler watches a node group with both
                most = least = None
            pools.append(
                NodePool(
                    str(cls),
                    _count(md.get("replicas"), 1 if least is None else least),
                    _md_name(md, i, group),
                    name,
                    "worker",
                    tuple(sorted(labels.items())),
                    obj.location_at(("spec", "topology", "workers", group, i)),
                    taints=_taints(var_taints if var_taints is not None else cluster_taints),
                    max_count=most,
                )
            )
    return pools


def node_pools_from_objects(objects: Iterable[K8sObject], context: Iterable[K8sObject] = ()) -> list[NodePool]:
    """The node pools each cluster manifest declares: at most MAX_NODES of one manifest, as a
    cluster holds no more nodes (PF902 reports a TanzuKubernetesCluster with more pools). Packing's
    work grows with the square of the pools, so a manifest of 20,000 one-node pools ran for minutes.
    ``context``: the other objects of the run, where a MachineDeployment's machine template is
    looked up (``objects`` themselves too)."""
    pools: list[NodePool] = []
    objects = list(objects)
    templates = machine_templates(objects + list(context))
    for obj in cluster_objects(objects) + pool_objects(objects):
        if obj.kind == TKC_KIND:
            found = _tkc_pools(obj)
        elif is_eksctl(obj):
            found = eksctl_pools(obj)
        elif is_karpenter(obj):
            found = karpenter_pools(obj)
        elif is_machine_deployment(obj):
            found = machine_deployment_pools(obj, templates)
        else:
            found = _capi_pools(obj)
        pools.extend(found[:MAX_NODES])
    return pools


def pool_fields(obj: K8sObject, pool_name: str) -> tuple[Path, Path | None] | str:
    """Where a pool of a cluster manifest sets its VM class and its node count (paths from the
    object's root; the count path is None for a control plane, whose size is etcd's quorum and not
    a capacity choice), or why the class cannot be changed for this pool alone."""
    topo = _m(_m(obj.raw.get("spec")).get("topology"))
    base: Path = ("spec", "topology")
    if is_eksctl(obj) or is_karpenter(obj) or is_machine_deployment(obj):
        return f"{obj.ref} names instance types, not VM classes: podfit fix does not change them"
    if pool_name == f"{obj.ref.name}-control-plane":
        cp = _m(topo.get("controlPlane"))
        if obj.kind == TKC_KIND:
            return base + ("controlPlane", "vmClass" if "vmClass" in cp else "class"), None
        overrides = _m(cp.get("variables")).get("overrides")
        cls = _var_path(overrides, "vmClass")
        if cls is not None:
            return base + ("controlPlane", "variables", "overrides") + cls, None
        default = _capi_default(obj, topo, pool_name)
        return default if isinstance(default, str) else (default, None)
    if obj.kind == TKC_KIND:
        workers = _m(topo.get("workers"))
        if workers.get("class") and pool_name == f"{obj.ref.name}-workers":
            return base + ("workers", "class"), base + ("workers", "count")
        for i, np in enumerate(_seq(topo.get("nodePools"))):
            np = _m(np)
            if str(np.get("name") or f"pool-{i}") == pool_name:
                key = "vmClass" if "vmClass" in np else "class"
                return base + ("nodePools", i, key), base + ("nodePools", i, "replicas")
        return f"node pool {pool_name} not found in {obj.ref}"
    found = _machine_deployment(topo, pool_name)
    if found is None:
        return f"machine deployment {pool_name} not found in {obj.ref}"
    group, i, md = found
    at = base + ("workers", group, i)
    cls = _var_path(_m(md.get("variables")).get("overrides"), "vmClass")
    count = at + ("replicas",)
    if cls is not None:
        return at + ("variables", "overrides") + cls, count
    default = _capi_default(obj, topo, pool_name)
    return default if isinstance(default, str) else (default, count)


_WORKER_GROUPS = ("machineDeployments", "machinePools")


def _worker_groups(topo: Mapping[str, Any]) -> list[tuple[str, int, Mapping[str, Any]]]:
    """The topology's machine deployments, then its machine pools (``workers.machinePools``: the
    same class, name, replicas, metadata and variables; the cluster autoscaler scales them too):
    (list key, index, body)."""
    workers = _m(topo.get("workers"))
    return [(group, i, _m(md)) for group in _WORKER_GROUPS for i, md in enumerate(_seq(workers.get(group)))]


def _md_name(md: Mapping[str, Any], i: int, group: str = "machineDeployments") -> str:
    """A machine deployment's pool name: its ``name``, else ``md-INDEX`` (``mp-INDEX`` for a machine
    pool)."""
    return str(md.get("name") or f"{'mp' if group == 'machinePools' else 'md'}-{i}")


def _machine_deployment(topo: Mapping[str, Any], pool_name: str) -> tuple[str, int, Mapping[str, Any]] | None:
    """The list key, index and body of the machine deployment (or pool) that makes pool
    ``pool_name``, if any."""
    for group, i, md in _worker_groups(topo):
        if _md_name(md, i, group) == pool_name:
            return group, i, md
    return None


def _var_path(variables: Any, key: str) -> Path | None:
    for j, v in enumerate(_seq(variables)):
        if isinstance(v, dict) and v.get("name") == key and "value" in v:
            return (j, "value")
    return None


def _capi_default(obj: K8sObject, topo: Mapping[str, Any], pool_name: str) -> Path | str:
    """The cluster-wide ``vmClass`` variable, when only this pool takes its class from it."""
    at = _var_path(topo.get("variables"), "vmClass")
    if at is None:
        return f"{obj.ref} sets no vmClass variable for {pool_name}"
    sharing = [
        p.name
        for p in _capi_pools(obj)
        if p.name != pool_name and _var_path(_pool_overrides(topo, p.name, obj.ref.name), "vmClass") is None
    ]
    if sharing:
        return (
            f"{pool_name} takes its class from the cluster's vmClass variable, which {', '.join(sharing)} "
            f"share; give {pool_name} its own vmClass in variables.overrides"
        )
    return ("spec", "topology", "variables") + at


def _pool_overrides(topo: Mapping[str, Any], pool_name: str, cluster: str) -> Any:
    if pool_name == f"{cluster}-control-plane":
        return _m(_m(topo.get("controlPlane")).get("variables")).get("overrides")
    found = _machine_deployment(topo, pool_name)
    return _m(found[2].get("variables")).get("overrides") if found is not None else None


# ------------------------------------------------------------------------------------ eksctl ---

EKSCTL_DEFAULT_TYPE = "m5.large"  # eksctl's default instance type
EKSCTL_DEFAULT_SIZE = 2  # eksctl's default desiredCapacity (and minSize, maxSize)
_EKSCTL_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


def _eksctl_taints(x: Any) -> tuple[Taint, ...]:
    """eksctl's taints: a list of {key, value, effect} (effects as Kubernetes or as the EKS API
    spells them), or the older map of key to ``value:Effect``."""
    if isinstance(x, dict):
        items = []
        for k, v in x.items():
            value, _, effect = str(v or "").rpartition(":")
            items.append({"key": k, "value": value, "effect": effect})
        x = items
    fixed = [{**_m(t), "effect": _EKSCTL_EFFECTS.get(str(_m(t).get("effect")), _m(t).get("effect"))} for t in _seq(x)]
    return _taints(fixed)


def _unknown_type(name: str) -> str | None:
    """Why ``name`` is no instance type podfit knows (None when it is one)."""
    try:
        lookup("eks", name)
    except CloudError as e:
        return str(e)
    return None


def eksctl_pools(obj: K8sObject) -> list[NodePool]:
    """The node groups of an eksctl ClusterConfig, managed and self-managed: their instance type
    (the first of ``instanceTypes`` or of ``instancesDistribution.instanceTypes``: eksctl asks them to
    be of one size), desired / min / max size, labels, taints and ``maxPodsPerNode``. A group of a
    type podfit does not know is a pool of that name and no size: packing's rules then say they
    cannot judge (as for an unknown VM class), and PF913 names it (:func:`unknown_types`)."""
    spec = obj.raw
    cluster = obj.ref.name
    pools = []
    nodes = grown = 0  # the cluster's nodes so far, now and at the autoscaler's maxima
    for group in ("managedNodeGroups", "nodeGroups"):
        for i, ng in enumerate(_seq(spec.get(group))):
            ng = _m(ng)
            t = _eksctl_type(ng)
            # eksctl: desiredCapacity defaults to minSize, both to 2; maxSize to desiredCapacity.
            # A cluster holds at most MAX_NODES nodes: the groups past that many get none.
            count = min(
                _count(ng.get("desiredCapacity"), _count(ng.get("minSize"), EKSCTL_DEFAULT_SIZE)), MAX_NODES - nodes
            )
            most = min(_count(ng.get("maxSize"), count), MAX_NODES - grown)
            nodes, grown = nodes + count, grown + max(count, most)
            mp = ng.get("maxPodsPerNode")
            if t is None:  # a pool podfit cannot size: packing says so rather than judge without it
                name = str(ng.get("name") or f"{group}-{i}")
                at = obj.location_at((group, i))
                pools.append(NodePool(_eksctl_type_name(ng)[:80] or "?", count, name, cluster, location=at))
                continue
            pools.append(
                instance_pool(
                    t,
                    count,
                    service="eks",
                    max_pods=mp if isinstance(mp, int) and not isinstance(mp, bool) and 0 < mp <= 2**31 else None,
                    name=str(ng.get("name") or f"{group}-{i}"),
                    cluster=cluster,
                    labels=_labels(ng.get("labels")),
                    location=obj.location_at((group, i)),
                    taints=_eksctl_taints(ng.get("taints")),
                    max_count=most if most > count else None,
                )
            )
    return pools


def _eksctl_type_name(ng: Mapping[str, Any]) -> str:
    names = _seq(ng.get("instanceTypes")) or _seq(_m(ng.get("instancesDistribution")).get("instanceTypes"))
    return str(ng.get("instanceType") or (names[0] if names else EKSCTL_DEFAULT_TYPE))


def _eksctl_type(ng: Mapping[str, Any]) -> InstanceType | None:
    t = instance_types().get(_eksctl_type_name(ng))
    return t if t is not None and t.provider == "aws" else None


Templates = Mapping[tuple[str, str, str], K8sObject]


def machine_templates(objects: Iterable[K8sObject]) -> dict[tuple[str, str, str], K8sObject]:
    """Cluster API AWS machine templates by (kind, namespace, name)."""
    return {
        (o.kind, o.ref.namespace, o.ref.name): o
        for o in objects
        if o.kind == "AWSMachineTemplate" and o.ref.api_version.startswith("infrastructure.cluster.x-k8s.io/")
    }


def _md_template(obj: K8sObject, templates: Templates) -> tuple[K8sObject | None, str]:
    """The machine template a MachineDeployment's infrastructureRef names (None: not among the
    inputs, or of a kind not read) and the instance type it gives ("" when none)."""
    ref = _m(_m(_m(_m(obj.raw.get("spec")).get("template")).get("spec")).get("infrastructureRef"))
    found = templates.get((str(ref.get("kind")), str(ref.get("namespace") or obj.ref.namespace), str(ref.get("name"))))
    if found is None:
        return None, ""
    name = _m(_m(_m(found.raw.get("spec")).get("template")).get("spec")).get("instanceType")
    return found, str(name or "")


def machine_deployment_pools(obj: K8sObject, templates: Templates) -> list[NodePool]:
    """A standalone MachineDeployment whose AWSMachineTemplate names a known EC2 type: a pool of
    ``spec.replicas`` nodes (else the autoscaler's min-size, else 1) of that type, of cluster
    ``spec.clusterName``, with the autoscaler annotations' maximum. Its nodes are kubeadm's, not an
    EKS AMI's: allocatable is the type less the kubelet's default eviction threshold, 110 pods
    (:func:`podfit.cloud.kubeadm_allocatable`). Labels: those of the Machine template that Cluster
    API copies to the Node; taints from the template are not read (they live in the bootstrap
    config)."""
    template, name = _md_template(obj, templates)
    if template is None:
        return []
    t = instance_types().get(name)
    spec = _m(obj.raw.get("spec"))
    meta = _m(obj.raw.get("metadata"))
    annotations = _m(meta.get("annotations"))
    most, least = _size(annotations, AUTOSCALER_MAX), _size(annotations, AUTOSCALER_MIN)
    if most is None or least is None:
        most = least = None
    tmeta = _m(_m(spec.get("template")).get("metadata"))
    labels = {k: v for k, v in _labels(tmeta.get("labels")) if _synced_to_node(k)}
    count = _count(spec.get("replicas"), 1 if least is None else least)
    if t is None or t.provider != "aws":  # a pool podfit cannot size (PF913 names it)
        return [NodePool(name[:80] or "?", count, obj.ref.name, str(spec.get("clusterName") or ""), max_count=most)]
    return [
        instance_pool(
            t,
            count,
            service="kubeadm",
            name=obj.ref.name,
            cluster=str(spec.get("clusterName") or ""),
            labels=tuple(sorted(labels.items())),
            location=obj.location_at(("spec",)),
            max_count=most,
        )
    ]


def unknown_types(obj: K8sObject, context: Iterable[K8sObject] = ()) -> list[tuple[Path, str]]:
    """Where an eksctl ClusterConfig or a Karpenter NodePool names node pools podfit cannot size,
    and why: an instance type it does not know (with the nearest known ones), requirements no known
    type satisfies."""
    out: list[tuple[Path, str]] = []
    if is_eksctl(obj):
        for group in ("managedNodeGroups", "nodeGroups"):
            for i, ng in enumerate(_seq(obj.raw.get(group))):
                ng = _m(ng)
                if _eksctl_type(ng) is None:
                    name = _eksctl_type_name(ng)
                    out.append(((group, i), _unknown_type(name) or f"unknown eks instance type {name[:80]!r}"))
    elif is_machine_deployment(obj):
        template, name = _md_template(obj, machine_templates(context))
        if template is not None and _unknown_type(name) is not None:
            out.append((("spec", "template", "spec", "infrastructureRef"), f"{template.ref}: {_unknown_type(name)}"))
    elif is_karpenter(obj) and not _karpenter_types(obj)[0]:
        out.append(
            (
                ("spec", "template", "spec", "requirements"),
                "no EC2 instance type podfit knows satisfies its requirements (docs/platform.md lists them)",
            )
        )
    return out


# --------------------------------------------------------------------------------- Karpenter ---

_KARPENTER_KEYS = {
    "node.kubernetes.io/instance-type": lambda t: t.name,
    "karpenter.k8s.aws/instance-family": lambda t: t.family,
    "karpenter.k8s.aws/instance-category": lambda t: t.category,
    "karpenter.k8s.aws/instance-size": lambda t: t.size,
    "karpenter.k8s.aws/instance-cpu": lambda t: str(t.vcpus),
    "karpenter.k8s.aws/instance-memory": lambda t: str(t.memory_mib),
    "karpenter.k8s.aws/instance-gpu-count": lambda t: str(t.gpus),
    "karpenter.k8s.aws/instance-generation": lambda t: t.family[len(t.category) :].rstrip("abcdefghijklmnopqrstuvwxyz"),
    "kubernetes.io/arch": lambda t: t.arch,
}


_Requirement = tuple[Any, Any, frozenset[str], str]


def _requirement(req: Mapping[str, Any]) -> _Requirement | None:
    """One Karpenter requirement as (value of a type, operator, values, first value); None for a
    key podfit does not model (taken as met). Its values are read once, however many."""
    get = _KARPENTER_KEYS.get(str(req.get("key")))
    if get is None:
        return None
    values = [str(v) for v in _seq(req.get("values"))]
    return get, req.get("operator"), frozenset(values), values[0] if values else ""


def _satisfies(t: InstanceType, req: _Requirement) -> bool:
    """Whether type ``t`` meets one Karpenter requirement."""
    get, op, values, first = req
    have = get(t)
    if op == "In":
        return have in values
    if op == "NotIn":
        return have not in values
    if op == "DoesNotExist":
        return False
    if op in ("Gt", "Lt") and first.isdigit() and first.isascii() and have.isdigit() and len(first) < 19:
        return int(have) > int(first) if op == "Gt" else int(have) < int(first)
    return True


def _karpenter_types(obj: K8sObject) -> tuple[list[InstanceType], Any]:
    tmpl = _m(_m(_m(obj.raw.get("spec")).get("template")).get("spec"))
    reqs = [r for r in (_requirement(_m(x)) for x in _seq(tmpl.get("requirements"))) if r is not None]
    types = [t for t in instance_types().values() if t.provider == "aws" and all(_satisfies(t, r) for r in reqs)]
    return types, tmpl


def _limit(limits: Mapping[str, Any], key: str, parse: Any) -> int | None:
    if key not in limits:
        return None
    try:
        return int(parse(str(limits[key])))
    except (QuantityError, ValueError, OverflowError):
        return None


UNSIZED_KARPENTER = "no known instance type"


def karpenter_pools(obj: K8sObject) -> list[NodePool]:
    """A Karpenter NodePool as one pool of the largest EC2 type its requirements allow (Karpenter
    launches one large enough for the pending pods), of no node now, which may grow until its
    ``spec.limits`` (CPU, memory) would be passed: ⌊limit / the type's size⌋ nodes, at most
    MAX_NODES (no limits: MAX_NODES). Labels and taints from its node template."""
    types, tmpl = _karpenter_types(obj)
    if not types:  # a pool podfit cannot size: packing says so rather than judge without it
        return [NodePool(UNSIZED_KARPENTER, 0, obj.ref.name, max_count=MAX_NODES)]
    limits = _m(_m(obj.raw.get("spec")).get("limits"))
    cpu, memory = _limit(limits, "cpu", parse_cpu), _limit(limits, "memory", parse_memory)
    # Karpenter launches no node that would take the pool past its limits
    within = [
        x for x in types if (cpu is None or x.vcpus * 1000 <= cpu) and (memory is None or x.memory_bytes <= memory)
    ]
    t = max(within or types, key=lambda x: (x.vcpus, x.memory_mib, x.name))
    most = MAX_NODES
    if cpu is not None:
        most = min(most, cpu // (t.vcpus * 1000))
    if memory is not None:
        most = min(most, memory // t.memory_bytes)
    meta = _m(_m(_m(obj.raw.get("spec")).get("template")).get("metadata"))
    labels = dict(_labels(meta.get("labels")))
    labels.setdefault("karpenter.sh/nodepool", obj.ref.name)
    # a requirement of one value is a label every node of the pool carries (capacity type, zone, …)
    for req in (_m(r) for r in _seq(tmpl.get("requirements"))):
        values = _seq(req.get("values"))
        if req.get("operator") == "In" and len(values) == 1 and isinstance(req.get("key"), str):
            labels.setdefault(req["key"], str(values[0]))
    return [
        instance_pool(
            t,
            0,
            service="eks",
            name=obj.ref.name,
            labels=tuple(sorted(labels.items())),
            location=obj.location_at(("spec",)),
            taints=_taints(tmpl.get("taints")),
            max_count=most if most > 0 else None,
        )
    ]
