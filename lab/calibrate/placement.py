"""Where the kernel puts an unpinned row's waking threads: a traced kernel experiment.

Usage (root, cgroup cpu controller, a C compiler, bpftrace; a few seconds per run):
    python lab/calibrate/placement.py ROW [--runs N] [--save PREFIX]
    python lab/calibrate/placement.py --load TRACE [TRACE ...]

Runs the calibration row whose name starts with ROW (the bias grid's, or the table's; on a 2-CPU
machine, as the probe reads CPUs 0 and 1) ``--runs``
times under ``probes/wake_placement.bt`` and prints, over its wake-ups: how often the thread moved
to another CPU as it woke and how often the load balancer pulled one, and for the wake-ups whose
previous CPU was busy while the other was idle (where the mainline kernel's idle-CPU search moves
the thread) how often it stayed, by the tasks runnable on the previous CPU and by that CPU's
utilisation. ``--save PREFIX`` keeps each run's trace as ``PREFIX-N.txt``; ``--load`` reads such
traces again. What it found on the calibration machine: docs/throttling.md, "At the quota".
"""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import calibrate as cal  # lab/calibrate/calibrate.py, beside this script (it finds podfit itself)

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes", "wake_placement.bt")
UTIL_STEP = 50  # utilisation classes (of 1024) in the table


@dataclass(frozen=True)
class Wake:
    """One wake-up of a thread of the group, as the probe saw it."""

    prev: int  # the CPU the thread last ran on
    target: int  # the CPU it was queued on
    util: tuple[int, int]  # CPUs 0 and 1: the root run queue's util_avg (of 1024)
    nr_running: tuple[int, int]
    idle: tuple[bool, bool]  # running the idle task

    @property
    def moved(self) -> bool:
        return self.target != self.prev

    @property
    def prev_busy_other_idle(self) -> bool:
        """The case the mainline kernel settles by moving the thread to the idle CPU (when its
        idle-CPU search runs: SIS_UTIL skips it on a busy cache domain)."""
        return not self.idle[self.prev] and self.idle[1 - self.prev]


def parse(lines: Iterable[str]) -> tuple[list[Wake], int]:
    """The wake-ups of a probe's output and the migrations that were not traced wake-ups: the load
    balancer pulling a runnable thread, and also moves at wake-ups before the probe had seen both
    run queues or whose lines were cut (so an upper bound on the balancer's)."""
    pending: dict[int, list[int]] = {}
    wakes: list[Wake] = []
    migrations = 0
    moved_at_wake = 0
    for line in lines:
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "W" and len(f) == 13:
                pending[int(f[3])] = [int(x) for x in f[4:11]]
            elif f[0] == "U" and len(f) == 5 and int(f[3]) in pending:
                prev, u0, u1, n0, n1, i0, i1 = pending.pop(int(f[3]))
                if prev in (0, 1):
                    w = Wake(prev, int(f[4]), (u0, u1), (n0, n1), (bool(i0), bool(i1)))
                    wakes.append(w)
                    moved_at_wake += w.moved
            elif f[0] == "M" and len(f) == 6:
                migrations += 1
        except ValueError:
            continue  # a line cut short when the probe was stopped
    return wakes, max(0, migrations - moved_at_wake)


