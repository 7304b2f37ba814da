"""## What it does
On vSphere Pods, a pod has requests but no limits after LimitRange defaults, so its requests become
a hard ceiling.

## Why it matters
Without limits the CRX gets exactly ceil(Σ CPU requests) vCPUs and Σ memory requests, and can never
burst above them.

## Example
```yaml
resources: {requests: {cpu: "2", memory: 4Gi}}
```

## How to fix
Set limits at the expected peak so the CRX can burst.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), vSphere Pods (2 CPUs → 175k TPS;
limit 8 → 252k)
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext
from ..vsphere import describe_crx
from ._crx import sized_pods

ID = "PF402"
SLUG = "vsphere-pod-requests-without-limits"
TITLE = "vSphere Pod with requests but no limits"
SEVERITY = "warning"
CATEGORY = "vsphere"
REQUIRES: tuple[str, ...] = ("runtime-vsphere-pods",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    for w, size, unreadable in sized_pods(ctx):
        sized_by = (size.cpu_from, size.memory_from)
        if unreadable or "limits" in sized_by or "requests" not in sized_by:
            continue
        yield Finding(
            ID,
            f"the vSphere Pod has requests but no limits, so its requests are a hard ceiling: the CRX gets "
            f"{describe_crx(size)} and cannot burst above them",
            w.location,
            w.ref,
            None,
            size.figures(),
        )
