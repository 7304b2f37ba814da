"""The embedded engine: the policies run in-process in regopy (Microsoft rego-cpp).

How the engine is fed decides its speed. Measured on this machine (15 rules, one workload per
document; see bench/lint.py and docs/rego.md): ``query`` per document recompiles the policies each
time (hundreds of ms per document), so a bundle is built once and queried per batch. Documents go
in as the same tagged ``kind: List`` the opa engine uses (:func:`podfit.engines.batch_input`), but
in small batches: rego-cpp's cost per document grows with the size of the input (a List of 50
documents was twice as slow per document as one of 4, one of 200 five times). The input goes in as
JSON text (``set_input_term``): ``set_input`` with a :class:`regopy.Input` is faster (0.2 against
0.35 ms per document) but rego-cpp then prints control characters of strings raw, which regopy's
own reading of the output rejects. rego-cpp 1.x fails on ``with input as``, so the batch cannot be
split inside Rego.
"""

from __future__ import annotations

import contextlib
import json
import sys
import os
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from . import (
    QUANTITY_MEMO, EngineError, RegoResult, batch_input, batch_results, deny_packages, normalise, policy_modules,
    quantity_strings, sort_results, worker_count,
)

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

    def _interpreter(self, platform_data: Mapping[str, Any], quantities: Mapping[str, Any] | None = None) -> tuple[Any, Any]:
        from regopy import Interpreter

        data: dict[str, Any] = {"platform": normalise(platform_data)}
        if quantities:
            data["quantities"] = quantities
        try:
            with _stdout_to_stderr():  # rego-cpp prints compile errors on fd 1, where the report goes
                rego = Interpreter()
                for name, source in self.modules.items():
                    rego.add_module(name, source)
                rego.add_data_json(json.dumps({"podfit": data}))
                bundle = rego.build(self.query, [])
        except Exception as e:  # RegoError carries rego-cpp's error tree
            raise EngineError(f"embedded engine (regopy) could not compile the policies: {_first_line(e)}") from None
        return rego, bundle

    def evaluate(
        self, documents: Sequence[Mapping[str, Any]], platform_data: Mapping[str, Any], locate: Any = None,
    ) -> list[RegoResult]:
        if not documents:
            return []
        workers = _workers(len(documents))
        if workers > 1:
            return sort_results(self._parallel(documents, platform_data, workers))
        return sort_results(self._evaluate(documents, platform_data, 0))

    def _evaluate(self, documents: Sequence[Mapping[str, Any]], platform_data: Mapping[str, Any], offset: int) -> list[RegoResult]:
        rego, bundle = self._interpreter(platform_data, self._quantities(documents))
        results: list[RegoResult] = []
        for start in range(0, len(documents), BATCH):
            first = offset + start
            where = f"embedded engine (documents {first}-{first + len(documents[start : start + BATCH]) - 1})"
            try:
                rego.set_input_term(json.dumps(batch_input(documents[start : start + BATCH], first)))
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

    def _quantities(self, documents: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
        """The memo ``data.podfit.quantities`` (see policies/lib/quantity.rego): the library's own
        parser, run once in rego-cpp over the distinct strings under ``requests``, ``limits`` and
        ``overhead`` keys of the documents (:data:`podfit.engines.QUANTITY_MEMO`)."""
        from regopy import Interpreter

        texts = sorted(quantity_strings(documents))
        source = self.modules.get("lib/quantity.rego")
        if not texts or source is None:
            return {}
        query = "x := " + QUANTITY_MEMO
        try:
            rego = Interpreter()
            rego.add_module("lib/quantity.rego", source)
            rego.set_input_term(json.dumps(texts))
            out = rego.query(query)
            cpu, memory = json.loads(str(out), strict=False)["bindings"]["x"]
        except Exception as e:
            raise EngineError(f"embedded engine (regopy) could not parse the quantities: {_first_line(e)}") from None
        ok = lambda table: {k: v for k, v in table.items() if isinstance(v, int) and not isinstance(v, bool)}  # noqa: E731
        return {"cpu": ok(cpu), "memory": ok(memory)}

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


# Below this many documents per process, another process costs more (fork, policy compilation,
# about 0.3 s) than it saves.
MIN_DOCUMENTS_PER_WORKER = 200


def _workers(n: int, cpus: int | None = None) -> int:
    """Processes to use (``PODFIT_EMBEDDED_WORKERS``; see :func:`podfit.engines.worker_count`).
    Measured here: 1,000 documents took 8.4 s in one process and 5.3 s in two on 2 CPUs."""
    return worker_count(n, "PODFIT_EMBEDDED_WORKERS", MIN_DOCUMENTS_PER_WORKER, cpus)


def _run_chunk(policy_dir: str, documents: list, platform_data: dict, offset: int) -> list[RegoResult]:
    return EmbeddedEngine(Path(policy_dir))._evaluate(documents, platform_data, offset)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Point file descriptor 1 at stderr for the duration (native code writes there directly)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real fd 1 (e.g. captured by a test runner)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
