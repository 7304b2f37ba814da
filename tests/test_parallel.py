"""Parsing across processes gives exactly the serial run's report (findings, lines, file accounts)."""

from __future__ import annotations

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
