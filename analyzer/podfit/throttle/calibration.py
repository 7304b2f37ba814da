"""How far the model was from the kernel where it was measured: the calibration's results table.

The kernel calibration (``lab/calibrate/``, docs/throttling.md "The table") ran 18 configurations on
a 2-CPU machine (cgroup v1, HZ 250, Linux 6.18, threads pinned) and compared the kernel's
``cpu.stat`` with the model's over 32 seeds. :data:`CALIBRATED` holds each row's configuration and
the model's error against the kernel's mean in the results table (``calibration-2026-11-24-7.json``,
compared with the same idle wake-up latency however long a CPU was idle: ``--flat-latency``):
throttled periods and throttled time (per period of the run's length), in percent of the kernel's
(None where the kernel's was 0).
:func:`nearest` finds the row closest to a scenario, so a result can be shown with the error of the
nearest configuration that was measured, and with how near that is. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .scenario import CPU_BOUND, REQUEST, Scenario

__all__ = ["CalibratedRow", "CALIBRATED", "CALIBRATED_CPUS", "Nearest", "nearest"]

CALIBRATED_CPUS = 2  # the machine the table was measured on


@dataclass(frozen=True)
class CalibratedRow:
    name: str  # as lab/calibrate/calibrate.py's CONFIGS names it
    limit_millicores: int
    threads: int
    kind: str
    burst_us: int = 2_000
    demand_millicores: int | None = None  # request rows: the offered demand
    fixed: bool = False  # fixed bursts and sleeps (periodic workers)
    cfs_burst_us: int = 0
    periods_error_percent: int | None = None  # model − kernel throttled periods, % of the kernel's
    time_error_percent: int | None = None  # model − kernel throttled time, % of the kernel's

    @property
    def slices_per_cpu(self) -> float:
        """Whole 5 ms slices of the quota per CPU of the calibration's machine."""
        return self.limit_millicores * 100 // 5_000 / CALIBRATED_CPUS


# The results table of docs/throttling.md ("The table"; lab/calibrate/test_calibrate.py holds each
# row's configuration to calibrate.py's CONFIGS).
CALIBRATED: tuple[CalibratedRow, ...] = (
    CalibratedRow("200m/1 busy", 200, 1, CPU_BOUND, periods_error_percent=-2, time_error_percent=-1),
    CalibratedRow("500m/1 busy", 500, 1, CPU_BOUND, periods_error_percent=0, time_error_percent=1),
    CalibratedRow("500m/2 busy", 500, 2, CPU_BOUND, periods_error_percent=-1, time_error_percent=0),
    CalibratedRow("1000m/2 busy", 1000, 2, CPU_BOUND, periods_error_percent=0, time_error_percent=1),
    CalibratedRow("1500m/2 busy", 1500, 2, CPU_BOUND, periods_error_percent=2, time_error_percent=3),
    CalibratedRow("1000m/4 busy", 1000, 4, CPU_BOUND, periods_error_percent=0, time_error_percent=0),
    CalibratedRow("1900m/4 busy", 1900, 4, CPU_BOUND, periods_error_percent=3, time_error_percent=8),
    CalibratedRow("1500m/16 busy", 1500, 16, CPU_BOUND, periods_error_percent=2, time_error_percent=4),
    CalibratedRow("400m/8 exp 2ms", 400, 8, REQUEST, 2_000, 600, periods_error_percent=1, time_error_percent=-2),
    CalibratedRow("1000m/16 exp 1ms", 1000, 16, REQUEST, 1_000, 1_500, periods_error_percent=3, time_error_percent=2),
    CalibratedRow("1200m/16 exp 5ms", 1200, 16, REQUEST, 5_000, 1_600, periods_error_percent=1, time_error_percent=-8),
    CalibratedRow(
        "1900m/64 exp 2ms", 1900, 64, REQUEST, 2_000, 1_500, periods_error_percent=-69, time_error_percent=-60
    ),
    CalibratedRow(
        "400m/8 fixed 2ms", 400, 8, REQUEST, 2_000, 600, fixed=True, periods_error_percent=1, time_error_percent=-2
    ),
    CalibratedRow(
        "1000m/4 fixed 5ms",
        1000,
        4,
        REQUEST,
        5_000,
        1_200,
        fixed=True,
        periods_error_percent=-10,
        time_error_percent=-25,
    ),
    CalibratedRow(
        "1500m/32 fixed 2ms", 1500, 32, REQUEST, 2_000, 1_800, fixed=True, periods_error_percent=2, time_error_percent=5
    ),
    CalibratedRow(
        "200m/2 fixed 10ms", 200, 2, REQUEST, 10_000, 300, fixed=True, periods_error_percent=0, time_error_percent=3
    ),
    CalibratedRow(
        "400m/8 exp 2ms +burst 20ms",
        400,
        8,
        REQUEST,
        2_000,
        400,
        cfs_burst_us=20_000,
        periods_error_percent=9,
        time_error_percent=10,
    ),
    CalibratedRow("1000m/16 exp 1ms +burst 50ms", 1000, 16, REQUEST, 1_000, 900, cfs_burst_us=50_000),
)


