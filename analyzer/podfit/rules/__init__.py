"""Python rules: one module per rule, discovered automatically.

A rule module declares its identity and needs as constants, as yamllint's rule modules do::

    ID = "PF601"                       # the rule id (its prose is the module docstring)
    SLUG = "workload-does-not-fit"
    TITLE = "Workloads do not fit the node pools"
    SEVERITY = "error"                 # error | warning | info (see docs/rules.md)
    CATEGORY = "packing"               # one of podfit.catalogue.CATEGORIES
    REQUIRES = ("node-pools",)         # facts (podfit.facts.REQUIREMENTS) without which it is skipped
    OPTIONS = (Option("time-budget", "duration", 10, "..."),)
    SUPERSEDES = ("PF202",)            # optional: when this rule runs, these rules' findings are dropped
    REPLACES = ("PF302",)              # optional: these rules' findings on an object this rule reports are dropped

and ``check(ctx)`` yielding :class:`~podfit.findings.Finding`; optionally ``skip_reason(ctx)``
returning why it cannot run (a string) beyond its REQUIRES, or None. Options are read with
``ctx.option(name)``: the configured value, checked against the declaration, or its default.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pkgutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ..config import Config
from ..facts import Facts
from ..model import K8sObject, Workload
from ..options import Option
from ..platform import NodePool, Platform

__all__ = ["RuleContext", "python_rules", "LOADER_RULES"]

# Rules raised by the loader and the check pipeline rather than by a module here.
LOADER_RULES = frozenset({"PF901", "PF903", "PF904", "PF905", "PF907", "PF908", "PF909"})


@dataclass(frozen=True, eq=False)
class RuleContext:
    facts: Facts
    config: Config = field(default_factory=Config)
    rule_id: str = ""
    # what several rules derive from the same facts and config (the packing analysis), computed
    # by the first that asks; shared by every for_rule() context of one run
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def objects(self) -> tuple[K8sObject, ...]:
        return self.facts.objects

    @property
    def workloads(self) -> tuple[Workload, ...]:
        return self.facts.workloads

    @property
    def platform(self) -> Platform:
        return self.facts.platform

    @property
    def node_pools(self) -> tuple[NodePool, ...]:
        """Node pools from the platform profile plus those declared by cluster manifests in the input."""
        return self.facts.node_pools

    def option(self, name: str) -> Any:
        """The rule's option ``name``: configured (already checked against its declaration) or its default."""
        from ..catalogue import get_rule

        declared = get_rule(self.rule_id).option(name)
        if declared is None:
            raise KeyError(f"{self.rule_id} declares no option {name!r}")
        return self.config.thresholds.get(self.rule_id, {}).get(name, declared.default)

    def for_rule(self, rule_id: str) -> RuleContext:
        return RuleContext(self.facts, self.config, rule_id, self.memo)


class _Rules(Mapping[str, ModuleType]):
    """Rule id → module, each module imported when first asked for: a run imports only the rules
    whose required facts are present (and what they import: packing, throttle, vSphere)."""

    def __init__(self, modules: Mapping[str, str]) -> None:
        self._modules = dict(modules)

    def __getitem__(self, rule_id: str) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self._modules[rule_id]}")

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._modules  # without importing the module, as Mapping's would

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


@lru_cache(maxsize=1)
def python_rules() -> Mapping[str, ModuleType]:
    """Rule id → module, for every module in this package that defines ID and check()."""
    return _Rules({rule_id: d["module"] for rule_id, d in declarations().items()})


def _import_all() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
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


def _cache_file() -> Path:
    """Where the declarations are cached: keyed by the Python version and every module of the
    package (path, size, modification time), so an edited or upgraded podfit reads them afresh."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(sys.version.encode())
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{os.path.join(dirpath, name)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "podfit"
    return root / f"rules-{h.hexdigest()[:32]}.json"


@lru_cache(maxsize=1)
def declarations() -> Mapping[str, Mapping[str, Any]]:
    """Rule id → what its module declares (module name, SLUG, TITLE, SEVERITY, REQUIRES, OPTIONS),
    read from the cache when the package is unchanged since it was written; otherwise every rule
    module is imported (importing them all costs more than a one-file check's other work)."""
    cache = _cache_file()
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        data = {rule_id: _declared(module) for rule_id, module in _import_all().items()}
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, cache)
            for old in cache.parent.glob("rules-*.json"):
                if old != cache:
                    old.unlink(missing_ok=True)
        except OSError:
            pass  # no writable cache: the modules are imported each run
    return {
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
