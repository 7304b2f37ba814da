"""## What it does
The simulated CFS throttling score of a container is above the threshold on the node size it lands
on.

## Why it matters
PF202's screen says a limit could be throttled; PF203 says how much. It simulates the kernel's CFS
bandwidth control with the container's limit, its threads (podfit.io/threads), their average CPU
demand (with check --usage, the p95 of the measured CPU rate: the busy hours' demand; else
podfit.io/cpu-demand, else the CPU request) and CPU work per burst (podfit.io/cpu-burst, else 2 ms)
on the logical CPUs of the largest node the pod may land on (as for PF202), and reports the
throttled periods, the p99 latency a burst gains (where at least 50 bursts completed), and the
throttled time per period. When PF203 runs, PF202's findings are left out: one cause, one finding.
A finding is a warning when the load it simulates is measured (--usage) or declared (the threads or
the demand annotated); on defaults alone it is info, and its message starts with what it assumed,
what to set, and the `podfit throttle` command that simulates the real load. Where the
KubeletConfiguration turns CFS quota off (cpuCFSQuota: false) nothing is throttled: one info says so.

## Example
```yaml
resources: {requests: {cpu: 1500m}, limits: {cpu: 1500m}}   # 200 threads on 256 CPUs
```

## How to fix
Apply one of the changes the finding names (each brings the score under the threshold with the same
demand): the CPU limit it gives, no CPU limit, or whole CPUs in a Guaranteed pod with the static CPU
Manager. If the assumed demand is wrong, declare podfit.io/threads, podfit.io/cpu-demand and
podfit.io/cpu-burst instead.

## Source
Kubernetes CPU limits vs bare metal study (2021); kernel/sched/fair.c; kubernetes pkg/features
(DisableCPUQuotaWithExclusiveCPUs)

## Implementation
PF202 (Rego) is the static screen: a CPU limit with fewer 5 ms slices per period than the node has
logical CPUs. PF203 simulates CFS bandwidth control for every container that screen flags and
reports those whose throttling score reaches the threshold; when PF203 runs, PF202's findings are
dropped (``SUPERSEDES``): one cause, one finding.

What is simulated, per container (each value from an annotation on the pod template or the object,
``"value"`` for every container or ``"app=value,sidecar=value"`` per container, else the default the
finding prints):

* threads: ``podfit.io/threads`` (default: option ``default-threads``, 200, a Java server's pool);
* average CPU demand: with measured usage (``check --usage``), the p95 of the container's measured
  CPU rate (see :data:`MEASURED_PERCENTILE`); else ``podfit.io/cpu-demand``, a CPU quantity such
  as ``800m``; else the container's CPU request (what it declares it uses), else its limit;
* CPU work per burst: ``podfit.io/cpu-burst``, a duration such as ``2ms`` (default 2 ms).

The threads run request bursts (exponential, of that mean) and sleep between them so that together
they use the demand if nothing holds them back. Node logical CPUs: the largest host on bare metal,
else the largest VM class of the node pools the pod may land on (the facts stage's
``workload_node_logical_cpus``). Not simulated: vSphere Pods, pods that run only on
Windows nodes (no CFS quota there), and containers the static CPU Manager gives exclusive CPUs
(Guaranteed pod, whole CPUs): from Kubernetes 1.33 (DisableCPUQuotaWithExclusiveCPUs, on by default)
they have no CFS quota, before it their quota covers exactly their pinned CPUs.

The finding names what it assumed, what it simulated (throttled periods, p99 latency a burst gains
over the same workload without a limit, throttled time per period summed over CPUs and per CPU the
threads can use) and the changes that bring the score under the threshold: the smallest CPU limit
(100m steps, request unchanged), removing the limit, or whole CPUs with the static CPU Manager.
Each scenario runs with seeds 0-4 and the median run is rated (the range is in the message and
details), with the calibrated CPU cost of a wake-up (``--wakeup-cost`` of ``podfit throttle``, 20 µs)
and the calibration table's nearest row and error in the details. The CFS period is the kubelet's
``cpuCFSQuotaPeriod`` (from a KubeletConfiguration among the inputs, with the
CustomCPUCFSQuotaPeriod gate on: without it the kubelet refuses any other period and does not start,
which PF203 reports as an error; default 100 ms): the quota is the limit over that period, the screen, the simulation, the
suggested limit and the ``podfit throttle`` command (``--period``) all use it. Results are cached
per (limit, CPUs, threads, demand, burst, seconds, period, seed).

Thresholds (``.podfit.yaml`` ``thresholds: {PF203: {...}}``): ``score`` (50), ``default-threads``
(200), ``seconds`` (2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

from ..facts import (
    CFS_PERIOD_US,
    CFS_SLICE_US,
    CUSTOM_CFS_PERIOD_GATE,
    cfs_screen_limit,
    cfs_slices,
    is_kubelet_configuration,
)
from ..findings import Finding
from ..model import Container, Workload
from ..options import Option
from ..quantity import format_cpu, parse_cpu
from ..throttle import Result, simulate
from ..throttle.calibration import nearest
from ..throttle.scenario import Scenario
from ..throttle.score import median_run
from ..throttle.sweep import container_scenario
from ..usage import ContainerUsage, UsageFacts
from ..words import plural

ID = "PF203"
SLUG = "throttling-simulated-high"
TITLE = "High simulated CPU throttling"
SEVERITY = "warning"
CATEGORY = "cpu"
REQUIRES: tuple[str, ...] = ("node-logical-cpus",)
SUPERSEDES: tuple[str, ...] = ("PF202",)
DEFAULT_SCORE = 50
DEFAULT_SECONDS = 2
OPTIONS: tuple[Option, ...] = (
    Option("score", "integer", DEFAULT_SCORE, "Throttling score (0-100) above which the rule fires.", minimum=0),
    Option(
        "default-threads",
        "integer",
        200,
        "Threads assumed for a container without the podfit.io/threads annotation.",
        minimum=1,
    ),
    Option("seconds", "integer", DEFAULT_SECONDS, "Simulated seconds per container.", minimum=1),
)

THREADS_ANNOTATION = "podfit.io/threads"
DEMAND_ANNOTATION = "podfit.io/cpu-demand"
BURST_ANNOTATION = "podfit.io/cpu-burst"
DEFAULT_BURST_US = 2_000
STEP = 100  # millicores: the granularity of a suggested limit
# The measured CPU rate is a 5-minute average per sample; its p95 is the demand of the busy hours,
# the load under which throttling costs latency. The median would rate the quiet hours, the max one
# outlier sample. The rate is what the container got, not what it asked for: under a throttling
# limit the offered demand is higher, so a measured demand understates throttling (PF209 reports
# the throttling measured directly).
MEASURED_PERCENTILE = 95

# Completed bursts a simulated p99 latency needs: of fewer than 100 it is their largest, which from
# 50 on still says what the slow bursts wait (a demand of 100m completes about 90 2 ms bursts in
# 2 s); of a handful it says nothing (a demand of a few millicores completes 2-6).
P99_MIN_BURSTS = 50
# Seeds each container is simulated with (the threads' phases, bursts and sleeps); the verdict is on
# the median run, the finding gives the range over all of them.
SEEDS = 5


def node_logical_cpus(ctx, w: Workload | None = None) -> int | None:
    """Logical CPUs of the largest node ``w``'s pods may land on (its node selection and
    tolerations against the pools: the facts stage's answer, which PF202 reads too), or of the
    largest node any workload may land on; None when unknown."""
    return ctx.facts.node_logical_cpus if w is None else ctx.facts.workload_node_logical_cpus(w)


def skip_reason(ctx) -> str | None:
    """Beyond REQUIRES (the node size): on a vSphere Pods Supervisor only a guest cluster's pods
    run on nodes, so without one there is nothing to rate."""
    if ctx.platform.runtime == "vsphere-pods" and not ctx.facts.apart_clusters:
        return "runtime tkg or bare-metal (vSphere Pods have no node-wide CFS quota to simulate)"
    return None


def needs_simulation(limit_millicores: int, cpus: int, period_us: int = CFS_PERIOD_US) -> bool:
    """PF202's screen for a CPU limit on nodes of ``cpus`` logical CPUs (:func:`cfs_screen_limit`)."""
    return limit_millicores < cfs_screen_limit(cpus, period_us)


