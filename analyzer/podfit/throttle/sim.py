"""Discrete-event simulation of CFS bandwidth control (``kernel/sched/fair.c``).

One cgroup with a CFS quota runs ``threads`` threads on ``cpus`` logical CPUs. The simulator keeps,
per CPU, the group's run queue (``cfs_rq``) with its local ``runtime_remaining``, and for the group
the global pool (``cfs_b->runtime``), the list of throttled run queues, the period timer and the
slack timer. It follows the kernel's functions step by step:

* ``__refill_cfs_bandwidth_runtime``: at each period the pool becomes ``min(pool + quota,
  quota + burst)`` (with ``burst = 0`` simply ``quota``); burst statistics as cpu.stat's
  ``nr_bursts`` / ``burst_usec``.
* ``__account_cfs_rq_runtime`` / ``assign_cfs_rq_runtime``: a CPU's local runtime is charged when the
  kernel calls ``update_curr``: at the scheduler tick (every 1/HZ s), when a thread sleeps, and
  when another thread is queued on a busy CPU; continuously for a thread with frequent system
  calls (each clock read runs it). When it is used up the CPU takes a slice (5 ms,
  ``sched_cfs_bandwidth_slice_us``, plus any debt) from the pool, or what is left of it.
* ``throttle_cfs_rq``: a CPU whose runtime is used up and finds the pool empty is throttled: its
  threads stop until runtime is handed to it, even while other CPUs hold unused slices.
* ``return_cfs_rq_runtime``: when a CPU's last thread of the group sleeps it gives back all but
  ``min_cfs_rq_runtime`` (1 ms) to the pool, and starts the 5 ms slack timer if the pool then holds
  more than a slice and CPUs are throttled (unless the period ends within 7 ms).
* ``do_sched_cfs_slack_timer`` / ``do_sched_cfs_period_timer`` / ``distribute_cfs_runtime``:
  throttled CPUs, oldest first, each get just enough runtime to pay their debt (+1 ns) and are
  unthrottled; ``nr_periods`` counts periods while the timer runs (it stops after an idle period),
  ``nr_throttled`` the periods that ended with a throttled CPU; ``throttled_time`` sums each CPU's
  throttled intervals, so it can exceed wall time.
* ``pre_5_4_expiry``: before Linux 5.4 runtime left on a CPU expired when the period ended.
* ``task_based_throttle`` (6.18, ``throttle_cfs_rq_work`` / ``tg_unthrottle_up``): a throttled CPU's
  threads leave its queue as sleepers, with their lags, and come back as wake-ups when it is
  unthrottled, the last stopped first (``requeue_stopped``).

Time sharing (EEVDF, ``pick_eevdf`` and friends): the group's threads queued on one CPU take turns.
Each has a vruntime (all weights are equal, so it advances with the CPU time the thread gets) and a
deadline, a base slice (``sysctl_sched_base_slice``: 0.70 ms × (1 + log2 CPUs), 1.4 ms on 2 CPUs)
after its vruntime when it asked. The CPU runs the eligible thread (vruntime at most the queue's
average) with the earliest deadline; a picked thread keeps the CPU until it has used its slice
(RUN_TO_PARITY) unless it is no longer eligible when another thread wakes; after its slice it runs on
only while it is eligible with the earliest deadline. A waking thread is placed with the lag it left
with (``place_entity``); a thread that sleeps while ahead of the average stays queued until it is
not (DELAY_DEQUEUE). The kernel notices a used-up slice at its next ``update_curr``; the model
assumes that is at once (as for the calibration's busy loop, which reads its thread CPU clock, and
with it calls ``update_curr``, every few microseconds), not at the next tick. With 2 ms bursts and
a 1.4 ms slice, a burst runs in two pieces; periodic workers whose bursts overlap settle a
second-piece apart and stay in step, each cycle longer by the shared wait.

A thread waking on an idle CPU runs after ``wake_latency_us`` (the CPU leaving its idle state): the
first of two periodic workers that share a CPU starts late and the second does not, so their bursts
drift together until they overlap. With ``wake_latency_spread_us`` each CPU's latency is drawn once
per run, so periodic workers on different CPUs drift against each other; with ``wake_cpu_sd_us``
the CPU a thread runs on waking is drawn per burst; with ``wake_latency_by_idle`` the latency
follows how long the CPU has been idle (since its last thread of the group slept).

Simplifications (documented in docs/throttling.md): a waking thread stays on its previous CPU when
no thread of the group is runnable there, otherwise goes to a random idle CPU (the kernel's
idle-sibling search), or stays if there is none; a CPU is idle to it when no thread of the group is
runnable there (a throttled CPU's are not), no given other task holds it, and, with
``idle_cpu_permille`` below 1000, by that chance (the host's other work holds it otherwise);
nothing else competes for the CPUs but the
``other_tasks`` given (intervals in which another task holds a CPU: the group's thread there goes
back to its queue and EEVDF picks afresh after); ticks of all CPUs are aligned with the period timer.

Structure: the state lives in slotted dataclasses, ``_Params`` (the scenario in nanoseconds),
``_Cpu`` (one CPU's ``cfs_rq``), ``_Thread``, ``_Bandwidth`` (``cfs_bandwidth``) and ``_Stats``
(cpu.stat and the timeline), held by ``_Sim`` with the event heap. Each step above is a method of
``_Sim`` (``refill``, ``take_slice``, ``account``, ``charge``, ``return_runtime``,
``arm_slack_timer``, ``throttle``, ``unthrottle``, ``distribute``, ``dispatch``, ``burst_done``;
EEVDF's ``best``, ``pick``, ``switch``, ``wakeup_preempt``, ``place``, ``update_deadline``,
``requeue_delayed``), called from the event handlers (``on_cpu``, ``on_wake`` and ``enqueue``,
``on_period``, ``on_slack``, ``on_busy`` and ``on_free``).
``simulate`` builds a fresh ``_Sim`` per call: its result depends on the scenario alone.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from heapq import heappop, heappush

from .scenario import CPU_BOUND, PeriodStats, Result, Scenario, Workload
from .score import score_result

__all__ = ["simulate"]

# Event kinds, also their priorities at equal times: the period timer first (a tick at the period
# boundary sees the new period), then the slack timer, then per-CPU accounting, then wake-ups, then
# threads queued on an idle CPU once it has woken up, then other tasks taking a CPU and leaving it.
_PERIOD, _SLACK, _CPU, _WAKE, _ENQ, _BUSY, _FREE = 0, 1, 2, 3, 4, 5, 6


def _percentile(sorted_vals: list[int], p: float) -> int | None:
    """Nearest-rank percentile."""
    if not sorted_vals:
        return None
    k = max(0, math.ceil(p * len(sorted_vals)) - 1)
    return sorted_vals[k]


def _curve_permille(curve: tuple[tuple[float, int], ...], idle_ns: int) -> int:
    """Scenario.wake_latency_by_idle at an idle time: interpolated on the logarithm of the idle time
    between points, in proportion to it below the first point, the last point's value above it."""
    if idle_ns <= 0:
        return 0
    x = math.log(idle_ns)
    x0, m0 = curve[0]
    if x <= x0:
        return round(m0 * math.exp(x - x0))
    for x1, m1 in curve[1:]:
        if x <= x1:
            return round(m0 + (m1 - m0) * (x - x0) / (x1 - x0))
        x0, m0 = x1, m1
    return m0


