"""Measured usage: what the containers really used, as evidence for the rules (``check --usage``).

Inputs (each ``--usage [KIND=]FILE``):

* Prometheus HTTP API JSON, the response of ``/api/v1/query_range`` (matrix) or ``/api/v1/query``
  (vector), for one of :data:`KINDS`:

  ==========  =====================================================================================
  cpu         ``rate(container_cpu_usage_seconds_total[5m])``: CPU cores per container
  memory      ``container_memory_working_set_bytes``
  throttled   ``container_cpu_cfs_throttled_periods_total`` (counter samples, or its ``increase``)
  periods     ``container_cpu_cfs_periods_total`` (counter samples, or its ``increase``)
  terminated  ``kube_pod_container_status_last_terminated_reason`` (kube-state-metrics; value 1)
  ==========  =====================================================================================

  and ``container_start_time_seconds`` (kind ``started``, cAdvisor's start time of each container
  instance), which tells a counter series that begins late in the window because its container
  started then from one whose first samples were lost to a scrape gap, and a restart between two
  samples from a gap; and kube-state-metrics' owner references, which say which workload a pod
  belongs to:

  ================  ===============================================================================
  pod_owner         ``kube_pod_owner{namespace,pod,owner_kind,owner_name,owner_is_controller}``
  replicaset_owner  ``kube_replicaset_owner{namespace,replicaset,owner_kind,owner_name,…}``
  job_owner         ``kube_job_owner{namespace,job_name,owner_kind,owner_name,…}``
  ================  ===============================================================================

  The kind is ``KIND=`` when given, else the series' ``__name__`` (raw selectors keep it), else
  the file's name (``cpu.json``, ``…memory…``); ``podfit usage export`` writes one bundle holding
  every kind (``kind: PodfitUsage``).
* ``kubectl top pods -A --containers`` text: one CPU and one memory sample per container.

Series are matched to the manifests' containers by namespace, the pod's owner and container name.
Where kube-state-metrics gave the pod's owner references, the owner is the end of that chain (a
ReplicaSet's Deployment, a Job's CronJob, else the controller itself; a pod without a controller is
its own workload) and must be a workload of the manifests exactly. Otherwise the owner is the
workload whose name the pod name is with its generated suffix: ``<deployment>-<template hash>-<5>``,
``<statefulset>-<ordinal>``, ``<daemonset|job>-<5>``, ``<cronjob>-<schedule time>-<5>``, or the
Pod itself; hashes and suffixes in Kubernetes' alphabet for generated names). The pod-level series (container ``""`` or ``POD``) are left out. What matches nothing is listed
(:attr:`UsageFacts.unmatched`), and so is a pod that several workloads could own
(:attr:`UsageFacts.ambiguous`): it is never guessed.

Per container the samples of all its pods make one distribution: p50, p95, p99 and max by nearest
rank (exact integers: CPU millicores, memory bytes), the window they cover (first and last sample,
in milliseconds since the epoch), the throttled share of CFS periods over the window (parts per
million) and the termination reasons seen. Parsing is pure (text in, samples out); matching is
pure over the workloads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .model import Workload
from .quantity import QuantityError, parse_cpu, parse_memory
from .reading import json_value
from .words import plural

__all__ = [
    "KINDS",
    "UsageError",
    "Sample",
    "Series",
    "Stats",
    "ContainerUsage",
    "UsageFacts",
    "parse_usage",
    "parse_prometheus",
    "parse_kubectl_top",
    "match_usage",
    "percentile",
    "owner_pattern",
    "measured_container",
    "OWNER_KINDS",
    "Owners",
    "STARTED",
    "StartTimes",
]

KINDS = ("cpu", "memory", "throttled", "periods", "terminated")
# cAdvisor's start time of each container instance: read beside the counters, no usage of its own
STARTED = "started"
# kube-state-metrics' owner references: kind → the label naming the owned object
OWNER_KINDS = {"pod_owner": "pod", "replicaset_owner": "replicaset", "job_owner": "job_name"}
METRIC_KIND = {
    "kube_pod_owner": "pod_owner",
    "kube_replicaset_owner": "replicaset_owner",
    "kube_job_owner": "job_owner",
    "container_cpu_usage_seconds_total": "cpu",
    "container_memory_working_set_bytes": "memory",
    "container_cpu_cfs_throttled_periods_total": "throttled",
    "container_cpu_cfs_periods_total": "periods",
    "kube_pod_container_status_last_terminated_reason": "terminated",
    "container_start_time_seconds": STARTED,
}


class UsageError(ValueError):
    """A usage file podfit cannot read; the message names the file."""


@dataclass(frozen=True)
class Sample:
    time_ms: int  # 0 when the source has no time (kubectl top)
    # millicores (cpu), bytes (memory), periods (throttled, periods), 1 (terminated), the container's
    # start in milliseconds since the epoch (started)
    value: int


@dataclass(frozen=True)
class Series:
    kind: str
    namespace: str
    pod: str
    container: str
    samples: tuple[Sample, ...]
    source: str
    counter: bool = False  # raw counter samples (throttled/periods from a range query): use the increase
    reason: str = ""  # terminated: the reason label
    # a counter whose series began inside the queried window: a container that started then (a new
    # pod, or a restart: cAdvisor gives each container instance its own series), counted from 0
    # unless the container's start time says it ran before (a scrape gap)
    began: bool = False
    # counters: the start of the queried window (the bundle's, else the response's earliest sample)
    window_start_ms: int | None = None
    # cAdvisor's container instance (its ``id`` label, the cgroup; else ``name``): counters and
    # start times of the same instance go together
    instance: str = ""
    # pod_owner, replicaset_owner, job_owner: ``pod`` is the owned pod, ReplicaSet or Job, and these
    # its controller ("<none>" when it has none)
    owner_kind: str = ""
    owner_name: str = ""


@dataclass(frozen=True)
class Stats:
    p50: int
    p95: int
    p99: int
    max: int
    samples: int


@dataclass(frozen=True)
class ContainerUsage:
    namespace: str
    workload: str  # kind/name of the owning workload
    container: str
    pods: tuple[str, ...]
    cpu: Stats | None = None  # millicores
    memory: Stats | None = None  # bytes
    throttled_periods: int | None = None
    periods: int | None = None
    terminated: tuple[str, ...] = ()  # last termination reasons seen (OOMKilled, Error, …)
    window_ms: tuple[int, int] | None = None  # first and last sample (None: instant, kubectl top)
    sources: tuple[str, ...] = ()

    @property
    def throttled_ppm(self) -> int | None:
        """Throttled share of the CFS periods, parts per million (rounded down)."""
        if self.throttled_periods is None or not self.periods:
            return None
        return self.throttled_periods * 1_000_000 // self.periods

    @property
    def window(self) -> str:
        if self.window_ms is None:
            return "one kubectl top sample"
        seconds = (self.window_ms[1] - self.window_ms[0]) // 1000
        return _duration(seconds)


@dataclass(frozen=True)
class UsageFacts:
    """The measured usage of a run: per (namespace, workload kind/name, container)."""

    containers: tuple[ContainerUsage, ...]
    unmatched: tuple[str, ...] = ()  # namespace/pod/container of series no container matched
    sources: tuple[str, ...] = ()
    # namespace/pod/container (Kind/name or Kind/name) of series whose pod several workloads could own
    ambiguous: tuple[str, ...] = ()
    _index: Mapping[tuple[str, str, str], ContainerUsage] = field(default_factory=dict, repr=False, compare=False)

    def of(self, workload: Workload, container: str) -> ContainerUsage | None:
        ns = workload.ref.namespace or "default"
        return self._index.get((ns, f"{workload.ref.kind}/{workload.ref.name}", container))


def _duration(seconds: int) -> str:
    if seconds >= 86400 and seconds % 3600 == 0:
        d, h = divmod(seconds // 3600, 24)
        return f"{d}d{h}h" if h else f"{d}d"
    if seconds >= 3600:
        h, rest = divmod(seconds, 3600)
        return f"{h}h{rest // 60}m" if rest >= 60 else f"{h}h"
    if seconds >= 60:
        return f"{seconds // 60}m"
    return f"{seconds}s"


def percentile(values: Sequence[int], p: int) -> int:
    """Nearest-rank percentile of sorted ``values`` (p in 1..100): the smallest value with at least
    p% of the values at or below it."""
    n = len(values)
    rank = -(-p * n // 100)
    return values[max(rank, 1) - 1]


def stats(values: Iterable[int]) -> Stats | None:
    v = sorted(values)
    if not v:
        return None
    return Stats(percentile(v, 50), percentile(v, 95), percentile(v, 99), v[-1], len(v))


# ----------------------------------------------------------------------------------- parsing ---


def _number(kind: str, text: Any, where: str) -> int | None:
    """A Prometheus sample value as an exact integer of the kind's unit; None for NaN/Inf."""
    s = str(text).strip()
    if s.lower() in ("nan", "+inf", "-inf", "inf"):
        return None
    try:
        if kind == "cpu":
            return parse_cpu(s)  # cores → millicores, rounded up like Kubernetes
        return parse_memory(s)  # bytes / periods / 1, rounded up
    except QuantityError as e:
        raise UsageError(f"{where}: a sample value is not a number: {e.reason}") from None


