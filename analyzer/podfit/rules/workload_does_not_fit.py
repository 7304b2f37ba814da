"""PF601: the pods cannot be packed onto the node pools (proven by a lower bound or by CP-SAT)."""

from __future__ import annotations

from typing import Iterator

from ..options import Option
from ..findings import Finding
from ..packing.bounds import fits
from ..packing.report import describe_proof
from ..packing.rules_support import facts_for
from ..packing.rules_support import skip_reason  # noqa: F401 - the packing rules' shared test

ID = "PF601"
SLUG = "workload-does-not-fit"
TITLE = "Workloads do not fit the node pools"
SEVERITY = "error"
REQUIRES: tuple[str, ...] = ('node-pools',)
OPTIONS: tuple[Option, ...] = (
    Option("time-budget", "duration", 10, "Time for the packing search and exact proofs (seconds, or 500ms, 10s, 2m).", minimum=0),
)


def check(ctx) -> Iterator[Finding]:
    facts = facts_for(ctx)
    a = facts.analysis
    if a is None or a.fit.feasible is not False:
        # True: fits. None: undecided within the time budget — not a proven misfit, so no finding.
        return
    inputs = facts.inputs
    too_large = {p.name for p in inputs.pods if not any(fits(p.demand, n.allocatable) for n in inputs.pools)}
    unplaced = [name for name, _ in a.fit.unplaced]
    if unplaced and all(name in too_large for name in unplaced) and set(unplaced) == too_large:
        return  # PF303 already says it, pod by pod
    first = (unplaced or [p.name for p in inputs.pods])[0]
    w = inputs.workloads[first]
    nodes = sum(n.count for n in inputs.pools)
    pods = sum(p.count for p in inputs.pods)
    rec = a.recommendation
    fix = f"; recommended: {rec.nodes} × {rec.vm_class} (PF604)" if rec.vm_class else ""
    yield Finding(
        rule=ID,
        message=f"{pods} pods do not fit {nodes} nodes ({', '.join(f'{n.count} × {n.vm_class}' for n in inputs.pools)}): "
                f"{describe_proof(a).removeprefix('no: ')}{fix}",
        location=w.location,
        object=w.ref,
        details={"proof": a.fit.proof, "lower_bound": a.fit.lower_bound, "unplaced": dict(a.fit.unplaced),
                 "violated": [b.kind for b in a.fit.violated_bounds],
                 "min_nodes": {k: m.nodes for k, m in a.min_nodes.items()}},
    )