def _base_slice(cpus: int) -> int:
    """sysctl_sched_base_slice: 0.70 ms scaled by 1 + ilog2(CPUs), CPUs capped at 8 (the default
    logarithmic tunable scaling, ``get_update_sysctl_factor``)."""
    return 700_000 * (1 + (min(cpus, 8).bit_length() - 1))


@dataclass(frozen=True, slots=True)
class _Params:
    """The scenario in the simulator's units (ns), and the workload's rates."""

    cpus: int
    threads: int
    period: int
    end: int
    tick: int
    slice: int  # sched_cfs_bandwidth_slice
    min_runtime: int  # min_cfs_rq_runtime
    slack_period: int  # cfs_bandwidth_slack_period
    min_expiration: int  # min_bandwidth_expiration
    limited: bool  # a quota is set
    quota: int
    cap: int  # quota + burst: the most the pool holds after a refill
    pre54: bool
    count_empty: bool  # throttled time counts while no thread waits (before 6.6)
    task_throttle: bool  # threads leave a throttled CPU's queue and come back as wake-ups (6.18+)
    groups: tuple[_Group, ...]  # what the threads do, one entry per thread group
    group_of: tuple[int, ...]  # each thread's group
    base_slice: int  # sysctl_sched_base_slice: EEVDF's request size (ns)
    lag_limit: int  # update_entity_lag's clamp: base slice + one tick
    wake_latency: int  # how long an idle CPU takes to run a thread woken on it (ns)
    wake_cpu: int  # CPU a thread runs after a wake-up before its work (ns)
    sleep_cpu: int  # CPU a thread runs after its work while it goes to sleep (ns)
    # each burst's wake_cpu drawn from a gamma distribution of this shape and scale (mean wake_cpu,
    # standard deviation Scenario.wake_cpu_sd_us); shape 0: every burst the same
    wake_cpu_shape: float
    wake_cpu_scale: float
    latency_spread: int  # standard deviation of the difference of two CPUs' wake latencies (ns)
    # Scenario.wake_latency_by_idle with the idle times as natural logarithms of ns: (log, permille)
    latency_curve: tuple[tuple[float, int], ...]
    other_tasks: tuple[tuple[int, int, int], ...]  # (cpu, start, end) held by other tasks (ns)
    idle_permille: int  # chance a CPU without the group's runnable threads is idle at a wake-up

    @classmethod
    def of(cls, sc: Scenario) -> _Params:
        quota = sc.quota_us * 1000 if sc.quota_us is not None else 0
        groups = sc.thread_groups
        shape = (sc.wake_cpu_us / sc.wake_cpu_sd_us) ** 2 if sc.wake_cpu_sd_us and sc.wake_cpu_us else 0.0
        return cls(
            cpus=sc.cpus,
            threads=sc.threads,
            period=sc.period_us * 1000,
            end=sc.seconds_us * 1000,
            tick=1_000_000_000 // sc.hz,
            slice=sc.slice_us * 1000,
            min_runtime=sc.min_runtime_us * 1000,
            slack_period=sc.slack_us * 1000,
            min_expiration=sc.min_expiration_us * 1000,
            limited=sc.quota_us is not None,
            quota=quota,
            cap=quota + sc.burst_us * 1000,
            pre54=sc.pre_5_4_expiry,
            count_empty=sc.account_empty_throttled,
            task_throttle=sc.task_based_throttle,
            groups=tuple(_Group.of(wl, n, sc.limit_millicores) for n, wl in groups),
            group_of=tuple(i for i, (n, _) in enumerate(groups) for _ in range(n)),
            base_slice=_base_slice(sc.cpus),
            lag_limit=_base_slice(sc.cpus) + 1_000_000_000 // sc.hz,
            wake_latency=sc.wake_latency_us * 1000,
            wake_cpu=sc.wake_cpu_us * 1000,
            sleep_cpu=sc.sleep_cpu_us * 1000,
            wake_cpu_shape=shape,
            wake_cpu_scale=sc.wake_cpu_us * 1000 / shape if shape else 0.0,
            latency_spread=sc.wake_latency_spread_us * 1000,
            latency_curve=tuple((math.log(i * 1000), m) for i, m in sc.wake_latency_by_idle),
            other_tasks=tuple((c, a * 1000, b * 1000) for c, a, b in sc.other_tasks),
            idle_permille=sc.idle_cpu_permille,
        )


