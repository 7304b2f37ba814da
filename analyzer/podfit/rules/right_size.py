"""## What it does
The VM class and node count that fit the workloads with the least waste and the configured headroom
differ from the pools in use.

## Why it matters
Fewer, larger nodes lose less to per-node system overhead; nodes too large exceed a NUMA node. The
study's two 9.6-CPU instances ran best on four xlarge nodes. The classes weighed are those the
platform can provision: on runtime tkg and vsphere-pods the built-in vSphere with Tanzu classes and
the declared ones; on kubernetes and bare-metal the declared classes (spec.vmClasses) and the pools'
own. With hosts in the platform, no count exceeds what the hosts hold beside the other node VMs:
each VM on one host, memory host by host after HA, vCPUs within PF503's overcommit ratio, guaranteed
classes' reservations within the CPU left after HA; when no class fits, the finding says so. The
count packs requests (what the scheduler places); with measured usage (check --usage) the headroom
takes the measured peaks (PF603) and the finding sets the measured p95 of the measured pods beside
their requests.

When the pools lie in zones (every pool has a `topology.kubernetes.io/zone` label, two zones or
more), the count keeps them: pods pinned to a zone, a zone topology spread's share of each zone and
a pool's reserved pods stay in their zones, so the count (given per zone) may exceed the least count
without zones, never the other way.

## Example
```yaml
# twelve small nodes where four xlarge would do
```

## How to fix
Move to the recommended VM class and node count.

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), right-sizing demonstration

## Implementation
The recommendation packs requests (the scheduler packs them); with measured usage (``check --usage``)
the burst headroom counts the measured peaks (see PF603), and the finding sets the measured p95 of
the measured pods beside their requests: how much of what the count holds is used. When a pod asks
for an extended resource (`nvidia.com/gpu`, …), a class offers what the pools of that class state in
their `allocatable` (the least of them) and the count packs it like CPU; a class no pool states it
for is excluded, so the advice never names a class whose nodes lack a device a pod needs; when that
leaves no class, the finding says so (no advice) instead of staying silent. Pods of a workload that
request neither CPU nor memory (BestEffort, PF105) are packed as needing nothing: the finding counts
and names them (``details.unrequested``), since the advice undercounts what they use.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from ..findings import Finding
from ..options import Option
from ..packing.engine import ZONE
from ..packing.measured import measured_totals
from ..packing.report import zones_text
from ..packing.rules_support import (
    PackingFacts,
    advice_withheld,
    per_cluster,
    pool_anchor,
)
from ..packing.rules_support import (
    skip_reason_without_nodes as skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..quantity import format_cpu, format_memory
from ..usage import UsageFacts
from ..words import plural

ID = "PF604"
SLUG = "right-size"
TITLE = "Right-sizing advice"
SEVERITY = "info"
CATEGORY = "packing"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx) -> Iterator[Finding]:
    for facts in per_cluster(ctx):
        yield from _check(facts, ctx.facts.usage)


def _measured(facts: PackingFacts, usage: UsageFacts | None) -> tuple[str, dict]:
    """The sentence and details that set the measured p95 beside the requests, when measured."""
    if usage is None:
        return "", {}
    parts, details = [], {}
    for resource, label, fmt in (("cpu", "CPU", format_cpu), ("memory", "memory", partial(format_memory, exact=False))):
        t = measured_totals(facts.inputs, usage, resource)
        if not t.pods:
            continue
        share = f" ({100 * t.p95 // t.requests}%)" if t.requests else ""
        parts.append(f"{label} p95 {fmt(t.p95)} of {fmt(t.requests)} requested{share}")
        details[resource] = {"pods": t.pods, "requests": t.requests, "p95": t.p95, "unmeasured_pods": t.unmeasured_pods}
    if not parts:
        return "", {}
    a = facts.analysis
    assert a is not None
    pods = a.headroom.measured_pods
    text = f". Measured ({plural(pods, 'pod')}): {'; '.join(parts)}; the count packs requests"
    text += ", the headroom takes the measured peaks" if pods else ""
    return text, {"measured": details}


def _check(facts: PackingFacts, usage: UsageFacts | None = None) -> Iterator[Finding]:
    a = facts.analysis
    if a is None:
        return
    rec = a.recommendation
    if advice_withheld(facts.inputs):
        return
    if rec.vm_class is None:
        yield from _no_class_fits(facts)
        return
    classes = {n.vm_class for n in a.pools}
    if len(classes) != 1:
        return  # mixed pools: the single-class recommendation is not comparable (see `podfit pack`)
    (current,) = classes
    count = sum(n.count for n in a.pools)
    by_class = {c.vm_class: c for c in rec.candidates}
    cur = by_class.get(current)
    best = by_class[rec.vm_class]
    # when the pools lie in zones the advice gives the nodes per zone too; the same count spread
    # otherwise is no advice (pods free to go anywhere fill the zones in any order)
    zones_now = _per_zone(a)
    if rec.vm_class == current and rec.nodes == count:
        return
    if cur is not None and cur.nodes == count and cur.waste_ppm <= best.waste_ppm:
        return  # as good as the recommendation
    loc, obj = pool_anchor(facts, a.pools[0].name)
    measured_text, measured_details = _measured(facts, usage)
    unrequested_text, unrequested_details = _unrequested(facts)
    # only the pools' own class was weighed (a cloud profile declaring no other): the advice is a
    # node count, and the finding says that no other class was compared
    alone = set(by_class) | set(rec.excluded) == {current}
    only = "; the platform declares no other VM class to compare (spec.vmClasses)" if alone else ""
    headroom = "and the burst headroom"
    if best.host_limit is not None and best.nodes == best.host_limit and best.nodes > best.min_nodes:
        headroom = f"and as much burst headroom as the hosts allow (they hold at most {best.host_limit} such nodes)"
    zoned = f" ({zones_text(best.zones)})" if best.zones else ""
    now = f" ({zones_text(sorted(zones_now.items()))})" if best.zones and zones_now else ""
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}right-size: {rec.nodes} × {rec.vm_class}{zoned} fit with the least waste "
            f"({best.waste_ppm / 10_000:.1f}% idle) {headroom}; the pools use {count} × {current}{now}"
            f"{only}{measured_text}{unrequested_text}"
        ),
        location=loc,
        object=obj,
        details=facts.details(
            {
                "recommended": {
                    "vm_class": rec.vm_class,
                    "nodes": rec.nodes,
                    **({"zones": dict(best.zones)} if best.zones else {}),
                },
                "current": {"vm_class": current, "nodes": count, **({"zones": zones_now} if best.zones else {})},
                "candidates": [
                    {"vm_class": c.vm_class, "nodes": c.nodes, "waste_ppm": c.waste_ppm} for c in rec.candidates
                ],
                **measured_details,
                **unrequested_details,
            }
        ),
    )


def _unrequested(facts: PackingFacts) -> tuple[str, dict]:
    """The sentence and details naming the workloads' pods that request neither CPU nor memory
    (BestEffort, PF105): the count packs them as needing nothing, so the advice undercounts them."""
    inputs = facts.inputs
    pods = [p for p in inputs.pods if not (p.cpu or p.memory) and p.name in inputs.workloads]
    if not pods:
        return "", {}
    count = sum(p.count for p in pods)
    workloads = sorted(dict.fromkeys(str(inputs.workloads[p.name].ref) for p in pods))
    named = ", ".join(workloads[:3]) + (f" and {len(workloads) - 3} more" if len(workloads) > 3 else "")
    text = (
        f"; {plural(count, 'pod')} request{'' if count != 1 else 's'} no CPU or memory "
        f"({named}; PF105): the count gives {'them' if count != 1 else 'it'} nothing"
    )
    return text, {"unrequested": {"pods": count, "workloads": workloads}}


def _per_zone(a) -> dict[str, int]:
    """Zone → nodes of the pools (empty when a pool with nodes has no zone label)."""
    out: dict[str, int] = {}
    for n in a.pools:
        zone = dict(n.labels).get(ZONE)
        if zone is None:
            return {}
        out[zone] = out.get(zone, 0) + n.count
    return out


_HOSTS = "the hosts hold at most"
_DEVICES = "its nodes do not offer"  # (podfit.packing.engine.analyze's reason)


def _no_class_offers(facts: PackingFacts) -> Finding:
    """No VM class is known to offer the extended resources the pods ask for: no advice, said once."""
    a = facts.analysis
    assert a is not None
    loc, obj = pool_anchor(facts, a.pools[0].name)
    asked = sorted({f"{v} {r}" for p in a.pods for r, v in p.extended})
    return Finding(
        rule=ID,
        message=(
            f"{facts.prefix}right-size: no advice: pods ask for {', '.join(asked)} per pod and no VM class is "
            "known to offer it (a class offers what the allocatable of its node pools states; platform import "
            "reads it from the nodes)"
        ),
        location=loc,
        object=obj,
        details=facts.details({"recommended": None, "excluded": dict(sorted(a.recommendation.excluded.items()))}),
    )


def _no_class_fits(facts: PackingFacts) -> Iterator[Finding]:
    """No VM class can take the pods because the hosts cannot run enough nodes of any class that
    holds them: said once per cluster, with the classes' limits."""
    a = facts.analysis
    assert a is not None
    rec = a.recommendation
    loc, obj = pool_anchor(facts, a.pools[0].name)
    by_hosts = {c: why for c, why in rec.excluded.items() if why.startswith(_HOSTS)}
    devices = {c: why for c, why in rec.excluded.items() if why.startswith(_DEVICES)}
    if devices and not by_hosts:
        yield _no_class_offers(facts)
        return
    if not by_hosts:
        return  # no class holds the largest pod, or none fits a NUMA node: PF303 / PF304 say so
    shown = "; ".join(f"{c}: {why}" for c, why in sorted(by_hosts.items())[:3])
    more = f" (and {len(by_hosts) - 3} more)" if len(by_hosts) > 3 else ""
    yield Finding(
        rule=ID,
        message=(
            f"{facts.prefix}right-size: no VM class fits: the platform's hosts cannot run enough nodes of any "
            f"class that holds the pods ({shown}{more}); add hosts or reduce the requests"
        ),
        location=loc,
        object=obj,
        details=facts.details({"recommended": None, "excluded": dict(sorted(rec.excluded.items()))}),
    )
