"""The parts of `podfit check`, each timed alone in this process (one CPU, no workers).

    python bench/parts.py bench/out/scale/corpus-10000            # make bench first
    python bench/parts.py CORPUS --runs 5

Where bench/stages.py shows when each step of a real run ends (with its workers), this takes the
steps apart: reading and parsing (and the fast path's checks alone), building the workloads, the
PF902 schema check, the compiled policies' evaluation (and how many sprintf calls it made back
into Python), the lines of the Rego results (from the text's outline, and from LibYAML's node
graph as before the outline), and the findings and JSON report made from the results. Each part
runs --runs times; the table gives the fastest and the median. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))


def timed(fn: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return times, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    os.environ["PODFIT_JOBS"] = "1"
    gc.disable()  # as check runs

    from podfit import cli, yamlio
    from podfit.check import analyze
    from podfit.engines import wasm
    from podfit.engines.base import normalise
    from podfit.facts import build_facts, facts_data
    from podfit.formats import render
    from podfit.schemas_k8s import SchemaSet
    from podfit.workloads import build_workloads, container_line

    config = cli.load_config(None)
    platform = cli.load_platform(None)
    rows: list[tuple[str, list[float], str]] = []

    times, result = timed(lambda: cli.load_inputs([args.corpus], config), args.runs)
    objects = result.objects
    rows.append(("read and parse (one process)", times, f"{len(objects):,} objects"))

    texts = [p.read_text(encoding="utf-8") for p in sorted(Path(args.corpus).rglob("*.yaml"))]
    chunks = [c for t in texts for _, c in yamlio.chunks(t)]
    limits = yamlio.YamlLimits()
    times, fast = timed(lambda: [yamlio._fast_document(c, limits)[0] for c in chunks], args.runs)
    rows.append(
        ("  of which the fast path (checks and yaml-rs)", times, f"{sum(fast):,} of {len(chunks):,} documents fast")
    )

    times, _ = timed(lambda: build_workloads(objects), args.runs)
    rows.append(("build the workloads", times, ""))

    def schema_check() -> int:
        s = SchemaSet()  # a new one each run: the kinds' validators are built too
        return sum(1 for o in objects if s.validate(o.raw))

    times, invalid = timed(schema_check, args.runs)
    rows.append(("PF902 schema check (validators built in each run)", times, f"{invalid} invalid"))

    data = {"podfit": normalise(facts_data(build_facts(objects, platform)))}
    docs = [o.raw for o in objects]
    calls = [0]
    builtin = wasm.Instance._builtin

    def counting(self: Any, ident: int, ctx: int, *a: int) -> int:
        calls[0] += 1
        return builtin(self, ident, ctx, *a)

    wasm.Instance._builtin = counting  # type: ignore[method-assign]
    times, results = timed(lambda: wasm._run_part(docs, 0, data), args.runs)
    wasm.Instance._builtin = builtin  # type: ignore[method-assign]
    rows.append(
        (
            "Rego: the compiled policies (input, evaluation, results)",
            times,
            f"{len(results):,} results, {calls[0] // args.runs:,} sprintf calls to Python",
        )
    )

    def lines() -> list[int]:
        yamlio._OUTLINES.clear()
        yamlio._RECENT.clear()
        return [container_line(objects[r.index], r.container) for r in results]

    times, by_outline = timed(lines, args.runs)
    rows.append(("lines of the Rego results (outline)", times, ""))
    outline = yamlio.LineIndex._outline
    yamlio.LineIndex._outline = lambda self: None  # type: ignore[method-assign]
    times, by_graph = timed(lines, args.runs)
    yamlio.LineIndex._outline = outline  # type: ignore[method-assign]
    rows.append(
        (
            "lines of the Rego results (LibYAML node graph)",
            times,
            "same lines" if by_graph == by_outline else "LINES DIFFER",
        )
    )

    located = [dataclasses.replace(r, line=line) for r, line in zip(results, by_outline, strict=True)]
    times, report = timed(lambda: analyze(result, platform, config, located, [], "embedded"), args.runs)
    rows.append(("analyze: Python rules and the findings of the results", times, f"{len(report.findings):,} findings"))
    times, text = timed(lambda: render(report, "json"), args.runs)
    rows.append(("JSON report", times, f"{len(text) / 2**20:.1f} MiB"))

    print(f"{args.corpus}: fastest and median of {args.runs} runs, seconds")
    for name, ts, note in rows:
        print(f"  {name:<58} {min(ts):7.3f} {statistics.median(ts):7.3f}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
