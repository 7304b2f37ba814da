"""Kernel calibration: run a real multi-threaded workload under a CFS quota and compare with the model.

This module does I/O on purpose (it is a measuring harness, not part of the pure core): it compiles a
small C program with gcc, creates a cgroup (v1 ``cpu`` controller under ``/sys/fs/cgroup/cpu``, or
v2 ``cpu.max``), runs the program inside it, reads ``cpu.stat`` and removes the cgroup again. It then
simulates the same scenario (C = this machine's CPUs) and prints both side by side.

A measurement lab, not part of the package: it imports podfit (the simulator) as a library. Run it
as root from the repository: ``python lab/calibrate/calibrate.py --repeat 5`` (``make calibrate``).
The options, the findings and the saved tables: lab/calibrate/NOTEBOOK.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analyzer"))

from podfit.throttle import CPU_BOUND, REQUEST, Scenario, Workload, simulate  # noqa: E402
from podfit.throttle.kernel import kernel_flags  # noqa: E402

__all__ = [
    "Config",
    "Measurement",
    "CONFIGS",
    "CgroupUnavailable",
    "cgroup_root",
    "kernel_hz",
    "measure",
    "simulate_config",
    "simulate_mean",
    "idle_cpu_permille",
    "Machine",
    "mean",
    "MODEL_SEEDS",
    "busy_ns",
    "wake_latency_profile",
    "split_burst_cpu",
    "SLEEP_CPU_US",
    "other_load",
    "other_task_intervals",
    "other_tasks_text",
    "compare",
    "p99_comparable",
    "table",
    "LatencyProfile",
    "SavedRuns",
    "SavedRunsUnreadable",
    "RowAgreement",
    "reproducibility",
    "reproducibility_text",
    "CONTENDED_P90_US",
    "main",
]

_C_SOURCE = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

static double seconds, burst_mean, think_mean, start;
static int fixed, ncpus, pin = 1;
static uint64_t seed;
static double *delays; /* completion minus arrival minus CPU work: the time a burst waited */
static long ndelays, maxdelays = 4000000;
/* CPU the threads used outside their bursts' busy loops (waking, going to sleep, reading clocks),
   from just before each thread's first sleep, and the bursts it was spread over */
static double outside_cpu; static long nwakes;
static pthread_mutex_t outside_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_mono(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double now_cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double uni(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return ((*s >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double expo(uint64_t *s, double mean) { return -mean * log(uni(s)); }
/* sleep until an absolute CLOCK_MONOTONIC time: the burst arrives then, whenever the thread gets to run */
static void sleep_until(double t) {
    struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) { }
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    /* thread i on CPU i mod C, as the model places it; wake-ups on time (no 50 us timer slack) */
    /* unpinned (PIN 0): the kernel places the thread, as a container's threads are placed */
    if (pin) { cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(id % ncpus, &cs); pthread_setaffinity_np(pthread_self(), sizeof cs, &cs); }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(id + 1) + 0xD1B54A32D192ED03ull * seed;
    for (int k = 0; k < 4; k++) uni(&s);
    double end = start + seconds, arrival = start;
    if (think_mean > 0) /* the first burst arrives at a random point of a sleep */
        arrival += fixed ? uni(&s) * think_mean : expo(&s, think_mean);
    if (arrival >= end) return NULL;
    double cpu0 = now_cpu(), inside = 0;
    long wakes = 0;
    sleep_until(arrival);
    if (think_mean <= 0) { while (now_mono() < end) { } return NULL; }
    while (arrival < end) {
        double w = fixed ? burst_mean : expo(&s, burst_mean);
        double c = now_cpu(), stop = c + w;
        while (now_cpu() < stop && now_mono() < end) { }
        inside += now_cpu() - c;
        wakes++;
        double done = now_mono();
        if (done >= end) break;
        long i = __sync_fetch_and_add(&ndelays, 1);
        if (i < maxdelays) delays[i] = done - arrival - w;
        /* sleep from the burst's completion, as the model's closed loop does */
        arrival = done + (fixed ? think_mean : expo(&s, think_mean));
        if (arrival >= end) break; /* no sleeping past the end: the run lasts `seconds` */
        sleep_until(arrival);
    }
    double outside = now_cpu() - cpu0 - inside;
    pthread_mutex_lock(&outside_lock);
    outside_cpu += outside; nwakes += wakes;
    pthread_mutex_unlock(&outside_lock);
    return NULL;
}

/* how late a timer wakes a thread on an idle CPU: the median of 200 sleeps, each 3 ms after a wake-up */
static int wake_latency(int cpu) {
    cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(cpu, &cs);
    if (sched_setaffinity(0, sizeof cs, &cs)) return 1;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    double late[200];
    for (int i = 0; i < 200; i++) {
        double t = now_mono() + 0.003;
        sleep_until(t);
        late[i] = now_mono() - t;
    }
    qsort(late, 200, sizeof(double), cmp);
    printf("wake_latency_ns %ld\nwake_latency_p90_ns %ld\nwake_latency_p99_ns %ld\n",
           (long)(late[100] * 1e9), (long)(late[180] * 1e9), (long)(late[198] * 1e9));
    return 0;
}

/* the same lateness after idle times from 0.1 to 50 ms: the median of each, by idle time */
static int wake_curve(int cpu) {
    static const int sleep_us[] = { 100, 200, 500, 1000, 1500, 2000, 3000, 5000, 10000, 20000, 50000 };
    cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(cpu, &cs);
    if (sched_setaffinity(0, sizeof cs, &cs)) return 1;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    double late[400];
    for (int k = 0; k < (int)(sizeof sleep_us / sizeof *sleep_us); k++) {
        int n = sleep_us[k] <= 3000 ? 400 : sleep_us[k] <= 10000 ? 200 : 60;
        for (int i = 0; i < n; i++) {
            double t = now_mono() + sleep_us[k] * 1e-6;
            sleep_until(t);
            late[i] = now_mono() - t;
        }
        qsort(late, n, sizeof(double), cmp);
        printf("wakecurve %d %ld\n", sleep_us[k], (long)(late[n / 2] * 1e9));
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "wakelat")) return wake_latency(atoi(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "wakecurve")) return wake_curve(atoi(argv[2]));
    if (argc < 7) { fprintf(stderr, "usage: burst THREADS SECONDS BURST_US THINK_US FIXED SEED [PIN]\n"); return 2; }
    if (argc > 7) pin = atoi(argv[7]);
    int n = atoi(argv[1]);
    seconds = atof(argv[2]); burst_mean = atof(argv[3]) * 1e-6; think_mean = atof(argv[4]) * 1e-6;
    fixed = atoi(argv[5]); seed = strtoull(argv[6], NULL, 10);
    ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    delays = malloc(sizeof(double) * maxdelays);
    pthread_t *th = malloc(sizeof(pthread_t) * n);
    start = now_mono() + 0.02; /* every thread's clock starts together, after they are all created */
    for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    struct rusage ru; getrusage(RUSAGE_SELF, &ru);
    printf("cpu_us %ld\n", (long)(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec));
    long k = ndelays < maxdelays ? ndelays : maxdelays;
    if (k > 0) {
        qsort(delays, k, sizeof(double), cmp);
        long r = (long)ceil(0.99 * k) - 1;
        printf("p99_delay_us %ld\nbursts %ld\n", (long)(delays[r < 0 ? 0 : r] * 1e6), k);
    }
    if (nwakes > 0) printf("outside_ns %ld\nwakes %ld\n", (long)(outside_cpu * 1e9), nwakes);
    printf("start_ns %lld\n", (long long)llround(start * 1e9));
    return 0;
}
"""


class SavedRunsUnreadable(ValueError):
    """A file given to --load, --against or --reproducibility that is missing or not saved runs."""


class CgroupUnavailable(RuntimeError):
    """No writable cgroup with the cpu controller (not root, read-only cgroupfs, no controller)."""


@dataclass(frozen=True)
class Config:
    """One calibration run: quota/period in µs, threads, workload, measured seconds."""

    name: str
    quota_us: int
    threads: int
    kind: str = CPU_BOUND
    period_us: int = 100_000
    burst_us: int = 2_000
    demand_millicores: int | None = None
    seconds: int = 3
    fixed: bool = False  # fixed bursts and fixed sleeps (a periodic worker), else both exponential
    cfs_burst_us: int = 0  # cpu.cfs_burst_us: unused quota carried over, up to this much
    pinned: bool = True  # thread i pinned to CPU i mod C; else the kernel places the threads


