"""The Platform profile: what the manifests will run on.

A profile (``kind: Platform``, validated by ``schemas/platform.schema.json``) describes the vSphere
hosts, HA admission control, VM classes, node pools, per-node system overhead, kubelet settings and
the runtime (``tkg``, ``vsphere-pods``, ``bare-metal`` or ``kubernetes``: any other cluster's node
pools). The built-in vSphere with Tanzu VM classes (``DEFAULT_VM_CLASSES``) are in every profile's
catalogue, to look up a pool's size, but only tkg and vsphere-pods can be given them
(:func:`sizing_classes`). ``DEFAULT_PLATFORM`` describes the
study's cluster: 4 hosts × 2 sockets × 16 cores, 2 threads per core, 2,300 MHz, 512 GiB, one NUMA
node per socket, HA tolerating one host failure, runtime ``tkg`` and no node pools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .cloud import GPU, CloudError, InstanceType, instance_types, parse_nodes, service_of
from .cloud import allocatable as cloud_allocatable
from .model import Location
from .paths import load_schema
from .quantity import QuantityError, parse_cpu, parse_memory
from .scheduling import Taint, pool_labels, pool_taints
from .yamlio import iter_documents, line_of

__all__ = [
    "HostGroup",
    "HAPolicy",
    "VMClass",
    "NodePool",
    "Taint",
    "KubeletSettings",
    "Platform",
    "PlatformError",
    "DEFAULT_VM_CLASSES",
    "DEFAULT_PLATFORM",
    "platform_from_doc",
    "sizing_classes",
    "VSPHERE_RUNTIMES",
    "parse_platform",
    "MAX_HOSTS",
    "MAX_NODES",
    "instance_pool",
    "instance_classes",
    "with_nodes",
]

GiB = 2**30
MiB = 2**20
PROFILE_API = "apiVersion: podfit.io/v1alpha1"
# What exists, and what podfit's memory and time stay bounded by (one object per host or node in
# the vSphere and packing analyses): vSphere 8 takes at most 96 hosts in a cluster (VMware
# Configuration Maximums, vSphere 8.0: "Hosts per cluster"), and Kubernetes is designed for at most
# 5,000 nodes in a cluster (kubernetes.io, "Considerations for large clusters"). The profile's
# schema bounds each host group and node pool to them; the totals are checked here.
MAX_HOSTS = 96
MAX_NODES = 5000
# The most logical CPUs one host has: the x86-64 kernel's NR_CPUS ceiling (CONFIG_NR_CPUS at most
# 8,192, arch/x86/Kconfig). Analyses that model each CPU of a node (the throttling simulation) stay
# bounded by it; the schema bounds sockets, cores per socket and threads per core one by one.
MAX_HOST_CPUS = 8192


@dataclass(frozen=True)
class HostGroup:
    name: str
    count: int
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    base_mhz: int
    memory_bytes: int
    numa_nodes_per_socket: int = 1
    dedicated_failover: bool = False

    @property
    def cores(self) -> int:
        """Physical cores of one host."""
        return self.sockets * self.cores_per_socket

    @property
    def logical_cpus(self) -> int:
        return self.cores * self.threads_per_core

    @property
    def cpu_mhz(self) -> int:
        """CPU capacity of one host: physical cores × base clock (no hyper-threads, no turbo)."""
        return self.cores * self.base_mhz

    @property
    def numa_nodes(self) -> int:
        return self.sockets * self.numa_nodes_per_socket

    @property
    def numa_node_cores(self) -> int:
        return self.cores // self.numa_nodes

    @property
    def numa_node_memory(self) -> int:
        return self.memory_bytes // self.numa_nodes


@dataclass(frozen=True)
class HAPolicy:
    host_failures_tolerated: int | None = None
    cpu_percent: int | None = None
    memory_percent: int | None = None


@dataclass(frozen=True)
class VMClass:
    name: str
    cpus: int
    memory_bytes: int
    reserved: bool  # guaranteed class: CPU and memory fully reserved
    builtin: bool = False  # one of the built-in vSphere with Tanzu classes (DEFAULT_VM_CLASSES)

    @property
    def cpu_millicores(self) -> int:
        return self.cpus * 1000


@dataclass(frozen=True)
class NodePool:
    vm_class: str
    count: int
    name: str = ""
    cluster: str = ""
    role: str = "worker"  # "worker" | "control-plane"
    labels: tuple[tuple[str, str], ...] = ()  # as declared (profile, cluster manifest, --pool-label)
    location: Location | None = None  # where it was declared (profile or TKC manifest)
    taints: tuple[Taint, ...] = ()  # as declared
    # what the kubelet offers pods on each node (cpu millicores, memory bytes, pods), when the
    # profile gives it (an imported cluster); else the VM class less the platform's systemOverhead
    allocatable: tuple[int, int, int | None] | None = None
    system_pods: tuple[int, int, int] = (0, 0, 0)  # DaemonSet and static pods already on each node
    # extended resources (GPUs: nvidia.com/gpu, …) each node offers pods, from allocatable: sorted
    # (name, count); a pod asking for one can only land on a pool offering enough of it
    extended: tuple[tuple[str, int], ...] = ()
    kubelet_version: str = ""
    # pods the cluster itself runs on some of the pool's nodes (coredns): (name, count, cpu, memory
    # of one pod); packing places them on the pool before the workloads
    reserved_pods: tuple[tuple[str, int, int, int], ...] = ()
    # the most nodes the cluster autoscaler (or the platform's node-group autoscaling) grows the pool
    # to, where the profile or the cluster manifest declares it; None: the pool stays at ``count``
    max_count: int | None = None

    @property
    def scales_from_zero(self) -> bool:
        """No node now, and a cluster autoscaler that may add some (scale from zero)."""
        return self.count == 0 and (self.max_count or 0) > 0

    @property
    def most_nodes(self) -> int:
        """The nodes the pool can have: its autoscaler's maximum, else its count."""
        return self.count if self.max_count is None else max(self.count, self.max_count)

    @property
    def node_labels(self) -> tuple[tuple[str, str], ...]:
        """The labels of every node of the pool: the well-known ones (OS, architecture, instance
        type = VM class, control-plane role) under those declared; ``kubernetes.io/hostname`` is
        per node and not among them (see :mod:`podfit.scheduling`)."""
        return pool_labels(self.vm_class, self.role, self.labels)

    @property
    def node_taints(self) -> tuple[Taint, ...]:
        """The declared taints, and the NoSchedule taint of a control-plane pool."""
        return pool_taints(self.role, self.taints)


