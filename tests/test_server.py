"""The podfit server (podfit.server, podfit.launcher): a run handed to it prints the same bytes on
the same streams and exits with the same status as the run in-process; the server counts what it
answered, declines (and exits) once the package changed, ends when idle, serves nobody through a
directory others can enter, and a worker ends with its interrupted client."""

from __future__ import annotations

import array
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from podfit import launcher, server
from samples import NO_REQUESTS, WELL_SIZED

ROOT = Path(__file__).resolve().parents[1]
GUARD = 120  # hang guard (s): every wait below ends long before on any machine


@pytest.fixture
def socket_dir():
    # short: a Unix socket's path is limited to 107 bytes
    d = tempfile.mkdtemp(prefix="pfs-", dir="/tmp")
    yield os.path.join(d, "s")
    shutil.rmtree(d, ignore_errors=True)


def base_env(socket_dir: str, **extra: str) -> dict[str, str]:
    env = {
        "PYTHONPATH": str(ROOT / "analyzer"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "NO_COLOR": "1",
        "PODFIT_SERVER_DIR": socket_dir,
    }
    env.update(extra)
    return env


def podfit(args, env, input=None, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "podfit", *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=GUARD,
    )


def status(env) -> dict | None:
    answer = server.query(podfit_socket(env), "status")
    return json.loads(answer) if answer else None


def podfit_socket(env) -> str:
    """The socket the podfit of ``env`` uses (the same interpreter and package as this process's;
    the ``running`` fixture holds it equal to what ``podfit server start`` names)."""
    return launcher.socket_path(env)


def wait_for(predicate, what: str):
    deadline = time.monotonic() + GUARD
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"hang guard: {what}")


@pytest.fixture
def running(socket_dir):
    env = base_env(socket_dir, PODFIT_SERVER="on")
    p = podfit(["server", "start", "--idle", "10m"], env)
    assert p.returncode == 0, p.stderr
    assert "podfit server running (pid" in p.stdout and f" on {podfit_socket(env)};" in p.stdout
    shown = podfit(["server", "status"], env)
    assert shown.returncode == 0 and f"pid {status(env)['pid']}," in shown.stdout
    yield env
    podfit(["server", "stop"], env)
    wait_for(lambda: not os.path.exists(podfit_socket(env)), "the server removes its socket when stopped")
    assert podfit(["server", "status"], env).returncode == 1


def test_runs_through_the_server_match_in_process_runs(running, tmp_path):
    (tmp_path / "bad.yaml").write_text(NO_REQUESTS)
    (tmp_path / "good.yaml").write_text(WELL_SIZED)
    off = dict(running, PODFIT_SERVER="off")
    cases = [
        (["check", "bad.yaml"], None),  # findings: exit 1, a path relative to the client's directory
        (["check", "good.yaml", "--format", "json"], None),
        (["check", "-", "--format", "sarif"], NO_REQUESTS),  # the client's stdin
        (["check", "missing.yaml"], None),  # exit 2, on stderr
        (["check", "bad.yaml", "--fail-on", "nonsense"], None),  # a usage error from click
        (["--version"], None),
    ]
    before = status(running)["served"]
    for args, stdin in cases:
        served = podfit(args, running, input=stdin, cwd=tmp_path)
        local = podfit(args, off, input=stdin, cwd=tmp_path)
        assert (served.returncode, served.stdout, served.stderr) == (local.returncode, local.stdout, local.stderr), args
    assert [podfit(a, off, input=i, cwd=tmp_path).returncode for a, i in cases] == [1, 0, 1, 2, 2, 0]
    assert status(running)["served"] == before + len(cases)


def test_off_and_the_server_command_itself_run_in_process(running, tmp_path):
    (tmp_path / "good.yaml").write_text(WELL_SIZED)
    before = status(running)["served"]
    assert podfit(["check", "good.yaml"], dict(running, PODFIT_SERVER="off"), cwd=tmp_path).returncode == 0
    assert podfit(["check", "good.yaml", "--server", "off"], running, cwd=tmp_path).returncode == 0
    assert status(running)["served"] == before


def test_a_directory_others_can_enter_is_not_used(running, tmp_path):
    (tmp_path / "good.yaml").write_text(WELL_SIZED)
    directory = os.path.dirname(podfit_socket(running))
    before = status(running)["served"]
    os.chmod(directory, 0o755)
    try:
        assert podfit(["check", "good.yaml"], running, cwd=tmp_path).returncode == 0
        assert not launcher.private(directory)
    finally:
        os.chmod(directory, 0o700)
    assert status(running)["served"] == before


def test_terminal_output_through_the_server_is_coloured_like_in_process(running, tmp_path):
    (tmp_path / "bad.yaml").write_text(NO_REQUESTS)

    def on_a_terminal(mode: str) -> bytes:
        env = dict(running, PODFIT_SERVER=mode, TERM="xterm")
        env.pop("NO_COLOR")
        pid, fd = pty.fork()
        if pid == 0:  # the child: stdout and stderr are the terminal
            os.chdir(tmp_path)
            os.execve(sys.executable, [sys.executable, "-m", "podfit", "check", "bad.yaml"], env)
        out = b""
        deadline = time.monotonic() + GUARD
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the terminal's other end closed: the child is done
                    break
                if not chunk:
                    break
                out += chunk
        os.waitpid(pid, 0)
        os.close(fd)
        return out

    before = status(running)["served"]
    local, served = on_a_terminal("off"), on_a_terminal("on")
    assert b"\x1b[" in local and b"PF101" in local
    assert served == local
    assert status(running)["served"] == before + 1


