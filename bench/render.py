"""Charts and kustomizations checked in place, against the same objects checked pre-rendered.
A benchmark, not a test: it prints the median of N interleaved runs of each (whole process, wall
time) and the ratios issue 45 sets targets for:

- cold (an empty render cache) ÷ (the pre-rendered check + the slowest single render) ≤ 1.5
- warm (every render cached, as a hook run that changed no chart file) ÷ the pre-rendered check ≤ 1.2

    python bench/render.py TREE [--runs 3]       # e.g. a checkout of kubernetes-engine-samples

"Pre-rendered" is what podfit's own rendering produced for the tree, written to files (each
chart's and kustomization's output as one file, the other inputs copied), checked with helm and
kustomize turned off: the same objects, without a tool run. The slowest single render is each
render run alone, one after another, its time taken; all use the helm and kustomize `make tools`
builds. The tree is read, never written.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))


def wall(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=False)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from podfit.loader import discover
    from podfit.render import RenderOptions, render_inputs, run_tool

    tree = args.tree.resolve()
    helm, kustomize = ROOT / ".tools/bin/helm", ROOT / ".tools/bin/kustomize"
    work = Path(tempfile.mkdtemp(prefix="podfit-bench-render-"))
    env = dict(os.environ, PODFIT_HELM=str(helm), PODFIT_KUSTOMIZE=str(kustomize), NO_COLOR="1")
    env.pop("CI", None)

    # the same objects, pre-rendered: podfit's rendering of the tree, written out
    os.chdir(tree)
    paths = discover(["."])
    opts = RenderOptions(helm=str(helm), kustomize=str(kustomize), kube_version="1.37.0", workers=1)
    os.environ["XDG_CACHE_HOME"] = str(work / "no-cache")
    jobs: list = []
    import podfit.render as render_module

    real_run_jobs = render_module.run_jobs

    def timed(batch, max_bytes, timeout, workers):  # each render alone, its time taken
        out = []
        for job in batch:
            t = time.perf_counter()
            try:
                out.append(run_tool(job.argv, job.cwd, max_bytes, timeout))
            except render_module.RenderError as e:
                out.append(e)
            jobs.append((time.perf_counter() - t, " ".join(job.argv[1:3])))
        return out

    render_module.run_jobs = timed
    rendered = render_inputs(paths, opts)
    render_module.run_jobs = real_run_jobs
    pre = work / "pre-rendered"
    for i, f in enumerate(rendered.files):
        target = pre / "rendered" / f"{i:04d}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.data)
    for p in rendered.paths:
        if p != "-":
            target = pre / "raw" / p
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, target)
    slowest = max((t for t, _ in jobs), default=0.0)
    podfit = shutil.which("podfit", path=str(Path(sys.executable).parent)) or "podfit"
    off = dict(env, PODFIT_HELM="off", PODFIT_KUSTOMIZE="off", XDG_CACHE_HOME=str(work / "cache-pre"))
    warm_env = dict(env, XDG_CACHE_HOME=str(work / "cache-warm"))
    check = [podfit, "check", ".", "--format", "json", "--fail-on", "never"]
    subprocess.run(check, cwd=pre, env=off, stdout=subprocess.DEVNULL, check=False)  # warm the other caches
    subprocess.run(check, cwd=tree, env=warm_env, stdout=subprocess.DEVNULL, check=False)
    times: dict[str, list[float]] = {"pre-rendered": [], "in place, cold": [], "in place, warm": []}
    for n in range(args.runs):  # interleaved: a change of load touches every row alike
        times["pre-rendered"].append(wall(check, off, pre))
        cold = dict(env, XDG_CACHE_HOME=str(work / f"cache-cold-{n}"))
        shutil.copytree(work / "cache-warm", work / f"cache-cold-{n}")  # the compiled policies, not renders
        shutil.rmtree(work / f"cache-cold-{n}" / "podfit" / "render", ignore_errors=True)
        times["in place, cold"].append(wall(check, cold, tree))
        times["in place, warm"].append(wall(check, warm_env, tree))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"{tree.name}: {len(paths)} files, {len(jobs)} renders (slowest {slowest:.2f} s, all {sum(t for t, _ in jobs):.2f} s "
        f"one after another); {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; median of {args.runs}"
    )
    for k, v in med.items():
        print(f"  {k:<16} {v:6.2f} s   ({', '.join(f'{x:.2f}' for x in times[k])})")
    print(
        f"  cold ÷ (pre-rendered + slowest render) = {med['in place, cold'] / (med['pre-rendered'] + slowest):.2f} (target ≤ 1.5)"
    )
    print(
        f"  warm ÷ pre-rendered                    = {med['in place, warm'] / med['pre-rendered']:.2f} (target ≤ 1.2)"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
