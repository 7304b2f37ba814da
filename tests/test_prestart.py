"""The embedded engine started early in a child process (engines.wasm.prestart) gives the findings
the engine in the main process gives, keeps wasmtime out of the main process, and falls back to
the main process when the child is gone before it is handed its work."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from podfit.engines import wasm

ROOT = Path(__file__).resolve().parents[1]
LAYOUTS = sorted(p for p in (ROOT / "testdata" / "repos").iterdir() if (p / "manifests").is_dir())
# the rules the Rego policies declare (their METADATA id): the findings the early engine makes
REGO_RULES = {
    rule
    for f in (ROOT / "policies").rglob("*.rego")
    for rule in re.findall(r"^#\s+id: (PF\d{3})$", f.read_text(), re.M)
}

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the engine starts early only with a CPU to spare")


def _check(*args: str, prestart: bool, cwd: Path = ROOT) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PODFIT_PRESTART")}
    env["PYTHONPATH"] = str(ROOT / "analyzer")
    if not prestart:
        env["PODFIT_PRESTART"] = "0"
    proc = subprocess.run(
        [sys.executable, "-m", "podfit", "check", *args], capture_output=True, text=True, env=env, cwd=cwd
    )
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda p: p.name)
def test_the_early_engine_finds_what_the_main_process_finds(layout):
    args = ("manifests", "--format", "json")
    early, late = _check(*args, prestart=True, cwd=layout), _check(*args, prestart=False, cwd=layout)
    assert early == late
    # the layout gives the engine work: two reports without a Rego finding would agree whatever
    # the early engine did
    assert {f["rule"] for f in json.loads(early[1])["findings"]} & REGO_RULES, early
    assert early[0] == 1


DRIVER = """
import sys
import podfit.cli as cli
if sys.argv[1] == "early":
    cli._PRESTART.append(True)
sys.argv = ["podfit", "check", "--format", "json", sys.argv[2]]
code = cli.run_main()
print(code, "wasmtime" in sys.modules, file=sys.stderr)
"""


def test_wasmtime_is_imported_by_the_child_only(tmp_path):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: x}\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PODFIT_PRESTART"}
    env["PYTHONPATH"] = str(ROOT / "analyzer")
    seen = {}
    for mode in ("early", "late"):
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, mode, str(manifest)], capture_output=True, text=True, env=env
        )
        code, imported = proc.stderr.strip().splitlines()[-1].split()
        seen[mode] = (code, imported)
    assert seen["early"] == ("1", "False")  # PF105: BestEffort, found by the Rego rules in the child
    assert seen["late"] == ("1", "True")


def test_a_child_gone_before_its_work_leaves_it_to_the_main_process():
    """Handing the work to a child that has exited (a broken pipe) returns None: the caller
    evaluates in this process; the child is waited for."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # gone; its pid is waited for again by _end, which tolerates that
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the write breaks
    answer_read, answer_write = os.pipe()
    os.close(answer_write)
    wasm._PRESTARTED.append((child.pid, write_end, answer_read))
    try:
        assert wasm._hand_to_prestarted([{"kind": "Pod"}], {"podfit": {}}) is None
        assert wasm._PRESTARTED == []
    finally:
        wasm._PRESTARTED.clear()


def test_work_that_cannot_be_handed_over_is_left_to_the_main_process():
    """Documents pickle cannot take (nested past its recursion limit) are not handed over: None,
    the caller evaluates in this process, and the child is ended and waited for."""
    read_end, write_end = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", "import os; os.read(0, 1)"], stdin=read_end)
    os.close(read_end)
    answer_read, answer_write = os.pipe()
    os.close(answer_write)
    deep: object = "leaf"
    for _ in range(sys.getrecursionlimit() * 2):
        deep = [deep]
    wasm._PRESTARTED.append((child.pid, write_end, answer_read))
    try:
        assert wasm._hand_to_prestarted([{"kind": "Pod", "x": deep}], {"podfit": {}}) is None
        assert wasm._PRESTARTED == []
        # waited for: not even a zombie
        assert not sys.platform.startswith("linux") or not os.path.exists(f"/proc/{child.pid}")
    finally:
        wasm._PRESTARTED.clear()
        if child.poll() is None:
            child.kill()
