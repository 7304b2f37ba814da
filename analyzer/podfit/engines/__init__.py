"""Rego engines: evaluate the policy library (``policies/``) over Kubernetes documents.

Both engines give identical results (tests hold them to it, and to plain conftest). Every engine
takes the documents as one batched input (:func:`~podfit.engines.base.batch_input`: a ``kind: List`` of their objects,
each tagged with its document's index), the facts as ``data.podfit`` (:func:`podfit.facts.facts_data`)
and one query for every rule's ``findings``:

* ``embedded`` runs the policies as compiled by ``opa build -t wasm`` (committed as
  ``podfit/data/policies.wasm``) in-process with wasmtime (:mod:`podfit.engines.wasm`), one process
  per CPU on large inputs. It runs only the policies the module was built from.
* ``opa`` runs the real ``opa eval`` binary, one process per CPU on large inputs: for edited or
  custom policies (``PODFIT_POLICY_DIR``).

``get_engine("auto")`` picks the compiled module when it was built from the policies being run,
else ``opa`` with a notice (:attr:`Engine.notice`) saying why and how to rebuild; with neither it
raises :class:`EngineError` (the CLI exits 2 with its message), never a silent slower engine.
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import Engine, EngineError, policy_modules
from .base import policy_dir as default_policy_dir

__all__ = ["get_engine", "ENGINE_NAMES"]

ENGINE_NAMES = ("auto", "embedded", "opa")


def _timeout() -> float:
    """Seconds an ``opa eval`` may take: ``PODFIT_OPA_TIMEOUT``, default 600."""
    raw = os.environ.get("PODFIT_OPA_TIMEOUT", "")
    try:
        value = float(raw) if raw else 600.0
    except ValueError:
        raise EngineError(f"PODFIT_OPA_TIMEOUT={raw!r} is not a number of seconds") from None
    return value if value > 0 else 600.0


def get_engine(name: str, policy_dir: Path | None = None) -> Engine:
    """``auto`` | ``embedded`` | ``opa``; raises :class:`EngineError` when the engine is unavailable."""
    from .wasm import WasmEngine, stale_reason  # (the opa engine's module only when it is chosen)

    if policy_dir is not None:
        directory = policy_dir
    elif os.environ.get("PODFIT_POLICY_DIR"):
        directory = Path(os.environ["PODFIT_POLICY_DIR"])
    else:
        directory = default_policy_dir()
    if name not in ENGINE_NAMES:
        raise EngineError(f"unknown engine {name!r} (choose from {', '.join(ENGINE_NAMES)})")
    modules = policy_modules(directory)
    stale = stale_reason(modules, directory) if name in ("auto", "embedded") else None
    if name == "embedded" or (name == "auto" and stale is None):
        if stale is not None:
            raise EngineError(f"{stale}; rebuild it with `make wasm`, or use --engine opa")
        return WasmEngine(directory, modules)
    from .opa import OpaEngine, find_opa

    binary = find_opa()
    if binary is None:
        where = f"at PODFIT_OPA={os.environ['PODFIT_OPA']}" if os.environ.get("PODFIT_OPA") else "on PATH"
        hint = "install opa (https://www.openpolicyagent.org/docs/#running-opa) or set PODFIT_OPA"
        if stale is not None:
            raise EngineError(
                f"{stale}, and the opa binary that runs other policies was not found {where}: {hint}, "
                "or rebuild the module with `make wasm`"
            )
        raise EngineError(
            f"the opa binary was not found {where}: {hint}, or leave out --engine opa: "
            "the shipped policies run in podfit's embedded engine"
        )
    engine = OpaEngine(directory, binary, _timeout())
    if stale is not None:
        engine.notice = f"{stale}: running them with opa ({binary}), which is slower; `make wasm` rebuilds the module"
    return engine
