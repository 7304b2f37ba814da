"""Hostile and accidental bad input: each case is reported (a finding or a skipped/failed file with
its reason), bounded in time and memory, and the rest of the run is unaffected."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from samples import LIMITS_ONLY as GOOD

ROOT = Path(__file__).resolve().parents[1]


def _alias_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghijk":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    return "\n".join(lines) + "\n"


CASES: dict[str, bytes | str] = {
    "alias-bomb.yaml": _alias_bomb(),
    "deep.yaml": "a: " + "[" * 200_000 + "]" * 200_000 + "\n",
    "deep-block.yaml": "a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 3000)),
    "million-lines.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n"
    + "".join(f"  key{i}: value{i}\n" for i in range(1_000_000)),
    "bad-utf8.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \xff\xfe}\n",
    "binary.yaml": bytes(range(256)) * 4,
    "python-tag.yaml": "apiVersion: v1\nkind: Pod\nmetadata: !!python/object/apply:os.system ['true']\n",
    "merge-keys.yaml": "x: &base {cpu: 1}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n  <<: *base\n  cpu: '2'\n",
    "duplicate-keys.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\nmetadata: {name: e}\n",
    "absurd-quantities.yaml": """\
apiVersion: v1
kind: Pod
metadata: {name: absurd}
spec:
  containers:
    - name: a
      resources:
        requests: {cpu: 1e30, memory: -1Gi}
        limits: {cpu: .nan, memory: 1e999}
""",
    "huge-replicas.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: huge}
spec:
  replicas: 1000000000
  template:
    spec:
      containers:
        - name: a
          image: a:1
          resources: {requests: {cpu: 100m, memory: 100Mi}, limits: {cpu: 100m, memory: 100Mi}}
""",
    "good.yaml": GOOD,
}


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    for name, content in CASES.items():
        p = d / name
        p.write_bytes(content.encode() if isinstance(content, str) else content)
    with open(d / "huge-file.yaml", "wb") as fh:  # 100 MB (sparse): over the 64 MiB file limit
        fh.truncate(100 * 2**20)
    (d / "loop.yaml").symlink_to(d / "loop.yaml")
    (d / "dir-loop").mkdir()
    (d / "dir-loop" / "back").symlink_to(d, target_is_directory=True)
    shutil.copy(ROOT / "testdata/examples/tkg-cluster.yaml", d / "cluster.yaml")
    return d


# Runs a command and prints, last on standard error, the peak resident memory (KiB) of the largest
# of it and its descendants (ru_maxrss of its own RUSAGE_CHILDREN is a maximum, not a sum), which no
# other process of the test run raises.
_PEAK = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)"
)


def _peak_kib(p: subprocess.CompletedProcess) -> int:
    """The peak memory _run(..., measured=True) printed, taken off the end of ``p.stderr``."""
    head, _, last = p.stderr.rstrip("\n").rpartition("\n")
    p.stderr = head + "\n" if head else ""
    return int(last)


def _run(args, unprivileged=False, timeout=300, measured=False):
    env = {
        "PYTHONPATH": str(ROOT / "analyzer"),
        "PATH": "/usr/bin:/bin",
        "NO_COLOR": "1",
        "HOME": os.environ.get("HOME", "/tmp"),
    }

    # root reads every file; in a new user namespace it keeps no capability over the host's files,
    # so a mode-000 file is unreadable as for any user
    prefix = ["unshare", "--user"] if unprivileged else []
    if measured:
        prefix = [*prefix, sys.executable, "-c", _PEAK]
    return subprocess.run(
        [*prefix, sys.executable, "-m", "podfit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def test_every_hostile_file_is_accounted_for_and_the_good_one_still_checked(hostile_dir):
    p = _run(["check", str(hostile_dir), "--engine", "embedded", "--format", "json"], measured=True)
    # peak memory of this podfit run and its workers (KiB): no bomb blew up memory
    assert _peak_kib(p) < 1024 * 1024
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    files = {Path(f["path"]).name: f for f in report["files"]}
    by_file: dict[str, list[dict]] = {}
    for f in report["findings"]:
        by_file.setdefault(Path(f["file"]).name, []).append(f)

    def rules(name):
        return sorted({f["rule"] for f in by_file.get(name, [])})

    assert rules("alias-bomb.yaml") == ["PF901"] and "alias" in by_file["alias-bomb.yaml"][0]["message"]
    assert rules("deep.yaml") == ["PF901"] and rules("deep-block.yaml") == ["PF901"]
    assert rules("million-lines.yaml") == ["PF901"] and "larger than" in by_file["million-lines.yaml"][0]["message"]
    assert rules("bad-utf8.yaml") == ["PF901"] and by_file["bad-utf8.yaml"][0]["line"] == 3
    assert files["binary.yaml"]["status"] == "skipped" and files["binary.yaml"]["reason"] == "binary file"
    assert files["huge-file.yaml"]["status"] == "skipped" and "larger than" in files["huge-file.yaml"]["reason"]
    assert files["loop.yaml"]["status"] in ("skipped", "failed")
    assert rules("python-tag.yaml") == ["PF901"] and by_file["python-tag.yaml"][0]["line"] == 3
    assert files["merge-keys.yaml"]["status"] == "parsed" and "PF905" not in rules("merge-keys.yaml")
    assert "PF905" in rules("duplicate-keys.yaml")
    absurd = [f for f in by_file["absurd-quantities.yaml"] if f["rule"] == "PF903"]
    assert len(absurd) == 4
    # 10^9 replicas: the misfit is proven by a bound, without expanding the pods
    huge = [f for f in by_file["huge-replicas.yaml"] if f["rule"] == "PF601"]
    assert len(huge) == 1 and "proven by a lower bound" in huge[0]["message"]
    assert "PF101" in rules("good.yaml")  # the one good file is still checked
    # every file under the directory is in the summary exactly once (the dir loop is not followed)
    assert report["summary"]["files"] == len(report["files"]) == len(CASES) + 3


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_unreadable_file_fails_with_reason_and_run_goes_on(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the mode-000 trick below needs root")
    d = tmp_path / "tree"
    d.mkdir()
    (d / "good.yaml").write_text(GOOD)
    secret = d / "secret.yaml"
    secret.write_text(GOOD)
    secret.chmod(0)
    for p in (tmp_path, d, d / "good.yaml"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    p = _run(["check", str(d), "--engine", "embedded", "--format", "json"], unprivileged=True)
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    status = {Path(f["path"]).name: (f["status"], f["reason"]) for f in report["files"]}
    assert status["secret.yaml"] == ("failed", "Permission denied")
    assert any(f["rule"] == "PF101" and f["file"].endswith("good.yaml") for f in report["findings"])
