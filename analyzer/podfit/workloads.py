"""Workloads from the loaded objects, with Kubernetes' semantics applied: the LimitRange defaults
of their namespace (as the LimitRanger admission plugin gives them), request = limit where only a
limit is set, replicas. Also the LimitRanges' min/max/ratio bounds and the judgement of a container
against them (:func:`limit_range_violations`), and where a container stands in its object. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .findings import Finding
from .loader import _str_pairs
from .model import (
    Autoscaler,
    Container,
    CustomWorkloadKind,
    K8sObject,
    Location,
    ObjectRef,
    PodSpec,
    Resources,
    Workload,
    custom_kind,
    template_path,
)
from .quantity import QuantityError, format_cpu, format_memory, parse_cpu, parse_memory, parse_quantity
from .scheduling import constraints_from_spec, host_ports_from_spec

__all__ = [
    "build_workloads",
    "autoscalers",
    "autoscaled_replicas",
    "workload_from_object",
    "limit_range_defaults",
    "LimitRangeDefaults",
    "LimitRangeConstraint",
    "limit_range_constraints",
    "limit_range_violations",
    "container_name",
    "container_line",
    "container_path",
    "injected_proxy",
    "ISTIO_PROXY_DEFAULT",
]


@dataclass(frozen=True)
class LimitRangeDefaults:
    """What the LimitRanger admission plugin gives a container of the namespace that sets nothing:
    ``request`` fields hold the default requests, ``limit`` fields the default limits."""

    request: Resources
    limit: Resources


_NO_DEFAULTS = LimitRangeDefaults(Resources(), Resources())
# the config's workload kinds: (API group, kind) -> CustomWorkloadKind (podfit.model.custom_kind)
_Kinds = Mapping[tuple[str, str], CustomWorkloadKind] | None
_RES_FIELDS = (("cpu", parse_cpu), ("memory", parse_memory), ("ephemeral-storage", parse_memory))
_ATTR = {"cpu": "cpu", "memory": "memory", "ephemeral-storage": "storage"}


def _quantities(
    block: Any,
    kind: str,
    obj: K8sObject,
    container: str | None,
    findings: list[Finding],
    where: str,
    path: tuple[Any, ...] = (),
) -> dict[str, int]:
    """Parse a requests/limits mapping into {"cpu_request": m, ...}; bad values become PF903."""
    out: dict[str, int] = {}
    if not isinstance(block, dict):
        return out
    for name, parse in _RES_FIELDS:
        if name not in block:
            continue
        value = block[name]
        try:
            out[f"{_ATTR[name]}_{kind}"] = parse(value)
        except QuantityError as e:
            findings.append(
                Finding(
                    rule="PF903",
                    message=f"{where}{kind}s.{name}: {e.reason} ({value!r})",
                    location=obj.location_at(path + (name,)),
                    object=obj.ref,
                    container=container,
                    details={"field": f"{kind}s.{name}", "value": str(value)},
                )
            )
    return out


def _extended_quantities(
    res: Mapping[str, Any], obj: K8sObject, container: str, findings: list[Finding], path: tuple[Any, ...]
) -> None:
    """PF903 for an extended resource (``nvidia.com/gpu``, ...) of a container's requests or
    limits that the API server rejects: not a quantity, negative, or not a whole number (extended
    resources are counted in units). Packing leaves such a value out, so without the finding the
    pod would be sized as asking for none."""
    blocks = [(kind, res.get(f"{kind}s")) for kind in ("request", "limit")]
    if not any(isinstance(b, dict) and any("/" in str(n) for n in b) for _, b in blocks):
        return
    from .platform import is_extended_resource

    for kind, block in blocks:
        for rname, value in block.items() if isinstance(block, dict) else ():
            if not is_extended_resource(str(rname)):
                continue
            try:
                whole = parse_quantity(value).denominator == 1
                reason = "extended resources are counted in whole units"
            except QuantityError as e:
                whole, reason = False, e.reason
            if not whole:
                findings.append(
                    Finding(
                        rule="PF903",
                        message=f"{kind}s.{rname}: {reason} ({value!r})",
                        location=obj.location_at(path + (f"{kind}s", rname)),
                        object=obj.ref,
                        container=container,
                        details={"field": f"{kind}s.{rname}", "value": str(value)},
                    )
                )


def limit_range_defaults(objects: Sequence[K8sObject], findings: list[Finding]) -> dict[str, LimitRangeDefaults]:
    """The container defaults of each namespace's LimitRanges (an object without a namespace is in
    "default"). Each ``type: Container`` item is defaulted as the API server does: an unset default
    limit takes ``max``, an unset default request takes the default limit, then ``min``. Where a
    namespace has several LimitRanges, the first (in input order) to default a field wins, as
    admission applies them one after another to a container whose fields fill up."""
    by_ns: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
    for obj in sorted((o for o in objects if o.kind == "LimitRange"), key=lambda o: (o.location, o.ref.name)):
        ns = obj.ref.namespace or "default"
        spec = obj.raw.get("spec")
        limits = spec.get("limits") if isinstance(spec, dict) else None
        for i, item in enumerate(limits if isinstance(limits, list) else ()):
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            at = ("spec", "limits", i)

            def q(key: str, kind: str, item: dict = item, obj: K8sObject = obj, at: tuple = at) -> dict[str, int]:
                vals = _quantities(item.get(key), kind, obj, None, findings, f"LimitRange {key} ", at + (key,))
                return {k.rsplit("_", 1)[0]: v for k, v in vals.items()}

            default = {**q("max", "limit"), **q("default", "limit")}
            request = {**q("min", "request"), **default, **q("defaultRequest", "request")}
            req, lim = by_ns.setdefault(ns, ({}, {}))
            for res, v in request.items():
                req.setdefault(res, v)
            for res, v in default.items():
                lim.setdefault(res, v)
    return {
        ns: LimitRangeDefaults(
            Resources(**{f"{k}_request": v for k, v in req.items()}),
            Resources(**{f"{k}_limit": v for k, v in lim.items()}),
        )
        for ns, (req, lim) in by_ns.items()
    }


@dataclass(frozen=True)
class LimitRangeConstraint:
    """One bound a LimitRange item sets (``min``, ``max`` or ``maxLimitRequestRatio``) for one
    resource of each ``Container`` or of the whole ``Pod``, as the LimitRanger admission plugin
    enforces it. Quantities in millicores or bytes; a ratio in thousandths (``2`` → 2000)."""

    limit_range: ObjectRef
    location: Location
    scope: str  # "Container" | "Pod"
    bound: str  # "min" | "max" | "maxLimitRequestRatio"
    resource: str  # "cpu" | "memory" | "ephemeral-storage"
    value: int
    text: str  # the quantity as written


_BOUNDS = ("min", "max", "maxLimitRequestRatio")


def limit_range_constraints(objects: Sequence[K8sObject]) -> dict[str, tuple[LimitRangeConstraint, ...]]:
    """The min/max/maxLimitRequestRatio bounds of each namespace's LimitRanges (an object without a
    namespace is in "default"), Container and Pod items, in input order. A quantity that does not
    parse bounds nothing (its PF903 comes from :func:`limit_range_defaults`)."""
    out: dict[str, list[LimitRangeConstraint]] = {}
    for obj in sorted((o for o in objects if o.kind == "LimitRange"), key=lambda o: (o.location, o.ref.name)):
        spec = obj.raw.get("spec")
        limits = spec.get("limits") if isinstance(spec, dict) else None
        for i, item in enumerate(limits if isinstance(limits, list) else ()):
            if not isinstance(item, dict) or item.get("type") not in ("Container", "Pod"):
                continue
            for bound in _BOUNDS:
                block = item.get(bound)
                for name, parse in _RES_FIELDS:
                    if not isinstance(block, dict) or name not in block:
                        continue
                    try:
                        value = parse_cpu(block[name]) if bound == "maxLimitRequestRatio" else parse(block[name])
                    except QuantityError:
                        continue
                    out.setdefault(obj.ref.namespace or "default", []).append(
                        LimitRangeConstraint(
                            obj.ref,
                            obj.location_at(("spec", "limits", i, bound, name)),
                            str(item["type"]),
                            bound,
                            name,
                            value,
                            str(block[name]),
                        )
                    )
    return {ns: tuple(cs) for ns, cs in out.items()}


def limit_range_violations(request: int | None, limit: int | None, constraint: LimitRangeConstraint) -> str | None:
    """Why the LimitRanger admission plugin rejects a container (or pod) with this effective
    ``request`` and ``limit`` (None: not set) of the constraint's resource, in its own words, or
    None when it admits it (k8s.io/kubernetes plugin/pkg/admission/limitranger: min/max/ratio
    constraints, checked after the defaults are applied)."""
    c = constraint
    what = f"{c.resource} usage per {c.scope} is {c.text}"
    if c.bound == "min":
        if request is None:
            return f"minimum {what}, but no request is specified"
        if request < c.value:
            return f"minimum {what}, but the request is {_show(c.resource, request)}"
        if limit is not None and limit < c.value:
            return f"minimum {what}, but the limit is {_show(c.resource, limit)}"
        return None
    if c.bound == "max":
        if limit is None:
            return f"maximum {what}, but no limit is specified"
        if limit > c.value:
            return f"maximum {what}, but the limit is {_show(c.resource, limit)}"
        if request is not None and request > c.value:
            return f"maximum {what}, but the request is {_show(c.resource, request)}"
        return None
    ratio = f"{c.resource} max limit to request ratio per {c.scope} is {c.text}"
    if not request:
        return f"{ratio}, but no request is specified or the request is 0"
    if not limit:
        return f"{ratio}, but no limit is specified or the limit is 0"
    if limit * 1000 > c.value * request:
        return f"{ratio}, but the ratio is {limit / request:.3g}"
    return None


def _show(resource: str, value: int) -> str:
    return format_cpu(value) if resource == "cpu" else format_memory(value)


def _container(
    c: Mapping[str, Any],
    obj: K8sObject,
    init: bool,
    defaults: LimitRangeDefaults,
    findings: list[Finding],
    path: tuple[Any, ...],
) -> Container:
    name = container_name(c, init, path[-1])
    res = c.get("resources")
    res = res if isinstance(res, dict) else {}
    vals = _quantities(res.get("requests"), "request", obj, name, findings, "", path + ("resources", "requests"))
    vals.update(_quantities(res.get("limits"), "limit", obj, name, findings, "", path + ("resources", "limits")))
    _extended_quantities(res, obj, name, findings, path + ("resources",))
    declared = Resources(**vals)
    return Container(
        name=name,
        image=str(c.get("image") or ""),
        resources=declared.with_defaults(defaults.request, defaults.limit),
        declared=declared,
        location=obj.location_at(path),
        init=init,
        sidecar=init and c.get("restartPolicy") == "Always",
    )


def _dig(doc: Mapping[str, Any], path: Sequence[str]) -> Any:
    cur: Any = doc
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def _anti_affinity(spec: Mapping[str, Any]) -> tuple[tuple[tuple[str, str], ...], ...]:
    terms = _dig(spec, ("affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
    out = []
    for t in terms if isinstance(terms, list) else ():
        if isinstance(t, dict) and t.get("topologyKey") == "kubernetes.io/hostname":
            out.append(_str_pairs(_dig(t, ("labelSelector", "matchLabels"))))
    return tuple(out)


def _spread(spec: Mapping[str, Any]) -> int | None:
    skews = []
    for t in _list(spec.get("topologySpreadConstraints")):
        if (
            isinstance(t, dict)
            and t.get("topologyKey") == "kubernetes.io/hostname"
            and t.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
            and isinstance(t.get("maxSkew"), int)
        ):
            skews.append(t["maxSkew"])
    return min(skews) if skews else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    """A count field (int32 in the API; PF902 reports values out of its range): ``default`` else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else default


