"""Inputs for `podfit pack` on large node pools (docs/benchmarks.md, "Packing large pools").

Usage: python bench/pack_pools.py DIR

Writes into DIR:
- pods.yaml: bench/pack.py's instance of 10,000 pods of 100 types (seed 7), one Deployment a type;
- platform.yaml: three pools of 5,000 nodes (16x64, 8x32 and 32x128 classes), each in its own
  cluster (a cluster holds at most 5,000 nodes); the Deployments name no cluster, so `pack` puts
  them on all 15,000 nodes;
- pods3.yaml and platform3.yaml: one Deployment of 3 replicas and one pool of 5,000 nodes;
- platform3s.yaml: the same pool of 3 nodes (the floor: what the run takes without the large pool).

Then, for each case: /usr/bin/time -v python -m podfit pack DIR/pods.yaml --platform
DIR/platform.yaml --time-budget 0 [--format json] -o OUT.
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "analyzer"))
sys.path.insert(0, HERE)

from pack import instance  # noqa: E402
from pack_cli import manifests  # noqa: E402

HEAD = """apiVersion: podfit.io/v1alpha1
kind: Platform
metadata: {name: bench}
spec:
  runtime: tkg
  vmClasses:
    - {name: bench-16x64, cpus: 16, memory: 64Gi}
    - {name: bench-8x32, cpus: 8, memory: 32Gi}
    - {name: bench-32x128, cpus: 32, memory: 128Gi}
  nodePools:
"""
POOLS = """    - {name: workers-a, vmClass: bench-16x64, count: 5000, cluster: a}
    - {name: workers-b, vmClass: bench-8x32, count: 5000, cluster: b}
    - {name: workers-c, vmClass: bench-32x128, count: 5000, cluster: c}
"""
ONE_POOL = """apiVersion: podfit.io/v1alpha1
kind: Platform
metadata: {{name: bench}}
spec:
  runtime: tkg
  vmClasses:
    - {{name: bench-16x64, cpus: 16, memory: 64Gi}}
  nodePools:
    - {{name: workers, vmClass: bench-16x64, count: {count}}}
"""
THREE_PODS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: bench}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: bench
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {cpu: 500m, memory: 1Gi}
"""


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {
        "pods.yaml": manifests(instance(random.Random(7), 10_000, 100, False)),
        "platform.yaml": HEAD + POOLS,
        "pods3.yaml": THREE_PODS,
        "platform3.yaml": ONE_POOL.format(count=5000),
        "platform3s.yaml": ONE_POOL.format(count=3),
    }
    for name, text in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    print("\n".join(os.path.join(out, name) for name in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
