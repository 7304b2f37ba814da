"""## What it does
A container or pod lies outside its namespace's LimitRange bounds (min, max, maxLimitRequestRatio,
for type Container or Pod) after the LimitRange defaults are applied.

## Why it matters
The LimitRanger admission plugin rejects a pod whose container (or whole pod) requests less than
min, sets a limit above max, leaves a bounded resource unset, or has a limit more than
maxLimitRequestRatio times its request. A Deployment is accepted but its ReplicaSet never creates a
pod, so the workload can never run: an error under the severity principle. The check uses the same
effective resources as every other rule (the namespace's defaults applied first, an unset default
limit taking max, as the API server does).

## Example
```yaml
# LimitRange: {type: Container, max: {cpu: "2"}}
resources: {requests: {cpu: "1"}, limits: {cpu: "4"}}
```

## How to fix
Bring the container's requests and limits within the LimitRange the message names, or set them
explicitly where the namespace's defaults break a bound (e.g. a default limit taken from max that is
many times a small request).

## Source
Kubernetes LimitRange (Limit Ranges concept page; the LimitRanger admission plugin's min, max and
maxLimitRequestRatio constraints)

## Implementation
The bounds and the check are the facts' (``Facts.limit_constraints``,
:func:`podfit.workloads.limit_range_violations`); the resources checked are the effective ones,
after the LimitRange defaults of the namespace are applied, as admission does.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..model import Workload
from ..options import Option
from ..rule_context import RuleContext
from ..workloads import limit_range_violations

ID = "PF106"
SLUG = "limit-range-violated"
TITLE = "Outside the namespace's LimitRange bounds"
SEVERITY = "error"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

_ATTR = {"cpu": "cpu", "memory": "memory", "ephemeral-storage": "storage"}


def check(ctx: RuleContext) -> Iterator[Finding]:
    bounds = ctx.facts.limit_constraints
    if not bounds:
        return
    for w in ctx.facts.unique_workloads:
        constraints = bounds.get(w.ref.namespace or "default", ())
        for c in constraints:
            attr = _ATTR[c.resource]
            lr = f"LimitRange {c.limit_range.namespace or 'default'}/{c.limit_range.name}"
            details = {
                "limitRange": c.limit_range.name,
                "type": c.scope,
                "bound": c.bound,
                "resource": c.resource,
                "value": c.text,
                "limitRangeLine": c.location.line,
            }
            if c.scope == "Pod":
                why = limit_range_violations(w.pod.effective(f"{attr}_request"), _pod_limit(w, f"{attr}_limit"), c)
                if why is not None:
                    yield Finding(ID, f"{lr}: {why}: the API server rejects the pod", w.location, w.ref, None, details)
                continue
            for k in w.pod.all_containers:
                r = k.resources
                why = limit_range_violations(getattr(r, f"{attr}_request"), getattr(r, f"{attr}_limit"), c)
                if why is not None:
                    word = "init container" if k.init else "container"
                    yield Finding(
                        ID,
                        f'{word} "{k.name}": {lr}: {why}: the API server rejects the pod',
                        k.location,
                        w.ref,
                        k.name,
                        {**details, "init_container": k.init},
                    )


def _pod_limit(w: Workload, attr: str) -> int | None:
    """The pod's limit as LimitRanger sums it: the effective limit, or, when some container sets
    none, the sum of the limits that are set (None when no container sets one)."""
    pod = w.pod
    if all(getattr(k.resources, attr) is None for k in pod.all_containers):
        return None
    effective = pod.effective(attr)
    return effective if effective is not None else pod.combined(lambda k: getattr(k.resources, attr))