def container_name(c: Mapping[str, Any], init: bool, index: int) -> str:
    """A container's name; one without calls itself by its place, as the Rego library does
    (``containers[0]``, ``initContainers[1]``)."""
    name = c.get("name")
    if isinstance(name, str) and name:
        return name
    return f"{'initContainers' if init else 'containers'}[{index}]"


def container_line(obj: K8sObject, name: str | None, kinds: _Kinds = None) -> int:
    """Line of the container called ``name`` in the object's pod spec (init containers first, as
    ``PodSpec.all_containers`` orders them), else the object's own line. The same answer as the
    container's location in :func:`workload_from_object`, from the raw object alone (so that the
    engine's workers can resolve it while the main process still builds the workloads)."""
    path = container_path(obj, name, kinds) if name else None
    return obj.location.line if path is None else obj.line_at(path)


def container_path(obj: K8sObject, name: str, kinds: _Kinds = None) -> tuple[str | int, ...] | None:
    """Path from the object's root to the mapping of its container called ``name`` (init
    containers first, as ``PodSpec.all_containers`` orders them); None when there is none.
    ``kinds``: the config's workload kinds (see :func:`podfit.model.custom_kind`)."""
    path = template_path(obj.ref.api_version, obj.kind, kinds)
    if path is None:
        return None
    template = _dig(obj.raw, path) if path else obj.raw
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return None
    sp = tuple(path) + ("spec",)
    for key in ("initContainers", "containers"):
        for i, c in enumerate(_list(spec.get(key))):
            if isinstance(c, dict) and container_name(c, key == "initContainers", i) == name:
                return sp + (key, i)
    return None


