"""## What it does
A container's limit is far above the peak measured for it (--usage); PF104 from measurement instead
of an annotation.

## Why it matters
Limits higher than necessary let one pod take capacity its neighbours were counting on, inflate a
vSphere Pod's CRX and hide the real peak from capacity planning. Measured over a window that holds
the peak load, the peak is what the limit should follow. One kubectl top sample is not a peak: the
rule needs min-samples samples.

## Example
```yaml
resources: {limits: {cpu: "4"}}   # measured peak 900m over 7 days
```

## How to fix
Lower the limit to the measured peak plus a margin, or measure over a window that includes the peak
load.

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

ID = "PF108"
SLUG = "limit-far-above-measured-peak"
TITLE = "Limit far above the measured peak"
SEVERITY = "warning"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "tolerance-percent",
        "integer",
        100,
        "How far above the measured peak a limit may be, in percent of the peak.",
        minimum=0,
    ),
    min_samples_option("Samples a container needs before its peak is trusted (one kubectl top sample is not a peak)."),
)


def check(ctx) -> Iterator[Finding]:
    tolerance = int(ctx.option("tolerance-percent"))
    min_samples = int(ctx.option("min-samples"))
    for w, c, u, res, word, s, limit in measured_values(ctx, "limit", min_samples):
        if s.max <= 0:
            continue
        if limit * 100 <= s.max * (100 + tolerance):
            continue
        yield Finding(
            ID,
            f'container "{c.name}": {word} limit {amount(res, limit)} is {limit * 100 // s.max}% of the '
            f"measured peak {amount(res, s.max)} ({evidence(res, s, u)})",
            c.location,
            w.ref,
            c.name,
            details(res, s, u, limit=limit, tolerance_percent=tolerance),
        )
