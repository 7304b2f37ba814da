"""podfit on published Helm charts, checked in place as a new user would check them. For each chart
directory: objects rendered, findings by rule, exit status and wall time of
``podfit check CHART --format json``, and beside it the wall time of ``helm template`` alone with
the same flags podfit gives it (``--skip-tests`` and ``--kube-version`` of the release podfit
targets), so the render's own share is visible. A benchmark, not a test: the charts are fetched by
hand (none are committed; see docs/integrations.md, "Published charts").

    PODFIT_HELM=.tools/bin/helm .venv/bin/python bench/charts.py [--runs 3] [--trace-network] CHART[=VALUES]...

``CHART=VALUES`` checks a chart that renders nothing without values of the user's (a values file
relative to the chart, e.g. one of its ``ci/`` files): podfit gets it through a ``.podfit.yaml``
(``helm.values``) and helm through ``--values``.

Times are the best of ``--runs`` runs. ``--trace-network`` runs each podfit check once more under
``strace -f -e trace=connect`` and counts the connect() calls to an IP address made by podfit or
anything it started (helm, kustomize): a chart whose render reaches the network shows a non-zero
count. ``--json FILE`` also writes every row (with each finding's rule, file and message) for review.
A chart file outside ``templates/`` (other than Chart.yaml, where render failures are reported) that
podfit read as a manifest or placed a finding in is counted in the "outside" column: those files are
no manifests, so it should be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PODFIT = ROOT / ".venv" / "bin" / "podfit"
_INET_CONNECT = re.compile(r"connect\(\d+, \{sa_family=AF_INET6?,")


def kube_version() -> str:
    """The release podfit renders charts for when no config names one (what ``podfit check`` passes
    as helm's ``--kube-version``)."""
    from podfit.kubeversions import LATEST

    return f"{LATEST[0]}.{LATEST[1]}.0"


def helm() -> str:
    return os.environ.get("PODFIT_HELM") or str(ROOT / ".tools" / "bin" / "helm")


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start, proc


def outside_templates(chart: str, file: str) -> bool:
    """A finding's file is one of the chart's own files but neither a template nor Chart.yaml."""
    rel = os.path.relpath(os.path.abspath(file), os.path.abspath(chart))
    if rel.startswith(".."):
        return False
    parts = rel.split(os.sep)
    # a subchart's templates are templates too: charts/NAME/templates/...
    return "templates" not in parts and parts[-1] != "Chart.yaml"


def network_connects(argv: list[str], env: dict[str, str], cwd: str) -> int:
    with tempfile.NamedTemporaryFile(suffix=".strace") as trace:
        subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=connect", "-o", trace.name, *argv],
            env=env,
            cwd=cwd,
            capture_output=True,
            check=False,
        )
        return sum(1 for line in Path(trace.name).read_text().splitlines() if _INET_CONNECT.search(line))


def check_chart(spec: str, runs: int, trace: bool, env: dict[str, str]) -> dict[str, object]:
    chart, _, values = spec.partition("=")
    cwd = tempfile.mkdtemp(prefix="podfit-charts-")  # no .podfit.yaml of this repository applies
    extra = []
    if values:
        config = {"helm": {"values": {os.path.abspath(chart): [values]}}}
        Path(cwd, ".podfit.yaml").write_text(json.dumps(config) + "\n")  # JSON is YAML
        extra = ["--values", os.path.join(os.path.abspath(chart), values)]
    version = kube_version()
    check = [str(PODFIT), "check", os.path.abspath(chart), "--format", "json", "--fail-on", "error"]
    podfit_times, helm_times = [], []
    proc = None
    for _ in range(runs):
        seconds, proc = timed(check, env, cwd)
        podfit_times.append(seconds)
        argv = [
            helm(),
            "template",
            "release-name",
            os.path.abspath(chart),
            "--skip-tests",
            "--kube-version",
            version,
            *extra,
        ]
        seconds, helm_proc = timed(argv, env, cwd)
        helm_times.append(seconds)
    assert proc is not None
    row: dict[str, object] = {
        "chart": chart,
        "values": values or None,
        "exit": proc.returncode,
        "podfit_s": min(podfit_times),
        "helm_s": min(helm_times),
        "helm_exit": helm_proc.returncode,
    }
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        row.update(objects=None, rules={}, outside=0, findings=[], error=proc.stderr.decode()[-400:])
        return row
    findings = report.get("findings", [])
    row.update(
        objects=report["summary"]["objects"],
        rules=dict(sorted(Counter(f["rule"] for f in findings).items())),
        outside=sum(1 for f in findings if outside_templates(chart, f["file"]))
        + sum(1 for f in report.get("files", []) if outside_templates(chart, f["path"])),
        findings=[{k: f.get(k) for k in ("rule", "severity", "file", "line", "message")} for f in findings],
    )
    if trace:
        row["connects"] = network_connects(check, env, cwd)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("charts", nargs="+", metavar="CHART")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--trace-network", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    env = dict(os.environ, PODFIT_HELM=helm())
    env.pop("PODFIT_CONFIG", None)
    print(f"helm template --kube-version {kube_version()}; best of {args.runs} runs", file=sys.stderr)
    rows = []
    head = f"{'chart':40} {'objects':>7} {'exit':>4} {'podfit s':>8} {'helm s':>7} {'outside':>7}"
    print(head + (" connects" if args.trace_network else "") + "  findings by rule")
    for chart in args.charts:
        row = check_chart(chart, args.runs, args.trace_network, env)
        rows.append(row)
        rules = row["rules"]
        assert isinstance(rules, dict)
        by_rule = ", ".join(f"{r} {n}" for r, n in rules.items()) or "-"
        name = "/".join(Path(chart.partition("=")[0]).parts[-2:])
        if "=" in chart:
            name += " (" + os.path.basename(chart.partition("=")[2]) + ")"
        line = (
            f"{name:40} {row['objects']!s:>7} {row['exit']!s:>4} {row['podfit_s']:8.2f} {row['helm_s']:7.2f} "
            f"{row['outside']!s:>7}"
        )
        if args.trace_network:
            line += f" {row['connects']!s:>8}"
        print(f"{line}  {by_rule}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
