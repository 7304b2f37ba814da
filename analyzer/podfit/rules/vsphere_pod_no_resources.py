"""PF401: on vSphere Pods, a container (init included) with neither requests nor limits after
Kubernetes defaulting (LimitRange defaults applied): the CRX is sized without it."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..vsphere import describe_crx
from . import RuleContext
from ._crx import sized_pods

ID = "PF401"
SLUG = "vsphere-pod-no-resources"
TITLE = "vSphere Pod container without resources"
SEVERITY = "error"
REQUIRES: tuple[str, ...] = ("runtime-vsphere-pods",)
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    for w, size, unreadable in sized_pods(ctx):
        for c in w.pod.all_containers:
            if not c.resources.is_empty or c.name in unreadable:
                continue
            word = "init container" if c.init else "container"
            if size.cpu_from == "none" and size.memory_from == "none":
                crx = f"its CRX gets the defaults of a pod that sets none: {describe_crx(size)}"
            else:
                crx = f"its CRX is sized from the other containers alone: {describe_crx(size)}"
            yield Finding(
                ID,
                f'{word} "{c.name}" of a vSphere Pod has no requests or limits; {crx}',
                c.location,
                w.ref,
                c.name,
                {"init_container": c.init, **size.figures()},
            )
