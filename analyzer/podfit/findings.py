"""The :class:`Finding` every rule, engine and the loader produce."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import Location, ObjectRef

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 1, "warning": 2, "error": 3}


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    location: Location
    object: ObjectRef | None = None
    container: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    severity: str = ""  # filled in from the catalogue (and config overrides) by the check pipeline

    def sort_key(self) -> tuple:
        return (
            self.location.file,
            self.location.line,
            self.rule,
            self.location.column,
            str(self.object or ""),
            self.container or "",
            self.message,
        )