@dataclass(frozen=True)
class KubeletSettings:
    """The profile's ``spec.kubelet``. ``cpu_manager_policy_stated``: the profile names the policy
    (else "none" is the kubelet's default, assumed). ``version``: the nodes' Kubernetes version as
    written ("1.33", "v1.33.2"); "" when not given. ``feature_gates``: the kubelet's featureGates."""

    max_pods: int = 110
    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: tuple[tuple[str, str], ...] = ()
    reserved_system_cpus: str = ""
    cpu_manager_policy_stated: bool = False
    version: str = ""
    feature_gates: tuple[tuple[str, bool], ...] = ()


def _default_classes() -> tuple[VMClass, ...]:
    sizes = [
        ("xsmall", 2, 2),
        ("small", 2, 4),
        ("medium", 2, 8),
        ("large", 4, 16),
        ("xlarge", 4, 32),
        ("2xlarge", 8, 64),
        ("4xlarge", 16, 128),
        ("8xlarge", 32, 128),
    ]
    return tuple(
        VMClass(f"{kind}-{size}", cpus, mem * GiB, kind == "guaranteed", builtin=True)
        for kind in ("best-effort", "guaranteed")
        for size, cpus, mem in sizes
    )


DEFAULT_VM_CLASSES: tuple[VMClass, ...] = _default_classes()

