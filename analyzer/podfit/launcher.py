"""The ``podfit`` command's entry point. When a podfit server runs for this installation
(:mod:`podfit.server`), the run is handed to it: this process passes its argument list, working
directory, environment and its standard input, output and error (the descriptors themselves), the
server forks a worker that has every module loaded already, and this process waits for the exit
status. Otherwise the run happens here (:func:`podfit.cli.run`).

Which one is chosen by ``PODFIT_SERVER`` and ``--server`` on the command line (which wins, but
for ``PODFIT_SERVER=off``, which always runs in-process): ``on`` (the default) uses a running
server, ``off`` never does, ``auto`` also starts one when none runs (not under CI), so that the
next run finds it; the pre-commit hook runs with ``auto``.

This module is the whole cost of a run the server answers, so it imports nothing beyond what
the interpreter has loaded at start-up (``_socket`` is a built-in extension; ``socket`` would
bring ``enum`` and ``selectors``)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing would cost this module more than all its work
if TYPE_CHECKING:
    from collections.abc import Mapping

PROTOCOL = b"PODFIT1"
MODES = ("on", "off", "auto")
# the server's answers: it is running the request (exit status follows), or it will not (it is
# stale or busy stopping): then this process runs it itself, nothing having been printed
RUNNING, DECLINED, EXIT = b"R", b"S", b"X"


def package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def socket_dir(environ: Mapping[str, str] | None = None) -> str:
    """A directory only this user can enter: ``$PODFIT_SERVER_DIR``, else ``$XDG_RUNTIME_DIR/podfit``,
    else ``/tmp/podfit-UID`` (``environ``: this process's environment unless given)."""
    env = os.environ if environ is None else environ
    explicit = env.get("PODFIT_SERVER_DIR")
    if explicit:
        return explicit
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "podfit")
    return os.path.join("/tmp", f"podfit-{os.getuid()}")


def socket_path(environ: Mapping[str, str] | None = None) -> str:
    """One server per installation: the name is keyed by the interpreter and the package's place
    (a pre-commit environment and a project's virtualenv each have their own)."""
    import zlib  # built into the interpreter

    key = zlib.crc32(f"{sys.executable}\0{package_dir()}".encode("utf-8", "surrogateescape"))
    return os.path.join(socket_dir(environ), f"server-{key:08x}.sock")


def private(directory: str) -> bool:
    """Is ``directory`` this user's own and closed to everyone else? A socket elsewhere is not used."""
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o077


def mode_of(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> str:
    """The server mode: ``off`` when ``PODFIT_SERVER=off`` (a user's opt-out holds even against the
    pre-commit hook's ``--server auto``) or for the ``server`` command itself; else ``--server
    MODE`` / ``--server=MODE`` before a ``--``, else ``PODFIT_SERVER``, else ``on``. An unknown
    value is left to the command line's own check (and means ``off`` here)."""
    mode = environ.get("PODFIT_SERVER", "on").strip().lower() or "on"
    if argv[:1] == ["server"] or mode == "off":
        return "off"
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--server" and i + 1 < len(argv):
            mode = argv[i + 1]
        elif arg.startswith("--server="):
            mode = arg.partition("=")[2]
    return mode if mode in MODES else "off"


def program_name() -> str:
    """The name the help and usage lines show, as click works it out for this process:
    ``python -m podfit`` when run as a module, else the script's name."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if not getattr(main, "__package__", None) or spec is None:
        return os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "podfit")
    name = spec.name
    return f"python -m {name[: -len('.__main__')] if name.endswith('.__main__') else name}"


def encode_request(argv: list[str], cwd: str, environ: dict[str, str] | os._Environ[str]) -> bytes:
    """The request: NUL-separated fields after the protocol tag, the byte lengths of the lists first."""
    streams = (sys.stdin, sys.stdout, sys.stderr)
    enc = [getattr(stream, "encoding", None) or "utf-8" for stream in streams]
    errors = [getattr(stream, "errors", None) or "strict" for stream in streams]
    umask = os.umask(0)
    os.umask(umask)
    env = [f"{k}={v}" for k, v in environ.items()]
    fields = ["run", package_dir(), cwd, program_name(), str(umask), *enc, *errors, str(len(argv)), *argv, *env]
    body = b"\0".join(os.fsencode(f) for f in fields)
    return PROTOCOL + b"\0" + body


def recv_exactly(sock: object, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))  # type: ignore[attr-defined]
        if not chunk:
            break
        data += chunk
    return data


def via_server(argv: list[str]) -> int | None:
    """Hand the run to the server; its exit status, or None when no server took it (nothing has
    been printed then, and the caller runs it itself)."""
    if os.name != "posix":  # the server needs fork and Unix sockets
        return None
    import _socket

    path = socket_path()
    if not private(os.path.dirname(path)) or not os.path.exists(path):
        return None
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory is gone: the server could not enter it either
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
            request = encode_request(argv, cwd, os.environ)
            header = len(request).to_bytes(4, "big")
            fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))
            sent = sock.sendmsg([header + request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
            if sent < len(header) + len(request):
                sock.sendall((header + request)[sent:])
            answer = recv_exactly(sock, 1)
        except OSError:  # no server listens there (a stale socket file), or a descriptor is closed
            return None
        if answer != RUNNING:
            return None
        try:
            status = recv_exactly(sock, 2)
        except OSError:
            status = b""
        if len(status) == 2 and status[:1] == EXIT:
            return status[1]
        os.write(2, b"podfit: the server's worker ended without an exit status (PODFIT_SERVER=off runs in-process)\n")
        return 2
    except KeyboardInterrupt:
        # as click ends an interrupted run in-process; closing the connection ends the worker
        os.write(2, b"\nAborted!\n")
        return 1
    finally:
        sock.close()


def starts_server(mode: str, environ: dict[str, str] | os._Environ[str]) -> bool:
    """Does a run that found no server start one? In ``auto`` mode, except under CI (``CI`` set and
    not false), where a background process would outlive the job's step."""
    ci = environ.get("CI", "").strip().lower()
    return mode == "auto" and ci in ("", "0", "false", "no") and os.name == "posix"


def start_server_detached() -> None:
    """Start a server in the background for the next run (its own session, no terminal); this run
    goes on in-process meanwhile."""
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "podfit.server"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def main() -> None:
    argv = sys.argv[1:]
    mode = mode_of(argv, os.environ)
    if mode != "off":
        code = via_server(argv)
        if code is not None:
            os._exit(code)
        if starts_server(mode, os.environ):
            start_server_detached()
    from .cli import run

    run()
