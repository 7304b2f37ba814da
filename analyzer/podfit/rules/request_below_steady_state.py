"""## What it does
A container's request is below its measured steady state, the p50 (--usage); the scheduler fills
nodes by less than the pods use.

## Why it matters
Pods are placed by their requests. When a container uses more than it requests most of the time, the
nodes it lands on are overcommitted in fact: CPU contention between neighbours, and memory pressure
that evicts Burstable pods using more than they requested first. A steady state is a distribution:
the rule needs min-samples samples, as PF108 and PF109 do (one kubectl top snapshot per pod is a
point, not a p50).

## Example
```yaml
resources: {requests: {memory: 256Mi}}   # working set p50 600Mi
```

## How to fix
Raise the request to at least the measured steady state (p50; p95 for latency-critical services).

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying container resource
requests and limits" (load testing, real-time resource usage monitoring, steady-state and peak
loads); cAdvisor metrics container_cpu_usage_seconds_total, container_memory_working_set_bytes
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ._usage import amount, details, evidence, measured_values, min_samples_option

ID = "PF110"
SLUG = "request-below-steady-state"
TITLE = "Request below the measured steady state"
SEVERITY = "warning"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "tolerance-percent",
        "integer",
        10,
        "How far the measured p50 may exceed the request, in percent of the request.",
        minimum=0,
    ),
    min_samples_option("Samples a container needs before its p50 is taken for its steady state."),
)


def check(ctx) -> Iterator[Finding]:
    tolerance = int(ctx.option("tolerance-percent"))
    min_samples = int(ctx.option("min-samples"))
    for w, c, u, res, word, s, request in measured_values(ctx, "request", min_samples):
        if s.p50 * 100 <= request * (100 + tolerance):
            continue
        yield Finding(
            ID,
            f'container "{c.name}": {word} request {amount(res, request)} is below the measured steady '
            f"state, p50 {amount(res, s.p50)} ({evidence(res, s, u)}): nodes are filled by less than "
            "their pods use",
            c.location,
            w.ref,
            c.name,
            details(res, s, u, request=request, tolerance_percent=tolerance),
        )
