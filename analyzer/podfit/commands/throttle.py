"""``podfit throttle``: simulate how a CPU limit throttles a multi-threaded container on a node."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

import click

from ..facts import CFS_PERIOD_US, CFS_SLICE_US
from ..quantity import QuantityError, format_cpu, parse_cpu
from ..throttle import CPU_BOUND, REQUEST, Result, Scenario, Workload, simulate
from ..throttle.calibration import nearest
from ..throttle.kernel import kernel_flags
from ..throttle.scenario import (
    JAVA_SERVER_BURST_US,
    JAVA_SERVER_LOAD_PERCENT,
    JAVA_SERVER_THREADS,
    WAKEUP_COST_US,
    wakeup_cpu,
)
from ..throttle.score import median_run
from ..words import plural, wrap_text
from ._common import FiniteFloatRange, emit, format_option, output_option

__all__ = ["command", "parse_duration_us", "result_json", "render_text", "cpu_manager_json"]

_UNITS = {"us": 1, "µs": 1, "ms": 1000, "s": 1_000_000}
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(us|µs|ms|s)?\s*$")


def parse_duration_us(text: str) -> int:
    """``100ms``, ``0.1s``, ``100000us`` or a bare number of microseconds → integer µs (exact)."""
    m = _DURATION.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a duration (e.g. 100ms, 0.1s, 100000us)")
    value = Fraction(m.group(1)) * _UNITS[m.group(2) or "us"]
    if value.denominator != 1:
        raise ValueError(f"{text!r} is not a whole number of microseconds")
    return int(value)


class _Duration(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_duration_us(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class _Cpu(click.ParamType):
    name = "cpu"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            m = parse_cpu(value)
        except QuantityError as e:
            self.fail(str(e), param, ctx)
        if m <= 0:
            self.fail("must be more than zero", param, ctx)
        return m


DURATION = _Duration()
CPU = _Cpu()


def _ms(ns: int | None) -> float | None:
    return None if ns is None else round(ns / 1e6, 3)


def result_json(res: Result) -> dict[str, Any]:
    sc = res.scenario
    quota_total = res.quota_ns_total
    return {
        "cpu_manager": False,
        "limit": format_cpu(sc.limit_millicores) if sc.limit_millicores is not None else None,
        "cpus": sc.cpus,
        "threads": sc.threads,
        "workload": sc.workload.kind,
        "period_ms": sc.period_us / 1000,
        "seconds": sc.seconds_us / 1e6,
        "seed": sc.seed,
        "hz": sc.hz,
        "slices_per_period": sc.slices_per_period,
        "nr_periods": res.nr_periods,
        "nr_throttled": res.nr_throttled,
        "throttled_time_s": round(res.throttled_time_ns / 1e9, 6),
        "throttled_per_period_s": round(res.throttled_per_period_ns / 1e9, 6),
        "cpu_used_s": round(res.cpu_used_ns / 1e9, 6),
        "quota_s": None if quota_total is None else round(quota_total / 1e9, 6),
        "quota_per_period_s": None if sc.quota_us is None else sc.quota_us / 1e6,
        "nr_bursts": res.nr_bursts,
        "burst_time_s": round(res.burst_time_ns / 1e9, 6),
        "bursts_done": res.bursts_done,
        "burst_delay_mean_ms": _ms(res.burst_delay_mean_ns),
        "burst_delay_p50_ms": _ms(res.burst_delay_p50_ns),
        "burst_delay_p99_ms": _ms(res.burst_delay_p99_ns),
        "wakeup_cost_us": sc.wake_cpu_us + sc.sleep_cpu_us,
        "wake_delay_mean_ms": _ms(res.wake_delay_mean_ns),
        "wake_delay_p50_ms": _ms(res.wake_delay_p50_ns),
        "wake_delay_p99_ms": _ms(res.wake_delay_p99_ns),
        "max_throttled_cpus": res.max_throttled_cpus,
        "score": res.score,
        "periods": [
            {
                "index": p.index,
                "start_ms": p.start_ns / 1e6,
                "cpu_used_ms": _ms(p.cpu_used_ns),
                "throttled_ms": _ms(p.throttled_ns),
                "throttled": p.throttled,
                "throttled_cpus": p.throttled_cpus,
            }
            for p in res.periods
        ],
    }


def _span(values: Sequence[float | None]) -> list[float] | None:
    known = [v for v in values if v is not None]
    return [min(known), max(known)] if known else None


def seeds_json(runs: Sequence[Result]) -> dict[str, Any]:
    """The range over the runs of several seeds of one scenario: each figure's lowest and highest."""
    return {
        "seeds": [r.scenario.seed for r in runs],
        "median_seed": median_run(runs).scenario.seed,
        "score": _span([r.score for r in runs]),
        "nr_throttled": _span([r.nr_throttled for r in runs]),
        "throttled_per_period_s": _span([round(r.throttled_per_period_ns / 1e9, 6) for r in runs]),
        "cpu_used_s": _span([round(r.cpu_used_ns / 1e9, 6) for r in runs]),
        "burst_delay_p99_ms": _span([_ms(r.burst_delay_p99_ns) for r in runs]),
        "wake_delay_p99_ms": _span([_ms(r.wake_delay_p99_ns) for r in runs]),
    }


