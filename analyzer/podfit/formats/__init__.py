"""Report renderers: each module here defines ``NAME`` and ``render(report, color=False, **options) -> str``.

The options a renderer may read: ``fail_on`` (the exit threshold), ``show_fixes``, ``quiet`` and
``verbose``, html's ``visuals``; each takes the ones it understands and ignores the rest.

``--format`` choices are the names found here (plus ``auto``, resolved by the CLI).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..check import Report

Renderer = Callable[..., str]


NAMES = ("text", "json", "sarif", "junit", "github", "html")  # --format choices; a test holds them equal to the modules
_MODULES = {"json": "json_report"}  # a name whose module is named otherwise


def renderer(fmt: str) -> Renderer:
    """The renderer of one format, importing only its module (a run writes one format)."""
    return importlib.import_module(f"{__name__}.{_MODULES.get(fmt, fmt)}").render


@lru_cache(maxsize=1)
def renderers() -> Mapping[str, Renderer]:
    """Every renderer, by the ``NAME`` its module declares."""
    out: dict[str, Renderer] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(module, "NAME", None)
        if name:
            out[name] = module.render
    return out


def render(report: Report, fmt: str, color: bool = False, **options: object) -> str:
    return renderer(fmt)(report, color=color, **options)
