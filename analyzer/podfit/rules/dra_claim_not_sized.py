"""## What it does
A container uses Dynamic Resource Allocation claims (`resources.claims`, naming the pod's
`spec.resourceClaims`): podfit says which claims it cannot size.

## Why it matters
What a claim brings (GPUs and other devices, and from Kubernetes 1.36 with KEP-5517 CPU, memory and
hugepages the node gives through DRA) is decided by the claim's device requests and its DeviceClass
at scheduling time, not by the pod's requests. podfit packs pods by their CPU and memory requests:
a container whose resources come from a claim can be placed on nodes whose devices or capacity run
out first, and PF303/PF601 cannot tell. Before 1.34 the DynamicResourceAllocation gate is off by
default and the API server drops the claims from the pod: it runs without its devices.

## Example
```yaml
resourceClaims: [{name: gpu, resourceClaimTemplateName: single-gpu}]
containers:
- name: train
  resources: {claims: [{name: gpu}]}
```

## How to fix
Nothing to fix in the manifest: check the claim's devices against the nodes by other means (the
DRA driver's ResourceSlices), and keep CPU and memory requests on the container unless the nodes
give them through DRA. Where podfit's verdict is not needed, suppress the finding with a reason.

## Source
KEP-4381 (DRA structured parameters, GA 1.34), KEP-5517 (DRA: Node Allocatable Resources, alpha
1.36); kubernetes pkg/api/pod/util.go (dropDisabledFields: claims dropped with the gate off)

## Implementation
One finding per container that lists `resources.claims`, app, init and sidecar containers alike,
naming each claim and, when the pod's `spec.resourceClaims` entry names a ResourceClaimTemplate or
ResourceClaim (resource.k8s.io) among the inputs in the same namespace, its device classes. The
DynamicResourceAllocation and DRANodeAllocatableResources gates come from podfit.kubeversions (as
set, else their default for the nodes' version; unknown version: no statement about the gate).
With DRANodeAllocatableResources on, PF101 and PF102 do not report such a container's missing CPU
or memory request (the Rego reads ``data.podfit.platform.kubelet.dra_node_allocatable``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..findings import Finding
from ..model import K8sObject
from ..options import Option
from ..rule_context import RuleContext
from .resize_policy_invalid import _list, _template_spec

ID = "PF212"
SLUG = "dra-claim-not-sized"
TITLE = "DRA claim podfit cannot size"
SEVERITY = "info"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

DRA = "DynamicResourceAllocation"
NODE_ALLOCATABLE = "DRANodeAllocatableResources"
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")


def _device_classes(obj: K8sObject) -> list[str]:
    """deviceClassName of every device request of a ResourceClaim or ResourceClaimTemplate."""
    spec: Any = obj.raw.get("spec")
    if obj.kind == "ResourceClaimTemplate":
        spec = spec.get("spec") if isinstance(spec, Mapping) else None
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    out = []
    for r in requests if isinstance(requests, list) else []:
        if not isinstance(r, Mapping):
            continue
        # resource.k8s.io/v1: requests[].exactly.deviceClassName; v1beta1: requests[].deviceClassName
        exactly = r.get("exactly")
        name = (exactly if isinstance(exactly, Mapping) else r).get("deviceClassName")
        if isinstance(name, str) and name:
            out.append(name)
    return out


def check(ctx: RuleContext) -> Iterator[Finding]:
    kub = ctx.facts.kubelet
    claim_objects = {
        (o.ref.namespace or "default", o.kind, o.ref.name): o
        for o in ctx.objects
        if o.kind in CLAIM_KINDS and o.ref.api_version.startswith("resource.k8s.io/")
    }
    dra_on, native_on = kub.feature(DRA), kub.feature(NODE_ALLOCATABLE)
    for w in ctx.workloads:
        found = _template_spec(w.obj)
        if found is None:
            continue
        sp, spec = found
        ns = w.ref.namespace or "default"
        sources: dict[str, tuple[str, str]] = {}
        for rc in _list(spec.get("resourceClaims")):
            if isinstance(rc, Mapping) and isinstance(rc.get("name"), str):
                for key, kind in (
                    ("resourceClaimTemplateName", "ResourceClaimTemplate"),
                    ("resourceClaimName", "ResourceClaim"),
                ):
                    if isinstance(rc.get(key), str):
                        sources[rc["name"]] = (kind, rc[key])
        for key in ("initContainers", "containers"):
            for ci, c in enumerate(_list(spec.get(key))):
                res = c.get("resources") if isinstance(c, Mapping) else None
                claims = res.get("claims") if isinstance(res, Mapping) else None
                names = [x["name"] for x in _list(claims) if isinstance(x, Mapping) and isinstance(x.get("name"), str)]
                if not names:
                    continue
                described = []
                classes: dict[str, list[str]] = {}
                for n in names:
                    src = sources.get(n)
                    if src is None:
                        described.append(n)
                        continue
                    obj = claim_objects.get((ns, *src))
                    dc = _device_classes(obj) if obj is not None else []
                    if dc:
                        classes[n] = dc
                    described.append(f"{n} ({src[0]} {src[1]}" + (f": device class {', '.join(dc)})" if dc else ")"))
                text = (
                    f"uses DRA claim{'s' if len(names) > 1 else ''} {'; '.join(described)}: podfit does not size "
                    "what a claim brings, and packs the pod by its CPU and memory requests alone"
                )
                if dra_on is False:
                    text += f" ({DRA} is off in Kubernetes {kub.version_text}: the API server drops the claims)"
                elif native_on:
                    text += f" ({NODE_ALLOCATABLE} on: CPU and memory may come from the claim)"
                name = c.get("name") if isinstance(c.get("name"), str) else f"{key}[{ci}]"
                yield Finding(
                    ID,
                    text,
                    w.obj.location_at(sp + (key, ci, "resources", "claims")),
                    w.ref,
                    str(name),
                    {
                        "claims": names,
                        "device_classes": classes,
                        "dynamic_resource_allocation": dra_on,
                        "node_allocatable_from_claims": native_on,
                    },
                )
