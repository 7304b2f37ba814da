"""The opa engine: one batched ``opa eval`` per run.

All documents go into one input (``{"documents": [...]}``); a generated wrapper module evaluates
each rule's ``deny`` over every document with ``with input as``, so the binary starts once and
compiles the policies once, however many documents there are.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import EngineError, RegoResult, deny_packages, normalise, policy_modules, sort_results, to_results

__all__ = ["OpaEngine", "find_opa", "wrapper_module"]

_REPO_TOOLS = Path(__file__).resolve().parents[3] / ".tools" / "bin"
WRAPPER_PACKAGE = "podfit_engine"


def find_opa() -> str | None:
    """The opa binary: on PATH, else in the project's .tools/bin."""
    found = shutil.which("opa")
    if found:
        return found
    candidate = _REPO_TOOLS / "opa"
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def wrapper_module(packages: Sequence[str]) -> str:
    """A module whose ``results`` holds ``[document index, result]`` for every rule and document.

    All rules are evaluated under one ``with input as`` per document, so the helpers they share
    (the pod records of ``podfit.lib.k8s``) are computed once per document, not once per rule.
    """
    union = " | ".join(f"data.{pkg}.deny" for pkg in packages) or "set()"
    return "\n".join([
        f"package {WRAPPER_PACKAGE}",
        "",
        "results contains [i, r] if {",
        "\tsome i, doc in input.documents",
        "\trs := _all with input as doc",
        "\tsome r in rs",
        "}",
        "",
        f"_all := {union}",
        "",
    ])  # fmt: skip


class OpaEngine:
    name = "opa"

    def __init__(self, policy_dir: Path, binary: str, timeout: float = 600.0) -> None:
        self.policy_dir = Path(policy_dir)
        self.binary = binary
        self.timeout = timeout
        self.modules = policy_modules(self.policy_dir)
        self.packages = deny_packages(self.modules)

    def evaluate(self, documents: Sequence[Mapping[str, Any]], platform_data: Mapping[str, Any]) -> list[RegoResult]:
        if not documents:
            return []
        with tempfile.TemporaryDirectory(prefix="podfit-opa-") as tmp:
            t = Path(tmp)
            (t / "wrapper.rego").write_text(wrapper_module(self.packages), encoding="utf-8")
            (t / "data.json").write_text(json.dumps({"podfit": {"platform": normalise(platform_data)}}), encoding="utf-8")
            payload = json.dumps({"documents": [normalise(d) for d in documents]})
            cmd = [
                self.binary, "eval", "--format", "json", "--stdin-input",
                "--ignore", "*_test.rego", "--data", str(self.policy_dir), "--data", str(t / "wrapper.rego"), "--data", str(t / "data.json"),
                f"data.{WRAPPER_PACKAGE}.results",
            ]  # fmt: skip
            try:
                proc = subprocess.run(cmd, input=payload, capture_output=True, text=True, timeout=self.timeout)
            except FileNotFoundError:
                raise EngineError(f"the opa binary {self.binary} could not be run") from None
            except subprocess.TimeoutExpired:
                raise EngineError(f"opa eval did not finish within {self.timeout:.0f} s") from None
            except OSError as e:
                raise EngineError(f"the opa binary {self.binary} could not be run: {e.strerror}") from None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise EngineError(f"opa eval failed (exit {proc.returncode}): {' '.join(detail[:5])}")
        try:
            out = json.loads(proc.stdout)
            pairs = out["result"][0]["expressions"][0]["value"] if out.get("result") else []
        except (ValueError, KeyError, IndexError, TypeError):
            raise EngineError(f"opa eval printed output podfit cannot read: {proc.stdout[:200]!r}") from None
        results: list[RegoResult] = []
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int)):
                raise EngineError(f"opa eval returned an unexpected result: {pair!r}")
            results.extend(to_results(pair[0], [pair[1]]))
        return sort_results(results)
