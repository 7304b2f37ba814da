"""Python rules: one module per rule, discovered automatically.

A rule module declares its identity and needs as constants, as yamllint's rule modules do::

    ID = "PF601"                       # the rule id (its prose is in catalogue.yaml)
    SLUG = "workload-does-not-fit"
    TITLE = "Workloads do not fit the node pools"
    SEVERITY = "error"                 # error | warning | info (see docs/rules.md)
    REQUIRES = ("node-pools",)         # facts (podfit.facts.REQUIREMENTS) without which it is skipped
    OPTIONS = (Option("time-budget", "duration", 10, "..."),)
    SUPERSEDES = ("PF202",)            # optional: when this rule runs, these rules' findings are dropped
    REPLACES = ("PF302",)              # optional: these rules' findings on an object this rule reports are dropped

and ``check(ctx)`` yielding :class:`~podfit.findings.Finding`; optionally ``skip_reason(ctx)``
returning why it cannot run (a string) beyond its REQUIRES, or None. Options are read with
``ctx.option(name)``: the configured value, checked against the declaration, or its default.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

from ..config import Config
from ..facts import Facts
from ..model import K8sObject, Workload
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
