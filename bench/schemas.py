"""PF902 benchmark: offline schema validation of a 10,000-object corpus, in-process and kubeconform.

Usage: python bench/schemas.py [--objects N] [--invalid-every K]

Generates N Deployments/Services/ConfigMaps (every K-th one with a misspelt ``request:``), then
prints objects/s for: PF902's in-process check (compiled fast path, cold and warm), jsonschema alone
(no fast path), and the kubeconform binary over the same files with the local standalone schemas.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))

from podfit.loader import LoaderLimits, discover, load, read_inputs  # noqa: E402
from podfit.schemas_k8s import SchemaSet, build_schema_tree, run_kubeconform, shipped_versions  # noqa: E402

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app-{i}, namespace: ns-{ns}, labels: {{app: app-{i}}}}}
spec:
  replicas: {r}
  selector: {{matchLabels: {{app: app-{i}}}}}
  template:
    metadata: {{labels: {{app: app-{i}}}}}
    spec:
      containers:
        - name: app
          image: registry.example.com/app-{i}:1.{r}
          ports: [{{containerPort: 8080}}]
          env: [{{name: MODE, value: prod}}]
          resources:
            {req}: {{cpu: {cpu}m, memory: {mem}Mi}}
            limits: {{cpu: {lim}m, memory: {mem}Mi}}
        - name: sidecar
          image: envoy:1.30
          resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}
---
apiVersion: v1
kind: Service
metadata: {{name: app-{i}, namespace: ns-{ns}}}
spec:
  selector: {{app: app-{i}}}
  ports: [{{port: 80, targetPort: 8080}}]
"""


def corpus(directory: Path, n: int, invalid_every: int) -> int:
    bad = 0
    per_file = 50
    for f in range(0, n // 2, per_file):
        with open(directory / f"apps-{f:05d}.yaml", "w") as fh:
            docs = []
            for i in range(f, min(f + per_file, n // 2)):
                req = "requests"
                if invalid_every and i % invalid_every == 0:
                    req, bad = "request", bad + 1
                docs.append(DEPLOY.format(i=i, ns=i % 20, r=1 + i % 5, cpu=100 + i % 900, lim=1000 + i % 900, mem=128 + i % 512, req=req))
            fh.write("---\n".join(docs))
    return bad


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--invalid-every", type=int, default=100)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="podfit-bench-schemas-"))
    try:
        data = tmp / "corpus"
        data.mkdir()
        bad = corpus(data, args.objects, args.invalid_every)
        objs = load(read_inputs(discover([str(data)]), LoaderLimits())).objects
        n = len(objs)
        print(f"corpus: {n} objects ({bad} invalid Deployments) in {len(list(data.iterdir()))} files")
        version = shipped_versions()[-1]

        for label, fast in (("in-process, compiled fast path", True), ("in-process, jsonschema only", False)):
            s = SchemaSet(version, fast=fast)
            t0 = time.perf_counter()
            invalid = sum(1 for o in objs if s.validate(o.raw))
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            sum(1 for o in objs if s.validate(o.raw))
            warm = time.perf_counter() - t0
            print(f"{label:34s} cold {cold:6.2f} s ({n / cold:8.0f} objects/s)  warm {warm:6.2f} s ({n / warm:8.0f} objects/s)  invalid={invalid}")

        env = dict(os.environ, PYTHONPATH=str(ROOT / "analyzer"))
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "podfit", "check", str(data), "--rule", "PF902", "--format", "json", "-o", os.devnull],
                           env=env, capture_output=True, text=True)  # fmt: skip
        wall = time.perf_counter() - t0
        print(f"{'podfit check --rule PF902 (process)':34s} {wall:6.2f} s ({n / wall:8.0f} objects/s, load + YAML parse included) exit={p.returncode}")

        kc = ROOT / ".tools" / "bin" / "kubeconform"
        if kc.exists():
            tree = tmp / "schemas"
            build_schema_tree(tree, [version])
            t0 = time.perf_counter()
            res = run_kubeconform(str(kc), [str(data)], tree, version)
            wall = time.perf_counter() - t0
            inv = sum(1 for r in res if r["status"] == "statusInvalid")
            print(f"{'kubeconform -strict (local schemas)':34s} {wall:6.2f} s ({n / wall:8.0f} objects/s)  invalid={inv}")
        else:
            print("kubeconform: not built (make tools)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
