"""What ``podfit fix`` would change: from a check's findings to field changes, each with its reason.

Pure: findings and facts in, a :class:`FixPlan` out. A change is proposed only where the right value
is known from the manifest, the platform or a value the user gave; every other finding of a rule
that ``fix`` knows is listed with the reason it has no safe fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..clusters import cluster_objects, pool_fields
from ..facts import Facts
from ..findings import Finding
from ..model import Container, K8sObject, ObjectRef, Workload
from ..platform import NodePool, VMClass
from ..quantity import format_cpu, format_memory
from ..rules._usage import MIN_SAMPLES
from ..words import plural
from ..workloads import container_path

__all__ = ["Change", "FixOptions", "FixPlan", "Unfixable", "FIXABLE", "plan_fixes"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class FixOptions:
    default_cpu: int | None = None  # millicores, for PF101/PF105 (`--default-cpu`)
    default_memory: int | None = None  # bytes, for PF102/PF105 (`--default-memory`)
    limit_headroom_percent: int = 10  # a limit set from a measured peak leaves this much above it


@dataclass(frozen=True)
class Change:
    rule: str
    file: str
    ref: ObjectRef
    line: int  # the finding's line
    path: Path  # from the object's root to the scalar
    value: str  # the quantity to write, canonical form
    old: str | None  # what the field held, as text (None: the field is added)
    reason: str
    container: str = ""  # the container's name as written (Kubernetes' merge key in a patch)

    @property
    def field(self) -> str:
        return ".".join(str(k) if isinstance(k, str) else f"[{k}]" for k in self.path).replace(".[", "[")


@dataclass(frozen=True)
class Unfixable:
    finding: Finding
    reason: str


@dataclass(frozen=True)
class FixPlan:
    changes: tuple[Change, ...]
    unfixable: tuple[Unfixable, ...]


def _samples(n: int) -> str:
    """``1 measured sample is``, ``2 measured samples are``."""
    return f"{plural(n, 'measured sample')} {'is' if n == 1 else 'are'}"


def _fmt(resource: str, value: int) -> str:
    return format_cpu(value) if resource == "cpu" else format_memory(value)


def _declared(c: Container, kind: str, resource: str) -> int | None:
    return getattr(c.declared, f"{resource}_{kind.rstrip('s')}")


def _effective(c: Container, kind: str, resource: str) -> int | None:
    return getattr(c.resources, f"{resource}_{kind.rstrip('s')}")


def _raw_text(w: Workload | K8sObject, path: Path) -> str | None:
    cur: object = w.obj.raw if isinstance(w, Workload) else w.raw
    for key in path:
        if isinstance(cur, dict) and isinstance(key, str):
            cur = cur.get(key)
        elif isinstance(cur, list) and isinstance(key, int) and key < len(cur):
            cur = cur[key]
        else:
            return None
    return None if cur is None else str(cur)


class _Builder:
    def __init__(self, f: Finding, w: Workload, c: Container, at: Path, facts: Facts | None = None) -> None:
        self.f, self.w, self.c, self.at = f, w, c, at
        self.usage = facts.usage.of(w, c.name) if facts is not None and facts.usage is not None else None

    def measured(self, resource: str) -> Any:
        """The container's measured usage statistics of ``resource`` (``--usage``), or None."""
        return getattr(self.usage, resource, None) if self.usage is not None else None

    def sampled(self, stats: Any) -> str:
        """How much was measured, as the usage findings say it: ``288 samples over 1d, 2 pods``,
        or ``2 samples in one kubectl top snapshot, 2 pods``."""
        u = self.usage
        n = f"{plural(stats.samples, 'sample')}"
        when = f"over {u.window}" if u is not None and u.window_ms is not None else "in one kubectl top snapshot"
        pods = len(u.pods) if u is not None else 0
        return f"{n} {when}, {plural(pods, 'pod')}"

    def set(self, kind: str, resource: str, value: int, reason: str) -> Change:
        path = self.at + ("resources", kind, resource)
        return Change(
            self.f.rule,
            self.f.location.file,
            self.w.ref,
            self.f.location.line,
            path,
            _fmt(resource, value),
            _raw_text(self.w, path),
            reason,
            str(_raw_text(self.w, self.at + ("name",)) or ""),
        )

    def set_declared(self, kind: str, resource: str, value: int, reason: str) -> list[Change] | str:
        """The change of a field the manifest declares; one a LimitRange default fills is fixed there."""
        if _declared(self.c, kind, resource) is None:
            return f"the {kind.rstrip('s')} comes from a LimitRange default; fix the LimitRange"
        return [self.set(kind, resource, value, reason)]


