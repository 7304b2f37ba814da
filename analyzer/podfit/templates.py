"""Inputs that are not manifests yet: unrendered Go/Helm templates (PF908) and what a renderer
reads (PF909: a kustomization, a chart's Chart.yaml, values files and dependencies), each with the
command that renders it. The loader skips such a file and reports what this module finds; a chart
whose templates were given unrendered becomes one finding (:func:`per_chart`). Pure, except that
:func:`_chart_input` looks for the Chart.yaml beside or above a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Protocol

from .findings import Finding
from .kustomize import KUSTOMIZATION_NAMES
from .model import Location

__all__ = ["per_chart", "per_kustomization", "unrendered", "ChartFile", "chart_root", "chart_of_file"]


class ChartFile(Protocol):
    """An input file as far as rendering goes: its path and the chart whose input it is, if any."""

    @property
    def path(self) -> str: ...

    @property
    def chart(self) -> str | None: ...


def _chart_above(path: str, levels: int = 3) -> str | None:
    """The directory with a Chart.yaml that holds ``path``: its own or one of the next two above
    (a chart's values.yaml, ci/values-*.yaml, environments/prod/values.yaml)."""
    here = os.path.dirname(path)
    for _ in range(levels):
        if os.path.isfile(os.path.join(here, "Chart.yaml")):
            return here or "."
        if not here or here == os.path.dirname(here):
            break
        here = os.path.dirname(here)
    return None


# Files of a chart, outside templates/ and crds/, that are Helm's inputs rather than manifests:
# values files by any name holding "values" (values-prod.yaml, ci/prod-values.yaml), everything
# under ci/ (chart-testing's values), and Helm 2's requirements.yaml. Other files beside a chart
# (a committed `helm template` output) are read as manifests.
_VALUES_NAME = re.compile(r"(?i)values[^/]*\.ya?ml$")


def _chart_input(path: str) -> str | None:
    """The chart directory of ``path`` when it is one of that chart's inputs (see _VALUES_NAME)."""
    name = os.path.basename(path)
    if not name.lower().endswith((".yaml", ".yml")) or name == "Chart.yaml":
        return None
    chart = _chart_above(path)
    if chart is None:
        return None
    rel = os.path.relpath(path, chart).replace(os.sep, "/").split("/")
    if rel[0] in ("templates", "crds", "charts"):
        return None
    if _VALUES_NAME.search(name) or rel[0] == "ci" or (len(rel) == 1 and name == "requirements.yaml"):
        return chart
    return None


# ------------------------------------------------------------------- unrendered templates ---
# Rendered manifests may keep `{{ … }}` in string values that another program fills in later
# (Prometheus and Alertmanager annotations, Argo Workflows parameters, ApplicationSet generators), so
# braces alone do not make a template. A file is an unrendered Go/Helm template when an action
# - names Helm's built-in objects or functions (`.Values`, `.Release`, `include`, `toYaml`, …), or
# - is the value of a field read as a number, quantity or type (`cpu: "{{ … }}"`, `replicas: {{ … }}`), or
# - stands where a YAML node starts (`name: {{ … }}`, `{{- end }}` on its own line) and the YAML does
#   not parse (`{{ x }}` is a flow mapping keyed by a mapping, which YAML loaders refuse): the template
#   broke the structure, or
# - stands in the object's own name, namespace or labels, which cannot hold braces.
# Comments and the contents of block scalars (`key: |`) are text, not structure (Helm names excepted).

_HELM_NAMES = re.compile(
    r"\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|\b(?:include|tpl|toYaml|fromYaml|nindent|required|lookup)\b"
)
_TYPED_ACTION = re.compile(
    r"(?:^|[\s{,])(?:cpu|memory|ephemeral-storage|replicas|parallelism|completions|apiVersion|kind)\s*:\s*[\"']?\{\{"
)
_NODE_ACTION = re.compile(r"(?:^|:\s|-\s|[\[{,])\s*\{\{")
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'")
_COMMENT = re.compile(r"(?:^|\s)#")
_BLOCK_SCALAR = re.compile(r"(?:^|\s)[|>][0-9+-]*\s*$")


def _blank_quoted(m: re.Match[str]) -> str:
    return m.group(0)[0] + "_" * (len(m.group(0)) - 2) + m.group(0)[-1]


def _actions(line: str, start: int = 0) -> Iterator[str]:
    """The actions of a line from ``start`` on, `{{ … }}` (the last may run on to the next line), at
    most 300 characters of each: one pass over the line, however many braces it holds."""
    pos = line.find("{{", start)
    while pos >= 0:
        end = line.find("}}", pos + 2)
        if end < 0:
            yield line[pos : pos + 300]
            return
        yield line[pos : min(end + 2, pos + 300)]
        pos = line.find("{{", end + 2)


def _template_evidence(text: str, broken: bool, blocks: bool = True) -> tuple[int, str] | None:
    """The line and action that show ``text`` to be an unrendered Go/Helm template, or None.
    ``broken``: the YAML did not parse, so an action where a node starts counts too. ``blocks``:
    actions inside block scalars count; without it they are string data (a rendered Istio install
    carries its sidecar injection template, `.Values` and all, in a ConfigMap)."""
    block = -1  # indentation of the line that opened the block scalar we are in; -1: none
    at_node = None
    for n, line in enumerate(text.splitlines(), 1):
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        in_block = block >= 0 and (not body.strip() or indent > block)
        if not in_block:
            block = -1
        if "{{" not in line and "|" not in line and ">" not in line:
            continue  # neither an action nor a block scalar's start
        plain = _QUOTED.sub(_blank_quoted, line) if ("'" in line or '"' in line) else line
        comment = _COMMENT.search(plain)
        if comment is not None:
            plain, line = plain[: comment.start()], line[: comment.start()]
        if "{{" in line and (blocks or not in_block):
            hit = next((a for a in _actions(line) if _HELM_NAMES.search(a)), None)
            if hit is None and not in_block:
                typed = _TYPED_ACTION.search(line)
                hit = next(_actions(line, typed.end() - 2)) if typed is not None else None
            if hit is not None:
                return n, hit
            if broken and at_node is None and not in_block:
                node = _NODE_ACTION.search(plain)
                if node is not None:
                    at_node = (n, next(_actions(line, node.end() - 2)))
        if not in_block and _BLOCK_SCALAR.search(plain):
            block = indent
    return at_node


def _templated_identity(doc: Any) -> tuple[int, str] | None:
    """The line and action of a `{{ … }}` in the document's own name, namespace or labels: Kubernetes
    names and label values cannot hold braces, so no rendered manifest has one there."""
    data = doc.data
    meta = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return None
    labels = meta.get("labels")
    fields: list[tuple[tuple[str, ...], Any]] = [
        (("metadata", k), meta.get(k)) for k in ("name", "namespace", "generateName")
    ]
    if isinstance(labels, dict):
        fields += [(("metadata", "labels", k), f"{k} {v}") for k, v in labels.items() if isinstance(k, str)]
    for path, value in fields:
        if isinstance(value, str) and "{{" in value:
            return doc.lines.line(path, doc.line) if doc.lines is not None else doc.line, next(_actions(value))
    return None


def _chart_of(path: str) -> str | None:
    """The chart directory of a file under a Helm chart's templates/ directory, from its path alone."""
    parts = path.replace(os.sep, "/").split("/")
    if "templates" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("templates")
        return "/".join(parts[:i]) or "."
    return None


def unrendered(path: str, chart: str | None, evidence: tuple[int, str]) -> tuple[Finding, str]:
    """PF908 for a file that is an unrendered template (``evidence``: the line and action that show
    it), and the reason the file was skipped. ``chart``: the chart directory it belongs to, if any."""
    line, action = evidence
    if len(action) > 60:
        action = action[:57] + "..."
    # outside a chart the placeholders may be another tool's ({{replicas}} for a sed or envsubst step)
    render = (
        f"helm template {chart} | podfit check -"
        if chart is not None
        else "<the tool that fills its placeholders, e.g. helm template CHART> | podfit check -"
    )
    finding = Finding(
        rule="PF908",
        message=f"unrendered Go/Helm template {action}: the file is not checked; render it first: {render}",
        location=Location(path, line, 0),
        details={"action": action, "render": render, "chart": chart},
    )
    return finding, f"unrendered Go/Helm template (line {line}): render it first: {render}"


_VALUES_FILE = re.compile(r"values[^/]*\.ya?ml$")


def _render_first(f: ChartFile) -> tuple[str, str] | None:
    """What a kustomization, a Chart.yaml or a chart's values file is, and the command that renders
    the manifests it stands for; None for any other file."""
    path = f.path.replace(os.sep, "/")
    where, _, name = path.rpartition("/")
    where = where or "."
    if name in KUSTOMIZATION_NAMES:
        return "a Kustomize kustomization", f"kustomize build {where} | podfit check -"
    if name == "Chart.yaml":
        return "a Helm chart's Chart.yaml", f"helm template {where} | podfit check -"
    if f.chart is not None and name == "requirements.yaml":
        return f"Helm dependencies of the chart {f.chart}", f"helm template {f.chart} | podfit check -"
    if f.chart is not None or _VALUES_FILE.match(name):
        chart = f.chart
        parts = path.split("/")
        if chart is None and "charts" in parts[:-2]:  # charts/NAME/…/values*.yaml
            i = len(parts) - 1 - parts[::-1].index("charts")
            chart = "/".join(parts[: i + 2]) if i + 2 < len(parts) else None
        if chart is not None:
            values = "" if path == f"{chart}/values.yaml" or (chart == "." and path == "values.yaml") else f" -f {path}"
            return f"Helm values of the chart {chart}", f"helm template {chart}{values} | podfit check -"
    return None


def per_chart(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """One cause, one finding: a chart whose templates were given unrendered gets one PF908 at its
    first template (by file), naming how many were not checked; the PF909 that only repeats its
    render command (Chart.yaml, the default values.yaml) goes. A values file that renders another
    variant (``-f``) keeps its PF909."""
    charts: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule == "PF908" and f.details.get("chart") is not None:
            charts.setdefault(str(f.details["chart"]), []).append(f)
    if not charts:
        return findings
    renders = {str(fs[0].details["render"]): chart for chart, fs in charts.items()}
    repeats: dict[str, list[str]] = {}  # chart → files whose PF909 only repeats its render command
    for f in findings:
        if f.rule == "PF909" and f.details.get("render") in renders:
            repeats.setdefault(renders[str(f.details["render"])], []).append(f.location.file)
    folded: dict[int, Finding] = {}
    dropped: set[int] = set()
    for chart, fs in charts.items():
        first = min(fs, key=lambda f: (f.location.file, f.location.line))
        templates = sorted({f.location.file for f in fs})
        message = first.message
        if len(templates) > 1:
            message = (
                f"unrendered Helm chart {chart}: {len(templates)} templates not checked (this one from "
                f"{first.details['action']}); render it first: {first.details['render']}"
            )
        # the files this finding answers for: the text report lists no other line for them
        files = sorted(set(templates) | set(repeats.get(chart, ())))
        folded[id(first)] = replace(first, message=message, details={**first.details, "files": files})
        dropped.update(id(f) for f in fs if f is not first)
    return tuple(
        folded.get(id(f), f)
        for f in findings
        if id(f) not in dropped and not (f.rule == "PF909" and f.details.get("render") in renders)
    )


def per_kustomization(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """One cause, one finding: a kustomization not built (its PF908) answers for its patches,
    whose PF909 would only repeat its build command; they go, named in its ``files``."""
    renders = {
        str(f.details["render"]): i
        for i, f in enumerate(findings)
        if f.rule == "PF908" and f.details.get("kustomization") is not None
    }
    findings = tuple(
        _base_not_built(f)
        if f.rule == "PF909" and "built_by" in f.details and f.details["render"] not in renders
        else f
        for f in findings
    )
    if not renders:
        return findings
    files: dict[int, list[str]] = {}
    for f in findings:
        if f.rule == "PF909" and f.details.get("render") in renders:
            files.setdefault(renders[str(f.details["render"])], []).append(f.location.file)
    out = []
    for i, f in enumerate(findings):
        if f.rule == "PF909" and f.details.get("render") in renders:
            continue
        if i in files:
            f = replace(f, details={**f.details, "files": sorted({f.location.file, *files[i]})})
        out.append(f)
    return tuple(out)


def _base_not_built(f: Finding) -> Finding:
    """A base whose outer kustomization podfit gives whole (no PF908 to answer for it) but which
    itself needs kustomize: not checked, so an error of its own."""
    return replace(
        f,
        rule="PF908",
        message=f"kustomization {os.path.dirname(f.location.file) or '.'} not built: kustomize is not installed "
        f"(or PODFIT_KUSTOMIZE=off), and this base of {f.details['built_by']} needs it; {f.details['render']}",
    )


def chart_of_file(path: str) -> str | None:
    """The chart directory holding ``path`` anywhere below it, or the chart ``path`` is (a subchart
    vendored under a chart's ``charts/`` belongs to that chart), or None."""
    here = os.path.abspath(path) if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    found = None
    for _ in range(12):
        if os.path.isfile(os.path.join(here, "Chart.yaml")):
            found = here
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    while found is not None:
        parent = os.path.dirname(found)
        if os.path.basename(parent) == "charts" and os.path.isfile(os.path.join(os.path.dirname(parent), "Chart.yaml")):
            found = os.path.dirname(parent)
        else:
            break
    return found


def chart_root(path: str) -> str | None:
    """The chart a path is helm's input of: a chart directory itself, or the chart (see
    :func:`chart_of_file`) of a file helm reads to render it (templates, vendored charts, CRDs,
    chart-testing's ci/ values, Chart.yaml and its lock, values files); None for anything else,
    the other files of a chart included (:func:`chart_of_file` finds those)."""
    found = chart_of_file(path)
    if found is None or os.path.isdir(path):
        return found
    rel = os.path.relpath(os.path.abspath(path), found).split(os.sep)
    name = rel[-1]
    if (
        rel[0] in ("templates", "charts", "crds", "ci")
        or (len(rel) == 1 and name in ("Chart.yaml", "Chart.lock", "requirements.yaml"))
        # values files of the chart's variants (environments/prod/values.yaml), not a test suite's
        or (rel[0] != "tests" and _HELM_READS_VALUES.search(name))
    ):
        return found
    return None


_HELM_READS_VALUES = re.compile(r"(?i)values[^/]*\.(?:ya?ml|json)$")
