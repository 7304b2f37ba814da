"""What a Python rule is given: the facts, the configuration and its own options (see :mod:`podfit.rules`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .catalogue import get_rule
from .config import Config
from .facts import Facts
from .model import K8sObject, Workload
from .platform import NodePool, Platform

__all__ = ["RuleContext"]


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
        declared = get_rule(self.rule_id).option(name)
        if declared is None:
            raise KeyError(f"{self.rule_id} declares no option {name!r}")
        return self.config.thresholds.get(self.rule_id, {}).get(name, declared.default)

    def for_rule(self, rule_id: str) -> RuleContext:
        return RuleContext(self.facts, self.config, rule_id, self.memo)
