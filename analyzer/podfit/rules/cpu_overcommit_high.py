"""## What it does
The vCPUs of powered-on VMs (control planes included) per physical core exceed the threshold
(default 300%; 100% where critical workloads run).

## Why it matters
Up to about 300% vCPU overcommit raised total throughput in the study; beyond it, and for
latency-critical work beyond 100%, vCPUs wait for cores.

## Example
```yaml
# 21 clusters × 6 vCPUs on a 40-core host
```

## How to fix
Fewer or smaller node VMs, or more hosts.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Over-committing vSphere cluster
CPU with TKG clusters"

## Implementation
Threshold ``ratio-percent`` (default 300: the study's peak throughput, 20 clusters × 6 vCPUs on a
40-core host); ``critical-ratio-percent`` (default 100: no overcommit where critical workloads
run, per the study's advice) applies when the platform is critical or a cluster manifest in the
input is annotated ``podfit.io/critical``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext
from ..vsphere import capacity, critical_workloads, describe_vms, finding_anchor, overcommit_exceeds, reservations_of

ID = "PF503"
SLUG = "cpu-overcommit-high"
TITLE = "vCPU overcommit above threshold"
SEVERITY = "warning"
CATEGORY = "capacity"
REQUIRES: tuple[str, ...] = ("hosts",)
OPTIONS: tuple[Option, ...] = (
    Option("ratio-percent", "integer", 300, "Largest vCPU : physical core ratio, in percent.", minimum=1),
    Option(
        "critical-ratio-percent",
        "integer",
        100,
        "The ratio where critical workloads run (platform or cluster marked critical).",
        minimum=1,
    ),
)


def skip_reason(ctx: RuleContext) -> str | None:
    return None if ctx.platform.hosts else "hosts in the platform"


def check(ctx: RuleContext) -> Iterator[Finding]:
    # the vSphere cluster (the platform's hosts) runs the node VMs and CRXs of every Kubernetes
    # cluster: all of them count, each object once per cluster (duplicates are PF910)
    vms = reservations_of(ctx.facts.crx_workloads, ctx.platform, ctx.node_pools)
    cores = capacity(ctx.platform).physical_cores
    vcpus = sum(v.vcpus * v.count for v in vms)
    critical = critical_workloads(ctx.platform, ctx.objects)
    threshold = int(ctx.option("critical-ratio-percent") if critical else ctx.option("ratio-percent"))
    if not overcommit_exceeds(vcpus, cores, threshold):
        return
    key = lambda v: v.vcpus * v.count  # noqa: E731
    loc, obj = finding_anchor(vms, ctx.objects, ctx.platform.source, key)
    yield Finding(
        ID,
        f"{vcpus} vCPUs of powered-on VMs on {cores} physical cores = {vcpus * 100 // cores}% overcommit, above "
        f"{threshold}%{' (critical workloads run here)' if critical else ''}; watch CPU Ready. "
        f"Largest: {describe_vms(vms, key)}",
        loc,
        obj,
        details={
            "vcpus": vcpus,
            "physical_cores": cores,
            "percent": vcpus * 100 // cores,
            "threshold_percent": threshold,
            "critical": critical,
        },
    )
