"""`podfit fix` against `podfit check` on one file with many changes (issue 34: linear time).

Usage: python bench/fix.py [--changes 50,100,200,400,1000,3000] [--runs 3]

For each count N writes one file of N Deployments, each with a CPU request above its limit (one
PF103 finding, one change: the request lowered to the limit), then times, each RUNS times and
interleaved, `podfit check FILE` and `podfit fix FILE` (the diff, which does everything `--write`
does but the write: the check, the plan, the one-pass edit of the file, the second check of the
edited objects by every rule, the diff). Prints the best wall and CPU (user + sys)
seconds of each and fix over check; the goal is at most 3×. Each fix run's diff is checked to hold
N changes, so a run that fixed nothing cannot look fast.

Measured (best of 3, 2 vCPUs, load average 8): fix over check 0.97× in CPU at 50 changes, 1.54× at
1,000, 1.88× at 3,000 (2.62 s against 1.39 s); the table is in docs/benchmarks.md ("podfit fix").
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYZER = os.path.join(HERE, "..", "analyzer")

DEPLOYMENT = """\
---
# service {i}: its request is above its limit
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
  namespace: team-{team}
  labels: {{app: svc-{i}}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: svc-{i}}}
  template:
    metadata:
      labels: {{app: svc-{i}}}
    spec:
      containers:
        - name: app
          image: registry.example.com/svc:{i}
          resources:
            requests: {{cpu: 600m, memory: 256Mi}}
            limits:
              cpu: 500m   # the request is above this
              memory: 256Mi
"""


def corpus(n: int) -> str:
    return "".join(DEPLOYMENT.format(i=i, team=i % 7) for i in range(n))


def timed(args: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    env = dict(os.environ, PYTHONPATH=ANALYZER)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "podfit", *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", default="50,100,200,400,1000,3000")
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; best of {opts.runs} runs; seconds wall / CPU")
    print(f"{'changes':>8} {'check':>15} {'fix':>15} {'fix/check (wall)':>17} {'(CPU)':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in opts.changes.split(",")):
            path = os.path.join(tmp, f"app-{n}.yaml")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(corpus(n))
            check: list[tuple[float, float]] = []
            fix: list[tuple[float, float]] = []
            for _ in range(opts.runs):
                wall, cpu, done = timed(["check", path, "--format", "json"])
                if done.returncode not in (0, 1):
                    sys.exit(f"check failed: {done.stderr}")
                check.append((wall, cpu))
                wall, cpu, done = timed(["fix", path])
                made = done.stdout.count("\n-            requests: {cpu: 600m")
                if done.returncode != 0 or made != n:
                    sys.exit(f"fix of {n} changes made {made}: {done.stderr[-2000:]}")
                fix.append((wall, cpu))
            cw, cc = min(w for w, _ in check), min(c for _, c in check)
            fw, fc = min(w for w, _ in fix), min(c for _, c in fix)
            print(
                f"{n:>8} {cw:>7.2f} / {cc:>5.2f} {fw:>7.2f} / {fc:>5.2f} {fw / cw:>16.2f}× {fc / cc:>5.2f}×",
                flush=True,
            )


if __name__ == "__main__":
    main()
