"""Scale benchmark (`make bench`): podfit against its peers on generated corpora, in one run.

For each corpus size (default 1,000, 10,000 and 100,000 objects, made by bench/gen.py: every
workload kind, quantities written every legal way, missing and partial resources, huge replicas)
it runs, one after the other on the same files:

  podfit check                    the default: the embedded engine's compiled policies (wasm), in-process
  podfit check --engine opa       the whole pipeline with the OPA binary
  conftest test                   the same Rego policies, plain conftest
  kube-score score                its own checks
  kubeconform -strict             schema validation only, local schemas

and prints wall time, objects/s, peak RSS and CPU seconds (user and system time of the command
and the processes it waited for, from wait4), each against the default `podfit check`. On a
shared machine CPU seconds hold better than wall time: each run's line gives the load average. The quick ones (podfit with the compiled policies or opa, kube-score,
kubeconform) run --repeat times, interleaved round by round so that a busy machine slows them
alike; the table gives their median and range. The slow one (conftest) runs once, and are
skipped above --slow-max objects (said in the table).
A benchmark, not a test: it asserts nothing and prints numbers.
"""

from __future__ import annotations

import argparse
import os
import platform as pyplatform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "analyzer"))

from gen import generate, write  # noqa: E402
from lint import podfit_cmd as podfit  # noqa: E402
from lint import tool  # noqa: E402


def measure(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int, float]:
    """(seconds, peak RSS in MiB, exit status, CPU seconds: user and system time of the command and
    the processes it waited for) of one command, its output discarded."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1, 2) or (proc.returncode == 2 and "podfit" in cmd[0]):
        print(f"  ! {' '.join(cmd[:3])} … exited {proc.returncode}: {err.strip()[:300]}", file=sys.stderr)
    return seconds, usage.ru_maxrss // 1024, proc.returncode, usage.ru_utime + usage.ru_stime


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0]
    return f"{os.cpu_count()} CPUs ({cpu}), Python {pyplatform.python_version()}, load average {load:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--slow-max", type=int, default=10_000, help="largest corpus for conftest")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "scale")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each quick tool, interleaved (median reported)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    env = dict(os.environ, NO_COLOR="1", PATH=f"{ROOT / '.tools' / 'bin'}:{os.environ.get('PATH', '')}")
    schemas = ROOT / ".tools" / "schemas"
    from podfit.schemas_k8s import kubeconform_locations

    print(f"machine: {machine()}")
    rows = []
    for n in sizes:
        corpus = args.out / f"corpus-{n}"
        if corpus.exists():
            shutil.rmtree(corpus)
        files = [str(p) for p in write(generate(n, args.seed), corpus)]
        slow = n <= args.slow_max
        skipped = f"skipped above {args.slow_max:,} objects"
        runs: list[tuple[str, list[str] | None, str, dict[str, str]]] = [
            ("podfit (default, wasm)", podfit() + ["check", "--format", "json", str(corpus)], "", env),
            ("podfit (opa)", podfit() + ["check", "--engine", "opa", "--format", "json", str(corpus)], "", env),
            (
                "conftest",
                [
                    tool("conftest"),
                    "test",
                    "--policy",
                    str(ROOT / "policies"),
                    "--namespace",
                    "podfit.lib.conftest",
                    "--no-color",
                    "-o",
                    "json",
                    *files,
                ]
                if tool("conftest") and slow
                else None,
                "not built (make tools)" if not tool("conftest") else skipped,
                env,
            ),
            (
                "kube-score",
                [tool("kube-score"), "score", "--output-format", "ci", *files] if tool("kube-score") else None,
                "not built (make tools)",
                env,
            ),
            (
                "kubeconform",
                [
                    tool("kubeconform"),
                    "-strict",
                    "-summary",
                    "-ignore-missing-schemas",
                    *[a for loc in kubeconform_locations(schemas) for a in ("-schema-location", loc)],
                    *files,
                ]
                if tool("kubeconform") and (schemas / "podfit").is_dir()
                else None,
                "no local schemas (make schemas)",
                env,
            ),
        ]
        quick = {"podfit (default, wasm)", "podfit (opa)", "kube-score", "kubeconform"}
        times: dict[str, list[float]] = {name: [] for name, cmd, _, _ in runs if cmd is not None}
        cpus: dict[str, list[float]] = {name: [] for name in times}
        peaks: dict[str, int] = {}
        for rnd in range(max(1, args.repeat)):
            for name, cmd, _, run_env in runs:
                if cmd is None or (rnd > 0 and name not in quick):
                    continue
                seconds, rss, _, cpu = measure(cmd, run_env)
                times[name].append(seconds)
                cpus[name].append(cpu)
                peaks[name] = max(peaks.get(name, 0), rss)
                print(
                    f"  {n:>7,} {name:<22} {seconds:7.2f} s  {n / seconds:9,.0f} obj/s  {rss:6} MiB  CPU {cpu:7.2f} s"
                    f"  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        base = statistics.median(times["podfit (default, wasm)"])
        base_cpu = statistics.median(cpus["podfit (default, wasm)"])
        for name, cmd, why, _ in runs:
            if cmd is None:
                rows.append((n, name, None, None, None, None, why, None, None))
            else:
                ts = times[name]
                rows.append(
                    (
                        n,
                        name,
                        statistics.median(ts),
                        (min(ts), max(ts)) if len(ts) > 1 else None,
                        peaks[name],
                        statistics.median(ts) / base,
                        "",
                        statistics.median(cpus[name]),
                        statistics.median(cpus[name]) / base_cpu,
                    )
                )
    print()
    print(
        f"| objects | tool | seconds (median of {args.repeat} for the quick tools) | range | objects/s"
        " | peak RSS (MiB) | time vs podfit (default) | CPU seconds (median) | CPU vs podfit (default) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for n, name, seconds, spread, rss, ratio, why, cpu, cpu_ratio in rows:
        if seconds is None:
            print(f"| {n:,} | {name} | — | — | — | — | {why} | — | — |")
        else:
            rng = f"{spread[0]:.2f}–{spread[1]:.2f}" if spread else "one run"
            print(
                f"| {n:,} | {name} | {seconds:.2f} | {rng} | {n / seconds:,.0f} | {rss} | {ratio:.2f}× "
                f"| {cpu:.2f} | {cpu_ratio:.2f}× |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
