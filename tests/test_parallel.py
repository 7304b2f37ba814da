"""Parsing across processes gives exactly the serial run's report (findings, lines, file accounts)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

ODD_FILES = {
    "list.yaml": "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n"
    "    spec: {containers: [{name: c, image: x}]}\n",
    "int-keys.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\ndata: {80: http, true: yes}\n",
    "dup.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\nmetadata: {name: e}\n",
    "doc-end.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n...\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {containers: [{name: c}]}\n",
    "broken-late.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n",
    "bomb.yaml": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True)),
    "bad-utf8.yaml": b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n",
    "anchors.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: an, labels: &l {app: an}}\n"
    "spec:\n  selector: {matchLabels: *l}\n  template:\n    metadata: {labels: *l}\n"
    "    spec: {containers: [{name: c, image: x, resources: {limits: {cpu: 1e3m}}}]}\n",
}


def _report(d: Path, jobs: int, engine_workers: int = 1) -> str:
    env = {
        "PYTHONPATH": str(ROOT / "analyzer"),
        "PATH": "/usr/bin:/bin",
        "PODFIT_JOBS": str(jobs),
        "NO_COLOR": "1",
        "PODFIT_EMBEDDED_WORKERS": str(engine_workers),
    }
    p = subprocess.run(
        [sys.executable, "-m", "podfit", "check", str(d), "--engine", "embedded", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    assert p.returncode in (0, 1), p.stderr
    return p.stdout


def test_parallel_parse_matches_serial(tmp_path):
    from gen import generate, write  # bench/gen.py

    d = tmp_path / "corpus"
    write(generate(400, seed=3), d, per_file=40)
    for name, content in ODD_FILES.items():
        (d / name).write_bytes(content.encode() if isinstance(content, str) else content)
    shutil.copytree(ROOT / "testdata" / "examples", d / "examples")
    serial = _report(d, 1)
    assert serial == _report(d, 2) == _report(d, 5)
    # the engine split over workers, which also resolve the lines of their results
    assert serial == _report(d, 2, engine_workers=3)
    assert '"PF905"' in serial and '"PF901"' in serial  # the odd files did reach the report


def test_worker_hands_over_fast_and_slow_documents():
    """A worker's hand-over of one file (documents read by the fast parser and by the slow path,
    keys that are not strings) reads back as exactly the documents a serial parse gives, lines
    included."""
    from podfit.loader import InputFile, LoaderLimits, _documents_from_worker, _worker_parse
    from podfit.yamlio import iter_documents

    text = (
        ODD_FILES["anchors.yaml"]
        + "---\n"
        + ODD_FILES["list.yaml"]
        + "---\nkind: ConfigMap\ndata:\n  a: 1.5\n  b: 1e3\n  c: 7\n"
    )
    text += "---\nkind: ConfigMap\ndata:\n  2: &x two\n  true: *x\n"
    limits = LoaderLimits()
    [shipped] = _worker_parse([InputFile("f.yaml", text.encode())], limits)
    assert shipped is not None and shipped[1] is None
    assert [plain for *_, plain in shipped[0]] == [False, True, True, False]
    handed = list(_documents_from_worker(text, shipped, limits))
    serial = list(iter_documents(text, limits.yaml, fast=True))
    assert [d.data for d in handed] == [d.data for d in serial]
    # types kept: a float, a YAML 1.1 string, an int, and keys that are no strings
    assert handed[2].data["data"] == {"a": 1.5, "b": "1e3", "c": 7}
    assert handed[3].data["data"] == {2: "two", True: "two"} and [type(k) for k in handed[3].data["data"]] == [
        int,
        bool,
    ]
    for h, s in zip(handed, serial, strict=True):
        assert h.line == s.line
        assert h.lines.line(("metadata", "name"), -1) == s.lines.line(("metadata", "name"), -1)


# Run in a fresh interpreter: every os.fork of a `podfit check` records the thread it happens in
# and how many threads the process has then (Python's, and the kernel's count from /proc).
_FORK_PROBE = """
import json, os, sys, threading
from podfit import cli

forks = []
real_fork = os.fork

def fork():
    here = threading.current_thread()
    try:
        kernel_threads = len(os.listdir(f"/proc/{os.getpid()}/task"))
    except OSError:
        kernel_threads = None
    record = [here.name, here is threading.main_thread(), threading.active_count(), kernel_threads]
    pid = real_fork()
    if pid:
        forks.append(record)
    return pid

os.fork = fork
try:
    cli.main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "forks": forks}))
"""


def test_worker_processes_are_forked_from_the_main_thread_alone(tmp_path):
    """The parse workers and the embedded engine's workers are forked from the main thread while
    it is the process's only thread (a fork in a multi-threaded process can deadlock the child;
    Python 3.12 warns about it). The engine's evaluation then runs beside the Python rules."""
    from gen import generate, write  # bench/gen.py

    d = tmp_path / "corpus"
    write(generate(900, seed=5), d, per_file=100)
    env = {
        "PYTHONPATH": str(ROOT / "analyzer"),
        "PATH": "/usr/bin:/bin",
        "PODFIT_JOBS": "2",
        "PODFIT_EMBEDDED_WORKERS": "2",
        "NO_COLOR": "1",
    }
    args = ["check", str(d), "--engine", "embedded", "--format", "json", "--fail-on", "never"]
    p = subprocess.run(
        [sys.executable, "-c", _FORK_PROBE, *args], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    assert out["code"] == 0
    # one parse worker, then two engine workers (whose results reached the report: the report
    # equals the serial run's, test_parallel_parse_matches_serial)
    assert len(out["forks"]) == 3, out["forks"]
    for name, is_main, python_threads, kernel_threads in out["forks"]:
        assert is_main, f"forked from thread {name}"
        assert python_threads == 1, f"forked while {python_threads} Python threads ran"
        assert kernel_threads in (1, None), f"forked while the process had {kernel_threads} threads"
