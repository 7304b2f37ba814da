"""PF402: on vSphere Pods, a pod with requests but no limits (after Kubernetes defaulting): the
CRX is sized from the requests, which become a hard ceiling."""

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
