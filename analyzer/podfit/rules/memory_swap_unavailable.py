"""## What it does
A KubeletConfiguration sets memorySwap.swapBehavior where the kubelet refuses it: with the NodeSwap
feature gate off, or a behaviour its version does not know.

## Why it matters
The kubelet validates its configuration when it starts and exits on memorySwap set with NodeSwap
off, and on a swapBehavior other than the ones its version accepts: NoSwap or LimitedSwap from
1.30 (UnlimitedSwap was dropped), LimitedSwap or UnlimitedSwap before (NoSwap did not exist yet).
The nodes do not join the cluster. NodeSwap is beta and off by default before 1.30, beta and on from
1.30, GA and locked on from 1.34.

## Example
```yaml
kind: KubeletConfiguration     # Kubernetes 1.31
failSwapOn: false
memorySwap: {swapBehavior: UnlimitedSwap}   # gone from 1.30
```

## How to fix
Write NoSwap or LimitedSwap (from 1.30), turn NodeSwap on (before 1.34), or remove memorySwap.

## Source
kubernetes pkg/kubelet/apis/config/validation/validation.go (ValidateKubeletConfiguration);
KEP-2400; kubernetes/kubernetes#122745 (NoSwap, UnlimitedSwap dropped, v1.30)

## Implementation
The checks of ``ValidateKubeletConfiguration`` on ``memorySwap``: with the ``NodeSwap`` gate off (as
the KubeletConfiguration's ``featureGates`` set it, else its default at the nodes' version) any
non-empty ``swapBehavior`` is refused; with it on, ``swapBehavior`` must be empty or one of the
values the version accepts (podfit.kubeversions ``swap-behaviour-no-swap``), spelled exactly so.
NodeSwap is locked on from 1.34: turning it off there is refused too. A ``swapBehavior`` that is
not a string does not decode into the kubelet's type: PF902 reports that. Not checked: swap on a
node with ``failSwapOn`` true (the kubelet exits too, but podfit does not know which nodes have
swap). What LimitedSwap does to containers is PF111's note.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .. import kubeversions
from ..facts import NODE_SWAP, is_kubelet_configuration
from ..findings import Finding
from ..kubelet_options import gate_on
from ..options import Option
from ..rule_context import RuleContext

ID = "PF214"
SLUG = "memory-swap-unavailable"
TITLE = "memorySwap setting the kubelet refuses"
SEVERITY = "error"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    version = ctx.facts.kubelet.version
    vtext = (
        f"Kubernetes {kubeversions.release_text(version)}"
        if version
        else "the latest Kubernetes (the version is not given)"
    )
    no_swap_era = kubeversions.behaviour("swap-behaviour-no-swap", version)
    accepted = ("NoSwap", "LimitedSwap") if no_swap_era else ("LimitedSwap", "UnlimitedSwap")
    for o in ctx.objects:
        if not is_kubelet_configuration(o):
            continue
        raw = o.raw
        swap = raw.get("memorySwap")
        behaviour = swap.get("swapBehavior") if isinstance(swap, Mapping) else None
        if not isinstance(behaviour, str) or not behaviour:
            continue  # nothing set (or not a string: PF902's)
        gates = raw.get("featureGates")
        if not isinstance(gates, Mapping):
            gates = {}
        step = kubeversions.stage_at(kubeversions.FEATURE_GATES[NODE_SWAP], version)
        problem = None
        if not gate_on(gates, NODE_SWAP, version):
            if step is not None and step.locked:
                problem = f"the feature gate {NODE_SWAP} is set off, but it is locked on in {vtext}"
            else:
                problem = (
                    f"memorySwap.swapBehavior {behaviour} is set with the feature gate {NODE_SWAP} off in {vtext}"
                    + (" (off by default)" if step is not None and not step.default else "")
                )
        elif behaviour not in accepted:
            problem = (
                f"memorySwap.swapBehavior {behaviour!r} is not one of {' or '.join(accepted)}, the values "
                f"{vtext} accepts"
            )
        if problem:
            yield Finding(
                ID,
                f"{problem}: the kubelet refuses to start",
                o.location_at(("memorySwap", "swapBehavior")),
                o.ref,
                details={"swap_behavior": behaviour, "kubernetes_version": ctx.facts.kubelet.version_text},
            )