_TIME = re.compile(r"([0-9]{1,15})(?:\.([0-9]*))?")


def _time_ms(t: Any, where: str) -> int:
    """A Prometheus timestamp (seconds, millisecond resolution) in milliseconds."""
    if isinstance(t, int) and not isinstance(t, bool) and abs(t) < 10**15:
        return t * 1000
    if isinstance(t, float) and abs(t) < 1e15:  # NaN and ±Inf are not below it
        return round(t * 1000)  # the API's timestamps have at most three decimals
    m = _TIME.fullmatch(t.strip()) if isinstance(t, str) else None
    if m is None:
        raise UsageError(f"{where}: a sample's time is not a number of seconds")
    return int(m[1]) * 1000 + int(((m[2] or "") + "000")[:3])


def _start_ms(value: Any, where: str) -> int:
    """A ``container_start_time_seconds`` sample value (seconds since the epoch) in milliseconds."""
    try:
        return _time_ms(value, where)
    except UsageError:
        raise UsageError(f"{where}: a start time is not a number of seconds since the epoch") from None


def _kind_from_name(path: str) -> str | None:
    base = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    hits = [k for k in ("throttled", "periods", "terminated", "memory", "cpu") if k in base]
    return hits[0] if hits else None


def parse_prometheus(
    doc: Mapping[str, Any], source: str, kind: str | None = None, start_ms: int | None = None
) -> list[Series]:
    """The series of one Prometheus API response (``{"status": "success", "data": {...}}``).
    ``start_ms`` is the start of the queried range when known (a bundle's window); else a range
    response's earliest sample stands for it. A raw counter's series whose first sample comes later
    began inside the window (:attr:`Series.began`)."""
    if doc.get("status") not in (None, "success"):
        raise UsageError(f"{source}: the query failed{_prometheus_error(doc)}")
    data = doc.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") not in ("matrix", "vector"):
        raise UsageError(f"{source}: not a Prometheus query result (data.resultType matrix or vector)")
    matrix = data["resultType"] == "matrix"
    result = data.get("result") or []
    if not isinstance(result, list):
        raise UsageError(f"{source}: data.result is not a list")
    out = []
    for i, r in enumerate(result):
        metric = (r.get("metric") or {}) if isinstance(r, Mapping) else None
        if not isinstance(metric, Mapping):
            raise UsageError(f"{source}: result[{i}]: not an object with a metric object")
        k = kind or METRIC_KIND.get(str(metric.get("__name__", ""))) or _kind_from_name(source)
        if k not in KINDS and k not in OWNER_KINDS and k != STARTED:
            raise UsageError(
                f"{source}: cannot tell which usage this is (cpu, memory, throttled, periods, terminated, "
                f"{STARTED}, {', '.join(OWNER_KINDS)}): pass it as KIND=FILE"
            )
        where = f"{source}: result[{i}]"
        raw = r.get("values") if matrix else [r.get("value")]
        if not isinstance(raw, (list, type(None))):
            raise UsageError(f"{where}: the samples are not a list")
        samples = []
        for pair in raw or ():
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise UsageError(f"{where}: a sample is not [time, value]")
            v = _start_ms(pair[1], where) if k == STARTED else _number(k, pair[1], where)
            if v is not None:
                samples.append(Sample(_time_ms(pair[0], where), v))
        ns = str(metric.get("namespace") or metric.get("exported_namespace") or "")
        pod = str(metric.get("pod") or metric.get("pod_name") or "")
        container = str(metric.get("container") or metric.get("container_name") or "")
        reason = str(metric.get("reason") or "")
        if k == "terminated" and not any(s.value for s in samples):
            continue  # kube-state-metrics exports 0 for the reasons a container did not end with
        if k in OWNER_KINDS:
            owner = _owner_series(k, metric, ns, tuple(samples), source)
            if owner is not None:
                out.append(owner)
            continue
        out.append(
            Series(
                k,
                ns,
                pod,
                container,
                tuple(samples),
                source,
                counter=matrix and k in ("throttled", "periods") and "__name__" in metric,
                reason=reason,
                instance=str(metric.get("id") or metric.get("name") or ""),
            )
        )
    counters = [i for i, x in enumerate(out) if x.counter and x.samples]
    if counters:
        start = start_ms if start_ms is not None else min(out[i].samples[0].time_ms for i in counters)
        for i in counters:
            out[i] = replace(out[i], began=out[i].samples[0].time_ms > start, window_start_ms=start)
    return out