# Istio's proxy resources (the istiod chart's global.proxy.resources) when the pod sets none of the
# sidecar.istio.io/proxy* annotations; where it sets one, the injection template writes those alone.
ISTIO_PROXY_DEFAULT = Resources(cpu_request=100, memory_request=128 * 2**20, cpu_limit=2000, memory_limit=2**30)
_ISTIO_RESOURCES = (
    ("sidecar.istio.io/proxyCPU", "cpu_request"),
    ("sidecar.istio.io/proxyMemory", "memory_request"),
    ("sidecar.istio.io/proxyCPULimit", "cpu_limit"),
    ("sidecar.istio.io/proxyMemoryLimit", "memory_limit"),
)
# Linkerd's proxy sets no requests or limits unless configured (its chart's proxy.resources are
# empty); these annotations, on the pod or else on its namespace, configure them.
_LINKERD_RESOURCES = (
    ("config.linkerd.io/proxy-cpu-request", "cpu_request"),
    ("config.linkerd.io/proxy-memory-request", "memory_request"),
    ("config.linkerd.io/proxy-cpu-limit", "cpu_limit"),
    ("config.linkerd.io/proxy-memory-limit", "memory_limit"),
)


@dataclass(frozen=True)
class BadProxyQuantity:
    """A proxy-resource annotation whose value is not a quantity: its key, value and why, and
    whether it is on the namespace (else on the pod)."""

    key: str
    value: str
    reason: str
    on_namespace: bool


