"""Does tracing the other tasks change what the calibration measures? A paired kernel experiment.

Usage (root, cgroup cpu controller, a C compiler; about 30 s per pair for the periodic rows):
    python lab/calibrate/trace_ab.py [--row "1000m/4 fixed 5ms"] [--pairs 40] [--save PREFIX]

Runs one calibration row ``--pairs`` times with the ``sched_stat_runtime`` trace of the other tasks
and as many times without it, each pair with the same seed (the same phases, bursts and sleeps),
alternating which goes first, and prints the throttled periods of both halves, their mean
difference and a sign-flip permutation test of it (seeded, 10,000 flips): how likely a difference
that large is if the tracing changes nothing. With ``--save PREFIX`` both halves are written as
``PREFIX-traced.json`` and ``PREFIX-untraced.json``, which ``python lab/calibrate/calibrate.py
--load`` and ``--reproducibility`` read.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time

import calibrate as cal  # lab/calibrate/calibrate.py, beside this script (it finds podfit itself)

FLIPS = 10_000


def sign_flip_p(differences: list[int], flips: int = FLIPS, seed: int = 0) -> float:
    """Two-sided p of a paired difference: the share of random sign flips of the pairs' differences
    whose mean is at least as far from 0 as the observed one, the observed counted."""
    observed = abs(sum(differences))
    rng = random.Random(seed)
    hits = 1
    for _ in range(flips):
        if abs(sum(d if rng.random() < 0.5 else -d for d in differences)) >= observed:
            hits += 1
    return hits / (flips + 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--row", default="1000m/4 fixed 5ms")
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--save", metavar="PREFIX")
    args = ap.parse_args()
    cfg = next((c for c in cal.CONFIGS if c.name == args.row), None)
    if cfg is None:
        print(f"no calibration row {args.row!r}", file=sys.stderr)
        return 2
    runs: dict[bool, list[cal.Measurement]] = {True: [], False: []}
    load = {True: 0.0, False: 0.0}
    with tempfile.TemporaryDirectory(prefix="podfit-ab-") as d:
        exe = cal.compile_program(d)
        before = cal.wake_latency_profile(exe)
        for i in range(args.pairs):
            for trace in (True, False) if i % 2 == 0 else (False, True):
                busy = cal.busy_ns()
                runs[trace].append(cal.measure(cfg, exe, seed=i, trace=trace))
                load[trace] = max(load[trace], cal.other_load(busy, cal.busy_ns(), runs[trace][-1]))
            print(
                f"[{i + 1}/{args.pairs}] {time.strftime('%H:%M:%S')} seed {i}: traced "
                f"{runs[True][-1].nr_throttled}, untraced {runs[False][-1].nr_throttled}",
                file=sys.stderr,
            )
        after = cal.wake_latency_profile(exe)
    traced = [m.nr_throttled for m in runs[True]]
    untraced = [m.nr_throttled for m in runs[False]]
    diffs = [a - b for a, b in zip(traced, untraced, strict=True)]
    print(f"{cfg.name}, {args.pairs} pairs of {cfg.seconds} s runs")
    print(f"traced:   {statistics.mean(traced):.2f} throttled periods per run (sd {statistics.stdev(traced):.2f})")
    print(f"untraced: {statistics.mean(untraced):.2f} throttled periods per run (sd {statistics.stdev(untraced):.2f})")
    print(f"traced - untraced: {statistics.mean(diffs):+.2f} per pair, sign-flip p = {sign_flip_p(diffs):.2g}")
    if args.save:
        machine = cal.Machine.here()
        for trace, suffix in ((True, "traced"), (False, "untraced")):
            header = (
                f"{machine.text()}, "
                f"{cfg.name} with the other tasks {suffix} (paired by seed with the other half, "
                "lab/calibrate/trace_ab.py)"
            )
            saved = cal.SavedRuns(
                header,
                machine,
                before[0],
                {cfg.name: (runs[trace], load[trace])},
                {cfg.name: cal.LatencyProfile(before, after)},
            )
            saved.write(f"{args.save}-{suffix}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
