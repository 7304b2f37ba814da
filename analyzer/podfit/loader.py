"""From paths to the model: files → documents → :class:`K8sObject`.

``read_inputs`` does the I/O (files, directories, stdin). Everything after it is pure:
``parse_file`` turns one file's bytes into objects and findings. The facts stage builds the
workloads from the objects (:mod:`podfit.workloads`). Every object and finding carries the file
and line it comes from.
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

from .children import become_child
from .findings import Finding
from .kustomize import KUSTOMIZATION_NAMES, KUSTOMIZE_VERSION, Layer, layers_for
from .kustomize import applies_whole as kustomize_applies_whole
from .kustomize import apply as kustomize_apply
from .kustomize import local as kustomize_local
from .kustomize import on_this_machine as kustomize_local_or_up
from .kustomize import patch_files as kustomize_patch_files
from .kustomize import plugin_configs as kustomize_plugin_configs
from .model import K8sObject, Location, ObjectRef
from .reading import NotRead, read_bytes, read_stream
from .templates import (
    _chart_input,
    _chart_of,
    _render_first,
    _template_evidence,
    _templated_identity,
    per_chart,
    per_kustomization,
    unrendered,
)
from .words import plural
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
    "flat_items",
    "nothing_found",
]

YAML_SUFFIXES = (".yaml", ".yml", ".json")
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
    # rendered text (podfit.render: helm template, kustomize build) under its source's name: a manifest
    rendered: bool = False
    # the kustomization listing this file under transformers/generators/validators: plugin settings
    # kustomize reads to build, not cluster objects
    plugin_of: str | None = None
    # a kustomization another among the inputs builds as its base: the outermost such one
    built_by: str | None = None


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
    # rendered files (podfit.render.SourceMap): each line's source line and values key, for remap()
    sources: Mapping[str, Any] = field(default_factory=dict, compare=False)
    excluded: tuple[tuple[str, str], ...] = ()  # (path, why) left out by the path selection


# --------------------------------------------------------------------------------------- I/O ---


def discover(paths: Sequence[str], select: Any = None, skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Expand directories (recursively, YAML/JSON files in any case of the suffix, and files named
    Kustomization, hidden directories included; sorted) and check that paths exist.

    ``select`` (a :class:`podfit.selection.PathFilter`) leaves out what its excludes, the
    ``.gitignore`` files and the platform and config files name; each path left out is appended to
    ``skipped`` with the reason (an excluded directory once, not the files under it). A path named
    on the command line is left out by an exclude pattern, never by a ``.gitignore``.

    Raises :class:`InputError` for a path given explicitly that does not exist. Symbolic links to
    directories are not followed (no loops); links to files are. A directory that cannot be listed
    is kept among the paths, so that reading it reports it (PF907) rather than pass it over.
    """
    out: list[str] = []
    left_out = skipped if skipped is not None else []
    for p in paths:
        if p == STDIN:
            out.append(p)
            continue
        if os.path.isdir(p):
            found: list[str] = []

            def unlisted(e: OSError, found: list[str] = found, top: str = p) -> None:
                found.append(e.filename if isinstance(e.filename, str) else top)

            for root, dirs, files in os.walk(p, onerror=unlisted, followlinks=False):
                kept = []
                for d in sorted(dirs):
                    why = select.skip(os.path.join(root, d), True, p) if select is not None else None
                    if why is None:
                        kept.append(d)
                    else:
                        left_out.append((os.path.join(root, d) + "/", why))
                dirs[:] = kept
                for name in files:
                    if name.lower().endswith(YAML_SUFFIXES) or name == "Kustomization":
                        path = os.path.join(root, name)
                        why = select.skip(path, False, p) if select is not None else None
                        if why is None:
                            found.append(os.path.normpath(path))  # one form: k8s/a.yaml, never ./k8s/a.yaml
                        else:
                            left_out.append((path, why))
            out.extend(sorted(found))
        else:
            try:
                os.lstat(p)
            except FileNotFoundError:
                raise InputError(f"{p}: no such file or directory") from None
            except OSError:
                pass  # there, but not to be looked at (a directory above it is closed): PF907 says why
            why = select.skip(p, False, None) if select is not None else None
            if why is None:
                out.append(os.path.normpath(p))
            else:
                left_out.append((p, why))
    # the same file named twice is read once
    return list(dict.fromkeys(out))


