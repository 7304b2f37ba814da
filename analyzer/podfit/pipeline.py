"""One ``podfit check`` run from parsed inputs to the report: facts, the Rego engine started
beside the Python rules, the report, its exit status. No file is read and nothing is printed here;
``progress`` receives a short description of each phase as it starts (the CLI shows it on a
terminal)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from .catalogue import load_catalogue, resolve
from .check import Report, analyze
from .config import Config
from .facts import Facts
from .findings import SEVERITY_RANK
from .loader import LoadResult
from .platform import Platform
from .workloads import container_line, container_path

EXIT_OK, EXIT_FINDINGS = 0, 1


class PipelineError(Exception):
    """A failure that is no finding (an unknown rule, an engine that cannot start or failed)."""


def select_rules(names: Sequence[str]) -> list[str]:
    """Rule ids of ``--rule`` values (ids or slugs); raises PipelineError naming an unknown one."""
    out = []
    for name in names:
        rule = resolve(name)
        if rule is None:
            raise PipelineError(f"unknown rule {name!r} (see `podfit rules`)")
        out.append(rule.id)
    return out


def start_engine(engine: str, facts: Any, selected: Sequence[str], config: Config):
    """Start the Rego evaluation in the background; returns (the engine, or None when no Rego rule
    runs; a function that waits for and returns the results). The Python rules run meanwhile: the
    OPA processes (or the embedded engine's workers) use the other cores. Engine failures surface,
    as PipelineError, here or on the wait."""
    from .facts import facts_data

    cat = load_catalogue()
    wanted = [
        r.id
        for r in cat.values()
        if r.engine == "rego" and config.rule_enabled(r.id) and (not selected or r.id in selected)
    ]
    if not wanted or not facts.objects:
        return None, lambda: []
    try:
        from .engines import get_engine
        from .engines.base import EngineError
    except ImportError as e:
        raise PipelineError(f"no Rego engine available: {e}") from None
    try:
        eng = get_engine(engine)
    except EngineError as e:
        raise PipelineError(f"Rego engine unavailable: {e}") from None
    objects = facts.objects
    options = config.rego_options(wanted)
    # The objects of a guest cluster on a Supervisor see their own runtime (tkg): one evaluation per
    # such cluster, one for the rest. Each is started here, in the calling (main) thread, so any
    # worker process is forked now, before the Python rules run beside the evaluations.
    groups: list[tuple[list[int], dict[str, Any]]] = []
    apart = facts.apart_clusters
    if apart:
        own = {id(c): i for i, c in enumerate(apart)}
        members: list[list[int]] = [[] for _ in apart]
        rest: list[int] = []
        for i, o in enumerate(objects):
            scope = facts.cluster_of(o)
            (members[own[id(scope)]] if scope is not None and id(scope) in own else rest).append(i)
        groups = [(rest, facts_data(facts, options))] if rest else []
        groups += [(m, facts_data(facts, options, c)) for m, c in zip(members, apart, strict=True) if m]
    else:
        groups = [(list(range(len(objects))), facts_data(facts, options))]

    started = []
    for idx, data in groups:
        subset = [objects[i] for i in idx]

        def line(j: int, name: str | None, subset: list[Any] = subset) -> Any:
            return container_line(subset[j], name, facts.workload_kinds)

        started.append((idx, eng.start([o.raw for o in subset], data, line)))

    def wait() -> list[Any]:
        try:
            if len(started) == 1 and len(started[0][0]) == len(objects):
                return started[0][1]()
            out: list[Any] = []
            for idx, pending in started:
                out.extend(replace(r, index=idx[r.index]) for r in pending())
            return sorted(out, key=lambda r: r.index)
        except EngineError as e:
            raise PipelineError(f"Rego engine failed: {e}") from None

    return eng, wait


def run_facts(
    objects: Sequence[Any],
    platform: Platform,
    config: Config,
    cluster: str | None = None,
    usage: Sequence[Any] | None = None,
) -> Facts:
    """The facts of a run's objects as every command computes them: the config's clusters mapping,
    the Kubernetes version PF902 targets and the config's workload kinds."""
    from .facts import build_facts
    from .rules.api_version_removed import target_kubernetes_version

    return build_facts(
        objects,
        platform,
        cluster,
        config.cluster_for_path if config.clusters else None,
        usage=usage,
        kubernetes_version=target_kubernetes_version(config),
        workload_kinds=config.workload_kinds,
    )


def check(
    result: LoadResult,
    platform: Platform,
    config: Config,
    *,
    engine: str = "auto",
    rules: Sequence[str] = (),
    cluster: str | None = None,
    progress: Callable[[str], None] | None = None,
    usage: Sequence[Any] | None = None,
) -> tuple[Report, Facts]:
    """The report on parsed inputs (facts, Rego in the background, Python rules), and the facts it
    was computed from (which the HTML report draws)."""
    say = progress or (lambda _text: None)
    selected = select_rules(rules)
    say(f"checking {len(result.objects):,} objects: facts")
    facts = run_facts(result.objects, platform, config, cluster, usage)
    say(f"checking {len(result.objects):,} objects: rules")
    eng, rego_results = start_engine(engine, facts, selected, config)
    notices: tuple[str, ...] = (eng.notice,) if eng is not None and eng.notice else ()
    if facts.usage is not None:
        from .usage import unmatched_notice

        # the fewest samples any percentile rule accepts, as configured (each rule's default is 10)
        least = min(int(config.thresholds.get(r, {}).get("min-samples", 10)) for r in ("PF108", "PF109", "PF110"))
        notices += unmatched_notice(facts.usage, min_samples=least)

    def rego() -> Sequence[Any]:
        say(f"checking {len(result.objects):,} objects: waiting for the Rego rules")
        return rego_results()

    report = analyze(result, facts, config, rego, selected, eng.name if eng is not None else "", notices)
    if result.sources:  # findings on rendered charts and kustomizations: at their source's lines
        from .render import remap

        report = replace(report, findings=remap(report.findings, result.sources, result.objects, container_path))
    return report, facts


def exit_status(report: Report, fail_on: str) -> int:
    """0 when no finding is at or above ``fail_on`` (``never``: always 0), else 1."""
    if fail_on == "never":
        return EXIT_OK
    return EXIT_FINDINGS if report.worst() >= SEVERITY_RANK[fail_on] else EXIT_OK
