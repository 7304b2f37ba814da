"""PF902 benchmark: offline schema validation of a 10,000-object corpus, in-process and kubeconform.

Usage: python bench/schemas.py [--objects N] [--invalid-every K] [--corpus DIR] [--runs R]

Generates N Deployments and Services (every K-th Deployment with a misspelt ``request:``), or reads
the YAML under DIR (e.g. ``bench/gen.py``'s corpus), then prints, fastest of R runs each: building
PF902's jsonschema-rs validators for the kinds present (definitions read, registry, one validator
per kind) and validating every object with them, in wall and CPU seconds (CPU time is the steadier
figure on a busy machine); the whole ``podfit check --rule PF902`` process; and the kubeconform
binary over the same files with the local standalone schemas.
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
                docs.append(
                    DEPLOY.format(
                        i=i, ns=i % 20, r=1 + i % 5, cpu=100 + i % 900, lim=1000 + i % 900, mem=128 + i % 512, req=req
                    )
                )
            fh.write("---\n".join(docs))
    return bad


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--invalid-every", type=int, default=100)
    ap.add_argument("--corpus", type=Path, help="validate the YAML under this directory instead of generating")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="podfit-bench-schemas-"))
    try:
        if args.corpus:
            data, bad = args.corpus, None
        else:
            data = tmp / "corpus"
            data.mkdir()
            bad = corpus(data, args.objects, args.invalid_every)
        objs = load(read_inputs(discover([str(data)]), LoaderLimits())).objects
        n = len(objs)
        files = sum(1 for _ in data.rglob("*.y*ml"))
        what = f" ({bad} invalid Deployments)" if bad is not None else ""
        print(f"corpus: {n} objects{what} in {files} files")
        version = shipped_versions()[-1]
        kinds = sorted({(o.raw["apiVersion"], o.raw["kind"]) for o in objs if isinstance(o.raw.get("kind"), str)})

        runs: list[tuple[float, ...]] = []
        for _ in range(args.runs):
            t0, c0 = time.perf_counter(), time.process_time()
            s = SchemaSet(version)
            for api, kind in kinds:
                s.validator(api, kind)
            t1, c1 = time.perf_counter(), time.process_time()
            invalid = sum(1 for o in objs if s.validate(o.raw))
            t2, c2 = time.perf_counter(), time.process_time()
            runs.append((t1 - t0, t2 - t1, c1 - c0, c2 - c1))
        for label, (b, v) in (("wall", (0, 1)), ("CPU", (2, 3))):
            best = min(runs, key=lambda r: r[b] + r[v])
            print(
                f"jsonschema-rs, {len(kinds)} kinds, {label}: build {best[b]:.3f} s + validate {best[v]:.3f} s = "
                f"{best[b] + best[v]:.3f} s ({n / (best[b] + best[v]):,.0f} objects/s)  invalid={invalid}"
            )

        env = dict(os.environ, PYTHONPATH=str(ROOT / "analyzer"))
        walls = []
        for _ in range(min(args.runs, 3)):
            t0 = time.perf_counter()
            p = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "podfit",
                    "check",
                    str(data),
                    "--rule",
                    "PF902",
                    "--format",
                    "json",
                    "-o",
                    os.devnull,
                ],
                env=env,
                capture_output=True,
                text=True,
            )
            walls.append(time.perf_counter() - t0)
        wall = min(walls)
        print(
            f"podfit check --rule PF902 (process): {wall:.2f} s ({n / wall:,.0f} objects/s, "
            f"start, load and YAML parse included) exit={p.returncode}"
        )

        kc = ROOT / ".tools" / "bin" / "kubeconform"
        if kc.exists():
            tree = tmp / "schemas"
            build_schema_tree(tree, [version])
            walls = []
            for _ in range(min(args.runs, 3)):
                t0 = time.perf_counter()
                res = run_kubeconform(str(kc), [str(data)], tree, version)
                walls.append(time.perf_counter() - t0)
            wall = min(walls)
            inv = sum(1 for r in res if r["status"] == "statusInvalid")
            print(f"kubeconform -strict (local schemas): {wall:.2f} s ({n / wall:,.0f} objects/s)  invalid={inv}")
        else:
            print("kubeconform: not built (make tools)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