def _annotated(workload: Workload, container: str, key: str) -> str | None:
    """The annotation's value for this container: the whole value, or its ``container=value`` part."""
    raw = workload.pod.annotation(key) or workload.obj.annotation(key)
    if not raw:
        return None
    raw = raw.strip()
    if "=" not in raw:
        return raw
    for part in raw.split(","):
        name, _, value = part.partition("=")
        if name.strip() == container:
            return value.strip()
    return None


def threads_for(workload: Workload, container: str, default: int) -> tuple[int, bool]:
    """(thread count, whether it came from the annotation). Malformed values fall back to the default."""
    raw = _annotated(workload, container, THREADS_ANNOTATION)
    if raw and raw.isdigit():
        return max(1, int(raw)), True
    return default, False


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s)\s*$")
_US = {"us": 1, "µs": 1, "ms": 1000, "s": 1_000_000}


def parse_burst_us(text: str) -> int | None:
    """``2ms``, ``500us``, ``0.01s`` → whole microseconds (≥ 1); None when not a duration."""
    m = _DURATION.match(text)
    if not m:
        return None
    us = Fraction(m.group(1)) * _US[m.group(2)]
    return max(1, int(us))


@dataclass(frozen=True)
class Demand:
    """What a container's threads do, and where each value came from ("annotation" or "default")."""

    threads: int
    threads_from: str
    demand: int  # millicores the threads use together when nothing holds them back
    demand_from: str  # "measured", "annotation", "request" or "limit"
    burst_us: int
    burst_from: str
    measured: str = ""  # demand_from "measured": what was measured (``p95 of 288 samples over 1d, 2 pods``)

    @property
    def evidence(self) -> str | None:
        """What the simulated load rests on beyond podfit's defaults: ``"measured"`` (the demand from
        measured usage), ``"declared"`` (the threads or the demand annotated), or None: assumed
        defaults only (the default threads, the request or limit as the demand), a verdict graded
        at most info."""
        if self.demand_from == "measured":
            return "measured"
        if self.demand_from == "annotation" or self.threads_from == "annotation":
            return "declared"
        return None

    def assumption(self) -> str:
        """The assumed load of a verdict on defaults, and what to change: its message's first clause."""
        demand = "the CPU request" if self.demand_from == "request" else "the CPU limit, no request"
        return (
            f"Assumed load, neither declared nor measured: {self.threads} threads (the default) offering "
            f"{format_cpu(self.demand)} ({demand}); set {THREADS_ANNOTATION} and {DEMAND_ANNOTATION}, "
            "or measure it with check --usage, to grade it above info"
        )

    def describe(self) -> str:
        t = f"{self.threads} threads" + (
            "" if self.threads_from == "annotation" else f" (default; {THREADS_ANNOTATION})"
        )
        d = (
            f"average demand {format_cpu(self.demand)}"
            + {
                "annotation": "",
                "measured": f" (measured: {self.measured})",
                "request": f" (the CPU request; {DEMAND_ANNOTATION})",
                "limit": f" (the CPU limit, no request; {DEMAND_ANNOTATION})",
            }[self.demand_from]
        )
        b = f"{self.burst_us / 1000:g} ms CPU per burst" + (
            "" if self.burst_from == "annotation" else f" (default; {BURST_ANNOTATION})"
        )
        return f"{t}, {d}, {b}"