def _owner_series(
    kind: str, metric: Mapping[str, Any], ns: str, samples: tuple[Sample, ...], source: str
) -> Series | None:
    """One owner reference of kube-state-metrics as a series; None for a reference that is not the
    object's controller (``owner_is_controller="false"``: it does not make the pods), or one no
    sample confirms (the gauges are 1 while the reference exists)."""
    name = str(metric.get(OWNER_KINDS[kind]) or "")
    owner_kind, owner_name = str(metric.get("owner_kind") or ""), str(metric.get("owner_name") or "")
    if not name or not owner_kind or not owner_name or not any(x.value for x in samples):
        return None
    if str(metric.get("owner_is_controller", "true")) == "false":
        return None
    return Series(kind, ns, name, "", samples, source, owner_kind=owner_kind, owner_name=owner_name)


def _prometheus_error(doc: Mapping[str, Any]) -> str:
    """Prometheus's own account of a failed query (an error response: status error, errorType,
    error), cut to 200 characters; nothing from a document of another shape."""
    kind, error = doc.get("errorType"), doc.get("error")
    if doc.get("status") != "error" or not isinstance(kind, str) or not isinstance(error, str):
        return " (status is not success)"
    return f": {kind[:40]}: {error[:200]}"


_TOP_HEADER = re.compile(r"^\s*NAMESPACE\s+POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)", re.M)


