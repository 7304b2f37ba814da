"""What the usage rules (PF107-PF110, PF209) share: each measured container of the manifests, and
how a message quotes the measurement."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Container, Workload
from ..options import Option
from ..quantity import format_cpu, format_memory
from ..usage import ContainerUsage, Stats
from ..words import plural

RESOURCES = (("cpu", "CPU"), ("memory", "memory"))


MIN_SAMPLES = 10  # samples before a percentile is trusted: one kubectl top snapshot is one per pod


def min_samples_option(description: str) -> Option:
    """The ``min-samples`` option of the rules that trust a measurement only over enough samples."""
    return Option("min-samples", "integer", MIN_SAMPLES, description, minimum=1)


def measured(ctx) -> Iterator[tuple[Workload, Container, ContainerUsage]]:
    """Every container (app containers and sidecars; one-shot init containers are not measured
    as they run) of the run's workloads that has measured usage."""
    usage = ctx.facts.usage
    if usage is None:
        return
    for w in ctx.facts.unique_workloads:
        for c in w.pod.all_containers:
            if c.init and not c.sidecar:
                continue
            u = usage.of(w, c.name)
            if u is not None:
                yield w, c, u


def measured_values(
    ctx, field: str, min_samples: int = 0
) -> Iterator[tuple[Workload, Container, ContainerUsage, str, str, Stats, int]]:
    """``(workload, container, usage, resource, word, stats, value)`` for each measured container and
    resource that has both a measurement of at least ``min_samples`` samples and a set ``field``
    (``"request"`` or ``"limit"``)."""
    for w, c, u in measured(ctx):
        for res, word in RESOURCES:
            s = getattr(u, res)
            value = getattr(c.resources, f"{res}_{field}")
            if s is None or value is None or s.samples < min_samples:
                continue
            yield w, c, u, res, word, s, value


def amount(resource: str, value: int) -> str:
    return format_cpu(value) if resource == "cpu" else format_memory(value, exact=False)


def evidence(resource: str, s: Stats, u: ContainerUsage) -> str:
    """``p50 200m, p95 450m, p99 600m, max 700m over 7d, 288 samples, 3 pods``."""
    q = [f"p{p} {amount(resource, getattr(s, f'p{p}'))}" for p in (50, 95, 99)]
    pods = f", {plural(len(u.pods), 'pod')}"
    when = f"over {u.window}" if u.window_ms is not None else "in one kubectl top snapshot"
    samples = f", {plural(s.samples, 'sample')}"
    return ", ".join(q) + f", max {amount(resource, s.max)} {when}{samples}{pods}"


def details(resource: str, s: Stats, u: ContainerUsage, **extra) -> dict:
    return {
        "resource": resource,
        "p50": s.p50,
        "p95": s.p95,
        "p99": s.p99,
        "max": s.max,
        "samples": s.samples,
        "pods": list(u.pods),
        "window_ms": list(u.window_ms) if u.window_ms else None,
        "sources": list(u.sources),
        **extra,
    }