def read_inputs(paths: Sequence[str], limits: LoaderLimits = LoaderLimits(), stdin: Any = None) -> list[InputFile]:
    """Read what ``paths`` name (directories expanded, see :func:`discover`)."""
    return read_files(discover(paths), limits, stdin)


def read_files(paths: Sequence[str], limits: LoaderLimits = LoaderLimits(), stdin: Any = None) -> list[InputFile]:
    """Read exactly these files (as :func:`discover` lists them; ``-`` is standard input) through
    :mod:`podfit.reading`: regular files only, at most ``limits.max_file_bytes`` each. What is not
    read (a pipe, a device, a socket, a directory that cannot be listed, a file over the limit or
    that cannot be opened) is an InputFile saying why (PF907)."""
    files = []
    for path in paths:
        try:
            if path == STDIN:
                stream = stdin if stdin is not None else sys.stdin.buffer
                files.append(InputFile(STDIN_NAME, read_stream(stream, limits.max_file_bytes, STDIN_NAME)))
            else:
                data = read_bytes(path, limits.max_file_bytes)
                files.append(InputFile(path, data, chart=_chart_input(path)))
        except NotRead as e:
            name = STDIN_NAME if path == STDIN else path
            unlisted = _unlisted(path) if e.skipped and e.reason.startswith("a directory") else None
            if unlisted is not None:
                files.append(InputFile(name, None, error=unlisted))
            elif e.skipped:
                files.append(InputFile(name, None, skip=e.reason))
            else:
                files.append(InputFile(name, None, error=e.reason))
    return _mark_kustomizations(files)


def _unlisted(path: str) -> str | None:
    """Why a directory among the paths (one :func:`discover` could not list) cannot be listed."""
    try:
        os.scandir(path).close()
    except OSError as e:
        return f"a directory that cannot be listed: {e.strerror or e}"
    return None


def _kustomization(f: InputFile) -> dict[str, Any] | None:
    """A kustomization file's content, or None when it does not parse to a mapping."""
    try:
        doc = yaml.safe_load(f.data or b"")
    except (yaml.YAMLError, ValueError, RecursionError):  # (ValueError: an int of over 4,300 digits)
        return None
    return doc if isinstance(doc, dict) else None


# the apiVersion of kustomize's builtin transformer and generator configs; no cluster serves it
BUILTIN_PLUGIN_API = "builtin"

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
            for rel in kustomize_patch_files(doc):
                patches.setdefault(os.path.normpath(os.path.join(base, rel)), f.path)
            for rel in _commented_patches(f.data):
                commented.setdefault(os.path.normpath(os.path.join(base, rel)), f.path)
    if not kustomizations:
        return files
    layers = layers_for(kustomizations, [f.path for f in files])
    applied = _applied(kustomizations, [f.path for f in files])
    plugins = kustomize_plugin_configs(kustomizations)
    built_by = _built_by(kustomizations)
    out = []
    for f in files:
        key = os.path.normpath(f.path)
        if f.path in built_by:
            f = replace(f, built_by=built_by[f.path])
        if f.path in applied:
            f = replace(f, applied=True)
        elif key.replace(os.sep, "/") in plugins:
            f = replace(f, plugin_of=plugins[key.replace(os.sep, "/")])
        elif key in patches:
            f = replace(f, patch_of=patches[key])
        elif key in commented and f.path not in layers:  # a live resource entry wins over a comment
            f = replace(f, patch_of=commented[key], patch_commented=True)
        elif f.path in layers:
            f = replace(f, kustomize=layers[f.path])
        out.append(f)
    return out


def _built_by(kustomizations: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """For each kustomization that another among them lists as a resource, base or component (a
    directory holding it), the outermost kustomization whose build includes it: one build, and
    one finding when it cannot be built."""
    by_dir = {os.path.normpath(os.path.dirname(k) or "."): k for k in kustomizations}
    parent: dict[str, str] = {}
    for k, doc in kustomizations.items():
        base = os.path.dirname(k)
        for key in ("resources", "bases", "components"):
            entries = doc.get(key)
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, str) and kustomize_local_or_up(entry):
                    nested = by_dir.get(os.path.normpath(os.path.join(base, entry)))
                    if nested is not None and nested != k:
                        parent.setdefault(nested, k)
    out = {}
    for k in parent:
        top, seen = k, {k}
        while top in parent and parent[top] not in seen:  # a cycle builds nothing: stop at it
            top = parent[top]
            seen.add(top)
        if top != k:
            out[k] = top
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


