"""From paths to the model: files → documents → :class:`K8sObject` → :class:`Workload`.

``read_inputs`` does the I/O (files, directories, stdin). Everything after it is pure:
``parse_file`` turns one file's bytes into objects and findings, ``build_workloads`` applies the
Kubernetes semantics (LimitRange defaults, request = limit, replicas) across all objects.
Every object, container and finding carries the file and line it comes from.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from .findings import Finding
from .kustomize import Layer, layers_for
from .kustomize import applies_whole as kustomize_applies_whole
from .kustomize import apply as kustomize_apply
from .kustomize import local as kustomize_local
from .model import (
    WORKLOAD_KINDS,
    Container,
    K8sObject,
    Location,
    ObjectRef,
    PodSpec,
    Resources,
    Workload,
)
from .quantity import QuantityError, format_cpu, format_memory, parse_cpu, parse_memory
from .scheduling import constraints_from_spec
from .yamlio import YamlLimitError, YamlLimits, iter_documents, line_of

__all__ = [
    "LoaderLimits",
    "InputFile",
    "FileRecord",
    "ParsedFile",
    "LoadResult",
    "InputError",
    "discover",
    "read_inputs",
    "read_files",
    "parse_file",
    "load",
    "build_workloads",
    "flat_items",
    "limit_range_defaults",
    "LimitRangeDefaults",
    "LimitRangeConstraint",
    "limit_range_constraints",
    "limit_range_violations",
    "nothing_found",
]

YAML_SUFFIXES = (".yaml", ".yml", ".json")
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
STDIN = "-"
STDIN_NAME = "<stdin>"


class InputError(Exception):
    """A path given on the command line that cannot be used (exit 2)."""


@dataclass(frozen=True)
class LoaderLimits:
    max_file_bytes: int = 64 * 2**20
    yaml: YamlLimits = field(default_factory=YamlLimits)


@dataclass(frozen=True)
class InputFile:
    """One input's bytes, or the reason it could not be read."""

    path: str
    data: bytes | None
    error: str | None = None  # could not be read at all (permissions, vanished, …)
    skip: str | None = None  # deliberately not parsed (too large, binary, symlink loop)
    chart: str | None = None  # the Helm chart directory of a values file (Chart.yaml beside or above it)
    patch_of: str | None = None  # the kustomization that uses this file as a patch (not a manifest)
    patch_commented: bool = False  # that kustomization names it in a commented-out patch entry only
    # what `kustomize build` of the kustomizations listing this file as a resource does to its objects
    kustomize: tuple[Layer, ...] = ()
    # a kustomization whose whole build podfit gives its resources (podfit.kustomize): nothing to render
    applied: bool = False


@dataclass(frozen=True)
class FileRecord:
    """The summary's account of one file."""

    path: str
    status: str  # "parsed" | "skipped" | "failed"
    reason: str = ""
    documents: int = 0
    objects: int = 0


@dataclass(frozen=True)
class ParsedFile:
    record: FileRecord
    objects: tuple[K8sObject, ...]
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class LoadResult:
    files: tuple[FileRecord, ...]
    objects: tuple[K8sObject, ...]
    findings: tuple[Finding, ...]


# --------------------------------------------------------------------------------------- I/O ---


def discover(paths: Sequence[str]) -> list[str]:
    """Expand directories (recursively, YAML/JSON files in any case of the suffix, and files named
    Kustomization; sorted) and check that paths exist.

    Raises :class:`InputError` for a path given explicitly that does not exist. Symbolic links to
    directories are not followed (no loops); links to files are.
    """
    out: list[str] = []
    for p in paths:
        if p == STDIN:
            out.append(p)
            continue
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in files:
                    if name.lower().endswith(YAML_SUFFIXES) or name == "Kustomization":
                        found.append(os.path.join(root, name))
            out.extend(sorted(found))
        elif os.path.lexists(p):
            out.append(p)
        else:
            raise InputError(f"{p}: no such file or directory")
    # the same file named twice is read once
    return list(dict.fromkeys(out))


def read_inputs(paths: Sequence[str], limits: LoaderLimits = LoaderLimits(), stdin: Any = None) -> list[InputFile]:
    """Read what ``paths`` name (directories expanded, see :func:`discover`)."""
    return read_files(discover(paths), limits, stdin)


def read_files(paths: Sequence[str], limits: LoaderLimits = LoaderLimits(), stdin: Any = None) -> list[InputFile]:
    """Read exactly these files (as :func:`discover` lists them; ``-`` is standard input)."""
    files = []
    for path in paths:
        if path == STDIN:
            stream = stdin if stdin is not None else sys.stdin.buffer
            data = stream.read(limits.max_file_bytes + 1)
            if len(data) > limits.max_file_bytes:
                files.append(InputFile(STDIN_NAME, None, skip=f"larger than {limits.max_file_bytes:,} bytes"))
            else:
                files.append(InputFile(STDIN_NAME, data))
            continue
        try:
            size = os.stat(path).st_size
            if size > limits.max_file_bytes:
                files.append(InputFile(path, None, skip=f"larger than {limits.max_file_bytes:,} bytes ({size:,})"))
                continue
            with open(path, "rb") as fh:
                data = fh.read(limits.max_file_bytes + 1)
            chart = _chart_input(path)
            files.append(InputFile(path, data, chart=chart))
        except OSError as e:
            reason = e.strerror or str(e)
            if e.errno == 40:  # ELOOP
                files.append(InputFile(path, None, skip="symbolic link loop"))
            else:
                files.append(InputFile(path, None, error=reason))
    return _mark_kustomizations(files)