def _mesh_resources(
    keys: Sequence[tuple[str, str]], *annotations: Mapping[str, str], bad: list[BadProxyQuantity] | None = None
) -> Resources | None:
    """The proxy's resources the annotations set (the first mapping that sets a key wins; a value
    that is not a quantity sets nothing and is added to ``bad``), request = limit where only the
    limit is set (API defaulting); None when no key is present. A key present with a value that is
    no quantity still counts as present: Istio's injection template writes its defaults only when
    none of the keys is set (``isset``), so the proxy then has the valid ones alone."""
    vals: dict[str, int] = {}
    present = False
    for key, attr in keys:
        for i, source in enumerate(annotations):
            if key in source:
                present = True
                try:
                    vals[attr] = (parse_cpu if attr.startswith("cpu") else parse_memory)(source[key])
                except QuantityError as e:
                    if bad is not None:
                        bad.append(BadProxyQuantity(key, str(source[key]), e.reason, i > 0))
                    continue
                break
    if not vals:
        return Resources() if present else None
    return Resources(**vals).with_defaults(Resources(), Resources())


def _istio_injects(labels: Mapping[str, str], annotations: Mapping[str, str], ns: Mapping[str, str]) -> bool:
    """Whether Istio's sidecar injector adds its proxy to the pod, as its webhooks select pods:
    the namespace label ``istio-injection: enabled``, else (the namespace without that label) an
    ``istio.io/rev`` label on the namespace, else the pod label ``sidecar.istio.io/inject: "true"``
    or ``istio.io/rev``; never when the pod's label or annotation ``sidecar.istio.io/inject`` is
    "false", nor for a pod labelled ``istio.io/dataplane-mode: ambient`` (ambient mode runs no
    sidecar). The annotation ``"true"`` alone selects nothing: the webhooks select on labels."""
    if labels.get("sidecar.istio.io/inject") == "false" or annotations.get("sidecar.istio.io/inject") == "false":
        return False
    if labels.get("istio.io/dataplane-mode") == "ambient":
        return False
    if "istio-injection" in ns:
        return ns["istio-injection"] == "enabled"
    if "istio.io/rev" in ns:
        return True
    return labels.get("sidecar.istio.io/inject") == "true" or "istio.io/rev" in labels


