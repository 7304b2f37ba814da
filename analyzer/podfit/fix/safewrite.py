"""Replace a file's bytes and nothing else: same inode's name, mode, owner; all or nothing.

The new bytes go into a temporary file in the same directory (named ``.podfit-fix-*.tmp``, a name
the loader never reads as a manifest: it lists ``*.yaml``, ``*.yml`` and ``*.json`` files only),
which gets the original's owner and mode, is fsynced and renamed over the original; then the
directory is fsynced, so the rename survives a crash too. A reader sees the old file or the new
one, never a mix.

What a rename cannot keep is refused before anything is written (:func:`refusal`): a symbolic
link (the caller resolves it to its target), a file with more than one hard link (the rename
would split the links and writing in place would not be atomic), a read-only file, a directory
where no file can be created. While :func:`cleanup_on_signals` is active, SIGINT and SIGTERM
remove the temporary file before the process ends. One left by ``kill -9`` (nothing runs then,
whatever the moment: before the rename the file is still there) carries the writing process's id
in its name (``.podfit-fix-<pid>-*.tmp``): the next run removes it when that process no longer
exists and the file is the user's own regular file (:func:`remove_stale_temp_files`); others
(another user's, a live process's) are listed, never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "TEMP_PREFIX",
    "Snapshot",
    "cleanup_on_signals",
    "refusal",
    "remove_stale_temp_files",
    "snapshot",
    "stale_temp_files",
    "write",
]

TEMP_PREFIX = ".podfit-fix-"
TEMP_SUFFIX = ".tmp"

_live: set[str] = set()  # temporary files being written, removed on SIGINT/SIGTERM

Snapshot = tuple[int, int, int, int]  # device, inode, size, modification time (ns)


def snapshot(path: str) -> Snapshot:
    """What identifies the file's content as read (to notice a change before replacing it)."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def refusal(path: str) -> str | None:
    """Why the file cannot be replaced keeping everything but its bytes, or None."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot be read: {e.strerror or e}"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_nlink > 1:
        return (
            f"it has {st.st_nlink} hard links: replacing it would split them and writing it in place could "
            "leave it half-written; apply the diff (podfit fix without --write) instead"
        )
    mode = stat.S_IMODE(st.st_mode)
    if not mode & 0o222 or not os.access(path, os.W_OK):
        return f"read-only (mode {mode:04o}): make it writable to fix it in place"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"its directory {directory} is not writable (the new bytes go to a file beside it first)"
    return None


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write(path: str, data: bytes, expect: Snapshot | None = None, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` in one step (or create it, with ``mode``), keeping the
    original's mode and owner. ``expect``: the file as it was read; if it has changed since,
    nothing is written (OSError)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=TEMP_SUFFIX, dir=directory)
    _live.add(tmp)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if st is not None:
                if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    os.fchown(fh.fileno(), st.st_uid, st.st_gid)  # before the mode: chown clears setuid bits
                os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fh.fileno(), mode & ~umask)
            os.fsync(fh.fileno())
        if expect is not None and snapshot(path) != expect:
            raise OSError(f"{path} changed while podfit fix ran; run it again")
        os.replace(tmp, path)
        _live.discard(tmp)
        _fsync_dir(directory)
    finally:
        if tmp in _live:
            _live.discard(tmp)
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """While active, SIGINT and SIGTERM remove the temporary files being written, then end the
    process as the signal would have."""
    previous: dict[int, Any] = {}

    def handler(signum: int, _frame: Any) -> None:
        for tmp in list(_live):
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            _live.discard(tmp)
        signal.signal(signum, previous.get(signum, signal.SIG_DFL))
        if signum == signal.SIGINT and previous.get(signum) is signal.default_int_handler:
            raise KeyboardInterrupt
        os.kill(os.getpid(), signum)

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: signals cannot be caught here
        pass
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def stale_temp_files(directories: Iterable[str]) -> list[str]:
    """Temporary files an interrupted (killed) run left in these directories."""
    found: list[str] = []
    for d in sorted(set(directories)):
        with contextlib.suppress(OSError):
            found.extend(os.path.join(d, n) for n in sorted(os.listdir(d)) if n.startswith(TEMP_PREFIX))
    return found


_OWNED = re.compile(re.escape(TEMP_PREFIX) + r"(\d+)-[^/]*" + re.escape(TEMP_SUFFIX))


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # another user's process: it exists (or the number is none a process has)
    return True


def remove_stale_temp_files(directories: Iterable[str]) -> tuple[list[str], list[str]]:
    """Remove the temporary files a killed ``podfit fix`` left in these directories: named with
    the id of a process that no longer exists, a regular file (not a link) of this user's. Returns
    (removed, left): ``left`` are those it may not remove (another user's, a live process's, one
    named otherwise, or one it failed to remove)."""
    removed: list[str] = []
    left: list[str] = []
    for path in stale_temp_files(directories):
        m = _OWNED.fullmatch(os.path.basename(path))
        try:
            st = os.lstat(path)
        except OSError:
            continue  # gone meanwhile
        if m is None or not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or _process_exists(int(m.group(1))):
            left.append(path)
            continue
        try:
            os.unlink(path)
            removed.append(path)
        except OSError:
            left.append(path)
    return removed, left