def parse_kubectl_top(text: str, source: str) -> list[Series]:
    """``kubectl top pods -A --containers`` output: a CPU and a memory series of one sample each."""
    out = []
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _TOP_HEADER.match(line)), None)
    if start is None:
        raise UsageError(f"{source}: not `kubectl top pods -A --containers` output (no NAMESPACE POD NAME header)")
    for n, line in enumerate(lines[start + 1 :], start + 2):
        cols = line.split()
        if not cols:
            continue
        if len(cols) != 5:
            raise UsageError(f"{source}:{n}: expected 5 columns, found {len(cols)}")
        ns, pod, container, cpu, mem = cols
        try:
            c, m = parse_cpu(cpu), parse_memory(mem)
        except QuantityError as e:
            raise UsageError(f"{source}:{n}: not a quantity: {e.reason}") from None
        out.append(Series("cpu", ns, pod, container, (Sample(0, c),), source))
        out.append(Series("memory", ns, pod, container, (Sample(0, m),), source))
    return out


def parse_usage(text: str, source: str, kind: str | None = None) -> list[Series]:
    """One usage file: a Prometheus response, a ``PodfitUsage`` bundle, or ``kubectl top`` text."""
    known = KINDS + (STARTED,) + tuple(OWNER_KINDS)
    if kind is not None and kind not in known + ("top",):
        raise UsageError(f"{source}: unknown usage kind {kind!r} (one of {', '.join(known)}, top)")
    if kind == "top" or _TOP_HEADER.search(text):
        return parse_kubectl_top(text, source)
    try:
        doc = json_value(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{source}: neither JSON (line {e.lineno}: {e.msg}) nor `kubectl top` output") from None
    except ValueError as e:  # nested too deeply
        raise UsageError(f"{source}: {e}") from None
    if not isinstance(doc, Mapping):
        raise UsageError(f"{source}: expected a JSON object")
    if doc.get("kind") == "PodfitUsage":
        out = []
        queries = doc.get("queries") or {}
        if not isinstance(queries, Mapping):
            raise UsageError(f"{source}: queries is not an object")
        window = doc.get("window")
        start = window.get("start") if isinstance(window, Mapping) else None
        start_ms = _time_ms(start, f"{source}: window.start") if start is not None else None
        for k, entry in sorted(queries.items()):
            if k not in KINDS and k not in OWNER_KINDS and k != STARTED:
                raise UsageError(f"{source}: queries.{k}: unknown usage kind")
            response = (entry.get("response") or {}) if isinstance(entry, Mapping) else None
            if not isinstance(response, Mapping):
                raise UsageError(f"{source}: queries.{k}: no response object")
            out.extend(parse_prometheus(response, f"{source}#{k}", k, start_ms))
        return out
    return parse_prometheus(doc, source, kind)


# ---------------------------------------------------------------------------------- matching ---

# The characters of Kubernetes' generated names (k8s.io/apimachinery/pkg/util/rand: no vowels, no
# 0, 1 or 3, so that no word is spelt): the 5-character suffix of a pod's generateName and, through
# rand.SafeEncodeString, a ReplicaSet's pod-template-hash (the decimal digits of a 32-bit hash, one
# character each: 1 to 10).
_ALNUM = "[bcdfghjklmnpqrstvwxz2456789]"
_HASH = _ALNUM + "{1,10}"
_SUFFIX = _ALNUM + "{5}"
_ORDINAL = "(?:0|[1-9][0-9]*)"
# An Indexed Job's pods are <job>-<completion index>-<suffix>; the API server holds an Indexed Job's
# completions to 10^5, so an index has at most 5 digits, where the minute since the epoch that
# names a CronJob's Job has 8 (from 1976 on): a CronJob's pod is never taken for a Job's.
_INDEX = "(?:(?:0|[1-9][0-9]{0,4})-)?"


def owner_pattern(kind: str, name: str) -> re.Pattern[str] | None:
    """The names of the pods a workload of ``kind`` called ``name`` creates: a Deployment's
    ``<name>-<template hash>-<suffix>``, a StatefulSet's ``<name>-<ordinal>``, a DaemonSet's,
    ReplicaSet's and ReplicationController's ``<name>-<suffix>``, a Job's ``<name>-[<index>-]<suffix>``,
    a CronJob's Jobs' ``<name>-<scheduled minute since the epoch>-[<index>-]<suffix>``, a Pod's own name."""
    n = re.escape(name)
    pattern = {
        "Pod": n,
        "Deployment": f"{n}-{_HASH}-{_SUFFIX}",
        "StatefulSet": f"{n}-{_ORDINAL}",
        "DaemonSet": f"{n}-{_SUFFIX}",
        "ReplicaSet": f"{n}-{_SUFFIX}",
        "ReplicationController": f"{n}-{_SUFFIX}",
        "Job": f"{n}-{_INDEX}{_SUFFIX}",
        "CronJob": f"{n}-[0-9]+-{_INDEX}{_SUFFIX}",
    }.get(kind)
    return re.compile(f"^{pattern}$") if pattern else None


def _increase(
    samples: Sequence[Sample],
    began: bool = False,
    starts: Sequence[int] | None = None,
    window_start_ms: int | None = None,
) -> int:
    """A counter's increase over its samples, across resets as ``rate()`` takes them: a drop means
    the counter restarted from zero, so the value after it is all increase. A counter that
    ``began`` inside the window counted from zero before its first sample too.

    ``starts``, the container's start times (``container_start_time_seconds``, milliseconds), when
    known, decide instead of guessing: the counter counted from zero before its first sample only
    if the container started inside the window before it (else the first samples were lost to a
    scrape gap, and what the counter held then was counted before the window); and a start between
    two samples is a restart, the later value all increase, even where it is not below the earlier
    (a gap with no start between is the same counter: the difference)."""
    if not samples:
        return 0
    if starts is None:
        total = samples[0].value if began else 0
    else:
        since = window_start_ms if window_start_ms is not None else samples[0].time_ms
        total = samples[0].value if any(since < t <= samples[0].time_ms for t in starts) else 0
    for a, b in zip(samples, samples[1:], strict=False):
        restarted = starts is not None and any(a.time_ms < t <= b.time_ms for t in starts)
        total += b.value if restarted or b.value < a.value else b.value - a.value
    return total


def _total(series: Sequence[Series], starts: StartTimes | None = None) -> int | None:
    """The periods counted over the window: a counter's increase, else the sum of the values."""
    if not series:
        return None
    return sum(
        _increase(s.samples, s.began, starts.of(s) if starts else None, s.window_start_ms)
        if s.counter
        else sum(x.value for x in s.samples)
        for s in series
    )


class StartTimes:
    """Container start times (kind ``started``) by container, and by cAdvisor instance."""

    def __init__(self, series: Iterable[Series]) -> None:
        self.by_container: dict[tuple[str, str, str], set[int]] = {}
        self.by_instance: dict[tuple[str, str, str, str], set[int]] = {}
        for s in series:
            if s.kind != STARTED:
                continue
            times = {x.value for x in s.samples}
            self.by_container.setdefault((s.namespace, s.pod, s.container), set()).update(times)
            if s.instance:
                self.by_instance.setdefault((s.namespace, s.pod, s.container, s.instance), set()).update(times)

    def of(self, s: Series) -> list[int] | None:
        """The start times that apply to counter ``s``: its instance's, else every instance's of its
        container; None when none was exported (the increase falls back on the samples alone)."""
        key = (s.namespace, s.pod, s.container)
        found = self.by_instance.get((*key, s.instance)) if s.instance else None
        if found is None:
            found = self.by_container.get(key)
        return sorted(found) if found else None


_NONE = "<none>"  # kube-state-metrics' owner_kind and owner_name of an object without an owner


@dataclass(frozen=True)
class Owners:
    """kube-state-metrics' controller references per namespace and name: of pods, ReplicaSets and
    Jobs (each a set: a name reused within the window by another owner has several)."""

    pods: Mapping[tuple[str, str], frozenset[tuple[str, str]]]
    replicasets: Mapping[tuple[str, str], frozenset[tuple[str, str]]]
    jobs: Mapping[tuple[str, str], frozenset[tuple[str, str]]]

    @classmethod
    def of(cls, series: Iterable[Series]) -> Owners:
        maps: dict[str, dict[tuple[str, str], set[tuple[str, str]]]] = {k: {} for k in OWNER_KINDS}
        for s in series:
            if s.kind in OWNER_KINDS:
                maps[s.kind].setdefault((s.namespace, s.pod), set()).add((s.owner_kind, s.owner_name))
        pods, rss, jobs = ({key: frozenset(v) for key, v in maps[k].items()} for k in OWNER_KINDS)
        return cls(pods, rss, jobs)

    def resolve(self, ns: str, pod: str) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]] | None:
        """The workloads (kind, name) at the end of the pod's controller chain, and the
        intermediate objects whose owner is not known ("ReplicaSet"/"Job", name): the name
        patterns say which Deployment or CronJob made those. None when the pod's owner is not known."""
        refs = self.pods.get((ns, pod))
        if refs is None:
            return None
        ends: set[tuple[str, str]] = set()
        open_: set[tuple[str, str]] = set()
        for kind, name in refs:
            if kind == _NONE or name == _NONE:
                ends.add(("Pod", pod))  # a bare pod is its own workload
                continue
            parents = {"ReplicaSet": self.replicasets, "Job": self.jobs}.get(kind)
            up = parents.get((ns, name)) if parents is not None else None
            if parents is not None and up is None:
                open_.add((kind, name))
            elif up is not None:
                ends.update((kind, name) if k == _NONE or n == _NONE else (k, n) for k, n in up)
            else:
                ends.add((kind, name))
        return frozenset(ends), frozenset(open_)


