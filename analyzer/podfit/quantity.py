"""Exact parsing of Kubernetes resource quantities.

CPU quantities become integer millicores and memory quantities integer bytes. Parsing goes through
:class:`fractions.Fraction`, so ``0.1`` CPU is exactly 100m and ``0.5Gi`` exactly 536870912 bytes; no
float ever touches a quantity. Like Kubernetes (``Quantity.MilliValue`` / ``Value``), a value that is
not a whole number of the target unit is rounded up.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``::

    quantity  ::= sign? digits ( '.' digits? )? suffix | sign? '.' digits suffix
    suffix    ::= binarySI | decimalSI | ( 'e' | 'E' ) sign? digits
    binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
    decimalSI ::= n | u | m | '' | k | M | G | T | P | E
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "QuantityError",
    "parse_quantity",
    "parse_cpu",
    "parse_memory",
    "format_cpu",
    "format_memory",
    "MAX_QUANTITY",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_RE = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$"
)
# Kubernetes stores quantities in an int64 of the smallest unit it needs; anything larger than this
# is rejected rather than silently saturated.
MAX_QUANTITY = Fraction(2**63 - 1)


class QuantityError(ValueError):
    """A value that is not a valid Kubernetes quantity (reported as PF903)."""

    def __init__(self, value: object, reason: str) -> None:
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 60:  # (a value of thousands of characters is named by its start)
            shown = shown[:50] + f"... ({len(shown) - 2:,} characters)"
        super().__init__(f"{shown} is not a valid quantity: {reason}")


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity (string, int or YAML float) into an exact non-negative :class:`Fraction`."""
    num, den = _ratio(value)
    return Fraction(num, den)


def _ratio(value: object) -> tuple[int, int]:
    """(numerator, denominator) of a quantity; strings are cached (corpora repeat "500m" a lot)."""
    if type(value) is str:
        return _ratio_text(value)
    if isinstance(value, bool) or value is None:
        raise QuantityError(value, "expected a number or a quantity string")
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(value, "not a finite number")
        # repr() is the shortest string that round-trips: 0.1 -> "0.1", 1e-05 -> "1e-05".
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        # named as YAML calls it, not by podfit's own type (LineDict: a mapping that keeps lines)
        got = "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__
        raise QuantityError(value, f"expected a number or a quantity string, got {got}")
    try:
        return _ratio_text(text)
    except QuantityError as e:
        raise QuantityError(value, e.reason) from None


@lru_cache(maxsize=8192)
def _ratio_text(text: str) -> tuple[int, int]:
    text = text.strip()
    if len(text) > 64:
        raise QuantityError(text, "longer than 64 characters")
    m = _RE.match(text)
    if m is None:
        raise QuantityError(text, "expected a number with an optional suffix such as m, k, Mi, Gi or e3")
    whole, _, frac = m["num"].partition(".")
    num = int((whole or "0") + frac)
    den = 10 ** len(frac)
    if m["exp"] is not None:
        exponent = int(m["exp"][1:])
        if abs(exponent) > 40:
            raise QuantityError(text, "exponent out of range")
        if exponent >= 0:
            num *= 10**exponent
        else:
            den *= 10**-exponent
    else:
        suffix = m["suffix"] or ""
        if suffix in _BINARY:
            num *= _BINARY[suffix]
        else:
            scale = _DECIMAL[suffix]
            num *= scale.numerator
            den *= scale.denominator
    if m["sign"] == "-" and num != 0:
        raise QuantityError(text, "resource quantities cannot be negative")
    if num > MAX_QUANTITY * den:
        raise QuantityError(text, "too large")
    return num, den


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def parse_cpu(value: object) -> int:
    """CPU quantity to integer millicores, rounded up like ``Quantity.MilliValue``."""
    num, den = _ratio(value)
    return -((-num * 1000) // den)


def parse_memory(value: object) -> int:
    """Memory (or storage) quantity to integer bytes, rounded up like ``Quantity.Value``."""
    num, den = _ratio(value)
    return -((-num) // den)


def format_cpu(millicores: int) -> str:
    """Canonical form: whole CPUs as ``"2"``, otherwise millicores as ``"1500m"``."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def format_memory(nbytes: int, *, exact: bool = True) -> str:
    """Memory (bytes) for messages and reports: podfit's one memory formatter.

    ``exact`` (the default): a Kubernetes quantity equal to the value, with the largest binary
    suffix that divides it exactly (``"512Mi"``, ``"1536Ki"``), else bytes: what a finding tells
    the user to write. Otherwise, for tables and prose where a fraction of a unit does not matter:
    in the largest binary unit the value reaches, Mi at least, whole when it divides exactly, else
    to one decimal (``"31.9Gi"``, ``"640Mi"``, ``"0.5Mi"``); ``"0"`` for zero.
    """
    if exact:
        for suffix, size in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if nbytes and nbytes % size == 0:
                return f"{nbytes // size}{suffix}"
        return str(nbytes)
    if nbytes == 0:
        return "0"
    suffix, size = next(
        ((sfx, sz) for sfx, sz in sorted(_BINARY.items(), key=lambda kv: -kv[1]) if abs(nbytes) >= sz and sz >= 2**20),
        ("Mi", 2**20),
    )
    return f"{nbytes // size}{suffix}" if nbytes % size == 0 else f"{nbytes / size:.1f}{suffix}"
