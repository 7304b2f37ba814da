"""## What it does
A KubeletConfiguration lists a Topology Manager policy option the kubelet refuses for its version
and feature gates, or a value it cannot parse.

## Why it matters
The kubelet checks topologyManagerPolicyOptions when its Topology Manager starts and exits on an
unknown option (one newer than its version included), an alpha option without
TopologyManagerPolicyAlphaOptions, a beta option with TopologyManagerPolicyBetaOptions off, a
prefer-closest-numa-nodes that is not a boolean, and a max-allowable-numa-nodes that is not a whole
number of at least 8. Status by version: prefer-closest-numa-nodes GA 1.32; max-allowable-numa-nodes
beta 1.31, GA 1.35. No node of the pool joins the cluster.

## Example
```yaml
kind: KubeletConfiguration     # Kubernetes 1.30
topologyManagerPolicy: restricted
topologyManagerPolicyOptions: {max-allowable-numa-nodes: "16"}   # from 1.31
```

## How to fix
Remove the option, enable its feature gate, write a value the kubelet parses ("true", or a whole
number from 8), or upgrade the nodes to a version where the option exists.

## Source
kubernetes pkg/kubelet/cm/topologymanager/policy_options.go (CheckPolicyOptionAvailable,
NewPolicyOptions), topology_manager.go (NewManager), cmd/kubelet/app/server.go; KEP-3545, KEP-4622

## Implementation
The same check as PF207's for the CPU Manager (podfit.kubelet_options, stages from
podfit.kubeversions ``TOPOLOGY_MANAGER_OPTIONS``). With the ``TopologyManagerPolicyOptions`` gate
off the kubelet refuses any ``topologyManagerPolicyOptions`` (cmd/kubelet/app/server.go), whatever
the policy. Option names and values are checked by the Topology Manager only with a policy other
than ``none`` (``NewManager`` returns early on ``none`` since 1.27): then an unknown name, an alpha
option without ``TopologyManagerPolicyAlphaOptions`` (off by default), a beta option with
``TopologyManagerPolicyBetaOptions`` off, ``prefer-closest-numa-nodes`` not a boolean
(``strconv.ParseBool``) and ``max-allowable-numa-nodes`` not an integer (``strconv.Atoi``: an
optional sign and digits) or below 8 (``defaultMaxAllowableNUMANodes``) each stop the kubelet. A
value that is not a string (an unquoted YAML number or boolean) does not decode into the kubelet's
map of strings, so the file does not load: PF902 reports that. The version comes from the platform
(``spec.kubelet.kubernetesVersion``) or the cluster manifests; without it the latest stage is
assumed and the finding says so. PF206 stays silent where this rule finds
``max-allowable-numa-nodes`` refused: the kubelet does not start for this reason, whatever the
hosts' NUMA nodes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..findings import Finding
from ..kubelet_options import TOPOLOGY_MANAGER
from ..options import Option
from ..rule_context import RuleContext
from ._kubelet_config import configured_options, refusal_finding

ID = "PF213"
SLUG = "topology-manager-option-unavailable"
TITLE = "Topology Manager policy option the kubelet refuses"
SEVERITY = "error"
CATEGORY = "numa"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    def policy(raw: Mapping[str, Any]) -> str:
        return str(raw.get("topologyManagerPolicy") or "none")

    # with the policy none the kubelet checks neither the options' names nor their values
    for o, raw, found, _ in configured_options(ctx, TOPOLOGY_MANAGER, lambda raw: policy(raw) != "none"):
        for r in found:
            yield refusal_finding(ID, ctx, o, TOPOLOGY_MANAGER, r, topology_manager_policy=policy(raw))
