"""The CFS bandwidth-control simulator: closed forms, the study's case, kernel mechanisms, CLI."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from podfit.commands.throttle import command, parse_duration_us
from podfit.throttle import CPU_BOUND, REQUEST, Scenario, Workload, simulate
from podfit.throttle.kernel import kernel_flags
from podfit.throttle.score import throttle_ratio

MS = 1_000_000  # ns


def cpu_bound(cpus, threads, quota_us, **kw):
    return simulate(Scenario(cpus=cpus, threads=threads, quota_us=quota_us, workload=Workload(kind=CPU_BOUND), **kw))


# --- closed form: CPU-bound, T <= C ------------------------------------------------------------


@pytest.mark.parametrize(
    "cpus,threads,limit_m",
    [(8, 1, 500), (8, 2, 1000), (8, 4, 1500), (16, 3, 2500), (4, 4, 3000), (8, 2, 4000), (32, 16, 8000)],
)
def test_closed_form_cpu_bound(cpus, threads, limit_m):
    period_us = 100_000
    quota_us = Scenario.quota_for_limit(limit_m, period_us)
    r = cpu_bound(cpus, threads, quota_us, seconds_us=5_000_000)
    expected_cpus = min(threads, limit_m / 1000)
    assert r.cpu_used_per_second == pytest.approx(expected_cpus, rel=0.05)
    demand_ns = threads * period_us * 1000
    quota_ns = quota_us * 1000
    if demand_ns > quota_ns:
        assert r.nr_throttled >= 0.95 * r.nr_periods
        # throttled time per period ≈ T·P − Q
        assert r.throttled_per_period_ns == pytest.approx(demand_ns - quota_ns, rel=0.05)
    else:
        assert r.nr_throttled == 0
        assert r.throttled_time_ns == 0


def test_nr_periods_counts_the_simulated_periods():
    r = cpu_bound(4, 2, 50_000, seconds_us=3_000_000)
    assert r.nr_periods == 30
    assert len(r.periods) == 30
    assert sum(p.cpu_used_ns for p in r.periods) <= r.cpu_used_ns


# --- the study's case ---------------------------------------------------------------------------


def test_study_256_cpus_throttle_30x_more_than_4_vcpus():
    quota = Scenario.quota_for_limit(1500)
    assert quota == 150_000
    big = simulate(Scenario(cpus=256, threads=200, quota_us=quota))
    small = simulate(Scenario(cpus=4, threads=200, quota_us=quota))
    assert big.throttled_time_ns >= 30 * small.throttled_time_ns
    # the 4-vCPU node can never throttle more than its 4 CPUs × 100 ms per period
    assert small.throttled_per_period_ns <= 4 * 100 * MS
    # seconds of throttled time per period on the big node, summed over CPUs (study: about 5 s)
    assert big.throttled_per_period_ns > 1_000 * MS
    assert big.score > 90 > 50 > small.score


def test_study_ratio_holds_across_seeds():
    quota = Scenario.quota_for_limit(1500)
    for seed in (1, 2):
        big = simulate(Scenario(cpus=256, threads=200, quota_us=quota, seed=seed, seconds_us=3_000_000))
        small = simulate(Scenario(cpus=4, threads=200, quota_us=quota, seed=seed, seconds_us=3_000_000))
        assert big.throttled_time_ns >= 30 * small.throttled_time_ns


# --- kernel mechanisms --------------------------------------------------------------------------


def test_deterministic_for_a_seed_and_different_across_seeds():
    a = simulate(Scenario(cpus=64, threads=50, quota_us=100_000, seed=7, seconds_us=2_000_000))
    b = simulate(Scenario(cpus=64, threads=50, quota_us=100_000, seed=7, seconds_us=2_000_000))
    c = simulate(Scenario(cpus=64, threads=50, quota_us=100_000, seed=8, seconds_us=2_000_000))
    assert a == b
    assert (a.throttled_time_ns, a.cpu_used_ns) != (c.throttled_time_ns, c.cpu_used_ns)


def test_no_limit_never_throttles():
    r = simulate(Scenario(cpus=8, threads=16, quota_us=None, seconds_us=1_000_000, workload=Workload(kind=CPU_BOUND)))
    assert r.nr_periods == 0 and r.throttled_time_ns == 0 and r.score == 0
    assert r.cpu_used_per_second == pytest.approx(8, rel=0.01)


def test_throttled_time_exceeds_wall_time_when_many_cpus_wait():
    # 64 CPU-bound threads under a 1-CPU limit: about 63 CPUs wait every period.
    r = cpu_bound(64, 64, 100_000, seconds_us=2_000_000)
    assert r.throttled_time_ns > 10 * r.duration_ns
    assert r.max_throttled_cpus >= 60


def test_coarser_ticks_overrun_more():
    # Runtime is charged at ticks: with HZ=100 a CPU runs up to 10 ms past its runtime before the
    # kernel notices, with HZ=1000 only 1 ms; many CPUs each overrun once per unthrottle.
    coarse = cpu_bound(128, 128, 150_000, seconds_us=2_000_000, hz=100)
    fine = cpu_bound(128, 128, 150_000, seconds_us=2_000_000, hz=1000)
    assert coarse.cpu_used_ns > fine.cpu_used_ns
    assert fine.cpu_used_per_second == pytest.approx(1.5, rel=0.05)


def test_pre_5_4_slice_expiry_loses_quota_on_many_cpus():
    # Many light threads each leave 1 ms on their CPU; before 5.4 it expired at the period's end.
    wl = Workload(kind=REQUEST, burst_us=500, demand_millicores=1500)
    kw = dict(cpus=128, threads=100, quota_us=200_000, seconds_us=3_000_000, workload=wl)
    new = simulate(Scenario(**kw))
    old = simulate(Scenario(pre_5_4_expiry=True, **kw))
    assert old.cpu_used_ns < new.cpu_used_ns or old.throttled_time_ns > new.throttled_time_ns


def test_cfs_burst_carries_unused_quota():
    # Bursty demand that averages below the quota but peaks above it throttles less with cfs burst.
    wl = Workload(kind=REQUEST, burst_us=20_000, demand_millicores=900, fixed_bursts=True)
    kw = dict(cpus=8, threads=8, quota_us=100_000, seconds_us=5_000_000, workload=wl)
    plain = simulate(Scenario(**kw))
    burst = simulate(Scenario(burst_us=100_000, **kw))
    assert plain.nr_bursts == 0 and plain.burst_time_ns == 0
    assert burst.nr_bursts > 0 and burst.burst_time_ns > 0
    assert burst.throttled_time_ns < plain.throttled_time_ns


def test_empty_cfs_rq_accounting_modern_kernels_count_less():
    kw = dict(cpus=256, threads=200, quota_us=150_000, seconds_us=2_000_000)
    old = simulate(Scenario(account_empty_throttled=True, **kw))
    new = simulate(Scenario(account_empty_throttled=False, **kw))
    assert new.throttled_time_ns < old.throttled_time_ns
    assert new.nr_throttled == old.nr_throttled


def test_idle_group_stops_the_period_timer():
    # Two short bursts per second: most periods see no activity, the timer stops, nr_periods is low.
    wl = Workload(kind=REQUEST, burst_us=1_000, demand_millicores=2)
    r = simulate(Scenario(cpus=4, threads=1, quota_us=50_000, seconds_us=5_000_000, workload=wl))
    assert 0 < r.nr_periods < 40
    assert r.nr_throttled == 0


def test_burst_delays_grow_with_throttling():
    quota = Scenario.quota_for_limit(1500)
    free = simulate(Scenario(cpus=256, threads=200, quota_us=None, seconds_us=2_000_000))
    held = simulate(Scenario(cpus=256, threads=200, quota_us=quota, seconds_us=2_000_000))
    assert free.burst_delay_p99_ns == 0  # a thread per CPU, nothing holds it back
    assert held.burst_delay_p99_ns > 50 * MS


@settings(max_examples=25, deadline=None)
@given(
    cpus=st.integers(1, 64),
    threads=st.integers(1, 80),
    limit_m=st.integers(100, 8000),
    hz=st.sampled_from([100, 250, 1000]),
    cpu_bound_kind=st.booleans(),
    pre54=st.booleans(),
    burst=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_never_more_cpu_than_quota_plus_slack(cpus, threads, limit_m, hz, cpu_bound_kind, pre54, burst, seed):
    quota_us = Scenario.quota_for_limit(limit_m)
    sc = Scenario(
        cpus=cpus,
        threads=threads,
        quota_us=quota_us,
        burst_us=quota_us if burst else 0,
        seconds_us=1_000_000,
        hz=hz,
        seed=seed,
        pre_5_4_expiry=pre54,
        workload=Workload(kind=CPU_BOUND if cpu_bound_kind else REQUEST, burst_us=3_000),
    )
    r = simulate(sc)
    periods = sc.seconds_us // sc.period_us
    tick_ns = 1_000_000_000 // hz
    # handed out: the initial pool, one refill per period (capped at quota + burst); on top of that a
    # CPU can run at most one tick past its runtime before it is charged (a debt repaid later).
    bound = quota_us * 1000 * (periods + 1) + sc.burst_us * 1000 + cpus * (tick_ns + 1)
    assert r.cpu_used_ns <= bound
    assert r.cpu_used_ns <= min(cpus, threads) * r.duration_ns
    assert 0 <= r.nr_throttled <= r.nr_periods <= periods
    assert 0 <= r.score <= 100


def test_score_definition():
    assert throttle_ratio(0, 150 * MS, 10) == 0
    r = cpu_bound(8, 2, 100_000, seconds_us=2_000_000)  # waits as long as its quota: x ≈ 1
    assert throttle_ratio(r.throttled_time_ns, 100 * MS, r.nr_periods) == pytest.approx(1, rel=0.05)
    assert r.score == 33


def test_scenario_validates_kernel_bounds():
    with pytest.raises(ValueError):
        Scenario(cpus=4, threads=1, quota_us=500)  # below the kernel's 1 ms
    with pytest.raises(ValueError):
        Scenario(cpus=4, threads=1, quota_us=100_000, hz=123)
    with pytest.raises(ValueError):
        Workload(kind="idle")


# --- CLI ----------------------------------------------------------------------------------------


def test_parse_duration():
    assert parse_duration_us("100ms") == 100_000
    assert parse_duration_us("0.1s") == 100_000
    assert parse_duration_us("2500") == 2_500
    with pytest.raises(ValueError):
        parse_duration_us("0.5us")
    with pytest.raises(ValueError):
        parse_duration_us("10 minutes")


def run(*args):
    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def test_cli_json_fields():
    res = run("--limit", "1500m", "--cpus", "4", "--threads", "8", "--seconds", "1", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    for key in (
        "nr_periods",
        "nr_throttled",
        "throttled_time_s",
        "cpu_used_s",
        "quota_s",
        "burst_delay_p50_ms",
        "burst_delay_p99_ms",
        "score",
    ):
        assert key in doc
    assert doc["nr_periods"] == 10
    assert doc["quota_s"] == pytest.approx(1.5)
    assert doc["cpu_used_s"] <= doc["quota_s"] + 4 * 0.004 + 0.15
    assert len(doc["periods"]) == 10


def test_cli_cpu_bound_closed_form_and_timeline():
    res = run("--limit", "1", "--cpus", "8", "--threads", "2", "--cpu-bound", "--seconds", "2", "--timeline", "5")
    assert res.exit_code == 0, res.output
    assert "nr_throttled      20" in res.output or "nr_throttled      19" in res.output
    assert "timeline (first 5 of 20 periods" in res.output
    assert res.output.count(" T ") >= 4


def test_cli_same_seed_same_output():
    a = run("--limit", "0.5", "--cpus", "16", "--threads", "32", "--seconds", "1", "--seed", "3", "--format", "json")
    b = run("--limit", "0.5", "--cpus", "16", "--threads", "32", "--seconds", "1", "--seed", "3", "--format", "json")
    assert a.output == b.output


def test_cli_cpu_manager_has_nothing_to_throttle():
    res = run("--limit", "2", "--cpus", "256", "--cpu-manager", "--format", "json")
    doc = json.loads(res.output)
    assert doc["cpu_manager"] is True and doc["nr_throttled"] == 0 and doc["score"] == 0
    assert "nothing to throttle" in doc["message"]
    text = run("--limit", "2", "--cpus", "256", "--cpu-manager")
    assert "nothing to throttle" in text.output


def test_cli_cpu_manager_fractional_limit_stays_on_quota():
    res = CliRunner().invoke(
        command, ["--limit", "1500m", "--cpus", "64", "--cpu-manager", "--seconds", "1", "--format", "json"]
    )
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["cpu_manager"] is False and doc["nr_throttled"] > 0


@pytest.mark.parametrize(
    "args",
    [["--cpus", "4"], ["--limit", "abc", "--cpus", "4"], ["--limit", "1", "--cpus", "4", "--period", "100 parsecs"]],
)
def test_cli_usage_errors(args):
    res = CliRunner().invoke(command, args)
    assert res.exit_code == 2


def test_kernel_flags_by_release():
    def flags(pre54, empty, task):
        return {"pre_5_4_expiry": pre54, "account_empty_throttled": empty, "task_based_throttle": task}

    assert kernel_flags("4.19.0") == flags(True, True, False)
    assert kernel_flags("5.4.0-100-generic") == flags(False, True, False)
    assert kernel_flags("6.5") == flags(False, True, False)
    assert kernel_flags("6.6.0") == flags(False, False, False)
    assert kernel_flags("6.17.9") == flags(False, False, False)
    assert kernel_flags("6.18.44-fc-v657") == flags(False, False, True)
    assert kernel_flags("10.0") == flags(False, False, True)
    # the switches are Scenario's fields, so a release's flags build its scenario as they are
    assert Scenario(cpus=2, threads=2, quota_us=50_000, **kernel_flags("4.19.0")).pre_5_4_expiry


def test_cli_kernel_sets_the_switches_of_its_release():
    """--kernel RELEASE simulates as the switches kernel_flags gives for it, spelt out, would; the
    releases differ in what they report; a release without a major.minor version is a usage error."""
    base = ["--limit", "1500m", "--cpus", "8", "--threads", "16", "--seconds", "1", "--format", "json"]
    old = run(*base, "--kernel", "4.19.0").output
    assert old == run(*base, "--pre-5.4-expiry").output
    mid = run(*base, "--kernel", "6.8.0-45-generic").output
    assert mid == run(*base, "--no-empty-throttle-accounting").output
    new = run(*base, "--kernel", "6.18.44").output
    assert new == run(*base, "--no-empty-throttle-accounting", "--task-based-throttle").output
    assert len({old, mid, new}) == 3
    res = CliRunner().invoke(command, [*base, "--kernel", "latest"])
    assert res.exit_code == 2 and "--kernel 'latest'" in res.output


def test_fixed_sleeps_closed_form_without_limit():
    """A periodic worker: fixed 2 ms bursts, fixed sleeps for a 500m demand → 2 ms work per 4 ms
    cycle per thread; without a limit, 4 threads on 4 CPUs use exactly their demand and never wait."""
    wl = Workload(burst_us=2_000, demand_millicores=2_000, fixed_bursts=True, fixed_sleeps=True)
    r = simulate(Scenario(cpus=4, threads=4, quota_us=None, seconds_us=2_000_000, workload=wl))
    assert r.cpu_used_per_second == pytest.approx(2.0, rel=0.01)
    assert r.burst_delay_p99_ns == 0 and r.nr_throttled == 0


def test_fixed_sleeps_under_a_limit_never_exceed_the_quota():
    wl = Workload(burst_us=5_000, demand_millicores=1_200, fixed_bursts=True, fixed_sleeps=True)
    r = simulate(Scenario(cpus=2, threads=4, quota_us=100_000, seconds_us=3_000_000, workload=wl))
    assert r.cpu_used_ns <= (100_000 * 1000 + 2 * 4_000_000) * 30
    assert r.nr_throttled > 0


def test_one_thread_group_is_the_plain_workload():
    wl = Workload(burst_us=2_000, demand_millicores=1_500)
    a = simulate(Scenario(cpus=16, threads=40, quota_us=100_000, seconds_us=1_000_000, workload=wl))
    b = simulate(Scenario(cpus=16, threads=40, quota_us=100_000, seconds_us=1_000_000, groups=((40, wl),)))
    assert (a.throttled_time_ns, a.nr_throttled, a.cpu_used_ns, a.burst_delay_p99_ns) == (
        b.throttled_time_ns,
        b.nr_throttled,
        b.cpu_used_ns,
        b.burst_delay_p99_ns,
    )


def test_thread_groups_add_up_without_a_limit():
    """Two CPU-bound threads and eight request threads offering 1 CPU, on 8 CPUs without a limit: 3 CPUs."""
    groups = ((2, Workload(kind=CPU_BOUND)), (8, Workload(burst_us=1_000, demand_millicores=1_000)))
    r = simulate(Scenario(cpus=8, threads=10, quota_us=None, seconds_us=4_000_000, groups=groups))
    assert r.cpu_used_per_second == pytest.approx(3.0, rel=0.05)


def test_thread_groups_must_add_up():
    with pytest.raises(ValueError):
        Scenario(cpus=2, threads=3, quota_us=None, groups=((1, Workload()), (1, Workload())))


def test_bursts_and_sleeps_from_a_given_distribution():
    """Bursts of 1 or 3 ms and sleeps of 2 ms: each thread is busy half the time (mean 2 of 4 ms)."""
    wl = Workload(burst_samples_us=(1_000, 3_000), sleep_samples_us=(2_000,))
    r = simulate(Scenario(cpus=4, threads=4, quota_us=None, seconds_us=4_000_000, workload=wl))
    assert r.cpu_used_per_second == pytest.approx(2.0, rel=0.03)
    assert r.burst_delay_p99_ns == 0


def test_threads_on_one_cpu_share_it():
    """EEVDF time-shares the group's threads queued on a CPU in turns of the base slice (0.7 ms on
    one CPU): two 10 ms bursts that arrive together both complete within a slice of 20 ms (each
    waits about 10 ms), not one after 10 ms and one after 20 ms (first come, first served)."""
    wl = Workload(burst_us=10_000, fixed_bursts=True, sleep_samples_us=(0,), wake_spread=False)
    r = simulate(Scenario(cpus=1, threads=2, quota_us=None, seconds_us=1_000_000, workload=wl))
    assert r.bursts_done == 100
    assert 9_300_000 <= r.burst_delay_p50_ns <= r.burst_delay_p99_ns <= 10_700_000


def test_idle_cpu_wake_latency():
    """A thread waking on an idle CPU runs after the CPU's wake-up latency: a lone periodic worker
    waits exactly that long for every burst, and without it not at all."""
    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,), wake_spread=False)
    sc = Scenario(cpus=1, threads=1, quota_us=None, seconds_us=1_000_000, workload=wl)
    assert simulate(sc).burst_delay_p99_ns == 0
    r = simulate(replace(sc, wake_latency_us=80))
    assert r.burst_delay_p50_ns == r.burst_delay_p99_ns == 80_000


def test_idle_wake_latency_by_idle_time():
    """With ``wake_latency_by_idle`` a lone periodic worker (1 ms work, then its CPU idle for 4 ms)
    waits the curve's share of the CPU's latency at 4 ms: between points it is interpolated on the
    logarithm of the idle time, past the last point it is the last; a curve of 1000 everywhere is
    no curve, and the curve must be increasing in idle time, its shares not negative."""
    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,), wake_spread=False)
    sc = Scenario(cpus=1, threads=1, quota_us=None, seconds_us=1_000_000, workload=wl, wake_latency_us=80)
    flat = simulate(sc)
    assert simulate(replace(sc, wake_latency_by_idle=((1_000, 1_000), (50_000, 1_000)))).burst_delay_p50_ns == (
        flat.burst_delay_p50_ns
    )
    # 4 ms is the geometric middle of 2 and 8 ms: half-way between 500 and 900 thousandths
    r = simulate(replace(sc, wake_latency_by_idle=((2_000, 500), (8_000, 900))))
    assert r.burst_delay_p50_ns == r.burst_delay_p99_ns == 56_000
    r = simulate(replace(sc, wake_latency_by_idle=((1_000, 250), (2_000, 500))))  # past the last point
    assert r.burst_delay_p50_ns == 40_000
    r = simulate(replace(sc, wake_latency_by_idle=((8_000, 1_000),)))  # before the first: in proportion
    assert r.burst_delay_p50_ns == pytest.approx(40_000, abs=1)
    with pytest.raises(ValueError):
        replace(sc, wake_latency_by_idle=((2_000, 500), (1_000, 400)))
    with pytest.raises(ValueError):
        replace(sc, wake_latency_by_idle=((0, 500),))
    with pytest.raises(ValueError):
        replace(sc, wake_latency_by_idle=((1_000, -1),))
    with pytest.raises(ValueError):
        replace(sc, wake_latency_by_idle=((1_000, float("nan")),))


def test_cpu_besides_the_work_at_wake_up_and_at_sleep():
    """The CPU a thread uses per burst besides its work is charged like the work. Run on waking it
    delays the work (it counts in the burst's wait) and lengthens the cycle; run going to sleep it
    does neither: the next burst still arrives one sleep after the work ended. A lone periodic worker
    (1 ms work, 4 ms sleep) over 1 s, no quota."""
    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,), wake_spread=False)
    sc = Scenario(cpus=1, threads=1, quota_us=None, seconds_us=1_000_000, workload=wl, seed=3)
    base = simulate(sc)
    assert base.burst_delay_p99_ns == 0

    wake = simulate(replace(sc, wake_cpu_us=50))
    assert wake.burst_delay_p50_ns == wake.burst_delay_p99_ns == 50_000
    assert wake.bursts_done < base.bursts_done  # each cycle is 5.05 ms instead of 5
    # CPU used: every completed burst's work and cost, plus what the burst under way at the end ran
    assert 0 <= wake.cpu_used_ns - wake.bursts_done * 1_050_000 < 1_050_000

    asleep = simulate(replace(sc, sleep_cpu_us=50))
    assert asleep.burst_delay_p99_ns == 0
    assert asleep.bursts_done == base.bursts_done
    assert asleep.cpu_used_ns - base.cpu_used_ns == asleep.bursts_done * 50_000

    with pytest.raises(ValueError):
        replace(sc, sleep_cpu_us=-1)


def test_cpu_besides_the_work_varies_from_burst_to_burst():
    """With ``wake_cpu_sd_us`` each burst's CPU on waking is drawn (gamma: the given mean and
    deviation), so a lone periodic worker's waits spread around the same mean: 50 us on average
    with a deviation of 40, a median below the mean and a 99th percentile far above it; the CPU
    used still averages 1.05 ms per burst. Over 10 s, no quota."""
    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,), wake_spread=False)
    sc = Scenario(cpus=1, threads=1, quota_us=None, seconds_us=10_000_000, workload=wl, wake_cpu_us=50)
    r = simulate(replace(sc, wake_cpu_sd_us=40))
    assert r.burst_delay_mean_ns == pytest.approx(50_000, rel=0.05)
    assert r.burst_delay_p50_ns < 45_000 and r.burst_delay_p99_ns > 150_000
    assert (r.cpu_used_ns - r.bursts_done * 1_000_000) / r.bursts_done == pytest.approx(50_000, rel=0.05)
    same = simulate(sc)  # without the deviation every burst takes the same 50 us
    assert same.burst_delay_p50_ns == same.burst_delay_p99_ns == 50_000
    with pytest.raises(ValueError):
        replace(sc, wake_cpu_sd_us=-1)


def test_cpus_wake_up_latencies_differ_within_a_run():
    """With ``wake_latency_spread_us`` each CPU's idle wake-up latency is drawn once per run: over
    400 runs the two CPUs' differ by 20 us (standard deviation) around the given 80 us; a lone
    periodic worker on each CPU then waits its own CPU's latency for every burst."""
    from podfit.throttle.sim import _Sim

    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,), wake_spread=False)
    sc = Scenario(cpus=2, threads=2, quota_us=None, seconds_us=1_000_000, workload=wl, wake_latency_us=80)
    assert [c.wake_latency for c in _Sim(sc).cpus] == [80_000, 80_000]
    drawn = [[c.wake_latency for c in _Sim(replace(sc, seed=s, wake_latency_spread_us=20)).cpus] for s in range(400)]
    diffs = [b - a for a, b in drawn]
    assert statistics.pstdev(diffs) == pytest.approx(20_000, rel=0.1)
    assert statistics.mean(x for pair in drawn for x in pair) == pytest.approx(80_000, abs=1_500)
    r = simulate(replace(sc, seed=3, wake_latency_spread_us=20))
    lo, hi = sorted(drawn[3])
    assert lo != hi and r.burst_delay_p99_ns == hi
    assert r.burst_delay_mean_ns == pytest.approx((lo + hi) / 2, abs=1_000)


