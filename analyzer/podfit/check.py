"""The check pipeline: model + platform + config (+ Rego results) → :class:`Report`. Pure."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from . import __version__
from .catalogue import load_catalogue
from .config import Config
from .findings import SEVERITY_RANK, Finding
from .loader import FileRecord, LoadResult, build_workloads, container_line
from .model import K8sObject, Location, Workload
from .platform import Platform
from .rules import RuleContext, python_rules

__all__ = ["Report", "analyze", "rego_skip_reason", "SUPPRESS_PREFIX"]

SUPPRESS_PREFIX = "ignore.podfit.io/"


class RegoResultLike(Protocol):
    index: int
    rule: str
    msg: str
    container: str | None
    details: Mapping[str, Any]
    line: int | None  # the container's (or object's) line, when the engine resolved it


@dataclass(frozen=True)
class Report:
    version: str
    platform: Platform
    files: tuple[FileRecord, ...]
    objects: int
    findings: tuple[Finding, ...]
    skipped_rules: tuple[tuple[str, str], ...] = ()  # (rule id, why / which fact would enable it)
    suppressed: int = 0
    engine: str = ""
    config_source: str = ""
    node_pools: tuple[str, ...] = ()  # the pools the analyzers used, described


    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def worst(self) -> int:
        return max((SEVERITY_RANK[f.severity] for f in self.findings), default=0)


def _node_cpus_known(ctx: RuleContext) -> bool:
    """Whether the Rego platform data will carry node_logical_cpus (see engines.platform_data)."""
    from .platform import node_logical_cpus

    return ctx.platform.runtime != "vsphere-pods" and node_logical_cpus(ctx.platform, ctx.node_pools) is not None


# Which fact each Rego rule needs; a rule without its fact stays silent and is listed as skipped.
_REGO_NEEDS: dict[str, Callable[[RuleContext], str | None]] = {
    "PF202": lambda c: None if _node_cpus_known(c) else "node logical CPUs: node pools in the platform or a TanzuKubernetesCluster, or bare-metal hosts",
    "PF301": lambda c: None if c.platform.hosts and c.node_pools else "hosts (NUMA size) and node pools in the platform, or a TanzuKubernetesCluster",
    "PF302": lambda c: None if c.platform.hosts else "hosts (NUMA size) in the platform",
    "PF401": lambda c: None if c.platform.runtime == "vsphere-pods" else f"runtime vsphere-pods (platform runtime is {c.platform.runtime})",
}  # fmt: skip
_REGO_NEEDS["PF402"] = _REGO_NEEDS["PF403"] = _REGO_NEEDS["PF401"]


def rego_skip_reason(rule_id: str, ctx: RuleContext) -> str | None:
    need = _REGO_NEEDS.get(rule_id)
    return need(ctx) if need else None


def _strip_subject(msg: str, obj: K8sObject) -> str:
    """Rego messages start with "Kind name: " so that plain conftest output names the object;
    podfit's reports carry the object separately, so the prefix is dropped here."""
    prefix = f"{obj.kind} {obj.ref.name}: "
    return msg[len(prefix):] if msg.startswith(prefix) else msg


_DEFAULTED_BY_LIMITRANGE = {"PF101": "cpu", "PF102": "memory"}


def _defaulted(workload: Workload | None, container: str | None, resource: str) -> bool:
    """Whether the container's request for ``resource`` comes from a LimitRange default."""
    if workload is None or not container:
        return False
    for c in workload.pod.all_containers:
        if c.name == container:
            return (
                getattr(c.declared, f"{resource}_request") is None
                and getattr(c.declared, f"{resource}_limit") is None
                and getattr(c.resources, f"{resource}_request") is not None
            )
    return False


def _annotation_line(obj: K8sObject, key: str) -> int:
    """Line of an annotation key on the object or on its pod template."""
    from .model import WORKLOAD_KINDS

    holders: list[tuple[Any, ...]] = [()]
    template = WORKLOAD_KINDS.get(obj.kind)
    if template:
        holders.append(template)
    for prefix in holders:
        cur: Any = obj.raw
        for k in prefix + ("metadata", "annotations"):
            cur = cur.get(k) if isinstance(cur, dict) else None
        if isinstance(cur, dict) and key in cur:
            return obj.line_at(prefix + ("metadata", "annotations", key))
    return obj.location.line


def _suppressions(obj: K8sObject, workload: Workload | None) -> dict[str, str]:
    pairs = list(obj.annotations)
    if workload is not None:
        pairs.extend(workload.pod.annotations)
    return {k[len(SUPPRESS_PREFIX):].upper(): v for k, v in pairs if k.startswith(SUPPRESS_PREFIX)}


