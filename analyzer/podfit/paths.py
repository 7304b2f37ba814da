"""Where podfit's bundled data lives: the repo checkout, or the copy inside an installed wheel."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]


def _from_repo(name: str) -> Path | None:
    candidate = _REPO / name
    return candidate if (_REPO / "analyzer" / "podfit").is_dir() and candidate.is_dir() else None


_PACKAGE = Path(__file__).resolve().parent


def policies_dir() -> Path:
    """policies/ of the checkout, or podfit/_policies inside an installed wheel."""
    return _from_repo("policies") or _PACKAGE / "_policies"


def schemas_dir() -> Path:
    """schemas/ of the checkout, or podfit/_schemas inside an installed wheel."""
    return _from_repo("schemas") or _PACKAGE / "_schemas"


@cache
def load_schema(name: str) -> Any:
    return json.loads((schemas_dir() / name).read_text(encoding="utf-8"))
