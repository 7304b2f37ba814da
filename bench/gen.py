"""Corpus generator for benchmarks: Kubernetes objects of every workload kind, with quantities
written every legal way and with missing, partial and full resources. Deterministic for a seed.

    python bench/gen.py --objects 10000 --out bench/out/corpus   # files of 100 documents each

``generate(n, seed)`` returns the objects (plain dicts) for reuse by other benchmarks.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

import yaml

KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob", "Pod")
API = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "ReplicaSet": "apps/v1",
    "ReplicationController": "v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "Pod": "v1",
}

# The same amounts written in every legal form (strings, YAML ints and floats, exponents, suffixes).
CPU_FORMS = {
    100: ["100m", "0.1", 0.1, ".1", "1e-1", "100000000n", "100000u"],
    250: ["250m", "0.25", 0.25, "250000u"],
    500: ["500m", "0.5", 0.5, "5e-1", "0.5000"],
    1000: ["1", 1, "1000m", "1.0", 1.0, "1e0", "1E0", "+1"],
    1500: ["1500m", "1.5", 1.5, "1.50"],
    2000: ["2", 2, "2000m", "2e0", "2.0"],
    4000: ["4", 4, "4000m", "4e3", "0.004k"][:3] + ["0.004k"],
}
MEM_FORMS = {
    2**26: ["64Mi", "65536Ki", 67108864, "0.0625Gi"],
    2**28: ["256Mi", "262144Ki", "0.25Gi", 268435456],
    2**29: ["512Mi", "0.5Gi", "524288Ki", "536870912"],
    2**30: ["1Gi", "1024Mi", 1073741824, "1073741824", "1048576Ki"],
    10**9: ["1G", "1000M", "1e9", "1000000k", 1000000000],
    2 * 2**30: ["2Gi", "2048Mi", "2.0Gi"],
    5 * 2**30: ["5Gi", "5120Mi"],
}


def _pick(rng: random.Random, forms: dict, amount: int | None = None) -> Any:
    key = amount if amount is not None else rng.choice(list(forms))
    return rng.choice(forms[key])


def _resources(rng: random.Random) -> dict | None:
    """Missing, partial, requests-only, limits-only, Burstable or Guaranteed resources."""
    shape = rng.choices(
        ["none", "cpu-only", "memory-only", "requests", "limits", "burstable", "guaranteed"],
        weights=[1, 1, 1, 3, 1, 3, 2],
    )[0]
    cpu, mem = rng.choice(list(CPU_FORMS)), rng.choice(list(MEM_FORMS))
    req_cpu, req_mem = _pick(rng, CPU_FORMS, cpu), _pick(rng, MEM_FORMS, mem)
    if shape == "none":
        return None
    if shape == "cpu-only":
        return {"requests": {"cpu": req_cpu}}
    if shape == "memory-only":
        return {"requests": {"memory": req_mem}}
    if shape == "requests":
        return {"requests": {"cpu": req_cpu, "memory": req_mem}}
    if shape == "limits":
        return {"limits": {"cpu": req_cpu, "memory": req_mem}}
    if shape == "guaranteed":
        return {
            "requests": {"cpu": req_cpu, "memory": req_mem},
            "limits": {"cpu": _pick(rng, CPU_FORMS, cpu), "memory": _pick(rng, MEM_FORMS, mem)},
        }
    big = max(c for c in CPU_FORMS if c >= cpu)
    return {
        "requests": {"cpu": req_cpu, "memory": req_mem},
        "limits": {"cpu": _pick(rng, CPU_FORMS, big), "memory": _pick(rng, MEM_FORMS, max(MEM_FORMS))},
    }


def _container(rng: random.Random, name: str) -> dict:
    c: dict[str, Any] = {"name": name, "image": f"registry.example/{name}:{rng.randint(1, 9)}"}
    res = _resources(rng)
    if res is not None:
        c["resources"] = res
    return c


def _pod_spec(rng: random.Random, kind: str) -> dict:
    spec: dict[str, Any] = {"containers": [_container(rng, "app")]}
    for i in range(rng.choices([0, 1, 2], weights=[6, 3, 1])[0]):
        spec["containers"].append(_container(rng, f"sidecar{i}"))
    if rng.random() < 0.2:
        init = _container(rng, "init")
        if rng.random() < 0.3:
            init["restartPolicy"] = "Always"  # a native sidecar
        spec["initContainers"] = [init]
    if kind in ("Job", "CronJob"):
        spec["restartPolicy"] = "OnFailure"
    return spec


def workload(rng: random.Random, kind: str, i: int) -> dict:
    name = f"{kind.lower()}-{i}"
    labels = {"app": name}
    meta: dict[str, Any] = {"name": name, "namespace": f"team-{i % 7}", "labels": dict(labels)}
    if rng.random() < 0.1:
        meta["annotations"] = {"podfit.io/peak-cpu": rng.choice(["1", "500m", "app=2"])}
    spec = _pod_spec(rng, kind)
    if kind == "Pod":
        return {"apiVersion": API[kind], "kind": kind, "metadata": meta, "spec": spec}
    template = {"metadata": {"labels": dict(labels)}, "spec": spec}
    if kind == "CronJob":
        body: dict[str, Any] = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}}
    elif kind == "Job":
        body = {"template": template}
    else:
        # a ReplicationController's selector is a plain map, the others' a LabelSelector
        selector = dict(labels) if kind == "ReplicationController" else {"matchLabels": dict(labels)}
        body = {"selector": selector, "template": template}
        if kind != "DaemonSet":
            body["replicas"] = rng.randint(1, 6)
    return {"apiVersion": API[kind], "kind": kind, "metadata": meta, "spec": body}


def generate(n: int, seed: int = 1) -> list[dict]:
    """``n`` objects cycling through every workload kind."""
    rng = random.Random(seed)
    return [workload(rng, KINDS[i % len(KINDS)], i) for i in range(n)]


class _PlainDumper(yaml.SafeDumper):
    """No anchors and aliases for shared sub-objects: manifests as people and tools write them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write(objects: list[dict], out: Path, per_file: int = 100) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("corpus-*.yaml"):
        old.unlink()
    paths = []
    for start in range(0, len(objects), per_file):
        path = out / f"corpus-{start // per_file:04d}.yaml"
        text = yaml.dump_all(objects[start : start + per_file], Dumper=_PlainDumper, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-file", type=int, default=100)
    ap.add_argument("--out", type=Path, default=Path("bench/out/corpus"))
    args = ap.parse_args(argv)
    paths = write(generate(args.objects, args.seed), args.out, args.per_file)
    print(f"{args.objects} objects in {len(paths)} files under {args.out}")


if __name__ == "__main__":
    _main()
