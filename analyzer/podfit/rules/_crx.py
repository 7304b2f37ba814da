"""What the vSphere Pod rules (PF401–PF403) share: each workload's pod with its CRX, sized by
:func:`podfit.vsphere.crx_size` at the platform's base clock, exactly as ``podfit vsphere crx``
sizes it."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Workload
from ..rule_context import RuleContext
from ..vsphere import CrxSize, crx_size, reference_mhz


def sized_pods(ctx: RuleContext) -> Iterator[tuple[Workload, CrxSize, frozenset[str]]]:
    """(workload, its CRX, the names of its containers with a quantity podfit could not read), for
    each workload that runs as a vSphere Pod (:meth:`podfit.facts.Facts.runs_as_vsphere_pod`).

    A container's unreadable quantity is reported as PF903 and counts as unset here, as it does in
    ``podfit vsphere crx``; the rules use the names to leave such pods to PF903."""
    unreadable: dict[object, set[str]] = {}
    for f in ctx.facts.findings:
        if f.rule == "PF903" and f.object is not None and f.container is not None:
            unreadable.setdefault(f.object, set()).add(f.container)
    base = reference_mhz(ctx.platform)
    for w in ctx.workloads:
        if ctx.facts.runs_as_vsphere_pod(w):  # not the workloads of a guest cluster (TKC / Cluster API)
            yield w, crx_size(w.pod, base), frozenset(unreadable.get(w.ref, ()))
