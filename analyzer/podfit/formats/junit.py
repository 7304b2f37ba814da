"""JUnit XML for CI test-report views: one ``<testsuite>`` per input file.

Inside a file's suite, each object with findings is a ``<testcase>`` with one ``<failure>`` listing
them (``type`` is the worst severity, the text one line per finding); findings not tied to an object
(a file that does not parse) form a testcase named after the file. A clean file is one passing
testcase. A file podfit skipped or could not read carries a finding saying why (PF907, PF901, ...); one
that has none (an empty file) is a ``<skipped>`` testcase, or an ``<error>`` one when it failed.
"""

from __future__ import annotations

from collections import OrderedDict

from ..catalogue import load_catalogue
from ..check import Report
from ..findings import SEVERITY_RANK, Finding

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
    return f"{where}: {f.severity} {f.rule} {slug}{who}: {f.message}"


def render(report: Report, color: bool = False) -> str:
    cat = load_catalogue()
    by_file: OrderedDict[str, OrderedDict[str, list[Finding]]] = OrderedDict()
    for fr in report.files:
        by_file.setdefault(fr.path, OrderedDict())
    for f in report.findings:
        cases = by_file.setdefault(f.location.file, OrderedDict())
        key = str(f.object) if f.object is not None else f.location.file
        cases.setdefault(key, []).append(f)
    records = {fr.path: fr for fr in report.files}

    suites: list[str] = []
    total_tests = total_failures = total_errors = total_skipped = 0
    for i, (path, cases) in enumerate(by_file.items()):
        rec = records.get(path)
        body: list[str] = []
        tests = failures = errors = skipped = 0
        for name, found in cases.items():
            tests += 1
            failures += 1
            worst = max(found, key=lambda f: SEVERITY_RANK.get(f.severity, 0)).severity
            rules = ", ".join(dict.fromkeys(f.rule for f in found))
            message = f"{len(found)} finding{'s' if len(found) != 1 else ''}: {rules}"
            text = "\n".join(_line(f, cat[f.rule].slug) for f in found)
            body.append(
                f"    <testcase classname={_a(path)} name={_a(name)}>\n"
                f"      <failure type={_a(worst)} message={_a(message)}>{_t(text)}</failure>\n"
                f"    </testcase>"
            )
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
            objs = rec.objects if rec is not None else 0
            body.append(f"    <testcase classname={_a(path)} name={_a(f'{path} ({objs} objects)')}/>")
        total_tests += tests
        total_failures += failures
        total_errors += errors
        total_skipped += skipped
        suites.append(
            f'  <testsuite id="{i}" name={_a(path)} tests="{tests}" failures="{failures}" '
            f'errors="{errors}" skipped="{skipped}">\n' + "\n".join(body) + "\n  </testsuite>"
        )
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="podfit" tests="{total_tests}" failures="{total_failures}" '
        f'errors="{total_errors}" skipped="{total_skipped}">'
    )
    return "\n".join([head, *suites, "</testsuites>"]) + "\n"
