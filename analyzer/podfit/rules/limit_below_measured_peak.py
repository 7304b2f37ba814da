"""PF107: a container's limit is below the peak measured for it (or it was OOM-killed at its limit)."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ._usage import amount, details, evidence, measured_values

ID = "PF107"
SLUG = "limit-below-measured-peak"
TITLE = "Limit below the measured peak"
SEVERITY = "warning"
REQUIRES: tuple[str, ...] = ("usage",)
OPTIONS: tuple[Option, ...] = (
    Option(
        "headroom-percent",
        "integer",
        0,
        "Room a limit must leave above the measured peak, in percent of the peak.",
        minimum=0,
    ),
)


def check(ctx) -> Iterator[Finding]:
    headroom = int(ctx.option("headroom-percent"))
    for w, c, u, res, word, s, limit in measured_values(ctx, "limit"):
        oom = res == "memory" and "OOMKilled" in u.terminated
        if limit * 100 >= s.max * (100 + headroom) and not oom:
            continue
        effect = "OOM kills" if res == "memory" else "CFS throttling"
        if limit < s.max:
            what = f"{word} limit {amount(res, limit)} is below the measured peak {amount(res, s.max)}"
        elif limit * 100 < s.max * (100 + headroom):
            what = (
                f"{word} limit {amount(res, limit)} leaves less than {headroom}% above the measured peak "
                f"{amount(res, s.max)}"
            )
        else:
            what = f"the container was OOM-killed at its memory limit {amount(res, limit)}"
        yield Finding(
            ID,
            f'container "{c.name}": {what} ({evidence(res, s, u)}): expect {effect} at the peak',
            c.location,
            w.ref,
            c.name,
            details(res, s, u, limit=limit, oom_killed=oom, headroom_percent=headroom),
        )