def test_an_interrupted_client_ends_its_worker(running, tmp_path):
    # the worker waits on the client's stdin, which the test holds open
    client = subprocess.Popen(
        [sys.executable, "-m", "podfit", "check", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=running,
        cwd=tmp_path,
    )
    try:
        wait_for(lambda: (status(running) or {}).get("workers") == 1, "the worker starts")
        client.send_signal(signal.SIGINT)
        assert client.wait(timeout=GUARD) == 1  # as click ends an interrupted run
        assert client.stderr.read().endswith(b"Aborted!\n")
        wait_for(lambda: status(running)["workers"] == 0, "the worker ends with its client")
    finally:
        client.kill()
        client.wait()


def test_a_changed_package_is_declined_and_the_server_exits(socket_dir, tmp_path):
    flag = tmp_path / "version"
    flag.write_text("1")
    path = os.path.join(socket_dir, "t.sock")
    code = f"import sys; from podfit import server; sys.exit(server.serve({path!r}, 600, lambda: open({str(flag)!r}).read()))"
    env = base_env(socket_dir)
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        wait_for(lambda: server.query(path, "status") is not None, "the server listens")
        (tmp_path / "good.yaml").write_text(WELL_SIZED)
        request = launcher.encode_request(["check", "good.yaml"], str(tmp_path), env)
        assert _send(path, request) == launcher.RUNNING
        flag.write_text("2")
        assert _send(path, request) == launcher.DECLINED
        assert proc.wait(timeout=GUARD) == 0
        assert not os.path.exists(path)
    finally:
        proc.kill()
        proc.wait()


def _send(path: str, request: bytes) -> bytes:
    """Send a run request with /dev/null as the three streams; the server's first answer byte."""
    import socket

    null = os.open(os.devnull, os.O_RDWR)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(GUARD)
    try:
        conn.connect(path)
        conn.sendmsg(
            [len(request).to_bytes(4, "big") + request],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * 3).tobytes())],
        )
        first = conn.recv(1)
        if first == launcher.RUNNING:
            assert conn.recv(2)[:1] == launcher.EXIT
        return first
    finally:
        conn.close()
        os.close(null)


def test_an_idle_server_exits_and_a_second_one_yields_to_the_first(socket_dir):
    env = base_env(socket_dir)
    path = os.path.join(socket_dir, "idle.sock")
    first = subprocess.Popen([sys.executable, "-m", "podfit.server", "--idle", "600", path], env=env)
    try:
        wait_for(lambda: server.query(path, "status") is not None, "the first server listens")
        second = subprocess.run([sys.executable, "-m", "podfit.server", "--idle", "600", path], env=env, timeout=GUARD)
        assert second.returncode == 1  # the lock is held
        assert server.query(path, "status") is not None
    finally:
        first.kill()
        first.wait()
    short = subprocess.Popen([sys.executable, "-m", "podfit.server", "--idle", "0.2", path], env=env)
    assert short.wait(timeout=GUARD) == 0
    assert not os.path.exists(path)


def test_requests_round_trip_through_their_encoding():
    env = {"A": "x=y", "EMPTY": "", "UNI": "grüße"}
    argv = ["check", "a file.yaml", "--rule", "PF101", "", "ü"]
    decoded = server.decode_request(launcher.encode_request(argv, "/some where", env))
    assert decoded.kind == "run"
    assert decoded.argv == tuple(argv)
    assert dict(decoded.env) == env
    assert decoded.cwd == "/some where"
    assert decoded.package == launcher.package_dir()
    with pytest.raises(ValueError):
        server.decode_request(b"HTTP/1.1 GET /")


@pytest.mark.parametrize(
    ("argv", "env", "mode"),
    [
        (["check", "x"], {}, "on"),
        (["check", "x"], {"PODFIT_SERVER": "off"}, "off"),
        (["check", "x", "--server", "auto"], {"PODFIT_SERVER": "off"}, "off"),  # the user's opt-out holds
        (["check", "x", "--server", "auto"], {"PODFIT_SERVER": "on"}, "auto"),
        (["check", "--server=off", "x"], {}, "off"),
        (["check", "--", "--server", "auto"], {}, "on"),  # after --, a file name
        (["server", "status"], {"PODFIT_SERVER": "on"}, "off"),
        (["check", "x"], {"PODFIT_SERVER": "sometimes"}, "off"),
    ],
)
def test_the_mode_comes_from_the_command_line_then_the_environment(argv, env, mode):
    assert launcher.mode_of(argv, env) == mode


@pytest.mark.parametrize(
    ("mode", "env", "starts"),
    [("auto", {}, True), ("auto", {"CI": "true"}, False), ("auto", {"CI": "false"}, True), ("on", {}, False)],
)
def test_only_auto_outside_ci_starts_a_server(mode, env, starts):
    assert launcher.starts_server(mode, env) is starts


def test_auto_starts_a_server_for_the_next_run(socket_dir, tmp_path):
    (tmp_path / "good.yaml").write_text(WELL_SIZED)
    env = base_env(socket_dir)
    first = podfit(["check", "good.yaml", "--server", "auto"], env, cwd=tmp_path)
    assert first.returncode == 0 and "no findings" in first.stdout
    try:
        wait_for(lambda: server.query(podfit_socket(env), "status") is not None, "auto starts a server")
        second = podfit(["check", "good.yaml", "--server", "auto"], env, cwd=tmp_path)
        assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
        assert json.loads(server.query(podfit_socket(env), "status"))["served"] == 1
    finally:
        podfit(["server", "stop"], env)
