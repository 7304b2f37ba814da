"""The methods of podfit's dataclasses, compiled once and kept in the private cache directory.

The standard library's ``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and, for a frozen class, ``__setattr__`` and ``__delattr__`` as source text and
compiles it with ``exec`` every time the class is defined. podfit defines some seventy frozen
dataclasses on the way to checking one file, and compiling their methods was about a tenth of a
one-file check (docs/architecture.md, "One process per run"). :func:`install` gives ``dataclasses``
an ``exec`` of its own (looked up in the module's globals before the built-in) that compiles each
source text once, exactly as ``exec`` would (file name ``<string>``, no inherited ``__future__``
flags), and runs the code object; :func:`save` writes what was compiled to the cache, keyed by the
source text itself, so a text that changes is compiled afresh and an unchanged one never is.

The cache file is a ``marshal`` dump of code objects, which run as they are: like the compiled
policies, it is read only through :func:`podfit.cachedir.read_trusted` (the user's own, written
by no one else) and written with :func:`podfit.cachedir.write_private`. Without a private cache
directory everything is compiled each run, as without this module.
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

from .cachedir import cache_dir, read_trusted, write_private

__all__ = ["install", "save"]

# Bounds on what is kept: entries (one command's run compiles a few hundred; each edit of a
# dataclass adds a few, so a file past this holds mostly stale texts and is started afresh with
# what this run used) and the file read back.
MAX_ENTRIES = 4096
MAX_FILE_BYTES = 16 * 2**20

_codes: dict[str, CodeType] = {}
_used: set[str] = set()
_state = {"installed": False, "loaded": 0, "compiled": 0, "added": 0}  # added: not saved yet


def _file() -> Path | None:
    """The cache file, named by the interpreter's bytecode version as a ``.pyc`` is checked by it:
    releases with one cache tag (3.13.0b1 and 3.13.0, cpython-313 both) may differ in bytecode,
    and code objects of another bytecode would run wrongly or crash the interpreter."""
    root = cache_dir()
    if root is None:
        return None
    return root / f"dataclass-code-{sys.implementation.cache_tag}-{MAGIC_NUMBER[:2].hex()}.marshal"


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:  # noqa: A002 (exec's own names)
    if isinstance(source, str):
        code = _codes.get(source)
        if code is None:
            code = _codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            _state["compiled"] += 1
            _state["added"] += 1
        _used.add(source)
        source = code
    builtins.exec(source, globals, locals)


def _load(path: Path) -> dict[str, CodeType]:
    data = read_trusted(path, MAX_FILE_BYTES)
    if data is None:
        return {}
    try:
        codes = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items() if isinstance(k, str) and isinstance(v, CodeType)}


def install() -> None:
    """Compile dataclass methods through the cache from now on (once per process)."""
    if _state["installed"]:
        return
    _state["installed"] = True
    path = _file()
    if path is not None:
        _codes.update(_load(path))
        _state["loaded"] = len(_codes)
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def save() -> None:
    """Write the cache when this process compiled something it did not hold (nothing otherwise)."""
    if not _state["added"]:
        return
    path = _file()
    if path is None:
        return
    keep = _codes if len(_codes) <= MAX_ENTRIES else {k: _codes[k] for k in _used}
    try:
        write_private(path, marshal.dumps(keep))
        _state["added"] = 0
    except (OSError, ValueError):
        pass  # no writable cache: compiled again next run