def cpu_manager_json(limit: int, cpus: int, threads: int) -> dict[str, Any]:
    return {
        "cpu_manager": True,
        "limit": format_cpu(limit),
        "cpus": cpus,
        "threads": threads,
        "exclusive_cpus": limit // 1000,
        "nr_periods": 0,
        "nr_throttled": 0,
        "throttled_time_s": 0.0,
        "cpu_used_s": None,
        "quota_s": None,
        "burst_delay_p50_ms": None,
        "burst_delay_p99_ms": None,
        "score": 0,
        "message": (
            f"static CPU Manager: the container gets {plural(limit // 1000, 'exclusive CPU')} and no CFS quota, "
            "so there is nothing to throttle"
        ),
    }


def render_text(res: Result, timeline: int = 20, runs: Sequence[Result] = ()) -> str:
    """The text view of ``res``; with ``runs`` (several seeds, ``res`` their median) the range over them."""
    sc = res.scenario
    lines = []
    limit = format_cpu(sc.limit_millicores) if sc.limit_millicores is not None else "none"
    lines.append(
        f"CPU limit {limit} ({'no quota' if sc.quota_us is None else f'{sc.quota_us / 1000:g} ms quota'} per "
        f"{sc.period_us / 1000:g} ms period, {sc.slices_per_period if sc.quota_us else '-'} slices of "
        f"{sc.slice_us / 1000:g} ms), {plural(sc.threads, f'{sc.workload.kind} thread')} on {plural(sc.cpus, 'CPU')}, "
        f"{sc.seconds_us / 1e6:g} s simulated (HZ={sc.hz}, seed {sc.seed})"
    )
    if sc.quota_us is None:
        lines.append("no CPU limit: no CFS quota, nothing is throttled")
    lines.append(f"  nr_periods        {res.nr_periods}")
    lines.append(f"  nr_throttled      {res.nr_throttled}")
    lines.append(
        f"  throttled_time    {res.throttled_time_ns / 1e9:.3f} s  "
        f"({res.throttled_per_period_ns / 1e6:.1f} ms per period, summed over CPUs)"
    )
    qt = res.quota_ns_total
    quota_txt = f" of {qt / 1e9:.3f} s quota ({100 * res.cpu_used_ns / qt:.0f}%)" if qt else ""
    lines.append(f"  cpu used          {res.cpu_used_ns / 1e9:.3f} s{quota_txt}")
    if sc.workload.kind == REQUEST:

        def dash(x: float | None) -> str:
            return "-" if x is None else f"{x}"

        p50, p99 = _ms(res.burst_delay_p50_ns), _ms(res.burst_delay_p99_ns)
        lines.append(
            f"  burst delay       p50 {dash(p50)} ms, p99 {dash(p99)} ms from the intended start "
            f"({res.bursts_done} bursts)"
        )
        w50, w99 = _ms(res.wake_delay_p50_ns), _ms(res.wake_delay_p99_ns)
        lines.append(
            f"                    p50 {dash(w50)} ms, p99 {dash(w99)} ms from the wake-up "
            f"({sc.wake_cpu_us + sc.sleep_cpu_us} us CPU per wake-up)"
        )
    if sc.burst_us:
        lines.append(f"  nr_bursts         {res.nr_bursts} ({res.burst_time_ns / 1e9:.3f} s over quota)")
    lines.append(f"  most CPUs throttled at once  {res.max_throttled_cpus}")
    lines.append(f"  score             {res.score}/100")
    if len(runs) > 1:
        r = seeds_json(runs)
        first, last = runs[0].scenario.seed, runs[-1].scenario.seed

        def span(key: str, unit: str = "", scale: float = 1) -> str:
            v = r[key]
            return "-" if v is None else f"{round(v[0] * scale, 1):g}–{round(v[1] * scale, 1):g}{unit}"

        lines.append(
            f"  over seeds {first}–{last} (this run, seed {res.scenario.seed}, is their median): "
            f"score {span('score')}, nr_throttled {span('nr_throttled')}, "
            f"throttled {span('throttled_per_period_s', ' ms', 1000)} per period"
            + (
                f", burst delay p99 {span('burst_delay_p99_ms', ' ms')} from the intended start, "
                f"{span('wake_delay_p99_ms', ' ms')} from the wake-up"
                if sc.workload.kind == REQUEST
                else ""
            )
        )
    cal = nearest(sc)
    if cal is not None:
        lines.append(f"  nearest calibrated configuration  {cal.text()}")
    if timeline and res.periods:
        shown = res.periods[:timeline]
        lines.append("")
        lines.append(
            f"timeline (first {len(shown)} of {plural(len(res.periods), 'period')}; # = 1/20 of the quota used, "
            "T = throttled)"
        )
        lines.append("  period   used ms  throttled ms  thr CPUs")
        q = sc.quota_us * 1000 if sc.quota_us else 0
        for p in shown:
            bar = "#" * (min(40, round(20 * p.cpu_used_ns / q)) if q else 0)
            lines.append(
                f"  {p.index:>6} {p.cpu_used_ns / 1e6:>9.1f} {p.throttled_ns / 1e6:>13.1f} {p.throttled_cpus:>9}"
                f"  {'T' if p.throttled else ' '} {bar}"
            )
    return "\n".join(lines)


