"""Bounded everywhere, outputs never replace inputs, errors never echo a foreign file.

Every file podfit reads goes through podfit.reading: regular files only, to the size limit. A
pipe, a socket, a device or a directory that cannot be listed among the inputs is PF907 naming
it; as the config's platform, a --usage file or a snapshot to import it is an exit-2 error. Node
and host counts are bounded to what a cluster can have. -o never names an input; standard output
closed or full is exit 2 with one line."""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podfit.reading import NotRead, is_input, read_bytes, read_stream
from samples import LIMITS_ONLY as GOOD

ROOT = Path(__file__).resolve().parents[1]
TKC = ROOT / "testdata" / "examples" / "tkg-cluster.yaml"
PLATFORM = ROOT / "testdata" / "platforms" / "study-4-hosts.yaml"
SECRET = "hunter2-s3cr3t"
# prints, last on standard error, the peak resident memory (KiB) of the command it runs
_PEAK = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)"
)


def _env() -> dict[str, str]:
    return {
        "PYTHONPATH": str(ROOT / "analyzer"),
        "PATH": "/usr/bin:/bin",
        "NO_COLOR": "1",
        "HOME": os.environ.get("HOME", "/tmp"),
        "PODFIT_SERVER": "off",
    }


def _run(args, cwd=ROOT, unprivileged=False, measured=False, timeout=120, **kw) -> subprocess.CompletedProcess:
    prefix = ["unshare", "--user"] if unprivileged else []
    if measured:
        prefix = [*prefix, sys.executable, "-c", _PEAK]
    return subprocess.run(
        [*prefix, sys.executable, "-m", "podfit", *map(str, args)],
        capture_output="stdout" not in kw,
        text=True,
        timeout=timeout,  # a FIFO that blocked the run would end the test here
        env=_env(),
        cwd=cwd,
        **kw,
    )


def _socket(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


# ------------------------------------------------------------------------------- the reader ---


def test_reader_takes_regular_files_to_the_limit(tmp_path):
    f = tmp_path / "a.yaml"
    f.write_bytes(b"x" * 100)
    assert read_bytes(str(f), 100) == b"x" * 100
    with pytest.raises(NotRead) as e:
        read_bytes(str(f), 99)
    assert e.value.skipped and e.value.reason == "larger than 99 bytes (100)"
    assert read_bytes(str(f), 2**30) == b"x" * 100  # a limit far above the size reads the file once


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda p: os.mkfifo(p), "a named pipe (FIFO), not a regular file"),
        (lambda p: p.symlink_to("/dev/zero"), "a character device, not a regular file"),
        (lambda p: p.mkdir(), "a directory, not a regular file"),
    ],
)
def test_reader_refuses_what_is_no_regular_file_without_waiting(tmp_path, make, reason):
    p = tmp_path / "x.yaml"
    make(p)
    with pytest.raises(NotRead) as e:
        read_bytes(str(p))  # a FIFO with no writer: refused, not waited on
    assert e.value.skipped and e.value.reason == reason


def test_a_pipe_put_in_place_after_the_look_is_refused_without_blocking(tmp_path, monkeypatch):
    """What the path named when it was looked at may be gone when it is opened: the open does not
    wait for a writer (O_NONBLOCK) and the descriptor is checked again (fstat)."""
    import podfit.reading

    regular = tmp_path / "regular.yaml"
    regular.write_text("a: 1\n")
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    real_stat = os.stat
    monkeypatch.setattr(podfit.reading.os, "stat", lambda p, *a, **k: real_stat(regular if p == str(pipe) else p))

    def blocked(*_: object) -> None:
        raise AssertionError("opening the pipe waited for a writer")

    signal.signal(signal.SIGALRM, blocked)
    signal.alarm(10)
    try:
        with pytest.raises(NotRead) as e:
            read_bytes(str(pipe))
    finally:
        signal.alarm(0)
    assert e.value.reason == "a named pipe (FIFO), not a regular file"


def test_reader_refuses_a_socket(tmp_path):
    p = tmp_path / "s.yaml"
    with _socket(p):
        with pytest.raises(NotRead) as e:
            read_bytes(str(p))
    assert e.value.reason == "a socket, not a regular file"