def measured_demand(u: ContainerUsage | None) -> tuple[int, str] | None:
    """(millicores, what was measured) from a container's measured CPU, or None when not measured
    (or measured idle: no demand to simulate)."""
    if u is None or u.cpu is None:
        return None
    value = getattr(u.cpu, f"p{MEASURED_PERCENTILE}")
    if value <= 0:
        return None
    pods = f"{plural(len(u.pods), 'pod')}"
    when = f"over {u.window}" if u.window_ms is not None else "in one kubectl top sample"
    return value, f"p{MEASURED_PERCENTILE} of the CPU rate, {u.cpu.samples} samples {when}, {pods}"


def demand_for(workload: Workload, c: Container, default_threads: int, usage: UsageFacts | None = None) -> Demand:
    """What PF203 simulates for one container; the demand from, in order, the measured CPU (when
    ``usage`` measures it), the annotation, the CPU request, the CPU limit."""
    threads, from_annotation = threads_for(workload, c.name, default_threads)
    raw = _annotated(workload, c.name, DEMAND_ANNOTATION)
    demand: int | None = None
    demand_from = "annotation"
    seen = measured_demand(usage.of(workload, c.name) if usage is not None else None)
    if seen is not None:
        demand, demand_from = seen[0], "measured"
    elif raw:
        try:
            demand = parse_cpu(raw)
        except ValueError:
            demand = None
    if not demand or demand <= 0:
        req = c.resources.cpu_request
        demand, demand_from = (req, "request") if req else (c.resources.cpu_limit or 1000, "limit")
    raw_burst = _annotated(workload, c.name, BURST_ANNOTATION)
    burst = parse_burst_us(raw_burst) if raw_burst else None
    return Demand(
        threads,
        "annotation" if from_annotation else "default",
        demand,
        demand_from,
        burst or DEFAULT_BURST_US,
        "annotation" if burst else "default",
        seen[1] if seen is not None else "",
    )


