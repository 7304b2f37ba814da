"""The Python rules: which modules of :mod:`podfit.rules` define a rule, and what each declares.

The declarations are cached in ``$XDG_CACHE_HOME/podfit`` (see :func:`declarations`), so that a
run imports only the rule modules whose rules run; :func:`cached` keeps other values derived from
the installation's own files there too (the merged rule catalogue).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from .cachedir import cache_dir, read_trusted, write_private
from .options import Option

__all__ = ["python_rules", "declarations", "cached", "installation_key", "LOADER_RULES"]

PACKAGE = "podfit.rules"
_RULES_DIR = Path(__file__).resolve().parent / "rules"
MAX_CACHE_BYTES = 64 * 2**20  # a cache file read back (the catalogue is about 75 kB)

# Rules raised by the loader and the check pipeline rather than by a rule module.
LOADER_RULES = frozenset({"PF901", "PF903", "PF904", "PF905", "PF907", "PF908", "PF909"})


class _Rules(Mapping[str, ModuleType]):
    """Rule id → module, each module imported when first asked for: a run imports only the rules
    whose required facts are present (and what they import: packing, throttle, vSphere)."""

    def __init__(self, modules: Mapping[str, str]) -> None:
        self._modules = dict(modules)

    def __getitem__(self, rule_id: str) -> ModuleType:
        return importlib.import_module(f"{PACKAGE}.{self._modules[rule_id]}")

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._modules  # without importing the module, as Mapping's would

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


@lru_cache(maxsize=1)
def python_rules() -> Mapping[str, ModuleType]:
    """Rule id → module, for every module of :mod:`podfit.rules` that defines ID and check()."""
    return _Rules({rule_id: d["module"] for rule_id, d in declarations().items()})


def _import_all() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules([str(_RULES_DIR)]), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        rule_id = getattr(module, "ID", None)
        if rule_id and callable(getattr(module, "check", None)):
            if rule_id in found:
                raise RuntimeError(f"rule {rule_id} defined twice: {found[rule_id].__name__}, {module.__name__}")
            found[rule_id] = module
    return dict(sorted(found.items()))


def _declared(module: ModuleType) -> dict[str, Any]:
    return {
        "module": module.__name__.rsplit(".", 1)[1],
        "slug": getattr(module, "SLUG", None),
        "title": getattr(module, "TITLE", None),
        "severity": getattr(module, "SEVERITY", None),
        "requires": list(getattr(module, "REQUIRES", ())),
        "options": [asdict(o) for o in getattr(module, "OPTIONS", ())],
    }


@lru_cache(maxsize=1)
def installation_key() -> tuple[str, str]:
    """(place, version) naming what this installation derives from its own files, for the caches
    of :mod:`podfit.cachedir`: the place is the
    package's path, the version a digest of the Python version and every file of the package and
    of the policies it runs (path, size, modification time), so that an edited or upgraded podfit
    reads its rules afresh and two checkouts do not evict each other's caches."""
    from .paths import policies_dir

    package = Path(__file__).resolve().parent
    place = hashlib.sha256(str(package).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    h = hashlib.sha256(sys.version.encode())
    for root in (package, policies_dir()):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".rego", ".yaml")):
                    st = os.stat(os.path.join(dirpath, name))
                    h.update(f"{os.path.join(dirpath, name)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return place, h.hexdigest()[:32]


def cached(kind: str, build: Callable[[], Any]) -> Any:
    """``build()``'s JSON-able value, read from the private cache file of this installation
    (:func:`installation_key`) when it was written before; otherwise built and written, and the
    same kind's files of older versions of this installation removed. Without a private cache
    directory, or with an unreadable cache file, the value is built."""
    root = cache_dir()
    if root is None:
        return build()
    place, version = installation_key()
    cache = root / f"{kind}-{place}-{version}.json"
    data = read_trusted(cache, MAX_CACHE_BYTES)
    if data is not None:
        try:
            return json.loads(data)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
            pass
    value = build()
    try:
        write_private(cache, json.dumps(value).encode("utf-8"))
        for old in root.glob(f"{kind}-{place}-*.json"):
            if old != cache:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # no writable cache: built again next run
    return value


@lru_cache(maxsize=1)
def declarations() -> Mapping[str, Mapping[str, Any]]:
    """Rule id → what its module declares (module name, SLUG, TITLE, SEVERITY, REQUIRES, OPTIONS),
    read from the cache when the package is unchanged since it was written; otherwise every rule
    module is imported (measured: a one-file check that imports all 29 takes about 40 ms more CPU,
    a fifth of its time, than one that imports only the 12 whose rules run)."""
    data = cached("rules", lambda: {rule_id: _declared(module) for rule_id, module in _import_all().items()})
    read = _from_json(data)
    if read is None:  # a cache file of another shape: built afresh
        read = _from_json({rule_id: _declared(module) for rule_id, module in _import_all().items()})
        assert read is not None
    return read


def _from_json(data: Any) -> dict[str, dict[str, Any]] | None:
    """The declarations as :func:`declarations` gives them, from their JSON form; None for a value
    of another shape (a rule module's name that is not one of the package's, a field of another
    type)."""
    if not isinstance(data, dict) or not data:
        return None
    modules = {info.name for info in pkgutil.iter_modules([str(_RULES_DIR)])}
    try:
        out = {
            rule_id: {
                **d,
                "requires": tuple(d["requires"]),
                "options": tuple(
                    Option(**{**o, "choices": tuple(o["choices"]) if o["choices"] is not None else None})
                    for o in d["options"]
                ),
            }
            for rule_id, d in data.items()
        }
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    ok = all(
        isinstance(d["module"], str) and d["module"] in modules and all(isinstance(r, str) for r in d["requires"])
        for d in out.values()
    )
    return out if ok else None