def _kustomization(f: InputFile) -> dict[str, Any] | None:
    """A kustomization file's content, or None when it does not parse to a mapping."""
    try:
        doc = yaml.safe_load(f.data or b"")
    except (yaml.YAMLError, ValueError, RecursionError):  # (ValueError: an int of over 4,300 digits)
        return None
    return doc if isinstance(doc, dict) else None


def _kustomize_patches(doc: Mapping[str, Any]) -> list[str]:
    """The files a kustomization names as patches (patchesStrategicMerge, patches[].path,
    patchesJson6902[].path), as paths relative to the kustomization's directory."""
    out = [p for p in doc.get("patchesStrategicMerge") or () if isinstance(p, str)]
    for key in ("patches", "patchesJson6902"):
        out += [p["path"] for p in doc.get(key) or () if isinstance(p, dict) and isinstance(p.get("path"), str)]
    return out


PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")
# a top-level key, live or commented out (`#patchesStrategicMerge:`), that opens a block
_TOP_KEY = re.compile(r"^#?\s?([A-Za-z]\w*):\s*(?:#.*)?$")
# a commented-out list entry naming a file: `#- path: patches/webhook_in_x.yaml`, `#- x_patch.yaml`
_COMMENTED_ENTRY = re.compile(r"^\s*#+\s*-\s*(?:path:\s*)?([^\s#'\"]+\.(?:ya?ml|json))\s*$", re.IGNORECASE)


def _commented_patches(data: bytes) -> list[str]:
    """The files a kustomization names in commented-out entries of its patch lists (kubebuilder
    scaffolds ship `#- path: patches/webhook_in_x.yaml` under `patches:` for the user to enable):
    partial objects all the same, so they are not read as manifests either."""
    out: list[str] = []
    block = ""
    for line in data.decode("utf-8", "replace").splitlines():
        key = _TOP_KEY.match(line)
        if key is not None:
            block = key.group(1)
            continue
        if line[:1] not in ("", " ", "\t", "-", "#"):
            block = ""  # any other top-level content closes the block
        entry = _COMMENTED_ENTRY.match(line)
        if entry is not None and block in PATCH_KEYS:
            out.append(entry.group(1))
    return out


def _mark_kustomizations(files: list[InputFile]) -> list[InputFile]:
    """Mark the files that a kustomization among the inputs uses
    - as patches: partial objects that only kustomize build turns into manifests, so they are
      reported as such rather than checked;
    - as resources: their objects get the kustomization's namespace and labels (podfit.kustomize)."""
    patches: dict[str, str] = {}
    commented: dict[str, str] = {}
    kustomizations: dict[str, dict[str, Any]] = {}
    for f in files:
        if f.data is not None and os.path.basename(f.path) in KUSTOMIZATION_NAMES:
            doc = _kustomization(f)
            if doc is None:
                continue
            kustomizations[f.path] = doc
            base = os.path.dirname(f.path)
            for rel in _kustomize_patches(doc):
                patches.setdefault(os.path.normpath(os.path.join(base, rel)), f.path)
            for rel in _commented_patches(f.data):
                commented.setdefault(os.path.normpath(os.path.join(base, rel)), f.path)
    if not kustomizations:
        return files
    layers = layers_for(kustomizations, [f.path for f in files])
    applied = _applied(kustomizations, [f.path for f in files])
    out = []
    for f in files:
        key = os.path.normpath(f.path)
        if f.path in applied:
            f = replace(f, applied=True)
        elif key in patches:
            f = replace(f, patch_of=patches[key])
        elif key in commented and f.path not in layers:  # a live resource entry wins over a comment
            f = replace(f, patch_of=commented[key], patch_commented=True)
        elif f.path in layers:
            f = replace(f, kustomize=layers[f.path])
        out.append(f)
    return out


def _applied(kustomizations: Mapping[str, Mapping[str, Any]], paths: Sequence[str]) -> set[str]:
    """The kustomizations whose build is what podfit checks: no field but those it applies, and
    every resource among the inputs (a file, or a directory whose own kustomization is applied)."""
    inputs = {os.path.normpath(p) for p in paths}
    by_dir = {os.path.normpath(os.path.dirname(k) or "."): k for k in kustomizations}
    memo: dict[str, bool] = {}

    def ok(k: str, seen: frozenset[str] = frozenset()) -> bool:
        if k in memo:
            return memo[k]
        doc = kustomizations[k]
        base = os.path.dirname(k)
        resources = doc.get("resources") or []
        good = kustomize_applies_whole(doc) and isinstance(resources, list) and bool(resources)
        for entry in resources if good else ():
            if not kustomize_local(entry):
                good = False
                break
            target = os.path.normpath(os.path.join(base, entry))
            nested = by_dir.get(target)
            if target in inputs:
                continue
            if nested is None or nested in seen or not ok(nested, seen | {k}):
                good = False
                break
        memo[k] = good
        return good

    return {k for k in kustomizations if ok(k)}


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


# ------------------------------------------------------------------------------------ parsing ---


def _finding(rule: str, message: str, file: str, line: int, column: int = 0, **kw: Any) -> Finding:
    return Finding(rule=rule, message=message, location=Location(file, line, column), **kw)


