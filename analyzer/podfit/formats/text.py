"""Human text: findings grouped by file with line numbers, fix hints and a summary."""

from __future__ import annotations

from itertools import groupby

from ..catalogue import load_catalogue
from ..check import Report

NAME = "text"

_COLORS = {"error": "31", "warning": "33", "info": "36", "dim": "2", "bold": "1", "ok": "32"}


def _c(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_COLORS[style]}m{text}\x1b[0m" if color else text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render(report: Report, color: bool = False) -> str:
    cat = load_catalogue()
    out: list[str] = []
    for file, group in groupby(report.findings, key=lambda f: f.location.file):
        out.append(_c(file, "bold", color))
        for f in group:
            rule = cat[f.rule]
            where = (
                f"{f.location.line}" + (f":{f.location.column}" if f.location.column else "")
                if f.location.line
                else "-"
            )
            subject = ""
            if f.object is not None:
                subject = f"{f.object}" + (f" container {f.container}" if f.container else "") + ": "
            out.append(
                f"  {where:>7}  {_c(f.severity.ljust(7), f.severity, color)}  "
                f"{f.rule} {_c(rule.slug, 'dim', color)}  {subject}{f.message}"
            )
            out.append(_c(f"{'':>11}fix: {rule.fix}", "dim", color))
        out.append("")
    files = report.files
    parsed = sum(1 for f in files if f.status == "parsed")
    skipped = [f for f in files if f.status == "skipped"]
    failed = [f for f in files if f.status == "failed"]
    line = f"{_plural(len(files), 'file')} ({parsed} parsed"
    if skipped:
        line += f", {len(skipped)} skipped"
    if failed:
        line += f", {len(failed)} failed"
    line += f"), {_plural(report.objects, 'object')}"
    out.append(line)
    for record in skipped + failed:
        out.append(_c(f"  {record.status}: {record.path}: {record.reason}", "dim", color))
    plat = report.platform
    desc = "built-in default (4 hosts × 2 × 16 cores, 2,300 MHz, HA 1)" if plat.is_default else plat.source
    out.append(f"platform: {desc}, runtime {plat.runtime}" + (f"; engine: {report.engine}" if report.engine else ""))
    out.append(
        "node pools: "
        + (
            "; ".join(report.node_pools)
            if report.node_pools
            else "none (give them in the platform or a TanzuKubernetesCluster)"
        )
    )
    if report.skipped_rules:
        out.append(f"{_plural(len(report.skipped_rules), 'rule')} skipped for want of facts:")
        for rid, why in report.skipped_rules:
            out.append(_c(f"  {rid} {cat[rid].slug}: needs {why}", "dim", color))
    e, w, i = report.count("error"), report.count("warning"), report.count("info")
    if not report.findings:
        summary = _c("no findings", "ok", color)
    else:
        parts = [
            _c(_plural(e, "error"), "error", color) if e else "0 errors",
            _c(_plural(w, "warning"), "warning", color) if w else "0 warnings",
            f"{i} info",
        ]
        summary = ", ".join(parts)
    if report.suppressed:
        summary += f" ({report.suppressed} suppressed)"
    out.append(summary)
    return "\n".join(out) + "\n"