def test_cpu_besides_the_work_adds_to_the_demand_under_a_limit():
    """At its quota, a group whose threads use CPU besides their work is throttled more: 8 threads
    of 2 ms bursts offering exactly 400m under a 400m limit, with 50 us on waking and 50 going to
    sleep (5 % more demand), over 10 s."""
    wl = Workload(burst_us=2_000, demand_millicores=400)
    sc = Scenario(cpus=2, threads=8, quota_us=40_000, seconds_us=10_000_000, workload=wl)
    a, b = simulate(sc), simulate(replace(sc, wake_cpu_us=50, sleep_cpu_us=50))
    assert b.cpu_used_ns > a.cpu_used_ns
    assert b.throttled_time_ns > a.throttled_time_ns and b.nr_throttled > a.nr_throttled


def test_shared_cpu_stretches_a_periodic_workers_cycle():
    """Two periodic workers pinned to one CPU whose bursts overlap stay in step (both finish late
    together), so each cycle is longer than burst + sleep and the pair uses less CPU than offered."""
    wl = Workload(burst_us=5_000, fixed_bursts=True, sleep_samples_us=(5_000,), wake_spread=False)
    r = simulate(Scenario(cpus=1, threads=2, quota_us=None, seconds_us=1_000_000, workload=wl))
    # offered: 2 x 5 / (5 + 5) = 1 CPU; in step, each cycle is 10 ms shared + 5 ms sleep
    assert r.cpu_used_per_second < 0.9


