"""The podfit server: a process that has imported podfit and its libraries once and forks a
worker for each run that :mod:`podfit.launcher` hands it, so that a run on one small file costs a
fork instead of an interpreter start and 0.2 s of imports (the pre-commit hook's case).

A worker takes over the client's standard input, output and error (passed as descriptors over the
Unix socket, so terminal detection, colour and progress lines behave as in-process), its working
directory, umask and environment, runs :func:`podfit.cli.run_main` and sends the exit status back.
It is a fresh fork of the loaded server for every run: nothing one run computes is seen by the next.

The server
- listens on :func:`podfit.launcher.socket_path`, in a directory only its user can enter, and
  serves only that user (``SO_PEERCRED``);
- declines a run, and exits, once a file of the installed package changed since it started (an
  upgrade or an edited checkout): the client then runs it in-process, and the next ``auto`` run
  starts a current server;
- exits after ``--idle`` without a request (default 15 minutes), and on ``podfit server stop``;
- holds a lock beside the socket for its lifetime, so a second server for the same installation
  exits at once.

A worker ends when its client goes away (the connection's end raises ``SIGIO`` in the worker),
so an interrupted client does not leave a run behind.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from . import launcher

__all__ = ["Request", "decode_request", "fingerprint", "serve", "query", "DEFAULT_IDLE"]

DEFAULT_IDLE = 15 * 60.0
_MAX_REQUEST = 4 * 2**20
_REQUEST_TIMEOUT = 10.0  # a client that connects and sends nothing does not hold the server


@dataclass(frozen=True)
class Request:
    kind: str  # run, status, stop
    package: str = ""
    cwd: str = ""
    prog: str = "podfit"
    umask: int = 0o022
    encodings: tuple[str, str, str] = ("utf-8", "utf-8", "utf-8")
    errors: tuple[str, str, str] = ("strict", "strict", "strict")
    argv: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


def decode_request(data: bytes) -> Request:
    """The request :func:`podfit.launcher.encode_request` wrote (ValueError if it is not one)."""
    parts = [os.fsdecode(p) for p in data.split(b"\0")]
    if not parts or parts[0] != launcher.PROTOCOL.decode():
        raise ValueError("not a podfit request")
    kind = parts[1] if len(parts) > 1 else ""
    if kind != "run":
        return Request(kind=kind)
    if len(parts) < 13:
        raise ValueError("truncated request")
    package, cwd, prog, umask = parts[2], parts[3], parts[4], int(parts[5])
    enc = (parts[6], parts[7], parts[8])
    err = (parts[9], parts[10], parts[11])
    argc = int(parts[12])
    argv = tuple(parts[13 : 13 + argc])
    if len(argv) != argc:
        raise ValueError("truncated request")
    env = tuple((k, v) for k, _, v in (e.partition("=") for e in parts[13 + argc :] if "=" in e))
    return Request("run", package, cwd, prog, umask, enc, err, argv, env)


def fingerprint(directory: str) -> str:
    """Every file of the package (path, size, modification time), policies and data included: any
    change means the server's loaded code may differ from what a fresh process would run."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            try:
                st = os.stat(os.path.join(dirpath, name))
            except OSError:
                continue
            entries.append(f"{dirpath}/{name}\0{st.st_size}\0{st.st_mtime_ns}")
    return "\n".join(entries)


def preload() -> None:
    """Import what a run uses, so that each worker inherits it: the command line, the pipeline, every
    rule module, the formats, the engines and their libraries, and the rule catalogue. No thread is
    started (a process that forks must have none): wasmtime's engine is made in each worker."""
    import importlib

    from . import catalogue, cli, formats, pipeline, rules  # noqa: F401
    from .engines import opa, wasm  # noqa: F401

    for module in ("wasmtime", "jsonschema_rs", "yaml", "podfit.schemas_k8s", "podfit.vsphere"):
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    catalogue.load_catalogue()
    from .rules import schema_invalid

    try:
        schema_invalid.warm()
    except Exception:  # a broken schema fails the run that needs it, as in-process
        pass
    modules = rules.python_rules()
    for rule_id in modules:
        modules[rule_id]
    for name in formats.NAMES:
        try:
            formats.renderer(name)
        except Exception:  # a format whose extra is not installed fails when asked for, as in-process
            pass


def _recv_request(conn: socket.socket) -> tuple[Request, list[int]]:
    """Read one request and the descriptors that came with it."""
    conn.settimeout(_REQUEST_TIMEOUT)
    fds: list[int] = []
    data, ancdata, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * 4))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds.extend(struct.unpack(f"{usable // 4}i", payload[:usable]))
    if len(data) < 4:
        data += launcher.recv_exactly(conn, 4 - len(data))
    size = int.from_bytes(data[:4], "big")
    if size > _MAX_REQUEST:
        raise ValueError("request too large")
    body = data[4:]
    if len(body) < size:
        body += launcher.recv_exactly(conn, size - len(body))
    return decode_request(body[:size]), fds


