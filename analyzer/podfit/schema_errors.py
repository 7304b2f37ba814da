"""What a JSON Schema error expected, in words taken from the schema only.

jsonschema's own messages quote the value that failed (``'hunter2' is not of type 'integer'``,
every unexpected key of a mapping): given a file that is not what it was taken for
(``--platform /etc/shadow``), they would print its content. These say what was expected; the
caller names the file, the line and the key path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["expected", "safe_key", "where"]

_ARTICLE = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
# a key shown in a message: a plain name such as a mistyped option or a path glob (letters, digits,
# `_.-/*?[]!`), never a line of some other file (`root:*:20228:...`, `password = ...`)
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.*?/\[\]!-]{1,64}\Z")


def safe_key(key: Any) -> str | None:
    """``key`` quoted when it is a plain name (see _PLAIN_KEY; at most 64 characters), else None."""
    return repr(key) if isinstance(key, str) and _PLAIN_KEY.match(key) else None


def where(error: Any) -> str:
    """The key path of ``error`` (``spec/hosts/0/count``), keys that are no plain name shown as …."""
    return "/".join(str(k) if isinstance(k, int) or safe_key(k) else "…" for k in error.absolute_path) or "(top level)"


def _types(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    t = schema.get("type")
    if isinstance(t, str):
        return [_ARTICLE.get(t, t)]
    if isinstance(t, list):
        return [_ARTICLE.get(x, str(x)) for x in t]
    if "enum" in schema:
        return [" or ".join(map(repr, schema["enum"]))]
    if "const" in schema:
        return [repr(schema["const"])]
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return [ref.rsplit("/", 1)[-1]]
    return []


def _count(n: Any, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def expected(error: Any) -> str:
    """What ``error`` (a jsonschema ValidationError) expected, never quoting the value it got."""
    v = error.validator_value
    kind = error.validator
    instance = error.instance
    if kind == "type":
        return "expected " + " or ".join(_types({"type": v}))
    if kind == "required":
        missing = [k for k in v if not (isinstance(instance, Mapping) and k in instance)] or list(v)
        return "missing required key" + ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing))
    if kind == "additionalProperties":
        known = error.schema.get("properties") if isinstance(error.schema, Mapping) else None
        names = list(known) if isinstance(known, Mapping) else []
        unknown = [k for k in instance if k not in (known or {})] if isinstance(instance, Mapping) else []
        shown = [s for s in map(safe_key, unknown) if s is not None]
        if len(unknown) == 1:
            head = f"unknown key {shown[0]}" if shown else "unknown key"
        else:
            head = _count(len(unknown), "unknown key")
        return head + (f" (valid keys: {', '.join(names)})" if names else "")
    if kind == "enum":
        return "expected one of " + ", ".join(map(repr, v))
    if kind == "const":
        return f"expected {v!r}"
    if kind == "minimum":
        return f"expected at least {v}"
    if kind == "maximum":
        return f"expected at most {v}"
    if kind == "exclusiveMinimum":
        return f"expected more than {v}"
    if kind == "exclusiveMaximum":
        return f"expected less than {v}"
    if kind == "pattern":
        return f"expected a value matching {v}"
    if kind in ("minLength", "maxLength"):
        return f"expected {'at least' if kind == 'minLength' else 'at most'} {_count(v, 'character')}"
    if kind in ("minItems", "maxItems"):
        return f"expected {'at least' if kind == 'minItems' else 'at most'} {_count(v, 'item')}"
    if kind in ("minProperties", "maxProperties"):
        return f"expected {'at least' if kind == 'minProperties' else 'at most'} {_count(v, 'key')}"
    if kind == "uniqueItems":
        return "expected no item twice"
    if kind == "not" and isinstance(v, Mapping) and isinstance(v.get("required"), list):
        return " and ".join(map(repr, v["required"])) + " cannot be given together"
    if kind in ("anyOf", "oneOf"):
        forms = [t for sub in v for t in _types(sub)]
        return "expected " + " or ".join(forms) if forms else "does not match any of the allowed forms"
    if kind == "format":
        return f"expected a {v}"
    return f"not valid here ({kind})"
