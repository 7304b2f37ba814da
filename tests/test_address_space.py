"""podfit check and fix under an address-space limit (RLIMIT_AS, what `ulimit -v` sets on some CI
runners and sandboxes): the embedded engine sizes its memory reservation to start under 2 GiB and
gives the same findings; below what one instance needs, a one-line usage of `--engine opa`."""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "testdata" / "examples" / "web-shop.yaml"
GIB = 2**30


def _limit(nbytes: int | None):
    if nbytes is None:
        return None

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))

    return apply


def _podfit(args: list[str], limit: int | None, tmp: Path) -> subprocess.CompletedProcess:
    # a private cache of its own: the compiled module is built (not only loaded) under the limit
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp / f"cache-{limit}"))
    return subprocess.run(
        [sys.executable, "-m", "podfit", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=_limit(limit),
        cwd=ROOT,
    )


def _findings(p: subprocess.CompletedProcess) -> list[tuple]:
    report = json.loads(p.stdout)
    return sorted((f["rule"], f.get("line"), f["message"]) for f in report["findings"])


def test_check_under_two_gib_gives_the_same_findings(tmp_path):
    args = ["check", "--engine", "embedded", "--format", "json", str(FIXTURE)]
    free = _podfit(args, None, tmp_path)
    bounded = _podfit(args, 2 * GIB, tmp_path)
    assert free.returncode == 1, free.stderr
    assert bounded.returncode == free.returncode, bounded.stderr
    assert _findings(bounded) == _findings(free)
    assert _findings(free)  # the fixture has findings: the comparison says something


def test_fix_under_two_gib_gives_the_same_diff(tmp_path):
    args = ["fix", str(FIXTURE)]
    free = _podfit(args, None, tmp_path)
    bounded = _podfit(args, 2 * GIB, tmp_path)
    assert "Traceback" not in bounded.stderr
    assert bounded.returncode == free.returncode, bounded.stderr
    assert (bounded.stdout, bounded.stderr) == (free.stdout, free.stderr)
    assert free.stdout.startswith("---")  # the fixture has fixes: a diff to compare


@pytest.mark.parametrize("mib", [200, 240, 320])
def test_too_small_a_limit_names_the_opa_engine(tmp_path, mib):
    """Where the interpreter starts but the engine does not fit: exit 2 and a last line naming the
    way out (or, where it does fit, the check's own exit status and findings)."""
    args = ["check", "--engine", "embedded", str(FIXTURE)]
    free = _podfit(args, None, tmp_path)
    p = _podfit(args, mib * 2**20, tmp_path)
    if p.returncode == 1:  # it fitted: then it says what the unlimited run says
        assert p.stdout == free.stdout
        return
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("podfit: error:") and "--engine opa" in last, p.stderr
