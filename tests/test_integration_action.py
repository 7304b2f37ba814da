"""The composite GitHub Action (action.yml): its inputs never reach a script by interpolation, and
its scripts, run here as the Actions runner would run them (env, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY),
write a schema-valid SARIF report, a job summary, annotations, and fail per fail-on."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import tool

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
INPUTS = {"paths", "platform", "config", "fail-on", "format", "upload-sarif"}
SARIF_SCHEMA = json.loads((ROOT / "schemas" / "sarif-2.1.0.json").read_text(encoding="utf-8"))


def test_inputs_and_composite_shape():
    assert set(ACTION["inputs"]) == INPUTS
    assert ACTION["runs"]["using"] == "composite"
    uses = [s["uses"] for s in STEPS if "uses" in s]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    for s in STEPS:
        if "run" in s:
            assert s.get("shell") == "bash", s.get("name")


def test_no_expression_is_interpolated_into_a_script():
    for s in STEPS:
        if "run" in s:
            assert "${{" not in s["run"], f"step {s.get('name')!r} interpolates an expression into its script"


def test_every_input_reaches_scripts_only_through_env():
    referenced = set()
    for s in STEPS:
        for value in (s.get("env") or {}).values():
            referenced.update(re.findall(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", str(value)))
    # upload-sarif only gates a step (an `if:` expression), it is never a script's value
    assert referenced == INPUTS - {"upload-sarif"}
    upload = next(s for s in STEPS if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif"))
    assert "inputs.upload-sarif == 'true'" in upload["if"]


def test_example_workflow_uses_the_local_action():
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "podfit.yml").read_text())
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    local = [s for s in steps if s.get("uses") == "./"]
    assert local and "testdata" in local[0]["with"]["paths"]
    assert wf["permissions"]["security-events"] == "write"


@pytest.mark.tools
def test_actionlint_passes_on_every_workflow_and_catches_a_bad_input(tmp_path):
    al = tool("actionlint")
    if al is None:
        pytest.skip("actionlint not built (make tools)")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    p = subprocess.run([al, "-no-color", *workflows], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    # the same linter rejects an undefined input of this action (so it really reads action.yml)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / "action.yml").write_text((ROOT / "action.yml").read_text())
    (tmp_path / ".github" / "workflows" / "x.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - uses: ./\n        with: {pathz: x}\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    bad = subprocess.run([al, "-no-color"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and 'input "pathz" is not defined' in bad.stdout


# ------------------------------------------------------------- running the scripts like a runner ---


class Runner:
    """Runs the action's `run:` steps in order with the environment GitHub gives them."""

    def __init__(self, tmp: Path, inputs: dict[str, str], cwd: Path) -> None:
        self.tmp, self.cwd = tmp, cwd
        self.inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()} | inputs
        self.outputs: dict[str, dict[str, str]] = {}
        self.files = {n: tmp / n for n in ("output", "summary", "path", "env")}
        for f in self.files.values():
            f.write_text("")
        bindir = tmp / "bin"  # podfit as the install step would leave it on PATH
        bindir.mkdir()
        shim = bindir / "podfit"
        shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "analyzer"}" exec "{sys.executable}" -m podfit "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
        (bindir / "python").symlink_to(sys.executable)  # what setup-python leaves on PATH
        self.path = f"{bindir}:/usr/bin:/bin"
        self.log: list[tuple[str, int, str]] = []

    def expr(self, text: str) -> str:
        def one(m: re.Match) -> str:
            e = m.group(1).strip()
            if e.startswith("inputs."):
                return self.inputs[e[len("inputs.") :]]
            if e == "github.action_path":
                return str(ROOT)
            m2 = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", e)
            if m2:
                return self.outputs.get(m2.group(1), {}).get(m2.group(2), "")
            raise AssertionError(f"unexpected expression {e}")

        return re.sub(r"\$\{\{(.*?)\}\}", one, text)

    def run(self, skip=("key", "install")) -> int:
        """Run the steps; after a failure only `always()` steps run. Returns the job's first failure (or 0)."""
        failed = 0
        for step in STEPS:
            if "run" not in step or step.get("id") in skip:
                continue
            cond = str(step.get("if", ""))
            if failed and "always()" not in cond:
                continue
            if "steps.check.outputs.sarif-file != ''" in cond and not self.outputs.get("check", {}).get("sarif-file"):
                continue
            if "steps.check.outputs.exit-code != ''" in cond and not self.outputs.get("check", {}).get("exit-code"):
                continue
            env = {
                "PATH": self.path,
                "HOME": str(self.tmp),
                "RUNNER_TEMP": str(self.tmp),
                "GITHUB_ACTIONS": "true",
                "GITHUB_OUTPUT": str(self.files["output"]),
                "GITHUB_STEP_SUMMARY": str(self.files["summary"]),
                "GITHUB_PATH": str(self.files["path"]),
                "GITHUB_ENV": str(self.files["env"]),
                "GITHUB_ACTION_PATH": str(ROOT),
            }
            env |= {k: self.expr(str(v)) for k, v in (step.get("env") or {}).items()}
            before = self.files["output"].read_text()
            # exactly how the runner invokes `shell: bash`
            p = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            new = self.files["output"].read_text()[len(before) :]
            if step.get("id"):
                self.outputs[step["id"]] = dict(line.split("=", 1) for line in new.splitlines() if "=" in line)
            self.log.append((step.get("name", ""), p.returncode, p.stdout + p.stderr))
            if p.returncode and not failed:
                failed = p.returncode
        return failed


