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
from .text import totals

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


def unparsed_notices(report: Report, base: str) -> list[str]:
    """A notice for each file that was not parsed and has no finding of its own (an empty file):
    every file the summary does not count as parsed shows up in the annotations."""
    flagged = {f.location.file for f in report.findings}
    return [
        f"::notice file={escape_property(relative_path(fr.path, base))},title=podfit::"
        + escape_data(f"{fr.status}: {fr.reason}")
        for fr in report.files
        if fr.status != "parsed" and fr.path not in flagged
    ]


def render(report: Report, color: bool = False, **_: object) -> str:
    base = os.getcwd()
    lines = workflow_annotations(report, base) + unparsed_notices(report, base)
    lines.append(f"podfit: {totals(report)}")
    return "\n".join(lines) + "\n"