@dataclass(frozen=True)
class Measurement:
    nr_periods: int
    nr_throttled: int
    throttled_time_ns: int
    cpu_used_ns: int
    seconds: float
    p99_delay_ns: int | None = None  # p99 of the time a burst waited (bursty workloads)
    bursts: int = 0
    runs: int = 1  # runs (kernel) or seeds (model) this is the mean of
    nr_throttled_range: tuple[int, int] | None = None  # lowest and highest of the runs
    throttled_ms_range: tuple[float, float] | None = None  # throttled ms per period, likewise
    outside_ns: int = 0  # CPU the threads used outside their bursts' work (kernel runs)
    wakes: int = 0  # bursts that CPU was spread over
    wall_s: float = 0.0  # the program's wall time, start-up and exit included (kernel runs)
    throttled_periods_mean: float | None = None  # nr_throttled before rounding (a mean of runs)
    throttled_periods_sd: float | None = None  # the runs' sample standard deviation of nr_throttled
    # (cpu, start_us, end_us) from the program's start: other tasks holding one of the CPUs (traced
    # sched_stat_runtime); None where not traced
    other_tasks: tuple[tuple[int, int, int], ...] | None = None
    # the machine's other load around the run (kernel runs from 2026-11-27 10:00 UTC on): the
    # 1-minute load average at its end, and the CPU all tasks used meanwhile (the root cpuacct
    # group's usage) minus the group's, in CPUs over the run's wall time
    loadavg: float | None = None
    root_other_cpus: float | None = None
    period_us: int = 100_000  # the row's CFS period

    @property
    def throttled_periods(self) -> float:
        """Throttled periods: the unrounded mean of the runs, or this run's count."""
        return self.nr_throttled if self.throttled_periods_mean is None else self.throttled_periods_mean

    @property
    def throttled_periods_two_se(self) -> float | None:
        """Twice the standard error of the mean throttled periods (None for a single run)."""
        if self.throttled_periods_sd is None or self.runs < 2:
            return None
        return 2 * self.throttled_periods_sd / math.sqrt(self.runs)

    @property
    def burst_cpu_us(self) -> float | None:
        """CPU used per burst besides its work (µs), where measured."""
        return self.outside_ns / self.wakes / 1000 if self.wakes else None

    @property
    def run_periods(self) -> float:
        """The periods in the run's length (30 in 3 s of 100 ms periods)."""
        return max(1e-9, self.seconds * 1e6 / self.period_us)

    @property
    def throttled_ms(self) -> float:
        """Throttled time (ms, summed over CPUs) per period of the run's length. Not per
        ``nr_periods``: the kernel's period timer also counts the period the program starts in (its
        exec and thread creation, before the run) and the idle period after its exit, 31-32 for a 3 s
        run where the model counts 30, which would read every throttled kernel row 3-7 % low; the
        kernel's throttled time does include a thread stopped at the run's end until the next period
        refills the quota, as the model's end, on a period boundary, does."""
        return self.throttled_time_ns / self.run_periods / 1e6


def mean(ms: list[Measurement]) -> Measurement:
    """The mean of several runs of one row, with the range of its throttling figures."""
    n = len(ms)
    p99s = [m.p99_delay_ns for m in ms if m.p99_delay_ns is not None]
    return Measurement(
        nr_periods=round(sum(m.nr_periods for m in ms) / n),
        nr_throttled=round(sum(m.nr_throttled for m in ms) / n),
        # the mean per-period figure of the runs (so it lies within their range)
        throttled_time_ns=round(sum(m.throttled_ms for m in ms) / n * 1e6 * sum(m.run_periods for m in ms) / n),
        cpu_used_ns=round(sum(m.cpu_used_ns for m in ms) / n),
        seconds=sum(m.seconds for m in ms) / n,
        p99_delay_ns=round(sum(p99s) / len(p99s)) if p99s else None,
        bursts=min(m.bursts for m in ms),
        runs=n,
        nr_throttled_range=(min(m.nr_throttled for m in ms), max(m.nr_throttled for m in ms)),
        throttled_ms_range=(min(m.throttled_ms for m in ms), max(m.throttled_ms for m in ms)),
        outside_ns=sum(m.outside_ns for m in ms),
        wakes=sum(m.wakes for m in ms),
        wall_s=sum(m.wall_s for m in ms) / n,
        period_us=ms[0].period_us,
        throttled_periods_mean=sum(m.nr_throttled for m in ms) / n,
        throttled_periods_sd=statistics.stdev(m.nr_throttled for m in ms) if n > 1 else None,
    )


def runs_to_resolve(m: Measurement) -> int | None:
    """How many runs it would take for the mean throttled periods to be known to the target (twice
    its standard error within the tolerance ``compare`` holds it to), when ``m``'s runs fall short;
    None when they suffice or ``m`` is a single run."""
    two_se = m.throttled_periods_two_se
    tol = max(TOL_REL * m.throttled_periods, TOL_PERIODS)
    if two_se is None or two_se <= tol:
        return None
    return math.ceil(m.runs * (two_se / tol) ** 2)


# The calibration table (`make calibrate`): CPU-bound and bursty, fixed and exponential sleeps,
# 1-64 threads, 200m-1900m, on this machine's CPUs.
CONFIGS: tuple[Config, ...] = (
    Config("200m/1 busy", 20_000, 1),
    Config("500m/1 busy", 50_000, 1),
    Config("500m/2 busy", 50_000, 2),
    Config("1000m/2 busy", 100_000, 2),
    Config("1500m/2 busy", 150_000, 2),
    Config("1000m/4 busy", 100_000, 4),
    Config("1900m/4 busy", 190_000, 4),
    Config("1500m/16 busy", 150_000, 16),
    Config("400m/8 exp 2ms", 40_000, 8, kind=REQUEST, burst_us=2_000, demand_millicores=600),
    Config("1000m/16 exp 1ms", 100_000, 16, kind=REQUEST, burst_us=1_000, demand_millicores=1_500),
    Config("1200m/16 exp 5ms", 120_000, 16, kind=REQUEST, burst_us=5_000, demand_millicores=1_600),
    Config("1900m/64 exp 2ms", 190_000, 64, kind=REQUEST, burst_us=2_000, demand_millicores=1_500),
    Config("400m/8 fixed 2ms", 40_000, 8, kind=REQUEST, burst_us=2_000, demand_millicores=600, fixed=True),
    # 15 s runs: a few short throttles per run, from 0 to 9 periods of 30 in a 3 s run
    Config(
        "1000m/4 fixed 5ms", 100_000, 4, kind=REQUEST, burst_us=5_000, demand_millicores=1_200, fixed=True, seconds=15
    ),
    # 15 s runs: the group settles at its quota, where a 3 s run's throttled periods range 14-25 of 30
    Config(
        "1500m/32 fixed 2ms", 150_000, 32, kind=REQUEST, burst_us=2_000, demand_millicores=1_800, fixed=True, seconds=15
    ),
    Config("200m/2 fixed 10ms", 20_000, 2, kind=REQUEST, burst_us=10_000, demand_millicores=300, fixed=True),
    Config(
        "400m/8 exp 2ms +burst 20ms",
        40_000,
        8,
        kind=REQUEST,
        burst_us=2_000,
        demand_millicores=400,
        cfs_burst_us=20_000,
        # 30 s runs: offered exactly its quota, the group's throttled time per 3 s run ranges from 2 to
        # 38 ms per period (kernel and model alike); over 30 s the spread is a third of that
        seconds=30,
    ),
    Config(
        "1000m/16 exp 1ms +burst 50ms",
        100_000,
        16,
        kind=REQUEST,
        burst_us=1_000,
        demand_millicores=900,
        cfs_burst_us=50_000,
    ),
)

# The bias grid (`calibrate --grid bias`, issue 39): threads NOT pinned, more threads than CPUs,
# bursts 0.5-20 ms, sleeps 1.5-300 ms, fixed and exponential, loads below, at and above the quota;
# the configurations where unpinned readings found the model's throttled time 20-80 % high.
BIAS_CONFIGS: tuple[Config, ...] = (
    Config("u700m/4 fixed 0.5ms/1.5ms", 70_000, 4, kind=REQUEST, burst_us=500, demand_millicores=1_000, fixed=True,
           pinned=False),
    Config("u1200m/16 fixed 5ms/45ms", 120_000, 16, kind=REQUEST, burst_us=5_000, demand_millicores=1_600,
           fixed=True, pinned=False),
    Config("u200m/4 exp 5ms/45ms", 20_000, 4, kind=REQUEST, burst_us=5_000, demand_millicores=400, pinned=False),
    Config("u400m/8 fixed 2ms/38ms", 40_000, 8, kind=REQUEST, burst_us=2_000, demand_millicores=400, fixed=True,
           seconds=5, pinned=False),
    Config("u1000m/8 exp 20ms/300ms", 100_000, 8, kind=REQUEST, burst_us=20_000, demand_millicores=500,
           pinned=False),
    Config("u500m/32 exp 1ms/40ms", 50_000, 32, kind=REQUEST, burst_us=1_000, demand_millicores=780, pinned=False),
    # the rest of the region (2026-11-27 10:00 UTC): each burst length and sleep below, at and above
    # the quota; the rows offered their quota run 5 s (their runs scatter the most)
    Config("u1000m/4 exp 0.5ms/1.5ms", 100_000, 4, kind=REQUEST, burst_us=500, demand_millicores=1_000, seconds=5,
           pinned=False),
    Config("u1500m/4 fixed 0.5ms/1.5ms", 150_000, 4, kind=REQUEST, burst_us=500, demand_millicores=1_000, fixed=True,
           pinned=False),
    Config("u800m/8 exp 2ms/18ms", 80_000, 8, kind=REQUEST, burst_us=2_000, demand_millicores=800, seconds=5,
           pinned=False),
    Config("u600m/16 fixed 2ms/38ms", 60_000, 16, kind=REQUEST, burst_us=2_000, demand_millicores=800, fixed=True,
           pinned=False),
    Config("u1600m/16 exp 5ms/45ms", 160_000, 16, kind=REQUEST, burst_us=5_000, demand_millicores=1_600, seconds=5,
           pinned=False),
    Config("u2000m/16 fixed 5ms/45ms", 200_000, 16, kind=REQUEST, burst_us=5_000, demand_millicores=1_600, fixed=True,
           pinned=False),
    Config("u300m/4 fixed 20ms/180ms", 30_000, 4, kind=REQUEST, burst_us=20_000, demand_millicores=400, fixed=True,
           pinned=False),
    Config("u300m/8 exp 20ms/300ms", 30_000, 8, kind=REQUEST, burst_us=20_000, demand_millicores=500, pinned=False),
    # pinned twins: whether a row's bias comes with the kernel's placement or with the workload
    Config("p700m/4 fixed 0.5ms/1.5ms", 70_000, 4, kind=REQUEST, burst_us=500, demand_millicores=1_000, fixed=True),
    Config("p200m/4 exp 5ms/45ms", 20_000, 4, kind=REQUEST, burst_us=5_000, demand_millicores=400),
    Config("p600m/16 fixed 2ms/38ms", 60_000, 16, kind=REQUEST, burst_us=2_000, demand_millicores=800, fixed=True),
    # pinned twins of the rows offered exactly their quota: the bandwidth control at the quota without
    # the kernel's wake placement and load balancing (docs/throttling.md, "At the quota")
    Config("p400m/8 fixed 2ms/38ms", 40_000, 8, kind=REQUEST, burst_us=2_000, demand_millicores=400, fixed=True,
           seconds=5),
    Config("p1000m/4 exp 0.5ms/1.5ms", 100_000, 4, kind=REQUEST, burst_us=500, demand_millicores=1_000, seconds=5),
    Config("p800m/8 exp 2ms/18ms", 80_000, 8, kind=REQUEST, burst_us=2_000, demand_millicores=800, seconds=5),
    Config("p1600m/16 exp 5ms/45ms", 160_000, 16, kind=REQUEST, burst_us=5_000, demand_millicores=1_600, seconds=5),
)  # fmt: skip
GRIDS = {"table": CONFIGS, "bias": BIAS_CONFIGS}


