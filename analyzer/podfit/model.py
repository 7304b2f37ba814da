"""The frozen model podfit's analyzers work on.

Everything here is immutable and quantities are exact integers: CPU in millicores, memory and
storage in bytes. ``None`` means "not set" (different from an explicit zero). Parsing manifests into
this model is :mod:`podfit.loader`'s job, building workloads :mod:`podfit.workloads`'; these types
know nothing about files beyond the :class:`Location` they carry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .scheduling import NO_CONSTRAINTS, HostPort, SchedulingConstraints

__all__ = [
    "Location",
    "ObjectRef",
    "Resources",
    "Container",
    "PodSpec",
    "K8sObject",
    "Workload",
    "Autoscaler",
    "QOS_GUARANTEED",
    "QOS_BURSTABLE",
    "QOS_BEST_EFFORT",
    "WORKLOAD_KINDS",
    "CustomWorkloadKind",
    "CUSTOM_WORKLOAD_KINDS",
    "api_group",
    "custom_kind",
    "template_path",
]

QOS_GUARANTEED = "Guaranteed"
QOS_BURSTABLE = "Burstable"
QOS_BEST_EFFORT = "BestEffort"

# kind -> path (list of keys) from the object to its pod spec's parent (the object holding "spec").
WORKLOAD_KINDS: Mapping[str, tuple[str, ...]] = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


@dataclass(frozen=True)
class CustomWorkloadKind:
    """A workload kind a CRD defines: the path from the object to its pod template (the object
    holding the pod's metadata and spec) and to its replica count (None: from Knative's autoscaling
    annotations, see podfit.workloads), and whether it runs one pod per node."""

    template: tuple[str, ...]
    replicas: tuple[str, ...] | None = ("spec", "replicas")
    per_node: bool = False


# (API group, kind) -> CustomWorkloadKind: the workload CRDs real repositories hold. OpenKruise's
# Advanced StatefulSet and Advanced DaemonSet (apps.kruise.io) are StatefulSet and DaemonSet by
# kind, which WORKLOAD_KINDS already reads (their template and replicas stand where the built-in
# kinds' do). policies/lib/k8s.rego holds the same table (tests/test_facts_agree.py).
CUSTOM_WORKLOAD_KINDS: Mapping[tuple[str, str], CustomWorkloadKind] = {
    ("argoproj.io", "Rollout"): CustomWorkloadKind(("spec", "template")),
    ("serving.knative.dev", "Service"): CustomWorkloadKind(("spec", "template"), None),
    ("serving.knative.dev", "Configuration"): CustomWorkloadKind(("spec", "template"), None),
    ("apps.kruise.io", "CloneSet"): CustomWorkloadKind(("spec", "template")),
    ("keda.sh", "ScaledJob"): CustomWorkloadKind(
        ("spec", "jobTargetRef", "template"), ("spec", "jobTargetRef", "parallelism")
    ),
    ("apps.openshift.io", "DeploymentConfig"): CustomWorkloadKind(("spec", "template")),
}


def api_group(api_version: str) -> str:
    """The API group of an apiVersion ("" for the core group's "v1")."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def custom_kind(
    api_version: str, kind: str, configured: Mapping[tuple[str, str], CustomWorkloadKind] | None = None
) -> CustomWorkloadKind | None:
    """The workload CRD of this apiVersion and kind: ``configured`` (the config's
    ``workload-kinds:``, keyed by API group and kind) first, then :data:`CUSTOM_WORKLOAD_KINDS`;
    None for a built-in kind or one podfit does not know."""
    if kind in WORKLOAD_KINDS:
        return None
    key = (api_group(api_version), kind)
    found = configured.get(key) if configured else None
    return found if found is not None else CUSTOM_WORKLOAD_KINDS.get(key)


def template_path(
    api_version: str, kind: str, configured: Mapping[tuple[str, str], CustomWorkloadKind] | None = None
) -> tuple[str, ...] | None:
    """Path from an object of this apiVersion and kind to its pod template (() for a Pod), or None
    when it is no workload kind podfit knows: the built-in kinds by kind alone, a CRD's by its
    API group and kind (see :func:`custom_kind`)."""
    path = WORKLOAD_KINDS.get(kind)
    if path is not None:
        return path
    custom = custom_kind(api_version, kind, configured)
    return None if custom is None else custom.template


