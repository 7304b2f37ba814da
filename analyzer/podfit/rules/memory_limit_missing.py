"""## What it does
A container sets a memory request but no memory limit, after the namespace's LimitRange defaults.

## Why it matters
Memory cannot be throttled. A container without a memory limit takes node memory until the node runs
short, and then the kubelet evicts, or the kernel's OOM killer kills, whichever pod it picks: often a
neighbour that stayed within its request. The scheduler placed the pod by its request, so every pod on
that node is exposed to the gap between the request and whatever the container grows to.

## Example
```yaml
resources:
  requests: {cpu: 250m, memory: 256Mi}
  limits: {cpu: "1"}
```

## How to fix
Set resources.limits.memory at the container's measured peak plus a margin (PF107 and PF108 check it
against measured usage), or, for a pod that needs memory limits to stay Guaranteed, equal to the
request. A pod-level memory limit (spec.resources) bounds its containers together and is enough.

## Source
Kubernetes, "Resource Management for Pods and Containers" (memory limits are enforced by the kernel's
OOM killer, not throttled) and "Node-pressure Eviction" (Burstable pods using more than they request
are evicted first); Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying
container resource requests and limits"

## Implementation
A BestEffort pod (no request or limit anywhere) is PF105's alone, and a container with no memory
request at all PF102's: one cause, one finding. One-shot
init containers are left out unless ``init-containers`` is on (they end before the app starts and
are bounded by the pod's effective limit only when the app containers are). Pods that run as
vSphere Pods are left out: their CRX caps memory (PF402, PF403).

Swap (NodeSwap, GA 1.34): with ``memorySwap.swapBehavior: LimitedSwap`` in the KubeletConfiguration
(the default, NoSwap, lets no container swap), the kubelet gives each container of a Burstable pod
whose memory request differs from its limit (a container without a limit included) a swap limit:
its request's share of the node's swap (request / node memory × swap), on nodes with swap and
cgroup v2, except in critical pods (``priorityClassName`` system-node-critical or
system-cluster-critical) (kuberuntime_container_linux.go ``GetContainerSwapBehavior``,
``ConfigureLimitedSwap``). Such a container pages out up to that share before the node runs
short: slower, not bounded, so the finding stays a warning and says so. With a memory limit set,
the same container swaps at its limit before the OOM killer kills it: a limit below its working set
then shows as latency (major page faults), not as OOMKilled; set the limit at the measured peak.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..findings import Finding
from ..model import QOS_BEST_EFFORT, Workload, template_path
from ..options import Option
from ..quantity import format_memory
from ..rule_context import RuleContext

ID = "PF111"
SLUG = "memory-limit-missing"
TITLE = "Memory limit missing"
SEVERITY = "warning"
CATEGORY = "resources"
REQUIRES: tuple[str, ...] = ()
# the findings that, on the same container (or its whole pod), leave this one unreported (one cause,
# one finding): a container that requests no memory is PF102's, a BestEffort pod PF105's; `fix`
# treats this one as shown by fixing them, not brought
MASKED_BY: tuple[str, ...] = ("PF102", "PF105")
OPTIONS: tuple[Option, ...] = (
    Option("init-containers", "boolean", False, "Also report one-shot init containers without a memory limit."),
)


# pods the kubelet never lets swap (types.IsCriticalPod: their priority is a system-critical one)
_CRITICAL = ("system-node-critical", "system-cluster-critical")


def _critical(w: Workload, ctx: RuleContext) -> bool:
    node: Any = w.obj.raw
    for key in template_path(w.obj.ref.api_version, w.obj.kind, ctx.facts.workload_kinds) or ():
        node = node.get(key) if isinstance(node, dict) else None
    spec = node.get("spec") if isinstance(node, dict) else None
    return isinstance(spec, dict) and spec.get("priorityClassName") in _CRITICAL


def check(ctx: RuleContext) -> Iterator[Finding]:
    with_init = bool(ctx.option("init-containers"))
    limited_swap = ctx.facts.kubelet.limited_swap
    for w in ctx.workloads:
        pod = w.pod
        if pod.qos_class == QOS_BEST_EFFORT or pod.pod_level("memory_limit") is not None:
            continue
        if ctx.facts.runs_as_vsphere_pod(w):
            continue
        swaps = limited_swap and not _critical(w, ctx)
        for c in pod.all_containers:
            if c.init and not c.sidecar and not with_init:
                continue
            request = c.resources.memory_request
            if c.resources.memory_limit is not None or request is None:
                continue  # no memory request at all is PF102's (one cause, one finding)
            word = "sidecar" if c.sidecar else "init container" if c.init else "container"
            details = {"memory_request": request, "init_container": c.init and not c.sidecar, "sidecar": c.sidecar}
            swap = ""
            if swaps:
                details["limited_swap"] = True
                swap = (
                    " (memorySwap LimitedSwap: on nodes with swap it first pages out up to its request's share "
                    "of the swap, which slows it and its neighbours without bounding it)"
                )
            yield Finding(
                ID,
                f'{word} "{c.name}" requests {format_memory(request)} of memory and sets no memory limit: it '
                "can take node memory until the node runs short and the kubelet evicts, or the OOM killer "
                f"kills, a pod of its choosing{swap}",
                c.location,
                w.ref,
                c.name,
                details,
            )
