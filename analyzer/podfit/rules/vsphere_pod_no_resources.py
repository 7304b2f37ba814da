"""## What it does
On vSphere Pods, a container (init containers included) has neither requests nor limits after
LimitRange defaults, so the CRX is sized without it; with no container setting any it gets the
default 1 vCPU and 1 GiB.

## Why it matters
A vSphere Pod's CRX VM is sized from its containers' requests and limits; with none it gets 1 vCPU
and 1 GiB whatever the load (89k TPS for Redis in the study, against 175k with 2 CPUs).

## Example
```yaml
containers: [{name: redis, image: redis}]
```

## How to fix
Set CPU and memory requests and limits on every container of a vSphere Pod.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying container resource
requests and limits" (vSphere Pods)
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..model import Workload
from ..options import Option
from ..rule_context import RuleContext
from ..vsphere import describe_crx
from ._crx import sized_pods

ID = "PF401"
SLUG = "vsphere-pod-no-resources"
TITLE = "vSphere Pod container without resources"
SEVERITY = "error"
CATEGORY = "vsphere"
REQUIRES: tuple[str, ...] = ("runtime-vsphere-pods",)
OPTIONS: tuple[Option, ...] = ()


def _sized_at_pod_level(w: Workload) -> bool:
    """The pod's own spec.resources set CPU and memory (a request or a limit of each)."""
    own = w.pod.pod_resources
    if own is None:
        return False
    return (own.cpu_request is not None or own.cpu_limit is not None) and (
        own.memory_request is not None or own.memory_limit is not None
    )


def check(ctx: RuleContext) -> Iterator[Finding]:
    for w, size, unreadable in sized_pods(ctx):
        if _sized_at_pod_level(w):
            continue  # pod-level resources size the CRX: its containers need none of their own
        for c in w.pod.all_containers:
            if not c.resources.is_empty or c.name in unreadable:
                continue
            word = "init container" if c.init else "container"
            if size.cpu_from == "none" and size.memory_from == "none":
                crx = f"its CRX gets the defaults of a pod that sets none: {describe_crx(size)}"
            else:
                crx = f"its CRX is sized from the other containers alone: {describe_crx(size)}"
            yield Finding(
                ID,
                f'{word} "{c.name}" of a vSphere Pod has no requests or limits; {crx}',
                c.location,
                w.ref,
                c.name,
                {"init_container": c.init, **size.figures()},
            )
