"""PF605: packing cannot tell where some pods may run, because their node selection depends on a
label no node pool describes; they are left out of packing (never a proof of misfit)."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..packing.rules_support import (
    per_cluster,
    skip_reason,  # noqa: F401 - the packing rules' shared test
)
from ..rule_context import RuleContext

ID = "PF605"
SLUG = "scheduling-unknown"
TITLE = "Node selection on labels the platform does not describe"
SEVERITY = "info"
REQUIRES: tuple[str, ...] = ("node-pools",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    for facts in per_cluster(ctx, analyse=False):
        inputs = facts.inputs
        for group in inputs.unknown:
            workloads = [w for name in group.pods if (w := inputs.workloads.get(name)) is not None]
            if not workloads:
                continue
            first = min(workloads, key=lambda w: w.location)
            yield Finding(
                ID,
                facts.prefix + group.describe() + "; they are left out of packing",
                first.location,
                first.ref,
                details=facts.details({"labels": list(group.keys), "pods": list(group.pods)}),
            )
