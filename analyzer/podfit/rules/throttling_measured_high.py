"""PF206: the share of CFS periods in which a container was throttled, as measured by cAdvisor
(container_cpu_cfs_throttled_periods_total / container_cpu_cfs_periods_total), is above a threshold."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..quantity import format_cpu
from ._usage import measured

ID = "PF206"
SLUG = "throttling-measured-high"
TITLE = "High measured CPU throttling"
SEVERITY = "warning"
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


def check(ctx) -> Iterator[Finding]:
    percent = int(ctx.option("percent"))
    min_periods = int(ctx.option("min-periods"))
    for w, c, u in measured(ctx):
        ppm = u.throttled_ppm
        if ppm is None or (u.periods or 0) < min_periods or ppm <= percent * 10_000:
            continue
        limit = c.resources.cpu_limit
        yield Finding(
            ID,
            f'container "{c.name}": throttled in {ppm / 10_000:.1f}% of its CFS periods '
            f"({u.throttled_periods:,} of {u.periods:,} over {u.window}, {len(u.pods)} pod"
            f"{'s' if len(u.pods) != 1 else ''})"
            + (f" with a CPU limit of {format_cpu(limit)}" if limit is not None else "")
            + f"; more than {percent}%",
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
            },
        )