@pytest.mark.parametrize(("per_cpu", "sleep_us", "kernel_ms"), [(4, 8_667, 2.71), (8, 19_333, 3.44)])
def test_periodic_workers_cluster_as_in_the_kernel(per_cpu, sleep_us, kernel_ms):
    """Periodic workers sharing a CPU fall into clusters whose bursts take turns (1.4 ms first
    pieces, then the second pieces in the same order), each burst waiting for all the others'
    first pieces. The kernel (6.18, 2 vCPUs, no quota, 4 runs of 3 s) keeps them: a mean wait of
    2.71 ms per 2 ms burst with 4 workers per CPU, 3.44 with 8. A model that re-picks at a tick
    inside a protected slice, or lets the last runnable thread leave with a negative lag, breaks
    them up (1.61 and 2.46). Over 8 seeds the model's mean must be within a quarter of the kernel's."""
    waits = []
    for seed in range(8):
        wl = Workload(burst_us=2_000, fixed_bursts=True, sleep_samples_us=(sleep_us,), wake_spread=False)
        sc = Scenario(
            cpus=2, threads=2 * per_cpu, quota_us=None, seconds_us=3_000_000, seed=seed, wake_latency_us=75, workload=wl
        )
        r = simulate(sc)
        waits.append(r.burst_delay_mean_ns / 1e6)
    assert abs(sum(waits) / len(waits) - kernel_ms) <= 0.25 * kernel_ms


