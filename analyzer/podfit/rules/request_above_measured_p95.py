"""## What it does
A container requests far more than its measured p95 (--usage); the difference is reserved on the
nodes and never used.

## Why it matters
The scheduler reserves the request whether it is used or not: a request well above what the
container uses 95% of the time strands node capacity that no other pod can be placed on, which costs
nodes.

## Example
```yaml
resources: {requests: {cpu: "2"}}   # p95 300m
```

## How to fix
Lower the request towards the measured p95 (keep the limit for the peak).

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying container resource
requests and limits" (load testing, real-time resource usage monitoring, steady-state and peak
loads); cAdvisor metrics container_cpu_usage_seconds_total, container_memory_working_set_bytes; krr
(Robusta) requests from usage percentiles
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..words import plural
from ._usage import amount, details, evidence, measured_values, min_samples_option

ID = "PF109"
SLUG = "request-above-measured-p95"
TITLE = "Request far above the measured p95"
SEVERITY = "info"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "tolerance-percent",
        "integer",
        50,
        "How far above the measured p95 a request may be, in percent of the p95.",
        minimum=0,
    ),
    min_samples_option("Samples a container needs before its p95 is trusted."),
)


def check(ctx) -> Iterator[Finding]:
    tolerance = int(ctx.option("tolerance-percent"))
    min_samples = int(ctx.option("min-samples"))
    for w, c, u, res, word, s, request in measured_values(ctx, "request", min_samples):
        if request * 100 <= s.p95 * (100 + tolerance):
            continue
        replicas = max(w.replicas, 1)
        unused = (request - s.p95) * replicas
        yield Finding(
            ID,
            f'container "{c.name}": {word} request {amount(res, request)} is far above the measured p95 '
            f"{amount(res, s.p95)} ({evidence(res, s, u)}): {amount(res, unused)} reserved and unused "
            f"over {plural(replicas, 'replica')}",
            c.location,
            w.ref,
            c.name,
            details(res, s, u, request=request, stranded=unused, tolerance_percent=tolerance),
        )