# What made a ReplicaSet or a Job whose own owner is not known: a Deployment's ReplicaSets are
# <deployment>-<template hash>, a CronJob's Jobs <cronjob>-<scheduled minute>.
_MAKERS = {"ReplicaSet": ("Deployment", _HASH), "Job": ("CronJob", "[0-9]+")}


def _owned(ns: str, pod: str, owners: Owners, workloads: Sequence[Workload]) -> tuple[list[Workload], str, bool] | None:
    """The manifests' workloads the pod's known owner chain ends in, the owners it names ("Kind/name
    or …", for the message when none or several match) and whether it names more than one (the
    pod's name was reused by another owner within the window: its series mix both, and count for
    neither). None when kube-state-metrics did not say who owns the pod."""
    chain = owners.resolve(ns, pod)
    if chain is None:
        return None
    ends, open_ = chain
    found = [w for w in workloads if (w.ref.kind, w.ref.name) in ends]
    for kind, name in open_:
        maker, part = _MAKERS[kind]
        found += [
            w
            for w in workloads
            if (w.ref.kind == kind and w.ref.name == name)
            or (w.ref.kind == maker and re.fullmatch(f"{re.escape(w.ref.name)}-{part}", name))
        ]
    named = " or ".join(sorted(f"{k}/{n}" for k, n in ends | open_))
    return _distinct(found), named, len(ends | open_) > 1