def _pinned_periodic(threads, quota_us, burst_us, demand, seconds_us, seed, wake, **switches):
    """Periodic workers pinned as the calibration pins them, on a 2-CPU HZ=250 machine with 6.18's
    throttled-time accounting; ``wake`` is (idle wake-up latency, CPU on waking) in µs, and
    ``switches`` are frequent_syscalls and task_based_throttle."""
    wl = Workload(
        burst_us=burst_us,
        demand_millicores=demand,
        fixed_bursts=True,
        fixed_sleeps=True,
        wake_spread=False,
        frequent_syscalls=switches["frequent_syscalls"],
    )
    sc = Scenario(
        cpus=2,
        threads=threads,
        quota_us=quota_us,
        seconds_us=seconds_us,
        seed=seed,
        hz=250,
        account_empty_throttled=False,
        task_based_throttle=switches["task_based_throttle"],
        wake_latency_us=wake[0],
        wake_cpu_us=wake[1],
        sleep_cpu_us=6,
        workload=wl,
    )
    return simulate(sc)


@pytest.mark.parametrize(("frequent_syscalls", "within"), [(True, True), (False, False)])
def test_threads_in_and_out_of_the_kernel_are_stopped_at_once(frequent_syscalls, within):
    """A thread that enters the kernel every few microseconds (the calibration's busy loop reads its
    thread CPU clock) has its CPU charged as it is used, so its CPU is throttled the moment the pool
    runs dry, not at the next tick. The kernel (6.18, 2 vCPUs, HZ=250): two threads, one per CPU,
    51 ms bursts and 49.99 ms sleeps under a 1-CPU quota (1.01 CPUs offered), 15 s runs with the
    calibration program's seeds 0-7: 91-141 throttled periods of 150, 121 on average, short stops at
    the end of a period. Charged at once the model's mean over 16 seeds is within 15 % of that;
    charged at ticks each CPU runs on into debt, is stopped less often, and the mean is under half."""
    throttled = [
        _pinned_periodic(
            2,
            100_000,
            51_000,
            1_010,
            15_000_000,
            seed,
            (85, 50),
            frequent_syscalls=frequent_syscalls,
            task_based_throttle=True,
        ).nr_throttled
        for seed in range(16)
    ]
    assert (abs(sum(throttled) / len(throttled) - 121) <= 0.15 * 121) is within


