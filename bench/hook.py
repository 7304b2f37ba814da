"""Hook latency: one small manifest, as a pre-commit hook checks it on every commit. podfit (the
installed command, whole process) side by side with kube-score and conftest with the same policies.
A benchmark, not a test: it prints the best of N runs (wall and CPU of the process and its
children) and each podfit row's ratio to each peer.

    python bench/hook.py [--runs 15] [FILE]          # make bench-hook

podfit runs as the hook runs it: one process, started cold for every commit (nothing stays running).

On a busy machine wall times stretch with the load while CPU times stay near their cost; both are
shown. "its libraries' imports" is the floor under any check: Python importing click, PyYAML,
wasmtime and jsonschema-rs, which every check needs, and nothing of podfit. The compiled policy module and the rule declarations are cached under a private
XDG_CACHE_HOME, and Python's byte-code under a private PYTHONPYCACHEPREFIX (PYTHONDONTWRITEBYTECODE
is dropped: an installed package has its byte-code compiled), all warmed by one run first, as a
user's second commit finds them. A second table splits the in-process run's CPU time into phases
(imports, catalogue, parse, facts and rules, Rego, report) in one process.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SMALL = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1.0
          resources:
            requests: {cpu: 250m, memory: 256Mi}
            limits: {cpu: 1500m, memory: 1Gi}
"""

PHASES = """
import sys, time
t0 = time.process_time(); marks = []
def mark(what): marks.append((what, time.process_time()))
import podfit.cli; mark("import podfit.cli")
from podfit.commands._common import load_config, load_inputs, load_platform
from podfit.pipeline import check; mark("import the pipeline")
from podfit.catalogue import load_catalogue; load_catalogue(); mark("rule catalogue")
config = load_config(None); platform = load_platform(None)
result = load_inputs([sys.argv[1]], config); mark("parse")
report, _ = check(result, platform, config); mark("facts, rules, Rego")
from podfit.formats import render; render(report, "text"); mark("text report")
prev = t0
for what, t in marks:
    print(f"  {what:<22} {1000 * (t - prev):6.1f} ms CPU"); prev = t
print(f"  {'total':<22} {1000 * (prev - t0):6.1f} ms CPU (interpreter start not counted)")
"""


def tool(name: str) -> str | None:
    p = ROOT / ".tools" / "bin" / name
    return str(p) if p.is_file() else shutil.which(name)


def best(cmd: list[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    """(best wall, best CPU) seconds of ``cmd`` over ``runs`` runs."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), min(cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", help="manifest to check (default: a small Deployment)")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="podfit-hook-"))
    manifest = Path(args.file) if args.file else work / "deploy.yaml"
    if not args.file:
        manifest.write_text(SMALL)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"), PYTHONPYCACHEPREFIX=str(work / "pyc"), NO_COLOR="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("CI", None)
    podfit = shutil.which("podfit", path=str(Path(sys.executable).parent)) or "podfit"
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        # the floor a check starts from: the libraries every check imports, and nothing of podfit
        "its libraries' imports": [sys.executable, "-c", "import click, yaml, wasmtime, jsonschema_rs"],
    }
    if kube_score := tool("kube-score"):
        commands["kube-score score"] = [kube_score, "score", str(manifest)]
    if conftest := tool("conftest"):
        commands["conftest test"] = [conftest, "test", "--policy", str(ROOT / "policies"), str(manifest)]
    check = [podfit, "check", str(manifest)]
    subprocess.run(check, stdout=subprocess.DEVNULL, env=env, check=False)  # warm the caches
    results = {"podfit check": best(check, args.runs, env)}
    results.update({name: best(cmd, args.runs, env) for name, cmd in commands.items()})
    podfit_rows = [name for name in results if name.startswith("podfit")]
    print(f"one file ({manifest.stat().st_size} bytes), best of {args.runs}; load average {os.getloadavg()[0]:.1f}")
    print(f"  {'command':<26} {'wall':>8} {'CPU':>8}   " + "   ".join(f"{r} ÷ it (wall / CPU)" for r in podfit_rows))
    for name, (wall, cpu) in results.items():
        ratios = ""
        if name not in podfit_rows and cpu > 0:
            ratios = "   ".join(f"{results[r][0] / wall:6.2f}× / {results[r][1] / cpu:5.2f}×" for r in podfit_rows)
        print(f"  {name:<26} {wall:7.3f}s {cpu:7.3f}s   {ratios}")
    print("podfit's phases in one process:")
    subprocess.run([sys.executable, "-c", PHASES, str(manifest)], env=env, check=False)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
