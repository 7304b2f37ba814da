"""The Prometheus queries behind ``podfit usage export``, and the bundle they make.

Each kind of :data:`podfit.usage.KINDS` has one query. CPU is the 5-minute rate of
``container_cpu_usage_seconds_total`` summed per container; memory the working set; the CFS
periods and throttled periods the raw counters (their increase over the window is taken from the
samples, across restarts); the termination reasons kube-state-metrics' gauge, at its maximum over
the window (1 for every reason a container ended with). Range queries run over ``[start, end]`` at
``step``; the termination reasons are one instant query at ``end``. The bundle (``kind:
PodfitUsage``) keeps each query beside its response, so ``check --usage`` knows what it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["queries", "export_bundle"]

_CONTAINER = 'container!="",container!="POD"'


def _selector(namespace: str | None) -> str:
    return _CONTAINER + (f',namespace="{namespace}"' if namespace else "")


def queries(namespace: str | None, window_s: int) -> dict[str, tuple[str, bool]]:
    """Kind → (PromQL, range query?)."""
    sel = _selector(namespace)
    ns = f'{{namespace="{namespace}"}}' if namespace else ""
    return {
        "cpu": (f"sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{{{sel}}}[5m]))", True),
        "memory": (f"container_memory_working_set_bytes{{{sel}}}", True),
        "periods": (f"container_cpu_cfs_periods_total{{{sel}}}", True),
        "throttled": (f"container_cpu_cfs_throttled_periods_total{{{sel}}}", True),
        "terminated": (f"max_over_time(kube_pod_container_status_last_terminated_reason{ns}[{window_s}s])", False),
    }


def export_bundle(
    get: Callable[[str, Mapping[str, str]], Any],
    start: int,
    end: int,
    step: int,
    namespace: str | None = None,
) -> dict[str, Any]:
    """Run every query through ``get(api_path, params) -> parsed JSON`` and bundle the answers."""
    out: dict[str, Any] = {}
    for kind, (q, ranged) in queries(namespace, end - start).items():
        if ranged:
            params = {"query": q, "start": str(start), "end": str(end), "step": str(step)}
            response = get("/api/v1/query_range", params)
        else:
            response = get("/api/v1/query", {"query": q, "time": str(end)})
        out[kind] = {"query": q, "response": response}
    return {
        "apiVersion": "podfit.io/v1alpha1",
        "kind": "PodfitUsage",
        "window": {"start": start, "end": end, "step": step},
        "queries": out,
    }