# The runtimes whose nodes are VMs of vSphere with Tanzu VM classes, the built-in ones among them.
VSPHERE_RUNTIMES = frozenset({"tkg", "vsphere-pods"})


@dataclass(frozen=True)
class Platform:
    name: str = "default"
    source: str = "built-in default"
    is_default: bool = True
    runtime: str = "tkg"
    critical: bool = False
    hosts: tuple[HostGroup, ...] = ()
    ha: HAPolicy = field(default_factory=HAPolicy)
    vm_classes: tuple[VMClass, ...] = DEFAULT_VM_CLASSES
    node_pools: tuple[NodePool, ...] = ()
    overhead_cpu: int = 250  # millicores per node taken by system pods (calico etc.)
    overhead_memory: int = 100 * MiB  # bytes per node not allocatable
    kubelet: KubeletSettings = field(default_factory=KubeletSettings)

    def vm_class(self, name: str) -> VMClass | None:
        for c in self.vm_classes:
            if c.name == name:
                return c
        return None

    @property
    def numa_node_cores(self) -> int | None:
        """Physical cores in the smallest NUMA node of any host (None without hosts)."""
        return min((h.numa_node_cores for h in self.hosts), default=None)

    @property
    def numa_node_memory(self) -> int | None:
        return min((h.numa_node_memory for h in self.hosts), default=None)

    def with_node_pools(self, pools: Sequence[NodePool]) -> Platform:
        return replace(self, node_pools=tuple(self.node_pools) + tuple(pools))


def sizing_classes(platform: Platform, pools: Sequence[NodePool]) -> tuple[VMClass, ...]:
    """The VM classes a cluster of ``platform`` whose node pools are ``pools`` can be given: those
    right-sizing chooses among (PF604, PF602, ``podfit pack``), in the catalogue's order.

    On vSphere with Tanzu (runtime tkg or vsphere-pods) every class of the catalogue, built-in and
    declared. Elsewhere (kubernetes: a managed or self-run cluster; bare-metal) the built-in vSphere
    with Tanzu classes cannot be provisioned: only the classes the profile declares
    (``spec.vmClasses``) and those the pools already use; the same under the built-in profile when every
    pool is of a cloud instance type (:mod:`podfit.cloud`). Every class stays in
    ``platform.vm_classes`` for looking up a pool's size."""
    used = {p.vm_class for p in pools}
    # a cluster of cloud instances alone (eksctl, Karpenter) under the built-in profile is given no
    # vSphere class (a profile of runtime tkg that declares classes keeps them all)
    cloud = platform.is_default and bool(used) and used <= instance_types().keys()
    if platform.runtime in VSPHERE_RUNTIMES and not cloud:
        return platform.vm_classes
    return tuple(c for c in platform.vm_classes if not c.builtin or c.name in used)


DEFAULT_PLATFORM = Platform(
    hosts=(
        HostGroup(
            name="esxi",
            count=4,
            sockets=2,
            cores_per_socket=16,
            threads_per_core=2,
            base_mhz=2300,
            memory_bytes=512 * GiB,
            numa_nodes_per_socket=1,
        ),
    ),
    ha=HAPolicy(host_failures_tolerated=1),
)