def test_reader_bounds_a_stream():
    import io

    assert read_stream(io.BytesIO(b"abc"), 3) == b"abc"
    with pytest.raises(NotRead) as e:
        read_stream(io.BytesIO(b"abcd"), 3)
    assert e.value.reason == "larger than 3 bytes"


def test_files_read_are_known_through_any_link(tmp_path):
    f = tmp_path / "in.yaml"
    f.write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(f)
    os.link(f, tmp_path / "hard.yaml")
    assert not is_input(str(tmp_path / "link.yaml"))
    read_bytes(str(f))
    assert is_input(str(tmp_path / "link.yaml")) and is_input(str(tmp_path / "hard.yaml"))
    assert not is_input(str(tmp_path / "other.yaml"))


# ------------------------------------------------------------- inputs that are no regular file ---


def _tree(tmp_path: Path) -> Path:
    d = tmp_path / "tree"
    d.mkdir()
    (d / "good.yaml").write_text(GOOD)
    os.mkfifo(d / "pipe.yaml")
    (d / "zero.yaml").symlink_to("/dev/zero")
    return d


def test_pipes_sockets_and_devices_among_the_inputs_are_pf907_and_the_rest_is_checked(tmp_path):
    d = _tree(tmp_path)
    with _socket(d / "sock.yaml"):
        p = _run(["check", d, "--engine", "embedded", "--format", "json"])
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    pf907 = {Path(f["file"]).name: f["message"] for f in report["findings"] if f["rule"] == "PF907"}
    assert pf907 == {
        "pipe.yaml": "not checked: a named pipe (FIFO), not a regular file",
        "sock.yaml": "not checked: a socket, not a regular file",
        "zero.yaml": "not checked: a character device, not a regular file",
    }
    assert any(f["rule"] == "PF101" and f["file"].endswith("good.yaml") for f in report["findings"])


def test_a_named_pipe_given_by_name_is_pf907_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "p.yaml")
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["check", tmp_path / "p.yaml", tmp_path / "good.yaml", "--engine", "embedded"], timeout=60)
    assert p.returncode == 1, p.stderr
    assert "PF907  not checked: a named pipe (FIFO), not a regular file" in p.stdout


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_a_directory_that_cannot_be_listed_is_pf907_naming_it(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("run as root: root lists every directory, so the mode-000 case runs in a user namespace")
    d = tmp_path / "tree"
    (d / "locked").mkdir(parents=True)
    (d / "good.yaml").write_text(GOOD)
    (d / "locked" / "hidden.yaml").write_text(GOOD)
    (d / "locked").chmod(0)
    for p in (tmp_path, d):
        p.chmod(0o755)
    (d / "good.yaml").chmod(0o644)
    try:
        p = _run(["check", d, "--engine", "embedded", "--format", "json"], unprivileged=True)
        # a file named inside it: there, but not to be looked at (not "no such file")
        named = _run(["check", d / "locked" / "hidden.yaml", d / "good.yaml", "--format", "json"], unprivileged=True)
    finally:
        (d / "locked").chmod(0o755)
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    files = {Path(f["path"]).name: (f["status"], f["reason"]) for f in report["files"]}
    assert files["locked"] == ("failed", "a directory that cannot be listed: Permission denied")
    assert named.returncode == 1, named.stderr
    hidden = [f for f in json.loads(named.stdout)["files"] if f["path"].endswith("hidden.yaml")]
    assert [(f["status"], f["reason"]) for f in hidden] == [("failed", "Permission denied")]
    assert any(
        f["rule"] == "PF907" and f["file"].endswith("locked") and "cannot be listed" in f["message"]
        for f in report["findings"]
    )
    assert any(f["rule"] == "PF101" and f["file"].endswith("good.yaml") for f in report["findings"])


@pytest.mark.parametrize("target", ["/dev/zero", "pipe"])
def test_a_config_platform_that_is_no_regular_file_is_exit_2_at_once(tmp_path, target):
    if target == "pipe":
        os.mkfifo(tmp_path / "pipe")
    (tmp_path / ".podfit.yaml").write_text(f"platform: {target}\n")
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["check", "good.yaml"], cwd=tmp_path, measured=True, timeout=60)
    peak = int(p.stderr.rstrip("\n").rpartition("\n")[2])
    assert peak < 512 * 1024  # KiB: /dev/zero read whole grew until memory ran out
    assert p.returncode == 2
    kind = "a character device" if target == "/dev/zero" else "a named pipe (FIFO)"
    shown = target if target.startswith("/") else f"./{target}"  # beside the config, found in "."
    assert f"podfit: error: platform {shown}: {kind}, not a regular file" in p.stderr