def match_usage(series: Sequence[Series], workloads: Sequence[Workload]) -> UsageFacts:
    """Attach each series to the workload container it measures; pure. A pod's owner is its
    controller chain as kube-state-metrics reports it (``kube_pod_owner`` and the ReplicaSets' and
    Jobs' owners), resolved to the manifests' workload exactly; the name patterns decide only for
    pods it does not report. A pod more than one workload could own is not guessed at: its series
    are listed as ambiguous, as those of a pod no workload of the manifests owns are listed as
    unmatched."""
    owners: dict[str, list[tuple[re.Pattern[str], Workload]]] = {}
    by_ns: dict[str, list[Workload]] = {}
    for w in workloads:
        ns = w.ref.namespace or "default"
        by_ns.setdefault(ns, []).append(w)
        pat = owner_pattern(w.ref.kind, w.ref.name)
        if pat is not None:
            owners.setdefault(ns, []).append((pat, w))
    chains = Owners.of(series)
    found: dict[tuple[str, str, str], list[Series]] = {}
    unmatched: set[str] = set()
    ambiguous: set[str] = set()
    pod_owners: dict[tuple[str, str], tuple[list[Workload], str, bool]] = {}
    starts = StartTimes(series)
    for s in series:
        if s.kind in OWNER_KINDS or s.kind == STARTED or s.container in ("", "POD"):
            continue  # owner references, start times; the pod's own cgroup and the pause container
        key = (s.namespace, s.pod)
        if key not in pod_owners:
            known = _owned(s.namespace, s.pod, chains, by_ns.get(s.namespace, []))
            if known is None:
                by_name = _distinct(cand for pat, cand in owners.get(s.namespace, ()) if pat.match(s.pod))
                known = (by_name, "", False)
            pod_owners[key] = known
        cands, named, mixed = pod_owners[key]
        where = f"{s.namespace}/{s.pod}/{s.container}"
        if mixed or len(cands) > 1:
            listed = named if mixed else " or ".join(f"{w.ref.kind}/{w.ref.name}" for w in cands)
            ambiguous.add(f"{where} ({listed})")
            continue
        owner = cands[0] if cands else None
        if owner is None:
            unmatched.add(f"{where} (owner {named}, not in the manifests)" if named else where)
            continue
        if s.container not in {c.name for c in owner.pod.all_containers}:
            unmatched.add(where)
            continue
        found.setdefault((s.namespace, f"{owner.ref.kind}/{owner.ref.name}", s.container), []).append(s)
    usages = [
        _container_usage(ns, workload, container, ss, starts) for (ns, workload, container), ss in sorted(found.items())
    ]
    index = {(u.namespace, u.workload, u.container): u for u in usages}
    return UsageFacts(
        containers=tuple(usages),
        unmatched=tuple(sorted(unmatched)),
        sources=tuple(sorted({s.source for s in series if s.kind not in OWNER_KINDS and s.kind != STARTED})),
        ambiguous=tuple(sorted(ambiguous)),
        _index=index,
    )


