"""Throttling against the CPU limit: the simulator run over a range of limits (pure).

The container's offered demand is held at what it is under its current limit (the workload's
``load_percent`` of that limit, as PF203 simulates it), and only the limit moves: the curve shows
what raising the limit alone would do to throttled time and to the delay added to requests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from ..facts import CFS_PERIOD_US
from .scenario import WAKEUP_COST_US, Scenario, Workload, wakeup_cpu
from .sim import simulate

__all__ = ["SweepPoint", "Sweep", "container_scenario", "sweep", "sweep_scenario", "sweep_limits"]

STEP_MILLICORES = 100  # swept limits are multiples of 0.1 CPU
MAX_FACTOR = 4  # the sweep goes up to 4 × the current limit


@dataclass(frozen=True)
class SweepPoint:
    limit_millicores: int
    score: int
    throttled_per_period_ns: int  # throttled time per 100 ms period, summed over CPUs (cpu.stat)
    burst_delay_p99_ns: int  # added to the 99th-percentile request burst (0 when none was delayed)


@dataclass(frozen=True)
class Sweep:
    cpus: int
    threads: int
    demand_millicores: int
    threshold: int
    current_millicores: int
    points: tuple[SweepPoint, ...]
    # the limit the analysis that asked for the sweep suggested (PF203's search in 100m steps), one of
    # the points; None: the least swept limit that clears the threshold
    suggested: int | None = None

    @property
    def suggested_millicores(self) -> int | None:
        """The suggested limit: the one handed in, else the least swept limit above the current one
        whose score is below the threshold (None when no limit in the range brings it below:
        dropping the limit is the remedy left)."""
        if self.suggested is not None:
            return self.suggested
        for p in self.points:
            if p.limit_millicores > self.current_millicores and p.score < self.threshold:
                return p.limit_millicores
        return None


def sweep_limits(current: int, cpus: int) -> tuple[int, ...]:
    """The current limit, then multiples of 0.1 CPU from a quarter above it up to ``MAX_FACTOR`` × it
    in quarter steps of the current limit; a step past the node's CPUs is the node's CPUs."""
    top = cpus * 1000
    out = {current}
    for quarter in range(5, 4 * MAX_FACTOR + 1):
        limit = -(-current * quarter // 4 // STEP_MILLICORES) * STEP_MILLICORES
        if limit > current:
            out.add(min(limit, max(top, current)))
    return tuple(sorted(out))


@lru_cache(maxsize=4096)
def _point(sc: Scenario) -> SweepPoint:
    res = simulate(sc)
    limit = sc.limit_millicores or 0
    return SweepPoint(limit, res.score, res.throttled_time_ns // max(1, res.nr_periods), res.burst_delay_p99_ns or 0)


def sweep_scenario(base: Scenario, threshold: int, suggested: int | None = None) -> Sweep:
    """Every limit of :func:`sweep_limits` in ``base`` (which has a limit), its other settings kept
    and the demand held at what ``base``'s limit offers; ``suggested``, a limit another analysis
    suggested, is swept too and named the suggestion."""
    current = base.limit_millicores
    if current is None:
        raise ValueError("a sweep needs a scenario with a CPU limit")
    demand = base.workload.demand_for(current)
    workload = replace(base.workload, demand_millicores=demand)
    limits = sorted(set(sweep_limits(current, base.cpus)) | ({suggested} if suggested is not None else set()))
    points = tuple(
        _point(replace(base, quota_us=Scenario.quota_for_limit(limit, base.period_us), workload=workload))
        for limit in limits
    )
    return Sweep(base.cpus, base.threads, demand, threshold, current, points, suggested)


def container_scenario(
    limit_millicores: int | None,
    cpus: int,
    threads: int,
    seconds: int,
    demand_millicores: int | None = None,
    burst_us: int | None = None,
    wakeup_cost_us: int = WAKEUP_COST_US,
    period_us: int = CFS_PERIOD_US,
) -> Scenario:
    """The scenario PF203 simulates for one container (``limit_millicores`` None: no limit): the
    CFS period (the kubelet's ``cpuCFSQuotaPeriod``; the quota is the limit over that period), the
    default seed, the demand and burst it assumed (the Java server workload's when not given) and
    the calibrated CPU per wake-up (``podfit throttle``'s default, so that its command line runs the
    same simulation)."""
    wake_cpu, sleep_cpu = wakeup_cpu(wakeup_cost_us)
    workload = Workload() if burst_us is None else Workload(burst_us=burst_us)
    if demand_millicores is not None:
        workload = replace(workload, demand_millicores=demand_millicores)
    return Scenario(
        cpus=cpus,
        threads=threads,
        quota_us=None if limit_millicores is None else Scenario.quota_for_limit(limit_millicores, period_us),
        period_us=period_us,
        seconds_us=seconds * 1_000_000,
        seed=0,
        workload=workload,
        wake_cpu_us=wake_cpu,
        sleep_cpu_us=sleep_cpu,
    )


def sweep(
    current: int,
    cpus: int,
    threads: int,
    seconds: int,
    threshold: int,
    demand_millicores: int | None = None,
    burst_us: int | None = None,
    period_us: int = CFS_PERIOD_US,
) -> Sweep:
    """:func:`sweep_scenario` of :func:`container_scenario` for a container with CPU limit ``current``."""
    base = container_scenario(current, cpus, threads, seconds, demand_millicores, burst_us, period_us=period_us)
    return sweep_scenario(base, threshold)
