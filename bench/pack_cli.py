"""`podfit pack` through the CLI against the in-process analysis, on bench/pack.py's instances.

Usage: python bench/pack_cli.py [--pods 10000] [--types 100] [--nodes 1000] [--runs 3] [--seed 1]

Writes the instance as Deployments (one per pod type, replicas = its pods) and a platform profile
with one pool of NODES nodes of VM class bench-16x64 (16 CPUs, 64 GiB, the class of bench/pack.py),
then runs, each RUNS times: `podfit pack` with --time-budget 0 (bounds and heuristics only), with
the default budget (the pools' class searched), and with --classes all; and the same analysis
in-process (`analyze_inputs`). Prints wall and CPU (user + sys) seconds, the load average, the
answer, the least node count of the pool's class against first-fit-decreasing's, and per case the
best of the runs. The target (issue 15): an answer with bounds in under 1 s wall on a quiet 2-core
machine; CPU time is the figure to compare on a loaded one.

With PYTHONDONTWRITEBYTECODE set (as in the project's sandboxes) every CLI run compiles podfit's
modules from source, about 0.1 s CPU that an installed podfit (with its bytecode) does not pay;
the header says when that is so.

Measured (10,000 pods, --time-budget 0, JSON output; best of 10 interleaved runs, load average
about 1.9, bytecode not written): before 0.89 s wall / 0.89 s CPU (median 0.99 / 0.99), after
0.49 s wall / 0.52 s CPU (median 0.57 / 0.58); the same answer byte for byte (549 nodes of
bench-16x64, lower bound 491; 814,341m CPU stranded). See docs/packing.md for the other rows.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "analyzer"))
sys.path.insert(0, HERE)

from pack import instance  # noqa: E402

PLATFORM = """apiVersion: podfit.io/v1alpha1
kind: Platform
metadata: {{name: bench}}
spec:
  runtime: tkg
  vmClasses:
    - {{name: bench-16x64, cpus: 16, memory: 64Gi}}
    - {{name: bench-8x32, cpus: 8, memory: 32Gi}}
    - {{name: bench-32x128, cpus: 32, memory: 128Gi}}
  nodePools:
    - {{name: workers, vmClass: bench-16x64, count: {nodes}}}
"""


def manifests(pods) -> str:
    docs = []
    for p in pods:
        docs.append(
            f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {p.name}, namespace: bench}}
spec:
  replicas: {p.count}
  selector: {{matchLabels: {{app: {p.name}}}}}
  template:
    metadata: {{labels: {{app: {p.name}}}}}
    spec:
      containers:
      - name: c
        image: bench
        resources:
          requests: {{cpu: {p.cpu}m, memory: "{p.memory}"}}
          limits: {{cpu: {p.cpu}m, memory: "{p.memory}"}}
"""
        )
    return "---\n".join(docs)


def cli(args: list[str]) -> tuple[float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "podfit", "pack", *args, "--format", "json"], capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out.stdout)


def in_process(manifest: str, platform_file: str, budget: float, search) -> tuple[float, float, object]:
    from podfit.cli import load_config, load_inputs, load_platform
    from podfit.facts import build_facts
    from podfit.packing.adapter import inputs_from
    from podfit.packing.engine import analyze_inputs

    platform = load_platform(platform_file)
    t0, c0 = time.perf_counter(), time.process_time()
    result = load_inputs([manifest], load_config(None))
    facts = build_facts(result.objects, platform)
    inputs = inputs_from(facts.workloads, platform, facts.node_pools)
    a = analyze_inputs(inputs, 100, budget, search)
    return time.perf_counter() - t0, time.process_time() - c0, a


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--types", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    from podfit.packing import node_type
    from podfit.packing.engine import _relax_selectors
    from podfit.packing.heuristics import first_fit
    from podfit.packing.model import Overhead, VMClass

    pods = instance(random.Random(args.seed * 7919 + args.pods), args.pods, args.types, False)
    tmpl = node_type("ffd", VMClass("bench-16x64", 16_000, 64 * 2**30), 1, overhead=Overhead())
    ffd = first_fit(_relax_selectors(pods), [], "sum", constrained_first=False, template=tmpl, max_open=args.pods)
    with tempfile.TemporaryDirectory() as d:
        manifest = os.path.join(d, "pods.yaml")
        platform = os.path.join(d, "platform.yaml")
        with open(manifest, "w") as f:
            f.write(manifests(pods))
        with open(platform, "w") as f:
            f.write(PLATFORM.format(nodes=args.nodes))
        print(
            f"# {args.pods} pods, {args.types} types, {args.nodes} × bench-16x64; "
            f"first-fit-decreasing (sum) needs {ffd.used_nodes} nodes (no overhead)"
        )
        if sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
            print("# PYTHONDONTWRITEBYTECODE is set: each CLI run compiles podfit's modules (≈ 0.1 s CPU)")
        cases = [
            ("cli --time-budget 0", ["--time-budget", "0"], 0.0, ["bench-16x64"]),
            ("cli (default 2s)", [], 2.0, ["bench-16x64"]),
            ("cli --time-budget 10s", ["--time-budget", "10s"], 10.0, ["bench-16x64"]),
            ("cli --classes all", ["--classes", "all"], 2.0, None),
        ]
        for label, extra, budget, search in cases:
            walls, cpus = [], []
            for run in range(args.runs):
                wall, cpu, d_ = cli([manifest, "--platform", platform, *extra])
                walls.append(wall)
                cpus.append(cpu)
                mn = d_["min_nodes_detail"]["bench-16x64"]
                print(
                    f"{label:<22} run {run + 1}: wall {wall:6.2f} s  cpu {cpu:6.2f} s  load {os.getloadavg()[0]:5.2f}  "
                    f"fits={d_['feasible']} proof={d_['proof']}  least bench-16x64={mn['nodes']} (≥ {mn['lower_bound']})  "
                    f"stranded {d_['stranded']['cpu']}m CPU"
                )
            print(f"{label:<22} best  : wall {min(walls):6.2f} s  cpu {min(cpus):6.2f} s")
            wall, cpu, a = in_process(manifest, platform, budget, search)
            m = a.min_nodes["bench-16x64"]
            print(
                f"{label.replace('cli', 'in-process'):<22}      : wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
                f"fits={a.fit.feasible}  least bench-16x64={m.nodes} (≥ {m.lower_bound})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
