"""What PF207 and PF213 share: the KubeletConfiguration objects of a run that set a resource
manager's policy options, with what the kubelet refuses of them (podfit.kubelet_options), and the
finding for each refusal."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..facts import is_kubelet_configuration
from ..findings import Finding
from ..kubelet_options import OptionFamily, Refusal, refusals
from ..model import K8sObject
from ..rule_context import RuleContext


def configured_options(
    ctx: RuleContext, family: OptionFamily, names: Callable[[Mapping[str, Any]], bool]
) -> Iterator[tuple[K8sObject, Mapping[str, Any], list[Refusal], set[str]]]:
    """(object, its raw mapping, the refusals, the options read as on) of every
    KubeletConfiguration that sets ``family``'s options; ``names(raw)``: whether the kubelet checks
    the options' names and values under the policy it sets."""
    version = ctx.facts.kubelet.version
    for o in ctx.objects:
        if not is_kubelet_configuration(o):
            continue
        raw = o.raw
        opts = raw.get(family.field)
        if not isinstance(opts, Mapping) or not opts:
            continue
        gates = raw.get("featureGates")
        found, on = refusals(family, opts, gates if isinstance(gates, Mapping) else {}, version, names=names(raw))
        yield o, raw, found, on


def refusal_finding(
    rule_id: str, ctx: RuleContext, o: K8sObject, family: OptionFamily, r: Refusal, **extra: object
) -> Finding:
    """The finding for one refusal, at the option's line (or the options' when the refusal is of
    them all)."""
    path = (family.field, r.option) if r.option is not None else (family.field,)
    details: dict[str, object] = {"stage": r.stage, "kubernetes_version": ctx.facts.kubelet.version_text}
    if r.option is not None:
        details = {"option": r.option, **details}
    return Finding(
        rule_id,
        f"{r.problem}: the kubelet refuses to start",
        o.location_at(path),
        o.ref,
        details={**details, **extra},
    )