@pytest.mark.parametrize(("task_based", "within"), [(True, True), (False, False)])
def test_throttled_threads_come_back_as_wakeups_from_6_18(task_based, within):
    """Linux 6.18 stops a throttled CPU's threads one by one on their way back to user space and
    queues them again, as wake-ups with fresh deadlines, when the CPU is unthrottled; the thread that
    was running does not resume first. Its kernel (2 vCPUs, HZ=250), 8 periodic workers with 2 ms
    bursts offered 600m under a 400m limit, four per CPU: 56.0 and 54.5 ms throttled per period
    (two tables of 5 runs of 3 s). Over 4 seeds the model with 6.18's requeue is within 15 % of 55;
    keeping the threads queued, as before 6.18, it spreads their bursts apart and counts a fifth
    more (the waits per burst are the same: 13.7 ms in the model, 13.8 in the kernel)."""
    per_period = []
    for seed in range(4):
        r = _pinned_periodic(
            8, 40_000, 2_000, 600, 3_000_000, seed, (80, 19), frequent_syscalls=True, task_based_throttle=task_based
        )
        per_period.append(r.throttled_time_ns / 1e6 / r.nr_periods)
    assert (abs(sum(per_period) / len(per_period) - 55) <= 0.15 * 55) is within


def test_other_tasks_take_the_cpu_from_a_busy_thread():
    """A CPU-bound thread with no limit runs all the time but for the 30 ms another task holds its
    CPU; an interval on the other CPU, where no thread of the group runs, takes nothing."""
    base = Scenario(cpus=2, threads=1, quota_us=None, seconds_us=1_000_000, workload=Workload(kind=CPU_BOUND))
    assert simulate(base).cpu_used_ns == 1_000_000_000
    held = replace(base, other_tasks=((0, 100_000, 130_000), (1, 200_000, 900_000)))
    assert simulate(held).cpu_used_ns == 970_000_000


