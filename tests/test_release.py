"""The install instructions resolve: the version is written once, the pins in README.md,
docs/integrations.md and the hook manifest name the tag the release process creates
(docs/releasing.md) once it exists, and a commit of this repository's history until then; the
changelog has the version's section, and (slow) the README's pre-commit configuration, pointed at a
clone of this repository, installs and runs the hook at its pin for real."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import podfit
from conftest import tool

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


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def released() -> bool:
    """Whether this version's tag exists in the repository (make release-tag made it)."""
    return bool(git("tag", "--list", TAG).stdout.strip())


@pytest.mark.parametrize("name", PIN_FILES)
def test_every_pin_resolves(name):
    """Every pin resolves in this repository: the release tag once it exists (docs/releasing.md);
    until then one commit of this repository's history that holds the hook and the Action."""
    found = pins((ROOT / name).read_text())
    assert found, f"{name} pins no version"
    if git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: the pins cannot be resolved here")
    if released():
        assert set(found) == {TAG}, f"{name} pins {found}, the release tag is {TAG} (docs/releasing.md)"
        return
    (commit,) = set(found)
    assert re.fullmatch(r"[0-9a-f]{40}", commit), f"{name} pins {commit}: no tag {TAG} yet, so a full commit id"
    assert git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, f"{commit} is not in the history"
    for path in (".pre-commit-hooks.yaml", "action.yml", "pyproject.toml"):
        assert git("cat-file", "-e", f"{commit}:{path}").returncode == 0, f"{commit} has no {path}"


def test_all_pin_files_pin_the_same():
    assert len({p for name in PIN_FILES for p in pins((ROOT / name).read_text())}) == 1


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


def readme_hook(tmp_path: Path, **environment: str):
    """A git workspace with the README's pre-commit config, its repo URL pointed at a clone of this
    repository (tagged as `make release-tag` would when the pin is this version's tag and the tag
    does not exist yet), and a function that runs `pre-commit run --files ...` in it."""
    from test_integration_precommit import env

    clone = tmp_path / "podfit"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    config = readme_precommit_config()
    (pin,) = pins(config)
    if pin == TAG and not released():  # the release commit before its tag: tag it as make release-tag would
        subprocess.run(
            ["git", "tag", "-a", TAG, "-m", f"podfit {podfit.__version__}"], cwd=clone, check=True, env=env()
        )
    assert "repo: https://github.com/podfit/podfit" in config
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".pre-commit-config.yaml").write_text(config.replace("https://github.com/podfit/podfit", str(clone)))
    shutil.copy(ROOT / "testdata" / "platforms" / "study-4-hosts.yaml", ws / "platform.yaml")  # the example's args
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)

    def run(*files: str) -> subprocess.CompletedProcess:
        subprocess.run(["git", "add", "."], cwd=ws, check=True)
        cmd = [sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *files]
        return subprocess.run(cmd, cwd=ws, env={**env(), **environment}, capture_output=True, text=True, timeout=1200)

    return ws, run


@pytest.mark.slow
def test_readme_precommit_config_installs_the_pinned_hook(tmp_path):
    """The README's config, its repo URL pointed at a clone; a real `pre-commit run` fails a
    Deployment without requests and passes a sized one."""
    pytest.importorskip("pre_commit")
    from test_integration_precommit import NO_REQUESTS, WELL_SIZED

    ws, run = readme_hook(tmp_path)
    (ws / "no-requests.yaml").write_text(NO_REQUESTS)
    (ws / "well-sized.yaml").write_text(WELL_SIZED)
    bad = run("no-requests.yaml")
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert "PF101" in out and "no-requests.yaml" in out
    good = run("well-sized.yaml")
    assert good.returncode == 0, good.stdout + good.stderr


@pytest.mark.slow
@pytest.mark.skipif(tool("helm") is None, reason="needs helm (make tools builds it into .tools/bin)")
def test_readme_precommit_config_checks_a_chart_in_place(tmp_path):
    """A repository holding a Helm chart: the hook, given the chart's files as pre-commit passes
    them, renders the chart with helm and passes a well-sized one; a memory request above its
    limit, set in values.yaml, fails the commit naming the template's line and the values key."""
    pytest.importorskip("pre_commit")
    ws, run = readme_hook(tmp_path, PODFIT_HELM=str(tool("helm")))
    shutil.copytree(ROOT / "testdata" / "render" / "chart" / "shop", ws / "shop")
    values = ws / "shop" / "values.yaml"
    sized = values.read_text().replace("    cpu: 250m\n    memory: 256Mi", "    cpu: 500m\n    memory: 128Mi")
    deployment = ws / "shop" / "templates" / "deployment.yaml"
    deployment.write_text(
        deployment.read_text().replace(
            "              cpu: 50m\n",
            "              cpu: 50m\n              memory: 64Mi\n            limits:\n              memory: 64Mi\n",
        )
    )
    files = ["shop/Chart.yaml", "shop/values.yaml", "shop/templates/deployment.yaml", "shop/templates/service.yaml"]
    bad = run(*files)
    out = bad.stdout + bad.stderr
    assert bad.returncode == 1, out
    assert "PF103" in out and "resources.requests.memory (shop/values.yaml:23)" in out and "PF908" not in out
    values.write_text(sized)
    good = run(*files)
    assert good.returncode == 0, good.stdout + good.stderr
