"""The embedded engine's memory sizing (podfit.engines.wasm): evaluation time with the small
reservation podfit takes under an address-space limit against wasmtime's default (4 GiB reserved,
no bounds checks), one process, on a generated corpus (bench/gen.py), interleaved runs. A
benchmark: it prints numbers.

    .venv/bin/python bench/wasm_memory.py --objects 3000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import sys, time
sys.path.insert(0, "bench")
from gen import generate
from podfit.engines import get_engine
from podfit.engines import wasm
# the sizing podfit takes under an address-space limit, without setting one
sizing = wasm._SMALL_RESERVATION if sys.argv[2] == "small" else None
wasm._memory_sizing = lambda: sizing
docs = generate(int(sys.argv[1]))
engine = get_engine("embedded")
engine.evaluate(docs[:10], {})  # compile (or load) the module first
t = time.perf_counter()
engine.evaluate(docs, {})
print(time.perf_counter() - t)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    times: dict[str, list[float]] = {"default": [], "small": []}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PODFIT_EMBEDDED_WORKERS="1", XDG_CACHE_HOME=cache)
        for _ in range(args.runs):
            for name in times:
                p = subprocess.run(
                    [sys.executable, "-c", CHILD, str(args.objects), name],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=True,
                )
                times[name].append(float(p.stdout.strip().splitlines()[-1]))
    for name, ts in times.items():
        print(f"{name:8} median {statistics.median(ts):.3f} s  runs {' '.join(f'{t:.3f}' for t in ts)}")
    ratio = statistics.median(times["small"]) / statistics.median(times["default"])
    print(f"small reservation / wasmtime default: {ratio:.3f}x ({args.objects} objects, one process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