class PlatformError(Exception):
    """An invalid profile; ``problems`` are ``file:line: message`` strings."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


def _line_for(doc: Any, path: Sequence[Any]) -> int:
    cur, line = doc, line_of(doc, default=1)
    for key in path:
        try:
            nxt = cur[key]
        except (KeyError, IndexError, TypeError):
            break
        line = line_of(cur, key, line) if isinstance(key, str) else line_of(nxt, default=line)
        cur = nxt
    return line


def _schema_errors(doc: Mapping[str, Any]) -> list[Any]:
    """The profile's schema errors (jsonschema's, in path order); none for a valid profile.

    jsonschema-rs says whether the profile is valid (about 35 ms to import, against 70–110 ms for
    jsonschema); only an invalid or unusual profile imports jsonschema for its messages."""
    import jsonschema_rs

    schema = load_schema("platform.schema.json")
    try:
        if not _whole_floats(doc) and jsonschema_rs.Draft202012Validator(schema).is_valid(doc):
            return []
    except (ValueError, TypeError):  # a value JSON has no type for: jsonschema says what it is
        pass
    import jsonschema
    from jsonschema import validators

    # JSON Schema's "integer" takes 1.0 too; a count of 1.0 is no count to podfit (it multiplies
    # and indexes by them), so an integer here is an int
    strict = validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
            "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
        ),
    )
    validator = strict(schema)
    return sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))


def _whole_floats(value: Any) -> bool:
    """Whether a float with no fraction (1.0, 1e23) is anywhere in ``value``."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_whole_floats(v) for v in value.values())
    if isinstance(value, list):
        return any(_whole_floats(v) for v in value)
    return False


