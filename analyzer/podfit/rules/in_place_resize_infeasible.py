"""## What it does
A pod that is to be resized in place (a VerticalPodAutoscaler in `InPlaceOrRecreate` mode targets
it, or its containers declare a `resizePolicy`) whose resizes the kubelet marks Infeasible or the
API server refuses, for the pod as declared and the nodes' kubelet: CPU resizes of a Guaranteed pod
under the static CPU Manager, memory resizes of a Guaranteed pod under the Static Memory Manager,
resizes that would change the pod's QoS class, memory-limit decreases with `NotRequired` before
Kubernetes 1.34, and in-place resize switched off.

## Why it matters
In-place pod resize (KEP-1287, beta in 1.33, GA in 1.35) changes requests and limits without a
restart, but not every resize: the kubelet keeps a Guaranteed pod's exclusive CPUs and NUMA-pinned
memory as admitted and marks such resizes Infeasible unless the InPlacePodVerticalScalingExclusiveCPUs
gate (alpha since 1.32, KEP-5554) or InPlacePodVerticalScalingExclusiveMemory (alpha) is on; the API server
refuses a resize that changes the QoS class, and before 1.34 a memory-limit decrease unless the
container restarts. A VPA in `InPlaceOrRecreate` mode then falls back to evicting the pod: the
restart the mode was chosen to avoid, on every recommendation it applies. A manual resize stays
Infeasible.

## Example
```yaml
kind: VerticalPodAutoscaler
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: pricing}   # Guaranteed, 4 whole CPUs
  updatePolicy: {updateMode: InPlaceOrRecreate}                      # static CPU Manager: evicts
```

## How to fix
Exclude CPU from the VPA (`controlledResources: [memory]`) for Guaranteed pods on static CPU
Manager nodes, or turn on InPlacePodVerticalScalingExclusiveCPUs where the release has it; let the
VPA control requests and limits together (`controlledValues: RequestsAndLimits`) so the QoS class
stays; give BestEffort pods requests; on 1.33 set `restartPolicy: RestartContainer` for memory.

## Source
kubernetes pkg/kubelet/allocation/allocation_manager.go (canResizePod: "Resize is infeasible for
Guaranteed Pods alongside CPU Manager policy static"); pkg/apis/core/validation/validation.go
(ValidatePodResize: the QoS class may not change; memory limits cannot be decreased unless
resizePolicy is RestartContainer, 1.33); KEP-1287, KEP-5554; kubernetes/autoscaler
vertical-pod-autoscaler docs, "In-place updates" (InPlaceOrRecreate)

## Implementation
A VerticalPodAutoscaler (autoscaling.k8s.io) with `updatePolicy.updateMode: InPlaceOrRecreate`
resizes the workload its `targetRef` names (kind and name, in its namespace); per container its
`resourcePolicy.containerPolicies` entry (else the `"*"` one) decides whether it is left alone
(`mode: Off`), which resources it controls (`controlledResources`, default cpu and memory) and
whether limits follow (`controlledValues`, default RequestsAndLimits). Without such a VPA, a
container's `resizePolicy` entries name the resources someone means to resize by hand; only the
kubelet's Infeasible cases are then reported. Feature gates and their stage by release come from
podfit.kubeversions (set in a KubeletConfiguration or the platform, else their default for the
nodes' version; with no version, the latest release). The QoS class is the pod's as declared,
after Kubernetes defaulting. A resizePolicy the API server rejects outright is PF210's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .. import kubeversions
from ..facts import KubeletFacts
from ..findings import Finding
from ..model import QOS_BEST_EFFORT, QOS_GUARANTEED, K8sObject, Workload
from ..options import Option
from ..rule_context import RuleContext
from .resize_policy_invalid import _list, _template_spec

ID = "PF211"
SLUG = "in-place-resize-infeasible"
TITLE = "In-place resize the kubelet or API server refuses"
SEVERITY = "warning"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

VPA_KIND = "VerticalPodAutoscaler"
IN_PLACE = "InPlacePodVerticalScaling"
EXCLUSIVE_CPUS = "InPlacePodVerticalScalingExclusiveCPUs"
EXCLUSIVE_MEMORY = "InPlacePodVerticalScalingExclusiveMemory"


def in_place_vpas(objects: tuple[K8sObject, ...]) -> dict[tuple[str, str, str], K8sObject]:
    """(namespace, kind, name) of each workload a VPA in InPlaceOrRecreate mode targets → the VPA
    (the first in input order where several do)."""
    out: dict[tuple[str, str, str], K8sObject] = {}
    for o in objects:
        if o.kind != VPA_KIND or not o.ref.api_version.startswith("autoscaling.k8s.io/"):
            continue
        spec = o.raw.get("spec")
        if not isinstance(spec, Mapping):
            continue
        policy = spec.get("updatePolicy")
        target = spec.get("targetRef")
        if not isinstance(policy, Mapping) or policy.get("updateMode") != "InPlaceOrRecreate":
            continue
        if not isinstance(target, Mapping) or not isinstance(target.get("kind"), str):
            continue
        name = target.get("name")
        if isinstance(name, str) and name:
            out.setdefault((o.ref.namespace or "default", target["kind"], name), o)
    return out


def _container_policy(vpa: K8sObject, container: str) -> tuple[frozenset[str], bool]:
    """(resources the VPA resizes in ``container``, whether it moves limits with requests)."""
    policies = vpa.raw.get("spec", {}).get("resourcePolicy")
    entries = policies.get("containerPolicies") if isinstance(policies, Mapping) else None
    chosen: Mapping[str, Any] = {}
    for e in entries if isinstance(entries, list) else []:
        if isinstance(e, Mapping) and e.get("containerName") == container:
            chosen = e
            break
        if isinstance(e, Mapping) and e.get("containerName") == "*" and not chosen:
            chosen = e
    if chosen.get("mode") == "Off":
        return frozenset(), True
    controlled = chosen.get("controlledResources")
    resources = (
        frozenset(r for r in controlled if r in ("cpu", "memory"))
        if isinstance(controlled, list)
        else frozenset({"cpu", "memory"})
    )
    return resources, chosen.get("controlledValues") != "RequestsOnly"


def _resize_policies(spec: Mapping[str, Any], name: str) -> dict[str, str]:
    """resourceName → restartPolicy of the container called ``name`` (app containers and sidecars)."""
    for key in ("containers", "initContainers"):
        for c in _list(spec.get(key)):
            if isinstance(c, Mapping) and c.get("name") == name:
                out = {}
                for p in _list(c.get("resizePolicy")):
                    if isinstance(p, Mapping) and isinstance(p.get("resourceName"), str):
                        out[p["resourceName"]] = str(p.get("restartPolicy") or "NotRequired")
                return out
    return {}


def _on(kub: KubeletFacts, gate: str) -> bool:
    """Whether ``gate`` is on: as set, else its default for the nodes' version (the latest release
    when the version is unknown)."""
    value = kub.feature(gate)
    return kubeversions.feature_default(gate, kubeversions.LATEST) is True if value is None else value


def check(ctx: RuleContext) -> Iterator[Finding]:
    vpas = in_place_vpas(ctx.objects)
    for w in ctx.workloads:
        found = _template_spec(w.obj)
        if found is not None:
            yield from _check_workload(
                ctx, w, vpas.get((w.ref.namespace or "default", w.ref.kind, w.ref.name)), found[1]
            )


def _check_workload(ctx: RuleContext, w: Workload, vpa: K8sObject | None, spec: Mapping[str, Any]) -> Iterator[Finding]:
    kub = ctx.facts.kubelet
    vtext = f"Kubernetes {kub.version_text}" if kub.version else "the latest Kubernetes (the version is not given)"
    qos = w.pod.qos_class
    by = f"the VerticalPodAutoscaler {vpa.ref.name} (InPlaceOrRecreate)" if vpa else ""
    if vpa is not None and not _on(kub, IN_PLACE):
        yield Finding(
            ID,
            f"in-place resize is off in {vtext} ({IN_PLACE} off): {by} can only evict and recreate the pod",
            w.location,
            w.ref,
            None,
            {"reason": "in-place-resize-off", "gate": IN_PLACE, "kubernetes_version": kub.version_text},
        )
        return
    if vpa is None and not _on(kub, IN_PLACE):
        return
    for c in w.pod.all_containers:
        if c.init and not c.sidecar:
            continue
        policies = _resize_policies(spec, c.name)
        if vpa is not None:
            resources, with_limits = _container_policy(vpa, c.name)
        else:
            resources, with_limits = frozenset(r for r in policies if r in ("cpu", "memory")), True
        if not resources:
            continue
        reasons: list[tuple[str, str, dict[str, Any]]] = []
        if qos == QOS_GUARANTEED and "cpu" in resources and kub.policy == "static" and not _on(kub, EXCLUSIVE_CPUS):
            reasons.append(
                (
                    "cpu-manager-static",
                    "the kubelet marks CPU resizes of a Guaranteed pod under the static CPU Manager Infeasible "
                    f"({EXCLUSIVE_CPUS} off in {vtext})",
                    {"gate": EXCLUSIVE_CPUS},
                )
            )
        if qos == QOS_GUARANTEED and "memory" in resources and kub.memory_manager_policy == "Static":
            if not _on(kub, EXCLUSIVE_MEMORY):
                reasons.append(
                    (
                        "memory-manager-static",
                        "the kubelet marks memory resizes of a Guaranteed pod under the Static Memory Manager "
                        f"Infeasible ({EXCLUSIVE_MEMORY} off in {vtext})",
                        {"gate": EXCLUSIVE_MEMORY},
                    )
                )
        if vpa is not None and qos == QOS_GUARANTEED and not with_limits:
            reasons.append(
                (
                    "qos-change",
                    "it changes requests only (controlledValues: RequestsOnly), which would make the Guaranteed "
                    "pod Burstable: the API server refuses a resize that changes the QoS class",
                    {"qos_class": qos},
                )
            )
        if vpa is not None and qos == QOS_BEST_EFFORT:
            reasons.append(
                (
                    "qos-change",
                    "it would give the BestEffort pod requests, making it Burstable: the API server refuses a "
                    "resize that changes the QoS class",
                    {"qos_class": qos},
                )
            )
        if (
            vpa is not None
            and "memory" in resources
            and with_limits
            and c.resources.memory_limit is not None
            and policies.get("memory", "NotRequired") == "NotRequired"
            and not kubeversions.behaviour("memory-limit-decrease-in-place", kub.version)
        ):
            reasons.append(
                (
                    "memory-limit-decrease",
                    f"the API server of {vtext} refuses to lower a memory limit in place unless the memory "
                    "resizePolicy is RestartContainer",
                    {"memory_resize_policy": "NotRequired"},
                )
            )
        for reason, text, details in reasons:
            yield Finding(
                ID,
                (
                    f"{by} resizes container {c.name} in place, but {text}; it falls back to evicting the pod"
                    if vpa
                    else f"container {c.name} declares a resizePolicy for {' and '.join(sorted(resources))}, but "
                    f"{text}: a resize stays pending"
                ),
                c.location,
                w.ref,
                c.name,
                {
                    "reason": reason,
                    **details,
                    "vpa": vpa.ref.name if vpa else None,
                    "kubernetes_version": kub.version_text,
                },
            )
