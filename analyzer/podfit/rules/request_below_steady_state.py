"""PF110: a container's request is below its measured steady state (p50): the scheduler places it
by less than it uses. A steady state is a distribution: the rule needs ``min-samples`` samples, as
PF108 and PF109 do (one ``kubectl top`` snapshot per pod is a point, not a p50)."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ._usage import amount, details, evidence, measured_values, min_samples_option

ID = "PF110"
SLUG = "request-below-steady-state"
TITLE = "Request below the measured steady state"
SEVERITY = "warning"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "tolerance-percent",
        "integer",
        10,
        "How far the measured p50 may exceed the request, in percent of the request.",
        minimum=0,
    ),
    min_samples_option("Samples a container needs before its p50 is taken for its steady state."),
)


def check(ctx) -> Iterator[Finding]:
    tolerance = int(ctx.option("tolerance-percent"))
    min_samples = int(ctx.option("min-samples"))
    for w, c, u, res, word, s, request in measured_values(ctx, "request", min_samples):
        if s.p50 * 100 <= request * (100 + tolerance):
            continue
        yield Finding(
            ID,
            f'container "{c.name}": {word} request {amount(res, request)} is below the measured steady '
            f"state, p50 {amount(res, s.p50)} ({evidence(res, s, u)}): nodes are filled by less than "
            "their pods use",
            c.location,
            w.ref,
            c.name,
            details(res, s, u, request=request, tolerance_percent=tolerance),
        )
