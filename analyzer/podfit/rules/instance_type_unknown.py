"""## What it does
A node pool that an eksctl `ClusterConfig`, a Karpenter `NodePool` or a Cluster API
`MachineDeployment` (through its `AWSMachineTemplate`) declares names an instance type podfit does
not know, or requirements that no instance type it knows satisfies.

## Why it matters
podfit sizes a cloud node pool from its instance type: vCPUs, memory, GPUs and the pods the
service lets it run (EKS's max pods, GKE's and AKS's reservations). With a pool of unknown size
the packing rules cannot judge the cluster and skip it, so "no finding" would mean "not looked
at". The message names the nearest known types, as a misspelt type is the usual cause.

## Example
```yaml
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: shop, region: eu-west-1}
managedNodeGroups:
  - name: general
    instanceType: m5.lrage
```

## How to fix
Correct the instance type, or describe the pool in a platform profile (`nodePools` with the
type's `allocatable`), or give it as `--nodes PROVIDER:TYPE=COUNT` with a known type of the same
size. docs/platform.md lists the known types and their sources.

## Source
Amazon EC2, Google Compute Engine and Azure instance type specifications (docs/platform.md).

## Implementation
:func:`podfit.clusters.unknown_types` over every eksctl.io ClusterConfig, karpenter.sh NodePool and
cluster.x-k8s.io MachineDeployment among the unique objects; the table is :mod:`podfit.cloud`'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..clusters import is_eksctl, is_karpenter, is_machine_deployment, unknown_types
from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext

ID = "PF913"
SLUG = "instance-type-unknown"
TITLE = "Node pool of an unknown instance type"
SEVERITY = "info"
CATEGORY = "input"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    for obj in ctx.facts.unique_objects:
        if not (is_eksctl(obj) or is_karpenter(obj) or is_machine_deployment(obj)):
            continue
        for path, why in unknown_types(obj, ctx.facts.unique_objects):
            yield Finding(
                ID,
                f"{why}: the size of this node pool is unknown, so whether the workloads fit the cluster is not checked",
                obj.location_at(path),
                obj.ref,
                details={"kind": obj.kind},
            )
