"""Two or more podfit builds on one corpus, interleaved run by run (a shared machine's swings fall
on all of them alike): wall and CPU seconds (user + system of the command and the workers it
waited for, from wait4) and peak RSS of `podfit check --format json CORPUS`.

    python bench/compare.py bench/out/scale/corpus-10000 --runs 7 \\
        --podfit release=/path/to/release/.venv/bin/podfit --podfit this=.venv/bin/podfit

    # the whole pipeline without the YAML fast path (every document through LibYAML)
    python bench/compare.py bench/out/scale/corpus-10000 --runs 7 --podfit fast=.venv/bin/podfit \
        --podfit libyaml=".venv/bin/python -c 'import sys, podfit.yamlio as y; y._fast_state.update(imported=True); \
        from podfit.cli import run; sys.argv[0] = \"podfit\"; run()'"

The load average is printed before and after: the CPU seconds hold better than wall time on a
busy machine. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def measure(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MiB) of one run, its output discarded."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} exited {code}: {err.strip()[:300]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument(
        "--podfit", action="append", required=True, metavar="NAME=COMMAND", help="a podfit command (shell words)"
    )
    args = ap.parse_args(argv)
    builds = [tuple(spec.split("=", 1)) for spec in args.podfit]
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in builds}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for k in range(args.runs):
        order = builds if k % 2 == 0 else builds[::-1]
        for name, exe in order:
            wall, cpu, rss = measure([*shlex.split(exe), "check", "--format", "json", args.corpus])
            results[name].append((wall, cpu, rss))
            print(f"  run {k + 1} {name:<10} wall {wall:6.2f} s  CPU {cpu:6.2f} s  {rss} MiB", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base = builds[0][0]
    base_wall = statistics.median(w for w, _, _ in results[base])
    base_cpu = statistics.median(c for _, c, _ in results[base])
    for name, _ in builds:
        walls = [w for w, _, _ in results[name]]
        cpus = [c for _, c, _ in results[name]]
        print(
            f"{name:<10} wall median {statistics.median(walls):.2f} s (fastest {min(walls):.2f})"
            f"  CPU median {statistics.median(cpus):.2f} s (least {min(cpus):.2f})"
            f"  peak {max(r for _, _, r in results[name])} MiB"
            f"  vs {base}: wall {statistics.median(walls) / base_wall:.2f}x, CPU {statistics.median(cpus) / base_cpu:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