@dataclass(frozen=True)
class Nearest:
    row: CalibratedRow
    distance: float  # 0: the very configuration; each unit about a doubling of one dimension
    # the scenario has fewer slices per CPU than any calibrated row (PF202's risk region, where PF203
    # rates containers): the calibration does not cover it
    below_calibrated_slices: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "nearest": self.row.name,
            "cpus": CALIBRATED_CPUS,
            "distance": self.distance,
            "throttled_periods_error_percent": self.row.periods_error_percent,
            "throttled_time_error_percent": self.row.time_error_percent,
            "below_calibrated_slices_per_cpu": self.below_calibrated_slices,
        }

    def text(self) -> str:
        """``400m/8 fixed 2ms on 2 CPUs, 0.6 doublings away: model − kernel throttled periods +1%,
        throttled time +2%``."""

        def pct(x: int | None) -> str:
            return "n/a (kernel 0)" if x is None else f"{x:+d}%"

        out = (
            f"{self.row.name} on {CALIBRATED_CPUS} CPUs, {self.distance:g} doublings away: model − kernel "
            f"throttled periods {pct(self.row.periods_error_percent)}, "
            f"throttled time {pct(self.row.time_error_percent)}"
        )
        if self.below_calibrated_slices:
            out += "; fewer slices per CPU than any calibrated configuration (none was measured there)"
        return out


def _log2_ratio(a: float, b: float) -> float:
    return abs(math.log2(max(a, 1e-9) / max(b, 1e-9)))


def nearest(sc: Scenario) -> Nearest | None:
    """The calibrated row nearest to ``sc`` (None without a limit): the distance sums, in doublings,
    the differences in slices per CPU, threads per CPU, and for request threads the offered load
    (demand over limit) and the burst, plus 4 for another kind of thread and 1 each for fixed against
    exponential bursts and for cpu.cfs_burst_us set or not; the Euclidean norm of these."""
    limit = sc.limit_millicores
    if limit is None:
        return None
    wl = sc.workload
    slices_per_cpu = (sc.quota_us or 0) // sc.slice_us / sc.cpus
    best: tuple[float, CalibratedRow] | None = None
    for row in CALIBRATED:
        d = [
            _log2_ratio(slices_per_cpu, row.slices_per_cpu),
            _log2_ratio(sc.threads / sc.cpus, row.threads / CALIBRATED_CPUS),
            1.0 if (sc.burst_us > 0) != (row.cfs_burst_us > 0) else 0.0,
        ]
        if wl.kind != row.kind:
            d.append(4.0)
        elif wl.kind == REQUEST:
            d.append(_log2_ratio(wl.demand_for(limit) / limit, (row.demand_millicores or limit) / row.limit_millicores))
            d.append(_log2_ratio(wl.burst_us, row.burst_us))
            d.append(1.0 if (wl.fixed_bursts and wl.fixed_sleeps) != row.fixed else 0.0)
        dist = math.sqrt(sum(x * x for x in d))
        if best is None or dist < best[0]:
            best = (dist, row)
    assert best is not None
    lowest = min(r.slices_per_cpu for r in CALIBRATED)
    return Nearest(best[1], round(best[0], 2), slices_per_cpu < lowest)