def _meta(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    m = doc.get("metadata")
    return m if isinstance(m, dict) else {}


def _str_pairs(m: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(m, dict):
        return ()
    return tuple(sorted((str(k), "" if v is None else str(v)) for k, v in m.items()))


class _SubLines:
    """Lines of an item inside a ``kind: List`` document: paths are prefixed with its path in the
    list (``("items", i)``, or deeper for a list inside the list)."""

    __slots__ = ("_parent", "_prefix")

    def __init__(self, parent: Any, prefix: tuple[Any, ...]) -> None:
        self._parent = parent
        self._prefix = prefix

    def line(self, path: tuple[Any, ...], default: int) -> int:
        return self._parent.line(self._prefix + tuple(path), default)


def make_object(doc: Mapping[str, Any], file: str, line: int = 0, lines: Any = None) -> K8sObject:
    """A K8sObject for one parsed document; ``lines`` resolves the lines of its fields."""
    meta = _meta(doc)
    ns = meta.get("namespace")
    ref = ObjectRef(
        api_version=str(doc.get("apiVersion") or ""),
        kind=str(doc.get("kind") or ""),
        namespace="" if ns is None else str(ns),
        name=str(meta.get("name") or meta.get("generateName") or ""),
    )
    return K8sObject(
        ref=ref,
        location=Location(file, line or line_of(doc, default=1)),
        raw=doc,
        annotations=_str_pairs(meta.get("annotations")),
        labels=_str_pairs(meta.get("labels")),
        lines=lines,
    )


def list_items(doc: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]] | None:
    """The objects of a list document with their index in ``items``, or None when ``doc`` is not
    a list: ``v1 List`` (each item names its own kind) or a typed list (``PodList``,
    ``apps/v1 DeploymentList``, any ``<Kind>List`` with ``items``), whose items may leave out their
    apiVersion and kind (the API server's list responses do): they are the list's apiVersion and
    the kind without ``List``."""
    kind = doc.get("kind")
    items = doc.get("items")
    if not isinstance(kind, str) or not kind.endswith("List") or not isinstance(items, list):
        return None
    if kind == "List":
        return [(i, item) for i, item in enumerate(items) if isinstance(item, dict) and "kind" in item]
    item_kind = kind[: -len("List")]  # not empty: kind is longer than "List"
    api_version = doc.get("apiVersion")
    out: list[tuple[int, Mapping[str, Any]]] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        if "kind" not in item or "apiVersion" not in item:
            item = {"apiVersion": api_version, "kind": item_kind, **item}
        out.append((i, item))
    return out


def flat_items(doc: Mapping[str, Any]) -> list[tuple[tuple[Any, ...], Mapping[str, Any]]] | None:
    """The objects of a list document with their paths (``("items", 0, "items", 2)``), lists inside
    it opened to any depth, as kubectl flattens them; None when ``doc`` is not a list (see
    :func:`list_items`). Iterative: a list nests as deep as the YAML limits allow."""
    top = list_items(doc)
    if top is None:
        return None
    out: list[tuple[tuple[Any, ...], Mapping[str, Any]]] = []
    stack: list[tuple[tuple[Any, ...], Iterator[tuple[int, Mapping[str, Any]]]]] = [((), iter(top))]
    while stack:
        prefix, items = stack[-1]
        step = next(items, None)
        if step is None:
            stack.pop()
            continue
        i, item = step
        path = prefix + ("items", i)
        inner = list_items(item)
        if inner is None:
            out.append((path, item))
        else:
            stack.append((path, iter(inner)))
    return out


def _object(doc: Mapping[str, Any], file: str, line: int, lines: Any, layers: Sequence[Layer]) -> K8sObject:
    """The object of one document, with the kustomization layers of its file applied."""
    if layers:
        doc = kustomize_apply(doc, layers)
    return make_object(doc, file, line, lines)


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


def _unrendered(path: str, f: InputFile, evidence: tuple[int, str], ndocs: int) -> ParsedFile:
    line, action = evidence
    if len(action) > 60:
        action = action[:57] + "..."
    chart = f.chart or _chart_of(path)
    # outside a chart the placeholders may be another tool's ({{replicas}} for a sed or envsubst step)
    render = (
        f"helm template {chart} | podfit check -"
        if chart is not None
        else "<the tool that fills its placeholders, e.g. helm template CHART> | podfit check -"
    )
    finding = _finding(
        "PF908",
        f"unrendered Go/Helm template {action}: the file is not checked; render it first: {render}",
        path,
        line,
        details={"action": action, "render": render, "chart": chart},
    )
    reason = f"unrendered Go/Helm template (line {line}): render it first: {render}"
    return ParsedFile(FileRecord(path, "skipped", reason, ndocs, 0), (), (finding,))


def _not_checked(path: str, why: str) -> Finding:
    """PF907 for a file that was not parsed at all (line 0: the whole file)."""
    return _finding("PF907", f"not checked: {why}", path, 0)


_VALUES_FILE = re.compile(r"values[^/]*\.ya?ml$")


def _render_first(f: InputFile) -> tuple[str, str] | None:
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


def _json_values(text: str) -> list[Any] | None:
    """The values of a JSON file: one document, or one per line (JSON lines, strict or relaxed as
    mongoimport reads them: ``{rating: 5}`` with unquoted keys); None when the text is neither (then
    it is parsed as YAML, which reports where it breaks)."""
    # (RecursionError: nested deeper than the interpreter's stack; ValueError also for an int of
    # over 4,300 digits. The YAML parser then reports either with its line.)
    try:
        return [json.loads(text)]
    except (ValueError, RecursionError):
        pass
    values = []
    for line in text.splitlines():
        if line.strip():
            try:
                values.append(json.loads(line))
            except (ValueError, RecursionError):
                relaxed = _relaxed_json_line(line)
                if relaxed is None:
                    return None
                values.append(relaxed)
    return values or None


def _relaxed_json_line(line: str) -> Any:
    """One line of relaxed JSON (a YAML flow mapping or sequence on one line); None when it is not."""
    body = line.strip()
    if not (body.startswith("{") and body.endswith("}")) and not (body.startswith("[") and body.endswith("]")):
        return None
    try:
        value = yaml.safe_load(body)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _is_manifest(value: Any) -> bool:
    """A Kubernetes object (apiVersion and kind) or a list of them."""
    return isinstance(value, dict) and "apiVersion" in value and "kind" in value


def _first_content_line(data: bytes) -> int:
    """The line of a file's first key or value (past blank lines, comments and ``---``); 1 when
    it has none."""
    for n, line in enumerate(data.split(b"\n", 2000)[:2000], 1):
        body = line.strip()
        if body and not body.startswith(b"#") and body != b"---":
            return n
    return 1


def _decode(data: bytes, path: str) -> tuple[str | None, Finding | None]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        return None, _finding("PF901", f"invalid UTF-8 (byte 0x{data[e.start]:02x})", path, line, col)


def parse_file(
    f: InputFile, limits: LoaderLimits = LoaderLimits(), documents: Callable[[str], Iterable[Any]] | None = None
) -> ParsedFile:
    """Parse one input into objects and loader findings (PF901, PF905 duplicate keys, PF907 files
    not parsed at all, PF908 unrendered templates, whose documents are not analysed, PF909
    kustomizations and Helm chart files, which are not parsed). Pure.

    ``documents`` (a worker process's work, see :func:`load`) replaces parsing: given the decoded
    text, it yields the file's YamlDocuments and may raise the parse error where parsing stopped."""
    path = f.path
    if f.error is not None:
        return ParsedFile(FileRecord(path, "failed", f.error), (), (_not_checked(path, f"cannot be read: {f.error}"),))
    if f.skip is not None:
        return ParsedFile(FileRecord(path, "skipped", f.skip), (), (_not_checked(path, f.skip),))
    assert f.data is not None
    if b"\x00" in f.data[:8192]:
        return ParsedFile(FileRecord(path, "skipped", "binary file"), (), (_not_checked(path, "binary file"),))
    if f.applied:  # its resources are checked as it builds them
        return ParsedFile(FileRecord(path, "parsed", "a Kustomize kustomization, applied to its resources"), (), ())
    render = _render_first(f)
    if render is None and f.patch_of is not None:
        where = os.path.dirname(f.patch_of) or "."
        what = "a Kustomize patch (its entry commented out) in" if f.patch_commented else "a Kustomize patch of"
        render = f"{what} {f.patch_of}", f"kustomize build {where} | podfit check -"
    if render is not None:
        what, command = render
        finding = _finding(
            "PF909",
            f"{what}, not a manifest: render first: {command}",
            path,
            _first_content_line(f.data),
            details={"render": command},
        )
        return ParsedFile(FileRecord(path, "skipped", f"{what}: render first: {command}"), (), (finding,))
    text, bad = _decode(f.data, path)
    if bad is not None:
        return ParsedFile(FileRecord(path, "failed", f"invalid UTF-8 at line {bad.location.line}"), (), (bad,))
    assert text is not None
    if path.lower().endswith(".json"):
        values = _json_values(text)
        if values is not None and not any(_is_manifest(v) for v in values):
            # JSON data (package.json, dashboards, JSON lines): no object, as a YAML file without a kind
            return ParsedFile(FileRecord(path, "parsed", "", len(values), 0), (), ())
    braces = "{{" in text
    if braces:
        # outside a chart's templates, actions in block scalars of YAML that parses are data
        in_chart = f.chart is not None or _chart_of(path) is not None
        evidence = _template_evidence(text, broken=False, blocks=in_chart)
        if evidence is not None:
            return _unrendered(path, f, evidence, 0)
    objects: list[K8sObject] = []
    findings: list[Finding] = []
    ndocs = 0
    failure = ""
    try:
        docs = documents(text) if documents is not None else iter_documents(text, limits.yaml, fast=True)
        for doc in docs:
            ndocs += 1
            if braces:
                evidence = _templated_identity(doc)
                if evidence is not None:
                    return _unrendered(path, f, evidence, ndocs)
            for dup in doc.duplicates:
                findings.append(
                    _finding(
                        "PF905",
                        f"duplicate key {dup.key!r}: kubectl rejects the manifest (tools that accept it keep the last value)",
                        path,
                        dup.line,
                        dup.column,
                    )
                )
            data = doc.data
            if data is None:
                continue
            if not isinstance(data, dict) or "kind" not in data:
                continue  # not a Kubernetes object (e.g. a Helm values file): counted, not checked
            items = flat_items(data)
            if items is not None:
                for at, item in items:
                    sub = _SubLines(doc.lines, at)
                    objects.append(_object(item, path, sub.line((), doc.line), sub, f.kustomize))
                continue
            objects.append(_object(data, path, doc.line, doc.lines, f.kustomize))
    except YamlLimitError as e:
        failure = str(e)
        findings.append(_finding("PF901", str(e), path, e.line))
    except yaml.YAMLError as e:
        evidence = _template_evidence(text, broken=True) if braces else None
        if evidence is not None:  # the template's actions broke the YAML: no syntax error to report
            return _unrendered(path, f, evidence, ndocs)
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 0)
        last = text.count("\n") + (0 if text.endswith("\n") else 1)
        if line > last:  # the parser ran into the end of the input: point at the last line
            line, col = max(last, 1), 0
        problem = getattr(e, "problem", None) or str(e)
        context = getattr(e, "context", None)
        msg = f"{context}: {problem}" if context else str(problem)
        failure = f"YAML error at line {line}: {msg}"
        findings.append(_finding("PF901", f"cannot parse: {msg}", path, line, col))
    except RecursionError:
        failure = "nesting too deep"
        findings.append(_finding("PF901", "cannot parse: nesting too deep", path, 1))
    if failure:
        status = "failed"
    elif ndocs == 0 or not text.strip():
        return ParsedFile(FileRecord(path, "skipped", "empty file", ndocs, 0), (), tuple(findings))
    else:
        status = "parsed"
    record = FileRecord(path, status, failure, ndocs, len(objects))
    return ParsedFile(record, tuple(objects), tuple(findings))