def test_a_config_that_is_a_pipe_is_exit_2(tmp_path):
    os.mkfifo(tmp_path / ".podfit.yaml")
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["check", "good.yaml"], cwd=tmp_path, timeout=60)
    assert p.returncode == 2 and "config ./.podfit.yaml: a named pipe (FIFO), not a regular file" in p.stderr


def test_usage_files_and_snapshots_that_are_no_regular_file_are_exit_2(tmp_path):
    os.mkfifo(tmp_path / "cpu.json")
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["check", "good.yaml", "--usage", "cpu.json"], cwd=tmp_path, timeout=60)
    assert p.returncode == 2 and "usage cpu.json: a named pipe (FIFO), not a regular file" in p.stderr
    p = _run(["platform", "import", "/dev/zero"], timeout=60)
    assert p.returncode == 2 and "nodes /dev/zero: a character device, not a regular file" in p.stderr


def test_files_over_the_limit_are_refused_everywhere(tmp_path):
    (tmp_path / ".podfit.yaml").write_text("limits: {max-file-bytes: 1000}\nplatform: big-platform.yaml\n")
    (tmp_path / "big-platform.yaml").write_text(PLATFORM.read_text() + "#" * 1000 + "\n")
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["check", "good.yaml"], cwd=tmp_path)
    assert p.returncode == 2 and "platform ./big-platform.yaml: larger than 1,000 bytes" in p.stderr


# ----------------------------------------------------------------- outputs never replace inputs ---


@pytest.mark.parametrize(
    "command",
    [
        ["check", "{input}"],
        ["pack", "{input}", "--platform", str(PLATFORM)],
        ["vsphere", "crx", "{input}", "--platform", str(PLATFORM)],
    ],
)
@pytest.mark.parametrize("how", ["same", "symlink", "in-directory"])
def test_an_output_that_names_an_input_is_exit_2_and_the_input_is_left_alone(tmp_path, command, how):
    d = tmp_path / "k8s"
    d.mkdir()
    manifest = d / "app.yaml"
    manifest.write_text(GOOD)
    (tmp_path / "link.yaml").symlink_to(manifest)
    given = d if how == "in-directory" else manifest
    output = tmp_path / "link.yaml" if how == "symlink" else manifest
    p = _run([a.replace("{input}", str(given)) for a in command] + ["-o", output])
    assert p.returncode == 2, p.stderr
    assert f"--output {output} is one of the inputs" in p.stderr
    assert manifest.read_text() == GOOD


