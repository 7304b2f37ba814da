"""Counted nouns in messages: ``1 node``, ``2 nodes``, ``1,200 pods``."""

from __future__ import annotations

__all__ = ["plural"]

# nouns whose plural is not the singular plus "s"; "info" is a mass noun
_IRREGULAR = {"info": "info", "replica set": "replica sets", "class": "classes", "VM class": "VM classes"}


def plural(n: int, word: str) -> str:
    """``n`` and ``word`` in the number ``n`` asks for, with thousands separators."""
    return f"{n:,} {word if n == 1 else _IRREGULAR.get(word, word + 's')}"