def _unrendered(path: str, f: InputFile, evidence: tuple[int, str], ndocs: int) -> ParsedFile:
    finding, reason = unrendered(path, f.chart or _chart_of(path), evidence)
    return ParsedFile(FileRecord(path, "skipped", reason, ndocs, 0), (), (finding,))


def _not_checked(path: str, why: str) -> Finding:
    """PF907 for a file that was not parsed at all (line 0: the whole file)."""
    return _finding("PF907", f"not checked: {why}", path, 0)


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
    if f.plugin_of is not None:  # settings kustomize reads to build, not objects of the cluster
        reason = f"a Kustomize transformer, generator or validator config of {f.plugin_of}, not a cluster object"
        return ParsedFile(FileRecord(path, "parsed", reason), (), ())
    render = _render_first(f) if not f.rendered else None
    if render is None and f.patch_of is not None:
        where = os.path.dirname(f.patch_of) or "."
        what = "a Kustomize patch (its entry commented out) in" if f.patch_commented else "a Kustomize patch of"
        render = f"{what} {f.patch_of}", f"kustomize build {where} | podfit check -"
    if render is not None and os.path.basename(path) in KUSTOMIZATION_NAMES and f.built_by is not None:
        # a base of a kustomization among the inputs: that one's build includes it (one finding there)
        where = os.path.dirname(f.built_by) or "."
        command = f"kustomize build {where} | podfit check -"
        finding = _finding(
            "PF909",
            f"a Kustomize base of {f.built_by}, not a manifest on its own: render first: {command}",
            path,
            _first_content_line(f.data),
            details={"render": command, "built_by": f.built_by},
        )
        return ParsedFile(FileRecord(path, "skipped", f"a Kustomize base of {f.built_by}"), (), (finding,))
    if render is not None and os.path.basename(path) in KUSTOMIZATION_NAMES:
        # a kustomization podfit cannot give whole without kustomize: what it deploys goes
        # unchecked, as a chart's does without helm, and the same severity says so
        what, command = render
        where = os.path.dirname(path) or "."
        finding = _finding(
            "PF908",
            f"kustomization {where} not built: kustomize is not installed (or PODFIT_KUSTOMIZE=off), and its "
            f"patches, generators or transformers need it, so what it deploys is not checked. Install kustomize (`go install "
            f"sigs.k8s.io/kustomize/kustomize/v5@{KUSTOMIZE_VERSION}`) or set PODFIT_KUSTOMIZE to it; or render "
            f"it yourself: {command}; or leave it out: ignore: ['{where}/**'] in .podfit.yaml",
            path,
            _first_content_line(f.data),
            details={"render": command, "kustomization": where},
        )
        return ParsedFile(FileRecord(path, "skipped", f"{what}: render first: {command}"), (), (finding,))
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
            if data.get("apiVersion") == BUILTIN_PLUGIN_API:
                continue  # a kustomize builtin plugin's config (LabelTransformer, …): not a cluster object
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


def nothing_found(
    paths: Sequence[str], files: Sequence[FileRecord], ignored: int = 0, findings: Sequence[Finding] = ()
) -> str:
    """Why a run found no Kubernetes object to check, naming what was read (the CLI exits 2 with
    it): ``findings`` are the run's own, among them the charts and kustomizations not rendered."""
    unrendered = sorted({f.location.file for f in findings if f.rule == "PF908" and "render" in f.details})
    if not files:
        where = ", ".join(paths)
        if unrendered:
            named = ", ".join(unrendered[:3]) + (f", and {len(unrendered) - 3} more" if len(unrendered) > 3 else "")
            why = f"no Kubernetes object found in {where}: what is there was not rendered (PF908 at {named})"
        else:
            why = f"no Kubernetes object found: no *.yaml, *.yml or *.json file in {where}"
        return why + (f" ({ignored} left out by the path selection; -v lists them)" if ignored else "")

    def account(f: FileRecord) -> str:
        if f.status != "parsed":
            return f"{f.path} ({f.status}: {f.reason})" if f.status == "failed" else f"{f.path} ({f.reason})"
        return f"{f.path} ({plural(f.documents, 'document')} without a kind)"

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
                pool = ProcessPoolExecutor(
                    max_workers=len(groups) - 1,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=become_child,
                    initargs=(os.getpid(),),
                )
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
        findings=per_kustomization(per_chart(tuple(x for p in parsed for x in p.findings))),
    )
