"""Measured usage (``--usage``) beside packing: the burst a pod was seen to take, and what the
measured pods use against what they request. Packing itself stays on requests (the scheduler packs
requests); only the burst headroom and the sizing claims read the measurement. Pure."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from ..model import Workload
from ..usage import ContainerUsage, Stats, UsageFacts
from ..words import plural
from .adapter import PackInputs

__all__ = ["MeasuredTotals", "pod_stat", "with_measured_peaks", "measured_totals", "measured_json", "measured_text"]


def _running(w: Workload):
    """The containers that run beside each other for the pod's life: app containers and sidecars."""
    return [c for c in w.pod.all_containers if not c.init or c.sidecar]


def pod_stat(usage: UsageFacts, w: Workload, resource: str, stat: str) -> int | None:
    """One pod's ``stat`` (``max``, ``p95``) of ``resource`` (``cpu``, ``memory``): the sum over its
    running containers; None unless every one of them was measured. A sum of per-container
    statistics: an upper bound of the pod's, as its containers need not peak together."""
    total = 0
    for c in _running(w):
        u: ContainerUsage | None = usage.of(w, c.name)
        s: Stats | None = getattr(u, resource) if u is not None else None
        if s is None:
            return None
        total += getattr(s, stat)
    return total


def with_measured_peaks(inputs: PackInputs, usage: UsageFacts | None) -> PackInputs:
    """``inputs`` with each fully measured pod type's measured peak (CPU and memory), which the
    burst headroom counts in place of the limit."""
    if usage is None or not usage.containers:
        return inputs
    pods = []
    for p in inputs.pods:
        w = inputs.workloads.get(p.name)
        if w is None:
            pods.append(p)
            continue
        pods.append(
            replace(p, cpu_peak=pod_stat(usage, w, "cpu", "max"), memory_peak=pod_stat(usage, w, "memory", "max"))
        )
    return replace(inputs, pods=tuple(pods))


@dataclass(frozen=True)
class MeasuredTotals:
    """Over the pods measured for a resource (replicas counted): their requests and their p95."""

    pods: int
    requests: int
    p95: int
    unmeasured_pods: int


def measured_totals(inputs: PackInputs, usage: UsageFacts, resource: str) -> MeasuredTotals:
    """The measured p95 of ``resource`` summed over the packed pods measured for it, beside their
    requests (the pods' per-pod sums times their replicas)."""
    pods = requests = p95 = unmeasured = 0
    for p in inputs.pods:
        w = inputs.workloads.get(p.name)
        v = pod_stat(usage, w, resource, "p95") if w is not None else None
        if v is None:
            unmeasured += p.count
            continue
        pods += p.count
        requests += (p.cpu if resource == "cpu" else p.memory) * p.count
        p95 += v * p.count
    return MeasuredTotals(pods, requests, p95, unmeasured)


def measured_json(inputs: PackInputs, usage: UsageFacts) -> dict:
    """Per resource: the measured pods (replicas counted), their requests and their summed p95, and
    the packed pods not measured."""
    out = {}
    for resource in ("cpu", "memory"):
        t = measured_totals(inputs, usage, resource)
        out[resource] = {"pods": t.pods, "requests": t.requests, "p95": t.p95, "unmeasured_pods": t.unmeasured_pods}
    return out


def measured_text(inputs: PackInputs, usage: UsageFacts) -> str:
    """``Measured (4 of 6 pods): CPU p95 1600m of 6800m requested (23%); …`` and a newline."""
    from ..quantity import format_cpu, format_memory

    parts = []
    for resource, label, fmt in (("cpu", "CPU", format_cpu), ("memory", "memory", partial(format_memory, exact=False))):
        t = measured_totals(inputs, usage, resource)
        total = t.pods + t.unmeasured_pods
        if not t.pods:
            parts.append(f"{label} not measured")
            continue
        share = f" ({100 * t.p95 // t.requests}%)" if t.requests else ""
        of = plural(t.pods, "pod") if not t.unmeasured_pods else f"{t.pods} of {plural(total, 'pod')}"
        parts.append(f"{label} p95 {fmt(t.p95)} of {fmt(t.requests)} requested{share}, {of}")
    return "Measured usage (summed per-container p95, packing still by requests): " + "; ".join(parts) + "\n"