def _distinct(ws: Iterable[Workload]) -> list[Workload]:
    """The workloads, one per kind and name (the same object given twice is one owner)."""
    seen: dict[tuple[str, str], Workload] = {}
    for w in ws:
        seen.setdefault((w.ref.kind, w.ref.name), w)
    return sorted(seen.values(), key=lambda w: (w.ref.kind, w.ref.name))


def _container_usage(
    ns: str, workload: str, container: str, ss: Sequence[Series], starts: StartTimes | None = None
) -> ContainerUsage:
    """One container's usage from all its series (every pod, every kind)."""
    by = {k: [s for s in ss if s.kind == k] for k in KINDS}
    times = [x.time_ms for s in ss for x in s.samples if x.time_ms]
    return ContainerUsage(
        namespace=ns,
        workload=workload,
        container=container,
        pods=tuple(sorted({s.pod for s in ss})),
        cpu=stats(x.value for s in by["cpu"] for x in s.samples),
        memory=stats(x.value for s in by["memory"] for x in s.samples),
        throttled_periods=_total(by["throttled"], starts),
        periods=_total(by["periods"], starts),
        terminated=tuple(sorted({s.reason for s in by["terminated"] if s.reason})),
        window_ms=(min(times), max(times)) if times else None,
        sources=tuple(sorted({s.source for s in ss})),
    )


