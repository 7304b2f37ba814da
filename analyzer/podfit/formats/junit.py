"""JUnit XML for CI test-report views, valid against the Jenkins xUnit plugin's ``junit-10.xsd``
(the schema GitLab, Jenkins and most report viewers follow): one ``<testsuite>`` per input file.

Inside a file's suite each object with findings is a ``<testcase>``; findings not tied to an object
(a file that does not parse) form a testcase named after the file. A testcase fails only on what
fails the run: its findings at or above ``--fail-on`` (default ``error``) are one ``<failure>``
(``type`` the worst severity, the text one line per finding). Findings below the threshold do not
fail the case: they are listed in a ``<system-out>`` and, when the case has no failure, mark it
``<skipped>`` with a message naming them, so a view shows them without counting them as failures.
A clean file is one passing testcase. A file podfit skipped or could not read carries a finding
saying why (PF907, PF901, ...); one that has none (an empty file) is a ``<skipped>`` testcase, or
an ``<error>`` one when it failed.

``skipped`` counts are kept on each ``<testsuite>`` only: the schema has no such attribute on
``<testsuites>``.
"""

from __future__ import annotations

from collections import OrderedDict

from ..catalogue import load_catalogue
from ..check import Report
from ..findings import SEVERITY_RANK, Finding
from .text import plural

NAME = "junit"


def _a(value: object) -> str:
    from xml.sax.saxutils import quoteattr  # here: every run lists the formats, few write JUnit

    # XML 1.0 forbids most control characters even when escaped; drop them.
    text = "".join(ch for ch in str(value) if ch in "\t\n\r" or ord(ch) >= 0x20)
    return quoteattr(text)


def _t(value: str) -> str:
    from xml.sax.saxutils import escape

    return escape("".join(ch for ch in value if ch in "\t\n\r" or ord(ch) >= 0x20))


def _line(f: Finding, slug: str) -> str:
    where = f"{f.location.file}:{f.location.line}" if f.location.line else f.location.file
    who = f" container {f.container}" if f.container else ""
    # a message that opens with its rule's slug (PF205's "right-size: ...") names it once
    name = "" if f.message.startswith(f"{slug}:") or f" {slug}:" in f.message[:80] else f" {slug}"
    return f"{where}: {f.severity} {f.rule}{name}{who}: {f.message}"


def _summary(found: list[Finding]) -> str:
    rules = ", ".join(dict.fromkeys(f.rule for f in found))
    return f"{plural(len(found), 'finding')}: {rules}"


def render(report: Report, color: bool = False, *, fail_on: str = "error", **_: object) -> str:
    cat = load_catalogue()
    threshold = SEVERITY_RANK.get(fail_on, len(SEVERITY_RANK) + 1)  # "never": nothing fails
    by_file: OrderedDict[str, OrderedDict[str, list[Finding]]] = OrderedDict()
    for fr in report.files:
        by_file.setdefault(fr.path, OrderedDict())
    for f in report.findings:
        cases = by_file.setdefault(f.location.file, OrderedDict())
        key = str(f.object) if f.object is not None else f.location.file
        cases.setdefault(key, []).append(f)
    records = {fr.path: fr for fr in report.files}

    suites: list[str] = []
    total_tests = total_failures = total_errors = 0
    for i, (path, cases) in enumerate(by_file.items()):
        rec = records.get(path)
        body: list[str] = []
        tests = failures = errors = skipped = 0
        for name, found in cases.items():
            tests += 1
            failing = [f for f in found if SEVERITY_RANK.get(f.severity, 0) >= threshold]
            below = [f for f in found if SEVERITY_RANK.get(f.severity, 0) < threshold]
            parts = [f"    <testcase classname={_a(path)} name={_a(name)}>"]
            if failing:
                failures += 1
                worst = max(failing, key=lambda f: SEVERITY_RANK.get(f.severity, 0)).severity
                text = "\n".join(_line(f, cat[f.rule].slug) for f in failing)
                parts.append(f"      <failure type={_a(worst)} message={_a(_summary(failing))}>{_t(text)}</failure>")
            elif below:
                skipped += 1
                parts.append(f"      <skipped message={_a(f'below --fail-on {fail_on}: {_summary(below)}')}/>")
            if below:
                text = "\n".join(_line(f, cat[f.rule].slug) for f in below)
                parts.append(f"      <system-out>{_t(text)}</system-out>")
            parts.append("    </testcase>")
            body.append("\n".join(parts))
        if rec is not None and rec.status == "skipped" and not cases:
            tests += 1
            skipped += 1
            body.append(
                f"    <testcase classname={_a(path)} name={_a(path)}>\n"
                f"      <skipped message={_a(rec.reason)}/>\n    </testcase>"
            )
        elif rec is not None and rec.status == "failed" and not cases:
            tests += 1
            errors += 1
            body.append(
                f"    <testcase classname={_a(path)} name={_a(path)}>\n"
                f"      <error message={_a(rec.reason)}/>\n    </testcase>"
            )
        elif not cases:
            tests += 1
            objs = plural(rec.objects if rec is not None else 0, "object")
            body.append(f"    <testcase classname={_a(path)} name={_a(f'{path} ({objs})')}/>")
        total_tests += tests
        total_failures += failures
        total_errors += errors
        suites.append(
            f'  <testsuite id="{i}" name={_a(path)} tests="{tests}" failures="{failures}" '
            f'errors="{errors}" skipped="{skipped}">\n' + "\n".join(body) + "\n  </testsuite>"
        )
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="podfit" tests="{total_tests}" failures="{total_failures}" errors="{total_errors}">'
    )
    return "\n".join([head, *suites, "</testsuites>"]) + "\n"
