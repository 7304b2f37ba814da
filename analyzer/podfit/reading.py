"""The one reader of every file podfit is given: manifests, the config, the platform profile,
``--usage`` files and ``platform import`` snapshots.

It reads regular files only and at most a size limit (``limits.max-file-bytes``, 64 MiB unless
the config says otherwise). What the path names is looked at before it is opened, so a device
is never opened; it is opened with ``O_NONBLOCK`` so a named pipe put in its place meanwhile
cannot make the run wait for a writer, and the opened descriptor is checked again (a regular
file, not over the limit) before at most limit + 1 bytes are read from it. Standard input is
read to the same limit.

Every file looked at is remembered (device and inode), so that a command can refuse to write its
report over one of its inputs (:func:`is_input`), whatever path or link names it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

__all__ = [
    "DEFAULT_MAX_BYTES",
    "NotRead",
    "read_bytes",
    "read_text",
    "read_stream",
    "is_input",
    "kind_of",
    "json_value",
]

DEFAULT_MAX_BYTES = 64 * 2**20  # limits.max-file-bytes' default (podfit.loader.LoaderLimits)
_CHUNK = 1 << 20

# (st_dev, st_ino) of every file the reader looked at in this process
_inputs: set[tuple[int, int]] = set()


class NotRead(Exception):
    """A file that was not read: ``reason`` says why, without anything of its content.
    ``skipped``: podfit chose not to read it (not a regular file, over the limit, a link loop);
    else reading it failed (permissions, vanished, not UTF-8)."""

    def __init__(self, path: str, reason: str, skipped: bool) -> None:
        self.path = path
        self.reason = reason
        self.skipped = skipped
        super().__init__(f"{path}: {reason}")


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _check(path: str, st: os.stat_result, limit: int) -> None:
    _inputs.add((st.st_dev, st.st_ino))
    if not stat.S_ISREG(st.st_mode):
        raise NotRead(path, f"{kind_of(st.st_mode)}, not a regular file", skipped=True)
    if st.st_size > limit:
        raise NotRead(path, f"larger than {limit:,} bytes ({st.st_size:,})", skipped=True)


def _os_error(path: str, e: OSError) -> NotRead:
    if e.errno == errno.ELOOP:
        return NotRead(path, "symbolic link loop", skipped=True)
    return NotRead(path, e.strerror or str(e), skipped=False)


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def read_bytes(path: str, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them. Raises :class:`NotRead`."""
    try:
        _check(path, os.stat(path), limit)  # a device or a pipe is not even opened
        fd = os.open(path, _FLAGS)
    except OSError as e:
        raise _os_error(path, e) from None
    try:
        st = os.fstat(fd)
        _check(path, st, limit)  # what was opened, should the path have changed meanwhile
        chunks: list[bytes] = []
        total = 0
        want = min(st.st_size, limit) + 1  # one read for a file that did not grow; EOF by the next
        while total <= limit:
            chunk = os.read(fd, min(want - total if total < want else _CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as e:
        raise _os_error(path, e) from None
    finally:
        os.close(fd)
    if total > limit:
        raise NotRead(path, f"larger than {limit:,} bytes", skipped=True)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_stream(stream: BinaryIO, limit: int = DEFAULT_MAX_BYTES, name: str = "<stdin>") -> bytes:
    """At most ``limit`` bytes of a stream (standard input), read a chunk at a time (one read of
    limit + 1 bytes would set that much memory aside at once). Raises :class:`NotRead`."""
    chunks: list[bytes] = []
    total = 0
    try:
        while total <= limit:
            chunk = stream.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as e:
        raise _os_error(name, e) from None
    if total > limit:
        raise NotRead(name, f"larger than {limit:,} bytes", skipped=True)
    return b"".join(chunks)


def decode(data: bytes, path: str) -> str:
    """UTF-8 text (a leading byte order mark dropped); :class:`NotRead` naming the line of the
    first byte that is not UTF-8 (never the bytes themselves)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise NotRead(path, f"line {line}: not UTF-8 text", skipped=False) from None


def read_text(path: str, limit: int = DEFAULT_MAX_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8 (``-``: standard input). Raises :class:`NotRead`."""
    if path == "-":
        import sys

        return decode(read_stream(sys.stdin.buffer, limit), "<stdin>")
    return decode(read_bytes(path, limit), path)


def is_input(path: str) -> bool:
    """Is ``path`` (through any link) a file the reader has looked at in this process?"""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) in _inputs


def json_value(text: str | bytes | bytearray) -> object:
    """The JSON value of ``text``, for the JSON files and answers podfit reads (a baseline, a usage
    file, a Prometheus answer). ValueError (a ``json.JSONDecodeError`` where the syntax is wrong)
    for text that is not JSON, and for JSON nested deeper than the interpreter's stack takes: a
    hostile file's ``[[[[…`` is an error about the file, never an internal error."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