Fixer = Callable[[_Builder, FixOptions], "list[Change] | str"]


def _pf201(b: _Builder, _opts: FixOptions) -> list[Change] | str:
    cpu = int(b.f.details.get("cpu", 0))
    whole = -(-cpu // 1000) * 1000
    reason = (
        f"{_fmt('cpu', cpu)} CPU rounded up to {plural(whole // 1000, 'whole CPU')}, so the static CPU Manager "
        "can give the container exclusive cores (the pod stays Guaranteed)"
    )
    changes = [b.set(kind, "cpu", whole, reason) for kind in ("limits", "requests") if _declared(b.c, kind, "cpu")]
    if not changes:
        return "the CPU comes from a LimitRange default; change the LimitRange's default instead"
    return changes


def _pf103(b: _Builder, _opts: FixOptions) -> list[Change] | str:
    res = str(b.f.details.get("resource"))
    limit = int(b.f.details["limit"])
    return b.set_declared(
        "requests",
        res,
        limit,
        f"the {res} request lowered to the limit {_fmt(res, limit)}: a container never uses more than its "
        "limit, so a larger request only reserves capacity nothing uses (and the API server rejects it)",
    )


def _pf104(b: _Builder, _opts: FixOptions) -> list[Change] | str:
    res = str(b.f.details.get("resource"))
    peak = int(b.f.details["peak"])
    tolerance = int(b.f.details.get("tolerance_percent", 10))
    most = peak * (100 + tolerance) // 100
    target = most
    if res == "memory" and (most // 2**20) * 2**20 >= peak:
        target = (most // 2**20) * 2**20  # a round Mi value within the tolerance reads better
    request = _effective(b.c, "requests", res)
    declared_request = _declared(b.c, "requests", res)
    guaranteed = b.w.pod.qos_class == "Guaranteed"
    if guaranteed and declared_request is not None:
        if res == "cpu" and declared_request >= 1000:
            whole = (most // 1000) * 1000
            if whole < peak:
                return (
                    f"the pod is Guaranteed with whole CPUs; no whole CPU count lies between the peak "
                    f"{_fmt(res, peak)} and {_fmt(res, most)}"
                )
            target = whole
        reason = (
            f"limit and request set to {_fmt(res, target)}, within {tolerance}% of the declared peak "
            f"{_fmt(res, peak)} (both, so the pod stays Guaranteed)"
        )
        return [b.set("limits", res, target, reason), b.set("requests", res, target, reason)]
    if declared_request is not None and request is not None and request > target:
        return (
            f"the {res} request {_fmt(res, request)} is above the declared peak too; lower the request "
            "(or correct the peak annotation) first"
        )
    return b.set_declared(
        "limits",
        res,
        target,
        f"the {res} limit lowered to {_fmt(res, target)}, within {tolerance}% of the declared peak {_fmt(res, peak)}",
    )


def _default_request(res: str, b: _Builder, value: int | None) -> Change | str:
    flag = f"--default-{res}"
    stats = b.measured(res)
    if stats is not None and stats.p50 > 0 and stats.samples >= MIN_SAMPLES:
        value, source = (
            _round_up(res, stats.p50),
            f"the measured steady state, p50 {_fmt(res, stats.p50)} of {b.sampled(stats)}",
        )
    elif value is None:
        if stats is not None and stats.samples < MIN_SAMPLES:
            return (
                f"no value is known for the {res} request: {_samples(stats.samples)} a point, "
                f"not a steady state ({b.sampled(stats)}; at least {MIN_SAMPLES}: export a range with "
                f"`podfit usage export`), or pass {flag}"
            )
        return f"no value is known for the {res} request: pass {flag}, or --usage with measured usage"
    else:
        source = f"from {flag}"
    limit = _effective(b.c, "limits", res)
    if limit is not None and value > limit:
        value = limit
    return b.set("requests", res, value, f"{res} request set to {_fmt(res, value)} ({source})")


def _round_up(res: str, value: int) -> int:
    """Memory up to whole Mi; CPU up to whole millicores (already so)."""
    if res == "memory":
        return -(-value // 2**20) * 2**20
    return value


def _limit_from_peak(b: _Builder, res: str, opts: FixOptions, raising: bool) -> list[Change] | str:
    """PF107/PF108: the limit set to the measured peak plus the headroom; in a Guaranteed pod the
    request moves with it (whole CPUs stay whole)."""
    stats = b.measured(res)
    if stats is None:
        return "no measured usage for this container"
    headroom = max(opts.limit_headroom_percent, int(b.f.details.get("headroom_percent") or 0))
    target = _round_up(res, -(-stats.max * (100 + headroom) // 100))
    limit = _effective(b.c, "limits", res)
    if raising and b.f.details.get("oom_killed") and limit is not None and target <= limit:
        return (
            "OOM-killed at its limit although the samples peak below it: the real peak was missed; "
            "raise the limit by what the workload needs"
        )
    if not raising:
        tolerance = int(b.f.details.get("tolerance_percent", 100))
        if target * 100 > stats.max * (100 + tolerance):
            return f"no limit within {tolerance}% of the peak leaves {headroom}% headroom"
    declared_request = _declared(b.c, "requests", res)
    guaranteed = b.w.pod.qos_class == "Guaranteed" and declared_request is not None
    why = f"the measured peak {_fmt(res, stats.max)} ({b.sampled(stats)}) plus {headroom}% headroom"
    if guaranteed:
        if res == "cpu" and declared_request is not None and declared_request % 1000 == 0:
            target = -(-target // 1000) * 1000  # whole CPUs stay whole (static CPU Manager)
        reason = f"limit and request set to {_fmt(res, target)}: {why} (both, so the pod stays Guaranteed)"
        return [b.set("limits", res, target, reason), b.set("requests", res, target, reason)]
    request = _effective(b.c, "requests", res)
    if request is not None and request > target:
        return f"the {res} request {_fmt(res, request)} is above {why}; lower the request first"
    reason = f"{res} limit set to {_fmt(res, target)}: {why}"
    if raising and b.f.details.get("oom_killed"):
        reason += "; the OOM kill stays in this usage data, so PF107 reports it until usage is measured again"
    return b.set_declared("limits", res, target, reason)


def _pf107(b: _Builder, opts: FixOptions) -> list[Change] | str:
    return _limit_from_peak(b, str(b.f.details.get("resource")), opts, raising=True)


def _pf108(b: _Builder, opts: FixOptions) -> list[Change] | str:
    return _limit_from_peak(b, str(b.f.details.get("resource")), opts, raising=False)


def _request_to_steady_state(b: _Builder, _opts: FixOptions) -> list[Change] | str:
    """PF109/PF110: the request set to the measured steady state (p50)."""
    res = str(b.f.details.get("resource"))
    stats = b.measured(res)
    if stats is None or stats.p50 <= 0:
        return "no measured steady state for this container"
    if stats.samples < MIN_SAMPLES:
        return (
            f"{_samples(stats.samples)} a point, not a steady state ({b.sampled(stats)}; at least "
            f"{MIN_SAMPLES}: export a range with `podfit usage export`)"
        )
    target = _round_up(res, stats.p50)
    if b.w.pod.qos_class == "Guaranteed":
        return (
            "the pod is Guaranteed (request = limit): a request of its own would make it Burstable; "
            "set the limit from the measured peak first (PF107/PF108)"
        )
    limit = _effective(b.c, "limits", res)
    if limit is not None and target > limit:
        return f"the steady state {_fmt(res, target)} is above the limit {_fmt(res, limit)}; raise the limit first"
    return b.set_declared(
        "requests",
        res,
        target,
        f"{res} request set to the measured steady state, p50 {_fmt(res, stats.p50)} of {b.sampled(stats)}: "
        "what the scheduler reserves is then what the container uses most of the time",
    )


def _pf101(b: _Builder, opts: FixOptions) -> list[Change] | str:
    c = _default_request("cpu", b, opts.default_cpu)
    return c if isinstance(c, str) else [c]


def _pf102(b: _Builder, opts: FixOptions) -> list[Change] | str:
    c = _default_request("memory", b, opts.default_memory)
    return c if isinstance(c, str) else [c]


FIXABLE: dict[str, Fixer] = {
    "PF101": _pf101,
    "PF102": _pf102,
    "PF103": _pf103,
    "PF104": _pf104,
    "PF107": _pf107,
    "PF108": _pf108,
    "PF109": _request_to_steady_state,
    "PF110": _request_to_steady_state,
    "PF201": _pf201,
}
# PF105 and PF402 name the pod, not a container: the fix reaches each container that needs it
POD_FIXABLE = {"PF105", "PF402"}


def _pf105(f: Finding, w: Workload, opts: FixOptions, facts: Facts | None = None) -> list[Change] | str:
    measured = (
        facts is not None
        and facts.usage is not None
        and all(facts.usage.of(w, c.name) is not None for c in w.pod.all_containers if not c.init or c.sidecar)
    )
    if not measured and (opts.default_cpu is None or opts.default_memory is None):
        return (
            "no values are known for the requests: pass both --default-cpu and --default-memory, "
            "or --usage with every container measured"
        )
    changes: list[Change] = []
    for c in w.pod.all_containers:  # init containers count for the QoS class and for PF101/PF102 too
        at = container_path(w.obj, c.name)
        if at is None:
            return f'container "{c.name}" was not found in the manifest'
        b = _Builder(f, w, c, at, facts)
        for res, value in (("cpu", opts.default_cpu), ("memory", opts.default_memory)):
            if _declared(c, "requests", res) is None:
                change = _default_request(res, b, value)
                if isinstance(change, str):
                    return f'container "{c.name}": {change}'
                changes.append(change)
    return changes


def _pf402(f: Finding, w: Workload, opts: FixOptions, facts: Facts | None = None) -> list[Change] | str:
    """PF402: a vSphere Pod sized from its requests gets limits, each the container's measured peak
    plus the headroom, so the CRX is sized from limits and can burst above the requests. Without a
    measured peak the right limit is unknown (a declared peak annotation is read by the Rego rules
    only), so there is no fix."""
    if w.pod.pod_resources is not None:
        return "the pod sets spec.resources; set the pod-level limits there"
    if facts is None or facts.usage is None:
        return "no measured usage: pass --usage, so each limit can be the measured peak plus --limit-headroom"
    headroom = opts.limit_headroom_percent
    changes: list[Change] = []
    skipped: list[str] = []
    for res in ("cpu", "memory"):
        planned: list[tuple[Container, int]] = []
        for c in w.pod.all_containers:
            if _effective(c, "limits", res) is not None or _effective(c, "requests", res) is None:
                continue
            stats = getattr(facts.usage.of(w, c.name), res, None)
            if stats is None:
                continue
            target = _round_up(res, -(-stats.max * (100 + headroom) // 100))
            request = _effective(c, "requests", res)
            if request is not None and target < request:
                # a limit below the request is rejected; one equal to it changes nothing in the CRX
                skipped.append(f'container "{c.name}": the {res} request is above the measured peak')
                continue
            if _declared(c, "requests", res) is None:
                skipped.append(f'container "{c.name}": the {res} request comes from a LimitRange default')
                continue
            planned.append((c, target))
        if not planned:
            continue
        if res == "memory":
            # the CRX caps memory at max(3 × Σ requests, largest limit) (PF403): limits beyond it are never given
            by_name = {c.name: t for c, t in planned}

            def limit_or_request(c: Container, limits: dict[str, int] = by_name) -> int | None:
                return limits.get(c.name, c.resources.memory_request)

            total = w.pod.combined(limit_or_request)
            requests = w.pod.combined(lambda c: c.resources.memory_request)
            if total > max(3 * requests, max(by_name.values())):
                skipped.append("the memory limits would exceed the CRX cap of 3 × the requests; raise the requests")
                continue
        for c, target in planned:
            at = container_path(w.obj, c.name)
            if at is None:
                return f'container "{c.name}" was not found in the manifest'
            b = _Builder(f, w, c, at, facts)
            stats = b.measured(res)
            changes.append(
                b.set(
                    "limits",
                    res,
                    target,
                    f"{res} limit set to {_fmt(res, target)}: the measured peak {_fmt(res, stats.max)} "
                    f"({b.sampled(stats)}) plus {headroom}% headroom, so the CRX is sized from limits and can "
                    "burst above the requests",
                )
            )
    if not changes:
        return "; ".join(skipped) or "no container of the pod has measured usage"
    return changes


# PF301 and PF604 name a node pool: the fix edits the cluster manifest (TanzuKubernetesCluster or
# Cluster API Cluster) that declares it
POOL_FIXABLE = {"PF301", "PF604"}


def _pool_of(f: Finding, facts: Facts) -> NodePool | None:
    name = f.details.get("pool")
    for p in facts.node_pools:
        if p.location is None or p.location.file != f.location.file:
            continue
        if p.name == name or (name is None and p.location.line == f.location.line):
            return p
    return None


def _pool_changes(
    f: Finding, facts: Facts, pick: Callable[[NodePool], tuple[VMClass, int | None, str] | str]
) -> list[Change] | str:
    """The edits of the pool's VM class (and node count) in the cluster manifest that declares it."""
    pool = _pool_of(f, facts)
    if pool is None:
        return "the node pool was not found"
    where = f"{pool.location.file}:{pool.location.line}" if pool.location is not None else "the platform profile"
    if not pool.cluster or f.object is None:
        return (
            f"the pool {pool.name} comes from the platform profile ({where}), not from a cluster manifest in "
            "the inputs: change its vmClass and count there (and in the cluster it describes)"
        )
    obj = next(
        (o for o in cluster_objects(facts.objects) if o.ref == f.object and o.location.file == f.location.file),
        None,
    )
    if obj is None:
        return f"the cluster manifest {f.object} was not found in a file fix can edit"
    fields = pool_fields(obj, pool.name)
    if isinstance(fields, str):
        return fields
    picked = pick(pool)
    if isinstance(picked, str):
        return picked
    vc, count, reason = picked
    class_path, count_path = fields

    def change(path: tuple[str | int, ...], value: str) -> Change:
        return Change(f.rule, f.location.file, obj.ref, f.location.line, path, value, _raw_text(obj, path), reason)

    out = [change(class_path, vc.name)]
    if count is not None and count_path is not None and count != pool.count:
        out.append(change(count_path, str(count)))
    return out


def _pf301(f: Finding, facts: Facts) -> list[Change] | str:
    cores, memory = facts.numa_node_cores, facts.numa_node_memory

    def pick(pool: NodePool) -> tuple[VMClass, int | None, str] | str:
        old = facts.vm_class(pool.vm_class)
        if old is None or cores is None or memory is None:
            return "the pool's VM class or the NUMA node is unknown"
        fitting = [c for c in facts.platform.vm_classes if c.cpus <= cores and c.memory_bytes <= memory]
        same = [c for c in fitting if c.reserved == old.reserved] or fitting
        if not same:
            return f"no VM class of the platform fits one NUMA node ({cores} cores, {_fmt('memory', memory)})"
        holding = [
            c
            for c in sorted(same, key=lambda c: (c.cpus, c.memory_bytes, c.name), reverse=True)
            if pool.role == "control-plane" or not _strands_pods(facts, pool, c)
        ]
        if not holding:
            return (
                f"no VM class that fits one NUMA node ({cores} cores, {_fmt('memory', memory)}) holds the largest "
                f"pod of the pool {pool.name}"
            )
        new = holding[0]
        if pool.role == "control-plane":
            return (
                new,
                None,
                f"VM class {new.name} ({plural(new.cpus, 'vCPU')}, {_fmt('memory', new.memory_bytes)}), the largest that fits "
                f"one NUMA node ({cores} cores, {_fmt('memory', memory)}); the control plane keeps its "
                f"{plural(pool.count, 'replica')} (etcd's quorum)",
            )
        count = max(
            -(-pool.count * old.cpus // new.cpus),
            -(-pool.count * old.memory_bytes // new.memory_bytes),
        )
        return (
            new,
            count,
            f"{count} × {new.name} ({plural(new.cpus, 'vCPU')}, {_fmt('memory', new.memory_bytes)}) instead of "
            f"{pool.count} × {old.name}: the largest class that fits one NUMA node ({cores} cores, "
            f"{_fmt('memory', memory)}), enough nodes that the pool's vCPUs and memory are not lower",
        )

    return _pool_changes(f, facts, pick)


def _schedulable(facts: Facts, pools: Sequence[NodePool]) -> set[str]:
    """The pods of the workloads that fit a node of some pool they may run on."""
    from ..packing.adapter import inputs_from
    from ..packing.bounds import pod_fits

    inputs = inputs_from(facts.workloads, facts.platform, pools)
    return {p.name for p in inputs.pods if any(p.allowed_on(n) and pod_fits(p, n) for n in inputs.pools)}


def _strands_pods(facts: Facts, pool: NodePool, vc: VMClass) -> bool:
    """Whether a pod that fits a node now would fit none once ``pool`` uses ``vc``."""
    before = _schedulable(facts, facts.node_pools)
    after = _schedulable(facts, [replace(p, vm_class=vc.name) if p is pool else p for p in facts.node_pools])
    return bool(before - after)


def _pf604(f: Finding, facts: Facts) -> list[Change] | str:
    rec, cur = f.details.get("recommended"), f.details.get("current")
    if not isinstance(rec, dict) or not isinstance(cur, dict):
        return "no VM class fits (see the finding)"

    def pick(pool: NodePool) -> tuple[VMClass, int | None, str] | str:
        if pool.count != cur.get("nodes"):
            return (
                f"the {cur.get('nodes')} nodes are spread over several pools; the advice is for one pool of "
                f"{rec['nodes']} × {rec['vm_class']}"
            )
        vc = facts.vm_class(str(rec["vm_class"]))
        if vc is None:
            return f"VM class {rec['vm_class']} is not in the platform"
        return (
            vc,
            int(rec["nodes"]),
            f"{rec['nodes']} × {vc.name} instead of {pool.count} × {pool.vm_class}: the NUMA-fitting class and "
            "node count with the least waste and the burst headroom (podfit pack)",
        )

    return _pool_changes(f, facts, pick)


def plan_fixes(
    findings: Iterable[Finding], facts: Facts, opts: FixOptions = FixOptions(), rules: Sequence[str] = ()
) -> FixPlan:
    """The changes that make the fixable findings go away; the others with why they cannot."""
    by_ref: dict[tuple[str, ObjectRef], Workload] = {}
    for w in facts.workloads:
        by_ref.setdefault((w.location.file, w.ref), w)
    changes: dict[tuple[str, ObjectRef, Path], Change] = {}
    unfixable: list[Unfixable] = []
    for f in findings:
        if f.rule not in FIXABLE and f.rule not in POD_FIXABLE and f.rule not in POOL_FIXABLE:
            continue
        if rules and f.rule not in rules:
            continue
        result: list[Change] | str
        if f.rule in POOL_FIXABLE:
            result = _pf301(f, facts) if f.rule == "PF301" else _pf604(f, facts)
            if isinstance(result, str):
                unfixable.append(Unfixable(f, result))
            else:
                for ch in result:
                    changes.setdefault((ch.file, ch.ref, ch.path), ch)
            continue
        found = by_ref.get((f.location.file, f.object)) if f.object is not None else None
        if found is None:
            unfixable.append(Unfixable(f, "the object was not found in a file fix can edit"))
            continue
        w = found
        if f.rule == "PF402":
            result = _pf402(f, w, opts, facts)
        elif f.rule in POD_FIXABLE:
            result = _pf105(f, w, opts, facts)
        else:
            c = next((c for c in w.pod.all_containers if c.name == f.container), None)
            at = container_path(w.obj, c.name) if c is not None else None
            if c is None or at is None:
                unfixable.append(Unfixable(f, f'container "{f.container}" was not found in the manifest'))
                continue
            result = FIXABLE[f.rule](_Builder(f, w, c, at, facts), opts)
        if isinstance(result, str):
            unfixable.append(Unfixable(f, result))
            continue
        clash = next(
            (
                changes[k]
                for ch in result
                if (k := (ch.file, ch.ref, ch.path)) in changes and changes[k].value != ch.value
            ),
            None,
        )
        if clash is not None:
            unfixable.append(Unfixable(f, f"its fix conflicts with {clash.rule}'s on {clash.field}; fix that first"))
            continue
        for ch in result:
            changes.setdefault((ch.file, ch.ref, ch.path), ch)
    ordered = sorted(changes.values(), key=lambda ch: (ch.file, ch.line, ch.rule, tuple(map(str, ch.path))))
    return FixPlan(tuple(ordered), tuple(unfixable))