def injected_proxy(
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    namespace: K8sObject | None,
    location: Location,
    present: frozenset[str] = frozenset(),
    bad: list[BadProxyQuantity] | None = None,
) -> Container | None:
    """The proxy container a service mesh's mutating webhook adds to a pod with these template
    ``labels`` and ``annotations`` in ``namespace`` (the Namespace object of the run, None when the
    run has none), or None. Istio (see :func:`_istio_injects`) adds ``istio-proxy`` with 100m/128Mi
    requests and 2/1Gi limits, or what its ``sidecar.istio.io/proxy*`` annotations set; Linkerd
    (``linkerd.io/inject: enabled`` or ``ingress`` on the pod, else on the namespace; ``disabled``
    on the pod opts out) adds ``linkerd-proxy`` with what ``config.linkerd.io/proxy-*`` annotations
    of the pod or namespace set, nothing by default. A pod that already holds the proxy (``present``:
    its container names; injected before it was written) gets none. The proxy's init container
    (istio-init, linkerd-init) takes the proxy's resources and so never raises the pod's request.
    A proxy-resource annotation that is not a quantity sets nothing and is added to ``bad``."""
    ns_labels = dict(namespace.labels) if namespace is not None else {}
    ns_annotations = dict(namespace.annotations) if namespace is not None else {}
    if _istio_injects(labels, annotations, ns_labels):
        if "istio-proxy" in present:
            return None
        res = _mesh_resources(_ISTIO_RESOURCES, annotations, bad=bad)
        return _proxy("istio-proxy", ISTIO_PROXY_DEFAULT if res is None else res, location)
    linkerd = annotations.get("linkerd.io/inject", ns_annotations.get("linkerd.io/inject"))
    if linkerd in ("enabled", "ingress") and "linkerd-proxy" not in present:
        res = _mesh_resources(_LINKERD_RESOURCES, annotations, ns_annotations, bad=bad)
        return _proxy("linkerd-proxy", Resources() if res is None else res, location)
    return None


def _bad_proxy_finding(
    b: BadProxyQuantity, obj: K8sObject, path: tuple[Any, ...], namespace: K8sObject | None, seen: list[Finding]
) -> list[Finding]:
    """PF903 for a proxy-resource annotation that is not a quantity: on the pod template's
    annotation, or once on the Namespace's. Istio's injector writes the value into the proxy's
    resources, where the API server rejects the pod; Linkerd's leaves it out with a warning."""
    istio = b.key.startswith("sidecar.istio.io/")
    effect = (
        "Istio's injector writes it into the istio-proxy container's resources, and the API server rejects the pod"
        if istio
        else "Linkerd's injector leaves it out (a warning in its log): the proxy runs without it"
    )
    owner = namespace if b.on_namespace and namespace is not None else obj
    where = (
        ("metadata", "annotations", b.key)
        if owner is not obj or not path
        else path + ("metadata", "annotations", b.key)
    )
    f = Finding(
        rule="PF903",
        message=f"annotation {b.key}: {b.reason} ({b.value!r}): {effect}",
        location=owner.location_at(where),
        object=owner.ref,
        details={"field": f"metadata.annotations.{b.key}", "value": b.value},
    )
    if owner is not obj and any(g.rule == f.rule and g.object == f.object and g.message == f.message for g in seen):
        return []  # the namespace's annotation: one finding for all its pods
    return [f]


def _proxy(name: str, res: Resources, location: Location) -> Container:
    return Container(name=name, image="", resources=res, declared=res, location=location, injected=True)


