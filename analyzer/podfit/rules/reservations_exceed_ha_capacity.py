"""## What it does
CPU (MHz) or memory reservations of guaranteed node VMs and vSphere Pods exceed the vSphere
cluster's capacity after HA admission control.

## Why it matters
vSphere HA keeps the capacity of the tolerated host failures free; VMs whose reservations do not fit
what is left are refused power-on.

## Example
```yaml
# 7 guaranteed-8xlarge workers on the default 4-host cluster
```

## How to fix
Use best-effort classes for non-critical clusters, fewer or smaller guaranteed nodes, or add hosts.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Understand vSphere cluster CPU
capacity", HA admission control
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..quantity import format_memory
from ..rule_context import RuleContext
from ..vsphere import analyze_capacity, describe_vms, finding_anchor, reservations_of

ID = "PF501"
SLUG = "reservations-exceed-ha-capacity"
TITLE = "Reservations above HA-adjusted capacity"
SEVERITY = "error"
CATEGORY = "capacity"
REQUIRES: tuple[str, ...] = ("hosts",)
OPTIONS: tuple[Option, ...] = ()


def skip_reason(ctx: RuleContext) -> str | None:
    return None if ctx.platform.hosts else "hosts in the platform"


def check(ctx: RuleContext) -> Iterator[Finding]:
    # the vSphere cluster (the platform's hosts) runs the node VMs and CRXs of every Kubernetes
    # cluster: all of them count, each object once per cluster (duplicates are PF910)
    vms = reservations_of(ctx.facts.crx_workloads, ctx.platform, ctx.node_pools)
    report = analyze_capacity(vms, ctx.platform, placement=False)
    cap = report.capacity
    over = []
    if report.cpu_over_ha:
        over.append(
            f"CPU reservations {report.cpu_reserved_mhz:,} MHz > {cap.cpu_available_mhz:,} MHz available "
            f"({cap.cpu_total_mhz:,} MHz less {cap.cpu_ha_reserved_mhz:,} for HA)"
        )
    if report.memory_over_ha:
        over.append(
            f"memory reservations {format_memory(report.memory_reserved_bytes, exact=False)} > "
            f"{format_memory(cap.memory_available_bytes, exact=False)} available after HA"
        )
    if not over:
        return
    key = (
        (lambda v: v.cpu_reservation_mhz * v.count)
        if report.cpu_over_ha
        else (lambda v: v.memory_reservation_bytes * v.count)
    )
    loc, obj = finding_anchor(vms, ctx.objects, ctx.platform.source, key)
    yield Finding(
        ID,
        f"{'; '.join(over)} (HA: {cap.ha_policy}): VMs beyond it will be refused power-on. "
        f"Largest: {describe_vms(vms, key)}",
        loc,
        obj,
        details={
            "cpu_reserved_mhz": report.cpu_reserved_mhz,
            "cpu_available_mhz": cap.cpu_available_mhz,
            "memory_reserved_bytes": report.memory_reserved_bytes,
            "memory_available_bytes": cap.memory_available_bytes,
            "ha_policy": cap.ha_policy,
        },
    )
