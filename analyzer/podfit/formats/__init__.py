"""Report renderers: each module here defines ``NAME`` and ``render(report, color=False) -> str``
(a renderer may take more keywords, e.g. html's ``visuals``: :func:`render` passes them on).

``--format`` choices are the names found here (plus ``auto``, resolved by the CLI).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from functools import lru_cache

from ..check import Report

Renderer = Callable[..., str]


@lru_cache(maxsize=1)
def renderers() -> Mapping[str, Renderer]:
    out: dict[str, Renderer] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(module, "NAME", None)
        if name:
            out[name] = module.render
    return out


def render(report: Report, fmt: str, color: bool = False, **extra: object) -> str:
    return renderers()[fmt](report, color=color, **extra)
