"""## What it does
Some pods select nodes by a label that no node pool describes, so packing cannot tell where they may
run.

## Why it matters
A nodeSelector or required node affinity on a label the platform does not give (a custom label such
as node-pool or gpu) could match every pool or none. podfit leaves these pods out of packing rather
than guess: leaving pods out never turns a fit into a misfit, so PF601 stays a proof, but the
capacity these pods need is not counted.

## Example
```yaml
nodeSelector: {node-pool: batch}   # no node pool in the platform says it has node-pool=batch
```

## How to fix
Describe the label on the node pools that carry it (platform nodePools[].labels, the
TanzuKubernetesCluster node pool's labels, or `podfit pack --pool-label POOL:KEY=VALUE`).

## Source
Kubernetes scheduling (nodeSelector, node affinity); Performance Best Practices for Kubernetes with
VMware Tanzu (2021), packing
"""

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
CATEGORY = "packing"
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
