"""The install instructions resolve: the version is written once, the pins in README.md and
docs/integrations.md name the tag the release process creates (docs/releasing.md), the changelog has
the version's section, and (slow) the README's pre-commit configuration, pointed at a clone of this
repository carrying that tag, installs and runs the hook for real."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import podfit

ROOT = Path(__file__).resolve().parents[1]
TAG = f"v{podfit.__version__}"
PIN_FILES = ("README.md", "docs/integrations.md", ".pre-commit-hooks.yaml")


def pins(text: str) -> list[str]:
    """Every podfit version a user is told to pin: pre-commit `rev:` and the Action's `@ref`."""
    return re.findall(r"^\s*#?\s*rev:\s*(\S+)", text, re.M) + re.findall(r"podfit/podfit@([\w.\-]+)", text)


def test_the_version_is_written_once():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^version\s*=\s*\"", pyproject, re.M) is None  # no literal version in [project]
    assert 'dynamic = ["version"]' in pyproject and 'version = { attr = "podfit.__version__" }' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", podfit.__version__)


@pytest.mark.parametrize("name", PIN_FILES)
def test_every_pin_names_the_release_tag(name):
    found = pins((ROOT / name).read_text())
    assert found, f"{name} pins no version"
    assert set(found) == {TAG}, f"{name} pins {found}, the release tag is {TAG} (docs/releasing.md)"


def test_pins_are_found_where_they_are_wrong():
    assert pins("    rev: v9.9.9\n  - uses: podfit/podfit@main\n") == ["v9.9.9", "main"]


def test_the_changelog_has_the_version():
    assert f"\n## {podfit.__version__}\n" in (ROOT / "CHANGELOG.md").read_text()


def test_the_action_installs_from_its_own_copy():
    action = (ROOT / "action.yml").read_text()
    assert 'pip install --quiet "$PODFIT_ACTION_PATH"' in action
    assert "podfit==" not in action  # no package index has podfit


def readme_precommit_config() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```yaml\n(repos:\n.*?)```", readme, re.S)
    assert block, "README.md has no .pre-commit-config.yaml example"
    return block.group(1)


@pytest.mark.slow
def test_readme_precommit_config_installs_the_tagged_hook(tmp_path):
    """`make release-tag`'s tag in a clone; the README's config with its repo URL pointed at the
    clone; a real `pre-commit run` fails a Deployment without requests and passes a sized one."""
    pytest.importorskip("pre_commit")
    from test_integration_precommit import NO_REQUESTS, WELL_SIZED, env

    clone = tmp_path / "podfit"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    subprocess.run(["git", "tag", "-a", TAG, "-m", f"podfit {podfit.__version__}"], cwd=clone, check=True, env=env())
    config = readme_precommit_config()
    assert "repo: https://github.com/podfit/podfit" in config and f"rev: {TAG}" in config
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".pre-commit-config.yaml").write_text(config.replace("https://github.com/podfit/podfit", str(clone)))
    shutil.copy(ROOT / "testdata" / "platforms" / "study-4-hosts.yaml", ws / "platform.yaml")  # the example's args
    (ws / "no-requests.yaml").write_text(NO_REQUESTS)
    (ws / "well-sized.yaml").write_text(WELL_SIZED)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "."], cwd=ws, check=True)

    def run(*files: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *files]
        return subprocess.run(cmd, cwd=ws, env=env(), capture_output=True, text=True, timeout=1200)

    bad = run("no-requests.yaml")
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert "PF101" in out and "no-requests.yaml" in out
    good = run("well-sized.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
