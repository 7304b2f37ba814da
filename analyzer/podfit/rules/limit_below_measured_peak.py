"""## What it does
A container's CPU or memory limit is below the peak measured for it (--usage), or it was OOM-killed
at its limit.

## Why it matters
The kernel OOM-kills a container whose working set reaches its memory limit, and CFS throttles one
whose CPU use reaches its CPU limit. A limit below what the container was measured to use (under a
larger limit, or before the manifest changed) means the peak will be cut short: restarts for memory,
latency for CPU. kube-state-metrics' last terminated reason OOMKilled is the same evidence after the
fact.

## Example
```yaml
resources: {limits: {memory: 512Mi}}   # working set measured up to 700Mi
```

## How to fix
Raise the limit to the measured peak plus headroom, or find why the peak grew (a leak, a larger
heap).

## Source
Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying container resource
requests and limits" (load testing, real-time resource usage monitoring, steady-state and peak
loads); cAdvisor metrics container_cpu_usage_seconds_total, container_memory_working_set_bytes;
kube-state-metrics kube_pod_container_status_last_terminated_reason
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ._usage import amount, details, evidence, measured_values

ID = "PF107"
SLUG = "limit-below-measured-peak"
TITLE = "Limit below the measured peak"
SEVERITY = "warning"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "headroom-percent",
        "integer",
        0,
        "Room a limit must leave above the measured peak, in percent of the peak.",
        minimum=0,
    ),
)


def check(ctx) -> Iterator[Finding]:
    headroom = int(ctx.option("headroom-percent"))
    for w, c, u, res, word, s, limit in measured_values(ctx, "limit"):
        oom = res == "memory" and "OOMKilled" in u.terminated
        if limit * 100 >= s.max * (100 + headroom) and not oom:
            continue
        effect = "OOM kills" if res == "memory" else "CFS throttling"
        if limit < s.max:
            what = f"{word} limit {amount(res, limit)} is below the measured peak {amount(res, s.max)}"
        elif limit * 100 < s.max * (100 + headroom):
            what = (
                f"{word} limit {amount(res, limit)} leaves less than {headroom}% above the measured peak "
                f"{amount(res, s.max)}"
            )
        else:
            what = f"the container was OOM-killed at its memory limit {amount(res, limit)}"
        yield Finding(
            ID,
            f'container "{c.name}": {what} ({evidence(res, s, u)}): expect {effect} at the peak',
            c.location,
            w.ref,
            c.name,
            details(res, s, u, limit=limit, oom_killed=oom, headroom_percent=headroom),
        )
