"""## What it does
The reservations fit the cluster's total but no assignment of VMs to hosts holds them (DRS admission
is per host).

## Why it matters
DRS admits a VM only where one host has its whole reservation unreserved; fragmentation can leave a
VM unpowered though the cluster total suffices.

## Example
```yaml
# three guaranteed VMs of 60% of a host each on two hosts
```

## How to fix
Use smaller VM classes, or fewer guaranteed VMs.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), DRS admission control
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext
from ..vsphere import describe_vms, finding_anchor, place, reservation_share, reservations_of

ID = "PF502"
SLUG = "reservation-unplaceable"
TITLE = "Reservations cannot be placed host by host"
SEVERITY = "error"
CATEGORY = "capacity"
REQUIRES: tuple[str, ...] = ("hosts",)
OPTIONS: tuple[Option, ...] = (
    Option("time-budget", "duration", 5, "Time for the exact placement proof (seconds, or 500ms, 10s, 2m).", minimum=0),
)


def skip_reason(ctx: RuleContext) -> str | None:
    return None if ctx.platform.hosts else "hosts in the platform"


def check(ctx: RuleContext) -> Iterator[Finding]:
    # the vSphere cluster (the platform's hosts) runs the node VMs and CRXs of every Kubernetes
    # cluster: all of them count, each object once per cluster (duplicates are PF910)
    vms = reservations_of(ctx.facts.crx_workloads, ctx.platform, ctx.node_pools)
    budget = float(ctx.option("time-budget"))
    result = place(vms, ctx.platform, budget)
    if result.feasible is not False:
        return  # placeable, or undecided within the budget (not a finding)

    # The finding points at what the proof is about: a VM larger than every host, else the VM group
    # that reserves the largest share of the hosts' capacity in the dimension the proof is short of
    # (never an arbitrary VM the heuristic happened to leave unplaced)
    about = result.about
    too_large = [v for v in vms if v.name in about]
    dimension = about[0] if about and about[0] in ("cpu", "memory") and not too_large else None
    key = reservation_share(ctx.platform, dimension)
    loc, obj = finding_anchor(too_large or [v for v in vms if v.reserves], ctx.objects, ctx.platform.source, key)
    unplaced = ", ".join(f"{n} × {k}" for n, k in result.unplaced)
    yield Finding(
        ID,
        f"no assignment of the reserving VMs to hosts exists ({result.detail or result.proof}); DRS will refuse "
        f"to power on some of them"
        + (f", e.g. {unplaced}" if unplaced else "")
        + f". Largest reservations: {describe_vms(vms, key)}",
        loc,
        obj,
        details={"proof": result.proof, "unplaced": dict(result.unplaced), "about": list(about)},
    )