def test_platform_import_never_writes_over_its_snapshot(tmp_path):
    nodes = tmp_path / "nodes.yaml"
    shutil.copy(ROOT / "testdata" / "platform-import" / "eks" / "nodes.yaml", nodes)
    before = nodes.read_bytes()
    p = _run(["platform", "import", nodes, "-o", nodes])
    assert p.returncode == 2 and "is one of the inputs" in p.stderr
    assert nodes.read_bytes() == before
    p = _run(["platform", "import", nodes, "-o", tmp_path / "platform.yaml"])
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("args", [["check", "good.yaml"], ["check", "good.yaml", "--format", "json"], ["rules"]])
def test_standard_output_closed_is_exit_2_with_one_line(tmp_path, args):
    (tmp_path / "good.yaml").write_text(GOOD)
    cmd = " ".join([sys.executable, "-m", "podfit", *args])
    p = subprocess.run(["bash", "-c", f"exec {cmd} >&-"], capture_output=True, text=True, env=_env(), cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == "podfit: error: cannot write to standard output: it is closed\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["check", "good.yaml"], ["rules"], ["--help"]])
def test_standard_output_full_is_exit_2_with_one_line(tmp_path, args):
    (tmp_path / "good.yaml").write_text(GOOD)
    with open("/dev/full", "w") as full:
        p = _run(args, cwd=tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert p.returncode == 2
    assert p.stderr == "podfit: error: cannot write to standard output: No space left on device\n"


_READ = {"x86_64": 0, "aarch64": 63}.get(platform.machine())  # read(2)'s number in /proc/PID/syscall


@pytest.mark.skipif(
    _READ is None or not os.path.exists(f"/proc/{os.getpid()}/syscall"), reason="needs /proc/PID/syscall"
)
@pytest.mark.parametrize(
    ("args", "group"),
    [(["check", "-"], False), (["pack", "-"], False), (["vsphere", "crx", "-"], False), (["check", "-"], True)],
)
def test_interrupted_is_exit_130_not_findings(args, group):
    """Ctrl-C while podfit waits for its input ends the run with 130 (what a shell reports for
    SIGINT), not click's 1, which reads as findings; no traceback. The signal is sent once the
    process is blocked reading standard input (read(0, ...) in /proc/PID/syscall); with ``group``
    to its whole process group, as a terminal sends it, so the engine's child started early gets
    it too and must leave it to podfit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "podfit", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        # as at a terminal: a test run started in the background inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        start_new_session=group,
    )
    try:
        for _ in range(6000):  # a guard against a hang, not a timing: the loop ends at the read
            assert proc.poll() is None, proc.communicate()
            try:
                with open(f"/proc/{proc.pid}/syscall") as f:
                    if f.read().startswith(f"{_READ} 0x0 "):
                        break
            except PermissionError:  # another process's system call is not ours to read here
                pytest.skip("cannot read /proc/PID/syscall of a child here")
            except OSError:  # read while the process changes: look again
                pass
            time.sleep(0.01)
        else:
            pytest.fail("podfit never read its standard input")
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert err == "\npodfit: error: interrupted\n"
    assert out == ""


def test_interrupted_while_reading_the_arguments_or_putting_away_is_130(monkeypatch, capsys):
    """Ctrl-C before a command runs (its arguments read, the help written) is 130 too, and so is one
    after it, while the engine and the caches are put away (there ``run`` catches it: no traceback)."""
    import click

    from podfit import cli

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(click.Group, "make_context", interrupted)
    monkeypatch.setattr(sys, "argv", ["podfit", "rules"])
    assert cli.run_main() == 130
    assert capsys.readouterr().err == "\npodfit: error: interrupted\n"
    script = (
        "import sys; from podfit import cli, codecache\n"
        "def save(): raise KeyboardInterrupt\n"
        "codecache.save = save; sys.argv = ['podfit', 'rules']; cli.run()\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 130
    assert p.stderr == "\npodfit: error: interrupted\n"


def test_forked_children_leave_ctrl_c_to_podfit_and_end_with_it():
    """become_child (the parse workers' and the engine children's first step): SIGINT ignored, and the
    kernel's parent-death signal set to SIGKILL; a child whose parent is already gone exits at once."""
    from podfit.children import become_child

    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status, never return into pytest
        try:
            become_child(parent)
            import ctypes

            sig = ctypes.c_int()
            ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
            ok = signal.getsignal(signal.SIGINT) is signal.SIG_IGN and sig.value == signal.SIGKILL
            os._exit(0 if ok else 1)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    pid = os.fork()
    if pid == 0:
        try:
            become_child(parent + 999_999, orphaned=7)  # not this child's parent: "gone"
            os._exit(0)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7


# ------------------------------------------------------------------ no foreign content in errors ---


def test_a_file_that_is_no_profile_is_named_never_printed(tmp_path):
    passwd = tmp_path / "passwd"
    passwd.write_text(f"root:x:0:0:{SECRET}:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/false\n")
    shadow = tmp_path / "shadow"
    shadow.write_text(f"root:{SECRET}:20228:0:99999:7:::\nbin:*:20228:0:99999:7:::\n")
    mapping = tmp_path / "secrets.yaml"
    mapping.write_text(f"user: admin\npassword: {SECRET}\n")
    for f in (passwd, shadow, mapping):
        p = _run(["check", "-", "--platform", f], input=GOOD)
        assert p.returncode == 2, p.stderr
        assert SECRET not in p.stderr + p.stdout
        assert f"{f}:1: " in p.stderr and "kind: Platform" in p.stderr


def test_a_profile_error_says_what_was_expected_not_the_value(tmp_path):
    profile = tmp_path / "platform.yaml"
    profile.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n"
        f"  runtime: {SECRET}\n"
        f"  hosts: [{{count: {SECRET}, sockets: 1, coresPerSocket: 1, baseMHz: 1, memory: 1Gi}}]\n"
        f"  '{SECRET} x': 1\n"
        f"  nodePools: [{{vmClass: best-effort-small, count: 1, allocatable: {{cpu: {SECRET}}}}}]\n"
    )
    p = _run(["check", "-", "--platform", profile], input=GOOD)
    assert p.returncode == 2
    assert SECRET not in p.stderr
    assert f"{profile}:4: spec/runtime: expected one of 'tkg', 'vsphere-pods', 'bare-metal', 'kubernetes'" in p.stderr
    assert f"{profile}:5: spec/hosts/0/count: expected an integer" in p.stderr
    assert f"{profile}:6: spec: unknown key (valid keys: " in p.stderr


def test_config_and_usage_errors_never_print_the_files_values(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"password: {SECRET}\nfail-on: {SECRET}\n")
    p = _run(["check", "good.yaml", "--config", cfg], cwd=tmp_path)
    assert p.returncode == 2 and SECRET not in p.stderr and f"{cfg}:1: (top level): unknown key 'password'" in p.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"fail-on: [{SECRET}\n")  # YAML that breaks: the problem, not the line
    p = _run(["check", "good.yaml", "--config", bad], cwd=tmp_path)
    assert p.returncode == 2 and SECRET not in p.stderr and f"{bad}:" in p.stderr
    usage = tmp_path / "cpu.json"
    usage.write_text(json.dumps({"status": SECRET, "error": SECRET}))
    p = _run(["check", "good.yaml", "--usage", usage], cwd=tmp_path)
    assert p.returncode == 2 and SECRET not in p.stderr and "the query failed (status is not success)" in p.stderr


