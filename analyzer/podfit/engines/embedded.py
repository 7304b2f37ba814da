"""The embedded engine: the policies run in-process in regopy (Microsoft rego-cpp).

How the engine is fed decides its speed. Measured on this machine (15 rules, one Deployment per
document; see bench/lint.py): ``query`` per document recompiles the policies each time (hundreds
of ms per document); a bundle built once and queried per document after ``set_input_term`` costs
a few ms per document; one batched input evaluated with ``with input as`` would be cheapest, but
rego-cpp 1.x fails on ``with`` (the query returns no result), so documents are fed one at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import EngineError, RegoResult, deny_packages, normalise, policy_modules, sort_results, to_results

__all__ = ["EmbeddedEngine"]


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
        rego, bundle = self._interpreter(platform_data)
        results: list[RegoResult] = []
        for index, doc in enumerate(documents):
            try:
                rego.set_input_term(json.dumps(normalise(doc)))
                out = rego.query_bundle(bundle)
                if not out.ok():
                    raise EngineError(f"embedded engine failed on document {index}: {out}")
                sets = json.loads(str(out.binding("x")))
            except EngineError:
                raise
            except Exception as e:
                raise EngineError(f"embedded engine failed on document {index}: {_first_line(e)}") from None
            if not isinstance(sets, list):
                raise EngineError(f"embedded engine returned {sets!r} for document {index}")
            for raw in sets:
                results.extend(to_results(index, raw))
        return sort_results(results)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
