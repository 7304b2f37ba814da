"""Typed rule options: what a rule declares it can be configured with, and their validation.

A Python rule module declares ``OPTIONS = (Option(...), ...)``; a Rego rule declares the same
fields in its METADATA (``custom.options``). The config file's ``thresholds: {RULE: {name: value}}``
is checked against the declarations (:func:`check_value`); the defaults live only there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Option",
    "OptionError",
    "TYPES",
    "DURATION_PATTERN",
    "check_value",
    "json_schema",
    "option_from_metadata",
    "parse_duration",
]

TYPES = ("integer", "number", "boolean", "string", "duration")


class OptionError(ValueError):
    """A configured option value that does not fit its declaration."""


@dataclass(frozen=True)
class Option:
    name: str
    type: str  # one of TYPES; a duration is a number of seconds or "10s" / "500ms" / "2m"
    default: Any
    doc: str
    minimum: int | float | None = None
    choices: tuple[str, ...] | None = None  # the values a string option may take


def option_from_metadata(entry: Mapping[str, Any], where: str) -> Option:
    try:
        option = Option(
            name=str(entry["name"]),
            type=str(entry["type"]),
            default=entry.get("default"),
            doc=str(entry.get("doc", "")),
            minimum=entry.get("minimum"),
            choices=tuple(str(c) for c in entry["choices"]) if entry.get("choices") else None,
        )
    except KeyError as e:
        raise ValueError(f"{where}: option without {e.args[0]}") from None
    if option.type not in TYPES:
        raise ValueError(f"{where}: option {option.name}: unknown type {option.type!r}")
    return option


DURATION_PATTERN = r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$"  # also the config schema's pattern


def parse_duration(text: str) -> float:
    """Seconds in ``10``, ``10s``, ``500ms`` or ``2m``; raises ValueError."""
    m = re.fullmatch(DURATION_PATTERN.strip("^$"), text)
    if not m:
        raise ValueError(f"{text!r} is not a duration such as 10s, 500ms or 1m")
    value = float(m.group(1))
    return value / 1000 if m.group(2) == "ms" else value * 60 if m.group(2) == "m" else value


def json_schema(option: Option) -> dict[str, Any]:
    """The option's JSON Schema, as the config schema holds it (``podfit docs`` writes it)."""
    schema: dict[str, Any]
    if option.type == "duration":
        number: dict[str, Any] = {"type": "number"}
        if option.minimum is not None:
            number["minimum"] = option.minimum
        schema = {"anyOf": [number, {"type": "string", "pattern": DURATION_PATTERN}]}
    else:
        schema = {"type": option.type}
        if option.minimum is not None:
            schema["minimum"] = option.minimum
        if option.choices is not None:
            schema["enum"] = list(option.choices)
    if option.default is not None:
        schema["default"] = option.default
    schema["description"] = option.doc
    return schema


def _duration(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return parse_duration(value) if isinstance(value, str) else None
    except ValueError:
        return None


def check_value(option: Option, value: Any) -> Any:
    """``value`` as the option's type (a duration as seconds); raises OptionError."""
    kind = option.type
    if kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
        converted = value
    elif kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        converted = value
    elif kind == "boolean":
        ok = isinstance(value, bool)
        converted = value
    elif kind == "string":
        ok = isinstance(value, str)
        converted = value
    else:
        converted = _duration(value)
        ok = converted is not None
    if not ok:
        example = {"duration": '"10s" or 10', "integer": "20", "number": "1.5", "boolean": "true", "string": '"x"'}[
            kind
        ]
        raise OptionError(
            f"{option.name} must be {'an' if kind == 'integer' else 'a'} {kind} (e.g. {example}), not {value!r}"
        )
    if kind in ("number", "duration") and not math.isfinite(converted):  # nan passes every comparison
        raise OptionError(f"{option.name} must be a finite number, not {value!r}")
    if option.choices is not None and converted not in option.choices:
        raise OptionError(f"{option.name} must be one of {', '.join(option.choices)}, not {value!r}")
    if option.minimum is not None and converted < option.minimum:
        raise OptionError(f"{option.name} must be at least {option.minimum}, not {value!r}")
    return converted