def cgroup_root() -> tuple[str, int]:
    """(directory under which to create a group, cgroup version), or raise CgroupUnavailable."""
    v1 = "/sys/fs/cgroup/cpu"
    if os.path.exists(os.path.join(v1, "cpu.cfs_quota_us")) and os.access(v1, os.W_OK):
        return v1, 1
    v2 = "/sys/fs/cgroup"
    for root in (v2, "/sys/fs/cgroup/unified"):
        ctl = os.path.join(root, "cgroup.controllers")
        if os.path.exists(ctl) and os.access(root, os.W_OK):
            with open(ctl) as f:
                if "cpu" in f.read().split():
                    return root, 2
    raise CgroupUnavailable("no writable cgroup with the cpu controller (need root and cgroupfs)")


def kernel_hz() -> int:
    """CONFIG_HZ of the running kernel (from /boot/config-* or /proc/config.gz), else 250."""
    rel = platform.release()
    for path in (f"/boot/config-{rel}", "/proc/config.gz"):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt") as f:
                for line in f:
                    m = re.match(r"CONFIG_HZ=(\d+)", line)
                    if m:
                        return int(m.group(1))
        except OSError:
            continue
    return 250


def compile_program(workdir: str) -> str:
    """Build the calibration's workload program (``_C_SOURCE``) in ``workdir``; its path."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise CgroupUnavailable("no C compiler (gcc) to build the workload")
    src = os.path.join(workdir, "burst.c")
    exe = os.path.join(workdir, "burst")
    with open(src, "w") as f:
        f.write(_C_SOURCE)
    subprocess.run([cc, "-O2", "-pthread", "-o", exe, src, "-lm"], check=True, capture_output=True)
    return exe


def _think_us(cfg: Config) -> int:
    if cfg.kind == CPU_BOUND:
        return 0
    wl = Workload(kind=REQUEST, burst_us=cfg.burst_us, demand_millicores=cfg.demand_millicores)
    demand = wl.demand_for(cfg.quota_us * 1000 // cfg.period_us)
    return max(0, round(cfg.burst_us * (cfg.threads * 1000 / demand - 1)))


def _read_stat(path: str) -> dict[str, int]:
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(" ")
            if v.strip().lstrip("-").isdigit():
                out[k] = int(v)
    return out


_TRACEFS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
_RUNTIME = re.compile(r"\[(\d+)\][^\n]*? (\d+)\.(\d+): sched_stat_runtime: comm=(.*?) pid=(\d+) runtime=(\d+)")


def other_task_intervals(
    trace: str, start_ns: int, seconds: int, group_comm: str = "burst"
) -> tuple[tuple[int, int, int], ...]:
    """The intervals ``(cpu, start_us, end_us)`` in which tasks other than the group's held a CPU,
    from a ``sched_stat_runtime`` trace (``trace_clock`` mono): each event charges a task the CPU it
    ran since it was last charged, so it held the CPU for that long up to the event. Microseconds
    from ``start_ns``, clipped to the run's ``seconds``, overlapping pieces merged."""
    end_us = seconds * 1_000_000
    pieces: dict[int, list[tuple[int, int]]] = {}
    for m in _RUNTIME.finditer(trace):
        if m.group(4) == group_comm:
            continue
        t = int(m.group(2)) * 1_000_000_000 + int(m.group(3).ljust(9, "0")[:9]) - start_ns
        a, b = max((t - int(m.group(6))) // 1000, 0), min(t // 1000, end_us)
        if a < b:
            pieces.setdefault(int(m.group(1)), []).append((a, b))
    out: list[tuple[int, int, int]] = []
    for cpu, ps in pieces.items():
        ps.sort()
        a, b = ps[0]
        for x, y in ps[1:]:
            if x <= b:
                b = max(b, y)
            else:
                out.append((cpu, a, b))
                a, b = x, y
        out.append((cpu, a, b))
    return tuple(sorted(out, key=lambda iv: (iv[1], iv[0])))


class _OtherTasksTrace:
    """Traces the CPU time of the tasks outside the group (``sched_stat_runtime``) while a row runs
    (tracefs, root); does nothing where tracefs cannot be written. The switches themselves are not
    traced: on this machine kind the switch back from some of the host agent's threads is missing
    from the trace, while their runtime is not."""

    def __init__(self, group_comm: str) -> None:
        self.root = next((r for r in _TRACEFS if os.access(os.path.join(r, "trace"), os.W_OK)), None)
        self.filter = f'comm != "{group_comm}"'

    def _write(self, name: str, value: str) -> None:
        assert self.root is not None
        with open(os.path.join(self.root, name), "w") as f:
            f.write(value)

    def start(self) -> bool:
        if self.root is None:
            return False
        try:
            self._write("tracing_on", "0")
            self._write("trace", "")
            self._write("trace_clock", "mono")
            self._write("buffer_size_kb", "4096")
            self._write("events/sched/sched_stat_runtime/filter", self.filter)
            self._write("events/sched/sched_stat_runtime/enable", "1")
            self._write("tracing_on", "1")
        except OSError:
            self.root = None
            return False
        return True

    def stop(self) -> str:
        """The trace; tracing is switched off and cleared."""
        if self.root is None:
            return ""
        try:
            self._write("tracing_on", "0")
            with open(os.path.join(self.root, "trace")) as f:
                text = f.read()
            self._write("events/sched/sched_stat_runtime/enable", "0")
            self._write("events/sched/sched_stat_runtime/filter", "0")
            self._write("trace", "")
        except OSError:
            return ""
        return text


def measure(cfg: Config, exe: str, seed: int = 0, trace: bool = True) -> Measurement:
    """Run ``exe`` in a fresh cgroup with the config's quota; return cpu.stat and CPU used. ``seed``
    draws the threads' phases, bursts and sleeps (as the model's seed does, though not the same draws).
    With ``trace``, where tracefs can be written, the tasks outside the group that held a CPU during
    the run are traced into ``other_tasks`` (``lab/calibrate/trace_ab.py`` measures whether the
    tracing changes what it measures)."""
    root, version = cgroup_root()
    group = os.path.join(root, f"podfit-calib-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.mkdir(group)
    except OSError as e:
        raise CgroupUnavailable(f"cannot create {group}: {e}") from e
    try:
        if version == 1:
            with open(os.path.join(group, "cpu.cfs_period_us"), "w") as f:
                f.write(str(cfg.period_us))
            with open(os.path.join(group, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(cfg.quota_us))
            if cfg.cfs_burst_us:
                with open(os.path.join(group, "cpu.cfs_burst_us"), "w") as f:
                    f.write(str(cfg.cfs_burst_us))
            # the highest weight: other work on the machine must not decide how much of its quota the
            # group can use (the model has the CPUs to itself)
            with open(os.path.join(group, "cpu.shares"), "w") as f:
                f.write("262144")
        else:
            with open(os.path.join(group, "cpu.max"), "w") as f:
                f.write(f"{cfg.quota_us} {cfg.period_us}")
            if cfg.cfs_burst_us:
                with open(os.path.join(group, "cpu.max.burst"), "w") as f:
                    f.write(str(cfg.cfs_burst_us))
            with open(os.path.join(group, "cpu.weight"), "w") as f:
                f.write("10000")
        procs = os.path.join(group, "cgroup.procs")

        def enter() -> None:  # runs in the child before exec: its threads are born in the group
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        args = [
            exe,
            str(cfg.threads),
            str(cfg.seconds),
            str(cfg.burst_us),
            str(_think_us(cfg)),
            str(int(cfg.fixed)),
            str(seed),
            str(int(cfg.pinned)),
        ]
        comm = os.path.basename(exe)[:15]  # the threads' command name (TASK_COMM_LEN)
        tracer = _OtherTasksTrace(comm)
        traced = trace and tracer.start()
        root0 = root_cpuacct_ns()
        t0 = time.monotonic()
        try:
            # the program stops itself after cfg.seconds; the timeout only guards against a hang
            proc = subprocess.run(args, capture_output=True, text=True, preexec_fn=enter, timeout=cfg.seconds + 120)
        finally:
            text = tracer.stop() if traced else ""
        elapsed = time.monotonic() - t0
        root1 = root_cpuacct_ns()
        if proc.returncode != 0:
            raise RuntimeError(f"workload failed: {proc.stderr.strip()}")
        m = re.search(r"cpu_us (\d+)", proc.stdout)
        if m is None:
            raise RuntimeError(f"workload printed no cpu_us: {proc.stdout.strip()[:200]!r}")
        cpu_us = int(m.group(1))
        p99 = re.search(r"p99_delay_us (\d+)", proc.stdout)
        nb = re.search(r"bursts (\d+)", proc.stdout)
        outside = re.search(r"outside_ns (-?\d+)", proc.stdout)
        wakes = re.search(r"wakes (\d+)", proc.stdout)
        start = re.search(r"start_ns (\d+)", proc.stdout)
        others = other_task_intervals(text, int(start.group(1)), cfg.seconds, comm) if traced and start else None
        st = _read_stat(os.path.join(group, "cpu.stat"))
        if version == 1:
            thr_ns = st.get("throttled_time", 0)
        else:
            thr_ns = st.get("throttled_usec", 0) * 1000
        return Measurement(
            nr_periods=st.get("nr_periods", 0),
            nr_throttled=st.get("nr_throttled", 0),
            throttled_time_ns=thr_ns,
            cpu_used_ns=cpu_us * 1000,
            # the threads run for cfg.seconds; the wall time adds exec, start-up and exit (1-2 %)
            seconds=cfg.seconds,
            wall_s=elapsed,
            p99_delay_ns=int(p99.group(1)) * 1000 if p99 else None,
            bursts=int(nb.group(1)) if nb else 0,
            outside_ns=int(outside.group(1)) if outside else 0,
            wakes=int(wakes.group(1)) if wakes else 0,
            other_tasks=others,
            period_us=cfg.period_us,
            loadavg=loadavg1(),
            root_other_cpus=(
                max(0.0, (root1 - root0 - cpu_us * 1000) / 1e9 / elapsed)
                if root0 is not None and root1 is not None and elapsed > 0
                else None
            ),
        )
    finally:
        remove_group(group)


def remove_group(group: str) -> None:
    """Remove a run's cgroup; the kernel refuses while the exited tasks are still being reaped, so
    it is tried for up to 2.5 s."""
    for _ in range(50):
        try:
            os.rmdir(group)
            return
        except OSError:
            time.sleep(0.05)


def wake_latency_profile(exe: str) -> tuple[int, int, int]:
    """The idle wake-up latency in µs: the median over this machine's CPUs of each CPU's median of
    200 timer wake-ups (the model's ``wake_latency_us``), and the highest of the CPUs' 90th and 99th percentiles. A tail of
    milliseconds means the host was slow to resume the halted virtual CPUs (steal time, which
    other_load counts, is reported in 10 ms ticks)."""
    p50: list[int] = []
    p90: list[int] = []
    p99: list[int] = []
    for cpu in range(os.cpu_count() or 1):
        out = subprocess.run([exe, "wakelat", str(cpu)], capture_output=True, text=True, timeout=60).stdout
        for name, into in (("wake_latency_ns", p50), ("wake_latency_p90_ns", p90), ("wake_latency_p99_ns", p99)):
            m = re.search(rf"{name} (\d+)", out)
            if m:
                into.append(int(m.group(1)))
    if not p50:
        return 0, 0, 0
    return sorted(p50)[len(p50) // 2] // 1000, max(p90, default=0) // 1000, max(p99, default=0) // 1000


# An idle wake-up 90th percentile above this (µs) means the host kept this machine's virtual CPUs
# waiting while a row ran: 68-135 µs on quiet nights of this machine kind, 0.9-1.7 ms on a busy one
# (NOTEBOOK.md). The 99th percentile is not the test: of 200 wake-ups it is the second
# latest, which one host hiccup on a quiet night took to 1.3 ms. Such a row is marked "contended";
# it still counts, but is not a quiet-machine figure.
CONTENDED_P90_US = 500


@dataclass(frozen=True)
class LatencyProfile:
    """The idle wake-up latency (µs: median, 90th, 99th percentile) just before and just after a row."""

    before: tuple[int, int, int]
    after: tuple[int, int, int]

    @property
    def p50(self) -> int:
        """The row's idle wake-up latency for the model: the mean of the two medians."""
        return round((self.before[0] + self.after[0]) / 2)

    @property
    def p90(self) -> int:
        return max(self.before[1], self.after[1])

    @property
    def p99(self) -> int:
        return max(self.before[2], self.after[2])

    @property
    def contended(self) -> bool:
        return self.p90 > CONTENDED_P90_US


# How the idle wake-up latency grows with the time the CPU was idle, in thousandths of the latency
# after 3 ms (what wake_latency_profile measures and the model's wake_latency_us is): `--latency-curve`
# on this machine kind (2026-11-27 13:30 UTC, both vCPUs otherwise idle, 8 runs: 4 per CPU; in
# microseconds, another 4-run set read 25 after 0.1 ms, 59 after 3 ms, 117 after 50 ms). With the
# other vCPU busy (4 runs) it is lower after 1 and 1.5 ms of idle (34 and 40 µs against 47 and 46)
# and alike elsewhere (docs/throttling.md, "At the quota").
LATENCY_BY_IDLE: tuple[tuple[int, int], ...] = (
    (100, 474), (200, 606), (500, 660), (1_000, 778), (1_500, 762), (2_000, 968), (3_000, 1_000),
    (5_000, 1_329), (10_000, 1_564), (20_000, 1_587), (50_000, 1_738),
)  # fmt: skip


def wake_latency_curve(exe: str, repeat: int = 4) -> tuple[tuple[int, int], ...]:
    """``LATENCY_BY_IDLE`` measured here: each CPU's median timer lateness after each idle time,
    ``repeat`` times, the median of those per idle time, in thousandths of the one after 3 ms."""
    per_sleep: dict[int, list[int]] = {}
    for _ in range(repeat):
        for cpu in range(os.cpu_count() or 1):
            out = subprocess.run([exe, "wakecurve", str(cpu)], capture_output=True, text=True, timeout=120).stdout
            for sleep_us, late_ns in re.findall(r"wakecurve (\d+) (\d+)", out):
                per_sleep.setdefault(int(sleep_us), []).append(int(late_ns))
    if 3000 not in per_sleep:
        return ()
    ref = statistics.median(per_sleep[3000])
    return tuple((us, round(1000 * statistics.median(v) / ref)) for us, v in sorted(per_sleep.items()))


def _latency_text(profile: tuple[int, int, int]) -> str:
    return f"{profile[0]} us (p90 {profile[1]}, p99 {profile[2]})"


def busy_ns() -> int:
    """CPU time all CPUs spent busy since boot (/proc/stat's first line: all but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def root_cpuacct_ns() -> int | None:
    """CPU time every task has used since boot: the root cpuacct group's usage (cgroup v1), or None."""
    for path in ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"):
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            continue
    return None


def loadavg1() -> float | None:
    """The 1-minute load average, or None."""
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def other_load(busy_before_ns: int, busy_after_ns: int, real: Measurement) -> float:
    """CPUs (averaged over the run) that processes other than the measured group kept busy."""
    return max(0.0, (busy_after_ns - busy_before_ns - real.cpu_used_ns) / 1e9 / (real.wall_s or real.seconds))


# Seeds the model is run with per row (a few seconds for the table): periodic workers and burst credit
# make a 3 s run's throttling depend on the threads' phases (from 2 to 30 throttled periods of 30
# across seeds for `1000m/4 fixed 5ms`), so the row is compared with the model's mean.
MODEL_SEEDS = 32


@dataclass(frozen=True)
class Machine:
    """What the model needs of the machine the kernel runs came from."""

    cpus: int
    hz: int
    release: str  # the kernel release: its accounting rules (kernel_flags)
    # boot parameters that change where the kernel puts waking threads, which no mainline kernel has
    # (the calibration machine's "sched_vcpu_pack=15"); empty for a mainline kernel
    placement: str = ""

    @classmethod
    def here(cls) -> Machine:
        return cls(os.cpu_count() or 1, kernel_hz(), platform.release(), placement_parameters())

    def text(self) -> str:
        """How a saved table's header names the machine: kernel, HZ, CPUs and accounting rules."""
        out = f"kernel {self.release}, HZ={self.hz}, {self.cpus} CPUs, {kernel_flags(self.release)}"
        if self.placement:
            out += f", wake placement not mainline's ({self.placement})"
        return out


# Boot parameters of vendor kernels that change wake placement. ``sched_vcpu_pack`` (the calibration
# machine, 6.18.44-fc): a waking thread stays on its busy previous vCPU while that runs one task below
# about 70 % utilisation, where mainline's idle-CPU search moves it to an idle one (placement.py).
PLACEMENT_PARAMETERS = ("sched_vcpu_pack",)


def placement_parameters(cmdline_path: str = "/proc/cmdline") -> str:
    """The wake-placement boot parameters of ``PLACEMENT_PARAMETERS`` on this kernel's command line."""
    try:
        with open(cmdline_path) as f:
            words = f.read().split()
    except OSError:
        return ""
    return " ".join(w for w in words if w.split("=", 1)[0] in PLACEMENT_PARAMETERS)


def idle_cpu_permille(runs: list[Measurement], other_load: float, cpus: int) -> int:
    """How often (per thousand) a CPU not running the group was idle during a row's kernel runs:
    the other work (the root cpuacct group's CPU besides the group's, where the runs recorded it, else
    the row's ``other_load``) over the CPU time the group left, 1 minus that. The group's heavy weight
    lets other work only into the time it leaves, so on a host whose other work fills that time the
    kernel's idle-CPU search finds no idle CPU for a waking thread (traced on 2026-11-27: 0-1 % of
    the wake-ups of unpinned rows moved to another CPU, with 1.0-1.8 CPUs of other load)."""
    others = [m.root_other_cpus for m in runs if m.root_other_cpus is not None]
    other = sum(others) / len(others) if others and len(others) == len(runs) else other_load
    used = sum(m.cpu_used_ns / 1e9 / m.seconds for m in runs) / max(1, len(runs))
    free = cpus - used
    if free <= 0:
        return 0
    return max(0, min(1000, round(1000 * (1 - other / free))))


def simulate_mean(
    cfg: Config,
    machine: Machine,
    wake_latency: int = 0,
    wake_cpu: int = 0,
    sleep_cpu: int = 0,
    other_tasks: list[tuple[tuple[int, int, int], ...]] | None = None,
    seeds: int = MODEL_SEEDS,
    jitter: bool = False,
    idle_permille: int = 1000,
    latency_by_idle: tuple[tuple[int, int], ...] = LATENCY_BY_IDLE,
) -> Measurement:
    """The model's mean over ``seeds`` seeds; with ``other_tasks`` (the kernel runs' traced
    intervals), seed k replays those of run k mod the runs; ``idle_permille`` as
    ``Scenario.idle_cpu_permille`` (``idle_cpu_permille`` gives it for a row's kernel runs);
    ``latency_by_idle`` as ``Scenario.wake_latency_by_idle``."""
    return mean(
        [
            simulate_config(
                cfg,
                machine,
                seed,
                wake_latency,
                wake_cpu,
                sleep_cpu,
                other_tasks[seed % len(other_tasks)] if other_tasks else (),
                jitter,
                idle_permille,
                latency_by_idle,
            )
            for seed in range(seeds)
        ]
    )


def simulate_config(
    cfg: Config,
    machine: Machine | None = None,
    seed: int = 0,
    wake_latency: int = 0,
    wake_cpu: int = 0,
    sleep_cpu: int = 0,
    other_tasks: tuple[tuple[int, int, int], ...] = (),
    jitter: bool = False,
    idle_permille: int = 1000,
    latency_by_idle: tuple[tuple[int, int], ...] = LATENCY_BY_IDLE,
) -> Measurement:
    """One seed of the model for a row, on ``machine`` (default: this one), with the CPUs held by
    ``other_tasks`` (traced on that machine, within the run); with ``jitter``, the CPU besides the
    work varies from burst to burst and the CPUs' wake-up latencies from each other as measured on
    this machine kind (``BURST_CPU_SD_US``, ``LATENCY_SPREAD_US``); an idle CPU's wake-up latency
    grows with its idle time as ``latency_by_idle`` (``LATENCY_BY_IDLE``: as on this machine kind)."""
    m = machine or Machine.here()
    flags = kernel_flags(m.release)
    sc = Scenario(
        cpus=m.cpus,
        threads=cfg.threads,
        quota_us=cfg.quota_us,
        period_us=cfg.period_us,
        seconds_us=cfg.seconds * 1_000_000,
        burst_us=cfg.cfs_burst_us,
        seed=seed,
        hz=m.hz,
        workload=Workload(
            kind=cfg.kind,
            burst_us=cfg.burst_us,
            demand_millicores=cfg.demand_millicores,
            fixed_bursts=cfg.fixed,
            fixed_sleeps=cfg.fixed,
            # the program pins thread i to CPU i mod C; unpinned, waking threads spread to idle CPUs
            wake_spread=not cfg.pinned,
            # a burst's busy loop reads its thread CPU clock, a system call; a CPU-bound thread's
            # loop reads CLOCK_MONOTONIC, which the vDSO answers without entering the kernel
            frequent_syscalls=cfg.kind == REQUEST,
        ),
        pre_5_4_expiry=flags["pre_5_4_expiry"],
        account_empty_throttled=flags["account_empty_throttled"],
        task_based_throttle=flags["task_based_throttle"],
        wake_latency_us=wake_latency,
        wake_cpu_us=wake_cpu,
        sleep_cpu_us=sleep_cpu,
        wake_cpu_sd_us=BURST_CPU_SD_US if jitter else 0,
        wake_latency_spread_us=LATENCY_SPREAD_US if jitter else 0,
        other_tasks=other_tasks,
        idle_cpu_permille=idle_permille,
        wake_latency_by_idle=latency_by_idle,
    )
    r = simulate(sc)
    return Measurement(
        r.nr_periods,
        r.nr_throttled,
        r.throttled_time_ns,
        r.cpu_used_ns,
        cfg.seconds,
        r.burst_delay_p99_ns,
        r.bursts_done,
        period_us=cfg.period_us,
    )


# Of a burst's CPU besides its work, the part a thread runs going to sleep, from the end of the work
# to switch-out: a median 5.9 µs in sched_switch traces of the 32-thread periodic workload on this
# machine kind, 6.4 µs in an 8-thread exponential one (NOTEBOOK.md). The rest it runs on
# waking: switch-in to the return to user space (about 5 µs traced) and leaving the idle state, which
# this kernel's trace does not show (some switches from the idle task are missing) and which grows
# with how long the CPU was idle (29 µs per wake-up after 1 ms sleeps, 66 µs after 20-50 ms).
SLEEP_CPU_US = 6

# How the machine varies around the row's means, measured on this machine kind in per-burst records
# of `1000m/4 fixed 5ms` (NOTEBOOK.md). The CPU a thread used besides its work varied from
# burst to burst with a standard deviation of 14 µs (5-35 µs between the 10th and 90th percentiles);
# the model draws the waking part so. The two CPUs' pairs of workers had cycles of different
# lengths within a run, the difference between them (their idle wake-ups) drawn anew each run: a
# standard deviation of 9 µs over 50 runs of 15 s (mean -0.7 µs).
BURST_CPU_SD_US = 14
LATENCY_SPREAD_US = 9


def split_burst_cpu(per_burst_us: float | None) -> tuple[int, int]:
    """The model's ``wake_cpu_us`` and ``sleep_cpu_us`` from the CPU a row's threads used per burst
    besides its work (µs); (0, 0) where nothing was measured."""
    if not per_burst_us:
        return 0, 0
    total = round(per_burst_us)
    sleep = min(SLEEP_CPU_US, total)
    return total - sleep, sleep


# The calibration targets (issue 15, for a quiet machine): nr_throttled and throttled time within
# 15 % of the kernel's (throttled time: or 2 ms per period when both are small), CPU used within 10 %.
TOL_REL = 0.15
TOL_THROTTLED_MS = 2.0
TOL_PERIODS = 0.5
TOL_CPU_REL = 0.10
TOL_P99_REL = 0.25  # burst-latency p99 within 25 % (or 1 ms)
TOL_P99_MS = 1.0
# A nearest-rank p99 of fewer bursts rests on a handful of samples (of 60 bursts: the largest, which
# the run's first period decides); it is printed but not held to the target.
P99_MIN_BURSTS = 500


def p99_comparable(real: Measurement, model: Measurement) -> bool:
    return (
        real.p99_delay_ns is not None
        and model.p99_delay_ns is not None
        and min(real.bursts, model.bursts) >= P99_MIN_BURSTS
    )


def compare(real: Measurement, model: Measurement, versus: str = "model") -> list[str]:
    """Reasons the two disagree beyond the targets (empty list: they agree); ``versus`` names the
    second in them."""
    problems = []
    # the means before rounding: of 1.6 and 1.4 throttled periods, 2 and 1 would read as 50 % apart
    # (and at least half a period apart: a count's mean that close would round to the same count)
    nr, nm = real.throttled_periods, model.throttled_periods
    if abs(nr - nm) > max(TOL_REL * max(nr, nm), TOL_PERIODS):
        problems.append(f"nr_throttled {nr:g} vs {versus} {nm:g}")
    tr, tm = real.throttled_ms, model.throttled_ms
    if abs(tr - tm) > max(TOL_THROTTLED_MS, TOL_REL * tr):
        problems.append(f"throttled {tr:.1f} ms/period vs {versus} {tm:.1f}")
    ur = real.cpu_used_ns / 1e9 / real.seconds
    um = model.cpu_used_ns / 1e9 / model.seconds
    if abs(ur - um) > TOL_CPU_REL * max(ur, um, 0.05):
        problems.append(f"CPU used {ur:.3f}/s vs {versus} {um:.3f}/s")
    if real.p99_delay_ns is not None and model.p99_delay_ns is not None and p99_comparable(real, model):
        pr, pm = real.p99_delay_ns / 1e6, model.p99_delay_ns / 1e6
        if abs(pr - pm) > max(TOL_P99_MS, TOL_P99_REL * pr):
            problems.append(f"burst p99 wait {pr:.1f} ms vs {versus} {pm:.1f}")
    return problems


def _dev(real: float, model: float) -> str:
    if real == 0:
        return "—" if model == 0 else "∞"
    return f"{100 * (model - real) / real:+.0f}%"


def _ms(ns: int | None) -> str:
    return "—" if ns is None else f"{ns / 1e6:.1f}"


def _periods(m: Measurement) -> str:
    n = m.throttled_periods
    out = f"{n:.1f}/{m.nr_periods}" if m.runs > 1 else f"{m.nr_throttled}/{m.nr_periods}"
    if m.runs > 1 and m.nr_throttled_range is not None:
        out += f" ({m.nr_throttled_range[0]}–{m.nr_throttled_range[1]})"
    return out


def _throttled(m: Measurement) -> str:
    out = f"{m.throttled_ms:.1f}"
    if m.runs > 1 and m.throttled_ms_range is not None:
        out += f" ({m.throttled_ms_range[0]:.1f}–{m.throttled_ms_range[1]:.1f})"
    return out


def other_tasks_text(runs: list[Measurement]) -> str:
    """What the traced other tasks took of the CPUs during the runs: milliseconds per second of run
    (summed over CPUs) and intervals per second; empty where the runs were not traced."""
    traced = [m for m in runs if m.other_tasks is not None]
    if not traced:
        return ""
    secs = sum(m.seconds for m in traced)
    held = sum(b - a for m in traced for _, a, b in m.other_tasks or ())
    n = sum(len(m.other_tasks or ()) for m in traced)
    return f"{held / 1000 / secs:.1f} ms/s in {n / secs:.0f}/s"


def table(
    rows: list[tuple[Config, Measurement, Measurement]],
    loads: list[float] | None = None,
    latencies: list[LatencyProfile | None] | None = None,
    versus: str = "model",
    others: list[str] | None = None,
) -> str:
    """Kernel vs simulator (or vs ``versus``: other kernel runs) per configuration: throttled periods,
    throttled time (summed over CPUs, per period), CPU used, p99 wait (in parentheses: too few bursts
    to hold to the target), the CPU the kernel's threads used per burst besides its work; with the
    other load (CPUs busy outside the group; and, where traced, what other tasks held of the CPUs,
    ``other_tasks_text``) and the idle wake-up latency around the row (median and, in parentheses,
    the 90th and 99th percentiles; "contended" when the 90th is over CONTENDED_P90_US) when
    measured."""
    head = (
        f"| config | threads | kernel nr_throttled/nr_periods | {versus} | Δ nr_throttled "
        f"| kernel throttled ms/period | {versus} | Δ throttled | kernel CPU/s | {versus} CPU/s "
        f"| kernel p99 wait ms | {versus} | kernel CPU per burst besides its work µs | other load (CPUs) "
        "| idle wake-up µs |"
    )
    lines = [head, "|" + "---|" * 15]
    for i, (cfg, real, model) in enumerate(rows):
        tr, tm = real.throttled_ms, model.throttled_ms
        load = f"{loads[i]:.2f}" if loads is not None else "—"
        if others is not None and others[i]:
            load += f" ({others[i]})"
        lat = latencies[i] if latencies is not None else None
        wake = "—" if lat is None else f"{lat.p50} ({lat.p90}, {lat.p99})" + (" contended" if lat.contended else "")
        p99r, p99m = _ms(real.p99_delay_ns), _ms(model.p99_delay_ns)
        cost = "—" if real.burst_cpu_us is None else f"{real.burst_cpu_us:.0f}"
        if real.p99_delay_ns is not None and not p99_comparable(real, model):
            p99r, p99m = f"({p99r})", f"({p99m})"
        lines.append(
            f"| {cfg.name} | {cfg.threads} "
            f"| {_periods(real)} | {_periods(model)} "
            f"| {_dev(real.throttled_periods, model.throttled_periods)} "
            f"| {_throttled(real)} | {_throttled(model)} | {_dev(tr, tm)} "
            f"| {real.cpu_used_ns / 1e9 / real.seconds:.3f} | {model.cpu_used_ns / 1e9 / model.seconds:.3f} "
            f"| {p99r} | {p99m} | {cost} | {load} | {wake} |"
        )
    return "\n".join(lines)


# --reproducibility: rows whose tables' means differ by more than this chance of it under one
# distribution of runs are named in the summary; the test's permutations and its fixed seed (the
# report is the same on every call)
DIFFER_P = 0.01
PERMUTATIONS = 2000


def _testable(samples: list[list[float]]) -> list[list[float]] | None:
    """The tables that measured the row, where the one-way analysis of variance can compare them:
    at least two tables, at least one with two runs (else the runs' scatter is unknown); else None."""
    tables = [list(x) for x in samples if x]
    return tables if len(tables) >= 2 and any(len(x) >= 2 for x in tables) else None


def tables_differ(samples: list[list[float]], permutations: int = PERMUTATIONS, seed: int = 0) -> float | None:
    """How likely tables measuring one row would differ as much as ``samples`` (each table's
    throttled periods, run by run) do if every run came from one distribution: a permutation test
    of the one-way analysis of variance. The runs are dealt to tables of the same sizes at random
    ``permutations`` times; the result is the share of deals whose between-table sum of squares is at
    least the observed one, the observed deal counted (so never 0). With the total fixed, that sum
    of squares rises with sum(S_i² / n_i), S_i the sum of table i's n_i runs, which is what is
    compared. None where there is nothing to compare (``_testable``)."""
    tables = _testable(samples)
    if tables is None:
        return None
    pooled = [v for x in tables for v in x]
    sizes = [len(x) for x in tables]

    def stat(values: list[float]) -> float:
        total, i = 0.0, 0
        for n in sizes:
            s = sum(values[i : i + n])
            total += s * s / n
            i += n
        return total

    observed = stat(pooled) * (1 - 1e-12)  # ties count as at least as extreme
    rng = random.Random(seed)
    hits = 1
    for _ in range(permutations):
        rng.shuffle(pooled)
        if stat(pooled) >= observed:
            hits += 1
    return hits / (permutations + 1)


def between_table_sd(samples: list[list[float]]) -> float | None:
    """How far the row's true mean moves from table to table (throttled periods, a standard
    deviation), beyond what the runs' scatter within the tables explains: the one-way random-effects
    estimate from the analysis of variance's mean squares, (MSB - MSW) / n0 with n0 the tables' size
    adjusted for unequal runs, 0 where the tables differ no more than their runs do. None where
    ``tables_differ`` has nothing to test."""
    tables = _testable(samples)
    if tables is None:
        return None
    k, n = len(tables), sum(len(x) for x in tables)
    grand = sum(sum(x) for x in tables) / n
    means = [sum(x) / len(x) for x in tables]
    msb = sum(len(x) * (m - grand) ** 2 for x, m in zip(tables, means, strict=True)) / (k - 1)
    msw = sum((v - m) ** 2 for x, m in zip(tables, means, strict=True) for v in x) / (n - k)
    n0 = (n - sum(len(x) ** 2 for x in tables) / n) / (k - 1)
    return math.sqrt(max(0.0, (msb - msw) / n0))


@dataclass(frozen=True)
class RowAgreement:
    """How one calibration row fares across several saved kernel tables: its mean in each (None
    where it was not measured), how many pairs of those tables agree on it within the targets
    (``compare``, the earlier table as the reference) out of the pairs that measured it, the mean of
    all its runs and, table by table, whether it agrees with that mean (what a model exactly at the
    kernel's long-run mean would score) and with the model where the model was run."""

    row: str
    means: tuple[Measurement | None, ...]
    pairs: int
    pairs_within: int
    pooled: Measurement  # all the row's runs in all the tables
    pooled_agrees: tuple[bool | None, ...]  # None: not measured
    model_agrees: tuple[bool | None, ...] = ()  # None: not simulated or not measured
    # the model's throttled periods over the tables, each weighted by its kernel runs
    model_periods: float | None = None
    # tables_differ over the tables that measured the row: how likely their means would differ this
    # much if all their runs came from one distribution (None: no table has two runs)
    differ_p: float | None = None
    between_sd: float | None = None  # between_table_sd over those tables (throttled periods)


def reproducibility(
    tables: list[dict[str, list[Measurement]]], models: list[dict[str, Measurement]] | None = None
) -> tuple[list[RowAgreement], int, int]:
    """Every pair of kernel tables (each row's runs per name) compared by the targets, as
    ``--against`` compares two: per row (in CONFIGS order, those measured in at least two tables),
    and how many pairs agree on every row both measured, out of the pairs. With ``models`` (the
    model's mean per row for each table), also the model against each table."""
    per_row: list[RowAgreement] = []
    pair_off: set[tuple[int, int]] = set()
    n = len(tables)
    for cfg in CONFIGS:
        name = cfg.name
        have = [i for i in range(n) if name in tables[i]]
        if len(have) < 2:
            continue
        got = {i: mean(tables[i][name]) for i in have}
        pairs = within = 0
        for a_i, i in enumerate(have):
            for j in have[a_i + 1 :]:
                pairs += 1
                if compare(got[i], got[j], "other kernel"):
                    pair_off.add((i, j))
                else:
                    within += 1
        pooled = mean([run for i in have for run in tables[i][name]])
        # each run's throttled periods scaled to the row's mean run length, so that tables whose runs
        # ran for different lengths compare per second (not per period counted: the period timer
        # counts 31 or 32 for the same 3 s, which would make the CPU-bound rows' tables differ)
        length = pooled.seconds
        counts = [[run.nr_throttled * length / run.seconds for run in tables[i][name]] for i in have]
        agrees: tuple[bool | None, ...] = ()
        model_periods = None
        if models is not None:
            agrees = tuple(
                not compare(got[i], models[i][name]) if i in got and name in models[i] else None for i in range(n)
            )
            weighed = [(len(tables[i][name]), models[i][name].throttled_periods) for i in have if name in models[i]]
            if weighed:
                model_periods = sum(w * v for w, v in weighed) / sum(w for w, _ in weighed)
        per_row.append(
            RowAgreement(
                row=name,
                means=tuple(got.get(i) for i in range(n)),
                pairs=pairs,
                pairs_within=within,
                pooled=pooled,
                pooled_agrees=tuple(not compare(got[i], pooled) if i in got else None for i in range(n)),
                model_agrees=agrees,
                model_periods=model_periods,
                differ_p=tables_differ(counts),
                between_sd=between_table_sd(counts),
            )
        )
    all_pairs = n * (n - 1) // 2
    return per_row, all_pairs, all_pairs - len(pair_off)


def _p_text(p: float) -> str:
    """A permutation test's p: two significant digits, "p < 0.001" at the test's resolution."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def _moves_text(r: RowAgreement) -> str:
    """The between-table standard deviation in throttled periods and as a share of the row's mean."""
    if r.between_sd is None:
        return "—"
    share = f" (±{100 * r.between_sd / r.pooled.throttled_periods:.0f} %)" if r.pooled.throttled_periods else ""
    return f"±{r.between_sd:.1f}{share}"


def _of(agrees: tuple[bool | None, ...]) -> str:
    """ "k of n": the tables that agree, of those compared (None: not compared)."""
    return f"{agrees.count(True)} of {len(agrees) - agrees.count(None)}"


def reproducibility_text(
    names: list[str], rows: list[RowAgreement], pairs: int, pairs_within: int, with_model: bool
) -> str:
    """The ``--reproducibility`` report: the tables, a line per row, and the summary last."""
    lines = [f"{i + 1}: {name}" for i, name in enumerate(names)]
    head = (
        "| config | kernel throttled periods, table by table | kernel throttled ms/period "
        "| pairs of tables within the targets | all the runs' throttled periods | tables within the targets of "
        "all the runs | tables' means differ beyond their runs' scatter (p) | how far the mean moves between tables |"
    )
    if with_model:
        head += " tables the model is within the targets of | the model's throttled periods over the tables |"
    lines += ["", head, "|" + "---|" * (10 if with_model else 8)]
    for r in rows:
        periods = ", ".join("—" if m is None else f"{m.throttled_periods:.1f}" for m in r.means)
        ms = ", ".join("—" if m is None else f"{m.throttled_ms:.1f}" for m in r.means)
        pooled = r.pooled.throttled_periods
        differ = "—" if r.differ_p is None else _p_text(r.differ_p)
        line = (
            f"| {r.row} | {periods} | {ms} | {r.pairs_within} of {r.pairs} | {pooled:.1f} | {_of(r.pooled_agrees)} "
            f"| {differ} | {_moves_text(r)} |"
        )
        if with_model:
            mp = "—" if r.model_periods is None else f"{r.model_periods:.1f} ({_dev(pooled, r.model_periods)})"
            line += f" {_of(r.model_agrees)} | {mp} |"
        lines.append(line)

    def whole(flags: list[tuple[bool | None, ...]]) -> int:
        """The tables no row disagrees with."""
        return sum(1 for i in range(len(names)) if all(f[i] is not False for f in flags))

    summary = f"the kernel's tables agree within the targets on every row in {pairs_within} of {pairs} pairs"
    summary += f"; the mean of all the runs agrees with every row of {whole([r.pooled_agrees for r in rows])} of {len(names)} tables"
    if with_model:
        summary += (
            f"; the model agrees with every row of {whole([r.model_agrees for r in rows])} of {len(names)} tables"
        )
    off = [f"{r.row} ({r.pairs_within} of {r.pairs})" for r in rows if r.pairs_within < r.pairs]
    if off:
        summary += "; rows the kernel does not reproduce in every pair: " + ", ".join(off)
    moved = [
        f"{r.row} ({_p_text(r.differ_p)}; its mean moves between tables by {_moves_text(r)})"
        for r in rows
        if r.differ_p is not None and r.differ_p < DIFFER_P
    ]
    if moved:
        summary += (
            "; rows whose tables' means differ beyond what their runs' scatter explains "
            f"(p < {DIFFER_P}): " + ", ".join(moved)
        )
    lines += ["", summary]
    return "\n".join(lines)


def _profile(values: list[int]) -> tuple[int, int, int]:
    p50, p90, p99 = values
    return int(p50), int(p90), int(p99)


@dataclass(frozen=True)
class SavedRuns:
    """Kernel runs of the calibration rows and the machine they came from: what ``--save`` writes
    and ``--load`` reads."""

    header: str
    machine: Machine
    latency: int  # the idle wake-up latency before the first row (µs)
    runs: dict[str, tuple[list[Measurement], float]]  # per row: its runs and the other load
    row_latency: dict[str, LatencyProfile]  # per row (files from 2026-11-24 on)

    def write(self, path: str) -> None:
        doc = {
            "header": self.header,
            "machine": asdict(self.machine),
            "wake_latency_us": self.latency,
            "row_wake_latency_us": {name: asdict(p) for name, p in self.row_latency.items()},
            "rows": {name: ([asdict(m) for m in r], load) for name, (r, load) in self.runs.items()},
        }
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)

    @classmethod
    def read(cls, path: str) -> SavedRuns:
        """The runs saved in ``path``; SavedRunsUnreadable when it cannot be read or is not such a file."""
        try:
            with open(path) as f:
                saved = json.load(f)
            return cls._from(saved)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SavedRunsUnreadable(f"cannot read saved kernel runs from {path}: {e}") from e

    @classmethod
    def _from(cls, saved: dict[str, Any]) -> SavedRuns:
        return cls(
            header=saved["header"],
            machine=Machine(**saved["machine"]),
            latency=saved["wake_latency_us"],
            runs={name: ([_measurement(m) for m in r], load) for name, (r, load) in saved["rows"].items()},
            row_latency={
                name: LatencyProfile(_profile(v["before"]), _profile(v["after"]))
                for name, v in saved.get("row_wake_latency_us", {}).items()
            },
        )


def _measurement(d: dict[str, object]) -> Measurement:
    """A saved run (JSON turned tuples into lists)."""
    d = dict(d)
    for k in ("nr_throttled_range", "throttled_ms_range"):
        if d.get(k) is not None:
            d[k] = tuple(d[k])  # type: ignore[arg-type]
    if d.get("other_tasks") is not None:
        d["other_tasks"] = tuple(tuple(iv) for iv in d["other_tasks"])  # type: ignore[attr-defined]
    return Measurement(**d)  # type: ignore[arg-type]


def _no_progress(line: str) -> None:
    pass


def _measure_rows(
    configs: list[Config], repeat: int, resolve: int = 0, progress: Callable[[str], None] = _no_progress
) -> SavedRuns:
    """The kernel's runs of each row and the highest other load during them; the idle wake-up
    latency around each row (measured between rows, so a row's "after" is the next row's "before").
    With ``resolve``, a row whose runs scatter too widely for the target gets more, up to that many
    in all, until its mean is known to the target (``runs_to_resolve``). ``progress`` gets a line
    as each row starts and as each extra run of a scattered row starts."""
    runs: dict[str, tuple[list[Measurement], float]] = {}
    latency: dict[str, LatencyProfile] = {}
    with tempfile.TemporaryDirectory(prefix="podfit-calib-") as d:
        exe = compile_program(d)
        first = before_row = wake_latency_profile(exe)
        for i, cfg in enumerate(configs, 1):
            reals: list[Measurement] = []
            load = 0.0
            run = 0
            progress(f"[{i}/{len(configs)}] {cfg.name}: {repeat} run{'s' * (repeat != 1)} of {cfg.seconds} s")
            while run < repeat or run < resolve:
                if run >= repeat:
                    scatter = _scatter_text(mean(reals), "runs")
                    if scatter is None:
                        break
                    progress(f"[{i}/{len(configs)}] {cfg.name}: run {run + 1} of at most {resolve} ({scatter})")
                before = busy_ns()
                reals.append(measure(cfg, exe, seed=run))
                load = max(load, other_load(before, busy_ns(), reals[-1]))
                run += 1
            runs[cfg.name] = (reals, load)
            after_row = wake_latency_profile(exe)
            latency[cfg.name] = LatencyProfile(before_row, after_row)
            before_row = after_row
    machine = Machine.here()
    header = (
        f"{machine.text()}, idle wake-up latency {_latency_text(first)}, after the rows {_latency_text(before_row)}"
    )
    return SavedRuns(header, machine, first[0], runs, latency)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python lab/calibrate/calibrate.py", description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", help="run only the rows whose name contains one of these")
    ap.add_argument("--repeat", type=int, default=1, help="measure each row this many times (the mean is compared)")
    ap.add_argument(
        "--resolve",
        type=int,
        default=0,
        metavar="MAX",
        help="measure a row whose throttled periods scatter too widely for the 15 %% target again, up to MAX "
        "runs in all, until its mean is known to the target",
    )
    ap.add_argument("--save", metavar="FILE", help="also write the kernel's runs (measured or loaded) to FILE (JSON)")
    ap.add_argument(
        "--load", metavar="FILE", help="compare the model with kernel runs saved by --save instead of measuring"
    )
    ap.add_argument(
        "--against",
        metavar="FILE",
        help="compare the kernel runs with other kernel runs saved by --save, instead of with the model "
        "(how well the kernel reproduces itself, by the same targets)",
    )
    ap.add_argument(
        "--reproducibility",
        nargs="+",
        metavar="FILE",
        help="compare kernel runs saved by --save in several files with each other, every pair by the "
        "targets (how often the kernel reproduces each row), instead of measuring; row names go before it",
    )
    ap.add_argument(
        "--with-model",
        action="store_true",
        help="with --reproducibility: also simulate each file's rows and count the files the model agrees with",
    )
    ap.add_argument(
        "--no-burst-cpu",
        action="store_true",
        help="simulate without the CPU the threads used besides their work (to see what it changes)",
    )
    ap.add_argument(
        "--no-jitter",
        action="store_true",
        help="simulate every burst's CPU besides its work and every CPU's wake-up latency the same "
        "(the row's means), without the variation measured on this machine kind",
    )
    ap.add_argument(
        "--seeds",
        type=int,
        default=MODEL_SEEDS,
        metavar="N",
        help=f"simulate each row with this many seeds (default {MODEL_SEEDS}); more where the summary says the "
        "model's throttled periods scatter too widely",
    )
    ap.add_argument(
        "--grid",
        choices=sorted(GRIDS),
        default="table",
        help="the rows: the calibration table (default) or the bias grid of unpinned threads (issue 39)",
    )
    ap.add_argument(
        "--without-other-tasks",
        action="store_true",
        help="simulate without the other tasks traced on the CPUs during the kernel's runs (to see what "
        "they change); by default the model replays them",
    )
    ap.add_argument(
        "--idle-host",
        action="store_true",
        help="simulate unpinned rows as if every CPU without the group's runnable threads were idle "
        "(a quiet host); by default as idle as the host was during the runs (idle_cpu_permille)",
    )
    ap.add_argument(
        "--flat-latency",
        action="store_true",
        help="simulate an idle CPU's wake-up latency the same however long it was idle (to see what "
        "LATENCY_BY_IDLE changes)",
    )
    ap.add_argument(
        "--latency-curve",
        action="store_true",
        help="measure how this machine's idle wake-up latency grows with the idle time and print it as "
        "LATENCY_BY_IDLE, instead of comparing rows",
    )
    args = ap.parse_args(argv)
    if args.latency_curve:
        with tempfile.TemporaryDirectory(prefix="podfit-calib-") as d:
            curve = wake_latency_curve(compile_program(d))
        if not curve:
            print("the wake-up latency program printed no curve", file=sys.stderr)
            return 2
        print("LATENCY_BY_IDLE = " + repr(curve))
        return 0
    if args.reproducibility:
        if len(args.reproducibility) < 2:
            ap.error("--reproducibility needs at least two files")
        if args.load or args.against or args.save or args.resolve or args.repeat != 1:
            ap.error(
                "--reproducibility compares saved files: it takes no --load, --against, --save, --repeat or --resolve"
            )
        return _reproducibility(args.reproducibility, args.rows, args)
    if args.with_model:
        ap.error("--with-model goes with --reproducibility")
    configs = [c for c in GRIDS[args.grid] if not args.rows or any(r in c.name for r in args.rows)]
    try:
        saved = SavedRuns.read(args.load) if args.load else None
        other = SavedRuns.read(args.against) if args.against else None
    except SavedRunsUnreadable as e:
        print(e, file=sys.stderr)
        return 2
    if saved is not None:
        configs = [c for c in configs if c.name in saved.runs]
    if not configs:
        print(
            "no calibration row to compare: " + ("none matches " + " ".join(args.rows) if args.rows else "none saved"),
            file=sys.stderr,
        )
        return 2
    if saved is None:
        try:
            cgroup_root()
        except CgroupUnavailable as e:
            print(f"skipped: {e}", file=sys.stderr)
            return 2
        saved = _measure_rows(configs, args.repeat, args.resolve, lambda line: print(line, file=sys.stderr, flush=True))
    if args.save:
        saved.write(args.save)
    header = saved.header
    if other is not None:
        configs = [c for c in configs if c.name in other.runs]
        header += f"; against {other.header}"
        if not configs:
            print(
                f"no calibration row to compare: none in both {args.load or 'the runs'} and {args.against}",
                file=sys.stderr,
            )
            return 2
    versus = "model" if other is None else "other kernel"
    rows, loads, lats, traces = [], [], [], []
    bad: list[str] = []
    for cfg in configs:
        reals, load = saved.runs[cfg.name]
        real = mean(reals)
        loads.append(load)
        traces.append(other_tasks_text(reals))
        lat = saved.row_latency.get(cfg.name)
        lats.append(lat)
        model = _model(cfg, saved, args) if other is None else mean(other.runs[cfg.name][0])
        rows.append((cfg, real, model))
        problems = compare(real, model, versus)
        if problems:
            bad.append(cfg.name)
            print(f"{cfg.name}: " + "; ".join(problems), file=sys.stderr)
    print(
        header
        + (", without the CPU besides the work" if args.no_burst_cpu else "")
        + (", without the other tasks" if args.without_other_tasks else "")
        + (", without jitter" if args.no_jitter else "")
    )
    print(table(rows, loads, lats, versus=versus, others=traces))
    print(_summary(configs, bad, saved.row_latency, saved.machine) + _scatter(rows, versus))
    # a benchmark: the exit status reports whether every row agreed, for a quiet machine
    return 1 if bad else 0


def _model(cfg: Config, saved: SavedRuns, args: argparse.Namespace) -> Measurement:
    """The model's mean for a row of saved kernel runs, on their machine: the idle wake-up latency
    around the row, the CPU the threads used per burst besides their work and the other tasks traced
    during the runs (unless the options leave them out)."""
    reals = saved.runs[cfg.name][0]
    real = mean(reals)
    lat = saved.row_latency.get(cfg.name)
    wake_cpu, sleep_cpu = (0, 0) if args.no_burst_cpu else split_burst_cpu(real.burst_cpu_us)
    traced = [m.other_tasks for m in reals if m.other_tasks is not None]
    # unpinned threads move at a wake-up only to an idle CPU, as idle as the host was during the runs
    placement = {}
    if not cfg.pinned and not args.idle_host:
        placement["idle_permille"] = idle_cpu_permille(reals, saved.runs[cfg.name][1], saved.machine.cpus)
    return simulate_mean(
        cfg,
        saved.machine,
        wake_latency=lat.p50 if lat is not None else saved.latency,
        wake_cpu=wake_cpu,
        sleep_cpu=sleep_cpu,
        other_tasks=None if args.without_other_tasks else traced or None,
        jitter=not args.no_jitter,
        seeds=args.seeds,
        latency_by_idle=() if args.flat_latency else LATENCY_BY_IDLE,
        **placement,
    )


def _reproducibility(paths: list[str], rows: list[str], args: argparse.Namespace) -> int:
    """``--reproducibility``: the saved kernel tables compared with each other, pair by pair (and,
    with ``--with-model``, each with the model)."""
    try:
        saved = [SavedRuns.read(p) for p in paths]
    except SavedRunsUnreadable as e:
        print(e, file=sys.stderr)
        return 2
    tables = [{name: r for name, (r, _) in t.runs.items() if not rows or any(x in name for x in rows)} for t in saved]
    models = None
    if args.with_model:
        models = []
        for t, kernel in zip(saved, tables, strict=True):
            models.append({c.name: _model(c, t, args) for c in CONFIGS if c.name in kernel})
    per_row, pairs, within = reproducibility(tables, models)
    if not per_row:
        print("no calibration row measured in two of the tables", file=sys.stderr)
        return 2
    print(reproducibility_text(paths, per_row, pairs, within, models is not None))
    return 0


def _summary(
    configs: list[Config], bad: list[str], row_latency: dict[str, LatencyProfile], machine: Machine | None = None
) -> str:
    """How many rows are within the targets; which were measured on a contended host; which are off
    where the kernel's wake placement is not mainline's."""
    out = f"{len(configs) - len(bad)} of {len(configs)} rows within the targets"
    if bad:
        out += " (off: " + ", ".join(bad) + ")"
    placed = [c.name for c in configs if c.name in bad and not c.pinned and _at_quota(c)]
    if machine is not None and machine.placement and placed:
        out += (
            f"; unpinned at their quota on a kernel whose wake placement is not mainline's ({machine.placement}), "
            "where the throttled time follows where threads wake (their pinned twins test the model at the "
            'quota; docs/throttling.md, "At the quota"): ' + ", ".join(placed)
        )
    contended = [c.name for c in configs if c.name in row_latency and row_latency[c.name].contended]
    if contended:
        out += (
            f"; measured while the host delayed idle wake-ups by over {CONTENDED_P90_US} µs (p90), "
            "not quiet-machine figures: " + ", ".join(contended)
        )
    return out


def _at_quota(cfg: Config) -> bool:
    """A request row offered exactly its quota."""
    return (
        cfg.kind == REQUEST
        and cfg.demand_millicores is not None
        and (cfg.demand_millicores * cfg.period_us == cfg.quota_us * 1000)
    )


def _scatter_text(m: Measurement, unit: str) -> str | None:
    """ "±X % over N runs, K would do" where ``m``'s throttled periods scatter too widely for the
    target (twice the standard error of the mean as a share of it), else None."""
    need, two_se = runs_to_resolve(m), m.throttled_periods_two_se
    if need is None or two_se is None:
        return None
    return f"±{100 * two_se / m.throttled_periods:.0f} % over {m.runs} {unit}, {need} would do"


def _scatter(rows: list[tuple[Config, Measurement, Measurement]], versus: str) -> str:
    """The rows whose runs scatter too widely for their mean throttled periods to be held to the
    target: twice the standard error of the mean (as a share of it) and the runs that would do."""
    parts = []
    for cfg, real, other in rows:
        sides = []
        for name, m, unit in (("kernel", real, "runs"), (versus, other, "seeds" if versus == "model" else "runs")):
            scatter = _scatter_text(m, unit)
            if scatter is not None:
                sides.append(f"{name} {scatter}")
        if sides:
            parts.append(f"{cfg.name} ({'; '.join(sides)})")
    if not parts:
        return ""
    return (
        f"; throttled periods scatter between runs more than the {TOL_REL * 100:.0f} % target allows (twice the "
        "standard error of the mean): " + ", ".join(parts)
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
