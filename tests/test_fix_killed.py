"""``podfit fix --write`` killed at the rename (SIGKILL: no handler runs) leaves its temporary
file beside the manifest; the next run removes it, since the process named in it is gone, and
leaves alone one a live process is still writing."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "testdata" / "PF103" / "fail_cpu_request_above_limit.yaml"

# safewrite.write with the rename replaced by the process's own SIGKILL: killed at that moment
KILLED_AT_RENAME = """
import os, signal, sys
from podfit.fix import safewrite
safewrite.os.replace = lambda *_: os.kill(os.getpid(), signal.SIGKILL)
safewrite.write(sys.argv[1], b"new bytes\\n")
"""


def podfit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "podfit", *args], capture_output=True, text=True, timeout=300)


def temp_files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".podfit-fix-"))


def test_a_killed_write_leaves_a_temp_file_the_next_run_removes(tmp_path):
    manifest = tmp_path / "app.yaml"
    shutil.copy(FIXTURE, manifest)
    before = manifest.read_bytes()
    p = subprocess.Popen([sys.executable, "-c", KILLED_AT_RENAME, str(manifest)])
    assert p.wait(timeout=120) == -signal.SIGKILL
    (left,) = temp_files(tmp_path)  # what the kill left: the manifest itself untouched
    assert left.startswith(f".podfit-fix-{p.pid}-") and manifest.read_bytes() == before
    # one a live process is writing (this test's own id): listed, never removed
    live = tmp_path / f".podfit-fix-{os.getpid()}-live.tmp"
    live.write_text("being written\n")
    r = podfit("fix", "--write", str(manifest))
    assert r.returncode in (0, 1), r.stderr
    assert temp_files(tmp_path) == [live.name]
    assert f"{tmp_path / left}: removed, a temporary file left by a killed podfit fix" in r.stderr
    assert f"{live}: a temporary file left by an interrupted podfit fix" in r.stderr
    assert manifest.read_bytes() != before  # the fix itself was written