def report(wakes: list[Wake], pulled: int) -> str:
    """The table the command prints."""
    moved = sum(w.moved for w in wakes)
    lines = [
        f"{len(wakes)} wake-ups: {moved} moved to another CPU as they woke; "
        f"at most {pulled} pulled by the load balancer (migrations that were not a traced wake-up)"
    ]
    case = [w for w in wakes if w.prev_busy_other_idle]
    lines.append(f"previous CPU busy, the other idle: {len(case)} wake-ups, stayed/moved")
    by_nr: Counter[tuple[int, bool]] = Counter((w.nr_running[w.prev], w.moved) for w in case)
    lines.append(
        "  by tasks runnable on the previous CPU: "
        + ", ".join(f"{n}: {by_nr[n, False]}/{by_nr[n, True]}" for n in sorted({n for n, _ in by_nr}))
    )
    one = [w for w in case if w.nr_running[w.prev] == 1]
    by_util: Counter[tuple[int, bool]] = Counter((w.util[w.prev] // UTIL_STEP, w.moved) for w in one)
    lines.append(
        "  one task there, by its CPU's utilisation: "
        + ", ".join(
            f"{b * UTIL_STEP}-{b * UTIL_STEP + UTIL_STEP - 1}: {by_util[b, False]}/{by_util[b, True]}"
            for b in sorted({b for b, _ in by_util})
        )
    )
    moves = sorted(w.util[w.prev] for w in one if w.moved)
    stays = sorted(w.util[w.prev] for w in one if not w.moved)
    if moves and stays:
        lines.append(f"  one task there: highest utilisation it stayed at {stays[-1]}, lowest it moved at {moves[0]}")
    return "\n".join(lines)


def run_traced(cfg: cal.Config, seed: int, exe: str, out_path: str) -> dict[str, int]:
    """One kernel run of the row with the probe attached; its trace goes to ``out_path``; returns
    the group's cpu.stat."""
    root, version = cal.cgroup_root()
    group = os.path.join(root, f"podfit-placement-{os.getpid()}-{seed}")
    os.mkdir(group)
    try:
        if version == 1:
            settings = (
                ("cpu.cfs_period_us", cfg.period_us),
                ("cpu.cfs_quota_us", cfg.quota_us),
                ("cpu.shares", 262144),
            )
        else:
            settings = (("cpu.max", f"{cfg.quota_us} {cfg.period_us}"), ("cpu.weight", 10000))  # type: ignore[assignment]
        for name, value in settings:
            with open(os.path.join(group, name), "w") as f:
                f.write(str(value))
        comm = os.path.basename(exe)[:15]
        with open(out_path, "w") as out:
            tracer = subprocess.Popen(["bpftrace", PROBE, comm], stdout=out, stderr=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    with open(out_path) as f:
                        if "Attaching" in f.read(200):
                            break
                    if tracer.poll() is not None:
                        raise RuntimeError("bpftrace stopped before it attached its probes")
                    time.sleep(0.05)
                procs = os.path.join(group, "cgroup.procs")

                def enter() -> None:
                    with open(procs, "w") as f:
                        f.write(str(os.getpid()))

                args = [exe, str(cfg.threads), str(cfg.seconds), str(cfg.burst_us), str(cal._think_us(cfg))]
                args += [str(int(cfg.fixed)), str(seed), str(int(cfg.pinned))]
                subprocess.run(args, capture_output=True, check=True, preexec_fn=enter, timeout=cfg.seconds + 120)
            finally:
                tracer.terminate()
                tracer.wait(timeout=30)
        return cal._read_stat(os.path.join(group, "cpu.stat"))
    finally:
        cal.remove_group(group)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("row", nargs="?", help="the row whose name starts with this (bias grid or table)")
    ap.add_argument("--runs", type=int, default=2, help="kernel runs of the row (default 2)")
    ap.add_argument("--save", metavar="PREFIX", help="keep each run's trace as PREFIX-N.txt")
    ap.add_argument("--load", nargs="+", metavar="TRACE", help="read saved traces instead of running")
    args = ap.parse_args(argv)
    if args.load:
        lines: list[str] = []
        for path in args.load:
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe would hold the read open
                    print(f"{path}: not a regular file", file=sys.stderr)
                    return 2
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines += f.read().splitlines()
            except OSError as e:
                print(f"{path}: {e.strerror or e}", file=sys.stderr)
                return 2
        print(report(*parse(lines)))
        return 0
    if not args.row:
        ap.error("name a row, or --load traces")
    rows = [c for c in (*cal.BIAS_CONFIGS, *cal.CONFIGS) if c.name.startswith(args.row)]
    if not rows:
        ap.error(f"no calibration row starts with {args.row!r}")
    cfg = rows[0]
    traced: list[str] = []
    with tempfile.TemporaryDirectory(prefix="podfit-placement-") as d:
        exe = cal.compile_program(d)
        for seed in range(args.runs):
            path = f"{args.save}-{seed}.txt" if args.save else os.path.join(d, f"trace-{seed}.txt")
            cpu_stat = run_traced(cfg, seed, exe, path)
            throttled = cpu_stat.get("throttled_time", cpu_stat.get("throttled_usec", 0) * 1000)
            print(
                f"{cfg.name} run {seed + 1}: {cpu_stat.get('nr_throttled')}/{cpu_stat.get('nr_periods')} periods throttled, "
                f"{throttled / 1e6 / (cfg.seconds * 1e6 / cfg.period_us):.1f} ms per period (traced)",
                flush=True,
            )
            with open(path, encoding="utf-8", errors="replace") as f:
                traced += f.read().splitlines()
    print(report(*parse(traced)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