# ------------------------------------------------------------------------------ bounded counts ---


def _profile(tmp_path: Path, hosts: list[int], pools: list[int]) -> Path:
    host = "{{count: {}, sockets: 2, coresPerSocket: 16, threadsPerCore: 2, baseMHz: 2300, memory: 512Gi}}"
    text = "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  hosts:\n"
    text += "".join(f"  - {host.format(n)}\n" for n in hosts)
    text += "  nodePools:\n" + "".join(f"  - {{vmClass: best-effort-xlarge, count: {n}}}\n" for n in pools)
    p = tmp_path / "platform.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "hosts, pools, message",
    [
        ([97], [4], ":5: spec/hosts/0/count: expected at most 96"),
        ([50, 47], [4], ":4: spec.hosts: 97 hosts in all: expected at most 96, vSphere's hosts per cluster"),
        ([4], [1_000_000_000], ":7: spec/nodePools/0/count: expected at most 5000"),
        ([4], [3000, 2001], ":6: spec.nodePools: 5,001 nodes in the pools without a cluster: expected at most 5,000"),
    ],
)
def test_counts_beyond_what_exists_are_exit_2_naming_the_key(tmp_path, hosts, pools, message):
    profile = _profile(tmp_path, hosts, pools)
    p = _run(["check", "-", "--platform", profile], input=GOOD, timeout=60)
    assert p.returncode == 2 and f"{profile}{message}" in p.stderr, p.stderr


def test_pack_pool_counts_are_bounded(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["pack", "good.yaml", "--pool", "best-effort-small=5001"], cwd=tmp_path)
    assert p.returncode == 2 and "--pool" in p.stderr and "at most 5,000 nodes" in p.stderr
    p = _run(
        ["pack", "good.yaml", "--pool", "a:best-effort-small=2500", "--pool", "b:best-effort-large=2501"], cwd=tmp_path
    )
    assert p.returncode == 2 and "5,001 nodes in all: at most 5,000" in p.stderr


def test_a_cluster_manifest_beyond_5000_nodes_is_pf902_and_memory_stays_bounded(tmp_path):
    tkc = tmp_path / "cluster.yaml"
    tkc.write_text(TKC.read_text().replace("replicas: 4\n", "replicas: 1000000000\n"))
    (tmp_path / "good.yaml").write_text(GOOD)
    p = _run(["check", tkc, tmp_path / "good.yaml", "--format", "json"], measured=True, timeout=300)
    peak = int(p.stderr.rstrip("\n").rpartition("\n")[2])
    assert p.returncode == 1, p.stderr
    assert peak < 1024 * 1024  # KiB; 10^9 nodes grew to an OOM kill
    pf902 = [f for f in json.loads(p.stdout)["findings"] if f["rule"] == "PF902" and f["file"] == str(tkc)]
    assert len(pf902) == 1 and "spec.topology.nodePools[0].replicas" in pf902[0]["message"]
    assert "maximum of 5000" in pf902[0]["message"]