_OWNER_KINDS = ("Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")


def measured_container(series: Sequence[Series], spec: str) -> ContainerUsage | None:
    """The measured usage of one container named ``NAMESPACE/[KIND/]WORKLOAD/CONTAINER`` without
    the manifests (``podfit throttle --usage``): the series of that namespace and container whose
    pod is owned by a workload called WORKLOAD (of KIND, else of any kind): by kube-state-metrics'
    owner references when the series hold them, else by the names such a workload gives its pods.
    Without KIND and owner references a
    Deployment ``api``'s pod names also fit a ReplicaSet ``api-v2``'s (``api-v2-<5>`` reads as
    ``api``'s hash ``v2``): give KIND when such names share a namespace. A ValueError when
    ``spec`` is malformed."""
    parts = spec.split("/")
    kinds = {k.lower(): k for k in _OWNER_KINDS}
    owner_kinds: tuple[str, ...] = _OWNER_KINDS
    if len(parts) == 4 and parts[1].lower() in kinds:
        owner_kinds = (kinds[parts[1].lower()],)
        parts = [parts[0], parts[2], parts[3]]
    if len(parts) != 3 or not all(parts):
        raise ValueError(
            f"{spec!r}: expected NAMESPACE/[KIND/]WORKLOAD/CONTAINER, e.g. shop/checkout/app or "
            f"shop/StatefulSet/db/postgres (KIND one of {', '.join(_OWNER_KINDS)})"
        )
    ns, name, container = parts
    patterns = [p for k in owner_kinds if (p := owner_pattern(k, name)) is not None]
    chains = Owners.of(series)

    def owned(pod: str) -> bool:
        chain = chains.resolve(ns, pod)
        if chain is None:  # kube-state-metrics did not say: the name patterns
            return any(p.match(pod) for p in patterns)
        ends, open_ = chain
        if len(ends | open_) != 1:
            return False
        ((kind, n),) = ends | open_
        if (kind, n) in ends:
            return kind in owner_kinds and n == name
        maker, part = _MAKERS[kind]
        return (kind in owner_kinds and n == name) or (
            maker in owner_kinds and re.fullmatch(f"{re.escape(name)}-{part}", n) is not None
        )

    ss = [
        s
        for s in series
        if s.kind not in OWNER_KINDS
        and s.kind != STARTED
        and s.namespace == ns
        and s.container == container
        and owned(s.pod)
    ]
    if not ss:
        return None
    return _container_usage(ns, name, container, ss, StartTimes(series))


def unmatched_notice(usage: UsageFacts, show: int = 5, min_samples: int = 10) -> tuple[str, ...]:
    """What the report tells about the usage: how much matched, what was too little to judge a
    distribution by (fewer than ``min_samples`` samples), and what did not match or was ambiguous."""
    out = [
        f"usage: {plural(len(usage.containers), 'container')} of the manifests measured "
        f"({', '.join(usage.sources) or 'no file'})"
    ]
    few = [u for u in usage.containers if any(s is not None and s.samples < min_samples for s in (u.cpu, u.memory))]
    if few:
        out.append(
            f"usage: {len(few)} of them measured in fewer than {min_samples} samples (a kubectl top snapshot "
            "is one sample per pod: a point, not a distribution): the rules on percentiles (PF108, PF109, "
            "PF110) leave them out; `podfit usage export --prometheus URL` gives a range of samples"
        )
    for items, verbs, what in (
        (usage.unmatched, ("matches", "match"), "no container of the manifests"),
        (usage.ambiguous, ("has", "have"), "pods more than one workload could own, and count for none"),
    ):
        if items:
            more = len(items) - show
            out.append(
                f"usage: {plural(len(items), 'measured container')} {verbs[len(items) != 1]} {what}: "
                + ", ".join(items[:show])
                + (f" and {more} more" if more > 0 else "")
            )
    return tuple(out)