def _duration(us: int) -> str:
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


def throttle_command(limit_millicores: int, cpus: int, d: Demand, seconds: int, period_us: int = CFS_PERIOD_US) -> str:
    """The ``podfit throttle`` command line that runs the simulation a finding rests on, to run again
    with the container's real threads, demand and burst (``--period`` where the kubelet's
    cpuCFSQuotaPeriod is not the default)."""
    period = "" if period_us == CFS_PERIOD_US else f" --period {_duration(period_us)}"
    return (
        f"podfit throttle --limit {format_cpu(limit_millicores)} --cpus {cpus} --threads {d.threads} "
        f"--demand {format_cpu(d.demand)} --burst-work {_duration(d.burst_us)} --seconds {seconds}{period}"
    )


MEMO_KEY = "PF203"  # ctx.memo: (object, container) → ThrottleBasis of each finding


@dataclass(frozen=True)
class ThrottleBasis:
    """The simulation behind one finding: its scenario, the score threshold and the suggested limit."""

    scenario: Scenario
    threshold: int
    suggested: int


@lru_cache(maxsize=4096)
def simulate_seeds(
    limit_millicores: int | None,
    cpus: int,
    threads: int,
    seconds: int,
    demand_millicores: int = 1500,
    burst_us: int = DEFAULT_BURST_US,
    period_us: int = CFS_PERIOD_US,
) -> tuple[Result, ...]:
    """The simulation of one container (``limit_millicores`` None: no limit) with each of the seeds
    0 to :data:`SEEDS` − 1, in seed order, under CFS period ``period_us``; a pure function, cached."""
    base = container_scenario(
        limit_millicores, cpus, threads, seconds, demand_millicores, burst_us, period_us=period_us
    )
    return tuple(simulate(replace(base, seed=seed)) for seed in range(SEEDS))


