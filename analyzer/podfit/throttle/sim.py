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
  when another thread is queued on a busy CPU. When it is used up the CPU takes a slice (5 ms,
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

Simplifications (documented in docs/throttling.md): threads of the group queued on one CPU run in
arrival order to completion of their burst (CFS would interleave them, which changes individual
delays but not the group's CPU use or throttling); a waking thread stays on its previous CPU when
that CPU has no other thread of the group, otherwise goes to a random CPU without one (the kernel's
idle-sibling search), or stays if there is none; nothing else competes for the CPUs; ticks of all
CPUs are aligned with the period timer.
"""

from __future__ import annotations

import heapq
import math
import random

from .scenario import CPU_BOUND, PeriodStats, Result, Scenario
from .score import score_result

__all__ = ["simulate"]

# Event priorities at equal times: the period timer first (a tick at the period boundary sees the
# new period), then the slack timer, then per-CPU accounting, then wake-ups.
_PERIOD, _SLACK, _CPU, _WAKE = 0, 1, 2, 3


def _percentile(sorted_vals: list[int], p: float) -> int | None:
    """Nearest-rank percentile."""
    if not sorted_vals:
        return None
    k = max(0, math.ceil(p * len(sorted_vals)) - 1)
    return sorted_vals[k]


def simulate(sc: Scenario) -> Result:
    """Run the scenario; deterministic for a given ``sc.seed``."""
    rng = random.Random(sc.seed)
    C, T = sc.cpus, sc.threads
    P = sc.period_us * 1000
    END = sc.seconds_us * 1000
    TICK = 1_000_000_000 // sc.hz
    SLICE = sc.slice_us * 1000
    MINRT = sc.min_runtime_us * 1000
    SLACK = sc.slack_us * 1000
    MINEXP = sc.min_expiration_us * 1000
    limited = sc.quota_us is not None
    QUOTA = sc.quota_us * 1000 if limited else 0
    CAP = QUOTA + sc.burst_us * 1000
    pre54 = sc.pre_5_4_expiry
    count_empty = sc.account_empty_throttled
    wl = sc.workload
    cpu_bound = wl.kind == CPU_BOUND
    spread = wl.wake_spread and not cpu_bound

    # --- workload parameters (ns) ---
    burst_mean = wl.burst_us * 1000
    demand = max(1, wl.demand_for(sc.limit_millicores))
    think_mean = 0.0 if demand >= T * 1000 else burst_mean * (T * 1000 / demand - 1)
    expo = rng.expovariate
    fixed = wl.fixed_bursts
    inv_burst = 1.0 / burst_mean
    inv_think = 1.0 / think_mean if think_mean > 0 else 0.0

    # --- per-CPU state (the group's cfs_rq on each CPU) ---
    rq: list[list[int]] = [[] for _ in range(C)]  # queued threads, rq[c][0] runs unless throttled
    rem = [0] * C  # runtime_remaining (ns); may be negative (debt)
    thr = [False] * C  # throttled
    thr_start = [-1] * C  # throttled_clock, -1 when not counting
    run_start = [-1] * C  # time of the last update_curr while running, -1 when not running
    ver = [0] * C  # invalidates a CPU's pending event
    exp_seq = [0] * C  # pre-5.4: the period whose runtime the CPU holds
    idle = list(range(C))  # CPUs with no thread of the group (for wake placement)
    idle_pos = list(range(C))

    # --- per-thread state ---
    work_left = [0] * T
    work = [0] * T
    arrival = [0] * T
    tcpu = [t % C for t in range(T)]

    # --- group state (cfs_bandwidth) ---
    g = {
        "pool": QUOTA,  # setting the quota refills the pool
        "snap": QUOTA,
        "idle": False,
        "active": False,
        "slack": False,
        "seq": 0,
        "next_period": P,
        "used": 0,
        "throttled_time": 0,
        "throttle_events": 0,
    }
    throttled: dict[int, None] = {}  # ordered set: throttled_cfs_rq list, oldest first
    heap: list[tuple[int, int, int, int]] = []
    _hpush = heapq.heappush
    pop = heapq.heappop
    delays: list[int] = []

    def push(item: tuple[int, int, int, int]) -> None:
        _hpush(heap, item)

    def idle_remove(c: int) -> None:
        i = idle_pos[c]
        last = idle[-1]
        idle[i] = last
        idle_pos[last] = i
        idle.pop()
        idle_pos[c] = -1

    def idle_add(c: int) -> None:
        idle_pos[c] = len(idle)
        idle.append(c)

    def assign(c: int) -> None:
        """assign_cfs_rq_runtime: top the CPU up to one slice from the pool (pays debt first)."""
        if not limited:
            rem[c] = SLICE
            return
        g["active"] = True  # start_cfs_bandwidth
        pool = g["pool"]
        if pool > 0:
            amt = SLICE - rem[c]
            if amt > pool:
                amt = pool
            g["pool"] = pool - amt
            g["idle"] = False
            rem[c] += amt
        if pre54:
            exp_seq[c] = g["seq"]

    def account(c: int) -> None:
        """The tail of __account_cfs_rq_runtime after charging."""
        if pre54 and rem[c] > 0 and exp_seq[c] != g["seq"]:
            rem[c] = 0  # expire_cfs_rq_runtime: the period this runtime belonged to is over
        if rem[c] <= 0 and not thr[c]:
            assign(c)

    def charge(c: int, now: int) -> None:
        """update_curr: charge the running thread up to now, then account."""
        s = run_start[c]
        if s >= 0 and now > s:
            d = now - s
            g["used"] += d
            rem[c] -= d
            work_left[rq[c][0]] -= d
            run_start[c] = now
        account(c)

    def dispatch(c: int, now: int) -> None:
        """Pick what runs on c and schedule its next accounting point (tick or end of burst)."""
        ver[c] += 1
        q = rq[c]
        if thr[c] or not q:
            run_start[c] = -1
            return
        if run_start[c] < 0:
            run_start[c] = now
        r = rem[c]
        due = now + (r if r > 0 else 1)
        nt = -(-due // TICK) * TICK  # the first tick at which the runtime is found used up
        if pre54 and r > 0 and g["active"]:
            pe = -(-g["next_period"] // TICK) * TICK
            if pe < nt:
                nt = pe
        done = now + work_left[q[0]]
        when = done if done <= nt else nt
        if when <= END:
            push((when, _CPU, c, ver[c]))

    def throttle(c: int, now: int) -> None:
        thr[c] = True
        run_start[c] = -1
        ver[c] += 1
        throttled[c] = None
        g["active"] = True
        g["throttle_events"] += 1
        if count_empty or rq[c]:
            thr_start[c] = now

    def unthrottle(c: int, now: int) -> None:
        thr[c] = False
        s = thr_start[c]
        if s >= 0:
            g["throttled_time"] += now - s
            thr_start[c] = -1
        dispatch(c, now)

    def distribute(now: int) -> None:
        """distribute_cfs_runtime: pay each throttled CPU's debt (+1 ns), oldest first."""
        for c in list(throttled):
            pool = g["pool"]
            if pool <= 0:
                break
            amt = 1 - rem[c]
            if amt > pool:
                amt = pool
            g["pool"] = pool - amt
            rem[c] += amt
            if pre54:
                exp_seq[c] = g["seq"]
            if rem[c] > 0:
                del throttled[c]
                unthrottle(c, now)

    def return_runtime(c: int, now: int) -> None:
        """__return_cfs_rq_runtime: give back all but min_cfs_rq_runtime; maybe arm the slack timer."""
        if not limited:
            return
        slack = rem[c] - MINRT
        if slack <= 0:
            return
        if not pre54 or exp_seq[c] == g["seq"]:
            g["pool"] += slack
            if g["pool"] > SLICE and throttled:
                # start_cfs_slack_bandwidth: not when a refresh is near, not twice
                if g["active"] and g["next_period"] - now >= SLACK + MINEXP and not g["slack"]:
                    g["slack"] = True
                    push((now + SLACK, _SLACK, 0, 0))
        rem[c] -= slack

    def new_burst(t: int, now: int) -> None:
        w = burst_mean if fixed else max(1, int(expo(inv_burst)))
        work[t] = w
        work_left[t] = w
        arrival[t] = now

    def sleep(t: int, now: int) -> None:
        d = int(expo(inv_think)) if inv_think else 0
        if now + d <= END:
            push((now + d, _WAKE, t, 0))

    # --- initial state ---
    if cpu_bound:
        for t in range(T):
            c = tcpu[t]
            work[t] = work_left[t] = 4 * END + 1  # never completes
            if not rq[c]:
                idle_remove(c)
            rq[c].append(t)
        for c in range(C):
            if rq[c]:
                account(c)
                if rem[c] <= 0:
                    throttle(c, 0)
                else:
                    dispatch(c, 0)
    else:
        for t in range(T):
            sleep(t, 0)
    if limited:
        push((P, _PERIOD, 0, 0))

    # --- timeline ---
    periods: list[PeriodStats] = []
    last_used = 0
    last_thr = 0
    nr_periods = nr_throttled = 0
    nr_bursts = burst_time = 0
    max_thr = 0
    events = 0
    period_start = 0

    while heap:
        now, kind, x, v = pop(heap)
        if now > END:
            break
        events += 1
        if kind == _CPU:
            if v != ver[x]:
                continue
            c = x
            charge(c, now)
            q = rq[c]
            t = q[0]
            if work_left[t] <= 0:
                # the burst is done: the thread sleeps (dequeue_entity, then put_prev_entity)
                delays.append(now - arrival[t] - work[t])
                q.pop(0)
                if not q:
                    idle_add(c)
                    return_runtime(c, now)
                if limited and rem[c] <= 0:
                    throttle(c, now)
                sleep(t, now)
            elif limited and rem[c] <= 0:
                throttle(c, now)  # the tick found the runtime used up and the pool empty
            dispatch(c, now)
        elif kind == _WAKE:
            t = x
            new_burst(t, now)
            c = tcpu[t]
            if spread and rq[c] and idle:
                c = idle[rng.randrange(len(idle))]
                tcpu[t] = c
            q = rq[c]
            if q:
                if run_start[c] >= 0:
                    charge(c, now)  # enqueue_entity's update_curr on a busy CPU
                    q.append(t)
                    if limited and rem[c] <= 0:
                        throttle(c, now)
                    dispatch(c, now)
                else:
                    q.append(t)
                    if thr[c] and thr_start[c] < 0:
                        thr_start[c] = now
            else:
                idle_remove(c)
                q.append(t)
                if thr[c]:
                    if thr_start[c] < 0:
                        thr_start[c] = now
                else:
                    account(c)  # check_enqueue_throttle
                    if limited and rem[c] <= 0:
                        throttle(c, now)
                    else:
                        dispatch(c, now)
        elif kind == _PERIOD:
            # snapshot of the period that ends now
            used_now = g["used"]
            for c in range(C):
                s = run_start[c]
                if s >= 0:
                    used_now += now - s
            thr_now = g["throttled_time"]
            for c in throttled:
                s = thr_start[c]
                if s >= 0:
                    thr_now += now - s
            was_active = g["active"]
            had_throttled = bool(throttled)
            nthr = len(throttled)
            if nthr > max_thr:
                max_thr = nthr
            pool_left = g["pool"]
            counted_throttled = False
            if was_active:
                nr_periods += 1
                pool = g["pool"] + QUOTA
                d = g["snap"] - pool
                if d > 0:
                    nr_bursts += 1
                    burst_time += d
                if pool > CAP:
                    pool = CAP
                g["pool"] = g["snap"] = pool
                if pre54:
                    g["seq"] += 1
                if not had_throttled:
                    if g["idle"]:
                        g["active"] = False
                    else:
                        g["idle"] = True
            g["next_period"] = now + P
            if was_active and had_throttled:
                nr_throttled += 1
                counted_throttled = True
                distribute(now)
                g["idle"] = False
            periods.append(
                PeriodStats(
                    index=len(periods),
                    start_ns=period_start,
                    cpu_used_ns=used_now - last_used,
                    throttled_ns=thr_now - last_thr,
                    throttled=counted_throttled,
                    throttled_cpus=nthr,
                    pool_left_ns=pool_left,
                    active=was_active,
                )
            )
            last_used, last_thr, period_start = used_now, thr_now, now
            push((now + P, _PERIOD, 0, 0))
        else:  # _SLACK
            g["slack"] = False
            if g["active"] and g["next_period"] - now >= MINEXP and g["pool"] > SLICE:
                distribute(now)

    # close the books at END: running CPUs are charged, throttled intervals counted up to END
    used = g["used"]
    for c in range(C):
        s = run_start[c]
        if s >= 0 and END > s:
            used += END - s
    throttled_time = g["throttled_time"]
    for c in throttled:
        s = thr_start[c]
        if s >= 0:
            throttled_time += END - s

    delays.sort()
    res = Result(
        scenario=sc,
        nr_periods=nr_periods,
        nr_throttled=nr_throttled,
        throttled_time_ns=throttled_time,
        cpu_used_ns=used,
        nr_bursts=nr_bursts,
        burst_time_ns=burst_time,
        bursts_done=len(delays),
        burst_delay_p50_ns=_percentile(delays, 0.50),
        burst_delay_p99_ns=_percentile(delays, 0.99),
        throttle_events=g["throttle_events"],
        max_throttled_cpus=max_thr,
        periods=tuple(periods),
        score=0,
        events=events,
    )
    return score_result(res)
