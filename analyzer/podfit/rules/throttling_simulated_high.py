"""PF203 throttling-simulated-high: simulate CFS bandwidth control for containers PF202 flags.

Node logical CPUs: bare-metal runtime → the largest host (sockets × cores × threads); otherwise the
largest VM class (vCPUs) among the node pools (platform profile or cluster manifests). Threads: the
pod template's annotation ``podfit.io/threads`` (``"64"``, or per container ``"app=64,sidecar=4"``),
else the threshold ``default_threads`` (200: a Java app server's default worker pool). Only
containers that the static PF202 test flags (a CPU limit with fewer 5 ms slices per period than the
node has logical CPUs, and no exclusive cores from the static CPU Manager) are simulated, for
``seconds`` (default 2) simulated seconds; results are cached per (limit, CPUs, threads), so a
large corpus costs one simulation per distinct combination.

Thresholds (``.podfit.yaml`` ``thresholds: {PF203: {...}}``): ``score`` (default 50),
``default_threads`` (200), ``seconds`` (2).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from ..findings import Finding
from ..model import QOS_GUARANTEED, Container, Workload
from ..options import Option
from ..platform import node_logical_cpus as platform_node_cpus
from ..quantity import format_cpu
from ..throttle import Result, Scenario, simulate
from ..throttle import Workload as ThreadWorkload

ID = "PF203"
SLUG = "throttling-simulated-high"
TITLE = "High simulated CPU throttling"
SEVERITY = "warning"
REQUIRES: tuple[str, ...] = ("node-logical-cpus",)
OPTIONS: tuple[Option, ...] = (
    Option("score", "integer", 50, "Throttling score (0-100) above which the rule fires.", minimum=0),
    Option(
        "default-threads",
        "integer",
        200,
        "Threads assumed for a container without the podfit.io/threads annotation.",
        minimum=1,
    ),
    Option("seconds", "integer", 2, "Simulated seconds per container.", minimum=1),
)

THREADS_ANNOTATION = "podfit.io/threads"
DEFAULT_SCORE = 50
DEFAULT_SECONDS = 2
PERIOD_US = 100_000
SLICE_US = 5_000


def node_logical_cpus(ctx) -> int | None:
    """Logical CPUs of the largest node the workloads can land on, or None when unknown."""
    return platform_node_cpus(ctx.platform, ctx.node_pools)


def skip_reason(ctx) -> str | None:
    if ctx.platform.runtime == "vsphere-pods":
        return "runtime tkg or bare-metal (vSphere Pods have no node-wide CFS quota to simulate)"
    if node_logical_cpus(ctx) is None:
        return "node logical CPUs: node pools in the platform or a TanzuKubernetesCluster, or bare-metal hosts"
    return None


def needs_simulation(limit_millicores: int, cpus: int, period_us: int = PERIOD_US, slice_us: int = SLICE_US) -> bool:
    """PF202's static test: fewer whole slices per period than logical CPUs (no division)."""
    return limit_millicores * period_us < cpus * slice_us * 1000


def threads_for(workload: Workload, container: str, default: int) -> tuple[int, bool]:
    """(thread count, whether it came from the annotation). Malformed values fall back to the default."""
    raw = workload.pod.annotation(THREADS_ANNOTATION) or workload.obj.annotation(THREADS_ANNOTATION)
    if not raw:
        return default, False
    raw = raw.strip()
    if raw.isdigit():
        return max(1, int(raw)), True
    for part in raw.split(","):
        name, _, value = part.partition("=")
        if name.strip() == container and value.strip().isdigit():
            return max(1, int(value.strip())), True
    return default, False


@lru_cache(maxsize=4096)
def simulate_cached(limit_millicores: int, cpus: int, threads: int, seconds: int) -> Result:
    sc = Scenario(
        cpus=cpus,
        threads=threads,
        quota_us=Scenario.quota_for_limit(limit_millicores, PERIOD_US),
        period_us=PERIOD_US,
        seconds_us=seconds * 1_000_000,
        seed=0,
        workload=ThreadWorkload(),
    )
    return simulate(sc)


def _exclusive_cores(ctx, workload: Workload, limit: int) -> bool:
    return (
        ctx.platform.kubelet.cpu_manager_policy == "static"
        and workload.pod.qos_class == QOS_GUARANTEED
        and limit % 1000 == 0
    )


def _containers(workload: Workload) -> list[Container]:
    return list(workload.pod.containers) + [c for c in workload.pod.init_containers if c.sidecar]


def check(ctx) -> Iterator[Finding]:
    cpus = node_logical_cpus(ctx)
    if cpus is None:
        return
    threshold = int(ctx.option("score"))
    default_threads = int(ctx.option("default-threads"))
    seconds = int(ctx.option("seconds"))
    for w in ctx.workloads:
        for c in _containers(w):
            limit = c.resources.cpu_limit
            if not limit or limit <= 0 or _exclusive_cores(ctx, w, limit):
                continue
            if not needs_simulation(limit, cpus):
                continue
            threads, annotated = threads_for(w, c.name, default_threads)
            res = simulate_cached(limit, cpus, threads, seconds)
            if res.score < threshold:
                continue
            slices = limit * PERIOD_US // (SLICE_US * 1000)
            p99 = res.burst_delay_p99_ns
            thread_src = "" if annotated else f" (default; set {THREADS_ANNOTATION})"
            yield Finding(
                rule=ID,
                message=(
                    f"CPU limit {format_cpu(limit)} and {threads} threads"
                    f"{thread_src} on {cpus}-CPU nodes: simulated throttling score {res.score}/100 "
                    f"(threshold {threshold}); throttled {res.throttled_per_period_ns / 1e9:.2f} s per 100 ms "
                    f"period summed over CPUs, {slices} slices for {cpus} CPUs"
                    + (f", p99 burst delay {p99 / 1e6:.0f} ms" if p99 is not None else "")
                ),
                location=c.location,
                object=w.ref,
                container=c.name,
                details={
                    "score": res.score,
                    "threshold": threshold,
                    "cpu_limit": limit,
                    "node_logical_cpus": cpus,
                    "threads": threads,
                    "threads_from_annotation": annotated,
                    "slices": slices,
                    "nr_periods": res.nr_periods,
                    "nr_throttled": res.nr_throttled,
                    "throttled_per_period_s": round(res.throttled_per_period_ns / 1e9, 4),
                    "cpu_used_per_second": round(res.cpu_used_per_second, 4),
                    "burst_delay_p99_ms": None if p99 is None else round(p99 / 1e6, 3),
                    "simulated_seconds": seconds,
                },
            )