def workload_from_object(
    obj: K8sObject,
    defaults: LimitRangeDefaults,
    findings: list[Finding],
    namespace: K8sObject | None = None,
    kinds: _Kinds = None,
) -> Workload | None:
    """The workload of ``obj`` (None when it is not a workload kind or has no pod spec), with the
    LimitRange ``defaults`` of its namespace and the proxy a service mesh injects (``namespace``:
    its Namespace object in the run, whose labels and annotations select injection). ``kinds``:
    the config's workload kinds (see :func:`podfit.model.custom_kind`)."""
    path = template_path(obj.ref.api_version, obj.kind, kinds)
    if path is None:
        return None
    template = _dig(obj.raw, path) if path else obj.raw
    if not isinstance(template, dict):
        return None
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return None
    tmeta = template.get("metadata")
    if not isinstance(tmeta, dict):
        tmeta = {}
    sp = tuple(path) + ("spec",)
    containers = tuple(
        _container(c, obj, False, defaults, findings, sp + ("containers", i))
        for i, c in enumerate(_list(spec.get("containers")))
        if isinstance(c, dict)
    )
    inits = tuple(
        _container(c, obj, True, defaults, findings, sp + ("initContainers", i))
        for i, c in enumerate(_list(spec.get("initContainers")))
        if isinstance(c, dict)
    )
    overhead = _quantities(spec.get("overhead"), "request", obj, None, findings, "overhead ", sp + ("overhead",))
    own = spec.get("resources")
    pod_resources = None
    if isinstance(own, dict):
        rp = sp + ("resources",)
        vals = _quantities(own.get("requests"), "request", obj, None, findings, "pod ", rp + ("requests",))
        vals.update(_quantities(own.get("limits"), "limit", obj, None, findings, "pod ", rp + ("limits",)))
        vals = {k: v for k, v in vals.items() if not k.startswith("storage")}  # pod level: CPU and memory
        pod_resources = Resources(**vals) if vals else None
    labels = _str_pairs(tmeta.get("labels"))
    annotations = _str_pairs(tmeta.get("annotations")) if path else obj.annotations
    bad: list[BadProxyQuantity] = []
    proxy = injected_proxy(
        dict(labels), dict(annotations), namespace, obj.location, frozenset(c.name for c in containers + inits), bad
    )
    for b in bad:
        findings.extend(_bad_proxy_finding(b, obj, tuple(path), namespace, findings))
    pod = PodSpec(
        containers=containers,
        init_containers=inits,
        overhead_cpu=overhead.get("cpu_request", 0),
        overhead_memory=overhead.get("memory_request", 0),
        node_selector=_str_pairs(spec.get("nodeSelector")),
        anti_affinity_hostname=_anti_affinity(spec),
        hostname_spread_max_skew=_spread(spec),
        labels=labels,
        annotations=annotations,
        runtime_class=spec.get("runtimeClassName") if isinstance(spec.get("runtimeClassName"), str) else None,
        scheduling=constraints_from_spec(spec, daemonset=obj.kind == "DaemonSet"),
        pod_resources=pod_resources,
        host_ports=host_ports_from_spec(spec),
        host_network=spec.get("hostNetwork") is True,
        injected=() if proxy is None else (proxy,),
    )
    kind = obj.kind
    custom = custom_kind(obj.ref.api_version, kind, kinds)
    if custom is not None:
        if custom.replicas is None:
            replicas = _knative_scale(dict(annotations))
        else:
            replicas = _int(_dig(obj.raw, custom.replicas), 1)
        return Workload(obj=obj, pod=pod, replicas=replicas, per_node=custom.per_node)
    if kind == "Pod":
        replicas = 1
    elif kind == "Job":
        replicas = _int(_dig(obj.raw, ("spec", "parallelism")), 1)
    elif kind == "CronJob":
        replicas = _int(_dig(obj.raw, ("spec", "jobTemplate", "spec", "parallelism")), 1)
    elif kind == "DaemonSet":
        replicas = 0
    else:
        replicas = _int(_dig(obj.raw, ("spec", "replicas")), 1)
    return Workload(obj=obj, pod=pod, replicas=replicas, per_node=kind == "DaemonSet")


def _knative_scale(annotations: Mapping[str, str]) -> int:
    """The pods a Knative Service or Configuration keeps: its template's
    ``autoscaling.knative.dev/min-scale`` (or ``minScale``) when above 0, else its
    ``initial-scale`` (``initialScale``), else Knative's default initial scale, 1."""
    for keys in (("min-scale", "minScale"), ("initial-scale", "initialScale")):
        for key in keys:
            value = annotations.get(f"autoscaling.knative.dev/{key}")
            if value is not None and value.strip().isdigit() and (int(value) > 0 or keys[0] == "initial-scale"):
                return int(value)
    return 1


