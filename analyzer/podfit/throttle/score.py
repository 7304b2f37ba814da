"""The throttling score (0–100) of a simulation result.

``x = throttled_time / (nr_periods × quota)``: the throttled time (summed over CPUs, as cpu.stat
reports it) per unit of quota the cgroup was given. It is dimensionless and can be computed from a
real container's cpu.stat and its limit alone. ``score = round(100 × x / (x + 2))``: 0 without
throttling, 33 when the group waits as long as its quota (a CPU-bound 2-thread process under a
1-CPU limit), 50 when it waits twice its quota, above 90 when the threads wait on dozens of CPUs
per CPU of limit (the study's 256-CPU node). No quota (no limit, or the CPU Manager's exclusive
cores): score 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .scenario import Result

__all__ = ["score_result", "compute_score", "throttle_ratio", "median_run", "SCORE_HALF"]

SCORE_HALF = 2  # x at which the score is 50


def throttle_ratio(throttled_ns: int, quota_ns_per_period: int | None, nr_periods: int) -> float:
    """x: throttled time per unit of quota handed out."""
    if not quota_ns_per_period or nr_periods <= 0 or throttled_ns <= 0:
        return 0.0
    return throttled_ns / (quota_ns_per_period * nr_periods)


def compute_score(res: Result) -> int:
    q = res.scenario.quota_us
    x = throttle_ratio(res.throttled_time_ns, q * 1000 if q is not None else None, res.nr_periods)
    return round(100 * x / (x + SCORE_HALF))


def score_result(res: Result) -> Result:
    return replace(res, score=compute_score(res))


def median_run(runs: Sequence[Result]) -> Result:
    """Of runs of one scenario with different seeds, the one of median score (ties by throttled
    time, then seed). A verdict on one seed of a load near its quota is a draw: seeds 0-4 of 64
    threads offering their 1-CPU limit on 256 CPUs score 12-82 over 2 s."""
    if not runs:
        raise ValueError("no runs")
    return sorted(runs, key=lambda r: (r.score, r.throttled_time_ns, r.scenario.seed))[len(runs) // 2]
