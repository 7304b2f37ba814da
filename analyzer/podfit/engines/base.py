"""What both Rego engines (:mod:`podfit.engines.opa`, :mod:`podfit.engines.wasm`) share: the
result type and error, the policy modules, the batched input every engine takes, the findings'
normalisation and order, and the split of large inputs across worker processes.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

__all__ = [
    "EngineError",
    "RegoResult",
    "Engine",
    "policy_dir",
    "policy_modules",
    "rule_packages",
    "to_results",
    "batch_input",
    "batch_results",
    "DOCUMENT_KEY",
    "QUANTITY_MEMO",
    "quantity_strings",
    "worker_count",
    "split_documents",
    "in_thread",
    "Wait",
]

T = TypeVar("T")


class EngineError(Exception):
    """Any engine failure: missing binary or package, bad policy, crash. The CLI exits 2."""


@dataclass(frozen=True)
class RegoResult:
    index: int  # into the documents given to evaluate()
    rule: str
    severity: str  # as the rule's METADATA declares it
    msg: str  # the message, without the object it is about
    container: str | None
    details: Mapping[str, Any]
    # the line of the container (or object) the result is about, when the engine resolved it
    line: int | None = None


Wait = Callable[[], list[RegoResult]]
"""Waits for a started evaluation and returns its results (raising :class:`EngineError`)."""


class Engine(Protocol):
    name: str
    notice: str  # why this engine runs when it is not the default one, else ""

    def start(
        self,
        documents: Sequence[Mapping[str, Any]],
        facts: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> Wait:
        """Start evaluating the documents; the returned function waits for the results.
        ``locate(index, container)`` gives the line of a result; an engine may use it to fill
        ``RegoResult.line`` (the wasm engine's workers do).

        Every process an engine forks is forked here, in the calling thread, before this returns;
        whatever runs on in the background afterwards is threads only. A run calls it from the
        main thread while no other thread exists, so no fork happens in a multi-threaded process."""
        ...

    def evaluate(
        self,
        documents: Sequence[Mapping[str, Any]],
        facts: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> list[RegoResult]:
        """``start(...)()``: the results for the documents."""
        ...


def in_thread(work: Wait) -> Wait:
    """Run ``work`` in a thread started now; the returned function joins it and returns its
    results, or raises its exception."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["results"] = work()
        except BaseException as e:  # handed to the waiting thread
            outcome["error"] = e

    thread = threading.Thread(target=target, name="podfit-engine", daemon=True)
    thread.start()

    def wait() -> list[RegoResult]:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        results: list[RegoResult] = outcome["results"]
        return results

    return wait


def policy_dir() -> Path:
    """``policies/`` of the checkout, or the copy inside the installed wheel (``podfit._policies``)."""
    from ..paths import policies_dir

    return policies_dir()


_PACKAGE = re.compile(r"^package\s+([\w.]+)", re.M)
_FINDINGS = re.compile(r"^findings\s+contains\b", re.M)


def policy_modules(directory: Path) -> dict[str, str]:
    """Every ``.rego`` module under ``directory`` except tests, as {relative path: source}."""
    if not directory.is_dir():
        raise EngineError(f"policy directory {directory} not found")
    modules = {}
    for path in sorted(directory.rglob("*.rego")):
        if path.name.endswith("_test.rego"):
            continue
        try:
            modules[path.relative_to(directory).as_posix()] = path.read_text(encoding="utf-8")
        except OSError as e:
            raise EngineError(f"cannot read {path}: {e.strerror}") from None
    if not modules:
        raise EngineError(f"no Rego policies in {directory}")
    return modules


def rule_packages(modules: Mapping[str, str]) -> list[str]:
    """The packages that define ``findings`` (the rules), sorted."""
    packages = set()
    for source in modules.values():
        m = _PACKAGE.search(source)
        if m and _FINDINGS.search(source):
            packages.add(m.group(1))
    return sorted(packages)


def normalise(value: Any) -> Any:
    """A JSON-ready copy of a document: floats become their shortest decimal string.

    Kubernetes has no float fields besides quantities, and a quantity string is exact where a
    binary double is not (rego-cpp prints 1e-07 as "0"); the policies accept both forms.
    (Plain dicts, lists and scalars are dispatched on their exact type first: the abstract-class
    checks of the general case cost more than the copy on large inputs.)
    """
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is dict:
        return {k if type(k) is str else str(k): normalise(v) for k, v in value.items()}
    if t is list:
        return [normalise(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, (str, int)):  # subclasses (bool is exact-typed above)
        return value
    return str(value)  # YAML timestamps, binary: as text, as conftest's YAML parser leaves them


# Must match document_key in policies/lib/result.rego.
DOCUMENT_KEY = "podfit.io/document"


def batch_input(documents: Sequence[Mapping[str, Any]], offset: int = 0) -> dict[str, Any]:
    """Many documents as one input: a ``kind: List`` whose items are the objects of every document,
    each tagged with the index of its document (``DOCUMENT_KEY``), so one query evaluates them all.

    The objects are those ``podfit.lib.k8s.objects`` takes from one document: the document itself,
    or the object items of a ``kind: List``. The rules copy the tag into each result as
    ``"document"``; :func:`batch_results` maps it back. Pure (copies; the documents are untouched).
    """
    items: list[dict[str, Any]] = []
    for n, doc in enumerate(documents):
        doc = normalise(doc)
        if not isinstance(doc, dict):
            continue  # not an object: no rule applies to it
        objs = doc["items"] if doc.get("kind") == "List" and isinstance(doc.get("items"), list) else [doc]
        for obj in objs:
            if isinstance(obj, dict):
                items.append({**obj, DOCUMENT_KEY: offset + n})
    return {"kind": "List", "items": items}


def batch_results(raw: Any, where: str) -> list[RegoResult]:
    """The results of a batched query (result objects with ``"document"``) as :class:`RegoResult`s."""
    if not isinstance(raw, list):
        raise EngineError(f"{where} returned {raw!r} instead of a list of results")
    out: list[RegoResult] = []
    for r in raw:
        index = r.get("document") if isinstance(r, Mapping) else None
        if not isinstance(index, int) or isinstance(index, bool):
            raise EngineError(f"{where} returned a result without its document: {r!r}")
        out.extend(to_results(index, [r]))
    return out


def to_results(index: int, raw: Any) -> list[RegoResult]:
    """One document's findings (result objects built by ``podfit.lib.result.finding``) as
    :class:`RegoResult`s."""
    out = []
    for r in raw or ():
        if (
            not isinstance(r, Mapping)
            or not isinstance(r.get("rule"), str)
            or not isinstance(r.get("message"), str)
            or r.get("severity") not in ("error", "warning", "info")
        ):
            raise EngineError(f"policy returned a result podfit cannot read: {str(r)[:300]}")
        container = r.get("container")
        details = r.get("details")
        out.append(
            RegoResult(
                index=index,
                rule=r["rule"],
                severity=r["severity"],
                msg=r["message"],
                container=container if isinstance(container, str) else None,
                details=details if isinstance(details, Mapping) else {},
            )
        )
    return out


def worker_count(n_documents: int, env_var: str, min_per_worker: int, cpus: int | None = None) -> int:
    """Processes for ``n_documents``: ``env_var`` if set to a positive number, else one per CPU (at
    most 4) while each gets at least ``min_per_worker`` documents; never more than the documents."""
    configured = os.environ.get(env_var, "")
    if configured.isdigit() and int(configured) > 0:
        wanted = int(configured)
    else:
        wanted = min(cpus if cpus is not None else (os.cpu_count() or 1), 4, n_documents // min_per_worker)
    return max(1, min(wanted, n_documents))


def split_documents(documents: Sequence[T], n: int) -> list[tuple[int, Sequence[T]]]:
    """``documents`` in at most ``n`` contiguous parts of equal size (the last may be shorter), each
    with the index of its first document."""
    size = -(-len(documents) // n)
    return [(start, documents[start : start + size]) for start in range(0, len(documents), size)]


# The quantity memo (data.podfit.quantities, see policies/lib/quantity.rego): the library's own
# parser over a list of strings given as input; values beyond 2^53 are left out (parsed per use).
QUANTITY_MEMO = (
    "[{s: n | some s in input; n := data.podfit.lib.quantity.cpu_millicores(s); n < 9007199254740992},"
    " {s: n | some s in input; n := data.podfit.lib.quantity.memory_bytes(s); n < 9007199254740992}]"
)


_QUANTITY_KEYS = frozenset({"requests", "limits", "overhead"})


def quantity_strings(documents: Sequence[Any]) -> set[str]:
    """Every short string (or float, as its text) value of a mapping found under a ``requests``, ``limits`` or
    ``overhead`` key anywhere in the documents: the candidates for the quantity memo. A superset
    is harmless (each is parsed once), a missing string is parsed where it is used."""
    found: set[str] = set()
    stack: list[Any] = list(documents)
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        t = type(node)
        if t is dict or (t is not list and isinstance(node, Mapping)):
            for key, value in node.items():
                vt = type(value)
                if vt is str or vt is int or vt is bool or value is None:
                    continue
                if key in _QUANTITY_KEYS and (vt is dict or isinstance(value, Mapping)):
                    for v in value.values():
                        if type(v) is float:
                            v = repr(v)  # as normalise() passes it
                        if type(v) is str and len(v) <= 64:
                            found.add(v)
                push(value)
        elif t is list or t is tuple:
            extend(node)
    return found


def sort_results(results: list[RegoResult]) -> list[RegoResult]:
    """Results in a fixed order: document, rule, container, message, then details (as canonical
    JSON, written only for the results that tie on the rest: few do)."""
    import json

    keyed = sorted(((r.index, r.rule, r.container or "", r.msg), n, r) for n, r in enumerate(results))
    out: list[RegoResult] = []
    i = 0
    while i < len(keyed):
        j = i + 1
        while j < len(keyed) and keyed[j][0] == keyed[i][0]:
            j += 1
        if j - i == 1:
            out.append(keyed[i][2])
        else:
            out.extend(sorted((k[2] for k in keyed[i:j]), key=lambda r: json.dumps(r.details, sort_keys=True)))
        i = j
    return out
