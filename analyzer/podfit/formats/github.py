"""GitHub Actions workflow commands: one annotation per finding, then a plain summary line.

``::error file=deploy.yaml,line=12,title=PF101 cpu-request-missing::message`` — info findings
become ``::notice``. Values are escaped as the Actions runner expects: ``%``, CR and LF in the
message; additionally ``:`` and ``,`` in properties.
"""

from __future__ import annotations

import os

from ..catalogue import load_catalogue
from ..check import Report
from ._paths import relative_path

NAME = "github"
COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_annotations(report: Report, base: str) -> list[str]:
    cat = load_catalogue()
    out = []
    for f in report.findings:
        props = [f"file={escape_property(relative_path(f.location.file, base))}"]
        if f.location.line:
            props.append(f"line={f.location.line}")
            if f.location.column:
                props.append(f"col={f.location.column}")
        props.append(f"title={escape_property(f'{f.rule} {cat[f.rule].slug}')}")
        subject = ""
        if f.object is not None:
            subject = f"{f.object}" + (f" container {f.container}" if f.container else "") + ": "
        message = f"{subject}{f.message}\nfix: {cat[f.rule].fix}"
        out.append(f"::{COMMANDS.get(f.severity, 'warning')} {','.join(props)}::{escape_data(message)}")
    return out


def render(report: Report, color: bool = False) -> str:
    lines = workflow_annotations(report, os.getcwd())
    e, w, i = report.count("error"), report.count("warning"), report.count("info")
    lines.append(
        f"podfit: {len(report.files)} files, {report.objects} objects: "
        f"{e} errors, {w} warnings, {i} info" + (f" ({report.suppressed} suppressed)" if report.suppressed else "")
    )
    return "\n".join(lines) + "\n"
