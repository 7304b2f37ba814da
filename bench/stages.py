"""Where one `podfit check` spends its time: the CLI's own steps run in-process and timed.

    python bench/stages.py bench/out/scale/corpus-10000                 # the default pipeline
    python bench/stages.py CORPUS --variant gc-on --variant lines-in-main --runs 10

Each run prints when imports, parsing, the engine start, the Python rules (up to the point where
they need the Rego results), the Rego results, the analysis and the report were done, in seconds
from the start. Variants, interleaved run by run with the default so that a busy machine affects
both alike: ``gc-on`` keeps Python's cyclic collector on (``check`` turns it off),
``lines-in-main`` has the main process resolve the lines of the Rego results (the wasm engine's
workers do it by default). The summary gives each variant's fastest and median total.
A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))

VARIANTS = ("default", "gc-on", "lines-in-main")


def run(corpus: str, variant: str, engine: str) -> list[tuple[str, float]]:
    t0 = time.perf_counter()
    marks: list[tuple[str, float]] = []

    def mark(what: str) -> None:
        marks.append((what, time.perf_counter() - t0))

    (gc.enable if variant == "gc-on" else gc.disable)()
    from podfit import cli
    from podfit.check import analyze
    from podfit.facts import build_facts
    from podfit.formats import render
    from podfit.pipeline import start_engine

    mark("imports")
    config = cli.load_config(None)
    platform = cli.load_platform(config.platform)
    result = cli.load_inputs([corpus], config)
    mark("parsed")
    if variant == "lines-in-main":
        from podfit.engines import wasm

        evaluate = wasm.WasmEngine.evaluate
        wasm.WasmEngine.evaluate = lambda self, docs, data, locate=None: evaluate(self, docs, data)  # type: ignore[method-assign]
    facts = build_facts(result.objects, platform)
    eng, wait = start_engine(engine, facts, [], config)
    name = eng.name if eng is not None else ""
    mark("engine started")

    def rego():
        mark("rules needing no Rego result done")
        out = wait()
        mark("Rego results in")
        return out

    report = analyze(result, facts, config, rego, [], name)
    mark("analysed")
    render(report, "json", color=False)
    mark("report written")
    if variant == "lines-in-main":
        wasm.WasmEngine.evaluate = evaluate  # type: ignore[method-assign]
    gc.enable()
    return marks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--variant", action="append", choices=VARIANTS[1:], default=[])
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv)
    import subprocess

    totals: dict[str, list[float]] = {v: [] for v in ("default", *args.variant)}
    for k in range(args.runs):
        for variant in totals:
            # a fresh process per run: imports, caches and the heap start from nothing each time
            out = subprocess.run(
                [sys.executable, __file__, "--one", variant, args.engine, args.corpus],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            print(f"run {k + 1}, {variant}:\n{out}", end="")
            totals[variant].append(float(out.strip().splitlines()[-1].split()[0]))
    print("\ntotal seconds (report written):")
    for variant, ts in totals.items():
        print(f"  {variant:<14} fastest {min(ts):.2f}  median {statistics.median(ts):.2f}  ({len(ts)} runs)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        for what, t in run(sys.argv[4], sys.argv[2], sys.argv[3]):
            print(f"{t:6.2f} {what}")
        sys.exit(0)
    sys.exit(main())