class Location:
    """Where something stands in the input: file path as given, 1-based line and column.

    Treat it as immutable. The line may be resolved lazily (``Location.lazy``): the fast YAML path does not
    track lines, so a container's or a field's line is looked up only when something asks for it
    (a finding being reported), by re-reading just that document with line tracking.
    """

    __slots__ = ("file", "_line", "column", "_resolve")

    def __init__(self, file: str, line: int = 0, column: int = 0, _resolve: Callable[[], int] | None = None) -> None:
        # plain assignments (a value object by convention: nothing assigns after construction)
        self.file = file
        self._line = line
        self.column = column
        self._resolve = _resolve

    @classmethod
    def lazy(cls, file: str, resolve: Callable[[], int]) -> Location:
        return cls(file, 0, 0, resolve)

    @property
    def line(self) -> int:
        if self._resolve is not None:
            self._line = self._resolve()
            self._resolve = None
        return self._line

    def _key(self) -> tuple[str, int, int]:
        return (self.file, self.line, self.column)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Location) and self._key() == other._key()

    def __lt__(self, other: Location) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Location) -> bool:
        return self._key() <= other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Location(file={self.file!r}, line={self.line}, column={self.column})"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        # a nameless object (a KubeletConfiguration) is named by its kind alone
        return f"{self.kind} {ns}{self.name}" if self.name or ns else self.kind

    def to_json(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }


@dataclass(frozen=True)
class Resources:
    """Requests and limits of one container (or a sum of them). ``None`` = not set."""

    cpu_request: int | None = None
    cpu_limit: int | None = None
    memory_request: int | None = None
    memory_limit: int | None = None
    storage_request: int | None = None
    storage_limit: int | None = None

    @property
    def is_unset(self) -> bool:
        return self == _UNSET

    @property
    def is_empty(self) -> bool:
        return all(v is None for v in (self.cpu_request, self.cpu_limit, self.memory_request, self.memory_limit))

    def with_defaults(self, default_request: Resources, default_limit: Resources) -> Resources:
        """Kubernetes defaulting of one container: an unset request takes the container's own limit
        (API defaulting, before admission), then the LimitRange defaults fill what is still unset."""
        if (
            (self.cpu_request is not None or self.cpu_limit is None)
            and (self.memory_request is not None or self.memory_limit is None)
            and (self.storage_request is not None or self.storage_limit is None)
            and (default_request is _UNSET or default_request.is_unset)
            and (default_limit is _UNSET or default_limit.is_unset)
        ):
            return self  # nothing to default (the common case)
        vals = {}
        for res in ("cpu", "memory", "storage"):
            lim = getattr(self, f"{res}_limit")
            req = getattr(self, f"{res}_request")
            if req is None:
                req = lim if lim is not None else getattr(default_request, f"{res}_request")
            if lim is None:
                lim = getattr(default_limit, f"{res}_limit")
            vals[f"{res}_request"] = req
            vals[f"{res}_limit"] = lim
        return Resources(**vals)


_UNSET = Resources()


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    resources: Resources  # effective, after Kubernetes defaulting
    declared: Resources  # exactly as written in the manifest
    location: Location
    init: bool = False
    sidecar: bool = False  # init container with restartPolicy: Always (runs for the pod's life)
    # added at admission by a service mesh's webhook (Istio's istio-proxy, Linkerd's linkerd-proxy),
    # not in the manifest: see podfit.workloads.injected_proxy
    injected: bool = False


