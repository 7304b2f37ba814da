"""The opa engine: batched ``opa eval`` runs, in parallel on multi-core machines.

All documents go into one input: a ``kind: List`` of their objects, each tagged with its document's
index (:func:`podfit.engines.base.batch_input`), and one query takes the union of every rule's ``findings``.
The policies evaluate the whole batch at once, so what does not depend on a document (platform
facts, the parse of a quantity string seen before) is computed once per run, not once per document,
and the binary starts and compiles the policies once per process.

On a machine with several CPUs a large input is split into contiguous parts, one ``opa eval``
process each (``PODFIT_OPA_WORKERS`` overrides the count); the results are merged and sorted, so
the output does not depend on the split.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .base import (
    EngineError,
    RegoResult,
    Wait,
    batch_input,
    batch_results,
    in_thread,
    normalise,
    policy_modules,
    rule_packages,
    sort_results,
    split_documents,
    worker_count,
)

__all__ = ["OpaEngine", "find_opa", "findings_query", "workers"]

_REPO_TOOLS = Path(__file__).resolve().parents[3] / ".tools" / "bin"

# Below this many documents per process, a second process costs more (start-up, policy
# compilation) than it saves.
MIN_DOCUMENTS_PER_WORKER = 500


def find_opa() -> str | None:
    """The opa binary: ``PODFIT_OPA`` if set, else on PATH, else in the project's .tools/bin."""
    explicit = os.environ.get("PODFIT_OPA")
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    found = shutil.which("opa")
    if found:
        return found
    candidate = _REPO_TOOLS / "opa"
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def findings_query(packages: Sequence[str]) -> str:
    """The union of every rule's ``findings`` set: one query returns every result of the batch."""
    return " | ".join(f"data.{pkg}.findings" for pkg in packages) or "set()"


def workers(n_documents: int, cpus: int | None = None) -> int:
    """``opa eval`` processes (``PODFIT_OPA_WORKERS``; see :func:`podfit.engines.base.worker_count`)."""
    return worker_count(n_documents, "PODFIT_OPA_WORKERS", MIN_DOCUMENTS_PER_WORKER, cpus)


class OpaEngine:
    name = "opa"
    notice = ""

    def __init__(self, policy_dir: Path, binary: str, timeout: float = 600.0) -> None:
        self.policy_dir = Path(policy_dir)
        self.binary = binary
        self.timeout = timeout
        self.modules = policy_modules(self.policy_dir)
        self.packages = rule_packages(self.modules)

    def start(
        self,
        documents: Sequence[Mapping[str, Any]],
        facts: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> Wait:
        """The inputs are written and the ``opa eval`` processes started and awaited in a thread
        (``subprocess`` starts a process by fork and exec in one call, with nothing run between)."""
        return in_thread(lambda: self.evaluate(documents, facts, locate))

    def evaluate(
        self,
        documents: Sequence[Mapping[str, Any]],
        facts: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> list[RegoResult]:
        if not documents:
            return []
        n = workers(len(documents))
        parts = split_documents(documents, n)
        with tempfile.TemporaryDirectory(prefix="podfit-opa-") as tmp:
            data_file = Path(tmp) / "data.json"
            data_file.write_text(json.dumps({"podfit": normalise(facts)}), encoding="utf-8")
            running = []
            try:
                for k, (start, part) in enumerate(parts):
                    input_file = Path(tmp) / f"input{k}.json"
                    input_file.write_text(json.dumps(batch_input(part, start)), encoding="utf-8")
                    running.append(self._start(input_file, data_file, Path(tmp) / f"out{k}.json"))
                results: list[RegoResult] = []
                for proc, out_file in running:
                    results.extend(self._finish(proc, out_file))
            finally:
                for proc, _ in running:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
        return sort_results(results)

    def _start(self, input_file: Path, data_file: Path, out_file: Path) -> tuple[subprocess.Popen, Path]:
        cmd = [
            self.binary,
            "eval",
            "--format",
            "json",
            "--input",
            str(input_file),
            "--ignore",
            "*_test.rego",
            "--data",
            str(self.policy_dir),
            "--data",
            str(data_file),
            findings_query(self.packages),
        ]
        try:
            with open(out_file, "wb") as out:
                return subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE), out_file
        except FileNotFoundError:
            raise EngineError(f"the opa binary {self.binary} could not be run") from None
        except OSError as e:
            raise EngineError(f"the opa binary {self.binary} could not be run: {e.strerror}") from None

    def _finish(self, proc: subprocess.Popen, out_file: Path) -> list[RegoResult]:
        try:
            _, stderr = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise EngineError(f"opa eval did not finish within {self.timeout:.0f} s") from None
        stdout = out_file.read_text(encoding="utf-8", errors="replace")
        if proc.returncode != 0:
            detail = (stderr.decode("utf-8", "replace") or stdout).strip().splitlines()
            raise EngineError(f"opa eval failed (exit {proc.returncode}): {' '.join(detail[:5])}")
        try:
            out = json.loads(stdout)
            raw = out["result"][0]["expressions"][0]["value"] if out.get("result") else []
        except (ValueError, KeyError, IndexError, TypeError):
            raise EngineError(f"opa eval printed output podfit cannot read: {stdout[:200]!r}") from None
        return batch_results(raw, "opa eval")