def _measured_demand(usage_files, container_spec, demand, cpu_bound) -> int:
    """The demand of ``--container`` from ``--usage``: PF203's percentile of its measured CPU rate;
    said on stderr. Usage errors for a missing half, --demand or --cpu-bound beside it, or a
    container the files do not measure."""
    from ..rules.throttling_simulated_high import measured_demand
    from ..usage import measured_container
    from ._common import load_usage

    if not usage_files or not container_spec:
        raise click.UsageError("--usage and --container go together: the measured container's demand")
    if demand is not None or cpu_bound:
        raise click.UsageError("--usage sets the demand: not with --demand or --cpu-bound")
    try:
        u = measured_container(load_usage(usage_files), container_spec)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--container") from None
    seen = measured_demand(u)
    if seen is None:
        raise click.UsageError(f"--usage measures no CPU of {container_spec} (a rate above zero)")
    click.echo(f"demand {format_cpu(seen[0])}: {container_spec}, measured {seen[1]}", err=True)
    return seen[0]


# The options behind each of the scenario's checks (podfit.throttle.scenario), by its message.
_SCENARIO_OPTIONS = (
    ("smallest quota", "--limit"),
    ("period must be", "--period"),
    ("burst must be", "--cfs-burst"),
    ("at least one period", "--seconds"),
    ("burst_us", "--burst-work"),
    ("demand_millicores", "--demand"),
    ("load_percent", "--load"),
    ("kernel tunables", "--slice"),
    ("cpus must", "--cpus"),
    ("threads must", "--threads"),
)


def _scenario_option(message: str) -> str:
    """The option a scenario's ValueError is about, as its usage error names it."""
    return next((option for words, option in _SCENARIO_OPTIONS if words in message), "the scenario's options")