def nothing_found(paths: Sequence[str], files: Sequence[FileRecord], ignored: int = 0) -> str:
    """Why a run found no Kubernetes object to check, naming what was read (the CLI exits 2 with it)."""
    if not files:
        where = ", ".join(paths)
        why = f"no Kubernetes object found: no *.yaml, *.yml or *.json file in {where}"
        return why + (f" ({ignored} left out by the config's ignore)" if ignored else "")

    def account(f: FileRecord) -> str:
        if f.status != "parsed":
            return f"{f.path} ({f.status}: {f.reason})" if f.status == "failed" else f"{f.path} ({f.reason})"
        return f"{f.path} ({f.documents} document{'s' if f.documents != 1 else ''} without a kind)"

    shown = [account(f) for f in files[:3]]
    more = f", and {len(files) - 3} more" if len(files) > 3 else ""
    if len(files) == 1:
        return f"no Kubernetes object found in {shown[0]}"
    return f"no Kubernetes object found in {len(files)} files: " + ", ".join(shown) + more


# Parsing runs in worker processes only above this much input: below it, starting them costs more.
PARALLEL_MIN_BYTES = 2 * 2**20


def _jobs(files: Sequence[InputFile]) -> int:
    configured = os.environ.get("PODFIT_JOBS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    size = sum(len(f.data) for f in files if f.data is not None)
    return min(os.cpu_count() or 1, 8) if size >= PARALLEL_MIN_BYTES else 1


def _worker_parse(files: Sequence[InputFile], limits: LoaderLimits) -> list[Any]:
    """In a worker process: each file's documents, marshalled (four times faster to write than JSON,
    and every key and scalar type survives), with where they stand, and the error that stopped
    parsing (or None where the parent must parse the file itself)."""
    import marshal

    out: list[Any] = []
    for f in files:
        if f.data is None or b"\x00" in f.data[:8192]:
            out.append(None)
            continue
        try:
            text = f.data.decode("utf-8-sig")
        except UnicodeDecodeError:
            out.append(None)
            continue
        docs: list[Any] = []
        error = None
        seen: set[int] = set()
        shared_chunk = False
        try:
            for doc in iter_documents(text, limits.yaml, fast=True):
                if doc.chunk in seen:  # several documents in one chunk: lines need the parent's parse
                    shared_chunk = True
                    break
                seen.add(doc.chunk)
                # (the slow path's LineDict mappings become dicts: their lines are the parent's to find)
                plain = doc.lines is not None and doc.lines.plain
                data = marshal.dumps(doc.data if plain else _plain(doc.data))
                docs.append((doc.index, doc.line, data, doc.duplicates, doc.chunk, doc.first_line, plain))
        except (yaml.YAMLError, YamlLimitError, RecursionError) as e:
            error = e
        out.append(None if shared_chunk else (docs, error))
    return out


def _plain(value: Any) -> Any:
    """Data with its mappings as plain dicts (marshal takes no subclasses)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _documents_from_worker(text: str, shipped: Any, limits: LoaderLimits) -> Iterator[Any]:
    import marshal

    from .yamlio import LineIndex, YamlDocument, chunks

    docs, error = shipped
    parts = chunks(text) if docs else []
    for index, line, data, duplicates, chunk, first_line, plain in docs:
        lines = LineIndex(None, parts[chunk][1], first_line, limits.yaml, plain)
        yield YamlDocument(index, line, marshal.loads(data), duplicates, lines, chunk, first_line)
    if error is not None:
        raise error


def load(
    files: Iterable[InputFile], limits: LoaderLimits = LoaderLimits(), progress: Callable[[int], None] | None = None
) -> LoadResult:
    """Parse every file; with enough input, across processes (one per CPU). The result is the same
    as a serial run's: workers hand back each document's data and position, the objects and their
    (lazy) lines are built here from the same text."""
    files = list(files)
    jobs = _jobs(files)
    shipped: dict[int, Any] = {}
    pending = None
    pool: Any = None
    if jobs > 1 and len(files) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # contiguous groups of about equal size; group 0 stays here, the rest go to workers
        total = sum(len(f.data or b"") for f in files) or 1
        bounds, acc, groups = [0], 0, []
        for i, f in enumerate(files):
            acc += len(f.data or b"")
            if acc >= total * len(bounds) / jobs and len(bounds) < jobs:
                bounds.append(i + 1)
        bounds.append(len(files))
        groups = [(bounds[k], bounds[k + 1]) for k in range(len(bounds) - 1) if bounds[k] < bounds[k + 1]]
        if len(groups) > 1:
            try:
                pool = ProcessPoolExecutor(max_workers=len(groups) - 1, mp_context=multiprocessing.get_context("fork"))
                pending = [(lo, hi, pool.submit(_worker_parse, files[lo:hi], limits)) for lo, hi in groups[1:]]
                pool.shutdown(wait=False)
            except (OSError, ValueError):  # no processes to be had here: parse everything in this one
                pending = None
    parsed = []
    for i, f in enumerate(files, 1):
        if pending and i - 1 == pending[0][0]:
            lo, hi, fut = pending.pop(0)
            try:
                results = fut.result()
            except Exception:  # a worker died (e.g. killed for memory): this process parses its files
                results = []
            for k, item in enumerate(results):
                shipped[lo + k] = item
        item = shipped.pop(i - 1, None)
        docs = None
        if item is not None:
            docs = lambda text, item=item: _documents_from_worker(text, item, limits)  # noqa: E731
        parsed.append(parse_file(f, limits, docs))
        if progress is not None:
            progress(i)
    if pool is not None:
        # its manager thread ends here, not later: the Rego engine forks its workers next, and a
        # fork must not happen while another thread runs
        pool.shutdown(wait=True)
    return LoadResult(
        files=tuple(p.record for p in parsed),
        objects=tuple(o for p in parsed for o in p.objects),
        findings=per_chart(tuple(x for p in parsed for x in p.findings)),
    )


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


# ---------------------------------------------------------------------------- workloads -------


@dataclass(frozen=True)
class LimitRangeDefaults:
    """What the LimitRanger admission plugin gives a container of the namespace that sets nothing:
    ``request`` fields hold the default requests, ``limit`` fields the default limits."""

    request: Resources
    limit: Resources


_NO_DEFAULTS = LimitRangeDefaults(Resources(), Resources())
_RES_FIELDS = (("cpu", parse_cpu), ("memory", parse_memory), ("ephemeral-storage", parse_memory))
_ATTR = {"cpu": "cpu", "memory": "memory", "ephemeral-storage": "storage"}


def _quantities(
    block: Any,
    kind: str,
    obj: K8sObject,
    container: str | None,
    findings: list[Finding],
    where: str,
    path: tuple[Any, ...] = (),
) -> dict[str, int]:
    """Parse a requests/limits mapping into {"cpu_request": m, ...}; bad values become PF903."""
    out: dict[str, int] = {}
    if not isinstance(block, dict):
        return out
    for name, parse in _RES_FIELDS:
        if name not in block:
            continue
        value = block[name]
        try:
            out[f"{_ATTR[name]}_{kind}"] = parse(value)
        except QuantityError as e:
            findings.append(
                Finding(
                    rule="PF903",
                    message=f"{where}{kind}s.{name}: {e.reason} ({value!r})",
                    location=obj.location_at(path + (name,)),
                    object=obj.ref,
                    container=container,
                    details={"field": f"{kind}s.{name}", "value": str(value)},
                )
            )
    return out


def limit_range_defaults(objects: Sequence[K8sObject], findings: list[Finding]) -> dict[str, LimitRangeDefaults]:
    """The container defaults of each namespace's LimitRanges (an object without a namespace is in
    "default"). Each ``type: Container`` item is defaulted as the API server does: an unset default
    limit takes ``max``, an unset default request takes the default limit, then ``min``. Where a
    namespace has several LimitRanges, the first (in input order) to default a field wins, as
    admission applies them one after another to a container whose fields fill up."""
    by_ns: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
    for obj in sorted((o for o in objects if o.kind == "LimitRange"), key=lambda o: (o.location, o.ref.name)):
        ns = obj.ref.namespace or "default"
        spec = obj.raw.get("spec")
        limits = spec.get("limits") if isinstance(spec, dict) else None
        for i, item in enumerate(limits if isinstance(limits, list) else ()):
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            at = ("spec", "limits", i)

            def q(key: str, kind: str, item: dict = item, obj: K8sObject = obj, at: tuple = at) -> dict[str, int]:
                vals = _quantities(item.get(key), kind, obj, None, findings, f"LimitRange {key} ", at + (key,))
                return {k.rsplit("_", 1)[0]: v for k, v in vals.items()}

            default = {**q("max", "limit"), **q("default", "limit")}
            request = {**q("min", "request"), **default, **q("defaultRequest", "request")}
            req, lim = by_ns.setdefault(ns, ({}, {}))
            for res, v in request.items():
                req.setdefault(res, v)
            for res, v in default.items():
                lim.setdefault(res, v)
    return {
        ns: LimitRangeDefaults(
            Resources(**{f"{k}_request": v for k, v in req.items()}),
            Resources(**{f"{k}_limit": v for k, v in lim.items()}),
        )
        for ns, (req, lim) in by_ns.items()
    }


@dataclass(frozen=True)
class LimitRangeConstraint:
    """One bound a LimitRange item sets (``min``, ``max`` or ``maxLimitRequestRatio``) for one
    resource of each ``Container`` or of the whole ``Pod``, as the LimitRanger admission plugin
    enforces it. Quantities in millicores or bytes; a ratio in thousandths (``2`` → 2000)."""

    limit_range: ObjectRef
    location: Location
    scope: str  # "Container" | "Pod"
    bound: str  # "min" | "max" | "maxLimitRequestRatio"
    resource: str  # "cpu" | "memory" | "ephemeral-storage"
    value: int
    text: str  # the quantity as written


_BOUNDS = ("min", "max", "maxLimitRequestRatio")


def limit_range_constraints(objects: Sequence[K8sObject]) -> dict[str, tuple[LimitRangeConstraint, ...]]:
    """The min/max/maxLimitRequestRatio bounds of each namespace's LimitRanges (an object without a
    namespace is in "default"), Container and Pod items, in input order. A quantity that does not
    parse bounds nothing (its PF903 comes from :func:`limit_range_defaults`)."""
    out: dict[str, list[LimitRangeConstraint]] = {}
    for obj in sorted((o for o in objects if o.kind == "LimitRange"), key=lambda o: (o.location, o.ref.name)):
        spec = obj.raw.get("spec")
        limits = spec.get("limits") if isinstance(spec, dict) else None
        for i, item in enumerate(limits if isinstance(limits, list) else ()):
            if not isinstance(item, dict) or item.get("type") not in ("Container", "Pod"):
                continue
            for bound in _BOUNDS:
                block = item.get(bound)
                for name, parse in _RES_FIELDS:
                    if not isinstance(block, dict) or name not in block:
                        continue
                    try:
                        value = parse_cpu(block[name]) if bound == "maxLimitRequestRatio" else parse(block[name])
                    except QuantityError:
                        continue
                    out.setdefault(obj.ref.namespace or "default", []).append(
                        LimitRangeConstraint(
                            obj.ref,
                            obj.location_at(("spec", "limits", i, bound, name)),
                            str(item["type"]),
                            bound,
                            name,
                            value,
                            str(block[name]),
                        )
                    )
    return {ns: tuple(cs) for ns, cs in out.items()}


def limit_range_violations(request: int | None, limit: int | None, constraint: LimitRangeConstraint) -> str | None:
    """Why the LimitRanger admission plugin rejects a container (or pod) with this effective
    ``request`` and ``limit`` (None: not set) of the constraint's resource, in its own words, or
    None when it admits it (k8s.io/kubernetes plugin/pkg/admission/limitranger: min/max/ratio
    constraints, checked after the defaults are applied)."""
    c = constraint
    what = f"{c.resource} usage per {c.scope} is {c.text}"
    if c.bound == "min":
        if request is None:
            return f"minimum {what}, but no request is specified"
        if request < c.value:
            return f"minimum {what}, but the request is {_show(c.resource, request)}"
        if limit is not None and limit < c.value:
            return f"minimum {what}, but the limit is {_show(c.resource, limit)}"
        return None
    if c.bound == "max":
        if limit is None:
            return f"maximum {what}, but no limit is specified"
        if limit > c.value:
            return f"maximum {what}, but the limit is {_show(c.resource, limit)}"
        if request is not None and request > c.value:
            return f"maximum {what}, but the request is {_show(c.resource, request)}"
        return None
    ratio = f"{c.resource} max limit to request ratio per {c.scope} is {c.text}"
    if not request:
        return f"{ratio}, but no request is specified or the request is 0"
    if not limit:
        return f"{ratio}, but no limit is specified or the limit is 0"
    if limit * 1000 > c.value * request:
        return f"{ratio}, but the ratio is {limit / request:.3g}"
    return None


def _show(resource: str, value: int) -> str:
    return format_cpu(value) if resource == "cpu" else format_memory(value)


def _container(
    c: Mapping[str, Any],
    obj: K8sObject,
    init: bool,
    defaults: LimitRangeDefaults,
    findings: list[Finding],
    path: tuple[Any, ...],
) -> Container:
    name = container_name(c, init, path[-1])
    res = c.get("resources")
    res = res if isinstance(res, dict) else {}
    vals = _quantities(res.get("requests"), "request", obj, name, findings, "", path + ("resources", "requests"))
    vals.update(_quantities(res.get("limits"), "limit", obj, name, findings, "", path + ("resources", "limits")))
    declared = Resources(**vals)
    return Container(
        name=name,
        image=str(c.get("image") or ""),
        resources=declared.with_defaults(defaults.request, defaults.limit),
        declared=declared,
        location=obj.location_at(path),
        init=init,
        sidecar=init and c.get("restartPolicy") == "Always",
    )


def _dig(doc: Mapping[str, Any], path: Sequence[str]) -> Any:
    cur: Any = doc
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def _anti_affinity(spec: Mapping[str, Any]) -> tuple[tuple[tuple[str, str], ...], ...]:
    terms = _dig(spec, ("affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
    out = []
    for t in terms if isinstance(terms, list) else ():
        if isinstance(t, dict) and t.get("topologyKey") == "kubernetes.io/hostname":
            out.append(_str_pairs(_dig(t, ("labelSelector", "matchLabels"))))
    return tuple(out)


def _spread(spec: Mapping[str, Any]) -> int | None:
    skews = []
    for t in _list(spec.get("topologySpreadConstraints")):
        if (
            isinstance(t, dict)
            and t.get("topologyKey") == "kubernetes.io/hostname"
            and t.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
            and isinstance(t.get("maxSkew"), int)
        ):
            skews.append(t["maxSkew"])
    return min(skews) if skews else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    """A count field (int32 in the API; PF902 reports values out of its range): ``default`` else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else default


