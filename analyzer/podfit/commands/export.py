"""``podfit export``: podfit's per-object rules as admission policies (podfit.admission)."""

from __future__ import annotations

from typing import Any

import click

from ._common import apply_selection, config_option, emit, load_config, output_option, rule_selection_options


@click.group("export")
def command() -> None:
    """Export podfit's rules as admission policies, to enforce them in a cluster.

    \b
    Examples:
      podfit export gatekeeper -o podfit-gatekeeper.yaml
      podfit export gatekeeper --select PF101,PF102 --exclude-namespace kube-system
    """


def _option_value(text: str) -> tuple[str, str, str]:
    rule, sep, rest = text.partition(".")
    name, eq, value = rest.partition("=")
    if not sep or not eq or not name:
        raise click.BadParameter(f"{text!r} is not RULE.OPTION=VALUE", param_hint="--option")
    return rule, name, value


def _checked_options(rules: list[Any], config: Any, given: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The options of the exported rules: the config's thresholds, then --option; a usage error
    for an option the rule does not have or a value outside its range."""
    from ..catalogue import resolve

    out: dict[str, dict[str, Any]] = {r.id: dict(config.thresholds.get(r.id, {})) for r in rules}
    by_id = {r.id: r for r in rules}
    for text in given:
        name, opt, given_value = _option_value(text)
        found = resolve(name)
        if found is None or found.id not in by_id:
            raise click.BadParameter(f"{name!r} is not an exported rule", param_hint="--option")
        out[found.id][opt] = given_value
    for rid, opts in out.items():
        declared = {o["name"]: o for o in by_id[rid].custom.get("options") or () if isinstance(o, dict)}
        for opt, value in list(opts.items()):
            spec = declared.get(opt)
            if spec is None:
                raise click.BadParameter(f"{rid} has no option {opt!r}", param_hint="--option")
            if spec.get("type") == "integer":
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    raise click.BadParameter(
                        f"{rid} {opt} must be an integer, not {value!r}", param_hint="--option"
                    ) from None
                lo, hi = spec.get("minimum"), spec.get("maximum")
                if (lo is not None and value < lo) or (hi is not None and value > hi):
                    raise click.BadParameter(
                        f"{rid} {opt} = {value} is outside [{lo if lo is not None else ''}, {hi if hi is not None else ''}]",
                        param_hint="--option",
                    )
            opts[opt] = value
    return {rid: opts for rid, opts in out.items() if opts}


def _shipped_policies() -> list[Any]:
    """The Rego policies podfit ships (policies/), each with its path: the one source exported."""
    from ..admission import PolicySource
    from ..paths import policies_dir

    root = policies_dir()
    return [
        PolicySource(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*.rego"))
    ]


def _export_options(namespaces_become: str) -> Any:
    """The options both exports take: the output, the config, the rule selection and the
    namespaces left out (``namespaces_become``: what they are in the exported objects)."""

    def decorate(f: Any) -> Any:
        f = click.option(
            "--exclude-namespace",
            "namespaces",
            multiple=True,
            metavar="NS",
            help=f"Never judge objects in this namespace (repeatable): {namespaces_become}.",
        )(f)
        return output_option(config_option(rule_selection_options("export")(f)))

    return decorate


@command.command("gatekeeper")
@_export_options("the Constraints' excludedNamespaces")
@click.option("--option", "options", multiple=True, metavar="RULE.OPTION=VALUE", help="A rule's threshold.")
def gatekeeper(
    output: str | None,
    config_path: str | None,
    rules: tuple[str, ...],
    ignore_rules: tuple[str, ...],
    namespaces: tuple[str, ...],
    options: tuple[str, ...],
) -> None:
    """Gatekeeper ConstraintTemplates and Constraints running podfit's own Rego.

    One template and one Constraint per rule judged on one object at admission (PF101-PF105,
    PF113, PF201 and any per-object rule policies/ adds), on Pods, Deployments, StatefulSets,
    DaemonSets, ReplicaSets, Jobs and CronJobs, CREATE and UPDATE. error rules deny, warnings warn,
    info runs as dryrun (audit). An ignore.podfit.io/<RULE> annotation exempts an object as in CI.

    \b
    Left to CI, and listed at the head of the stream:
      PF202, PF204, PF205, PF302: need the platform profile (nodes' CPUs, CPU Manager, NUMA);
      packing, quotas, LimitRanges, PDBs and autoscalers: they compare several objects;
      usage and vSphere CRX sizing: they need measurements or the platform;
      workload CRDs (Argo Rollouts, Knative, ...): their Pods are judged when created.
    """
    from ..admission import admission_rules, gatekeeper_stream

    config = apply_selection(load_config(config_path), select=rules, ignore=ignore_rules)
    sources = _shipped_policies()
    candidates = admission_rules(sources)
    chosen = [r for r in candidates if config.rule_enabled(r.id)]
    if not chosen:
        raise click.UsageError("the selection and config leave no rule that can be judged at admission")
    opts = _checked_options(chosen, config, options)
    emit(gatekeeper_stream(sources, [r.id for r in chosen], opts, namespaces), output)


@command.command("vap")
@_export_options("the bindings' namespaceSelector")
def vap(
    output: str | None,
    config_path: str | None,
    rules: tuple[str, ...],
    ignore_rules: tuple[str, ...],
    namespaces: tuple[str, ...],
) -> None:
    """ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, CEL) and their bindings.

    The rules whose CEL is written and held equal to `podfit check`: PF103 and PF105 so far (the
    other per-object rules: `podfit export gatekeeper`). validationActions follow the severity:
    error Deny, warning Warn, info Audit. An ignore.podfit.io/<RULE> annotation on the object
    exempts it. Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs; CREATE
    and UPDATE.
    """
    from ..admission import CEL_RULES, admission_rules, vap_stream

    config = apply_selection(load_config(config_path), select=rules, ignore=ignore_rules)
    sources = _shipped_policies()
    chosen = [r.id for r in admission_rules(sources) if config.rule_enabled(r.id) and r.id in CEL_RULES]
    if not chosen:
        raise click.UsageError("the selection and config leave no rule with a ValidatingAdmissionPolicy")
    emit(vap_stream(sources, chosen, namespaces), output)
