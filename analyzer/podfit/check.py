"""The check pipeline: facts + config (+ the Rego rules' results) → :class:`Report`. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from . import __version__
from .catalogue import Rule, load_catalogue
from .config import Config
from .facts import ASSUMED_PLATFORM, Facts, missing_fact, rests_on_built_in
from .findings import SEVERITY_RANK, Finding
from .loader import FileRecord, LoadResult
from .model import K8sObject, Location, ObjectRef, Workload
from .platform import Platform
from .registry import python_rules
from .rule_context import RuleContext
from .workloads import container_line

__all__ = ["Report", "analyze", "skip_reason", "SUPPRESS_PREFIX"]

SUPPRESS_PREFIX = "ignore.podfit.io/"


class RegoResultLike(Protocol):
    index: int
    rule: str
    severity: str
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
    skipped_rules: tuple[tuple[str, str], ...] = ()  # (rule id, which fact would enable it)
    suppressed: int = 0
    engine: str = ""
    config_source: str = ""
    node_pools: tuple[str, ...] = ()  # the pools the analyzers used, described
    excluded: tuple[tuple[str, str], ...] = ()  # (path, why) left out by the path selection
    # with --baseline: the findings it accepts (not in `findings`), and the baseline file
    baselined: tuple[Finding, ...] = ()
    baseline: str | None = None
    notices: tuple[str, ...] = ()  # what the run wants the user to know (e.g. the engine it fell back to)
    usage: Any = None  # the measured usage matched (podfit.usage.UsageFacts), None without --usage
    # what the rules derived and shared (RuleContext.memo: the packing analysis), for the pictures of
    # the HTML report (podfit.visuals); not part of the report's value
    analyses: dict[str, Any] = field(default_factory=dict, compare=False, repr=False, hash=False)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def worst(self) -> int:
        return max((SEVERITY_RANK[f.severity] for f in self.findings), default=0)


def skip_reason(rule: Rule, ctx: RuleContext) -> str | None:
    """Why a rule cannot run on these facts (the first required fact missing), or None."""
    missing = missing_fact(ctx.facts, rule.requires)
    if missing is not None or rule.engine != "python":
        return missing
    extra = getattr(python_rules().get(rule.id), "skip_reason", None)
    return extra(ctx.for_rule(rule.id)) if extra else None


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


def _suppressions(obj: K8sObject, workload: Workload | None) -> dict[str, tuple[str, str]]:
    """The rules the object's ``ignore.podfit.io/<RULE>`` annotations suppress: {rule id: (the
    annotation's key, the reason)}. RULE is an id or a slug; one naming no rule keeps its name
    upper-cased (PF904 reports it)."""
    from .catalogue import resolve

    pairs = list(obj.annotations)
    if workload is not None:
        pairs.extend(workload.pod.annotations)
    out: dict[str, tuple[str, str]] = {}
    for k, v in pairs:
        if k.startswith(SUPPRESS_PREFIX):
            name = k[len(SUPPRESS_PREFIX) :]
            rule = resolve(name)
            out[rule.id if rule is not None else name.upper()] = (k, v)
    return out


def analyze(
    load: LoadResult,
    facts: Facts,
    config: Config = Config(),
    rego_results: Sequence[RegoResultLike] | Callable[[], Sequence[RegoResultLike]] = (),
    only_rules: Iterable[str] = (),
    engine: str = "",
    notices: Sequence[str] = (),
) -> Report:
    catalogue = load_catalogue()
    selected = set(only_rules)

    def wanted(rule_id: str) -> bool:
        return config.rule_enabled(rule_id) and (not selected or rule_id in selected)

    objects = facts.objects
    platform = facts.platform
    by_obj = {id(w.obj): w for w in facts.workloads}
    ctx = RuleContext(facts, config)

    findings: list[Finding] = list(load.findings) + list(facts.findings)
    skipped: dict[str, str] = {}
    # a rule that ran drops the findings of the rules it SUPERSEDES (PF203's verdict replaces PF202's screen)
    superseded: set[str] = set()
    # a rule's REPLACES: those rules' findings on an object this rule reported on are dropped (PF206's
    # admission failure replaces PF302's advice on the same pod)
    replaced: dict[str, set[str]] = {}
    modules = python_rules()
    for rule in catalogue.values():
        if not wanted(rule.id) or (rule.engine == "python" and rule.id not in modules):
            continue
        why = skip_reason(rule, ctx)
        if why:
            skipped[rule.id] = why
        elif rule.engine == "python":
            found = list(modules[rule.id].check(ctx.for_rule(rule.id)))
            findings.extend(found)
            superseded.update(getattr(modules[rule.id], "SUPERSEDES", ()))
            for other in getattr(modules[rule.id], "REPLACES", ()):
                replaced.setdefault(other, set()).update(
                    f"{f.location.file}\0{f.object}" for f in found if f.object is not None
                )

    # the Rego results last: a caller may still be computing them (see pipeline.start_engine)
    if callable(rego_results):
        rego_results = rego_results()
    for r in rego_results:
        if r.rule in skipped or r.rule in superseded:
            continue
        obj = objects[r.index]
        line = r.line if r.line is not None else container_line(obj, r.container, facts.workload_kinds)
        findings.append(
            Finding(
                r.rule,
                r.msg,
                Location(obj.location.file, line),
                obj.ref,
                r.container,
                dict(r.details or {}),
                r.severity,
            )
        )

    # suppression by annotation; an empty reason is itself a finding (PF904)
    suppressed = 0
    kept: list[Finding] = []
    sup_cache: dict[int, dict[str, tuple[str, str]]] = {}
    objects_by_ref: dict[tuple[str, ObjectRef], K8sObject] = {}
    for o in objects:
        objects_by_ref.setdefault((o.location.file, o.ref), o)
    for f in findings:
        owner = objects_by_ref.get((f.location.file, f.object)) if f.object is not None else None
        if owner is not None:
            sups = sup_cache.get(id(owner))
            if sups is None:
                sups = sup_cache[id(owner)] = _suppressions(owner, by_obj.get(id(owner)))
            if f.rule in sups:
                suppressed += 1
                continue
        kept.append(f)
    for o in objects:
        sups = sup_cache.get(id(o))
        if sups is None:
            sups = _suppressions(o, by_obj.get(id(o)))
        for rule_id, (key, reason) in sups.items():
            where = Location(o.location.file, _annotation_line(o, key))
            # an unknown rule first: a typo (PF111x) suppresses nothing, whatever its reason says
            problem = (
                f"suppression names unknown rule {rule_id}"
                if rule_id not in catalogue
                else f"suppression of {rule_id} has no reason"
                if not reason.strip()
                else None
            )
            if problem is not None:
                kept.append(Finding("PF904", problem, where, o.ref, details={"suppressed": rule_id}))

    assumed = {r.id for r in catalogue.values() if rests_on_built_in(facts, r.requires)}
    keyed = []
    for f in kept:
        if not wanted(f.rule):
            continue
        if f.rule in replaced and f"{f.location.file}\0{f.object}" in replaced[f.rule]:
            continue
        # the configured grade, else the finding's own where its rule grades it lower by its evidence
        # (PF203 on assumed defaults), else the rule's; a finding never rises above its rule
        declared = catalogue[f.rule].severity
        own = f.severity if SEVERITY_RANK.get(f.severity, 99) < SEVERITY_RANK[declared] else declared
        sev = config.severity.get(f.rule) or own
        if f.rule in assumed:  # a verdict resting only on assumed defaults is at most info
            sev = "info"
            if "assumed" not in f.details:  # a Rego rule's result says so itself (podfit.lib.result)
                f = replace(
                    f, message=f"{f.message} ({ASSUMED_PLATFORM})", details={**f.details, "assumed": "platform"}
                )
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
        node_pools=tuple(_describe_pool(p) for p in facts.node_pools),
        notices=tuple(notices),
        excluded=load.excluded,
        usage=facts.usage,
        analyses=ctx.memo,
    )


def _describe_pool(p: Any) -> str:
    where = p.cluster or "platform"
    role = ", control plane" if p.role == "control-plane" else ""
    most = f", autoscaler maximum {p.max_count}" if getattr(p, "max_count", None) else ""
    return f"{p.count} × {p.vm_class} ({where}{role}{most})"
