"""Packing benchmark: generated instances, our engine against first-fit-decreasing by sum.

Usage: python bench/pack.py [--quick] [--seed N]

For each instance it prints the nodes our engine uses, the proven lower bound, the nodes the
baseline uses (first fit, pods in decreasing order of CPU share + memory share: the order of the
cluster-autoscaler's binpacking estimator), whether the count is proven least, and the time.
Targets (DESIGN.md): never more nodes than the baseline; 10,000 pods answered with bounds in under
1 s; exact proofs for 1,000 pods of 40 types within 10 s.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analyzer"))

from podfit.packing import PodType, VMClass, min_nodes, node_type  # noqa: E402
from podfit.packing.heuristics import first_fit  # noqa: E402

MI = 2**20
GI = 2**30
# A 16-vCPU / 64 GiB node class (the default catalogue's 4xlarge has 128 GiB; this ratio packs tighter).
NODE = VMClass("bench-16x64", 16_000, 64 * GI)


def instance(rng: random.Random, pods: int, types: int, anti: bool) -> tuple[PodType, ...]:
    """``pods`` pods over ``types`` types; CPU 50m–2,000m, memory 64Mi–8Gi (correlated, with noise).

    With ``anti``, one type in ten has required hostname anti-affinity (one pod per node) and up
    to 40 replicas."""
    weights = [rng.randint(1, 20) for _ in range(types)]
    total = sum(weights)
    counts = [max(1, w * pods // total) for w in weights]
    counts[0] += pods - sum(counts)
    out = []
    for i, n in enumerate(counts):
        cpu = rng.choice([50, 100, 200, 250, 500, 750, 1000, 1500, 2000])
        cpu = max(10, cpu + rng.randint(-cpu // 5, cpu // 5))
        mem = max(64 * MI, cpu * rng.randint(1, 8) * MI * 1024 // 1000)
        group = None
        if anti and i % 10 == 3:
            group = f"g{i}"
            extra = n - min(n, 40)
            n = min(n, 40)
            counts[0] += extra
            if i > 0:
                out[0] = PodType(out[0].name, out[0].cpu, out[0].memory, out[0].count + extra)
        out.append(PodType(f"t{i}", cpu, mem, n, exclusive_group=group))
    return tuple(out)


def run(label: str, pods: tuple[PodType, ...], budget: float) -> tuple[bool, float, bool]:
    tmpl = node_type("bench", NODE, 1)
    total = sum(p.count for p in pods)
    t0 = time.perf_counter()
    base = first_fit(pods, [], "sum", constrained_first=False, template=tmpl, max_open=total)
    t_base = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = min_nodes(pods, tmpl, budget)
    dt = time.perf_counter() - t0
    assert r is not None
    s = r.summary
    ok = s.nodes <= base.used_nodes
    print(
        f"{label:<34} pods={total:>6} types={len(pods):>3} nodes={s.nodes:>5} lower_bound={s.lower_bound:>5} "
        f"baseline_ffd_sum={base.used_nodes:>5} proven={'yes' if s.exact else 'no ':<3} method={s.method:<14} "
        f"time={dt:7.3f}s baseline_time={t_base:6.3f}s {'OK' if ok else 'WORSE THAN BASELINE'}"
    )
    return ok, dt, s.exact


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="fewer instances")
    args = ap.parse_args()
    failures = []
    seeds = range(args.seed, args.seed + (1 if args.quick else 3))
    print("# bounds-only answers (no CP-SAT): 100 types, up to 1,000 nodes")
    for n in (100, 1000, 10_000):
        for anti in (False, True):
            for seed in seeds:
                rng = random.Random(seed * 7919 + n)
                ok, dt, _ = run(f"bounds n={n} anti={anti} seed={seed}", instance(rng, n, 100, anti), 0.0)
                if not ok:
                    failures.append(f"bounds n={n} anti={anti} seed={seed}: more nodes than baseline")
                if n == 10_000 and dt >= 1.0:
                    failures.append(f"bounds n={n} anti={anti} seed={seed}: {dt:.2f}s >= 1s")
    print("# exact (CP-SAT within 10 s): 1,000 pods of 40 types")
    for anti in (False, True):
        for seed in seeds:
            rng = random.Random(seed * 104729)
            ok, dt, proven = run(f"exact n=1000 types=40 anti={anti} seed={seed}", instance(rng, 1000, 40, anti), 10.0)
            if not proven or dt > 10.0:
                failures.append(f"exact anti={anti} seed={seed}: {'proven' if proven else 'not proven'} in {dt:.1f}s")
            if not ok:
                failures.append(f"exact anti={anti} seed={seed}: more nodes than baseline")
    print("# targets:", "all met" if not failures else "; ".join(failures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