def platform_from_doc(doc: Mapping[str, Any], source: str) -> Platform:
    """Validate a parsed profile document and build the :class:`Platform`. Raises PlatformError,
    whose messages name the file, the line and what was expected, never a value of the document
    (a file that is not a profile at all is said to be that, and nothing more)."""
    if not isinstance(doc, Mapping) or doc.get("kind") != "Platform":
        line = line_of(doc, "kind", line_of(doc, default=1)) if isinstance(doc, Mapping) else 1
        raise PlatformError([f"{source}:{line}: not a Platform profile: expected kind: Platform ({PROFILE_API})"])
    errors = _schema_errors(doc)
    if errors:
        from .schema_errors import expected, where

        messages = []
        for e in errors:
            line = _line_for(doc, list(e.absolute_path))
            if e.validator == "additionalProperties" and isinstance(e.instance, Mapping):
                known = e.schema.get("properties") or {}
                line = next((line_of(e.instance, k, line) for k in e.instance if k not in known), line)
            messages.append(f"{source}:{line}: {where(e)}: {expected(e)}")
        raise PlatformError(messages)
    spec = doc.get("spec") or {}
    problems: list[str] = []

    def qty(parent: Mapping[str, Any], key: str, parse: Any, default: int, where: str) -> int:
        if key not in parent:
            return default
        try:
            value = parse(parent[key])
        except QuantityError as e:
            problems.append(f"{source}:{line_of(parent, key, 1)}: {where}.{key}: not a valid quantity: {e.reason}")
            return default
        top, shown = (_MAX_NODE_CPU_M, "1,000,000 CPUs") if parse is parse_cpu else (_MAX_NODE_MEMORY, "1 PiB")
        if value > top:  # (packing sums these over 5,000 nodes in 64-bit integers)
            problems.append(
                f"{source}:{line_of(parent, key, 1)}: {where}.{key}: more than a machine has (at most {shown})"
            )
            return default
        return value

    hosts = tuple(
        HostGroup(
            name=str(h.get("name") or f"hosts-{i}"),
            count=h["count"],
            sockets=h["sockets"],
            cores_per_socket=h["coresPerSocket"],
            threads_per_core=h.get("threadsPerCore", 1),
            base_mhz=h["baseMHz"],
            memory_bytes=qty(h, "memory", parse_memory, 0, f"spec.hosts[{i}]"),
            numa_nodes_per_socket=h.get("numaNodesPerSocket", 1),
            dedicated_failover=h.get("dedicatedFailover", False),
        )
        for i, h in enumerate(spec.get("hosts") or ())
    )
    if sum(h.count for h in hosts) > MAX_HOSTS:
        problems.append(
            f"{source}:{line_of(spec, 'hosts', 1)}: spec.hosts: {sum(h.count for h in hosts):,} hosts in all: "
            f"expected at most {MAX_HOSTS}, vSphere's hosts per cluster"
        )
    for i, h in enumerate(hosts):
        if h.logical_cpus > MAX_HOST_CPUS:
            problems.append(
                f"{source}:{line_of((spec.get('hosts') or [])[i], default=1)}: spec.hosts[{i}]: {h.logical_cpus:,} logical "
                f"CPUs (sockets × coresPerSocket × threadsPerCore): expected at most {MAX_HOST_CPUS:,}, the most a "
                "Linux kernel runs on (x86-64 NR_CPUS)"
            )
        if h.cores_per_socket % h.numa_nodes_per_socket:
            problems.append(f"{source}: spec.hosts[{i}]: coresPerSocket must divide evenly into NUMA nodes")
    ha_doc = spec.get("ha") or {}
    ha = HAPolicy(
        host_failures_tolerated=ha_doc.get("hostFailuresTolerated"),
        cpu_percent=ha_doc.get("cpuPercent"),
        memory_percent=ha_doc.get("memoryPercent"),
    )
    classes = {c.name: c for c in DEFAULT_VM_CLASSES}
    for i, c in enumerate(spec.get("vmClasses") or ()):
        name = c["name"]
        classes[name] = VMClass(
            name=name,
            cpus=c["cpus"],
            memory_bytes=qty(c, "memory", parse_memory, 0, f"spec.vmClasses[{i}]"),
            reserved=c.get("reserved", name.startswith("guaranteed-")),
        )
    pools = []
    for i, p in enumerate(spec.get("nodePools") or ()):
        if p["count"] == 0 and not p.get("maxCount"):
            # not "no node pools": a pool of no node is a mistake to name, unless its cluster
            # autoscaler grows it from zero (maxCount), which PF601 and PF606 then take at that size
            problems.append(
                f"{source}:{line_of(p, 'count', 1)}: spec.nodePools[{i}].count: 0 nodes; a pool has at least 1 "
                "(leave out a pool that has none, or give the maxCount its cluster autoscaler scales it from "
                "zero to)"
            )
        if p.get("maxCount") is not None and p["maxCount"] < p["count"]:
            problems.append(
                f"{source}:{line_of(p, 'maxCount', 1)}: spec.nodePools[{i}].maxCount: {p['maxCount']} is below "
                f"count ({p['count']}): the autoscaler's maximum is at least the nodes the pool has"
            )
        instance = _instance_type(p, f"{source}:{line_of(p, 'instanceType', 1)}: spec.nodePools[{i}]", problems)
        if instance is not None:
            classes.setdefault(instance.vm_class, *instance_classes((instance,)))
        elif "vmClass" in p and p["vmClass"] not in classes:
            problems.append(
                f"{source}:{line_of(p, 'vmClass', 1)}: spec.nodePools[{i}].vmClass: unknown VM class {p['vmClass']!r}"
            )
        given = _allocatable(p.get("allocatable"), f"spec.nodePools[{i}].allocatable", qty)
        pools.append(
            NodePool(
                vm_class=instance.vm_class if instance is not None else str(p.get("vmClass") or ""),
                count=p["count"],
                name=str(p.get("name") or f"pool-{i}"),
                cluster=str(p.get("cluster") or ""),
                role=p.get("role", "worker"),
                labels=tuple(
                    sorted({**dict(instance.labels if instance is not None else ()), **(p.get("labels") or {})}.items())
                ),
                location=Location(source, line_of(p, default=1)),
                taints=tuple(Taint(t["key"], str(t.get("value") or ""), t["effect"]) for t in p.get("taints") or ()),
                allocatable=given if given is not None or instance is None else instance.allocatable,
                extended=_extended(p.get("allocatable"), f"spec.nodePools[{i}].allocatable", qty)
                if given is not None or instance is None
                else instance.extended,
                system_pods=_system_pods(p.get("systemPods") or {}, f"spec.nodePools[{i}].systemPods", qty),
                kubelet_version=str(p.get("kubeletVersion") or ""),
                reserved_pods=tuple(
                    (
                        str(r["name"]),
                        r["count"],
                        qty(r, "cpu", parse_cpu, 0, f"spec.nodePools[{i}].reservedPods[{j}]"),
                        qty(r, "memory", parse_memory, 0, f"spec.nodePools[{i}].reservedPods[{j}]"),
                    )
                    for j, r in enumerate(p.get("reservedPods") or ())
                ),
                max_count=p.get("maxCount"),
            )
        )
    nodes: dict[str, int] = {}
    for p in pools:  # at the autoscalers' maxima: PF606 packs the pools at that size
        nodes[p.cluster] = nodes.get(p.cluster, 0) + p.most_nodes
    for cluster, n in sorted(nodes.items()):
        if n > MAX_NODES:
            of = f"cluster {cluster}" if cluster else "the pools without a cluster"
            grown = " at the autoscalers' maxima" if any(p.max_count for p in pools) else ""
            problems.append(
                f"{source}:{line_of(spec, 'nodePools', 1)}: spec.nodePools: {n:,} nodes in {of}{grown}: "
                f"expected at most {MAX_NODES:,}, Kubernetes' nodes per cluster"
            )
    ov = spec.get("systemOverhead") or {}
    kub = spec.get("kubelet") or {}
    platform = Platform(
        name=str((doc.get("metadata") or {}).get("name") or source),
        source=source,
        is_default=False,
        runtime=spec.get("runtime", "tkg"),
        critical=spec.get("critical", False),
        hosts=hosts,
        ha=ha,
        vm_classes=tuple(classes.values()),
        node_pools=tuple(pools),
        overhead_cpu=qty(ov, "cpu", parse_cpu, 250, "spec.systemOverhead"),
        overhead_memory=qty(ov, "memory", parse_memory, 100 * MiB, "spec.systemOverhead"),
        kubelet=KubeletSettings(
            max_pods=kub.get("maxPods", 110),
            cpu_manager_policy=kub.get("cpuManagerPolicy", "none"),
            cpu_manager_policy_options=tuple(sorted((kub.get("cpuManagerPolicyOptions") or {}).items())),
            reserved_system_cpus=kub.get("reservedSystemCPUs", ""),
            cpu_manager_policy_stated="cpuManagerPolicy" in kub,
            version=str(kub.get("kubernetesVersion") or ""),
            feature_gates=tuple(sorted((str(k), bool(v)) for k, v in (kub.get("featureGates") or {}).items())),
        ),
    )
    if problems:
        raise PlatformError(problems)
    return platform


