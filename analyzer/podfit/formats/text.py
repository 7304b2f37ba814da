"""Human text, in the manner of ruff and kube-linter: the findings grouped by file, one line each
(line, severity, rule id, object, message), each rule's fix once after them, then a short footer.

::

    deploy/web.yaml
      16  error    PF101  Deployment shop/web: container "web" sets no CPU request

    fix PF101 cpu-request-missing: Set resources.requests.cpu to the CPU the container needs ...
    (podfit explain ID tells why and shows an example)

    platform: built-in default (...), runtime tkg; engine: embedded
    3 rules skipped for want of runtime vsphere-pods (spec.runtime); --verbose lists them
    1 file, 1 object: 1 error, 0 warnings, 0 info

A file that was not parsed and has no finding of its own (an empty file) gets a line of its own.
``quiet`` keeps the findings and the totals line; ``verbose`` lists the skipped rules and files
one per line; ``show_fixes`` prints the fix under every finding instead of once per rule.
"""

from __future__ import annotations

import re
import textwrap
from itertools import groupby

from .. import words
from ..catalogue import load_catalogue
from ..check import Report
from ..findings import Finding
from ..platform import Platform

NAME = "text"

_COLORS = {"error": "31", "warning": "33", "info": "36", "dim": "2", "bold": "1", "ok": "32"}