def test_the_largest_cluster_podfit_takes_stays_small(tmp_path):
    """96 hosts and a pool of 5,000 nodes, with pods for all of them: peak memory well under 1 GiB."""
    profile = _profile(tmp_path, [96], [5000])
    many = tmp_path / "many.yaml"
    many.write_text(
        GOOD.replace("replicas: 2", "replicas: 150000").replace(
            "{limits: {memory: 1Gi}}", "{requests: {cpu: 100m, memory: 128Mi}}"
        )
    )
    p = _run(["pack", many, "--platform", profile, "--time-budget", "2s"], measured=True, timeout=300)
    peak = int(p.stderr.rstrip("\n").rpartition("\n")[2])
    assert p.returncode in (0, 1), p.stderr
    assert peak < 700 * 1024  # KiB (measured: about 150 MB)


def test_platform_import_of_more_nodes_than_a_cluster_has_is_exit_2(tmp_path):
    node = {
        "kind": "Node",
        "metadata": {"labels": {"node.kubernetes.io/instance-type": "m5.xlarge"}},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi"}, "allocatable": {"cpu": "3920m", "memory": "15Gi"}},
    }
    items = [{**node, "metadata": {**node["metadata"], "name": f"n{i}"}} for i in range(5001)]
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"kind": "List", "items": items}))
    p = _run(["platform", "import", nodes, "-o", tmp_path / "platform.yaml"])
    assert p.returncode == 2 and f"{nodes}: 5,001 nodes: at most 5,000" in p.stderr, p.stderr
    assert not (tmp_path / "platform.yaml").exists()


def test_fix_never_writes_its_overlay_over_an_input(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(ROOT / "testdata" / "PF103" / "fail_cpu_request_above_limit.yaml", app / "a.yaml")
    (app / "kustomization.yaml").write_text("resources: [a.yaml]\n")
    p = _run(["fix", app, "--kustomize", app])
    assert p.returncode == 2
    # refused as a kustomization podfit did not write; were it podfit's own, as one of the inputs
    assert f"{app / 'kustomization.yaml'} exists and was not written by podfit fix" in p.stderr
    assert (app / "kustomization.yaml").read_text() == "resources: [a.yaml]\n"
    from podfit.fix.apply import KUSTOMIZATION_MARKER

    ours = f"{KUSTOMIZATION_MARKER}\nresources: [a.yaml]\n"
    (app / "kustomization.yaml").write_text(ours)
    p = _run(["fix", app, "--kustomize", app])
    assert p.returncode == 2, p.stderr
    assert f"--kustomize {app}: {app / 'kustomization.yaml'} is one of the inputs" in p.stderr
    assert (app / "kustomization.yaml").read_text() == ours


def test_a_report_is_never_written_through_a_link_and_keeps_its_mode(tmp_path):
    """-o names a symbolic link (to a file elsewhere): refused, the target untouched. An earlier
    report is replaced whole, keeping its mode; a read-only one is refused."""
    manifest = tmp_path / "a.yaml"
    shutil.copy(ROOT / "testdata" / "PF103" / "fail_cpu_request_above_limit.yaml", manifest)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n")
    link = tmp_path / "report.json"
    link.symlink_to(elsewhere)
    p = _run(["check", manifest, "--format", "json", "-o", link])
    assert p.returncode == 2 and "a symbolic link" in p.stderr
    assert elsewhere.read_text() == "keep me\n" and link.is_symlink()
    report = tmp_path / "old.json"
    report.write_text("old\n")
    report.chmod(0o600)
    p = _run(["check", manifest, "--format", "json", "-o", report, "--fail-on", "never"])
    assert p.returncode == 0, p.stderr
    assert json.loads(report.read_text())["findings"] and (report.stat().st_mode & 0o777) == 0o600
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith(".podfit-fix-")]
    report.chmod(0o444)
    p = _run(["check", manifest, "--format", "json", "-o", report])
    assert p.returncode == 2 and "read-only" in p.stderr