def _instance_type(p: Mapping[str, Any], where: str, problems: list[str]) -> NodePool | None:
    """The pool of one node of the ``instanceType`` a profile's pool names (its class, allocatable,
    GPUs and labels: :mod:`podfit.cloud`), or None when it names none or one podfit does not know."""
    from .cloud import lookup, split_instance_ref

    if "instanceType" not in p:
        return None
    try:
        service, name = split_instance_ref(str(p["instanceType"]))
        return instance_pool(lookup(service, name), 1, service=service)
    except CloudError as e:
        problems.append(f"{where}.instanceType: {e}")
        return None


# What one host or node can have, beyond any machine built: a node's figures past them are mistakes.
_MAX_NODE_CPU_M = 10**9  # millicores: a million CPUs
_MAX_NODE_MEMORY = 2**50  # bytes: 1 PiB


def _allocatable(doc: Mapping[str, Any] | None, where: str, qty: Any) -> tuple[int, int, int | None] | None:
    if doc is None:
        return None
    return (qty(doc, "cpu", parse_cpu, 0, where), qty(doc, "memory", parse_memory, 0, where), doc.get("pods"))


# allocatable keys that are not extended resources
BASE_RESOURCES = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})


def is_extended_resource(name: str) -> bool:
    """An extended resource name as Kubernetes defines it: qualified (``vendor/name``) and not in the
    ``kubernetes.io`` namespace, such as ``nvidia.com/gpu``."""
    return "/" in name and not name.startswith(("kubernetes.io/", "requests."))


