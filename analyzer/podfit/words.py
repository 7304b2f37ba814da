"""Counted nouns in messages (``1 node``, ``2 nodes``, ``1,200 pods``) and lines of text output
kept to :data:`LINE_LIMIT` characters."""

from __future__ import annotations

import textwrap

__all__ = ["LINE_LIMIT", "plural", "wrap_line", "wrap_text"]

LINE_LIMIT = 160  # characters of a finding's line in text output; the whole message is in JSON

# nouns whose plural is not the singular plus "s"; "info" is a mass noun
_IRREGULAR = {"info": "info", "replica set": "replica sets", "class": "classes", "VM class": "VM classes"}


def plural(n: int, word: str) -> str:
    """``n`` and ``word`` in the number ``n`` asks for, with thousands separators."""
    return f"{n:,} {word if n == 1 else _IRREGULAR.get(word, word + 's')}"


def wrap_line(text: str, limit: int = LINE_LIMIT, indent: str = "    ") -> str:
    """``text`` as one line when it fits in ``limit`` characters, else broken at spaces into lines
    of at most ``limit`` (a single word longer than that stays whole), the later ones indented
    by ``indent`` more than the first, so that each entry of a listing starts at its margin and
    nothing of it is lost."""
    if len(text) <= limit:
        return text
    more = text[: len(text) - len(text.lstrip(" "))] + indent
    return "\n".join(textwrap.wrap(text, limit, subsequent_indent=more, break_long_words=False, break_on_hyphens=False))


def wrap_text(text: str, limit: int = LINE_LIMIT) -> str:
    """Every line of ``text`` through :func:`wrap_line` (its trailing newline kept)."""
    return "".join(wrap_line(line, limit) + end for line, end in _lines(text))


def _lines(text: str) -> list[tuple[str, str]]:
    return [(line[:-1], "\n") if line.endswith("\n") else (line, "") for line in text.splitlines(keepends=True)]
