"""## What it does
A container's `resizePolicy` that the API server rejects: a resource other than cpu or memory, the
same resource twice, a restart policy other than NotRequired or RestartContainer, RestartContainer
in a pod whose `restartPolicy` is Never (sidecars included), or, before Kubernetes 1.33, a
resizePolicy on any init container.

## Why it matters
With in-place pod resize (KEP-1287: the InPlacePodVerticalScaling gate, beta and on by default
from Kubernetes 1.33, GA in 1.35) the API server validates every container's resizePolicy when the
pod is created: a pod that breaks it is refused, and a Deployment's ReplicaSet creates no pod at
all. A container of a pod that is never restarted cannot be restarted to apply a resize either.

## Example
```yaml
restartPolicy: Never
containers:
- name: batch
  resizePolicy:
  - {resourceName: memory, restartPolicy: RestartContainer}   # refused: the pod never restarts
```

## How to fix
List each of cpu and memory at most once, with NotRequired or RestartContainer; use NotRequired in
pods with `restartPolicy: Never`; before 1.33 set resizePolicy only on app containers.

## Source
kubernetes/kubernetes pkg/apis/core/validation/validation.go: validateResizePolicy (resources,
duplicates, restart policies, the pod's restartPolicy Never), validateInitContainers (resizePolicy
on init containers unless opts.AllowSidecarResizePolicy); pkg/api/pod/util.go:
GetValidationOptionsFromPodSpecAndMeta (AllowSidecarResizePolicy is the InPlacePodVerticalScaling
gate, from 1.33), dropDisabledPodFields (gate off: the field is dropped); KEP-1287 "In-place Update
of Pod Resources"

## Implementation
Every container of every workload's pod template (init containers included), after the version
gate: the InPlacePodVerticalScaling stage comes from podfit.kubeversions for the nodes' version,
or from the gate set in a KubeletConfiguration or the platform. With the gate off the API server
drops the field instead of checking it, and the rule says nothing; with no version known the
latest release is assumed and the finding says so. The pod's restartPolicy defaults to Always
(Job and CronJob templates must set Never or OnFailure); validateResizePolicy judges every
container, init containers and sidecars included, by the pod's restartPolicy. From 1.33 (the
podfit.kubeversions behaviour resize-policy-on-init-containers) the API server accepts resizePolicy
on every init container, one-shot ones included: their resources cannot be resized, but the field is
not refused. Pod-level resources (`spec.resources`) have no resizePolicy of their own: nothing to
check there. A missing resourceName or restartPolicy in an entry is the schema's to report (PF902).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .. import kubeversions
from ..findings import Finding
from ..model import WORKLOAD_KINDS, K8sObject
from ..options import Option
from ..rule_context import RuleContext

ID = "PF210"
SLUG = "resize-policy-invalid"
TITLE = "resizePolicy the API server rejects"
SEVERITY = "error"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

GATE = "InPlacePodVerticalScaling"
INIT_CONTAINERS = "resize-policy-on-init-containers"  # podfit.kubeversions.BEHAVIOURS
RESOURCES = ("cpu", "memory")
POLICIES = ("NotRequired", "RestartContainer")


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else no items (a hostile or broken manifest)."""
    return value if isinstance(value, list) else []


def _template_spec(obj: K8sObject) -> tuple[tuple[str, ...], Mapping[str, Any]] | None:
    path = WORKLOAD_KINDS.get(obj.kind)
    if path is None:
        return None
    node: Any = obj.raw
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    spec = node.get("spec") if isinstance(node, Mapping) else None
    return (tuple(path) + ("spec",), spec) if isinstance(spec, Mapping) else None


def problems(
    policies: list[Any], pod_restart: str, init: bool, init_allowed: bool = True
) -> Iterator[tuple[int | None, str, dict[str, Any]]]:
    """(index of the entry or None, problem, details) for one container's resizePolicy list, as
    validateResizePolicy and validateInitContainers judge it (``init_allowed``: the release accepts
    resizePolicy on init containers)."""
    if init and not init_allowed:
        yield (
            None,
            "resizePolicy must not be set on an init container before Kubernetes "
            f"{kubeversions.release_text(kubeversions.BEHAVIOURS[INIT_CONTAINERS].first)} (sidecars included)",
            {"init_container": True},
        )
        return
    seen: set[str] = set()
    for i, p in enumerate(policies):
        if not isinstance(p, Mapping):
            continue
        name, policy = p.get("resourceName"), p.get("restartPolicy")
        if isinstance(name, str) and name:
            if name in seen:
                yield i, f"resizePolicy lists {name} twice", {"resource": name}
            seen.add(name)
            if name not in RESOURCES:
                yield i, f"resizePolicy resource {name!r} is not supported (cpu, memory)", {"resource": name}
        if isinstance(policy, str) and policy:
            if policy not in POLICIES:
                yield (
                    i,
                    f"resizePolicy restartPolicy {policy!r} is not supported (NotRequired, RestartContainer)",
                    {"restart_policy": policy},
                )
            elif pod_restart == "Never" and policy != "NotRequired":
                yield (
                    i,
                    f"resizePolicy restartPolicy {policy} in a pod whose restartPolicy is Never (must be NotRequired)",
                    {"restart_policy": policy, "pod_restart_policy": "Never"},
                )


def check(ctx: RuleContext) -> Iterator[Finding]:
    kub = ctx.facts.kubelet
    on = kub.feature(GATE)
    if on is False:
        return
    assumed = "" if on else " (assuming the latest Kubernetes: the version is not given)"
    init_allowed = kubeversions.behaviour(INIT_CONTAINERS, kub.version)
    for w in ctx.workloads:
        found = _template_spec(w.obj)
        if found is None:
            continue
        sp, spec = found
        restart = spec.get("restartPolicy")
        pod_restart = restart if isinstance(restart, str) and restart else "Always"
        for key in ("initContainers", "containers"):
            items = spec.get(key)
            if not isinstance(items, list):
                continue
            for ci, c in enumerate(items):
                if not isinstance(c, Mapping) or not isinstance(c.get("resizePolicy"), list) or not c["resizePolicy"]:
                    continue
                init = key == "initContainers"
                name = c.get("name") if isinstance(c.get("name"), str) else f"{key}[{ci}]"
                base = sp + (key, ci, "resizePolicy")
                for index, problem, details in problems(c["resizePolicy"], pod_restart, init, init_allowed):
                    yield Finding(
                        ID,
                        f"{problem}: the API server rejects the pod{assumed}",
                        w.obj.location_at(base if index is None else base + (index,)),
                        w.ref,
                        str(name),
                        {**details, "kubernetes_version": kub.version_text},
                    )
