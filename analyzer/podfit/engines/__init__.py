"""Rego engines: evaluate the policy library (``policies/``) over Kubernetes documents.

The engines give identical results (conformance tests hold them to it, and to plain conftest).
Every engine takes the documents as one batched input (:func:`batch_input`: a ``kind: List`` of
their objects, each tagged with its document's index) and one query for every rule's ``deny``:

* ``embedded`` runs in-process. Its fast path (:mod:`podfit.engines.wasm`) runs the policies as
  compiled by ``opa build -t wasm`` (committed as ``podfit/data/policies.wasm``) in wasmtime, one
  process per CPU on large inputs. When that module was not built from the policies being run (a
  custom ``PODFIT_POLICY_DIR``, an edited checkout before ``make wasm``), it runs them in regopy
  (Microsoft rego-cpp, :mod:`podfit.engines.embedded`), which is about 20 times slower.
* ``opa`` runs the real ``opa eval`` binary, one process per CPU on large inputs.

``get_engine("auto")`` picks the compiled module when it matches, else ``opa`` when the binary is
on PATH or in the project's ``.tools/bin``, else regopy. Any failure raises :class:`EngineError`
(the CLI exits 2 with its message).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

__all__ = [
    "EngineError",
    "RegoResult",
    "Engine",
    "get_engine",
    "policy_dir",
    "policy_modules",
    "deny_packages",
    "to_results",
    "batch_input",
    "batch_results",
    "DOCUMENT_KEY",
    "QUANTITY_MEMO",
    "quantity_strings",
    "worker_count",
]

ENGINE_NAMES = ("auto", "embedded", "opa")


class EngineError(Exception):
    """Any engine failure: missing binary or package, bad policy, crash. The CLI exits 2."""


@dataclass(frozen=True)
class RegoResult:
    index: int  # into the documents given to evaluate()
    rule: str
    msg: str
    container: str | None
    details: Mapping[str, Any]
    # the line of the container (or object) the result is about, when the engine resolved it
    line: int | None = None


class Engine(Protocol):
    name: str

    def evaluate(
        self, documents: Sequence[Mapping[str, Any]], platform_data: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> list[RegoResult]:
        """The results for the documents. ``locate(index, container)`` gives the line of a result;
        an engine may use it to fill ``RegoResult.line`` (the wasm engine's workers do)."""
        ...


def policy_dir() -> Path:
    """``policies/`` of the checkout, or the copy inside the installed wheel (``podfit._policies``)."""
    from ..paths import policies_dir

    return policies_dir()


_PACKAGE = re.compile(r"^package\s+([\w.]+)", re.M)
_DENY = re.compile(r"^deny\s+contains\b", re.M)


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


def deny_packages(modules: Mapping[str, str]) -> list[str]:
    """The packages that define ``deny`` (the rules), sorted."""
    packages = set()
    for source in modules.values():
        m = _PACKAGE.search(source)
        if m and _DENY.search(source):
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
    """Turn one document's deny results (a list of result objects) into :class:`RegoResult`s.

    ``msg`` loses the ``"PF101: "`` prefix the policies add for conftest users."""
    out = []
    for r in raw or ():
        if not isinstance(r, Mapping) or not isinstance(r.get("rule"), str) or not isinstance(r.get("msg"), str):
            raise EngineError(f"policy returned a result podfit cannot read: {r!r}")
        container = r.get("container")
        details = r.get("details")
        msg = r["msg"]
        # the policies prefix the rule id for conftest's output; podfit's reports show it anyway
        if msg.startswith(r["rule"] + ": "):
            msg = msg[len(r["rule"]) + 2 :]
        out.append(
            RegoResult(
                index=index,
                rule=r["rule"],
                msg=msg,
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


def _timeout() -> float:
    """Seconds an ``opa eval`` may take: ``PODFIT_OPA_TIMEOUT``, default 600."""
    raw = os.environ.get("PODFIT_OPA_TIMEOUT", "")
    try:
        value = float(raw) if raw else 600.0
    except ValueError:
        raise EngineError(f"PODFIT_OPA_TIMEOUT={raw!r} is not a number of seconds") from None
    return value if value > 0 else 600.0


def _compiled_engine(directory: Path) -> Engine | None:
    """The compiled WebAssembly module's engine when it was built from exactly these policies (and
    wasmtime is installed), else None."""
    from .wasm import WasmEngine

    try:
        return WasmEngine(directory)
    except EngineError:  # a custom or edited policy directory, or PODFIT_EMBEDDED_BACKEND=regopy
        return None


def embedded_engine(directory: Path) -> Engine:
    """The in-process engine: the compiled module (see _compiled_engine), else regopy."""
    from .embedded import EmbeddedEngine

    return _compiled_engine(directory) or EmbeddedEngine(directory)


def get_engine(name: str, policy_dir: Path | None = None) -> Engine:
    """``auto`` | ``embedded`` | ``opa``; raises :class:`EngineError` when the engine is unavailable."""
    from .opa import OpaEngine, find_opa

    if policy_dir is not None:
        directory = policy_dir
    elif os.environ.get("PODFIT_POLICY_DIR"):
        directory = Path(os.environ["PODFIT_POLICY_DIR"])
    else:
        directory = globals()["policy_dir"]()
    timeout = _timeout()
    if name == "auto":
        # fastest first: the compiled module in-process, then the opa binary, then regopy
        compiled = _compiled_engine(directory)
        if compiled is not None:
            return compiled
        binary = find_opa()
        if binary is not None:
            return OpaEngine(directory, binary, timeout)
        name = "embedded"
    if name == "embedded":
        return embedded_engine(directory)
    if name == "opa":
        binary = find_opa()
        if binary is None:
            where = f"at PODFIT_OPA={os.environ['PODFIT_OPA']}" if os.environ.get("PODFIT_OPA") else "on PATH or in .tools/bin"
            raise EngineError(f"the opa binary was not found {where} (run `make tools`)")
        return OpaEngine(directory, binary, timeout)
    raise EngineError(f"unknown engine {name!r} (choose from {', '.join(ENGINE_NAMES)})")