@dataclass(frozen=True, slots=True)
class _Group:
    """What the threads of one group do, in ns and rates."""

    cpu_bound: bool
    spread: bool  # waking threads move to a CPU without a thread of the group
    burst_mean: int
    fixed_bursts: bool
    fixed_sleeps: bool
    think_mean: int  # mean (or, with fixed_sleeps, exact) sleep between bursts (ns)
    inv_burst: float  # rate of the exponential burst length
    inv_think: float  # rate of the exponential sleep; 0: threads never sleep
    burst_samples: tuple[int, ...]  # bursts drawn uniformly from these (ns), when given
    sleep_samples: tuple[int, ...]  # sleeps drawn uniformly from these (ns), when given
    charged_at_once: bool  # frequent system calls: runtime charged as used, not at the tick

    @classmethod
    def of(cls, wl: Workload, threads: int, limit_millicores: int | None) -> _Group:
        cpu_bound = wl.kind == CPU_BOUND
        burst_mean = wl.burst_us * 1000
        demand = max(1, wl.demand_for(limit_millicores))
        think_mean = 0.0 if demand >= threads * 1000 else burst_mean * (threads * 1000 / demand - 1)
        return cls(
            cpu_bound=cpu_bound,
            spread=wl.wake_spread and not cpu_bound,
            burst_mean=burst_mean,
            fixed_bursts=wl.fixed_bursts,
            fixed_sleeps=wl.fixed_sleeps,
            think_mean=int(think_mean),
            inv_burst=1.0 / burst_mean,
            inv_think=1.0 / think_mean if think_mean > 0 else 0.0,
            burst_samples=tuple(max(1, b * 1000) for b in wl.burst_samples_us),
            sleep_samples=tuple(d * 1000 for d in wl.sleep_samples_us),
            charged_at_once=wl.frequent_syscalls,
        )


@dataclass(slots=True, eq=False)
class _Thread:
    """One thread of the group: its current burst and the CPU it last ran on."""

    index: int
    cpu: _Cpu  # where it last ran
    g: _Group  # what it does
    work: int = 0  # CPU work of the current burst (ns)
    work_left: int = 0
    arrival: int = 0  # when the current burst arrived
    started: int = -1  # when the thread first ran after the current burst arrived (-1: not yet)
    wake_cost: int = 0  # the current burst's CPU besides its work, before the work (ns)
    # EEVDF (all threads have the same weight, so virtual time runs at the speed of CPU time)
    v: int = 0  # vruntime
    dl: int = 0  # deadline: vruntime + base slice when the request was made
    vprot: int = 0  # the vruntime up to which it runs unpreempted once picked (RUN_TO_PARITY)
    vlag: int = 0  # the lag it left with, applied when it is placed again
    delayed: bool = False  # asleep but still queued (DELAY_DEQUEUE) until it is eligible


@dataclass(slots=True, eq=False)
class _Cpu:
    """The group's run queue (``cfs_rq``) on one CPU."""

    index: int
    queue: list[_Thread] = field(default_factory=list)  # the group's runnable threads here
    curr: _Thread | None = None  # the one picked to run (it runs unless the CPU is throttled)
    delayed: list[_Thread] = field(default_factory=list)  # sleeping, dequeue delayed (DELAY_DEQUEUE)
    stopped: list[_Thread] = field(default_factory=list)  # task-based throttle: in the order stopped
    vsum: int = 0  # the queued threads' vruntimes summed (queue and delayed): V = vsum / count
    vref: int = 0  # where a thread waking on an empty queue is placed
    waking: int = -1  # an idle CPU being woken up runs its first thread from this time
    wake_latency: int = 0  # how long this CPU takes to run a thread woken on it while idle (ns)
    idle_since: int = 0  # since when nothing ran: its last thread of the group slept, or another task left
    runtime: int = 0  # runtime_remaining (ns); negative: a debt
    throttled: bool = False
    throttled_since: int = -1  # throttled_clock; -1 when not counting
    running_since: int = -1  # the last update_curr while running; -1 when not running
    busy_until: int = -1  # another task holds the CPU until then
    version: int = 0  # bumped to cancel the CPU's pending event
    period_seq: int = 0  # pre-5.4: the period whose runtime the CPU holds


@dataclass(slots=True, eq=False)
class _Bandwidth:
    """The group's ``cfs_bandwidth``."""

    pool: int  # cfs_b->runtime
    snap: int  # runtime_snap: the pool after the last refill
    next_period: int  # when the period timer fires next
    idle: bool = False  # no runtime was asked for since the last period
    active: bool = False  # the period timer runs
    slack_armed: bool = False  # slack_started
    seq: int = 0  # pre-5.4: periods refilled (expires_seq)
    throttled: dict[_Cpu, None] = field(default_factory=dict)  # throttled_cfs_rq, oldest first


@dataclass(slots=True, eq=False)
class _Stats:
    """What cpu.stat and the timeline report, as the simulation goes."""

    used: int = 0  # CPU time charged
    throttled_time: int = 0  # closed throttled intervals, summed over CPUs
    throttle_events: int = 0
    nr_periods: int = 0
    nr_throttled: int = 0
    nr_bursts: int = 0
    burst_time: int = 0
    max_throttled: int = 0
    events: int = 0
    delays: list[int] = field(default_factory=list)  # one per completed burst, from its arrival
    wake_delays: list[int] = field(default_factory=list)  # the same, from the thread's first run
    periods: list[PeriodStats] = field(default_factory=list)
    period_start: int = 0
    used_before: int = 0  # used and throttled time at the start of the current period
    throttled_before: int = 0


