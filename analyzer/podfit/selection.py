"""Which paths a directory's expansion checks, as ruff chooses them: ``exclude`` globs (a default
list of version-control, dependency and cache directories, replaced by ``--exclude``),
``extend-exclude`` globs added to them, ``.gitignore`` files (respected by default), and the
platform profile and config file, which are never checked as manifests. Hidden directories are
checked (kubectl applies them) unless a pattern excludes them.

Every path left out comes with the reason (:meth:`PathFilter.skip`), for ``-v`` to list.

Patterns: one without ``/`` matches any component of the path (a file or directory name:
``node_modules``, ``*.json``); one with ``/`` matches the path as given, or relative to the config
file's directory or to the current directory, or one of its parent directories (``**`` any
directories, ``*`` and ``?`` within one component). The config's ``ignore:`` path globs keep
their ``fnmatch`` matching on the whole path or the file name.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["DEFAULT_EXCLUDE", "PathFilter", "GitIgnores", "pattern_matches", "glob_matches"]

# directories no manifest of the repository lives in: version control, dependencies, caches
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".terraform",
)


def _norm(path: str) -> str:
    path = path.replace(os.sep, "/")
    return path if path in ("", "/") else os.path.normpath(path).replace(os.sep, "/")


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: ``**`` any number of directories, ``*`` and ``?`` within one path
    component, ``[...]`` a character class."""
    pattern = _norm(pattern.rstrip("/")) if pattern.strip("/") else pattern
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (j := pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)) != -1:
            body = pattern[i + 1 : j]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """Does the path glob ``pattern`` match ``path`` or one of its parent directories?"""
    regex = _glob_regex(pattern)
    path = _norm(path)
    while True:
        if regex.match(path):
            return True
        parent = os.path.dirname(path)
        if not parent or parent == path:
            return False
        path = parent


def _forms(path: str, base: str) -> list[str]:
    """The path as given and relative to ``base`` and to the current directory (when under them)."""
    out = [_norm(path)]
    absolute = os.path.abspath(path)
    for root in (base, os.getcwd()) if base else (os.getcwd(),):
        rel = os.path.relpath(absolute, os.path.abspath(root))
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            out.append(_norm(rel))
    return list(dict.fromkeys(out))


def pattern_matches(pattern: str, path: str, base: str = "") -> bool:
    """Does the exclude ``pattern`` match ``path`` (see the module's docstring)?"""
    forms = _forms(path, base)
    return _matches(pattern, forms, _parts(forms))


def _parts(forms: list[str]) -> set[str]:
    return {part for form in forms for part in form.split("/") if part not in ("", ".")}


def _matches(pattern: str, forms: list[str], parts: set[str]) -> bool:
    """:func:`pattern_matches` on the path's forms and their components, computed once a path."""
    body = pattern.strip().rstrip("/")
    if not body:
        return False
    if "/" not in body:
        return body in parts if not any(c in body for c in "*?[") else any(fnmatch.fnmatchcase(p, body) for p in parts)
    body = body.removeprefix("./")
    return any(glob_matches(body, form) for form in forms)


class GitIgnores:
    """The ``.gitignore`` files that apply to a walk: those of the directories walked and of their
    parents up to the repository's root (the directory holding ``.git``). A deeper file decides
    before a higher one, and within a file the last matching pattern wins (git's rules, by
    :mod:`pathspec`)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._specs: dict[str, Any] = {}  # absolute directory -> its spec, or None

    def _spec(self, directory: str) -> Any:
        if directory not in self._specs:
            spec = None
            path = os.path.join(directory, ".gitignore")
            if os.path.isfile(path):
                import pathspec

                from .reading import NotRead, read_text

                try:
                    spec = pathspec.GitIgnoreSpec.from_lines(read_text(path, self._limit).splitlines())
                except NotRead:
                    spec = None  # an unreadable .gitignore ignores nothing: the files are checked
            self._specs[directory] = spec
        return self._specs[directory]

    @staticmethod
    def _root(directory: str) -> str | None:
        """The repository root at or above ``directory``, or None outside a repository."""
        d = directory
        while True:
            if os.path.exists(os.path.join(d, ".git")):
                return d
            parent = os.path.dirname(d)
            if parent == d:
                return None
            d = parent

    def ignored(self, path: str, is_dir: bool, top: str) -> str | None:
        """Which ``.gitignore`` pattern ignores ``path`` (found below the walked directory
        ``top``), as ``FILE: PATTERN``, or None."""
        absolute = os.path.abspath(path)
        top_abs = os.path.abspath(top)
        root = self._root(top_abs)
        stop = root if root is not None else top_abs
        d = os.path.dirname(absolute)
        while True:
            spec = self._spec(d)
            if spec is not None:
                rel = os.path.relpath(absolute, d).replace(os.sep, "/") + ("/" if is_dir else "")
                result = spec.check_file(rel)
                if result.include is not None:
                    if not result.include:
                        return None  # a negated pattern (!x) brings it back
                    line = str(getattr(spec.patterns[result.index], "pattern", "") or "")
                    where = os.path.relpath(os.path.join(d, ".gitignore"))
                    return f"{where}: {line}" if line else where
            if d == stop or os.path.dirname(d) == d:
                return None
            d = os.path.dirname(d)


@dataclass(frozen=True)
class PathFilter:
    """What a directory's expansion leaves out, and why."""

    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()  # the config's `ignore:` path globs (fnmatch on the path or the name)
    base: str = ""  # the config file's directory: patterns are also matched relative to it
    respect_gitignore: bool = True
    never: tuple[tuple[str, str], ...] = ()  # (file, why): the platform profile and the config
    max_file_bytes: int = 64 * 2**20
    _git: GitIgnores | None = field(default=None, compare=False, repr=False)
    _never_ids: dict[tuple[int, int], str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self._git is None and self.respect_gitignore:
            object.__setattr__(self, "_git", GitIgnores(self.max_file_bytes))
        for path, why in self.never:
            try:
                st = os.stat(path)
            except OSError:
                continue
            self._never_ids[(st.st_dev, st.st_ino)] = why

    def excluded(self, path: str) -> str | None:
        """The exclude pattern that matches ``path``, as a reason, or None."""
        forms = _forms(path, self.base)  # once a path, not once a pattern
        parts = _parts(forms)
        for option, patterns in (("exclude", self.exclude), ("extend-exclude", self.extend_exclude)):
            for pattern in patterns:
                if _matches(pattern, forms, parts):
                    return f"{option} {pattern}"
        norm = path.replace(os.sep, "/")
        for pattern in self.ignore:
            if fnmatch.fnmatch(norm, pattern) or fnmatch.fnmatch(os.path.basename(norm), pattern):
                return f"the config's ignore {pattern}"
        return None

    def special(self, path: str) -> str | None:
        """Why ``path`` is no manifest to check (it is the platform profile or the config), or None."""
        if not self._never_ids:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        return self._never_ids.get((st.st_dev, st.st_ino))

    def skip(self, path: str, is_dir: bool, top: str | None) -> str | None:
        """Why ``path`` is left out, or None. ``top``: the directory whose walk found it (None for
        a path named on the command line: ``.gitignore`` leaves out only what a walk finds)."""
        why = self.excluded(path)
        if why is None and top is not None and self._git is not None:
            git = self._git.ignored(path, is_dir, top)
            why = f"ignored by {git}" if git else None
        if why is None and not is_dir:
            why = self.special(path)
        return why