def test_other_tasks_while_throttled_change_nothing():
    """Under 50 ms per 100 ms, a thread throttled from 50 ms on does not miss the CPU another task
    holds from 60 to 90 ms: every period it still uses its quota."""
    sc = Scenario(cpus=1, threads=1, quota_us=50_000, seconds_us=1_000_000, hz=1000, workload=Workload(kind=CPU_BOUND))
    held = replace(sc, other_tasks=tuple((0, p + 60_000, p + 90_000) for p in range(0, 1_000_000, 100_000)))
    a, b = simulate(sc), simulate(held)
    assert (b.cpu_used_ns, b.nr_throttled) == (a.cpu_used_ns, a.nr_throttled) == (500_000_000, 10)


def test_a_burst_waits_for_the_other_task_to_leave():
    """One thread on one CPU, fixed 5 ms bursts every 20 ms: another task holding the CPU for 2 ms
    delays the burst it meets by exactly those 2 ms (when it starts inside a burst or when the burst
    arrives), and delays nothing when it falls in a sleep."""
    wl = Workload(kind=REQUEST, burst_us=5_000, demand_millicores=250, fixed_bursts=True, fixed_sleeps=True)
    sc = Scenario(cpus=1, threads=1, quota_us=None, seconds_us=100_000, workload=wl)
    assert simulate(sc).burst_delay_p99_ns == 0
    delays = {simulate(replace(sc, other_tasks=((0, t, t + 2_000),))).burst_delay_p99_ns for t in range(0, 20_000, 500)}
    assert all(0 <= d <= 2_000_000 for d in delays)
    assert max(delays) == 2_000_000
    assert 0 in delays


def test_other_tasks_must_be_on_the_scenarios_cpus():
    with pytest.raises(ValueError, match="other_tasks"):
        Scenario(cpus=2, threads=1, quota_us=None, other_tasks=((2, 0, 10),))
    with pytest.raises(ValueError, match="other_tasks"):
        Scenario(cpus=2, threads=1, quota_us=None, other_tasks=((0, 10, 10),))


def test_an_other_task_starting_as_the_period_refills_stops_the_unthrottled_thread():
    """Under 50 ms per 100 ms, a CPU-bound thread is throttled from 50 to 100 ms. Another task holds
    its CPU from 60 ms and, in a second interval, from 100 to 130 ms: the thread unthrottled at 100
    ms does not run beside it but from 130 ms, so it is throttled again from 180 ms, 20 ms before
    the period ends: 70 ms in all."""
    sc = Scenario(cpus=1, threads=1, quota_us=50_000, seconds_us=200_000, hz=1000, workload=Workload(kind=CPU_BOUND))
    r = simulate(replace(sc, other_tasks=((0, 60_000, 100_000), (0, 100_000, 130_000))))
    assert (r.cpu_used_ns, r.throttled_time_ns) == (100_000_000, 70_000_000)


