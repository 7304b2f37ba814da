"""## What it does
On vSphere Pods, the memory limits add up to more than the CRX cap max(3 × Σ requests, largest
limit); memory beyond the cap is never given.

## Why it matters
The CRX memory is min(Σ limits, max(3 × Σ requests, largest single limit)); a limit above that
promises memory the pod cannot get.

## Example
```yaml
resources: {requests: {memory: 1Gi}, limits: {memory: 8Gi}}
```

## How to fix
Raise the memory requests, or lower the limits to the cap.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), vSphere Pods memory sizing
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext
from ..vsphere import describe_crx, fmt_memory
from ._crx import sized_pods

ID = "PF403"
SLUG = "vsphere-pod-memory-capped"
TITLE = "vSphere Pod memory limit beyond the CRX cap"
SEVERITY = "info"
CATEGORY = "vsphere"
REQUIRES: tuple[str, ...] = ("runtime-vsphere-pods",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    for w, size, unreadable in sized_pods(ctx):
        if unreadable or not size.memory_capped:
            continue
        # a container without a memory limit counts with its request (docs/vsphere.md)
        unlimited = any(c.resources.memory_limit is None for c in w.pod.all_containers)
        yield Finding(
            ID,
            f"the vSphere Pod's memory limits add up to {fmt_memory(size.memory_limits_bytes)}"
            f"{' (requests of containers without one)' if unlimited else ''}, above the CRX cap "
            f"max(3 × Σ requests, largest limit) = {fmt_memory(size.memory_cap_bytes)}: the CRX gets "
            f"{describe_crx(size)}, and memory beyond the cap is never given",
            w.location,
            w.ref,
            None,
            {
                **size.figures(),
                "memory_limits_bytes": size.memory_limits_bytes,
                "memory_cap_bytes": size.memory_cap_bytes,
            },
        )