@lru_cache(maxsize=4096)
def simulate_cached(
    limit_millicores: int | None,
    cpus: int,
    threads: int,
    seconds: int,
    demand_millicores: int = 1500,
    burst_us: int = DEFAULT_BURST_US,
    period_us: int = CFS_PERIOD_US,
) -> Result:
    """The run a verdict rests on: the median of :func:`simulate_seeds` (:func:`median_run`)."""
    return median_run(simulate_seeds(limit_millicores, cpus, threads, seconds, demand_millicores, burst_us, period_us))


def smallest_limit(
    cpus: int, d: Demand, seconds: int, threshold: int, start: int, period_us: int = CFS_PERIOD_US
) -> int:
    """The smallest limit, in 100m steps above ``start``, whose score is under ``threshold`` (with
    the same demand); at most :func:`~podfit.facts.cfs_screen_limit`, which PF202's screen already passes."""
    cap = cfs_screen_limit(cpus, period_us)

    def clears(limit: int) -> bool:
        if not needs_simulation(limit, cpus, period_us):
            return True
        return simulate_cached(limit, cpus, d.threads, seconds, d.demand, d.burst_us, period_us).score < threshold

    lo = (start // STEP + 1) * STEP
    if lo >= cap:
        return cap
    hi = (cap + STEP - 1) // STEP * STEP
    # binary search for the first clearing step; the score falls as the limit grows
    a, b = lo // STEP, hi // STEP
    while a < b:
        m = (a + b) // 2
        if clears(m * STEP):
            b = m
        else:
            a = m + 1
    limit = a * STEP
    # verify (the score need not be strictly monotone): step up until it clears
    while limit < cap and not clears(limit):
        limit += STEP
    return min(limit, cap)


def check(ctx) -> Iterator[Finding]:
    threshold = int(ctx.option("score"))
    default_threads = int(ctx.option("default-threads"))
    seconds = int(ctx.option("seconds"))
    kub = ctx.facts.kubelet
    if not kub.cfs_quota:
        yield from _no_quota(ctx)
        return
    yield from _period_refused(ctx)
    period = kub.cfs_period_us  # the kubelet's cpuCFSQuotaPeriod: each container's quota is its limit over it
    for w in ctx.workloads:
        screened = ctx.facts.cfs_screen(w)  # PF202's screen, one answer for both rules
        cpus = node_logical_cpus(ctx, w)
        if not screened or cpus is None:  # (the screen is empty without a node size)
            continue
        for c in screened:
            limit = c.resources.cpu_limit or 0  # (the screen holds only containers with a limit)
            d = demand_for(w, c, default_threads, ctx.facts.usage)
            res = simulate_cached(limit, cpus, d.threads, seconds, d.demand, d.burst_us, period)
            if res.score < threshold:
                continue
            runs = simulate_seeds(limit, cpus, d.threads, seconds, d.demand, d.burst_us, period)
            free = simulate_seeds(None, cpus, d.threads, seconds, d.demand, d.burst_us, period)
            finding = _finding(ctx, w, c, cpus, limit, d, runs, free, threshold, seconds, kub)
            # what the finding rests on, for the report's picture of it (podfit.visuals): the very
            # scenario simulated here, the threshold and the limit suggested
            ctx.memo.setdefault(MEMO_KEY, {})[(str(w.ref), c.name)] = ThrottleBasis(
                median_run(runs).scenario,  # the run the finding rates
                threshold,
                finding.details["suggested_cpu_limit"],
            )
            yield finding


def _period_refused(ctx) -> Iterator[Finding]:
    """One error where the KubeletConfiguration sets a cpuCFSQuotaPeriod other than 100 ms without
    the CustomCPUCFSQuotaPeriod gate on: ValidateKubeletConfiguration refuses it and the kubelet
    does not start. Throttling is then judged at the default period."""
    asked = ctx.facts.kubelet.cfs_period_refused_us
    config = next((o for o in ctx.facts.objects if is_kubelet_configuration(o)), None)
    if asked is None or config is None:
        return
    yield Finding(
        ID,
        f"cpuCFSQuotaPeriod {asked / 1000:g} ms needs the feature gate {CUSTOM_CFS_PERIOD_GATE} (alpha, off "
        "unless featureGates sets it): the kubelet refuses this configuration and does not start; set the gate "
        f"or leave the period at {CFS_PERIOD_US / 1000:g} ms (throttling here is judged at {CFS_PERIOD_US / 1000:g} ms)",
        config.location_at(("cpuCFSQuotaPeriod",)),
        config.ref,
        None,
        {"cpu_cfs_quota_period_us": asked, "feature_gate": CUSTOM_CFS_PERIOD_GATE},
        severity="error",
    )


def _no_quota(ctx) -> Iterator[Finding]:
    """One info where the KubeletConfiguration turns CFS quota off (``cpuCFSQuota: false``) and some
    Linux container sets a CPU limit: nothing is throttled, so neither PF202 nor PF203 applies, and
    the limits cap nothing either."""
    limited = sorted(
        {
            str(w.ref)
            for w in ctx.workloads
            if not ctx.facts.linux_excluded(w) and any(c.resources.cpu_limit for c in w.pod.all_containers)
        }
    )
    config = next((o for o in ctx.facts.objects if is_kubelet_configuration(o)), None)
    if not limited or config is None:
        return
    more = f" and {len(limited) - 3} more" if len(limited) > 3 else ""
    yield Finding(
        ID,
        f"cpuCFSQuota: false: the kubelet sets no CFS quota, so the CPU limits of {', '.join(limited[:3])}{more} "
        "are never enforced: nothing is throttled (PF202 and PF203 do not apply) and a container may use every "
        "CPU of its node",
        config.location_at(("cpuCFSQuota",)),
        config.ref,
        None,
        {"cpu_cfs_quota": False, "workloads_with_cpu_limits": len(limited)},
        severity="info",
    )


def _finding(
    ctx, w, c, cpus, limit, d: Demand, runs: tuple[Result, ...], frees: tuple[Result, ...], threshold, seconds, kub
) -> Finding:
    res = median_run(runs)
    free = frees[res.scenario.seed]
    period = kub.cfs_period_us
    slices = cfs_slices(limit, period)
    used_cpus = min(d.threads, cpus)
    per_period = res.throttled_per_period_ns
    throttled_pct = round(100 * res.nr_throttled / max(1, res.nr_periods))
    p99 = res.burst_delay_p99_ns or 0
    added_p99 = max(0, p99 - (free.burst_delay_p99_ns or 0))
    # the spread over the seeds: each run against the same seed's run without a limit
    scores = [r.score for r in runs]
    pcts = [round(100 * r.nr_throttled / max(1, r.nr_periods)) for r in runs]
    added = [
        max(0, (r.burst_delay_p99_ns or 0) - (f.burst_delay_p99_ns or 0)) for r, f in zip(runs, frees, strict=True)
    ]
    new_limit = smallest_limit(cpus, d, seconds, threshold, limit, period)
    whole = max(-(-limit // 1000), -(-d.demand // 1000))
    request = c.resources.cpu_request
    keep = f", requests.cpu kept at {format_cpu(request)}" if request is not None and request < new_limit else ""
    if kub.exclusive_cpus_without_quota is True:
        effect = f"no CFS quota at all (DisableCPUQuotaWithExclusiveCPUs, Kubernetes {kub.version_text or '≥ 1.33'})"
    elif kub.exclusive_cpus_without_quota is False:
        effect = f"a quota over exactly those CPUs (Kubernetes {kub.version_text or 'before 1.33'}, or the gate off)"
    else:
        effect = "no CFS quota from Kubernetes 1.33, a quota over exactly those CPUs before"
    policy = (
        "the nodes' static CPU Manager"
        if kub.policy == "static"
        else "the static CPU Manager (cpuManagerPolicy: static; "
        + (f"the nodes run {kub.policy}" if kub.cpu_manager_policy else "the nodes' policy is not given")
        + ")"
    )
    cpus_word = "CPU" if whole == 1 else "CPUs"
    static_text = (
        f"{whole} whole {cpus_word} (requests = limits, Guaranteed pod) with {policy}: exclusive CPUs, {effect}"
    )
    # a p99 of fewer completed bursts is their maximum, or nothing: a demand of a few millicores
    # completes one 2 ms burst in a run of seconds
    p99_known = res.bursts_done >= P99_MIN_BURSTS
    p99_text = (
        f"+{added_p99 / 1e6:.0f} ms p99 latency per burst against no limit "
        f"({min(added) / 1e6:.0f}–{max(added) / 1e6:.0f})"
        if p99_known
        else f"too few bursts for a p99 latency ({res.bursts_done} completed in {seconds} s, {P99_MIN_BURSTS} needed)"
    )
    command = throttle_command(limit, cpus, d, seconds, period)
    evidence = d.evidence
    # a verdict on assumed defaults is at most info, and says first what it assumed and what to change
    lead = (
        ""
        if evidence
        else f"{d.assumption()}; `{command}` with the real values simulates the real load. Under that assumption: "
    )
    message = lead + (
        f"CPU limit {format_cpu(limit)} on {cpus}-CPU nodes ({slices} slices of {CFS_SLICE_US / 1000:g} ms "
        f"per {period / 1000:g} ms period): "
        f"throttling score {res.score}/100 (threshold {threshold}; the median of {len(runs)} seeds, "
        f"{min(scores)}–{max(scores)}). Assumed {d.describe()}. "
        f"Simulated {seconds} s: throttled in {throttled_pct}% of periods ({min(pcts)}–{max(pcts)}%), "
        f"{p99_text}, "
        f"{per_period / 1e6:.0f} ms throttled per period summed over CPUs "
        f"({per_period / used_cpus / 1e6:.1f} ms per CPU, over the {used_cpus} CPUs its threads can use). "
        f"Under the threshold: limits.cpu {format_cpu(new_limit)}{keep}; or no CPU limit; or {static_text}"
    )
    return Finding(
        rule=ID,
        message=message,
        location=c.location,
        object=w.ref,
        container=c.name,
        severity="" if evidence else "info",
        details={
            "evidence": evidence or "assumed",
            "command": command,
            "score": res.score,
            "threshold": threshold,
            "seeds": len(runs),
            "seed": res.scenario.seed,
            "score_range": [min(scores), max(scores)],
            "throttled_periods_percent_range": [min(pcts), max(pcts)],
            "added_p99_ms_range": [round(min(added) / 1e6, 3), round(max(added) / 1e6, 3)] if p99_known else None,
            # the model's error against the kernel where it was measured nearest to this scenario
            "calibration": cal.as_dict() if (cal := nearest(res.scenario)) else None,
            "cpu_limit": limit,
            "node_logical_cpus": cpus,
            "threads": d.threads,
            "threads_from": d.threads_from,
            "demand": d.demand,
            "demand_from": d.demand_from,
            "burst_us": d.burst_us,
            "burst_from": d.burst_from,
            "slices": slices,
            "nr_periods": res.nr_periods,
            "nr_throttled": res.nr_throttled,
            "throttled_periods_percent": throttled_pct,
            "throttled_per_period_ms": round(per_period / 1e6, 3),
            "throttled_per_period_per_cpu_ms": round(per_period / used_cpus / 1e6, 3),
            "cpu_used_per_second": round(res.cpu_used_per_second, 4),
            "burst_delay_p99_ms": round(p99 / 1e6, 3) if p99_known else None,
            "added_p99_ms": round(added_p99 / 1e6, 3) if p99_known else None,
            "bursts_completed": res.bursts_done,
            "simulated_seconds": seconds,
            "suggested_cpu_limit": new_limit,
            "suggested_whole_cpus": whole,
            "cpu_manager_policy": kub.policy,
            "exclusive_cpus_without_quota": kub.exclusive_cpus_without_quota,
        },
    )
