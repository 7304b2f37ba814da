"""A baseline: the findings a repository accepts for now, so that a check fails only on new ones
(``podfit check --write-baseline FILE``, then ``--baseline FILE``). Pure: the CLI reads and
writes the file.

A finding is known by its fingerprint: the rule, the object (API group, kind, namespace, name),
the container, and the message with file paths and line numbers taken out (the message's facts:
the values it names). Moving lines, renaming or moving files, and reordering documents keep a
finding's fingerprint; changing what it is about (another value, another object) makes it new.

The file is JSON, written sorted and with sorted keys, so the same findings always give the same
bytes and a change to the baseline diffs line by line::

    {
      "findings": [
        {"container": "web", "fingerprint": "…", "message": "…", "object": "Deployment shop/web", "rule": "PF101"},
        …
      ],
      "podfit-baseline": 1
    }

The same fingerprint may appear several times (identical findings on copies of an object): each
entry accepts one finding.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .check import Report
from .findings import Finding
from .reading import json_value

__all__ = ["BaselineError", "FORMAT_VERSION", "fingerprint", "baseline_text", "parse_baseline", "apply_baseline"]

FORMAT_VERSION = 1


class BaselineError(ValueError):
    """A baseline file that is not one (the CLI exits 2 naming it)."""


# a path of a manifest or values file, with an optional :LINE[:COLUMN]
_PATH = re.compile(r"(?:[\w.@~+-]*/)*[\w.@~+-]+\.(?:ya?ml|json)(?::\d+(?::\d+)?)?", re.IGNORECASE)
_LINE = re.compile(r"\b(lines?|column) \d+(?:[-–]\d+)?")


def message_key(message: str, files: Iterable[str] = ()) -> str:
    """The message without the paths and line numbers in it."""
    for path in sorted(set(files), key=len, reverse=True):  # the inputs' own names, however spelled
        if path and len(path) > 2:
            message = message.replace(path, "<file>")
    message = _PATH.sub("<file>", message)
    return _LINE.sub(r"\1 <n>", message)


def fingerprint(f: Finding, files: Iterable[str] = ()) -> str:
    """The finding's fingerprint (32 hex digits): what it is about, not where it stands."""
    obj = f.object
    group = obj.api_version.rpartition("/")[0] if obj is not None else ""
    parts = [
        f.rule,
        group,
        obj.kind if obj is not None else "",
        obj.namespace if obj is not None else "",
        obj.name if obj is not None else "",
        f.container or "",
        message_key(f.message, files),
    ]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]


def _files(report: Report) -> list[str]:
    return [r.path for r in report.files]


def baseline_text(report: Report) -> str:
    """The baseline of every finding in the report (the new ones and those already baselined)."""
    files = _files(report)
    entries = [
        {
            "fingerprint": fingerprint(f, files),
            "rule": f.rule,
            "object": str(f.object) if f.object is not None else None,
            "container": f.container,
            "message": message_key(f.message, files),
        }
        for f in (*report.findings, *report.baselined)
    ]
    entries.sort(key=lambda e: (e["fingerprint"], e["rule"], e["object"] or "", e["message"]))
    doc = {"podfit-baseline": FORMAT_VERSION, "findings": entries}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def parse_baseline(text: str) -> Counter[str]:
    """The fingerprints of a baseline file's text and how many findings each accepts."""
    try:
        doc: Any = json_value(text)
    except ValueError as e:
        raise BaselineError(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("podfit-baseline") != FORMAT_VERSION:
        raise BaselineError(
            f'not a podfit baseline (expected an object with "podfit-baseline": {FORMAT_VERSION}); '
            "write one with --write-baseline"
        )
    entries = doc.get("findings")
    if not isinstance(entries, list):
        raise BaselineError('"findings" is not a list')
    out: Counter[str] = Counter()
    for i, entry in enumerate(entries):
        fp = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(fp, str) or not re.fullmatch(r"[0-9a-f]{32}", fp):
            raise BaselineError(f"findings[{i}]: no fingerprint of 32 hex digits")
        out[fp] += 1
    return out


def apply_baseline(report: Report, accepted: Counter[str], source: str) -> Report:
    """The report with the findings the baseline accepts moved to ``baselined``: its findings are
    the new ones only (what the exit status and every format but SARIF look at)."""
    files = _files(report)
    left = Counter(accepted)
    new: list[Finding] = []
    known: list[Finding] = []
    for f in report.findings:
        fp = fingerprint(f, files)
        if left[fp] > 0:
            left[fp] -= 1
            known.append(f)
        else:
            new.append(f)
    return replace(report, findings=tuple(new), baselined=tuple(known), baseline=source)