class _Sim:
    """The simulation's state and its steps; :func:`simulate` builds one per scenario and runs it.

    The steps compare rather than call ``min()``/``max()``: the calls cost 10-25% of make bench-throttle.
    """

    __slots__ = ("bw", "cpus", "expo", "heap", "idle", "idle_pos", "p", "rng", "stats", "threads")

    def __init__(self, sc: Scenario) -> None:
        p = self.p = _Params.of(sc)
        self.rng = random.Random(sc.seed)
        self.expo = self.rng.expovariate
        self.cpus = [_Cpu(c, wake_latency=p.wake_latency) for c in range(p.cpus)]
        if p.latency_spread:
            # each CPU's idle wake-up latency is off the mean by its own draw, fixed for the run
            sd = p.latency_spread / math.sqrt(2)
            for cpu in self.cpus:
                cpu.wake_latency = max(0, p.wake_latency + int(self.rng.gauss(0, sd)))
        self.threads = [_Thread(t, self.cpus[t % p.cpus], p.groups[p.group_of[t]]) for t in range(p.threads)]
        # setting the quota fills the pool
        self.bw = _Bandwidth(pool=p.quota, snap=p.quota, next_period=p.period)
        self.stats = _Stats()
        self.heap: list[tuple[int, int, int, int]] = []  # (time, kind, CPU or thread, CPU version)
        # CPUs with no thread of the group (for wake placement), and each CPU's place in that list
        self.idle = list(range(p.cpus))
        self.idle_pos = list(range(p.cpus))

    # --- wake placement: the CPUs without a thread of the group ---

    def idle_remove(self, cpu: _Cpu) -> None:
        idle, pos = self.idle, self.idle_pos
        c = cpu.index
        i = pos[c]
        last = idle[-1]
        idle[i] = last
        pos[last] = i
        idle.pop()
        pos[c] = -1

    def idle_add(self, cpu: _Cpu) -> None:
        self.idle_pos[cpu.index] = len(self.idle)
        self.idle.append(cpu.index)

    # --- runtime: the pool and each CPU's local runtime ---

    def refill(self) -> None:
        """__refill_cfs_bandwidth_runtime: the pool gains a quota, up to quota + burst."""
        p, bw, st = self.p, self.bw, self.stats
        pool = bw.pool + p.quota
        d = bw.snap - pool  # more than a quota used: carried-over quota (cfs burst) was spent
        if d > 0:
            st.nr_bursts += 1
            st.burst_time += d
        if pool > p.cap:
            pool = p.cap
        bw.pool = bw.snap = pool
        if p.pre54:
            bw.seq += 1

    def take_slice(self, cpu: _Cpu) -> None:
        """assign_cfs_rq_runtime: top the CPU up to one slice from the pool (pays debt first)."""
        p = self.p
        if not p.limited:
            cpu.runtime = p.slice
            return
        bw = self.bw
        bw.active = True  # start_cfs_bandwidth
        pool = bw.pool
        if pool > 0:
            amt = p.slice - cpu.runtime
            if amt > pool:
                amt = pool
            bw.pool = pool - amt
            bw.idle = False
            cpu.runtime += amt
        if p.pre54:
            cpu.period_seq = bw.seq

    def account(self, cpu: _Cpu) -> None:
        """The tail of __account_cfs_rq_runtime after charging: expire (pre-5.4), then take a slice if used up."""
        if self.p.pre54 and cpu.runtime > 0 and cpu.period_seq != self.bw.seq:
            cpu.runtime = 0  # expire_cfs_rq_runtime: the period this runtime belonged to is over
        if cpu.runtime <= 0 and not cpu.throttled:
            self.take_slice(cpu)

    def charge(self, cpu: _Cpu, now: int) -> None:
        """update_curr: the CPU time used up to now is charged to the CPU's runtime and to the running
        thread (its work and its vruntime)."""
        s = cpu.running_since
        if s >= 0 and now > s:
            d = now - s
            self.stats.used += d
            cpu.runtime -= d
            t = cpu.curr
            if t is not None:
                t.work_left -= d
                t.v += d
                cpu.vsum += d
            cpu.running_since = now
        self.account(cpu)

    def return_runtime(self, cpu: _Cpu, now: int) -> None:
        """__return_cfs_rq_runtime: an emptied CPU gives back all but min_cfs_rq_runtime; maybe arm the
        slack timer."""
        p = self.p
        if not p.limited:
            return
        slack = cpu.runtime - p.min_runtime
        if slack <= 0:
            return
        bw = self.bw
        if not p.pre54 or cpu.period_seq == bw.seq:
            bw.pool += slack
            if bw.pool > p.slice and bw.throttled:
                self.arm_slack_timer(now)
        cpu.runtime -= slack

    def arm_slack_timer(self, now: int) -> None:
        """start_cfs_slack_bandwidth: not when a refresh is near, not twice."""
        p, bw = self.p, self.bw
        if bw.active and bw.next_period - now >= p.slack_period + p.min_expiration and not bw.slack_armed:
            bw.slack_armed = True
            heappush(self.heap, (now + p.slack_period, _SLACK, 0, 0))

    # --- throttling ---

    def throttle(self, cpu: _Cpu, now: int) -> None:
        """throttle_cfs_rq: the CPU's threads of the group stop until runtime is handed to it."""
        cpu.throttled = True
        cpu.running_since = -1
        cpu.version += 1
        bw = self.bw
        bw.throttled[cpu] = None
        bw.active = True
        self.stats.throttle_events += 1
        if self.p.count_empty or cpu.queue:
            cpu.throttled_since = now
        if self.p.task_throttle:
            # each thread is stopped on its way back to user space: the running one first, then the
            # others in the order EEVDF would pick them, taken as their deadlines' (eligibility
            # aside); a thread waking here later is stopped after them
            curr = cpu.curr
            rest = sorted((e for e in cpu.queue if e is not curr), key=lambda e: e.dl)
            cpu.stopped = ([curr] if curr is not None else []) + rest

    def unthrottle(self, cpu: _Cpu, now: int) -> None:
        cpu.throttled = False
        s = cpu.throttled_since
        if s >= 0:
            self.stats.throttled_time += now - s
            cpu.throttled_since = -1
        if self.p.task_throttle and cpu.queue:
            self.requeue_stopped(cpu)
        self.dispatch(cpu, now)

    def requeue_stopped(self, cpu: _Cpu) -> None:
        """Task-based throttling (6.18, ``throttle_cfs_rq_work`` / ``tg_unthrottle_up``): each stopped
        thread left the queue as a sleeper, with its lag against the threads still queued (no delayed
        dequeue), and comes back as a wake-up, the last stopped first, placed with that lag and a
        fresh deadline; the thread that was running has no slice left to protect."""
        for e in cpu.delayed:  # sleepers the CPU would have dequeued on picking them
            e.delayed = False
            e.vlag = 0
            cpu.vsum -= e.v
        cpu.delayed.clear()
        # no thread leaves a throttled CPU's queue: the stopped ones, then those that woke since
        stopped = set(cpu.stopped)
        order = cpu.stopped + [e for e in cpu.queue if e not in stopped]
        lim = self.p.lag_limit
        vsum, n = cpu.vsum, len(order)
        for e in order:
            lag = (vsum - n * e.v) // n
            e.vlag = lim if lag > lim else -lim if lag < -lim else lag
            vsum -= e.v
            n -= 1
        cpu.vref = cpu.vsum // len(order)
        cpu.stopped = []
        cpu.queue = []
        cpu.vsum = 0
        cpu.curr = None
        for e in reversed(order):
            self.place(cpu, e)
            cpu.queue.append(e)

    def distribute(self, now: int) -> None:
        """distribute_cfs_runtime: pay each throttled CPU's debt (+1 ns), oldest first."""
        bw = self.bw
        throttled = bw.throttled
        pre54 = self.p.pre54
        for cpu in list(throttled):
            pool = bw.pool
            if pool <= 0:
                break
            amt = 1 - cpu.runtime
            if amt > pool:
                amt = pool
            bw.pool = pool - amt
            cpu.runtime += amt
            if pre54:
                cpu.period_seq = bw.seq
            if cpu.runtime > 0:
                del throttled[cpu]
                self.unthrottle(cpu, now)

    # --- running threads ---

    def dispatch(self, cpu: _Cpu, now: int) -> None:
        """Pick what runs on the CPU and schedule its next event: the tick that finds the runtime used
        up, the end of the running burst, or the next EEVDF decision."""
        cpu.version += 1
        q = cpu.queue
        if cpu.throttled or not q or now < cpu.busy_until:
            cpu.running_since = -1
            return
        t = cpu.curr
        if t is None:
            t = self.pick(cpu)
        if cpu.running_since < 0:
            cpu.running_since = now
        if t.started < 0:
            t.started = now
        p = self.p
        tick = p.tick
        r = cpu.runtime
        due = now + (r if r > 0 else 1)
        # when the runtime is found used up: at once for a thread in and out of the kernel, else at
        # the first tick after
        nt = due if t.g.charged_at_once else -(-due // tick) * tick
        if p.pre54 and r > 0 and self.bw.active:
            pe = -(-self.bw.next_period // tick) * tick  # the first tick of the next period: expiry
            if pe < nt:
                nt = pe
        left = t.work_left
        when = now + (left if left > 0 else 0)
        if nt < when:
            when = nt
        n = len(q) + len(cpu.delayed)
        if n > 1:
            s = self.next_decision(cpu, t, n)
            if now + s < when:
                when = now + s
        if when <= p.end:
            heappush(self.heap, (when, _CPU, cpu.index, cpu.version))

    # --- EEVDF: how the group's threads queued on one CPU share it ---

    def best(self, cpu: _Cpu) -> _Thread:
        """__pick_eevdf: the running thread if it is eligible (vruntime at most the queue's average V)
        and its slice is protected (RUN_TO_PARITY), else the eligible thread with the earliest
        deadline, the running one only if its deadline is strictly earlier. May be a delayed sleeper."""
        q, dq = cpu.queue, cpu.delayed
        n = len(q) + len(dq)
        vsum = cpu.vsum
        curr = cpu.curr
        if curr is not None and curr.v * n > vsum:
            curr = None  # not eligible
        if curr is not None and curr.v < curr.vprot:
            return curr
        best = None
        for e in q:
            if e is not curr and e.v * n <= vsum and (best is None or e.dl < best.dl):
                best = e
        for e in dq:
            if e.v * n <= vsum and (best is None or e.dl < best.dl):
                best = e
        if best is None or (curr is not None and curr.dl < best.dl):
            best = curr
        if best is None:  # (not reached: the lowest vruntime is always eligible)
            best = min(q, key=lambda e: e.v)
        return best

    def pick(self, cpu: _Cpu) -> _Thread:
        """pick_next_entity: the best thread runs; a delayed sleeper that is picked leaves the queue
        instead (its lag becomes 0) and the pick is repeated."""
        while True:
            best = self.best(cpu)
            if best.delayed:
                cpu.delayed.remove(best)
                best.delayed = False
                best.vlag = 0
                cpu.vsum -= best.v
                continue
            if best is not cpu.curr:
                self.switch(cpu, best)
            return best

    def switch(self, cpu: _Cpu, t: _Thread) -> None:
        """set_next_entity: t runs, its slice protected up to its deadline."""
        cpu.curr = t
        t.vprot = t.dl

    def wakeup_preempt(self, cpu: _Cpu, t: _Thread) -> None:
        """check_preempt_wakeup_fair: the woken thread t runs at once if it is now the best."""
        if self.best(cpu) is t:
            self.switch(cpu, t)

    def next_decision(self, cpu: _Cpu, t: _Thread, n: int) -> int:
        """How long the running thread t runs before EEVDF decides again (n threads queued): to the end
        of its protected slice; unprotected, until its deadline, until it is no longer eligible, or
        until a thread with an earlier deadline becomes eligible (the kernel re-picks at every
        update_curr then)."""
        v = t.v
        if v < t.vprot:
            return t.vprot - v
        s = t.dl - v
        vsum = cpu.vsum
        x = vsum - n * v  # V rises 1/n as fast as t's vruntime: t stays eligible x/(n-1) longer
        if x >= 0:
            w = x // (n - 1) + 1
            if w < s:
                s = w
        dl = t.dl
        for e in cpu.queue:
            if e.dl < dl:
                w = n * e.v - vsum
                if 0 < w < s:
                    s = w
        return s if s > 0 else 1

    def place(self, cpu: _Cpu, t: _Thread) -> None:
        """place_entity: a waking thread's vruntime is the queue's average minus its lag (scaled by
        (n + 1) / n for the n threads queued); on an empty queue the lag is dropped. Its deadline is a
        base slice later."""
        n = len(cpu.queue) + len(cpu.delayed)
        if n:
            v = cpu.vsum // n - (t.vlag * (n + 1)) // n
        else:
            v = cpu.vref
        t.v = v
        t.dl = v + self.p.base_slice
        cpu.vsum += v

    def update_deadline(self, cpu: _Cpu) -> None:
        """update_deadline: a running thread that used its request up asks for another slice."""
        t = cpu.curr
        if t is not None and t.v >= t.dl:
            t.dl = t.v + self.p.base_slice

    def new_burst(self, t: _Thread, now: int) -> None:
        g = t.g
        if g.burst_samples:
            w = g.burst_samples[int(self.rng.random() * len(g.burst_samples))]
        else:
            w = g.burst_mean if g.fixed_bursts else max(1, int(self.expo(g.inv_burst)))
        t.work = w
        p = self.p
        wc = int(self.rng.gammavariate(p.wake_cpu_shape, p.wake_cpu_scale)) if p.wake_cpu_shape else p.wake_cpu
        t.work_left = w + wc
        t.wake_cost = wc
        t.arrival = now
        t.started = -1

    def sleep(self, t: _Thread, now: int, first: bool = False) -> None:
        """Sleep until the next burst: exponential, or exactly the mean with fixed sleeps (the first
        sleep of a thread with fixed sleeps is a uniform phase in [0, sleep), so threads do not wake
        in lockstep)."""
        p, g = self.p, t.g
        if g.sleep_samples:
            d = g.sleep_samples[int(self.rng.random() * len(g.sleep_samples))]
            if first:
                d = int(self.rng.random() * d)
        elif g.fixed_sleeps and g.inv_think:
            d = int(self.rng.random() * g.think_mean) if first else g.think_mean
        else:
            d = int(self.expo(g.inv_think)) if g.inv_think else 0
        if now + d <= p.end:
            heappush(self.heap, (now + d, _WAKE, t.index, 0))

    def burst_done(self, cpu: _Cpu, t: _Thread, now: int) -> None:
        """A thread finished its burst and sleeps (dequeue_entity, then put_prev_entity). It leaves
        with its lag (V - vruntime, clamped); one that is not eligible stays queued, delayed, until
        it is (DELAY_DEQUEUE)."""
        self.stats.delays.append(now - t.arrival - t.work)
        self.stats.wake_delays.append(now - t.started - t.work - t.wake_cost)
        sc = self.p.sleep_cpu
        if sc:
            # going to sleep runs in the kernel, which a throttle does not stop; charged at once
            self.stats.used += sc
            cpu.runtime -= sc
            t.v += sc
            cpu.vsum += sc
            self.account(cpu)
        q = cpu.queue
        q.remove(t)
        cpu.curr = None
        n = len(q) + len(cpu.delayed) + 1
        x = cpu.vsum - n * t.v  # n × lag
        if x < 0 and (q or cpu.delayed):  # not eligible among the entities still queued
            t.delayed = True
            cpu.delayed.append(t)
        else:
            cpu.vsum -= t.v
            lag = x // n
            lim = self.p.lag_limit
            t.vlag = lim if lag > lim else -lim if lag < -lim else lag
        if not q:
            # the delayed sleepers are picked (and so dequeued, lag 0) before the CPU goes idle
            for e in cpu.delayed:
                e.delayed = False
                e.vlag = 0
            cpu.delayed.clear()
            cpu.vsum = 0
            cpu.vref = t.v
            cpu.idle_since = now
            self.idle_add(cpu)
            self.return_runtime(cpu, now)
        if self.p.limited and cpu.runtime <= 0 and not cpu.throttled:
            self.throttle(cpu, now)
        self.sleep(t, now)

    # --- events ---

    def on_cpu(self, cpu: _Cpu, now: int) -> None:
        """A CPU's event: a tick that finds its runtime used up, the end of a burst, or an EEVDF
        decision (the running thread's slice is used up, or it is no longer eligible)."""
        self.charge(cpu, now)
        t = cpu.curr
        if t is not None and t.work_left <= 0:
            self.burst_done(cpu, t, now)
        elif self.p.limited and cpu.runtime <= 0:
            self.throttle(cpu, now)  # the tick found the runtime used up and the pool empty
        elif t is not None and t.v >= t.vprot:
            # update_curr reschedules only once the running thread's protected slice is used up
            # (RUN_TO_PARITY): a tick or a runtime top-up within it picks nothing
            self.update_deadline(cpu)
            self.pick(cpu)
        self.dispatch(cpu, now)

    def on_wake(self, t: _Thread, now: int) -> None:
        """A sleeping thread wakes with a new burst and is queued on a CPU; it preempts the running
        thread if it is now the one EEVDF picks (check_preempt_wakeup_fair)."""
        self.new_burst(t, now)
        cpu = t.cpu
        idle = self.idle
        if t.delayed:  # still queued where it slept: requeued there (ttwu_runnable)
            self.requeue_delayed(cpu, t, now)
            return
        if t.g.spread and ((cpu.queue and not cpu.throttled) or cpu.busy_until > now):
            # select_idle_sibling: the previous CPU is busy, so the thread goes to an idle CPU if there
            # is one. A throttled CPU is idle to it: its threads of the group are not runnable (6.18:
            # stopped off its queue; before: the group's queue dequeued); one held by another task is not
            cands = idle
            thr = self.bw.throttled
            if thr:
                cands = idle + [c.index for c in thr if c.queue]
            p = self.p
            if p.other_tasks:
                cpus = self.cpus
                cands = [c for c in cands if cpus[c].busy_until <= now]
            if p.idle_permille < 1000 and cands:
                # other work on the host holds each candidate the rest of the time
                rnd = self.rng.random
                cands = [c for c in cands if rnd() * 1000 < p.idle_permille]
            if cands:
                cpu = t.cpu = self.cpus[cands[self.rng.randrange(len(cands))]]
        lat = cpu.wake_latency
        if lat and not cpu.queue:
            # the CPU is idle (halted): the thread runs once the CPU has woken up; threads that wake
            # on it meanwhile are queued at the same moment
            if cpu.waking < now:
                if self.p.latency_curve:
                    lat = lat * _curve_permille(self.p.latency_curve, now - cpu.idle_since) // 1000
                cpu.waking = now + lat
            heappush(self.heap, (cpu.waking, _ENQ, t.index, 0))
            return
        self.enqueue(t, now)

    def enqueue(self, t: _Thread, now: int) -> None:
        """enqueue_task_fair on the thread's CPU (now running if it was idle)."""
        p = self.p
        cpu = t.cpu
        q = cpu.queue
        if q:
            if cpu.running_since >= 0:
                self.charge(cpu, now)  # enqueue_entity's update_curr on a busy CPU
                self.update_deadline(cpu)
                self.place(cpu, t)
                q.append(t)
                if p.limited and cpu.runtime <= 0:
                    self.throttle(cpu, now)
                else:
                    self.wakeup_preempt(cpu, t)
                self.dispatch(cpu, now)
            else:
                self.place(cpu, t)
                q.append(t)
                if cpu.throttled and cpu.throttled_since < 0:
                    cpu.throttled_since = now
        else:
            self.idle_remove(cpu)
            self.place(cpu, t)
            q.append(t)
            if cpu.throttled:
                if cpu.throttled_since < 0:
                    cpu.throttled_since = now
            else:
                self.account(cpu)  # check_enqueue_throttle
                if p.limited and cpu.runtime <= 0:
                    self.throttle(cpu, now)
                else:
                    self.dispatch(cpu, now)

    def requeue_delayed(self, cpu: _Cpu, t: _Thread, now: int) -> None:
        """requeue_delayed_entity: a thread woken while still queued keeps its vruntime (its negative
        lag), or is placed anew with lag 0 if its lag has turned positive (DELAY_ZERO)."""
        running = cpu.running_since >= 0
        if running:
            self.charge(cpu, now)
            self.update_deadline(cpu)
        cpu.delayed.remove(t)
        t.delayed = False
        n = len(cpu.queue) + len(cpu.delayed) + 1
        if t.v * n < cpu.vsum:
            cpu.vsum -= t.v
            t.vlag = 0
            self.place(cpu, t)
        cpu.queue.append(t)
        if running:
            if self.p.limited and cpu.runtime <= 0:
                self.throttle(cpu, now)
            else:
                self.wakeup_preempt(cpu, t)
            self.dispatch(cpu, now)
        elif cpu.throttled and cpu.throttled_since < 0:
            cpu.throttled_since = now

    def on_period(self, now: int) -> None:
        """do_sched_cfs_period_timer: close the period's books, refill the pool, stop the timer after an
        idle period, hand runtime to throttled CPUs."""
        p, bw, st = self.p, self.bw, self.stats
        used_now, throttled_now = self.totals(now)
        was_active = bw.active
        nthr = len(bw.throttled)
        if nthr > st.max_throttled:
            st.max_throttled = nthr
        pool_left = bw.pool
        if was_active:
            st.nr_periods += 1
            self.refill()
            if not nthr:
                if bw.idle:
                    bw.active = False
                else:
                    bw.idle = True
        bw.next_period = now + p.period
        counted = was_active and nthr > 0
        if counted:
            st.nr_throttled += 1
            self.distribute(now)
            bw.idle = False
        st.periods.append(
            PeriodStats(
                index=len(st.periods),
                start_ns=st.period_start,
                cpu_used_ns=used_now - st.used_before,
                throttled_ns=throttled_now - st.throttled_before,
                throttled=counted,
                throttled_cpus=nthr,
                pool_left_ns=pool_left,
                active=was_active,
            )
        )
        st.used_before, st.throttled_before, st.period_start = used_now, throttled_now, now
        heappush(self.heap, (now + p.period, _PERIOD, 0, 0))

    def on_slack(self, now: int) -> None:
        """do_sched_cfs_slack_timer: unless the period ends soon, hand returned runtime to throttled CPUs."""
        p, bw = self.p, self.bw
        bw.slack_armed = False
        if bw.active and bw.next_period - now >= p.min_expiration and bw.pool > p.slice:
            self.distribute(now)

    def on_busy(self, cpu: _Cpu, now: int, end: int) -> None:
        """A task outside the group takes the CPU until ``end``: the group's thread running there is
        charged up to now and put back in the queue (put_prev_entity), so when the CPU is free EEVDF
        picks afresh, without the slice protection it had."""
        if end <= cpu.busy_until:
            return
        if cpu.running_since >= 0:  # a thread runs there (none can while another task holds it)
            self.charge(cpu, now)
            self.update_deadline(cpu)
            cpu.curr = None
            cpu.running_since = -1
            cpu.version += 1
        cpu.busy_until = end
        if not cpu.queue:  # not halted while the other task runs: idle again only once it leaves
            cpu.idle_since = end
        heappush(self.heap, (end, _FREE, cpu.index, 0))

    def on_free(self, cpu: _Cpu, now: int) -> None:
        """The other task leaves the CPU (unless another took it since): what is queued there runs."""
        if now >= cpu.busy_until and cpu.running_since < 0:
            if not cpu.queue:
                cpu.idle_since = now
            self.dispatch(cpu, now)

    # --- accounting ---

    def totals(self, now: int) -> tuple[int, int]:
        """CPU used and throttled time up to now, counting the intervals still open."""
        used = self.stats.used
        for cpu in self.cpus:
            s = cpu.running_since
            if s >= 0 and now > s:
                used += now - s
        throttled_time = self.stats.throttled_time
        for cpu in self.bw.throttled:
            s = cpu.throttled_since
            if s >= 0:
                throttled_time += now - s
        return used, throttled_time

    def result(self, sc: Scenario) -> Result:
        """Close the books at the end: running CPUs are charged, throttled intervals counted up to it."""
        st = self.stats
        used, throttled_time = self.totals(self.p.end)
        delays = sorted(st.delays)
        wake_delays = sorted(st.wake_delays)
        res = Result(
            scenario=sc,
            nr_periods=st.nr_periods,
            nr_throttled=st.nr_throttled,
            throttled_time_ns=throttled_time,
            cpu_used_ns=used,
            nr_bursts=st.nr_bursts,
            burst_time_ns=st.burst_time,
            bursts_done=len(delays),
            burst_delay_p50_ns=_percentile(delays, 0.50),
            burst_delay_mean_ns=sum(delays) // len(delays) if delays else None,
            burst_delay_p99_ns=_percentile(delays, 0.99),
            throttle_events=st.throttle_events,
            max_throttled_cpus=st.max_throttled,
            periods=tuple(st.periods),
            score=0,
            events=st.events,
            wake_delay_p50_ns=_percentile(wake_delays, 0.50),
            wake_delay_p99_ns=_percentile(wake_delays, 0.99),
            wake_delay_mean_ns=sum(wake_delays) // len(wake_delays) if wake_delays else None,
        )
        return score_result(res)

    # --- the run ---

    def start(self) -> None:
        """CPU-bound threads are queued and running at time 0; request threads start asleep."""
        p = self.p
        busy = [t for t in self.threads if t.g.cpu_bound]
        for t in busy:
            cpu = t.cpu
            t.work = t.work_left = 4 * p.end + 1  # never completes
            if not cpu.queue:
                self.idle_remove(cpu)
            self.place(cpu, t)
            cpu.queue.append(t)
        if busy:
            for cpu in self.cpus:
                if cpu.queue:
                    self.account(cpu)
                    if cpu.runtime <= 0:
                        self.throttle(cpu, 0)
                    else:
                        self.dispatch(cpu, 0)
        for t in self.threads:
            if not t.g.cpu_bound:
                self.sleep(t, 0, first=True)
        if p.limited:
            heappush(self.heap, (p.period, _PERIOD, 0, 0))
        for i, (c, a, _) in enumerate(p.other_tasks):
            if a <= p.end:
                heappush(self.heap, (a, _BUSY, c, i))

    def run(self) -> None:
        """Process events in time order up to the end."""
        heap = self.heap
        pop = heappop
        end = self.p.end
        cpus, threads = self.cpus, self.threads
        on_cpu, on_wake = self.on_cpu, self.on_wake
        events = 0
        while heap:
            now, kind, x, v = pop(heap)
            if now > end:
                break
            events += 1
            if kind == _CPU:
                cpu = cpus[x]
                if v == cpu.version:  # else superseded
                    on_cpu(cpu, now)
            elif kind == _WAKE:
                on_wake(threads[x], now)
            elif kind == _ENQ:
                self.enqueue(threads[x], now)
            elif kind == _PERIOD:
                self.on_period(now)
            elif kind == _SLACK:
                self.on_slack(now)
            elif kind == _BUSY:
                self.on_busy(cpus[x], now, self.p.other_tasks[v][2])
            else:
                self.on_free(cpus[x], now)
        self.stats.events = events


def simulate(sc: Scenario) -> Result:
    """Run the scenario; a pure function of it (deterministic for a given ``sc.seed``)."""
    sim = _Sim(sc)
    sim.start()
    sim.run()
    return sim.result(sc)