# --- the wake-up cost and latency from the wake-up ----------------------------------------------

AT_QUOTA = [  # the issue-39 reading: 400m, 8 unpinned threads, 2 ms bursts, 38 ms sleeps, 5 s on 6.18
    "--limit", "400m", "--cpus", "2", "--threads", "8", "--demand", "400m", "--burst-work", "2ms",
    "--fixed-bursts", "--fixed-sleeps", "--kernel", "6.18", "--hz", "250", "--frequent-syscalls",
    "--seconds", "5", "--seeds", "1", "--format", "json",
]  # fmt: skip


def test_a_load_at_its_quota_throttles_as_the_kernel_does_with_the_wakeup_cost():
    """The kernel throttled 44 of 50 periods; without the CPU each wake-up costs the model throttled
    almost none (the demand is exactly the quota), with the calibrated cost within 15 % (seeds 0-4)."""

    def throttled(*extra):
        return [json.loads(run(*AT_QUOTA, "--seed", str(s), *extra).output)["nr_throttled"] for s in range(5)]

    assert max(throttled("--wakeup-cost", "0")) <= 5
    with_cost = throttled()
    assert statistics.mean(with_cost) == pytest.approx(44, rel=0.15)
    assert json.loads(run(*AT_QUOTA).output)["wakeup_cost_us"] == 20


def test_wakeup_cost_is_split_as_the_calibration_splits_it():
    from podfit.throttle.scenario import WAKEUP_COST_US, wakeup_cpu

    assert wakeup_cpu(WAKEUP_COST_US) == (14, 6) and wakeup_cpu(4) == (0, 4) and wakeup_cpu(0) == (0, 0)
    with pytest.raises(ValueError):
        wakeup_cpu(-1)
    # the CLI's cost is the scenario's: the same result through the Python API
    doc = json.loads(run(*AT_QUOTA, "--wakeup-cost", "30us").output)
    sc = Scenario(
        cpus=2, threads=8, quota_us=40_000, seconds_us=5_000_000, hz=250, wake_cpu_us=24, sleep_cpu_us=6,
        **kernel_flags("6.18"),
        workload=Workload(burst_us=2_000, demand_millicores=400, fixed_bursts=True, fixed_sleeps=True,
                          frequent_syscalls=True),
    )  # fmt: skip
    assert doc["nr_throttled"] == simulate(sc).nr_throttled


def test_cpu_bound_threads_pay_no_wakeup_cost():
    a = run("--limit", "1", "--cpus", "4", "--threads", "2", "--cpu-bound", "--seconds", "1", "--format", "json")
    b = run("--limit", "1", "--cpus", "4", "--threads", "2", "--cpu-bound", "--seconds", "1", "--format", "json",
            "--wakeup-cost", "0")  # fmt: skip
    assert a.output == b.output and json.loads(a.output)["wakeup_cost_us"] == 0


@pytest.mark.parametrize("value", ["-5us", "5 parsecs", "0.5us"])
def test_wakeup_cost_must_be_a_duration(value):
    res = CliRunner().invoke(command, ["--limit", "1", "--cpus", "4", "--wakeup-cost", value])
    assert res.exit_code == 2 and "--wakeup-cost" in res.output


def test_latency_from_the_wakeup_leaves_out_the_wait_to_run():
    """A lone periodic worker on an idle CPU with an 80 µs wake-up latency and 30 µs of CPU per
    wake-up: from the intended start each burst waits both, from the wake-up (its first run) nothing."""
    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,), wake_spread=False)
    sc = Scenario(cpus=1, threads=1, quota_us=None, seconds_us=1_000_000, workload=wl, wake_latency_us=80,
                  wake_cpu_us=30)  # fmt: skip
    r = simulate(sc)
    assert r.burst_delay_p50_ns == r.burst_delay_p99_ns == 110_000
    assert r.wake_delay_p50_ns == r.wake_delay_p99_ns == r.wake_delay_mean_ns == 0


def test_latency_from_the_wakeup_is_never_above_the_one_from_the_intended_start():
    for sc in (
        Scenario(cpus=2, threads=8, quota_us=40_000, seconds_us=2_000_000, wake_cpu_us=14, sleep_cpu_us=6),
        Scenario(cpus=4, threads=32, quota_us=150_000, seconds_us=2_000_000, wake_latency_us=60,
                 workload=Workload(demand_millicores=1_800, fixed_bursts=True, fixed_sleeps=True)),
    ):  # fmt: skip
        r = simulate(sc)
        assert r.wake_delay_p50_ns <= r.burst_delay_p50_ns and r.wake_delay_p99_ns <= r.burst_delay_p99_ns
        assert r.wake_delay_mean_ns <= r.burst_delay_mean_ns
        # a burst can still wait after it first ran: preempted by another thread of the group, or
        # stopped by a throttle before it completes
        assert r.wake_delay_mean_ns > 0


def test_cli_reports_latency_from_both_starts():
    text = run(*AT_QUOTA[:-2]).output
    assert "from the intended start" in text and "from the wake-up (20 us CPU per wake-up)" in text
    doc = json.loads(run(*AT_QUOTA).output)
    assert doc["wake_delay_p99_ms"] <= doc["burst_delay_p99_ms"]


# --- uncertainty: the range over seeds, the calibrated error of the nearest configuration ---------


