"""What a process forked by a podfit run does first: end when the process that forked it ends, and
leave Ctrl-C to that process (which reports the interruption once; a child's KeyboardInterrupt
would print a traceback of its own on the shared terminal). Used by the parse workers
(``loader``) and the embedded engine's children (``engines.wasm``)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

__all__ = ["become_child"]


def become_child(parent: int, orphaned: int = 2) -> None:
    """In a forked child: SIGINT ignored (a terminal's Ctrl-C reaches the whole process group; the
    parent handles it), and on Linux the kernel kills the child when ``parent`` ends
    (PR_SET_PDEATHSIG), so a parent killed or interrupted leaves nothing running. ``parent``: the
    forking process's id, taken before the fork; a child whose parent is already gone exits with
    ``orphaned``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # gone before the request was made
        os._exit(orphaned)