@dataclass(frozen=True)
class PodSpec:
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...] = ()
    overhead_cpu: int = 0
    overhead_memory: int = 0
    node_selector: tuple[tuple[str, str], ...] = ()
    # label selectors (as sorted key/value tuples) of required pod anti-affinity terms on hostname
    anti_affinity_hostname: tuple[tuple[tuple[str, str], ...], ...] = ()
    # maxSkew of DoNotSchedule topology spread constraints on hostname
    hostname_spread_max_skew: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()
    runtime_class: str | None = None
    # nodeSelector, required node affinity, tolerations, required pod (anti-)affinity and topology
    # spread, fully parsed (podfit.scheduling); the three fields above are the older, partial view
    scheduling: SchedulingConstraints = NO_CONSTRAINTS
    # spec.resources (PodLevelResources, Kubernetes 1.32+): the pod's own CPU/memory requests and
    # limits, as written (None: the pod sets none and its containers' add up)
    pod_resources: Resources | None = None
    # the ports the pod binds on its node (app containers' hostPorts; containerPorts under
    # hostNetwork), as the scheduler's NodePorts filter counts them
    host_ports: tuple[HostPort, ...] = ()
    host_network: bool = False
    # the app containers a service mesh's admission webhook adds (PodSpec.counted): not in the
    # manifest, so no rule reports on them, but they count in the pod's requests, limits and QoS
    injected: tuple[Container, ...] = ()

    @property
    def all_containers(self) -> tuple[Container, ...]:
        """The containers of the manifest: init containers first, then the app containers."""
        return self.init_containers + self.containers

    @property
    def counted(self) -> tuple[Container, ...]:
        """The containers the pod runs once admitted: :attr:`all_containers` and the injected ones."""
        return self.all_containers + self.injected

    def _effective(self, attr: str) -> int | None:
        """Kubernetes' effective pod request/limit for one resource field.

        max(largest init container, Σ app containers + Σ sidecars started before it) + overhead.
        Returns None when no container sets the field (for limits: when some app container has no
        limit, the pod is unbounded, also None).
        """
        res = attr.split("_")[0]
        overhead = {"cpu": self.overhead_cpu, "memory": self.overhead_memory}.get(res, 0)
        own = self.pod_level(attr)  # pod-level resources decide (the scheduler's and kubelet's PodRequests/PodLimits)
        if own is not None:
            return own + overhead
        if all(getattr(c.resources, attr) is None for c in self.counted):
            return None
        if attr.endswith("_limit") and any(getattr(c.resources, attr) is None for c in self.counted if not c.sidecar):
            return None  # an app or one-shot init container without a limit: the pod is unbounded
        return self.combined(lambda c: getattr(c.resources, attr)) + overhead

    def pod_level(self, attr: str) -> int | None:
        """The pod-level (``spec.resources``) value of ``attr`` (``cpu_request``, ``memory_limit``…),
        None when the pod does not set it (its containers' values then count). An unset pod-level
        request next to a pod-level limit is defaulted by the API server: to the containers'
        effective requests when some container sets one (None here), else to the limit."""
        own = self.pod_resources
        res, kind = attr.split("_")
        if own is None or res not in ("cpu", "memory"):
            return None
        value: int | None = getattr(own, attr)
        if value is None and kind == "request" and not self._some_request(res):
            value = getattr(own, f"{res}_limit")
        return value

    def _some_request(self, res: str) -> bool:
        return any(getattr(c.resources, f"{res}_request") is not None for c in self.counted)

    def _containers_request(self, res: str) -> int:
        attr = f"{res}_request"

        def value(c: Container) -> int | None:
            v: int | None = getattr(c.resources, attr)
            return v

        return self.combined(value)

    def effective(self, attr: str) -> int | None:
        """The pod's effective value of a Resources field (``cpu_request``, ``storage_limit``, …) as
        :meth:`_effective` computes it; None when unset (or, for a limit, unbounded)."""
        return self._effective(attr)

    def combined(self, value: Callable[[Container], int | None]) -> int:
        """An amount of the pod from one per container (None counts as 0), as Kubernetes combines
        them, without overhead: max(Σ app containers and sidecars, each one-shot init container +
        the sidecars declared before it, which run beside it)."""
        best = sum(value(c) or 0 for c in self.containers + self.injected) + sum(
            value(c) or 0 for c in self.init_containers if c.sidecar
        )
        sidecars = 0
        for c in self.init_containers:
            if c.sidecar:
                sidecars += value(c) or 0
            else:
                best = max(best, (value(c) or 0) + sidecars)
        return best

    @cached_property
    def cpu_request(self) -> int:
        return self._effective("cpu_request") or 0

    @cached_property
    def memory_request(self) -> int:
        return self._effective("memory_request") or 0

    @cached_property
    def storage_request(self) -> int:
        return self._effective("storage_request") or 0

    @cached_property
    def cpu_limit(self) -> int | None:
        return self._effective("cpu_limit")

    @cached_property
    def memory_limit(self) -> int | None:
        return self._effective("memory_limit")

    @cached_property
    def qos_class(self) -> str:
        """QoS class per Kubernetes: Guaranteed, Burstable or BestEffort (from effective resources;
        from the pod-level resources alone when the pod sets them, as ComputePodQOS does)."""
        own = self.pod_resources
        if own is not None and not own.is_empty:
            requests = {res: v for res in ("cpu", "memory") if (v := getattr(own, f"{res}_request")) is not None}
            limits = {res: v for res in ("cpu", "memory") if (v := getattr(own, f"{res}_limit")) is not None}
            # the API server defaults an unset pod-level request next to a limit: to the containers'
            # effective request when some container sets one, else to the limit
            for res, v in limits.items():
                if res not in requests:
                    requests[res] = self._containers_request(res) if self._some_request(res) else v
            if set(limits) == {"cpu", "memory"} and requests == limits:
                return QOS_GUARANTEED
            return QOS_BURSTABLE
        containers = self.counted
        if all(c.resources.is_empty for c in containers):
            return QOS_BEST_EFFORT
        for c in containers:
            r = c.resources
            if r.cpu_limit is None or r.memory_limit is None:
                return QOS_BURSTABLE
            if r.cpu_request != r.cpu_limit or r.memory_request != r.memory_limit:
                return QOS_BURSTABLE
        return QOS_GUARANTEED

    def annotation(self, key: str) -> str | None:
        return dict(self.annotations).get(key)


