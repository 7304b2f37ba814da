"""PF701: more Services of type LoadBalancer in one cluster than its NSX-T load balancer serves well.

Counted per TKG cluster (each gets a small NSX-T load balancer) or, for vSphere Pods, per
Supervisor namespace. Thresholds: ``max-services`` (default 20) for TKG clusters and
``max-services-supervisor`` (default 100) for vSphere Pods: the virtual servers of the small and
medium NSX-T load balancers (NSX-T 3.x configuration maximums; the study names the sizes but no
count). See docs/vsphere.md.
"""

from __future__ import annotations

from typing import Iterator

from ..options import Option
from ..findings import Finding
from ..vsphere import LB_SUPERVISOR_DEFAULT, LB_TKG_DEFAULT, loadbalancer_counts
from . import RuleContext

ID = "PF701"
SLUG = "loadbalancer-services-per-cluster"
TITLE = "Many LoadBalancer Services in one cluster"
SEVERITY = "warning"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = (
    Option("max-services", "integer", 20, "LoadBalancer Services one TKG cluster's load balancer serves well.", minimum=1),
    Option("max-services-supervisor", "integer", 100, "LoadBalancer Services per Supervisor namespace (vSphere Pods).", minimum=1),
)


def check(ctx: RuleContext) -> Iterator[Finding]:
    supervisor = ctx.platform.runtime == "vsphere-pods"
    limit = int(ctx.option("max-services-supervisor") if supervisor else ctx.option("max-services"))
    groups = loadbalancer_counts(ctx.objects, ctx.platform)
    cluster = ctx.facts.cluster  # `podfit check --cluster NAME`: all manifests go to NAME
    if cluster and not supervisor:
        groups = {str(cluster): [o for services in groups.values() for o in services]}
    for group, services in sorted(groups.items()):
        if len(services) <= limit:
            continue
        services = sorted(services, key=lambda o: (o.location.file, o.location.line))
        first_over = services[limit]
        where = (f"Supervisor namespace {group}" if supervisor
                 else f"TKG cluster {group}" if group else "one cluster")  # fmt: skip
        lb = "medium" if supervisor else "small"
        yield Finding(
            ID,
            f"{len(services)} Services of type LoadBalancer in {where}, above {limit}: they share its {lb} NSX-T "
            f"load balancer, which can become the bottleneck. Split them across clusters (each TKG cluster gets its "
            f"own load balancer) or use an Ingress, and watch the load balancer alarms in NSX-T",
            first_over.location,
            first_over.ref,
            details={"cluster": group, "services": len(services), "threshold": limit,
                     "scope": "supervisor-namespace" if supervisor else "tkg-cluster"},
        )  # fmt: skip