def build_workloads(
    objects: Sequence[K8sObject], ranges: Mapping[str, LimitRangeDefaults] | None = None, kinds: _Kinds = None
) -> tuple[tuple[Workload, ...], tuple[Finding, ...]]:
    """Workloads of every kind, with the LimitRange defaults of their namespace applied (``ranges``
    from :func:`limit_range_defaults`, computed here when not given); ``kinds`` the config's
    workload kinds (see :func:`podfit.model.custom_kind`). Pure."""
    findings: list[Finding] = []
    if ranges is None:
        ranges = limit_range_defaults(objects, findings)
    scalers = autoscalers(objects)
    namespaces: dict[str, K8sObject] = {}
    for obj in objects:
        if obj.kind == "Namespace" and obj.ref.api_version == "v1" and obj.ref.name:
            namespaces.setdefault(obj.ref.name, obj)  # the first of a name, as the API server keeps it
    workloads = []
    for obj in objects:
        if template_path(obj.ref.api_version, obj.kind, kinds) is not None:
            ns = obj.ref.namespace or "default"
            w = workload_from_object(obj, ranges.get(ns, _NO_DEFAULTS), findings, namespaces.get(ns), kinds)
            if w is not None:
                a = scalers.get((obj.ref.namespace or "default", obj.kind, obj.ref.name))
                if a is not None:
                    w = _autoscaled(w, a)
                workloads.append(w)
    return tuple(workloads), tuple(findings)


# Kinds an autoscaler may scale (their spec.replicas is the count it sets).
SCALABLE_KINDS = frozenset(
    {"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Rollout", "CloneSet", "DeploymentConfig"}
)
HPA_KIND = "HorizontalPodAutoscaler"
KEDA_KIND = "ScaledObject"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _given(spec: Mapping[str, Any], key: str, default: int) -> Any:
    """``spec[key]``, or ``default`` when it is left out or null."""
    value = spec.get(key)
    return default if value is None else value


def autoscalers(objects: Sequence[K8sObject]) -> dict[tuple[str, str, str], tuple[K8sObject, int, int]]:
    """(namespace, kind, name) of each scaled workload → (the autoscaler, its minimum, its maximum).

    A HorizontalPodAutoscaler (autoscaling/v1, v2, v2beta*) gives ``minReplicas`` (default 1) and
    ``maxReplicas``; a KEDA ScaledObject (keda.sh) ``minReplicaCount`` (default 0: scaled to zero
    while idle) and ``maxReplicaCount`` (default 100); its ``scaleTargetRef.kind`` defaults to
    Deployment. The target is in the autoscaler's namespace. An autoscaler without a usable maximum,
    or with a minimum above its maximum (the API server rejects it), is left out; where several
    scale one workload, the first in input order counts."""
    out: dict[tuple[str, str, str], tuple[K8sObject, int, int]] = {}
    for obj in objects:
        spec = obj.raw.get("spec")
        if not isinstance(spec, dict):
            continue
        if obj.kind == HPA_KIND and obj.ref.api_version.startswith("autoscaling/"):
            low, high, default_kind = _count(_given(spec, "minReplicas", 1)), _count(spec.get("maxReplicas")), ""
        elif obj.kind == KEDA_KIND and obj.ref.api_version.startswith("keda.sh/"):
            low = _count(_given(spec, "minReplicaCount", 0))
            high, default_kind = _count(_given(spec, "maxReplicaCount", 100)), "Deployment"
        else:
            continue
        target = spec.get("scaleTargetRef")
        if not isinstance(target, dict) or low is None or high is None or low > high:
            continue
        kind, name = target.get("kind") or default_kind, target.get("name")
        if not isinstance(kind, str) or kind not in SCALABLE_KINDS or not isinstance(name, str) or not name:
            continue
        out.setdefault((obj.ref.namespace or "default", kind, name), (obj, low, high))
    return out


def autoscaled_replicas(declared: int | None, low: int, high: int) -> int:
    """The pods a workload keeps under an autoscaler of bounds [low, high], as the HPA controller
    sets them: ``spec.replicas`` left out counts as the minimum; otherwise replicas are raised to
    the minimum and lowered to the maximum; an explicit 0 turns the autoscaling off (0 pods)."""
    if declared == 0:
        return 0
    return min(max(low if declared is None else declared, low), high)


def _autoscaled(w: Workload, scaler: tuple[K8sObject, int, int]) -> Workload:
    obj, low, high = scaler
    declared = _count(_dig(w.obj.raw, ("spec", "replicas")))
    a = Autoscaler(obj.ref, obj.location, low, high, declared)
    return replace(w, replicas=autoscaled_replicas(declared, low, high), autoscaler=a)