def container_name(c: Mapping[str, Any], init: bool, index: int) -> str:
    """A container's name; one without calls itself by its place, as the Rego library does
    (``containers[0]``, ``initContainers[1]``)."""
    name = c.get("name")
    if isinstance(name, str) and name:
        return name
    return f"{'initContainers' if init else 'containers'}[{index}]"


def container_line(obj: K8sObject, name: str | None) -> int:
    """Line of the container called ``name`` in the object's pod spec (init containers first, as
    ``PodSpec.all_containers`` orders them), else the object's own line. The same answer as the
    container's location in :func:`workload_from_object`, from the raw object alone (so that the
    engine's workers can resolve it while the main process still builds the workloads)."""
    path = container_path(obj, name) if name else None
    return obj.location.line if path is None else obj.line_at(path)


def container_path(obj: K8sObject, name: str) -> tuple[str | int, ...] | None:
    """Path from the object's root to the mapping of its container called ``name`` (init
    containers first, as ``PodSpec.all_containers`` orders them); None when there is none."""
    path = WORKLOAD_KINDS.get(obj.kind)
    if path is None:
        return None
    template = _dig(obj.raw, path) if path else obj.raw
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return None
    sp = tuple(path) + ("spec",)
    for key in ("initContainers", "containers"):
        for i, c in enumerate(_list(spec.get(key))):
            if isinstance(c, dict) and container_name(c, key == "initContainers", i) == name:
                return sp + (key, i)
    return None


