"""PF403: on vSphere Pods, memory limits that add up to more than the CRX cap
max(3 × Σ requests, largest limit): memory beyond the cap is never given."""

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