def analyze(
    load: LoadResult,
    platform: Platform,
    config: Config = Config(),
    rego_results: Sequence[RegoResultLike] | Callable[[], Sequence[RegoResultLike]] = (),
    only_rules: Iterable[str] = (),
    engine: str = "",
) -> Report:
    catalogue = load_catalogue()
    selected = set(only_rules)

    def wanted(rule_id: str) -> bool:
        return config.rule_enabled(rule_id) and (not selected or rule_id in selected)

    objects = load.objects
    workloads, workload_findings = build_workloads(objects)
    by_obj = {id(w.obj): w for w in workloads}
    ctx = RuleContext(objects, workloads, platform, config)

    findings: list[Finding] = list(load.findings) + list(workload_findings)
    skipped: dict[str, str] = {}

    for rule in catalogue.values():
        if rule.engine == "rego" and wanted(rule.id):
            why = rego_skip_reason(rule.id, ctx)
            if why:
                skipped[rule.id] = why
    for rule_id, module in python_rules().items():
        if not wanted(rule_id):
            continue
        rctx = ctx.for_rule(rule_id)
        skip = getattr(module, "skip_reason", None)
        why = skip(rctx) if skip else None
        if why:
            skipped[rule_id] = why
            continue
        findings.extend(module.check(rctx))

    # the Rego results last: a caller may still be computing them (see cli.start_engine)
    if callable(rego_results):
        rego_results = rego_results()
    for r in rego_results:
        if r.rule in skipped:
            continue
        obj = objects[r.index]
        w = by_obj.get(id(obj))
        if r.rule in _DEFAULTED_BY_LIMITRANGE and _defaulted(w, r.container, _DEFAULTED_BY_LIMITRANGE[r.rule]):
            continue  # a LimitRange of the namespace supplies the request (Rego sees one object only)
        line = r.line if r.line is not None else container_line(obj, r.container)
        findings.append(
            Finding(r.rule, _strip_subject(r.msg, obj), Location(obj.location.file, line), obj.ref, r.container,
                    dict(r.details or {}), config.severity.get(r.rule) or getattr(catalogue.get(r.rule), "severity", ""))
        )  # fmt: skip

    if "PF301" not in skipped:
        findings.extend(_profile_pools_wider_than_numa(platform))
    if platform.critical:
        findings.extend(_profile_pools_best_effort(platform))

    # suppression by annotation; an empty reason is itself a finding (PF904)
    suppressed = 0
    kept: list[Finding] = []
    sup_cache: dict[int, dict[str, str]] = {}
    objects_by_ref = {}
    for o in objects:
        objects_by_ref.setdefault((o.location.file, o.ref), o)
    for f in findings:
        obj = objects_by_ref.get((f.location.file, f.object)) if f.object is not None else None
        if obj is not None:
            sups = sup_cache.get(id(obj))
            if sups is None:
                sups = sup_cache[id(obj)] = _suppressions(obj, by_obj.get(id(obj)))
            if f.rule in sups:
                suppressed += 1
                continue
        kept.append(f)
    for o in objects:
        sups = sup_cache.get(id(o))
        if sups is None:
            sups = _suppressions(o, by_obj.get(id(o)))
        for rule_id, reason in sups.items():
            where = Location(o.location.file, _annotation_line(o, SUPPRESS_PREFIX + rule_id))
            if not reason.strip():
                kept.append(
                    Finding("PF904", f"suppression of {rule_id} has no reason", where, o.ref,
                            details={"suppressed": rule_id})
                )  # fmt: skip
            elif rule_id not in catalogue:
                kept.append(
                    Finding("PF904", f"suppression names unknown rule {rule_id}", where, o.ref,
                            details={"suppressed": rule_id})
                )  # fmt: skip

    keyed = []
    for f in kept:
        if not wanted(f.rule):
            continue
        sev = config.severity.get(f.rule) or catalogue[f.rule].severity
        if f.severity != sev:
            f = replace(f, severity=sev)
        keyed.append((f.sort_key(), f))
    keyed.sort(key=lambda kf: kf[0])
    # the same finding twice (e.g. a container named in two results) is reported once
    unique = [f for i, (k, f) in enumerate(keyed) if i == 0 or k != keyed[i - 1][0]]
    return Report(
        version=__version__,
        platform=platform,
        files=load.files,
        objects=len(objects),
        findings=tuple(unique),
        skipped_rules=tuple(sorted(skipped.items())),
        suppressed=suppressed,
        engine=engine,
        config_source=config.source,
        node_pools=tuple(_describe_pool(p) for p in ctx.node_pools),
    )


def _profile_pools_wider_than_numa(platform: Platform) -> list[Finding]:
    """PF301 for node pools declared in the Platform profile itself: the Rego rule sees manifests
    only (TanzuKubernetesCluster, Cluster API), so pools that exist only in the profile are checked
    here, at their line in the profile."""
    cores, memory = platform.numa_node_cores, platform.numa_node_memory
    out = []
    for pool in platform.node_pools:
        vc = platform.vm_class(pool.vm_class)
        if vc is None or cores is None or memory is None or pool.location is None:
            continue
        wide = []
        if vc.cpus > cores:
            wide.append(f"{vc.cpus} vCPUs > {cores} cores")
        if vc.memory_bytes > memory:
            wide.append(f"{vc.memory_bytes // 2**30} GiB > {memory // 2**30} GiB")
        if wide:
            out.append(Finding(
                "PF301",
                f"node pool {pool.name} uses VM class {vc.name}, wider than one NUMA node ({'; '.join(wide)}): "
                "ESXi splits it into NUMA clients",
                pool.location,
                details={"pool": pool.name, "vm_class": vc.name, "vcpus": vc.cpus, "numa_node_cores": cores,
                         "memory": vc.memory_bytes, "numa_node_memory": memory},
            ))  # fmt: skip
    return out


def _profile_pools_best_effort(platform: Platform) -> list[Finding]:
    """PF304 for a profile marked critical whose own node pools use best-effort classes (the Rego rule
    covers clusters annotated podfit.io/critical in the manifests)."""
    out = []
    for pool in platform.node_pools:
        vc = platform.vm_class(pool.vm_class)
        if vc is not None and not vc.reserved and pool.location is not None:
            out.append(Finding(
                "PF304",
                f"the platform is marked critical but node pool {pool.name} uses the best-effort class {vc.name}: "
                "nothing is reserved for it under vSphere contention",
                pool.location,
                details={"pool": pool.name, "vm_class": vc.name},
            ))  # fmt: skip
    return out


def _describe_pool(p: Any) -> str:
    where = p.cluster or "platform"
    role = ", control plane" if p.role == "control-plane" else ""
    return f"{p.count} × {p.vm_class} ({where}{role})"
