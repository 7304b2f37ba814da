"""The embedded engine: the policies run in-process in regopy (Microsoft rego-cpp).

How the engine is fed decides its speed. Measured on this machine (15 rules, one workload per
document; see bench/lint.py and docs/rego.md): ``query`` per document recompiles the policies each
time (hundreds of ms per document), so a bundle is built once and queried per batch. Documents go
in as the same tagged ``kind: List`` the opa engine uses (:func:`podfit.engines.batch_input`), but
in small batches: rego-cpp's cost per document grows with the size of the input (a List of 50
documents was twice as slow per document as one of 4, one of 200 five times). ``set_input`` with
an :class:`regopy.Input` built from the Python value is about twice as fast as ``set_input_term``
with JSON text. rego-cpp 1.x fails on ``with input as``, so the batch cannot be split inside Rego.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import EngineError, RegoResult, batch_input, batch_results, deny_packages, normalise, policy_modules, sort_results

__all__ = ["EmbeddedEngine", "BATCH"]

# Documents per query (see the module docstring).
BATCH = 1


class EmbeddedEngine:
    name = "embedded"

    def __init__(self, policy_dir: Path) -> None:
        try:
            import regopy  # noqa: F401
        except ImportError as e:  # pragma: no cover - regopy is a dependency
            raise EngineError(f"the embedded engine needs the regopy package: {e}") from None
        self.policy_dir = Path(policy_dir)
        self.modules = policy_modules(self.policy_dir)
        self.packages = deny_packages(self.modules)
        # one query returns every rule's deny set, in package order
        self.query = "x := [" + ", ".join(f"data.{p}.deny" for p in self.packages) + "]"

    def _interpreter(self, platform_data: Mapping[str, Any]) -> tuple[Any, Any]:
        from regopy import Interpreter

        try:
            rego = Interpreter()
            for name, source in self.modules.items():
                rego.add_module(name, source)
            rego.add_data_json(json.dumps({"podfit": {"platform": normalise(platform_data)}}))
            bundle = rego.build(self.query, [])
        except Exception as e:  # RegoError carries rego-cpp's error tree
            raise EngineError(f"embedded engine (regopy) could not compile the policies: {_first_line(e)}") from None
        return rego, bundle

    def evaluate(self, documents: Sequence[Mapping[str, Any]], platform_data: Mapping[str, Any]) -> list[RegoResult]:
        if not documents:
            return []
        workers = _workers(len(documents))
        if workers > 1:
            return sort_results(self._parallel(documents, platform_data, workers))
        return sort_results(self._evaluate(documents, platform_data, 0))

    def _evaluate(self, documents: Sequence[Mapping[str, Any]], platform_data: Mapping[str, Any], offset: int) -> list[RegoResult]:
        from regopy import Input

        rego, bundle = self._interpreter(platform_data)
        results: list[RegoResult] = []
        for start in range(0, len(documents), BATCH):
            first = offset + start
            where = f"embedded engine (documents {first}-{first + len(documents[start : start + BATCH]) - 1})"
            try:
                rego.set_input(Input(batch_input(documents[start : start + BATCH], first)))
                out = rego.query_bundle(bundle)
                if not out.ok():
                    raise EngineError(f"{where} failed: {out}")
                # the output's own JSON text (Node.__str__ of a large binding has crashed rego-cpp)
                sets = json.loads(str(out))["bindings"]["x"]
            except EngineError:
                raise
            except Exception as e:
                raise EngineError(f"{where} failed: {_first_line(e)}") from None
            if not isinstance(sets, list):
                raise EngineError(f"{where} returned {sets!r}")
            for raw in sets:
                results.extend(batch_results(raw, where))
        return results

    def _parallel(self, documents, platform_data, workers: int) -> list[RegoResult]:
        """rego-cpp evaluates one document at a time on one core: split large runs over processes."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        size = -(-len(documents) // workers)
        chunks = [(i, list(documents[i : i + size])) for i in range(0, len(documents), size)]
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # pragma: no cover - platforms without fork
            return self._evaluate(documents, platform_data, 0)
        results: list[RegoResult] = []
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures = [pool.submit(_run_chunk, str(self.policy_dir), chunk, dict(platform_data), offset) for offset, chunk in chunks]
            for f in futures:
                results.extend(f.result())
        return results


def _workers(n: int) -> int:
    """Processes to use: PODFIT_EMBEDDED_WORKERS (default 1). Splitting pays only on an idle
    multi-core machine; on a loaded one it was slower, so it is opt-in."""
    configured = os.environ.get("PODFIT_EMBEDDED_WORKERS", "1")
    workers = int(configured) if configured.isdigit() else 1
    return max(1, min(workers, n // 50 or 1))


def _run_chunk(policy_dir: str, documents: list, platform_data: dict, offset: int) -> list[RegoResult]:
    return EmbeddedEngine(Path(policy_dir))._evaluate(documents, platform_data, offset)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
