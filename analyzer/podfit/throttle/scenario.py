"""Frozen inputs and outputs of the CFS bandwidth-control simulator.

All times are integer nanoseconds inside the simulator (the kernel's unit); the dataclasses take the
kernel's tunables in the units the kernel exposes them (microseconds for ``cpu.cfs_*_us`` and the
``sched_cfs_bandwidth_slice_us`` sysctl, HZ for the tick). CPU amounts are integer millicores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..facts import CFS_PERIOD_US, CFS_SLICE_US

__all__ = [
    "CPU_BOUND",
    "REQUEST",
    "Workload",
    "Scenario",
    "PeriodStats",
    "Result",
    "JAVA_SERVER_THREADS",
    "JAVA_SERVER_BURST_US",
    "JAVA_SERVER_LOAD_PERCENT",
    "WAKEUP_COST_US",
    "wakeup_cpu",
]

CPU_BOUND = "cpu-bound"
REQUEST = "request"

# Defaults of the request-serving model, representing a multi-threaded Java application server such
# as the study's Tomcat container (Weathervane small2): Tomcat's connector defaults to a pool of 200
# worker threads, each request is a short burst of CPU work (a couple of milliseconds of servlet
# work), and the benchmark drives the container past its CPU limit (the limit is meant to be the
# bottleneck; the study's figures are from the periods of highest load), so the offered CPU demand
# defaults to 1.5 times the limit: the threads would use 1.5 × limit if nothing held them back.
JAVA_SERVER_THREADS = 200
JAVA_SERVER_BURST_US = 2_000
JAVA_SERVER_LOAD_PERCENT = 150

# The CPU a thread uses at each burst's wake-up besides the burst's work (µs): the system calls of
# going to sleep and waking, the clock reads and, in a virtual machine, the exits these cause. The
# kernel calibration measures it per row (lab/calibrate/: the threads' CPU outside their busy loops
# over the bursts); this is the median of its 99 bursty row readings in the saved tables of
# 2026-11-23 and 24 (a range of 9-61 µs: more after longer sleeps on an idle CPU), which
# lab/calibrate/test_calibrate.py recomputes from the data. Without it a load offered at exactly its
# quota (400m, 8 threads, 2 ms bursts, 38 ms sleeps) throttles in 2 of 50 periods, the kernel in 44;
# with it in 43-47 (seeds 0-4).
WAKEUP_COST_US = 20
# Of each wake-up's CPU, the part after the work while the thread goes to sleep (µs); the rest runs
# before the work. The calibration's split, from sched_switch traces (NOTEBOOK.md).
SLEEP_CPU_US = 6


def wakeup_cpu(cost_us: int) -> tuple[int, int]:
    """A wake-up cost (µs of CPU per burst) as the :class:`Scenario` fields that carry it,
    ``(wake_cpu_us, sleep_cpu_us)``, split as the calibration splits its measured cost: up to 6 µs
    after the work, the rest before it."""
    if cost_us < 0:
        raise ValueError("the wake-up cost must not be negative")
    sleep = min(SLEEP_CPU_US, cost_us)
    return cost_us - sleep, sleep


@dataclass(frozen=True)
class Workload:
    """What the container's threads do.

    ``kind`` is :data:`CPU_BOUND` (every thread always runnable) or :data:`REQUEST` (each thread
    sleeps, wakes with a burst of CPU work, runs it to completion, sleeps again: a closed loop, like
    a worker thread of an app server taking requests from simulated users).

    For :data:`REQUEST`: ``burst_us`` is the mean CPU work of one burst (exponentially distributed,
    or exactly ``burst_us`` when ``fixed_bursts``); ``demand_millicores`` is the CPU the threads would
    use together if nothing held them back (``None``: ``load_percent`` of the container's CPU limit,
    or of one CPU when there is no limit). The mean sleep of
    a thread between bursts follows from both: ``burst × (threads × 1000 / demand − 1)``; a demand of
    ``threads × 1000`` or more makes every thread busy all the time. Sleep times are exponential, or
    exactly that mean with ``fixed_sleeps`` (a periodic worker; its first sleep is a random phase).
    ``burst_samples_us`` / ``sleep_samples_us``: a given distribution, each burst (sleep) drawn
    uniformly from these values (e.g. measured ones); sleep samples replace the demand-derived sleep.
    ``wake_spread`` (default on) lets a waking thread move to an idle CPU when its previous CPU
    is busy with another thread of the container, as the kernel's wake-up placement does.
    ``frequent_syscalls``: the threads enter the kernel every few microseconds while they run (a
    loop of system calls, like the calibration's busy loop reading its thread CPU clock, whose every
    read runs ``update_curr``), so the kernel charges their CPU to the quota as it is used and stops
    a CPU the moment its runtime runs out and the pool is empty. Off (the default: computation in
    user space), the CPU is charged at the scheduler tick, and a CPU overruns its runtime until then.
    """

    kind: str = REQUEST
    burst_us: int = JAVA_SERVER_BURST_US
    demand_millicores: int | None = None
    load_percent: int = JAVA_SERVER_LOAD_PERCENT
    fixed_bursts: bool = False
    wake_spread: bool = True
    fixed_sleeps: bool = False
    burst_samples_us: tuple[int, ...] = ()
    sleep_samples_us: tuple[int, ...] = ()
    frequent_syscalls: bool = False

    def __post_init__(self) -> None:
        if self.kind not in (CPU_BOUND, REQUEST):
            raise ValueError(f"workload kind must be {CPU_BOUND!r} or {REQUEST!r}, not {self.kind!r}")
        if self.burst_us <= 0:
            raise ValueError("burst_us must be positive")
        if self.demand_millicores is not None and self.demand_millicores <= 0:
            raise ValueError("demand_millicores must be positive")
        if self.load_percent <= 0:
            raise ValueError("load_percent must be positive")
        if any(b <= 0 for b in self.burst_samples_us) or any(d < 0 for d in self.sleep_samples_us):
            raise ValueError("burst samples must be positive and sleep samples not negative")

    def demand_for(self, limit_millicores: int | None) -> int:
        """The offered CPU demand in millicores for a container with this limit."""
        if self.demand_millicores is not None:
            return self.demand_millicores
        return (limit_millicores if limit_millicores is not None else 1000) * self.load_percent // 100


@dataclass(frozen=True)
class Scenario:
    """One simulated cgroup: its CFS bandwidth settings, the node, the threads and the kernel.

    ``groups``: several thread groups in one container, each ``(threads, Workload)`` (their threads
    sum to ``threads``); without it every thread does ``workload``.
    ``quota_us`` ``None`` means no CPU limit (``cfs_quota_us = -1``): nothing is throttled.
    ``burst_us`` is ``cpu.cfs_burst_us`` (Linux 5.14+): unused quota carried over, up to this much.
    ``hz`` is the kernel's tick rate; runtime is charged to a CPU at ticks (and when its thread sleeps
    or another thread wakes on it), so a CPU can overrun its local runtime by up to one tick, unless
    the thread running there makes ``frequent_syscalls``.
    ``pre_5_4_expiry`` reproduces kernels before 5.4 (commit de53fd7aedb1 removed it), where runtime
    left on a CPU expires when the period ends. ``account_empty_throttled`` is how kernels before 6.6
    (the study's 5.4 included) count throttled time: from the moment a CPU's group run queue is
    throttled, even with no thread waiting on it; later kernels start the clock only once a thread
    is queued there (commit 79462e8c879a). ``task_based_throttle`` is how Linux 6.18 and later stop
    a throttled CPU's threads: each leaves the queue on its way back to user space, as a sleeper
    with its lag, and comes back as a wake-up when the CPU is unthrottled, the last stopped first,
    with a fresh deadline; before, the threads wait in the queue and the running one resumes.
    ``wake_latency_us``: the time from a thread's wake-up on
    an idle CPU until it runs there (the CPU leaving its idle state; in a virtual machine the host
    resuming the halted vCPU, tens of microseconds); a thread waking on a CPU that is running
    another thread of the group is queued at once. ``wake_cpu_us`` and ``sleep_cpu_us``: the CPU a
    request thread uses at each wake-up besides its burst's work: returning from the sleep before the
    work starts (it counts in the burst's wait, and so lengthens the cycle), and after the work until
    the thread is off the CPU (the next burst still arrives a sleep after the work ended); both are
    charged to the group like the work. In a program they are the system calls, the clock reads and,
    in a virtual machine, the exits these cause; 0 unless given (an ideal machine).
    ``wake_cpu_sd_us``: how much ``wake_cpu_us`` varies from burst to burst (its standard
    deviation): each burst's is drawn from a gamma distribution with that mean and this deviation;
    0: every burst the same. ``wake_latency_spread_us``: how much the CPUs' idle wake-up latencies
    differ within a run: each CPU's is ``wake_latency_us`` plus an offset drawn once per run, normal
    with a standard deviation of this over √2 (so the difference between two CPUs' has this one);
    0: every CPU the same. Periodic workers on two CPUs whose latencies differ have cycles of
    different lengths, so the phase between the CPUs drifts.
    ``wake_latency_by_idle``: how the idle wake-up latency grows with how long the CPU was idle, as
    ``(idle_us, permille)`` points with the idle times increasing: a CPU idle for ``idle_us``
    takes ``permille`` thousandths of its ``wake_latency_us`` to run a thread woken on it
    (interpolated on the logarithm of the idle time between points; in proportion to it below the
    first, the last point's above the last); empty: the same latency however long the CPU was idle.
    On a virtual machine a vCPU halted only briefly resumes sooner (``lab/calibrate`` measures the
    curve with the timer wake-ups ``wake_latency_us`` is measured with, after 3 ms).
    ``other_tasks``: ``(cpu, start_us, end_us)`` intervals in which tasks outside the group held a
    CPU (the machine's own services, kernel threads); the group's threads do not run there, and a
    thread they took the CPU from goes back to its queue, so that EEVDF picks afresh when they end.
    Measured on a real machine from ``sched_stat_runtime`` (the kernel calibration, ``lab/calibrate/``); empty
    unless given (a dedicated machine).
    ``idle_cpu_permille``: the chance, per thousand, that a CPU where no thread of the group is
    runnable is idle when a thread wakes (the kernel's idle-CPU search moves a waking thread only to
    an idle CPU; on a host whose other work fills the time the group leaves, it finds none and the
    thread stays where it slept); 1000 unless given (a CPU without the group's threads is idle).
    """

    cpus: int
    threads: int
    quota_us: int | None
    period_us: int = CFS_PERIOD_US
    burst_us: int = 0
    seconds_us: int = 10_000_000
    seed: int = 0
    hz: int = 250
    slice_us: int = CFS_SLICE_US  # sched_cfs_bandwidth_slice_us
    min_runtime_us: int = 1_000  # min_cfs_rq_runtime: kept on a CPU when its last thread sleeps
    slack_us: int = 5_000  # cfs_bandwidth_slack_period
    min_expiration_us: int = 2_000  # min_bandwidth_expiration
    pre_5_4_expiry: bool = False
    account_empty_throttled: bool = True
    task_based_throttle: bool = False
    wake_latency_us: int = 0  # how long an idle CPU takes to run a thread woken on it
    wake_cpu_us: int = 0  # CPU a thread runs after each wake-up before its burst's work
    sleep_cpu_us: int = 0  # CPU a thread runs after each burst's work before it sleeps
    wake_cpu_sd_us: int = 0  # standard deviation of wake_cpu_us from burst to burst
    wake_latency_spread_us: int = 0  # standard deviation of the difference of two CPUs' wake_latency_us
    wake_latency_by_idle: tuple[tuple[int, int], ...] = ()  # (idle_us, permille of wake_latency_us)
    workload: Workload = field(default_factory=Workload)
    groups: tuple[tuple[int, Workload], ...] = ()  # (threads, workload) per thread group
    other_tasks: tuple[tuple[int, int, int], ...] = ()  # (cpu, start_us, end_us): CPU held by others
    idle_cpu_permille: int = 1000  # chance a CPU without the group's runnable threads is idle at a wake-up

    def __post_init__(self) -> None:
        if self.cpus < 1:
            raise ValueError("cpus must be at least 1")
        if self.threads < 1:
            raise ValueError("threads must be at least 1")
        if self.groups and (sum(n for n, _ in self.groups) != self.threads or any(n < 1 for n, _ in self.groups)):
            raise ValueError("thread groups must each have a thread and together the scenario's threads")
        if self.quota_us is not None and self.quota_us < 1_000:
            raise ValueError("the kernel's smallest quota is 1000 us")
        if not 1_000 <= self.period_us <= 1_000_000:
            raise ValueError("the period must be between 1 ms and 1 s (the kernel's bounds)")
        if self.burst_us < 0 or (self.quota_us is not None and self.burst_us > self.quota_us):
            raise ValueError("burst must be between 0 and the quota (the kernel's bounds)")
        if self.seconds_us < self.period_us:
            raise ValueError("simulate at least one period")
        if self.hz not in (100, 250, 300, 1000):
            raise ValueError("HZ must be one of the kernel's choices: 100, 250, 300, 1000")
        if self.wake_latency_us < 0:
            raise ValueError("wake_latency_us must not be negative")
        if self.wake_cpu_us < 0 or self.sleep_cpu_us < 0:
            raise ValueError("wake_cpu_us and sleep_cpu_us must not be negative")
        if self.wake_cpu_sd_us < 0 or self.wake_latency_spread_us < 0:
            raise ValueError("wake_cpu_sd_us and wake_latency_spread_us must not be negative")
        if not all(type(i) is int and type(m) is int for i, m in self.wake_latency_by_idle):
            raise ValueError("wake_latency_by_idle points are whole (idle_us, permille) pairs")
        idle_points = [i for i, _ in self.wake_latency_by_idle]
        if any(i <= 0 for i in idle_points) or idle_points != sorted(set(idle_points)):
            raise ValueError("wake_latency_by_idle needs positive idle times, increasing")
        if any(m < 0 for _, m in self.wake_latency_by_idle):
            raise ValueError("wake_latency_by_idle permilles must not be negative")
        if any(not 0 <= c < self.cpus or not 0 <= a < b for c, a, b in self.other_tasks):
            raise ValueError(
                "other_tasks intervals must be (cpu, start_us, end_us) on a CPU of the scenario, start before end"
            )
        if not 0 <= self.idle_cpu_permille <= 1000:
            raise ValueError("idle_cpu_permille must be between 0 and 1000")
        if self.slice_us < 1 or self.min_runtime_us < 0 or self.slack_us < 1 or self.min_expiration_us < 0:
            raise ValueError("kernel tunables must be positive")

    @property
    def thread_groups(self) -> tuple[tuple[int, Workload], ...]:
        """The thread groups: ``groups``, or all threads doing ``workload``."""
        return self.groups or ((self.threads, self.workload),)

    @staticmethod
    def quota_for_limit(limit_millicores: int, period_us: int = CFS_PERIOD_US) -> int:
        """``cpu.cfs_quota_us`` the kubelet writes for a CPU limit (at least the kernel's 1 ms)."""
        return max(1_000, limit_millicores * period_us // 1000)

    @property
    def limit_millicores(self) -> int | None:
        if self.quota_us is None:
            return None
        return self.quota_us * 1000 // self.period_us

    @property
    def slices_per_period(self) -> int | None:
        """How many whole slices the quota holds (PF202's measure)."""
        if self.quota_us is None:
            return None
        return self.quota_us // self.slice_us


@dataclass(frozen=True)
class PeriodStats:
    """One period of the timeline (times in ns, summed over CPUs like cpu.stat)."""

    index: int
    start_ns: int
    cpu_used_ns: int
    throttled_ns: int
    throttled: bool  # counted in nr_throttled at this period's end
    throttled_cpus: int  # CPUs on the throttled list when the period ended
    pool_left_ns: int  # quota still in the global pool when the period ended
    active: bool  # the period timer was running (counted in nr_periods)


@dataclass(frozen=True)
class Result:
    scenario: Scenario
    nr_periods: int
    nr_throttled: int
    throttled_time_ns: int
    cpu_used_ns: int
    nr_bursts: int  # cfs burst: periods that used carried-over quota
    burst_time_ns: int
    bursts_done: int  # request bursts completed
    burst_delay_p50_ns: int | None
    burst_delay_p99_ns: int | None
    throttle_events: int  # times a CPU's group run queue was throttled
    max_throttled_cpus: int
    periods: tuple[PeriodStats, ...]
    score: int
    events: int  # simulator events processed (for benchmarks)
    burst_delay_mean_ns: int | None = None  # the mean time a completed burst waited
    # the same waits timed from the thread's wake-up: from when it first ran after its sleep, so the
    # CPU's idle wake-up latency, a wait for the CPU and a throttle met on arrival are left out, and
    # so is the wake-up's own CPU (as a program that reads the clock on waking times its bursts)
    wake_delay_p50_ns: int | None = None
    wake_delay_p99_ns: int | None = None
    wake_delay_mean_ns: int | None = None

    @property
    def duration_ns(self) -> int:
        return self.scenario.seconds_us * 1000

    @property
    def quota_ns_total(self) -> int | None:
        """Quota the cgroup was given over the whole run (quota × simulated periods)."""
        s = self.scenario
        if s.quota_us is None:
            return None
        return s.quota_us * 1000 * (s.seconds_us // s.period_us)

    @property
    def throttled_per_period_ns(self) -> float:
        return self.throttled_time_ns / max(1, self.nr_periods)

    @property
    def cpu_used_per_second(self) -> float:
        """Average CPUs used (CPU-seconds per second)."""
        return self.cpu_used_ns / self.duration_ns
