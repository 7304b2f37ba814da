"""podfit leaves nothing running: every process a command starts has ended when it exits.

The command runs under a small wrapper that makes itself a child subreaper (prctl
PR_SET_CHILD_SUBREAPER), so any descendant that outlives podfit, a detached or double-forked one
included, is re-parented to the wrapper rather than to init, where the wrapper counts it. The
environment is a user's, not CI's (``CI`` removed), as a pre-commit hook runs on a laptop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
    - name: web
      image: web:1
      resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {cpu: "1", memory: 256Mi}}
"""

WRAPPER = r"""
import ctypes, json, os, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    raise SystemExit("prctl failed")
code = subprocess.run([sys.executable, "-m", "podfit", *sys.argv[1:]], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode
me = os.getpid()
left = []
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me:
            left.append(open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace"))
print(json.dumps({"code": code, "left": left}))
"""


def run_wrapped(*args: str, cwd: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT / "analyzer")
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are a Linux feature")
@pytest.mark.parametrize(
    ("args", "code"),
    [
        # the pre-commit hook's own command line (.pre-commit-hooks.yaml)
        (("check", "--allow-empty", "deploy.yaml"), 0),
        (("check", "--format", "json", "deploy.yaml"), 0),
        (("pack", "deploy.yaml", "--pool", "best-effort-xlarge=2"), 0),
        # the engine started early (engines.wasm.prestart) and never handed any work: no Rego rule
        # selected, an input that does not exist, a usage error after it started
        (("check", "--select", "PF902", "deploy.yaml"), 0),
        (("check", "no-such-file.yaml"), 2),
        (("check", "--format", "json", "--baseline", "no-such-baseline.json", "deploy.yaml"), 2),
    ],
)
def test_no_process_outlives_the_command(tmp_path: Path, args: tuple[str, ...], code: int) -> None:
    (tmp_path / "deploy.yaml").write_text(POD)
    result = run_wrapped(*args, cwd=tmp_path)
    # the exit status each command gives: a crash (2) where the command should run through would
    # leave nothing running only because nothing was started
    assert result["code"] == code, result
    assert result["left"] == []


def test_the_hook_runs_podfit_directly() -> None:
    hook = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entry = next(line.split(":", 1)[1].strip() for line in hook.splitlines() if line.strip().startswith("entry:"))
    assert entry.split()[:2] == ["podfit", "check"]
    assert "--server" not in entry


KILLER = r"""
import ctypes, json, os, signal, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    raise SystemExit("prctl failed")
least = int(sys.argv[1])
podfit = subprocess.Popen([sys.executable, "-m", "podfit", *sys.argv[2:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid and stat[0] != "Z":
                out.append(int(entry))
    return out
while len(children(podfit.pid)) < least and podfit.poll() is None:
    pass
seen = children(podfit.pid)
podfit.kill()
podfit.wait()
ended = {}
while True:  # every orphan, re-parented here, waited for: how it ended
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    # killed with its parent, or (forked just before) found its parent gone: ORPHANED
    ended[pid] = (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL) or (
        os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3)
print(json.dumps({"seen": seen, "killed": [ended.get(p) for p in seen]}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are a Linux feature")
@pytest.mark.parametrize("least", [1, 2], ids=["engine-started-early", "engine-workers"])
def test_children_end_with_a_killed_command(tmp_path: Path, least: int) -> None:
    """podfit killed (SIGKILL, or a signal it does not handle) while its engine runs in child
    processes: each child is killed with it (PR_SET_PDEATHSIG) rather than left to run on."""
    (tmp_path / "many.yaml").write_text("---\n".join(POD.replace("name: web,", f"name: web{i},") for i in range(6000)))
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PODFIT_PRESTART", "PODFIT_EMBEDDED_WORKERS")}
    env["PYTHONPATH"] = str(ROOT / "analyzer")
    env["PODFIT_EMBEDDED_WORKERS"] = "2"
    out = subprocess.run(
        [sys.executable, "-c", KILLER, str(least), "check", "many.yaml"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert len(result["seen"]) >= least
    assert all(result["killed"]), result
