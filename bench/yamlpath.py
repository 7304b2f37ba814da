"""What each hand-written piece of podfit/yamlio.py buys, measured on a corpus (docs/architecture.md
quotes it): CPU seconds of this one process (the fastest of --runs), so that a busy machine
disturbs the figures less than wall time.

    python bench/gen.py --objects 10000 --out bench/out/corpus-10000   # or make bench's corpus
    python bench/yamlpath.py bench/out/scale/corpus-10000 --runs 5
    python bench/yamlpath.py testdata/repos --runs 5                         # real-shaped manifests

Rows: splitting the text into documents; every document through LibYAML (podfit's line-tracking
converter over LibYAML's nodes, and LibYAML's own loader, which tracks no lines); the fast path
(the checks, yaml-rs, LibYAML for what the checks refuse) and its parts alone; the documents whose
1.2-only numbers are quoted for yaml-rs, against sending them to LibYAML; LibYAML's C composer
against the Python one (the C stack bound); the line of every container, from the text's outline
and from LibYAML's node graph. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))


def cpu(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(runs):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    gc.disable()  # as check runs

    import yaml

    from podfit import yamlio
    from podfit.workloads import container_line
    from podfit.yamlio import YamlLimits, iter_documents

    limits = YamlLimits()
    paths = sorted(p for p in Path(args.corpus).rglob("*") if p.suffix in (".yaml", ".yml"))
    texts = []
    for p in paths:
        try:
            texts.append(p.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError):
            continue
    rows: list[tuple[str, float, str]] = []

    def readable(text: str) -> bool:
        try:
            list(iter_documents(text))
            list(yaml.load_all(text, Loader=yaml.CSafeLoader))
            return True
        except Exception:
            return False

    texts = [t for t in texts if readable(t)]  # files either refuses are not the subject here
    t, chunks = cpu(lambda: [c for text in texts for c in yamlio.chunks(text)], args.runs)
    rows.append(("split into documents (chunks)", t, f"{len(texts):,} files, {len(chunks):,} documents"))

    def slow() -> int:
        return sum(1 for first, c in chunks for _ in yamlio._slow_documents(c, first, limits, 0))

    t_slow, n = cpu(slow, args.runs)
    rows.append(("LibYAML, podfit's converter (lines, limits, duplicates)", t_slow, f"{n:,} documents"))
    t, _ = cpu(lambda: [list(yaml.load_all(c, Loader=yaml.CSafeLoader)) for _, c in chunks], args.runs)
    rows.append(("LibYAML's own loader (no lines)", t, ""))

    t_fast, docs = cpu(lambda: [d for text in texts for d in iter_documents(text, fast=True)], args.runs)
    fast = sum(1 for d in docs if d.lines is not None and d.lines.plain)
    rows.append(("fast path: checks, yaml-rs, LibYAML for the rest", t_fast, f"{fast:,} of {len(docs):,} read fast"))
    rows.append(("  LibYAML path over fast path", t_slow / t_fast if t_fast else 0.0, "(ratio)"))

    def gate() -> int:
        ok = 0
        for _, c in chunks:
            masked = c
            if yamlio._indicators(c):
                if "'" not in c and '"' not in c:
                    continue
                masked = yamlio._QUOTED_VALUE.sub(r"\1''", c)
                if yamlio._indicators(masked):
                    continue
            if yamlio._too_deep(c, limits.max_depth):
                continue
            yamlio._divergent(masked)
            ok += 1
        return ok

    t, _ = cpu(gate, args.runs)
    rows.append(("  the checks alone (indicators, depth, 1.1/1.2 tokens)", t, ""))
    rs = yamlio._rust()
    if rs is not None:

        def rust() -> int:
            ok = 0
            for _, c in chunks:
                try:
                    rs.loads(c, parse_datetime=False)
                    ok += 1
                except Exception:  # e.g. a duplicate key, which yaml-rs refuses
                    pass
            return ok

        t, ok = cpu(rust, args.runs)
        rows.append(("  yaml-rs alone (every document)", t, f"{ok:,} read"))

    divergent = [(f, c) for f, c in chunks if yamlio._divergent(c) and yamlio._fast_document(c, limits)[0]]
    if divergent:
        t_q, _ = cpu(lambda: [yamlio._fast_document(c, limits) for _, c in divergent], args.runs)
        t_s, _ = cpu(lambda: [list(yamlio._slow_documents(c, f, limits, 0)) for f, c in divergent], args.runs)
        rows.append(("1.2-only numbers quoted for yaml-rs (and re-checked)", t_q, f"{len(divergent):,} documents"))
        rows.append(("  the same documents through LibYAML", t_s, f"{t_s / t_q:.1f}x" if t_q else ""))

    def composer(loader: Any) -> int:
        return sum(len(list(yaml.compose_all(c, Loader=loader))) for _, c in chunks)

    t_c, _ = cpu(lambda: composer(yaml.CSafeLoader), args.runs)
    t_p, _ = cpu(lambda: composer(yaml.SafeLoader), 1)
    rows.append(("LibYAML's C parser and composer (nodes)", t_c, ""))
    rows.append(("  PyYAML's Python ones, for chunks over the C stack bound", t_p, f"{t_p / t_c:.1f}x" if t_c else ""))

    from podfit.loader import load, read_files

    result = load(read_files([str(p) for p in paths]))
    asks = [
        (o, c["name"])
        for o in result.objects
        for c in (o.raw.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []) or [])
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    ]

    def lines() -> list[int]:
        yamlio._OUTLINES.clear()
        yamlio._RECENT.clear()
        return [container_line(o, name) for o, name in asks]

    t_o, by_outline = cpu(lines, args.runs)
    outline = yamlio.LineIndex._outline
    yamlio.LineIndex._outline = lambda self: None  # type: ignore[method-assign]
    t_g, by_graph = cpu(lines, args.runs)
    yamlio.LineIndex._outline = outline  # type: ignore[method-assign]
    same = "same lines" if by_graph == by_outline else "LINES DIFFER"
    rows.append(("line of every container: the text's outline", t_o, f"{len(asks):,} containers"))
    rows.append(("  the same from LibYAML's node graph", t_g, f"{t_g / t_o:.1f}x, {same}" if t_o else same))

    print(f"{args.corpus}: CPU seconds, fastest of {args.runs} runs")
    for name, seconds, note in rows:
        print(f"  {name:<58} {seconds:7.3f}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
