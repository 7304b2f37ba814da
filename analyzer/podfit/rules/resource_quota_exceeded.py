"""## What it does
The workloads of a namespace need more than a ResourceQuota of that namespace allows (`spec.hard`:
`requests.cpu`, `requests.memory`, `limits.cpu`, `limits.memory`, `pods`, `count/…` and the older
object counts), counting each workload's replicas × its pod (LimitRange defaults and injected
service-mesh proxies included) plus the extra pods of a rolling update; or a workload leaves out a
request or limit the quota tracks.

## Why it matters
The ResourceQuota admission plugin refuses every pod (or object) that would take the namespace's
usage past `hard`: the third replica is never created, a rolling update stalls when its surge pod
is refused, and a pod without a request or limit the quota tracks is refused outright
("must specify limits.cpu"). Nothing reports it until the controller's events are read.

## Example
```yaml
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec:
  hard: {requests.cpu: "2", pods: "4"}
---
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3        # 3 × 1 CPU > 2, and the rolling update adds a fourth pod
  template:
    spec:
      containers:
        - {name: web, image: web:1, resources: {requests: {cpu: "1"}}}
```

## How to fix
Lower the replicas or the requests, raise the quota's `hard`, or give the rolling update room
(`maxSurge: 0` with `maxUnavailable: 1` replaces pods without extra ones). Set the request or limit
the quota tracks on every container, or a LimitRange default for the namespace.

## Source
Kubernetes, "Resource Quotas" (compute resource quota, object count quota, requests and limits
that must be specified); Kubernetes Deployment rolling update (`maxSurge` default 25%, rounded up);
Argo Rollouts, BlueGreen (previewReplicaCount) and Canary (maxSurge; "Dynamic Stable Scale": with
traffic routing "there will eventually exist double the number of replica pods")

## Implementation
Per quota, the sum over the workloads of its namespace (an object without a namespace is in
`default`) of (replicas + surge) × the pod's effective request or limit (overhead included): the
replicas as packing counts them (an autoscaler's minimum), the surge of a Deployment or Rollout on
`RollingUpdate` (`maxSurge`, default 25% of the replicas rounded up; none for `Recreate`). An Argo
Rollout's canary surges by its `maxSurge` too, but with `trafficRouting` (without
`dynamicStableScale`) the stable ReplicaSet stays at full size while the canary grows to it, and a
blue-green Rollout runs its new ReplicaSet beside the active one (`previewReplicaCount` before
promotion, the full replicas during the switch): both count the replicas again as surge.
DaemonSets are left out (one pod per node: the nodes are not known here), and so are the objects
the API server rejects for a removed apiVersion (PF906; ``Facts.rejected``), which the message
names. Every quota of a namespace applies on its own (a pod must fit each).

A quota with `scopes` or a `scopeSelector` counts only the pods in its scope, every term ANDed
(Kubernetes' quota evaluator): `BestEffort` / `NotBestEffort` by the pod's QoS class (an injected
proxy's resources included), `Terminating` / `NotTerminating` by the pod's
`activeDeadlineSeconds` (set and ≥ 0, or not), `PriorityClass` by its `priorityClassName` (the
run's `globalDefault` PriorityClass where the pod names none, as the Priority admission plugin
sets it before the quota's; `In` / `NotIn` the values, `Exists` / `DoesNotExist`; `scopes:
[PriorityClass]` is `Exists`), `CrossNamespacePodAffinity` by a pod (anti-)affinity term naming
`namespaces` or a `namespaceSelector`. A scoped quota tracks pods and compute resources only
(`BestEffort`: `pods` only; `VolumeAttributesClass` no pod); object counts and unknown scopes or
operators (which the API server rejects) are not checked. `count/<resource>.<group>` counts the
objects of the run whose kind and API group match (the plural of the kind).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..findings import Finding
from ..model import K8sObject, Workload, api_group, template_path
from ..options import Option
from ..quantity import QuantityError, format_cpu, format_memory, parse_cpu, parse_memory
from ..rule_context import RuleContext
from ..scheduling import LabelSelector, Requirement
from ..words import plural as counted

ID = "PF112"
SLUG = "resource-quota-exceeded"
TITLE = "Namespace exceeds its ResourceQuota"
SEVERITY = "error"
CATEGORY = "capacity"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

# quota resource → (the pod's attribute, parser, formatter); `cpu` and `memory`
# are the older names of requests.cpu and requests.memory
_COMPUTE: Mapping[str, tuple[str, Callable[[Any], int], Callable[[int], str]]] = {
    "requests.cpu": ("cpu_request", parse_cpu, format_cpu),
    "cpu": ("cpu_request", parse_cpu, format_cpu),
    "requests.memory": ("memory_request", parse_memory, format_memory),
    "memory": ("memory_request", parse_memory, format_memory),
    "limits.cpu": ("cpu_limit", parse_cpu, format_cpu),
    "limits.memory": ("memory_limit", parse_memory, format_memory),
}
# the older object-count names of core resources
_LEGACY_COUNTS = {
    "services": ("", "Service"),
    "configmaps": ("", "ConfigMap"),
    "secrets": ("", "Secret"),
    "persistentvolumeclaims": ("", "PersistentVolumeClaim"),
    "replicationcontrollers": ("", "ReplicationController"),
    "resourcequotas": ("", "ResourceQuota"),
}
_SURGING = frozenset({"Deployment", "Rollout"})


def plural(kind: str) -> str:
    """The resource name of a kind as the API server spells it in most cases (Ingress → ingresses,
    NetworkPolicy → networkpolicies, Deployment → deployments)."""
    low = kind.lower()
    if low.endswith(("s", "x", "ch", "sh")):
        return low + "es"
    if low.endswith("y") and low[-2:-1] not in ("a", "e", "i", "o", "u"):
        return low[:-1] + "ies"
    return low + "s"


def surge(w: Workload) -> int:
    """The extra pods an update of ``w`` runs beyond its replicas (see :func:`update_surge`)."""
    return update_surge(w)[0]


def update_surge(w: Workload) -> tuple[int, str]:
    """The extra pods an update of ``w`` runs beyond its replicas at its peak, and how (words for
    the message, "" for a rolling update's maxSurge): a Deployment's ``maxSurge`` (default 25%,
    rounded up; 0 for ``Recreate``); an Argo Rollout's canary ``maxSurge`` likewise, but with
    ``trafficRouting`` (and no ``dynamicStableScale``) the stable ReplicaSet stays at full size
    while the canary grows to it, and a blue-green Rollout runs the new ReplicaSet beside the
    active one (at ``previewReplicaCount`` before promotion, at full size during the switch): both
    peak at the replicas again. 0 for other kinds and 0 replicas."""
    if w.obj.kind not in _SURGING or w.replicas == 0:
        return 0, ""
    spec = w.obj.raw.get("spec")
    strategy = spec.get("strategy") if isinstance(spec, dict) else None
    strategy = strategy if isinstance(strategy, dict) else {}
    if w.obj.kind == "Rollout":
        blue_green = strategy.get("blueGreen")
        if isinstance(blue_green, dict):
            preview = blue_green.get("previewReplicaCount")
            before = (
                f", {preview} before promotion (previewReplicaCount)"
                if isinstance(preview, int) and not isinstance(preview, bool) and 0 <= preview < w.replicas
                else ""
            )
            return w.replicas, f"the blue-green switch runs a second ReplicaSet of {w.replicas}{before}"
        inner = strategy.get("canary")
        if not isinstance(inner, dict):
            return 0, ""
        if isinstance(inner.get("trafficRouting"), dict) and inner.get("dynamicStableScale") is not True:
            return w.replicas, (
                f"a canary with trafficRouting keeps the stable ReplicaSet at full size while the canary grows to "
                f"{w.replicas}"
            )
        value: Any = inner.get("maxSurge", "25%")
    else:
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return 0, ""
        rolling = strategy.get("rollingUpdate")
        value = rolling.get("maxSurge", "25%") if isinstance(rolling, dict) else "25%"
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, ""
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return -(-w.replicas * int(value[:-1]) // 100), ""
    return -(-w.replicas * 25 // 100), ""


_POD_SCOPES = frozenset(
    {"BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "PriorityClass", "CrossNamespacePodAffinity"}
)


@dataclass(frozen=True)
class _Term:
    """One term of a quota's scope: a scope name, an operator and its values."""

    scope: str
    operator: str
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.operator == "Exists":
            return self.scope
        if self.operator == "DoesNotExist":
            return f"no {self.scope}"
        return f"{self.scope} {self.operator} {', '.join(self.values)}"


def scope_terms(spec: Mapping[str, Any]) -> tuple[_Term, ...] | None:
    """The terms of a quota's ``scopes`` (each ``Exists``) and ``scopeSelector.matchExpressions``;
    None when one is malformed or not known (the API server rejects it)."""
    terms: list[_Term] = []
    scopes = spec.get("scopes")
    for name in scopes if isinstance(scopes, list) else ([] if scopes is None else [None]):
        if not isinstance(name, str):
            return None
        terms.append(_Term(name, "Exists"))
    selector = spec.get("scopeSelector")
    exprs = selector.get("matchExpressions") if isinstance(selector, dict) else None
    if selector is not None and not isinstance(exprs, list):
        return None
    for e in exprs or ():
        if not isinstance(e, dict) or not isinstance(e.get("scopeName"), str):
            return None
        op, values = e.get("operator"), e.get("values") or []
        if op not in ("In", "NotIn", "Exists", "DoesNotExist") or not isinstance(values, list):
            return None
        terms.append(_Term(e["scopeName"], op, tuple(str(v) for v in values)))
    if any(t.scope not in _POD_SCOPES and t.scope != "VolumeAttributesClass" for t in terms):
        return None
    if any(t.scope != "PriorityClass" and t.operator in ("In", "NotIn") for t in terms):
        return None  # In and NotIn take values: PriorityClass's alone
    return tuple(terms)


def _pod_spec(w: Workload, kinds: Mapping[Any, Any]) -> Mapping[str, Any]:
    """The raw pod spec of a workload's template ({} where it is not a mapping)."""
    node: Any = w.obj.raw
    for key in template_path(w.obj.ref.api_version, w.obj.kind, kinds) or ():
        node = node.get(key) if isinstance(node, dict) else None
    spec = node.get("spec") if isinstance(node, dict) else None
    return spec if isinstance(spec, dict) else {}


def _cross_namespace(spec: Mapping[str, Any]) -> bool:
    """Whether a pod (anti-)affinity term, required or preferred, names other namespaces."""
    affinity = spec.get("affinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) if isinstance(affinity, dict) else None
        if not isinstance(a, dict):
            continue
        terms = list(a.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [
            t.get("podAffinityTerm")
            for t in a.get("preferredDuringSchedulingIgnoredDuringExecution") or []
            if isinstance(t, dict)
        ]
        for t in terms:
            if isinstance(t, dict) and (t.get("namespaces") or t.get("namespaceSelector") is not None):
                return True
    return False


def in_scope(w: Workload, terms: Sequence[_Term], kinds: Mapping[Any, Any], default_priority: str = "") -> bool:
    """Whether the pods of ``w`` are in the scope of every term."""
    spec = _pod_spec(w, kinds) if terms else {}
    for t in terms:
        if t.scope == "PriorityClass":
            name = spec.get("priorityClassName")
            name = name if isinstance(name, str) and name else default_priority
            # a scope selector's operators are a label selector's, over one "label": the class
            selector = LabelSelector(match_expressions=(Requirement("PriorityClass", t.operator, t.values),))
            ok = selector.matches({"PriorityClass": name} if name else {})
        elif t.scope in ("BestEffort", "NotBestEffort"):
            ok = (w.pod.qos_class == "BestEffort") == (t.scope == "BestEffort")
        elif t.scope in ("Terminating", "NotTerminating"):
            deadline = spec.get("activeDeadlineSeconds")
            terminating = isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 0
            ok = terminating == (t.scope == "Terminating")
        elif t.scope == "CrossNamespacePodAffinity":
            ok = _cross_namespace(spec)
        else:  # VolumeAttributesClass: persistent volume claims, no pod
            ok = False
        if t.scope != "PriorityClass" and t.operator == "DoesNotExist":
            ok = not ok  # the other scopes take Exists or DoesNotExist
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class _Need:
    steady: int
    surge: int
    missing: tuple[str, ...]  # workloads whose pods leave the tracked value out (refused)
    how: tuple[str, ...] = ()  # the updates that surge by other than maxSurge, in words


def _need(workloads: Sequence[Workload], attr: str | None) -> _Need:
    steady = extra = 0
    missing: list[str] = []
    how: list[str] = []
    for w in workloads:
        pods, (more, why) = w.replicas, update_surge(w)
        if pods and why:
            how.append(f"{w.ref}: {why}")
        if pods == 0:
            continue  # no pod to refuse (scaled to zero)
        if attr is None:
            steady, extra = steady + pods, extra + more
            continue
        own = w.pod.pod_level(attr) is not None  # a pod-level value stands for its containers'
        unset = [] if own else [c.name for c in w.pod.counted if getattr(c.resources, attr) is None]
        if unset:
            missing.append(f"{w.ref} (container {', '.join(unset[:3])}{', …' if len(unset) > 3 else ''})")
            continue
        per_pod = w.pod.effective(attr) or 0
        steady += pods * per_pod
        extra += more * per_pod
    return _Need(steady, extra, tuple(missing), tuple(how))


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    objects = facts.unique_objects
    quotas = [o for o in objects if o.kind == "ResourceQuota" and o.ref.api_version == "v1"]
    if not quotas:
        return
    by_ns: dict[str, list[K8sObject]] = {}
    for o in objects:
        by_ns.setdefault(o.ref.namespace or "default", []).append(o)
    left_out: dict[str, list[K8sObject]] = {}
    for o in facts.rejected:  # never created: the facts' clusters leave them out
        left_out.setdefault(o.ref.namespace or "default", []).append(o)
    workloads: dict[str, list[Workload]] = {}
    for w in facts.unique_workloads:
        if not w.per_node:
            workloads.setdefault(w.ref.namespace or "default", []).append(w)
    default_priority = next(
        (
            o.ref.name
            for o in objects
            if o.kind == "PriorityClass"
            and o.ref.api_version.startswith("scheduling.k8s.io/")
            and o.raw.get("globalDefault") is True
        ),
        "",
    )
    for quota in quotas:
        spec = quota.raw.get("spec")
        if not isinstance(spec, dict):
            continue
        hard = spec.get("hard")
        terms = scope_terms(spec)
        if not isinstance(hard, dict) or terms is None:
            continue
        ns = quota.ref.namespace or "default"
        rejected = left_out.get(ns, [])
        note = (
            f" (leaving out {counted(len(rejected), 'object')} the API server rejects "
            f"for a removed apiVersion, PF906: {', '.join(str(o.ref) for o in rejected[:3])}"
            f"{', …' if len(rejected) > 3 else ''})"
            if rejected
            else ""
        )
        if terms:
            scoped = [w for w in workloads.get(ns, []) if in_scope(w, terms, facts.workload_kinds, default_priority)]
            pods_only = any(t.scope == "BestEffort" for t in terms)
            hard = {k: v for k, v in hard.items() if str(k) == "pods" or (str(k) in _COMPUTE and not pods_only)}
            scope = " and ".join(map(str, terms))
            yield from _check_quota(quota, hard, scoped, [], note, scope)
        else:
            yield from _check_quota(quota, hard, workloads.get(ns, []), by_ns.get(ns, []), note)


def _count(value: Any) -> int | None:
    """An object count of ``hard`` (a quantity: "10", 10, "1k"), None when it is none."""
    try:
        return parse_cpu(value) // 1000
    except QuantityError:
        return None


def _check_quota(
    quota: K8sObject,
    hard: Mapping[str, Any],
    workloads: Sequence[Workload],
    objects: Sequence[K8sObject],
    note: str,
    scope: str = "",
) -> Iterator[Finding]:
    for key, value in hard.items():
        name = str(key)
        at = quota.location_at(("spec", "hard", name))
        if name in _COMPUTE or name == "pods":
            yield from _compute(quota, at, name, value, workloads, note, scope)
            continue
        if name in _LEGACY_COUNTS:
            group, kind = _LEGACY_COUNTS[name]
            matching = [o for o in objects if o.kind == kind and api_group(o.ref.api_version) == group]
        elif name.startswith("count/"):
            resource, _, group = name[len("count/") :].partition(".")
            matching = [o for o in objects if plural(o.kind) == resource and api_group(o.ref.api_version) == group]
        else:
            continue
        limit = _count(value)
        if limit is not None and len(matching) > limit:
            yield Finding(
                ID,
                f"the namespace holds {len(matching)} objects counted by {name}, of hard {limit}: "
                f"the API server refuses those beyond it{note}",
                at,
                quota.ref,
                details={"resource": name, "hard": limit, "count": len(matching)},
            )


def _compute(
    quota: K8sObject, at: Any, name: str, value: Any, workloads: Sequence[Workload], note: str, scope: str = ""
) -> Iterator[Finding]:
    """``pods`` and the compute resources of one quota (``scope``: its scope in words, "" for none)."""
    whose = f"the namespace's workloads in the quota's scope ({scope})" if scope else "the namespace's workloads"
    attr: str | None = None
    show: Callable[[int], str] = str
    if name == "pods":
        limit = _count(value)
    else:
        attr, parse, show = _COMPUTE[name]
        try:
            limit = parse(value)
        except QuantityError:
            limit = None  # PF902 reports a malformed quota
    if limit is None:
        return
    need = _need(workloads, attr)
    if need.missing and attr is not None:
        res, kind = attr.split("_")
        more = f" and {len(need.missing) - 3} more" if len(need.missing) > 3 else ""
        yield Finding(
            ID,
            f"the quota tracks {name}, and the pods of {'; '.join(need.missing[:3])}{more} set no {res} {kind}: "
            f"the API server refuses them (must specify {name}){note}",
            at,
            quota.ref,
            details={"resource": name, "missing": list(need.missing)},
        )
    total = need.steady + need.surge
    if total <= limit:
        return
    update = "an update" if need.how else "a rolling update"
    if need.steady > limit:
        during = f" ({show(total)} during {update})" if need.surge else ""
        msg = (
            f"{whose} need {name} {show(need.steady)}{during}, of hard {show(limit)}: "
            f"the API server refuses the pods beyond it"
        )
    else:
        msg = (
            f"{whose} need {name} {show(need.steady)}, {show(total)} during {update}, "
            f"of hard {show(limit)}: the API server refuses the surge pods and the rollout stalls"
        )
    if need.how and need.surge:
        msg += f" ({'; '.join(need.how[:2])}{'; …' if len(need.how) > 2 else ''})"
    yield Finding(
        ID,
        msg + note,
        at,
        quota.ref,
        details={
            "resource": name,
            "hard": show(limit),
            "steady": show(need.steady),
            "surge": show(need.surge),
            "scope": scope or None,
        },
    )
