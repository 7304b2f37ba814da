"""The facts stage on a corpus: how long ``build_facts`` and ``facts_data`` (the document the Rego
rules read) take, in-process, the fastest of ``--repeat`` runs each.

    python bench/gen.py --objects 10000 --out /tmp/corpus
    python bench/facts.py /tmp/corpus --platform testdata/platform-import/eks/platform.yaml

With a platform whose pools have several node sizes, ``facts_data`` sizes every workload against
the pools it may land on (``platform.workloads``). A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--platform", help="platform profile (default: the built-in one)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from podfit.facts import build_facts, facts_data
    from podfit.loader import InputFile, load
    from podfit.platform import DEFAULT_PLATFORM, parse_platform

    platform = DEFAULT_PLATFORM
    if args.platform:
        platform = parse_platform(Path(args.platform).read_text(), args.platform)
    files = [InputFile(str(p), p.read_bytes()) for p in sorted(Path(args.corpus).rglob("*.yaml"))]
    objects = load(files).objects
    build, data = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        facts = build_facts(objects, platform)
        t1 = time.perf_counter()
        doc = facts_data(facts)
        data.append(time.perf_counter() - t1)
        build.append(t1 - t)
    listed = len(doc["platform"].get("workloads", {}))
    print(f"{len(objects):,} objects, {len(facts.workloads):,} workloads ({listed:,} listed by node size)")
    print(f"build_facts {min(build):.3f} s, facts_data {min(data):.3f} s (fastest of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
