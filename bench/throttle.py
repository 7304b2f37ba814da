"""Throttling simulator benchmark: 256 CPUs, 200 threads, 10 simulated seconds (target < 0.5 s).

Usage: python bench/throttle.py [--repeat N]

Runs the DESIGN.md scenario (the study's 1.5-CPU limit, the default request-serving Java server
workload) plus CPU-bound and no-limit variants, and prints the best wall time of N runs, the ratio to
the 0.5 s target, and the events processed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analyzer"))

from podfit.throttle import CPU_BOUND, Scenario, Workload, simulate  # noqa: E402

TARGET_S = 0.5


def scenarios():
    q = Scenario.quota_for_limit(1500)
    yield "256 CPUs, 200 request threads, 1.5-CPU limit, 10 s (target)", Scenario(cpus=256, threads=200, quota_us=q)
    yield (
        "256 CPUs, 200 CPU-bound threads, 1.5-CPU limit, 10 s",
        Scenario(cpus=256, threads=200, quota_us=q, workload=Workload(kind=CPU_BOUND)),
    )
    yield (
        "256 CPUs, 200 CPU-bound threads, 64-CPU limit, 10 s",
        Scenario(cpus=256, threads=200, quota_us=Scenario.quota_for_limit(64_000), workload=Workload(kind=CPU_BOUND)),
    )
    yield "256 CPUs, 200 request threads, no limit, 10 s", Scenario(cpus=256, threads=200, quota_us=None)
    yield "4 CPUs, 200 request threads, 1.5-CPU limit, 10 s", Scenario(cpus=4, threads=200, quota_us=q)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'scenario':<62} {'best s':>8} {'/target':>8} {'events':>8} {'thr s/period':>13} {'score':>6}")
    worst_target = None
    for i, (name, sc) in enumerate(scenarios()):
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            r = simulate(sc)
            best = min(best, time.perf_counter() - t0)
        if i == 0:
            worst_target = best
        print(
            f"{name:<62} {best:>8.3f} {best / TARGET_S:>8.2f} {r.events:>8} "
            f"{r.throttled_per_period_ns / 1e9:>13.3f} {r.score:>6}"
        )
    print(
        f"target scenario: {worst_target:.3f} s = {worst_target / TARGET_S:.2f} x the {TARGET_S} s target "
        f"({'met' if worst_target < TARGET_S else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
