"""SARIF 2.1.0 (``schemas/sarif-2.1.0.json``), for GitHub code scanning and other SARIF viewers.

Every catalogue rule is listed in ``tool.driver.rules`` (id, slug as name, title and summary as
descriptions, the ``podfit explain`` text as help, a help URI, the default level); each finding is a
result pointing at its rule by id and index, with a location relative to the current directory.
"""

from __future__ import annotations

import os
from typing import Any

from ..catalogue import Rule, load_catalogue
from ..check import Report
from ..docs import explain
from ._paths import artifact_uri
from .json_report import _jsonable

NAME = "sarif"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/podfit/podfit"

# podfit severity -> SARIF level
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    text = explain(rule)
    return {
        "id": rule.id,
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.summary},
        "help": {"text": text, "markdown": text},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"category": rule.category, "engine": rule.engine, "tags": ["podfit", rule.category]},
    }


def sarif_log(report: Report, base: str) -> dict[str, Any]:
    """The SARIF log as a dict; file URIs are made relative to ``base``."""
    cat = load_catalogue()
    ids = sorted(cat)
    index = {rid: i for i, rid in enumerate(ids)}
    results = []
    states = [(f, "new") for f in report.findings] + [(f, "unchanged") for f in report.baselined]
    if report.baseline is not None:  # the findings in the file order, each marked
        states.sort(key=lambda fs: fs[0].sort_key())
    for f, state in states:
        region: dict[str, Any] = {}
        if f.location.line:
            region["startLine"] = f.location.line
            if f.location.column:
                region["startColumn"] = f.location.column
        physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(f.location.file, base)}}
        if region:
            physical["region"] = region
        location: dict[str, Any] = {"physicalLocation": physical}
        if f.object is not None:
            name = str(f.object) + (f" container {f.container}" if f.container else "")
            location["logicalLocations"] = [{"name": name, "kind": "object"}]
        subject = ""
        if f.object is not None:
            subject = f"{f.object}" + (f" container {f.container}" if f.container else "") + ": "
        props: dict[str, Any] = {"severity": f.severity}
        if f.object is not None:
            props["object"] = f.object.to_json()
        if f.container:
            props["container"] = f.container
        if f.details:
            props["details"] = _jsonable(dict(f.details))
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": subject + f.message},
            "locations": [location],
            "properties": props,
        }
        if report.baseline is not None:
            result["baselineState"] = state
            if state == "unchanged":  # accepted by the baseline file: a viewer may hide it
                result["suppressions"] = [{"kind": "external", "justification": f"in the baseline {report.baseline}"}]
        results.append(result)
    notifications = [
        {"level": "note", "message": {"text": f"{rid} skipped: needs {why}"}, "descriptor": {"id": rid}}
        for rid, why in report.skipped_rules
    ]
    notifications += [
        {
            "level": "warning" if fr.status == "skipped" else "error",
            "message": {"text": f"{fr.status}: {fr.path}: {fr.reason}"},
        }
        for fr in report.files
        if fr.status != "parsed"
    ]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "podfit",
                        "version": report.version,
                        "semanticVersion": report.version,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule_descriptor(cat[rid]) for rid in ids],
                    }
                },
                "invocations": [invocation],
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "platform": report.platform.name,
                    "platformDefault": report.platform.is_default,
                    "runtime": report.platform.runtime,
                    "objects": report.objects,
                },
            }
        ],
    }


def render(report: Report, color: bool = False, **_: object) -> str:
    import json

    return json.dumps(sarif_log(report, os.getcwd()), indent=2) + "\n"