def _c(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_COLORS[style]}m{text}\x1b[0m" if color else text


def plural(n: int, word: str) -> str:
    """``1 error``, ``2 errors``, ``1,200 objects``; ``info`` is a mass noun."""
    return words.plural(n, word)


LINE_LIMIT = words.LINE_LIMIT  # characters of a finding's line; the whole message is in -v, JSON and SARIF
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def headline(message: str, room: int) -> str:
    """The message in at most ``room`` characters: whole when it fits, else as many of its
    sentences as fit, else its first sentence cut after a word and ended with "…"."""
    if len(message) <= room:
        return message
    taken = ""
    for sentence in _SENTENCE_END.split(message):
        more = f"{taken} {sentence}" if taken else sentence
        if len(more) > room:
            break
        taken = more
    if taken:
        return taken
    cut = message[: room - 1]
    space = cut.rfind(" ")
    if space > room // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:(") + "…"


def platform_source(plat: Platform) -> str:
    """Where the platform comes from: its file, or what the built-in default is."""
    return "built-in default (4 hosts × 2 × 16 cores, 2,300 MHz, HA 1)" if plat.is_default else plat.source


def subject(f: Finding) -> str:
    """Who the finding is about, naming each thing once: the container is left out when the
    message already names it (``container "web" sets no CPU request``)."""
    if f.object is None:
        return ""
    who = str(f.object)
    if f.container and f'container "{f.container}"' not in f.message:
        who += f", container {f.container}"
    return who + ": "


def _where(f: Finding) -> str:
    if not f.location.line:
        return "-"
    return f"{f.location.line}" + (f":{f.location.column}" if f.location.column else "")


def _skipped_line(report: Report, color: bool) -> str:
    """The skipped rules in one line: what they want (the words before the hint's colon), the most
    wanted first, each with the platform fields or manifests that give it."""
    wants: dict[str, list[str]] = {}
    for _, why in report.skipped_rules:
        want = re.sub(r" in the platform.*", "", why.split(":")[0])
        sources = wants.setdefault(want, [])
        for source in re.findall(r"spec\.\w+", why) + (
            ["a TanzuKubernetesCluster"] if "TanzuKubernetesCluster" in why else []
        ):
            if source not in sources:
                sources.append(source)
    count = {w: sum(1 for _, why in report.skipped_rules if why.startswith(w)) for w in wants}
    parts = [
        w + (f" ({' or '.join(src)})" if src else "") for w, src in sorted(wants.items(), key=lambda kv: -count[kv[0]])
    ]
    text = f"{plural(len(report.skipped_rules), 'rule')} skipped for want of {', '.join(parts)}; --verbose lists them"
    return _c(text, "dim", color)


def totals(report: Report, color: bool = False) -> str:
    """``3 files (1 skipped), 6 objects: 2 errors, 1 warning, 1 info (1 suppressed)``."""
    files = report.files
    unparsed = [
        f"{n:,} {status}" for status in ("skipped", "failed") if (n := sum(1 for f in files if f.status == status))
    ]
    head = plural(len(files), "file") + (f" ({', '.join(unparsed)})" if unparsed else "")
    head += f", {plural(report.objects, 'object')}: "
    if not report.findings:
        counts = _c("no findings", "ok", color)
    else:
        counts = ", ".join(
            _c(plural(n, s), s, color) if n else plural(n, s)
            for s in ("error", "warning", "info")
            for n in [report.count(s)]
        )
    notes = [f"{report.suppressed:,} suppressed"] if report.suppressed else []
    if report.baseline is not None:
        notes.append(f"{len(report.baselined):,} baselined in {report.baseline}")
    return head + counts + (f" ({', '.join(notes)})" if notes else "")


def render(
    report: Report,
    color: bool = False,
    *,
    show_fixes: bool = False,
    quiet: bool = False,
    verbose: bool = False,
    **_: object,
) -> str:
    cat = load_catalogue()
    out: list[str] = []
    width = max((len(_where(f)) for f in report.findings), default=1)
    shortened = 0
    for file, group in groupby(report.findings, key=lambda f: f.location.file):
        out.append(_c(file, "bold", color))
        for f in group:
            head = f"  {_where(f):>{width}}  {f.severity.ljust(7)}  {f.rule}  {subject(f)}"
            message = headline(f.message, max(LINE_LIMIT - len(head), 40))
            out.append(
                f"  {_where(f):>{width}}  {_c(f.severity.ljust(7), f.severity, color)}  {f.rule}  {subject(f)}{message}"
            )
            if message != f.message:
                shortened += 1
                if verbose:  # the whole message below its line, wrapped
                    indent = " " * (width + 4)
                    out.extend(textwrap.wrap(f.message, LINE_LIMIT, initial_indent=indent, subsequent_indent=indent))
            if show_fixes:
                out.append(_c(f"  {'':>{width}}  fix: {cat[f.rule].fix}", "dim", color))
        out.append("")
    if not quiet and not show_fixes and report.findings:
        for rid in sorted({f.rule for f in report.findings}):
            rule = cat[rid]
            out.append(f"fix {rid} {_c(rule.slug, 'dim', color)}: {rule.fix}")
        out.append(_c("(podfit explain ID tells why and shows an example)", "dim", color))
        if shortened and not verbose:
            cut = f"({plural(shortened, 'message')} cut to one line; -v or --format json shows them whole)"
            out.append(_c(cut, "dim", color))
        out.append("")
    if not quiet:
        plat = report.platform
        out.append(
            f"platform: {platform_source(plat)}, runtime {plat.runtime}"
            + (f"; engine: {report.engine}" if report.engine else "")
        )
        if report.node_pools:
            out.append("node pools: " + "; ".join(report.node_pools))
        # a finding answers for the files its details name too (one PF908 for a chart's templates)
        flagged = {f.location.file for f in report.findings} | {
            str(x) for f in report.findings for x in f.details.get("files", ())
        }
        for record in report.files:  # a file not parsed shows once: by its finding, else here
            if record.status != "parsed" and (verbose or record.path not in flagged):
                out.append(_c(f"{record.status}: {record.path}: {record.reason}", "dim", color))
        if verbose:
            for path, why in report.excluded:  # what the path selection left out, and why
                out.append(_c(f"left out: {path}: {why}", "dim", color))
            for record in report.files:  # read, but holding no object (Helm values, CI configs)
                if record.status == "parsed" and not record.objects and not record.reason:
                    why = "no Kubernetes object (no document with a kind)"
                    out.append(_c(f"left out: {record.path}: {why}", "dim", color))
            if report.skipped_rules:
                out.append(f"{plural(len(report.skipped_rules), 'rule')} skipped for want of facts:")
                for rid, why in report.skipped_rules:
                    out.append(_c(f"  {rid} {cat[rid].slug}: needs {why}", "dim", color))
        elif report.skipped_rules:
            out.append(_skipped_line(report, color))
    out.append(totals(report, color))
    return "\n".join(out) + "\n"
