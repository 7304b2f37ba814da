"""OR-Tools is the extra ``podfit[exact]``: without it, check runs on the heuristics and the
bounds, and pack gives their answer, then asks for the extra by name (exit 2) when a proof needs
the solver. The runs without it hide the installed package from a real podfit process."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# as an install without the extra: importlib finds no ortools package
HIDDEN = "import sys; sys.modules['ortools'] = None; from podfit.cli import run; sys.argv[0] = 'podfit'; run()"
WITH = "from podfit.cli import run; import sys; sys.argv[0] = 'podfit'; run()"

# Two pods of 1840m, two of 960m and two of 950m on 3750m nodes: two nodes hold them exactly
# (1840 + 960 + 950 each), first-fit-decreasing takes three, the lower bound says two.
TIGHT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: shop}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - {{name: app, image: x, resources: {{requests: {{cpu: {cpu}, memory: 64Mi}}, limits: {{cpu: {cpu}, memory: 64Mi}}}}}}
"""


def podfit(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def tight(tmp_path: Path) -> str:
    path = tmp_path / "tight.yaml"
    parts = [TIGHT.format(name=n, cpu=c) for n, c in (("big", "1840m"), ("mid", "960m"), ("small", "950m"))]
    path.write_text("---\n".join(parts))
    return str(path)


def test_pack_asks_for_the_extra_when_a_proof_needs_the_solver(tmp_path):
    args = ("pack", tight(tmp_path), "--pool", "w:best-effort-large=3")
    solved = podfit(WITH, *args)
    assert solved.returncode == 0, solved.stderr
    assert "Least nodes per VM class: best-effort-large 2," in solved.stdout
    bare = podfit(HIDDEN, *args)
    assert bare.returncode == 2, bare.stderr
    last = bare.stderr.strip().splitlines()[-1]
    assert last.startswith("podfit: error: ") and "pip install 'podfit[exact]'" in last
    assert "Traceback" not in bare.stderr
    # the heuristics' answer is still printed: it fits, and the least count is a range
    assert bare.stdout.splitlines()[1].startswith("Fits: yes: a placement exists")
    assert "best-effort-large 2–3" in bare.stdout


def test_pack_without_the_solver_answers_what_needs_no_proof():
    args = ("pack", str(ROOT / "testdata/PF601/pass_fits.yaml"))
    solved, bare = podfit(WITH, *args), podfit(HIDDEN, *args)
    assert solved.returncode == 0, solved.stderr
    assert (bare.returncode, bare.stdout) == (solved.returncode, solved.stdout), bare.stderr
    misfit = ("pack", str(ROOT / "testdata/PF601/fail_packing.yaml"))
    solved, bare = podfit(WITH, *misfit), podfit(HIDDEN, *misfit)
    assert solved.returncode == 1
    assert (bare.returncode, bare.stdout) == (solved.returncode, solved.stdout), bare.stderr


def test_check_runs_without_the_solver():
    args = ("check", "--format", "json", str(ROOT / "testdata/examples"))
    solved, bare = podfit(WITH, *args), podfit(HIDDEN, *args)
    assert solved.returncode == 1, solved.stderr
    assert bare.returncode == solved.returncode, bare.stderr
    assert "Traceback" not in bare.stderr
    import json

    def rules(p):
        return sorted((f["rule"], f.get("line")) for f in json.loads(p.stdout)["findings"])

    assert rules(bare) == rules(solved)


def test_a_misfit_only_the_solver_proves_is_an_info_finding_without_it():
    """Two GPU workloads that share no node on two GPU nodes: CP-SAT proves the misfit (PF601,
    error); without it the fit is undecided, said as info naming the extra, never a silent pass."""
    import json

    folder = ROOT / "testdata/PF601/fail_gpu_workloads_share_nodes"
    args = ("check", "--rule", "PF601", "--format", "json", "--platform", str(folder / "platform.yaml"))
    args += (str(folder / "deploy"),)
    solved, bare = podfit(WITH, *args), podfit(HIDDEN, *args)
    (proven,) = json.loads(solved.stdout)["findings"]
    assert (proven["severity"], proven["details"]["proof"]) == ("error", "solver")
    (undecided,) = json.loads(bare.stdout)["findings"]
    assert undecided["severity"] == "info" and bare.returncode == 0, bare.stderr
    assert "undecided" in undecided["message"] and "pip install 'podfit[exact]'" in undecided["message"]
