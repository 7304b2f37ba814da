"""CPU time of the compiled policies alone (the embedded engine in one process, no Python rules), on
a generated corpus: the measurement behind the Rego library's engine-driven choices
(docs/architecture.md, "The Rego library and the compiled module"). A benchmark, not a test.

    python bench/wasm_cpu.py --objects 10000                      # this checkout's policies.wasm
    python bench/wasm_cpu.py --objects 10000 --module-dir DIR     # another build (make wasm's output)

The platform facts are the default profile's, on bare metal with 256 logical CPUs per node so that
every rule (PF202 included) has findings to write. Prints the best CPU time of --repeat runs and
how many times the module called back into Python for ``sprintf``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))
sys.path.insert(0, str(ROOT / "bench"))

from gen import generate  # noqa: E402
from podfit.engines import wasm  # noqa: E402
from podfit.facts import build_facts, facts_data  # noqa: E402
from podfit.platform import DEFAULT_PLATFORM  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--module-dir", type=Path, help="directory holding policies.wasm (default: the package's)")
    args = ap.parse_args()
    if args.module_dir:
        wasm._DATA = args.module_dir.resolve()
    calls = [0]
    sprintf = wasm._HOST_BUILTINS["sprintf"]

    def counted(*a: Any) -> Any:
        calls[0] += 1
        return sprintf(*a)

    wasm._HOST_BUILTINS["sprintf"] = counted
    docs = generate(args.objects, args.seed)
    facts = facts_data(build_facts([], DEFAULT_PLATFORM))  # the corpus has no LimitRange
    facts["platform"] = {**facts["platform"], "runtime": "bare-metal", "node_logical_cpus": 256}
    data = {"podfit": facts}
    inst = wasm.Instance()
    best, found = float("inf"), 0
    for _ in range(args.repeat):
        start = time.process_time()
        results = []
        for first in range(0, len(docs), wasm.CHUNK):
            results.extend(wasm._run_chunk(inst, docs[first : first + wasm.CHUNK], first, data))
        best, found = min(best, time.process_time() - start), len(results)
    print(
        f"{wasm.bundle_path()}: {len(docs)} objects, {found} findings, best CPU {best:.2f} s of {args.repeat}, "
        f"{calls[0] // args.repeat} sprintf calls per run"
    )


if __name__ == "__main__":
    main()