def _extended(doc: Mapping[str, Any] | None, where: str, qty: Any) -> tuple[tuple[str, int], ...]:
    if doc is None:
        return ()
    return tuple(sorted((k, qty(doc, k, parse_memory, 0, where)) for k in doc if is_extended_resource(str(k))))


def _system_pods(doc: Mapping[str, Any], where: str, qty: Any) -> tuple[int, int, int]:
    return (qty(doc, "cpu", parse_cpu, 0, where), qty(doc, "memory", parse_memory, 0, where), doc.get("pods", 0))


def parse_platform(text: str, source: str) -> Platform:
    """Parse profile text (YAML or JSON, one document). Raises PlatformError."""
    try:
        docs = [d for d in iter_documents(text) if d.data is not None]
    except Exception as e:  # yaml.YAMLError, YamlLimitError
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else getattr(e, "line", 1)
        raise PlatformError([f"{source}:{line}: cannot parse: {getattr(e, 'problem', None) or e}"]) from None
    if len(docs) != 1 or not isinstance(docs[0].data, Mapping):
        line = docs[1].line if len(docs) > 1 else docs[0].line if docs else 1
        raise PlatformError(
            [f"{source}:{line}: expected exactly one Platform document (kind: Platform, {PROFILE_API})"]
        )
    return platform_from_doc(docs[0].data, source)


# ------------------------------------------------------------------------ cloud node pools ---


def instance_pool(t: InstanceType, count: int, *, service: str | None = None, max_pods: int | None = None, **kw: Any):
    """A :class:`~podfit.platform.NodePool` of ``count`` nodes of type ``t`` (its VM class is the
    type's name, the node's ``node.kubernetes.io/instance-type``), with the service's allocatable,
    its GPUs as ``nvidia.com/gpu`` and its architecture as ``kubernetes.io/arch``."""
    labels = dict(kw.pop("labels", ()))
    if t.arch != "amd64":
        labels.setdefault("kubernetes.io/arch", t.arch)
    return NodePool(
        vm_class=t.name,
        count=count,
        labels=tuple(sorted(labels.items())),
        allocatable=cloud_allocatable(service or service_of(t), t, max_pods),
        extended=((GPU, t.gpus),) if t.gpus else (),
        **kw,
    )


def instance_classes(pools: Sequence[Any]) -> tuple[Any, ...]:
    """The VM classes of the instance types ``pools`` use (cloud pools name no profile class)."""
    known = instance_types()
    seen = dict.fromkeys(p.vm_class for p in pools if p.vm_class in known)
    return tuple(VMClass(n, known[n].vcpus, known[n].memory_bytes, False, builtin=True) for n in seen)


def with_nodes(platform: Any, specs: Sequence[str]) -> Any:
    """``platform`` with the ``--nodes`` pools added; a built-in profile gives way to a managed
    cluster of just those pools (runtime kubernetes, no vSphere hosts)."""
    pools = []
    taken: set[str] = set()
    for text in specs:
        service, t, n = parse_nodes(text, MAX_NODES)
        name, i = t.name, 2
        while name in taken:
            name, i = f"{t.name}-{i}", i + 1
        taken.add(name)
        pools.append(instance_pool(t, n, service=service, name=name))
    if sum(p.count for p in pools) > MAX_NODES:
        raise CloudError(
            f"{sum(p.count for p in pools):,} nodes in all: at most {MAX_NODES:,}, Kubernetes' nodes per cluster"
        )
    if platform.is_default:
        platform = Platform(name="--nodes", source="--nodes", is_default=False, runtime="kubernetes")
    return replace(
        platform,
        vm_classes=tuple(platform.vm_classes)
        + tuple(c for c in instance_classes(pools) if platform.vm_class(c.name) is None),
        node_pools=tuple(platform.node_pools) + tuple(pools),
    )
