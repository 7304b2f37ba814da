"""Lint benchmark: objects/s for podfit (each Rego engine) and for conftest with the same policies,
side by side on one generated corpus (bench/gen.py). A benchmark, not a test: it prints numbers.

    python bench/lint.py --objects 10000          # make bench-lint

The embedded engine runs the policies compiled to WebAssembly (the default), the opa engine the
opa binary, both on the whole corpus, then alone with their default process split and with one
process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))
sys.path.insert(0, str(ROOT / "bench"))

import yaml  # noqa: E402

from gen import generate, write  # noqa: E402
from podfit.engines import get_engine  # noqa: E402
from podfit.engines.opa import find_opa  # noqa: E402
from podfit.facts import build_facts, facts_data  # noqa: E402
from podfit.platform import DEFAULT_PLATFORM  # noqa: E402


def tool(name: str) -> str | None:
    p = ROOT / ".tools" / "bin" / name
    return str(p) if p.is_file() else shutil.which(name)


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, proc


def podfit_cmd() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "podfit"
    return [str(venv)] if venv.is_file() else [sys.executable, "-m", "podfit"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--embedded-objects", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args(argv)

    corpus = args.out / "corpus"
    small = args.out / "corpus-embedded"
    objects = generate(args.objects, args.seed)
    write(objects, corpus)
    write(objects[: args.embedded_objects], small)
    data = facts_data(build_facts((), DEFAULT_PLATFORM))
    data_file = args.out / "data.json"
    data_file.write_text(json.dumps({"podfit": data}))
    print(f"corpus: {args.objects} objects ({', '.join(sorted({o['kind'] for o in objects}))}) in {corpus}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (before)")

    env = dict(os.environ, PYTHONPATH=str(ROOT / "analyzer"))
    rows: list[tuple[str, int, float, str]] = []

    def run(label: str, n: int, cmd: list[str], ok=(0, 1), env: dict[str, str] = env) -> None:
        seconds, proc = timed(cmd, env)
        note = "" if proc.returncode in ok else f"FAILED (exit {proc.returncode}): {proc.stderr.strip()[:160]}"
        rows.append((label, n, seconds, note))

    check = podfit_cmd() + ["check", "--format", "json", "--fail-on", "never"]
    if find_opa():
        run("podfit check --engine opa", args.objects, check + ["--engine", "opa", str(corpus)])
    run("podfit check --engine embedded (wasm)", args.objects, check + ["--engine", "embedded", str(corpus)])
    conftest = tool("conftest")
    if conftest:
        run(
            "conftest test (same policies)",
            args.objects,
            [
                conftest,
                "test",
                "--policy",
                str(ROOT / "policies"),
                "--namespace",
                "podfit.lib.conftest",
                "--no-color",
                "--data",
                str(data_file),
                "-o",
                "json",
                str(corpus),
            ],
        )

    # the engines alone (no loading, schema validation or Python rules)
    docs = [d for p in sorted(corpus.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text())]
    if find_opa():
        for workers in ("", "1"):  # the default split (one process per CPU), then one process
            os.environ["PODFIT_OPA_WORKERS"] = workers
            t = time.perf_counter()
            n_opa = len(get_engine("opa").evaluate(docs, data))
            label = "opa engine alone" + (", 1 process" if workers else "")
            rows.append((f"{label} ({n_opa} results)", len(docs), time.perf_counter() - t, ""))
        os.environ.pop("PODFIT_OPA_WORKERS", None)
    for workers in ("", "1"):
        os.environ["PODFIT_EMBEDDED_WORKERS"] = workers
        t = time.perf_counter()
        n_emb = len(get_engine("embedded").evaluate(docs, data))
        label = "embedded engine alone" + (", 1 process" if workers else "")
        rows.append((f"{label} ({n_emb} results)", len(docs), time.perf_counter() - t, ""))
    os.environ.pop("PODFIT_EMBEDDED_WORKERS", None)

    base = next((r for r in rows if r[0].startswith("conftest") and not r[3]), None)
    base_rate = base[1] / base[2] if base else None
    print(f"\n{'':48} {'objects':>8} {'seconds':>8} {'objects/s':>10} {'vs conftest':>12}")
    for label, n, seconds, note in rows:
        rate = n / seconds if seconds else float("inf")
        ratio = f"{rate / base_rate:.2f}x" if base_rate else "-"
        print(f"{label:48} {n:8d} {seconds:8.2f} {rate:10.0f} {ratio:>12}  {note}")
    print(f"load average {os.getloadavg()[0]:.2f} (after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
