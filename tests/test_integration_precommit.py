"""The pre-commit hook, through the real pre-commit: the manifest validates, and `try-repo` installs
this repository (committed state) into pre-commit's own environment and runs it on a temporary git
repository, failing a Deployment without requests (with its rule id) and passing a well-sized one
and a commit of YAML without Kubernetes objects.

Slow (about 30 s per try-repo call here): try-repo builds its environment in a fresh temporary store
each time, pip-installing podfit and its dependencies (from pip's cache after the first run).
PRE_COMMIT_HOME points under .tools/ so nothing is written to the user's cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from samples import NO_REQUESTS, WELL_SIZED

pytest.importorskip("pre_commit")

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PRE_COMMIT_HOME"] = str(ROOT / ".tools" / "pre-commit")
    e.pop("PYTHONPATH", None)  # the hook must run from its own install, not this checkout
    e.setdefault("GIT_AUTHOR_NAME", "podfit-test")
    e.setdefault("GIT_AUTHOR_EMAIL", "test@podfit.invalid")
    e.setdefault("GIT_COMMITTER_NAME", "podfit-test")
    e.setdefault("GIT_COMMITTER_EMAIL", "test@podfit.invalid")
    return e


def test_validate_manifest():
    p = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_validate_manifest_rejects_a_broken_one(tmp_path):
    bad = tmp_path / "hooks.yaml"
    bad.write_text("- id: podfit\n  entry: podfit check\n  language: not-a-language\n")
    p = subprocess.run([*PRE_COMMIT, "validate-manifest", str(bad)], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0


@pytest.mark.slow
def test_try_repo_fails_missing_requests_and_passes_well_sized(tmp_path):
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "no-requests.yaml").write_text(NO_REQUESTS)
    (ws / "well-sized.yaml").write_text(WELL_SIZED)
    (ws / "notes.txt").write_text("not a manifest: the hook's file types leave it out\n")
    (ws / "ci.yaml").write_text("on: push\njobs: {lint: {runs-on: ubuntu-latest, steps: []}}\n")
    subprocess.run(["git", "add", "."], cwd=ws, check=True)

    def try_repo(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                *PRE_COMMIT,
                "try-repo",
                str(ROOT),
                "podfit",
                "--ref",
                head,
                "--verbose",
                "--color",
                "never",
                "--files",
                *files,
            ],
            cwd=ws,
            env=env(),
            capture_output=True,
            text=True,
            timeout=900,
        )

    bad = try_repo("no-requests.yaml", "notes.txt")
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert "Failed" in out and "PF101" in out and "cpu-request-missing" in out
    assert "no-requests.yaml" in out and "notes.txt" not in out.split("- hook id: podfit", 1)[-1]

    good = try_repo("well-sized.yaml")
    out = good.stdout + good.stderr
    assert good.returncode == 0, out
    assert "Passed" in out and "no findings" in out

    # a commit that touches only YAML without a Kubernetes object: nothing to check, and the hook says so
    other = try_repo("ci.yaml")
    out = other.stdout + other.stderr
    assert other.returncode == 0, out
    assert "Passed" in out and "0 objects" in out
