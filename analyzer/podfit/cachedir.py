"""The user's podfit cache directory, used only when nobody else can write to it.

podfit keeps derived data there to start faster: the policies' machine code compiled by wasmtime,
the compiled methods of its dataclasses (:mod:`podfit.codecache`), the rule declarations and
catalogue, and the schema definitions each Kubernetes kind reaches. None may come from anyone but
the user: wasmtime runs deserialized machine code as it is and Python runs cached code objects as
they are (a planted file would run as the user), and a planted definitions file would change
PF902's verdicts. So a cache directory (and every
directory on the way to it from ``$XDG_CACHE_HOME``, else ``~/.cache``) must belong to the user
running podfit (or root) and be closed to writes by group and others; a cached file must belong to
the user and be writable by nobody else. Where that does not hold, podfit works without a cache:
the same results, computed each run.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["cache_dir", "open_trusted", "read_trusted", "trusted_file", "write_private"]


def _base() -> Path:
    env = os.environ.get("XDG_CACHE_HOME")
    return Path(env) if env and os.path.isabs(env) else Path.home() / ".cache"


def _safe_dir(st: os.stat_result) -> bool:
    return stat.S_ISDIR(st.st_mode) and st.st_uid in (os.geteuid(), 0) and not st.st_mode & 0o022


def cache_dir(*parts: str) -> Path | None:
    """``<cache base>/podfit/<parts>``, created private (0700) when missing; None when it or a
    directory above it (up to the cache base) could be written by another user, or when it cannot
    be made."""
    base = _base()
    target = base.joinpath("podfit", *parts)
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)  # the XDG base may not exist yet
        st = os.stat(base)
        shared_sticky = st.st_uid == 0 and st.st_mode & stat.S_ISVTX  # /tmp: no one renames another's entry
        if not stat.S_ISDIR(st.st_mode) or not (_safe_dir(st) or shared_sticky):
            return None
        current = base
        for name in ("podfit", *parts):
            current = current / name
            try:
                os.mkdir(current, 0o700)
            except FileExistsError:
                pass
            st = os.lstat(current)  # a symlink is not followed: it could point anywhere
            if not _safe_dir(st) or st.st_uid != os.geteuid():
                return None
    except OSError:
        return None
    return target


def trusted_file(path: Path) -> bool:
    """Is ``path`` a regular file of this user's that no one else can write (safe to load)?"""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return _trusted_stat(st)


def _trusted_stat(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def open_trusted(path: Path) -> int | None:
    """A file descriptor open for reading on ``path`` when the file opened is one
    :func:`trusted_file` would pass (the caller closes it); None otherwise.

    The owner and mode are those of the open file, not of the name looked up before: whoever can
    write a directory above the cache base (``XDG_CACHE_HOME=/tmp/alice/cache`` with ``/tmp/alice``
    made by someone else) could otherwise swap it for a link to a directory of theirs between the
    check and the open, and their file would be loaded as the user's."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if _trusted_stat(os.fstat(fd)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def read_trusted(path: Path, limit: int) -> bytes | None:
    """The content of ``path`` when :func:`open_trusted` opens it and it holds at most ``limit``
    bytes; None otherwise (missing, foreign, too large, unreadable)."""
    fd = open_trusted(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all, readable and writable by this user only (a
    temporary file beside it, then a rename). OSError when it cannot."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