@pytest.fixture
def repo(tmp_path):
    """A workspace with manifests: schema-invalid ones and a clean one; config enables the rules
    that run without a Rego engine, so the action's own logic is what is tested here."""
    ws = tmp_path / "ws"
    (ws / "k8s").mkdir(parents=True)
    for name in ("fail_misspelt_requests.yaml", "fail_wrong_types.yaml", "pass_workloads.yaml"):
        (ws / "k8s" / name).write_text((ROOT / "testdata" / "PF902" / name).read_text())
    (ws / ".podfit.yaml").write_text("enable: [PF901, PF902, PF903]\n")
    return ws


def test_action_fails_on_errors_with_sarif_summary_and_annotations(tmp_path, repo):
    r = Runner(tmp_path, {"paths": "k8s/"}, repo)
    assert r.run() == 1
    assert r.outputs["check"]["exit-code"] == "1"
    sarif = json.loads(Path(r.outputs["check"]["sarif-file"]).read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert {x["ruleId"] for x in results} == {"PF902"} and len(results) == 3
    uris = {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in results}
    assert uris == {"k8s/fail_misspelt_requests.yaml", "k8s/fail_wrong_types.yaml"}
    check_log = r.log[0][2]
    assert check_log.count("::error file=k8s/fail_") == 3 and "title=PF902 schema-invalid::" in check_log
    summary = r.files["summary"].read_text()
    assert summary.startswith("## podfit failed (fail-on: error)")
    assert "3 errors, 0 warnings, 0 info" in summary and summary.count("| [PF902](") == 3
    assert "`k8s/fail_misspelt_requests.yaml:18`" in summary
    assert r.log[-1][0] == "Apply fail-on" and "findings at or above 'error'" in r.log[-1][2]


def test_action_passes_with_fail_on_never_and_on_clean_input(tmp_path, repo):
    (tmp_path / "a").mkdir()
    r = Runner(tmp_path / "a", {"paths": "k8s/", "fail-on": "never"}, repo)
    assert r.run() == 0 and r.outputs["check"]["exit-code"] == "0"
    assert r.files["summary"].read_text().startswith("## podfit passed (fail-on: never)")
    (tmp_path / "b").mkdir()
    r = Runner(tmp_path / "b", {"paths": "k8s/pass_workloads.yaml\n", "format": "text"}, repo)
    assert r.run() == 0
    assert r.files["summary"].read_text().startswith("## podfit passed")
    assert "no findings" in r.log[0][2]


def test_multiple_paths_and_platform_and_config_inputs(tmp_path, repo):
    (repo / "other.podfit.yaml").write_text("enable: [PF901]\n")
    (repo / "bad.yaml").write_text("kind: [\n")
    r = Runner(
        tmp_path,
        {
            "paths": "k8s/fail_wrong_types.yaml\n  bad.yaml",
            "config": "other.podfit.yaml",
            "platform": str(ROOT / "testdata" / "platforms" / "study-4-hosts.yaml"),
        },
        repo,
    )
    assert r.run() == 1
    sarif = json.loads(Path(r.outputs["check"]["sarif-file"]).read_text())
    assert [x["ruleId"] for x in sarif["runs"][0]["results"]] == ["PF901"]  # only the config's rule ran
    assert sarif["runs"][0]["properties"]["platformDefault"] is False


@pytest.mark.parametrize(
    "evil", ['k8s/"; touch PWNED; echo "', "$(touch PWNED)", "`touch PWNED`", "k8s/ ; touch PWNED"]
)
def test_inputs_cannot_inject_shell(tmp_path, repo, evil):
    r = Runner(tmp_path, {"paths": evil, "format": "text;touch PWNED"}, repo)
    code = r.run()
    assert not (repo / "PWNED").exists() and not (tmp_path / "PWNED").exists()
    assert code == 2  # a path that does not exist (or a bad format) is a failure, never a pass


def test_a_failed_run_hands_no_report_on_and_the_summary_says_so(tmp_path, repo):
    """podfit exits 2 (a path that does not exist): no SARIF file is named for the summary and the
    upload, and the summary says the run did not complete, without a traceback."""
    r = Runner(tmp_path, {"paths": "no-such-dir/"}, repo)
    assert r.run() == 2
    assert r.outputs["check"]["exit-code"] == "2" and "sarif-file" not in r.outputs["check"]
    summary = r.files["summary"].read_text()
    assert summary.startswith("## podfit did not complete (exit 2)")
    assert not any("Traceback" in out for _, _, out in r.log)
    upload = next(s for s in STEPS if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert "steps.check.outputs.sarif-file != ''" in upload["if"]


def test_upload_is_auto_by_default_and_skips_fork_pull_requests():
    assert ACTION["inputs"]["upload-sarif"]["default"] == "auto"
    upload = next(s for s in STEPS if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert "github.event.pull_request.head.repo.fork" in upload["if"]
    assert upload["continue-on-error"] == "${{ inputs.upload-sarif == 'auto' }}"


def test_the_install_is_cached_by_the_actions_own_files(tmp_path, repo):
    """The cache key step digests the files `pip install` takes from the action's copy: the same
    tree gives the same key, and the install step is skipped on a cache hit."""
    keys = []
    for i in range(2):
        (tmp_path / str(i)).mkdir()
        r = Runner(tmp_path / str(i), {}, repo)
        step = next(s for s in STEPS if s.get("id") == "key")
        env = {
            "PATH": r.path,
            "RUNNER_TEMP": str(tmp_path),
            "RUNNER_OS": "Linux",
            "GITHUB_OUTPUT": str(r.files["output"]),
        }
        env |= {k: r.expr(str(v)) for k, v in step["env"].items()}
        p = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 0, p.stderr
        out = dict(line.split("=", 1) for line in r.files["output"].read_text().splitlines())
        keys.append(out["key"])
        assert out["venv"] == f"{tmp_path}/podfit-venv"
    assert keys[0] == keys[1] and re.fullmatch(r"podfit-venv-Linux-3\.\d+-[0-9a-f]{32}", keys[0])
    install = next(s for s in STEPS if s.get("id") == "install")
    assert 'if [ "$PODFIT_CACHED" != "true" ]' in install["run"]


def test_bad_fail_on_is_rejected(tmp_path, repo):
    r = Runner(tmp_path, {"paths": "k8s/", "fail-on": "sometimes"}, repo)
    assert r.run() == 2 and "fail-on must be" in r.log[0][2]