def test_cli_reports_the_median_of_its_seeds_and_their_range():
    base = ["--limit", "1500m", "--cpus", "256", "--threads", "200", "--demand", "1500m", "--seconds", "2"]
    one = [json.loads(run(*base, "--seed", str(s), "--seeds", "1", "--format", "json").output) for s in range(5)]
    doc = json.loads(run(*base, "--format", "json").output)
    spread = doc["over_seeds"]
    assert spread["seeds"] == [0, 1, 2, 3, 4]
    scores = sorted(d["score"] for d in one)
    assert doc["score"] == scores[2] and spread["score"] == [scores[0], scores[-1]]
    assert doc["seed"] == spread["median_seed"] and one[doc["seed"]]["score"] == doc["score"]
    assert spread["nr_throttled"] == [min(d["nr_throttled"] for d in one), max(d["nr_throttled"] for d in one)]
    assert "over seeds 0–4 (this run, seed" in run(*base).output
    assert "over seeds" not in run(*base, "--seeds", "1").output


def test_the_nearest_calibrated_configuration_and_its_error():
    from podfit.throttle.calibration import CALIBRATED, nearest

    row = next(r for r in CALIBRATED if r.name == "400m/8 fixed 2ms")
    exact = Scenario(
        cpus=2, threads=8, quota_us=40_000,
        workload=Workload(demand_millicores=600, fixed_bursts=True, fixed_sleeps=True),
    )  # fmt: skip
    n = nearest(exact)
    assert n is not None and n.row == row and n.distance == 0 and not n.below_calibrated_slices
    assert n.as_dict()["throttled_time_error_percent"] == -2
    # the study's server on 256 CPUs: 30 slices for 256 CPUs, where nothing was calibrated
    far = nearest(Scenario(cpus=256, threads=200, quota_us=150_000))
    assert far is not None and far.below_calibrated_slices and far.distance > 3
    assert "none was measured there" in far.text()
    assert nearest(Scenario(cpus=2, threads=2, quota_us=None)) is None
    doc = json.loads(run("--limit", "400m", "--cpus", "2", "--threads", "8", "--demand", "600m", "--fixed-bursts",
                         "--fixed-sleeps", "--seconds", "1", "--format", "json").output)  # fmt: skip
    assert doc["calibration"]["nearest"] == "400m/8 fixed 2ms"


def _placement_sim(**kw):
    """Two CPUs: a thread of the group running on CPU 0, CPU 1 throttled with a stopped thread of the
    group, and a third thread (last on CPU 0) asleep."""
    from podfit.throttle.sim import _Sim

    wl = Workload(burst_us=1_000, fixed_bursts=True, sleep_samples_us=(4_000,))
    sc = Scenario(cpus=2, threads=3, quota_us=50_000, seconds_us=1_000_000, workload=wl, task_based_throttle=True, **kw)
    sim = _Sim(sc)
    t0, t1, t2 = sim.threads
    for t in (t0, t1):
        sim.new_burst(t, 0)
        sim.enqueue(t, 0)
    cpu1 = sim.cpus[1]
    sim.bw.pool = 0
    cpu1.runtime = 0
    sim.charge(cpu1, 0)  # the pool is empty: nothing to take
    sim.throttle(cpu1, 0)
    assert cpu1.throttled and cpu1.queue == [t1] and sim.cpus[0].queue == [t0] and t2.cpu is sim.cpus[0]
    return sim, t2


def test_a_waking_thread_goes_to_a_throttled_cpu_which_is_idle_to_the_kernel():
    """select_idle_sibling counts a CPU idle when nothing is runnable there: a throttled CPU's threads
    of the group are not (6.18 stops them off its queue), so a thread whose CPU runs another thread of
    the group wakes onto the throttled CPU and waits there, its CPU's clock already running."""
    sim, t2 = _placement_sim()
    sim.on_wake(t2, 10_000)
    assert t2.cpu is sim.cpus[1] and t2 in sim.cpus[1].queue and t2 not in sim.cpus[0].queue


def test_a_waking_thread_stays_where_no_cpu_is_idle():
    """Where the host's other work holds the other CPU (idle_cpu_permille 0, or a given other task
    holding it), the kernel finds no idle CPU and the thread is queued where it slept."""
    sim, t2 = _placement_sim(idle_cpu_permille=0)
    sim.on_wake(t2, 10_000)
    assert t2.cpu is sim.cpus[0] and t2 in sim.cpus[0].queue
    sim, t2 = _placement_sim(other_tasks=((1, 0, 100),))
    sim.on_busy(sim.cpus[1], 0, 100_000)
    sim.on_wake(t2, 10_000)
    assert t2.cpu is sim.cpus[0] and t2 in sim.cpus[0].queue
    with pytest.raises(ValueError, match="idle_cpu_permille"):
        Scenario(cpus=2, threads=1, quota_us=None, idle_cpu_permille=1001)


def test_fewer_idle_cpus_fewer_moves_at_wake_up():
    """Unpinned threads move at a wake-up only to an idle CPU: 4 periodic workers on 2 CPUs at 700m
    move less often, and are throttled less, the less idle the host's CPUs are; at 0 they never
    leave the CPUs they started on, as pinned threads."""
    from podfit.throttle import sim as simmod

    def moves(permille, spread=True):
        wl = Workload(burst_us=500, fixed_bursts=True, fixed_sleeps=True, sleep_samples_us=(1_500,), wake_spread=spread)
        sc = Scenario(cpus=2, threads=4, quota_us=70_000, seconds_us=1_000_000, workload=wl, idle_cpu_permille=permille)

        class Counting(simmod._Sim):
            moved = 0

            def on_wake(self, t, now):
                before = t.cpu
                super().on_wake(t, now)
                self.moved += t.cpu is not before

        s = Counting(sc)
        s.start()
        s.run()
        return s.moved, s.result(sc).throttled_time_ns

    quiet, half, busy = moves(1000), moves(500), moves(0)
    assert quiet[0] > half[0] > busy[0] == 0
    assert busy == moves(1000, spread=False)