@click.command("throttle")
@click.option("--limit", "limit", type=CPU, default=None, help="CPU limit (a Kubernetes quantity: 1500m, 1.5).")
@click.option("--no-limit", is_flag=True, help="No CPU limit (no CFS quota).")
@click.option("--cpus", type=click.IntRange(1, 4096), required=True, help="Logical CPUs of the node.")
@click.option(
    "--threads",
    type=click.IntRange(1, 100_000),
    default=JAVA_SERVER_THREADS,
    show_default=True,
    help="Threads of the container.",
)
@click.option(
    "--period",
    type=DURATION,
    default=f"{CFS_PERIOD_US // 1000}ms",
    show_default=True,
    help="CFS period (cpu.cfs_period_us).",
)
@click.option(
    "--seconds", type=FiniteFloatRange(0.001, 3600), default=10.0, show_default=True, help="Simulated seconds."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (the result is deterministic).")
@click.option(
    "--seeds",
    type=click.IntRange(1, 1000),
    default=5,
    show_default=True,
    help="Simulate seeds --seed to --seed + N - 1 and report their median run, with the range over all "
    "of them (as PF203 does with seeds 0-4).",
)
@click.option("--cpu-bound", is_flag=True, help="Every thread always runnable (instead of request bursts).")
@click.option(
    "--burst-work",
    type=DURATION,
    default=f"{JAVA_SERVER_BURST_US}us",
    show_default=True,
    help="Mean CPU work of one request burst.",
)
@click.option("--fixed-bursts", is_flag=True, help="Every burst is exactly --burst-work (default: exponential).")
@click.option(
    "--fixed-sleeps", is_flag=True, help="Every sleep between bursts is exactly its mean (default: exponential)."
)
@click.option(
    "--frequent-syscalls",
    is_flag=True,
    help="The threads enter the kernel every few microseconds while they run, so their CPU is charged to "
    "the quota as it is used (default: at the scheduler tick, as for computation in user space).",
)
@click.option(
    "--wakeup-cost",
    "wakeup_cost",
    type=DURATION,
    default=f"{WAKEUP_COST_US}us",
    show_default=True,
    help="CPU each request burst uses besides its work (waking, going to sleep), charged to the quota; "
    "the default is the kernel calibration's median (docs/throttling.md); 0 for an ideal machine.",
)
@click.option(
    "--load",
    "load_percent",
    type=click.IntRange(1, 100_000),
    default=JAVA_SERVER_LOAD_PERCENT,
    show_default=True,
    help="Offered CPU demand, percent of the limit.",
)
@click.option("--demand", type=CPU, default=None, help="Offered CPU demand as a quantity (overrides --load).")
@click.option(
    "--usage",
    "usage_files",
    multiple=True,
    metavar="[KIND=]FILE",
    help="Measured usage (as for check --usage) of the --container whose demand to simulate: the p95 of "
    "its measured CPU rate, as PF203 takes it (overrides --load; not with --demand).",
)
@click.option(
    "--container",
    "container_spec",
    default=None,
    metavar="NAMESPACE/[KIND/]WORKLOAD/CONTAINER",
    help="The measured container of --usage (e.g. shop/checkout/app, shop/StatefulSet/db/postgres).",
)
@click.option(
    "--cfs-burst", "cfs_burst", type=DURATION, default="0us", show_default=True, help="cpu.cfs_burst_us (Linux 5.14+)."
)
@click.option(
    "--pre-5.4-expiry", "pre54", is_flag=True, help="Kernels before 5.4: runtime left on a CPU expires at period end."
)
@click.option(
    "--empty-throttle-accounting/--no-empty-throttle-accounting",
    "empty_acct",
    default=True,
    show_default=True,
    help="Count throttled time of CPUs with no waiting thread (kernels before 6.6).",
)
@click.option(
    "--task-based-throttle",
    "task_throttle",
    is_flag=True,
    help="Kernels from 6.18: a throttled CPU's threads leave its queue and come back as wake-ups when it is "
    "unthrottled.",
)
@click.option(
    "--kernel",
    "kernel",
    default=None,
    metavar="RELEASE",
    help="Account as this kernel release does (e.g. 5.4, 6.8): sets --pre-5.4-expiry, the throttled-time "
    "accounting and --task-based-throttle from the version.",
)
@click.option(
    "--hz",
    type=click.Choice(["100", "250", "300", "1000"]),
    default="250",
    show_default=True,
    help="Kernel tick rate (CONFIG_HZ).",
)
@click.option(
    "--slice",
    "slice_us",
    type=DURATION,
    default=f"{CFS_SLICE_US // 1000}ms",
    show_default=True,
    help="sched_cfs_bandwidth_slice_us.",
)
@click.option(
    "--cpu-manager",
    is_flag=True,
    help="Guaranteed pod with the static CPU Manager: whole-CPU limits get exclusive cores.",
)
@click.option(
    "--timeline",
    type=click.IntRange(0, 100_000),
    default=20,
    show_default=True,
    help="Periods shown in the text timeline.",
)
@format_option(("text", "json", "html"))
@output_option
def command(
    limit: int | None,
    no_limit: bool,
    cpus: int,
    threads: int,
    period: int,
    seconds: float,
    seed: int,
    seeds: int,
    cpu_bound: bool,
    burst_work: int,
    fixed_bursts: bool,
    fixed_sleeps: bool,
    frequent_syscalls: bool,
    wakeup_cost: int,
    load_percent: int,
    demand: int | None,
    usage_files: tuple[str, ...],
    container_spec: str | None,
    cfs_burst: int,
    pre54: bool,
    empty_acct: bool,
    task_throttle: bool,
    kernel: str | None,
    hz: str,
    slice_us: int,
    cpu_manager: bool,
    timeline: int,
    fmt: str,
    output: str | None,
) -> None:
    """Simulate CFS bandwidth control (the kernel's enforcement of a CPU limit) for a container.

    Reports cpu.stat's nr_periods, nr_throttled and throttled time (summed over CPUs), the CPU used
    against the quota, the delay added to request bursts, and a 0-100 throttling score
    (docs/throttling.md).
    """
    if limit is None and not no_limit:
        raise click.UsageError("give --limit QUANTITY (or --no-limit)")
    if usage_files or container_spec:
        demand = _measured_demand(usage_files, container_spec, demand, cpu_bound)
    if kernel is not None:
        if not re.match(r"^\d+\.\d+", kernel):
            raise click.UsageError(f"--kernel {kernel!r}: give a release such as 5.4 or 6.8.0-45-generic")
        flags = kernel_flags(kernel)
        pre54, empty_acct = flags["pre_5_4_expiry"], flags["account_empty_throttled"]
        task_throttle = flags["task_based_throttle"]
    if limit is not None and no_limit:
        raise click.UsageError("--limit and --no-limit exclude each other")
    seconds_us = round(seconds * 1_000_000)
    if cpu_manager and limit is not None:
        if limit % 1000 == 0:
            if limit // 1000 > cpus:
                raise click.UsageError(
                    f"--cpu-manager: {format_cpu(limit)} exclusive CPUs do not fit {plural(cpus, 'CPU')}"
                )
            doc = cpu_manager_json(limit, cpus, threads)
            if fmt == "html":
                raise click.UsageError(f"--format html: {doc['message']}; there is no curve to draw")
            if fmt == "json":
                emit(json.dumps(doc, indent=2) + "\n", output)
            else:
                emit(
                    f"CPU limit {format_cpu(limit)}, {plural(threads, 'thread')} on {plural(cpus, 'CPU')}: "
                    f"{doc['message']}.\n"
                    "  nr_periods 0, nr_throttled 0, throttled_time 0 s, score 0/100\n",
                    output,
                )
            return
        click.echo(
            f"note: the static CPU Manager gives exclusive cores only to whole-CPU limits; "
            f"{format_cpu(limit)} stays on the CFS quota (round it to {format_cpu(-(-limit // 1000) * 1000)})",
            err=True,
        )
    try:
        quota = Scenario.quota_for_limit(limit, period) if limit is not None else None
        wake_cpu, sleep_cpu = wakeup_cpu(0 if cpu_bound else wakeup_cost)
        sc = Scenario(
            cpus=cpus,
            threads=threads,
            quota_us=quota,
            period_us=period,
            burst_us=cfs_burst,
            seconds_us=max(seconds_us, period),
            seed=seed,
            hz=int(hz),
            slice_us=slice_us,
            pre_5_4_expiry=pre54,
            account_empty_throttled=empty_acct,
            task_based_throttle=task_throttle,
            wake_cpu_us=wake_cpu,
            sleep_cpu_us=sleep_cpu,
            workload=Workload(
                kind=CPU_BOUND if cpu_bound else REQUEST,
                burst_us=burst_work,
                demand_millicores=demand,
                load_percent=load_percent,
                fixed_bursts=fixed_bursts,
                fixed_sleeps=fixed_sleeps,
                frequent_syscalls=frequent_syscalls,
            ),
        )
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint=_scenario_option(str(e))) from None
    if fmt == "html":
        if limit is None:
            raise click.UsageError("--format html draws throttling against the CPU limit: give --limit")
        from ..formats.html import throttle_page
        from ..rules.throttling_simulated_high import DEFAULT_SCORE
        from ..throttle.sweep import sweep_scenario
        from ..visuals import ThrottleCurve

        subject = (
            f"{plural(threads, f'{sc.workload.kind} thread')} on {plural(cpus, 'CPU')}, CPU limit {format_cpu(limit)}"
        )
        emit(throttle_page(ThrottleCurve(None, subject, sweep_scenario(sc, DEFAULT_SCORE))), output)
        return
    runs = [simulate(replace(sc, seed=seed + i)) for i in range(seeds)]
    res = median_run(runs)
    if fmt == "json":
        cal = nearest(res.scenario)
        doc = {**result_json(res), "over_seeds": seeds_json(runs), "calibration": cal.as_dict() if cal else None}
        emit(json.dumps(doc, indent=2) + "\n", output)
    else:
        emit(wrap_text(render_text(res, timeline, runs) + "\n"), output)  # lines of at most 160 characters