def _peer_uid(conn: socket.socket) -> int:
    """The connecting process's user (Linux); elsewhere the socket's private directory is the check."""
    if not hasattr(socket, "SO_PEERCRED"):
        return os.getuid()
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _stream(fd: int, mode: str, encoding: str, errors: str) -> Any:
    """A text stream on the client's descriptor, buffered as Python buffers its own (by line on a
    terminal)."""
    raw = io.FileIO(fd, mode, closefd=False)
    tty = os.isatty(fd)
    if mode == "r":
        return io.TextIOWrapper(io.BufferedReader(raw), encoding=encoding, errors=errors)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding=encoding, errors=errors, line_buffering=tty)


def _worker(conn: socket.socket, request: Request, fds: list[int]) -> NoReturn:
    """In the forked worker: become the client's process in all that a run reads, run, answer."""
    code = 2
    try:
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGPIPE else signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        _close([fd for fd in fds if fd > 2])
        os.chdir(request.cwd)
        os.umask(request.umask)
        os.environ.clear()
        os.environ.update(dict(request.env))
        sys.argv = [request.prog, *request.argv]
        sys.stdin = _stream(0, "r", request.encodings[0], request.errors[0])
        sys.stdout = _stream(1, "w", request.encodings[1], request.errors[1])
        sys.stderr = _stream(2, "w", request.encodings[2], request.errors[2])
        conn.settimeout(None)
        conn.sendall(launcher.RUNNING)

        def client_gone(signum: int, frame: Any) -> None:
            os._exit(130)

        signal.signal(signal.SIGIO, client_gone)
        fcntl.fcntl(conn.fileno(), fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(conn.fileno(), fcntl.F_SETFL, fcntl.fcntl(conn.fileno(), fcntl.F_GETFL) | os.O_ASYNC)
        from .cli import run_main

        code = run_main(prog_name=request.prog)
        signal.signal(signal.SIGIO, signal.SIG_IGN)
        conn.sendall(launcher.EXIT + bytes([code & 0xFF]))
    except BaseException as e:  # the client reports "no exit status" and exits 2
        try:
            os.write(2, f"podfit server worker: {type(e).__name__}: {e}\n".encode(errors="replace"))
        except OSError:
            pass
    finally:
        os._exit(code)


def _reap(workers: set[int]) -> None:
    """Collect the workers that have ended."""
    while workers:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            workers.clear()
            return
        if pid == 0:
            return
        workers.discard(pid)


def serve(path: str, idle: float = DEFAULT_IDLE, current: Callable[[], str] | None = None) -> int:
    """Serve runs on the Unix socket ``path`` until ``idle`` seconds pass without a request, a stop
    request comes, or ``current()`` (default: the package's :func:`fingerprint`) changes. Returns
    0, or 1 when another server for ``path`` holds the lock."""
    package = launcher.package_dir()
    if current is None:
        current = lambda: fingerprint(package)  # noqa: E731
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if not launcher.private(directory):
        print(f"podfit server: {directory} is not private to this user; not serving", file=sys.stderr)
        return 1
    lock = open(path + ".lock", "w")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return 1
    started_fp = current()
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    inode = os.stat(path).st_ino
    listener.settimeout(min(1.0, idle))
    import gc

    gc.collect()
    gc.freeze()  # the workers' collections leave the server's objects, and their pages, alone
    started, last, served = time.time(), time.monotonic(), 0
    workers: set[int] = set()
    try:
        while True:
            _reap(workers)
            if not workers and time.monotonic() - last >= idle:
                return 0
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if not os.path.isdir(package):  # uninstalled (a pre-commit environment cleaned up)
                    return 0
                continue
            last = time.monotonic()
            fds: list[int] = []
            try:
                if _peer_uid(conn) != os.getuid():
                    continue
                request, fds = _recv_request(conn)
                if request.kind == "status":
                    _reap(workers)
                    info = {"pid": os.getpid(), "served": served, "workers": len(workers), "started": started}
                    conn.sendall(json.dumps(info).encode())
                    continue
                if request.kind == "stop":
                    conn.sendall(b"stopping")
                    return 0
                if request.kind != "run" or len(fds) != 3:
                    continue
                if request.package != package or current() != started_fp:
                    conn.sendall(launcher.DECLINED)
                    return 0
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    lock.close()
                    _worker(conn, request, fds)
                workers.add(pid)
                served += 1
            except (OSError, ValueError):
                pass
            finally:
                _close(fds)
                conn.close()
    finally:
        listener.close()
        try:
            if os.stat(path).st_ino == inode:
                os.unlink(path)
        except OSError:
            pass
        lock.close()


def query(path: str, kind: str, timeout: float = 10.0) -> bytes | None:
    """Send a ``status`` or ``stop`` request; the server's answer, or None when none listens."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        conn.connect(path)
        body = launcher.PROTOCOL + b"\0" + kind.encode()
        conn.sendall(len(body).to_bytes(4, "big") + body)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m podfit.server [--idle SECONDS] [SOCKET]``: what ``podfit server
    start`` and the launcher's ``auto`` mode run."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m podfit.server")
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE)
    parser.add_argument("socket", nargs="?")
    args = parser.parse_args(argv)
    path = args.socket or launcher.socket_path()
    preload()
    os.chdir("/")  # hold no directory of the caller's
    return serve(path, args.idle)


if __name__ == "__main__":
    sys.exit(main())
