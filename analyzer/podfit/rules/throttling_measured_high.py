"""## What it does
The share of CFS periods in which a container was throttled, measured by cAdvisor (--usage), is
above the threshold.

## Why it matters
Each throttled period stops all the container's threads until the next period starts: requests that
arrive then wait up to the rest of the period. The measured share is what PF202 and PF203 predict
from the limit, the threads and the node size; measured, it needs no model. When the node size is
known the finding sets PF203's prediction for the same limit beside it (PF203's threads, burst and
demand: the measured CPU p95 when measured).

## Example
```yaml
resources: {limits: {cpu: 500m}}   # throttled in 40% of its periods over 7 days
```

## How to fix
Raise the CPU limit (or drop it and rely on requests), use whole CPUs with the static CPU Manager,
or reduce the threads that run at once.

## Source
cAdvisor container_cpu_cfs_throttled_periods_total / container_cpu_cfs_periods_total;
kubernetes-mixin CPUThrottlingHigh alert (25%); Kubernetes CPU limits vs bare metal study (2021)
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..quantity import format_cpu
from ..words import plural
from ._usage import measured

ID = "PF209"
SLUG = "throttling-measured-high"
TITLE = "High measured CPU throttling"
SEVERITY = "warning"
CATEGORY = "cpu"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "percent",
        "integer",
        25,
        "Share of CFS periods throttled above which the rule fires, in percent (kubernetes-mixin's "
        "CPUThrottlingHigh alert uses 25).",
        minimum=0,
    ),
    Option("min-periods", "integer", 100, "CFS periods a container needs before its share is trusted.", minimum=1),
)


def _predicted(ctx, w, c, limit: int | None) -> dict | None:
    """PF203's simulation for the same limit, node size and assumptions (threads, burst, and the
    demand from the measured CPU as PF203 takes it), when the node size is known: the share of
    periods it predicts throttled, to set beside the measured one."""
    from .throttling_simulated_high import demand_for, node_logical_cpus, simulate_cached, skip_reason

    cpus = node_logical_cpus(ctx, w)
    if not limit or cpus is None or skip_reason(ctx) is not None:  # where PF203 does not simulate
        return None
    pf203 = ctx.for_rule("PF203")
    d = demand_for(w, c, int(pf203.option("default-threads")), ctx.facts.usage)
    seconds = int(pf203.option("seconds"))
    res = simulate_cached(limit, cpus, d.threads, seconds, d.demand, d.burst_us, ctx.facts.kubelet.cfs_period_us)
    if not res.nr_periods:
        return None
    return {
        "throttled_ppm": res.nr_throttled * 1_000_000 // res.nr_periods,
        "threads": d.threads,
        "demand": d.demand,
        "demand_from": d.demand_from,
        "node_logical_cpus": cpus,
        "score": res.score,
    }


def _demand(predicted: dict) -> str:
    where = "measured p95" if predicted["demand_from"] == "measured" else f"the {predicted['demand_from']}"
    return f"demand {format_cpu(predicted['demand'])} ({where})"


def check(ctx) -> Iterator[Finding]:
    percent = int(ctx.option("percent"))
    min_periods = int(ctx.option("min-periods"))
    for w, c, u in measured(ctx):
        ppm = u.throttled_ppm
        if ppm is None or (u.periods or 0) < min_periods or ppm <= percent * 10_000:
            continue
        limit = c.resources.cpu_limit
        predicted = _predicted(ctx, w, c, limit)
        yield Finding(
            ID,
            f'container "{c.name}": throttled in {ppm / 10_000:.1f}% of its CFS periods '
            f"({u.throttled_periods:,} of {u.periods:,} over {u.window}, {plural(len(u.pods), 'pod')})"
            + (f" with a CPU limit of {format_cpu(limit)}" if limit is not None else "")
            + f"; more than {percent}%"
            + (
                f" (the simulator predicts {predicted['throttled_ppm'] / 10_000:.1f}% for this limit with "
                f"{predicted['threads']} threads, {_demand(predicted)} on "
                f"{predicted['node_logical_cpus']}-CPU nodes, as PF203 simulates)"
                if predicted
                else ""
            ),
            c.location,
            w.ref,
            c.name,
            {
                "throttled_periods": u.throttled_periods,
                "periods": u.periods,
                "throttled_ppm": ppm,
                "threshold_percent": percent,
                "cpu_limit": limit,
                "pods": list(u.pods),
                "window_ms": list(u.window_ms) if u.window_ms else None,
                "sources": list(u.sources),
                "simulated": predicted,
            },
        )
