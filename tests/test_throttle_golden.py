"""The simulator against recorded results: every field of ``simulate``'s Result, exactly.

``tests/data/throttle_golden.json`` holds scenarios and the results ``simulate`` gave for them: the
scenarios of tests/test_throttle.py, bench/throttle.py, the calibration table and PF203, plus a seeded
grid (limits 0.1–16 CPUs and none, 1–256 CPUs, 1–400 threads, CPU-bound and request workloads with
short, long, fixed and unspread bursts and light to saturating loads, HZ, periods, slices, cfs burst,
pre-5.4 expiry, empty-queue throttle accounting). A change to the simulator that is meant to change
its results regenerates the file: ``PYTHONPATH=analyzer python tests/test_throttle_golden.py``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from pathlib import Path

import pytest

from podfit.throttle import CPU_BOUND, REQUEST, PeriodStats, Result, Scenario, Workload, simulate
from podfit.throttle.sweep import container_scenario

GOLDEN = Path(__file__).resolve().parent / "data" / "throttle_golden.json"
PERIOD_FIELDS = [f.name for f in dataclasses.fields(PeriodStats)]
RESULT_FIELDS = [f.name for f in dataclasses.fields(Result) if f.name not in ("scenario", "periods")]
GRID_SEED = 13
GRID_SIZE = 160
MAX_EVENTS = 250_000  # grid points that take longer (millions of tiny bursts) are left out


def scenario_from_dict(d: dict) -> Scenario:
    d = dict(d)
    d["workload"] = Workload(**d["workload"])
    return Scenario(**d)


def result_to_dict(r: Result) -> dict:
    out = {name: getattr(r, name) for name in RESULT_FIELDS}
    out["periods"] = [[getattr(p, name) for name in PERIOD_FIELDS] for p in r.periods]
    return out


def _load() -> dict:
    with open(GOLDEN, encoding="utf-8") as f:
        return json.load(f)


def _cases():
    if not GOLDEN.exists():  # writing it (test_golden_covers_the_options fails without it)
        return []
    doc = _load()
    assert doc["period_fields"] == PERIOD_FIELDS, "PeriodStats changed: regenerate the golden file"
    return [pytest.param(c["scenario"], c["result"], id=c["name"]) for c in doc["cases"]]


@pytest.mark.parametrize("scenario,expected", _cases())
def test_simulate_matches_golden(scenario, expected):
    assert result_to_dict(simulate(scenario_from_dict(scenario))) == expected


def test_golden_covers_the_options():
    scs = [scenario_from_dict(c["scenario"]) for c in _load()["cases"]]
    limits = {s.limit_millicores for s in scs}
    assert None in limits and min(x for x in limits if x) <= 100 and max(x for x in limits if x) >= 16_000
    assert {1, 256} <= {s.cpus for s in scs} and {1, 400} <= {s.threads for s in scs}
    assert any(s.pre_5_4_expiry for s in scs) and any(s.burst_us for s in scs)
    assert not all(s.account_empty_throttled for s in scs)
    assert {CPU_BOUND, REQUEST} == {s.workload.kind for s in scs}
    assert any(s.workload.fixed_bursts for s in scs) and not all(s.workload.wake_spread for s in scs)
    assert any(s.workload.frequent_syscalls for s in scs) and any(s.task_based_throttle for s in scs)
    assert {0, 1000} <= {s.idle_cpu_permille for s in scs}


# --- generating the file ------------------------------------------------------------------------


def _named_scenarios():
    """The scenarios other tests, the benchmark, the calibration and PF203 run."""
    cb = Workload(kind=CPU_BOUND)
    q15 = Scenario.quota_for_limit(1500)
    for cpus, threads, limit_m in [
        (8, 1, 500),
        (8, 2, 1000),
        (8, 4, 1500),
        (16, 3, 2500),
        (4, 4, 3000),
        (8, 2, 4000),
        (32, 16, 8000),
    ]:
        quota = Scenario.quota_for_limit(limit_m)
        yield (
            f"closed-form-{cpus}c-{threads}t-{limit_m}m",
            Scenario(cpus, threads, quota, seconds_us=5_000_000, workload=cb),
        )
    yield "nr-periods", Scenario(4, 2, 50_000, seconds_us=3_000_000, workload=cb)
    yield "study-256", Scenario(256, 200, q15)
    yield "study-4", Scenario(4, 200, q15)
    for seed in (1, 2):
        yield f"study-256-seed{seed}", Scenario(256, 200, q15, seed=seed, seconds_us=3_000_000)
        yield f"study-4-seed{seed}", Scenario(4, 200, q15, seed=seed, seconds_us=3_000_000)
    for seed in (7, 8):
        yield f"determinism-seed{seed}", Scenario(64, 50, 100_000, seed=seed, seconds_us=2_000_000)
    yield "no-limit-cpu-bound", Scenario(8, 16, None, seconds_us=1_000_000, workload=cb)
    yield "64-cpu-bound-1-cpu", Scenario(64, 64, 100_000, seconds_us=2_000_000, workload=cb)
    for hz in (100, 1000):
        yield f"ticks-hz{hz}", Scenario(128, 128, 150_000, seconds_us=2_000_000, hz=hz, workload=cb)
    light = Workload(kind=REQUEST, burst_us=500, demand_millicores=1500)
    for pre54 in (False, True):
        yield (
            f"expiry-pre54-{pre54}",
            Scenario(128, 100, 200_000, seconds_us=3_000_000, workload=light, pre_5_4_expiry=pre54),
        )
    bursty = Workload(kind=REQUEST, burst_us=20_000, demand_millicores=900, fixed_bursts=True)
    for burst in (0, 100_000):
        yield f"cfs-burst-{burst}", Scenario(8, 8, 100_000, burst_us=burst, seconds_us=5_000_000, workload=bursty)
    for empty in (True, False):
        yield (
            f"empty-accounting-{empty}",
            Scenario(256, 200, 150_000, seconds_us=2_000_000, account_empty_throttled=empty),
        )
    yield (
        "idle-timer-stops",
        Scenario(
            4, 1, 50_000, seconds_us=5_000_000, workload=Workload(kind=REQUEST, burst_us=1_000, demand_millicores=2)
        ),
    )
    yield "delays-free", Scenario(256, 200, None, seconds_us=2_000_000)
    yield "delays-held", Scenario(256, 200, q15, seconds_us=2_000_000)
    yield "score-x1", Scenario(8, 2, 100_000, seconds_us=2_000_000, workload=cb)
    yield "cli-json", Scenario(4, 8, q15, seconds_us=1_000_000)
    yield "cli-timeline", Scenario(8, 2, 100_000, seconds_us=2_000_000, workload=cb)
    yield "cli-seed3", Scenario(16, 32, 50_000, seconds_us=1_000_000, seed=3)
    yield "cli-cpu-manager-fractional", Scenario(64, 200, q15, seconds_us=1_000_000)
    # bench/throttle.py
    yield "bench-request", Scenario(256, 200, q15)
    yield "bench-cpu-bound", Scenario(256, 200, q15, workload=cb)
    yield "bench-cpu-bound-64", Scenario(256, 200, Scenario.quota_for_limit(64_000), workload=cb)
    yield "bench-no-limit", Scenario(256, 200, None)
    # the calibration table on a 2-CPU HZ=250 machine, under both throttled-time accountings
    for quota, threads, wl in [
        (50_000, 1, cb),
        (50_000, 2, cb),
        (100_000, 2, cb),
        (150_000, 2, cb),
        (100_000, 4, cb),
        (150_000, 3, cb),
        (50_000, 8, Workload(kind=REQUEST, burst_us=2_000, demand_millicores=750)),
        (100_000, 16, Workload(kind=REQUEST, burst_us=1_000, demand_millicores=1_500)),
    ]:
        for empty in (True, False):
            yield (
                f"calib-{quota // 1000}ms-{threads}t-{wl.kind}-empty{empty}",
                Scenario(2, threads, quota, seconds_us=3_000_000, account_empty_throttled=empty, workload=wl),
            )

    # the periodic calibration rows as calibrate runs them: pinned threads, an idle wake-up latency;
    # then as the model runs them for a 6.18 kernel (bursts that read their CPU clock charged at once,
    # throttled threads back as wake-ups), and each switch alone
    def periodic(burst: int, demand: int, syscalls: bool = False) -> Workload:
        return Workload(
            kind=REQUEST,
            burst_us=burst,
            demand_millicores=demand,
            fixed_bursts=True,
            fixed_sleeps=True,
            wake_spread=False,
            frequent_syscalls=syscalls,
        )

    for quota, threads, burst, demand in [(100_000, 4, 5_000, 1_200), (150_000, 32, 2_000, 1_800)]:
        yield (
            f"calib-fixed-{threads}t-wake90",
            Scenario(
                2,
                threads,
                quota,
                seconds_us=3_000_000,
                account_empty_throttled=False,
                wake_latency_us=90,
                workload=periodic(burst, demand),
            ),
        )
    for quota, threads, burst, demand in [(100_000, 4, 5_000, 1_200), (40_000, 8, 2_000, 600)]:
        for syscalls, task in [(True, True), (True, False), (False, True)]:
            yield (
                f"calib-fixed-{threads}t-syscalls{syscalls}-task{task}",
                Scenario(
                    2,
                    threads,
                    quota,
                    seconds_us=3_000_000,
                    account_empty_throttled=False,
                    task_based_throttle=task,
                    wake_latency_us=90,
                    wake_cpu_us=19,
                    sleep_cpu_us=6,
                    workload=periodic(burst, demand, syscalls),
                ),
            )
    # unpinned threads at a 6.18 kernel (issue 39's bias grid): waking threads move to idle CPUs, a
    # throttled one included, as idle as the host leaves them
    for permille in (1000, 300, 0):
        yield (
            f"bias-unpinned-700m-4t-idle{permille}",
            Scenario(
                2,
                4,
                70_000,
                seconds_us=3_000_000,
                account_empty_throttled=False,
                task_based_throttle=True,
                wake_latency_us=60,
                wake_cpu_us=39,
                sleep_cpu_us=6,
                idle_cpu_permille=permille,
                workload=Workload(
                    kind=REQUEST,
                    burst_us=500,
                    demand_millicores=1_000,
                    fixed_bursts=True,
                    fixed_sleeps=True,
                    frequent_syscalls=True,
                ),
            ),
        )
    # PF203's and its fixtures' cases as it simulates them (2 simulated seconds, the request as the
    # demand, the calibrated CPU per wake-up), and the same without a wake-up cost
    for limit_m, threads in [(1500, 200), (1000, 64), (1500, 1), (1000, 50), (500, 8), (750, 10)]:
        yield (f"pf203-{limit_m}m-{threads}t", container_scenario(limit_m, 256, threads, 2, limit_m))
        yield (
            f"pf203-{limit_m}m-{threads}t-no-wakeup-cost",
            container_scenario(limit_m, 256, threads, 2, limit_m, wakeup_cost_us=0),
        )


def _grid_scenario(rng: random.Random, limit_m: int | None, cpus: int, threads: int, kind: str) -> Scenario:
    period = rng.choice([100_000, 100_000, 100_000, 50_000, 20_000, 250_000])
    quota = Scenario.quota_for_limit(limit_m, period) if limit_m is not None else None
    burst = 0
    if quota is not None and rng.random() < 0.3:
        burst = rng.choice([quota, quota // 2, 1_000])
    demand = None
    load = 150
    r = rng.random()
    if r < 0.3:
        demand = rng.choice([2, 100, 1000, 5000, 64_000, threads * 1000, threads * 2000])
    elif r < 0.7:
        load = rng.choice([20, 50, 90, 100, 120, 150, 300])
    wl = Workload(
        kind=kind,
        burst_us=rng.choice([100, 500, 2_000, 2_000, 10_000, 50_000]),
        demand_millicores=demand,
        load_percent=load,
        fixed_bursts=rng.random() < 0.25,
        wake_spread=rng.random() < 0.8,
    )
    return Scenario(
        cpus=cpus,
        threads=threads,
        quota_us=quota,
        period_us=period,
        burst_us=burst,
        seconds_us=max(period, rng.choice([500_000, 1_000_000, 1_000_000, 1_500_000])),
        seed=rng.randrange(1_000_000),
        hz=rng.choice([100, 250, 250, 300, 1000]),
        slice_us=rng.choice([5_000, 5_000, 5_000, 1_000, 10_000]),
        min_runtime_us=rng.choice([1_000, 1_000, 1_000, 0, 3_000]),
        slack_us=rng.choice([5_000, 5_000, 1_000]),
        min_expiration_us=rng.choice([2_000, 2_000, 0]),
        pre_5_4_expiry=rng.random() < 0.3,
        account_empty_throttled=rng.random() < 0.6,
        workload=wl,
    )


LIMITS = [100, 250, 500, 1000, 1500, 2000, 3300, 4000, 8000, 16_000]
CPUS = [1, 2, 3, 4, 8, 16, 32, 64, 128, 256]
THREADS = [1, 2, 4, 8, 16, 50, 100, 200, 400]


def _grid():
    """Corners (limit, CPUs, threads, kind) and random points, each with random other settings."""
    rng = random.Random(GRID_SEED)
    n = 0
    for limit_m in (100, 1500, 16_000, None):
        for cpus in (1, 4, 256):
            for threads in (1, 200, 400):
                for kind in (CPU_BOUND, REQUEST):
                    n += 1
                    yield f"grid-{n:03d}", _grid_scenario(rng, limit_m, cpus, threads, kind)
    for _ in range(GRID_SIZE):
        limit_m = None if rng.random() < 0.08 else rng.choice(LIMITS + [rng.randrange(100, 16_001)])
        kind = CPU_BOUND if rng.random() < 0.3 else REQUEST
        n += 1
        yield f"grid-{n:03d}", _grid_scenario(rng, limit_m, rng.choice(CPUS), rng.choice(THREADS), kind)


def write() -> None:
    cases = []
    seen = set()
    for name, sc in [*_named_scenarios(), *_grid()]:
        if sc in seen:  # the benchmark's and some tests' scenarios are the same
            continue
        seen.add(sc)
        r = simulate(sc)
        if name.startswith("grid-") and r.events > MAX_EVENTS:
            continue
        cases.append({"name": name, "scenario": dataclasses.asdict(sc), "result": result_to_dict(r)})
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names))
    doc = {"period_fields": PERIOD_FIELDS, "cases": cases}
    with open(GOLDEN, "w", encoding="utf-8") as f:
        # one case per line keeps diffs readable
        f.write('{"period_fields": ' + json.dumps(PERIOD_FIELDS) + ',\n "cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    assert _load() == json.loads(json.dumps(doc))  # tuples read back as lists
    print(f"{GOLDEN}: {len(cases)} cases")


if __name__ == "__main__":
    sys.exit(write())
