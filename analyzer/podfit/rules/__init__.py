"""Python rules: one module per rule, discovered automatically.

A rule module defines ``ID`` (a catalogue id with ``engine: python``), ``check(ctx)`` yielding
:class:`~podfit.findings.Finding`, and optionally ``skip_reason(ctx)`` returning the missing
platform fact (a string) when the rule cannot run, or None. Severity comes from the catalogue.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import ModuleType
from typing import Any, Mapping

from ..clusters import all_node_pools
from ..config import Config
from ..model import K8sObject, Workload
from ..platform import NodePool, Platform

__all__ = ["RuleContext", "python_rules", "LOADER_RULES"]

# Rules raised by the loader and the check pipeline rather than by a module here.
LOADER_RULES = frozenset({"PF901", "PF903", "PF904", "PF905", "PF907", "PF908", "PF909"})


@dataclass(frozen=True, eq=False)
class RuleContext:
    objects: tuple[K8sObject, ...]
    workloads: tuple[Workload, ...]
    platform: Platform
    config: Config = field(default_factory=Config)
    rule_id: str = ""

    def threshold(self, name: str, default: Any) -> Any:
        return self.config.threshold(self.rule_id, name, default)

    def for_rule(self, rule_id: str) -> "RuleContext":
        ctx = RuleContext(self.objects, self.workloads, self.platform, self.config, rule_id)
        # share cached derived values
        ctx.__dict__.update({k: v for k, v in self.__dict__.items() if k in ("node_pools",)})
        return ctx

    @cached_property
    def node_pools(self) -> tuple[NodePool, ...]:
        """Node pools from the platform profile plus those declared by cluster manifests in the input."""
        return all_node_pools(self.platform, self.objects)


@lru_cache(maxsize=1)
def python_rules() -> Mapping[str, ModuleType]:
    """Rule id → module, for every module in this package that defines ID and check()."""
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