def workload_from_object(obj: K8sObject, defaults: LimitRangeDefaults, findings: list[Finding]) -> Workload | None:
    path = WORKLOAD_KINDS.get(obj.kind)
    if path is None:
        return None
    template = _dig(obj.raw, path) if path else obj.raw
    if not isinstance(template, dict):
        return None
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return None
    tmeta = template.get("metadata")
    if not isinstance(tmeta, dict):
        tmeta = {}
    sp = tuple(path) + ("spec",)
    containers = tuple(
        _container(c, obj, False, defaults, findings, sp + ("containers", i))
        for i, c in enumerate(_list(spec.get("containers")))
        if isinstance(c, dict)
    )
    inits = tuple(
        _container(c, obj, True, defaults, findings, sp + ("initContainers", i))
        for i, c in enumerate(_list(spec.get("initContainers")))
        if isinstance(c, dict)
    )
    overhead = _quantities(spec.get("overhead"), "request", obj, None, findings, "overhead ", sp + ("overhead",))
    own = spec.get("resources")
    pod_resources = None
    if isinstance(own, dict):
        rp = sp + ("resources",)
        vals = _quantities(own.get("requests"), "request", obj, None, findings, "pod ", rp + ("requests",))
        vals.update(_quantities(own.get("limits"), "limit", obj, None, findings, "pod ", rp + ("limits",)))
        vals = {k: v for k, v in vals.items() if not k.startswith("storage")}  # pod level: CPU and memory
        pod_resources = Resources(**vals) if vals else None
    pod = PodSpec(
        containers=containers,
        init_containers=inits,
        overhead_cpu=overhead.get("cpu_request", 0),
        overhead_memory=overhead.get("memory_request", 0),
        node_selector=_str_pairs(spec.get("nodeSelector")),
        anti_affinity_hostname=_anti_affinity(spec),
        hostname_spread_max_skew=_spread(spec),
        labels=_str_pairs(tmeta.get("labels")),
        annotations=_str_pairs(tmeta.get("annotations")) if path else obj.annotations,
        runtime_class=spec.get("runtimeClassName") if isinstance(spec.get("runtimeClassName"), str) else None,
        scheduling=constraints_from_spec(spec, daemonset=obj.kind == "DaemonSet"),
        pod_resources=pod_resources,
    )
    kind = obj.kind
    if kind == "Pod":
        replicas = 1
    elif kind == "Job":
        replicas = _int(_dig(obj.raw, ("spec", "parallelism")), 1)
    elif kind == "CronJob":
        replicas = _int(_dig(obj.raw, ("spec", "jobTemplate", "spec", "parallelism")), 1)
    elif kind == "DaemonSet":
        replicas = 0
    else:
        replicas = _int(_dig(obj.raw, ("spec", "replicas")), 1)
    return Workload(obj=obj, pod=pod, replicas=replicas, per_node=kind == "DaemonSet")


def build_workloads(
    objects: Sequence[K8sObject], ranges: Mapping[str, LimitRangeDefaults] | None = None
) -> tuple[tuple[Workload, ...], tuple[Finding, ...]]:
    """Workloads of every kind, with the LimitRange defaults of their namespace applied (``ranges``
    from :func:`limit_range_defaults`, computed here when not given). Pure."""
    findings: list[Finding] = []
    if ranges is None:
        ranges = limit_range_defaults(objects, findings)
    workloads = []
    for obj in objects:
        if obj.kind in WORKLOAD_KINDS:
            w = workload_from_object(obj, ranges.get(obj.ref.namespace or "default", _NO_DEFAULTS), findings)
            if w is not None:
                workloads.append(w)
    return tuple(workloads), tuple(findings)