@dataclass(frozen=True, eq=False)
class K8sObject:
    """One object of the input, any kind. ``raw`` is the parsed document (treat as read-only)."""

    ref: ObjectRef
    location: Location
    raw: Mapping[str, Any] = field(repr=False)
    annotations: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    # where the document's fields stand: an object with line(path, default) -> int (see yamlio)
    lines: Any = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        return self.ref.kind

    def line_at(self, path: tuple[Any, ...], default: int | None = None) -> int:
        """Line of the field at ``path`` (keys and list indexes) in this object, resolved now."""
        fallback = self.location.line if default is None else default
        return self.lines.line(path, fallback) if self.lines is not None else fallback

    def location_at(self, path: tuple[Any, ...]) -> Location:
        """Location of the field at ``path``, resolved only when its line is read."""
        if self.lines is None:
            return self.location
        return Location.lazy(self.location.file, lambda: self.lines.line(path, self.location.line))

    def annotation(self, key: str) -> str | None:
        return dict(self.annotations).get(key)


@dataclass(frozen=True)
class Autoscaler:
    """A HorizontalPodAutoscaler or KEDA ScaledObject scaling a workload between ``min_replicas``
    and ``max_replicas``; ``declared_replicas`` is the workload's own ``spec.replicas`` (None: left
    out, the autoscaler decides)."""

    ref: ObjectRef
    location: Location
    min_replicas: int
    max_replicas: int
    declared_replicas: int | None = None


@dataclass(frozen=True, eq=False)
class Workload:
    """A workload object (Pod, Deployment, …, CronJob) with its normalised pod template."""

    obj: K8sObject
    pod: PodSpec
    # pods it asks for (1 for Pod, Job parallelism, 0 for DaemonSet: see per_node); under an
    # autoscaler the count it keeps at least (see podfit.workloads.autoscaled_replicas)
    replicas: int
    per_node: bool = False  # DaemonSet: one pod on every (matching) node
    autoscaler: Autoscaler | None = None

    @property
    def ref(self) -> ObjectRef:
        return self.obj.ref

    @property
    def location(self) -> Location:
        return self.obj.location
