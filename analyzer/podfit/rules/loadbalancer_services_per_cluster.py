"""## What it does
More Services of type LoadBalancer than the NSX-T load balancer serving them handles well (one per
TKG cluster, one per vSphere Namespace for vSphere Pods).

## Why it matters
With NSX-T networking each TKG cluster gets its own small load balancer, and vSphere Pods' Services
a medium one per vSphere Namespace. Every LoadBalancer Service takes a virtual server on it (small
20, medium 100, large 1000), and all of them share its throughput: in the study six application
instances in one TKG cluster served 31,800 users, one cluster each served 45,150 (over 40% more).
Only Services that deploy together count, each once; bare-metal clusters have no NSX-T load
balancer.

## Example
```yaml
# 21 Services of type LoadBalancer in one TKG cluster (small load balancer: 20 virtual servers)
kind: Service
spec: {type: LoadBalancer}
```

## How to fix
Split the Services across TKG clusters or vSphere Namespaces (each gets its own load balancer), or
put them behind one Ingress; watch the NSX-T load balancer alarms. If the cluster's load balancer is
larger, say so (thresholds: {PF701: {size: medium}}).

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Impact of load balancer
resources"; NSX-T load balancer sizes (vSphere Automation API)

## Implementation
Where an NSX-T load balancer exists (runtime ``tkg`` or ``vsphere-pods``; REQUIRES), counted
against its real scope: on ``tkg`` one load balancer per TKG cluster (``Facts.clusters``), on
``vsphere-pods`` one per vSphere Namespace (NCP allocates it per namespace). Each Service counts
once per cluster (copies are PF910). The threshold is the load balancer's virtual servers:
``size`` small 20, medium 100, large 1000 (vSphere Automation API); ``auto`` is the study's sizes,
small for a TKG cluster and medium for vSphere Pods. ``max-services`` overrides the size's count.
See docs/vsphere.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext
from ..vsphere import LB_DEFAULT_SIZE, LB_VIRTUAL_SERVERS, is_loadbalancer_service, loadbalancer_groups

ID = "PF701"
SLUG = "loadbalancer-services-per-cluster"
TITLE = "Many LoadBalancer Services on one load balancer"
SEVERITY = "warning"
CATEGORY = "network"
REQUIRES: tuple[str, ...] = ("nsx-t-load-balancer",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "size",
        "string",
        "auto",
        "The NSX-T load balancer's size: small (20 virtual servers), medium (100), large (1000); auto: small "
        "for a TKG cluster, medium for vSphere Pods (the study's allocation).",
        choices=("auto", "small", "medium", "large"),
    ),
    Option(
        "max-services",
        "integer",
        None,
        "LoadBalancer Services one load balancer serves well, instead of the size's virtual servers.",
        minimum=1,
    ),
)


def check(ctx: RuleContext) -> Iterator[Finding]:
    runtime = ctx.platform.runtime
    configured = str(ctx.option("size"))
    override = ctx.option("max-services")
    clusters = ctx.facts.clusters
    several = len(clusters) > 1
    copies: dict[tuple[str, str], int] = {}
    for c in clusters:
        for _, second in c.duplicates:
            if is_loadbalancer_service(second):
                key = (c.name, (second.ref.namespace or "default") if c.runtime == "vsphere-pods" else "")
                copies[key] = copies.get(key, 0) + 1
    by_name = {c.name: c for c in clusters}
    for (cluster, ns), services in sorted(loadbalancer_groups(clusters, runtime).items()):
        scope = by_name[cluster]
        # a guest cluster (TKC) on a Supervisor has its own load balancer, as on tkg
        pods = scope.runtime == "vsphere-pods"
        size = LB_DEFAULT_SIZE[scope.runtime] if configured == "auto" else configured
        limit = int(override) if override is not None else LB_VIRTUAL_SERVERS[size]
        if len(services) <= limit:
            continue
        services = sorted(services, key=lambda o: (o.location.file, o.location.line))
        first_over = services[limit]
        if pods:
            where = f"vSphere Namespace {ns}" + (f" of {scope.label}" if several or scope.name else "")
            owner = "one per vSphere Namespace"
            split = "Spread them over vSphere Namespaces (each gets its own load balancer)"
        else:
            where = scope.label
            owner = "one per TKG cluster"
            split = "Split them across TKG clusters (each gets its own load balancer)"
        against = (
            f"above max-services {limit} for its {size} NSX-T load balancer"
            if override is not None
            else f"above the {limit} virtual servers of its {size} NSX-T load balancer"
        )
        dup = copies.get((cluster, ns), 0)
        counted = f", with {dup} cop{'y' if dup == 1 else 'ies'} counted once (PF910)" if dup else ""
        yield Finding(
            ID,
            f"{len(services)} Services of type LoadBalancer in {where}{counted}, {against} ({owner}): it can "
            f"become the bottleneck. {split} or put them behind an Ingress, and watch the load balancer alarms in "
            "NSX-T",
            first_over.location,
            first_over.ref,
            details={
                "cluster": cluster,
                **({"namespace": ns} if pods else {}),
                "services": len(services),
                "threshold": limit,
                "size": size,
                "copies": dup,
                "scope": "vsphere-namespace" if pods else "tkg-cluster",
            },
        )
