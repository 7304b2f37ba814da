"""Turn a :class:`~podfit.fix.plan.FixPlan` into new file texts (``--write``/``--diff``) or a
Kustomize overlay (``--kustomize``). Pure: texts in, texts out; the command reads and writes."""

from __future__ import annotations

import bisect
import difflib
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..model import ObjectRef
from .plan import Change
from .yamledit import CannotPreserve, DocumentIndex, Edit, edit_documents, load_documents

__all__ = [
    "KUSTOMIZATION_MARKER",
    "PATCH_MARKER",
    "FileResult",
    "ObjectEdit",
    "OverlayError",
    "diff_path",
    "edit_file",
    "json6902",
    "kustomize_overlay",
    "patch_name",
    "unified_diff",
]


@dataclass(frozen=True)
class ObjectEdit:
    """One changed object: as the file held it and as the edit leaves it (``--kustomize`` patches
    the one into the other)."""

    file: str
    ref: ObjectRef
    before: Any
    after: Any
    changes: tuple[Change, ...]


@dataclass(frozen=True)
class FileResult:
    path: str
    new_text: str | None  # None: left alone (see error)
    changes: tuple[Change, ...]
    error: str = ""
    objects: tuple[ObjectEdit, ...] = ()
    splices: tuple[tuple[int, int, str], ...] = ()  # what made new_text from the text: start, end, new text
    documents: Any = None  # new_text's documents as the loader reads them (default limits), or None


BOM = "\ufeff"


def _json_like(path: str, text: str) -> bool:
    """A JSON file, by its name or by its content (a JSON manifest named .yaml stays JSON)."""
    return path.lower().endswith(".json") or text.lstrip(" \t\r\n").startswith(("{", "["))


def _at(doc: Any, path: Sequence[str | int]) -> Any:
    cur = doc
    for key in path:
        cur = cur[key]
    return cur


def edit_file(path: str, text: str, changes: Sequence[Change]) -> FileResult:
    """The file's text with the changes made, or why it is left alone. A byte-order mark and the
    line endings stay as they were; a JSON file (by name or content) stays JSON."""
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    json_like = _json_like(path, body)
    try:
        docs = load_documents(body)
    except CannotPreserve as e:
        return FileResult(path, None, tuple(changes), str(e))
    index = DocumentIndex(docs)
    edits: list[Edit] = []
    places: dict[tuple[str, str, str, str], tuple[int, tuple[str | int, ...]]] = {}
    mine: dict[tuple[str, str, str, str], list[Change]] = {}
    for ch in changes:
        key = (ch.ref.api_version, ch.ref.kind, ch.ref.namespace, ch.ref.name)
        if key not in places:
            where = index.find(ch.ref.api_version, ch.ref.kind, ch.ref.name, ch.ref.namespace)
            if len(where) != 1:
                what = "not found" if not where else f"found {len(where)} times"
                return FileResult(path, None, tuple(changes), f"{ch.ref} {what} in the file")
            places[key] = where[0]
        mine.setdefault(key, []).append(ch)
        doc, prefix = places[key]
        edits.append(Edit(doc, prefix + ch.path, ch.value))
    try:
        new, after, splices, documents = edit_documents(body, edits, json_like, before=docs)
    except CannotPreserve as e:
        return FileResult(path, None, tuple(changes), str(e))
    objects = tuple(
        ObjectEdit(
            path,
            chs[0].ref,
            _at(docs[places[key][0]], places[key][1]),
            _at(after[places[key][0]], places[key][1]),
            tuple(chs),
        )
        for key, chs in mine.items()
    )
    shifted = tuple((a + len(bom), b + len(bom), t) for a, b, t in splices)
    return FileResult(path, bom + new, tuple(changes), objects=objects, splices=shifted, documents=documents)


def diff_path(path: str, cwd: str | None = None) -> str:
    """The file's path as a diff names it: relative to the working directory and normalised
    (``./k8s/a.yaml`` and ``k8s/../k8s/a.yaml`` are ``k8s/a.yaml``); absolute when it lies outside."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, cwd or os.getcwd())
    return absolute if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def _range(start: int, length: int) -> str:
    """A hunk's line range as unified diffs write it (difflib's and GNU diff's form)."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _regions(old: str, splices: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, list[str]]]:
    """The changed line ranges of ``old``: (first line, end line, the new lines), from the
    splices (in order, not overlapping); splices sharing a line make one region."""
    starts = [0] + [m.end() for m in re.finditer("\n", old)]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    # first line, end line, end offset of the old text replaced, new text up to `cut`, cut
    raw: list[list[Any]] = []
    for start, end, text in splices:
        first = line_of(start)
        if start == end and start == starts[first]:  # whole lines inserted before line `first`
            last, a, b = first, start, start
        else:
            last = line_of(max(end - 1, start)) + 1
            a, b = starts[first], starts[last] if last < len(starts) else len(old)
        if raw and a < raw[-1][2]:  # shares a line with the previous region
            prev = raw[-1]
            prev[1], prev[2] = max(prev[1], last), max(prev[2], b)
            prev[3] += old[prev[4] : start] + text
            prev[4] = end
        else:
            raw.append([first, last, b, old[a:start] + text, end])
    return [(first, last, (head + old[cut:b]).splitlines(keepends=True)) for first, last, b, head, cut in raw]


def unified_diff(path: str, old: str, new: str, splices: Sequence[tuple[int, int, str]] | None = None) -> str:
    """A unified diff that ``git apply`` takes (``a/PATH``, ``b/PATH`` relative to the working
    directory) or, for a file outside it, ``patch -p0`` (absolute paths as they are). With the
    splices that made ``new`` from ``old`` the hunks come from them, in time linear in the file
    (difflib's matcher is quadratic on the many like lines of a large manifest)."""
    name = diff_path(path)
    a_name = name if os.path.isabs(name) else f"a/{name}"
    b_name = name if os.path.isabs(name) else f"b/{name}"
    if splices is None:
        lines: Any = difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=a_name, tofile=b_name
        )
    else:
        lines = _hunks(old, splices, a_name, b_name)
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _hunks(old: str, splices: Sequence[tuple[int, int, str]], a_name: str, b_name: str, context: int = 3) -> list[str]:
    """The unified diff's lines for the changed regions, with ``context`` lines around them;
    regions closer than twice that share a hunk (as diff and difflib do)."""
    regions = _regions(old, splices)
    if not regions:
        return []
    old_lines = old.splitlines(keepends=True)
    out = [f"--- {a_name}\n", f"+++ {b_name}\n"]
    groups: list[list[tuple[int, int, list[str]]]] = [[regions[0]]]
    for region in regions[1:]:
        if region[0] - groups[-1][-1][1] > 2 * context:
            groups.append([region])
        else:
            groups[-1].append(region)
    shift = 0  # the new file's line number minus the old one's, before the hunk
    for group in groups:
        lo = max(0, group[0][0] - context)
        hi = min(len(old_lines), group[-1][1] + context)
        body: list[str] = []
        pos, added = lo, 0
        for first, last, new_lines in group:
            body.extend(" " + line for line in old_lines[pos:first])
            body.extend("-" + line for line in old_lines[first:last])
            body.extend("+" + line for line in new_lines)
            added += len(new_lines) - (last - first)
            pos = last
        body.extend(" " + line for line in old_lines[pos:hi])
        out.append(f"@@ -{_range(lo, hi - lo)} +{_range(lo + shift, hi - lo + added)} @@\n")
        out.extend(body)
        shift += added
    return out


# the first line of every file podfit fix writes into a Kustomize overlay: what it may overwrite
KUSTOMIZATION_MARKER = "# Written by podfit fix."
PATCH_MARKER = "# podfit fix:"
_NAME_LIMIT = 100


class OverlayError(Exception):
    """The overlay cannot be written without overwriting or confusing something (exit 2)."""


def patch_name(kind: str, namespace: str, name: str) -> str:
    """The patch file's name for an object: letters, digits, ``.``, ``_`` and ``-`` only, no
    ``..``, no leading dot, at most 100 characters (a longer one ends in a hash of the whole)."""
    raw = "-".join(p for p in ("podfit", kind, namespace, name) if p).lower()
    safe = re.sub(r"[^a-z0-9._-]+", "-", raw)
    safe = re.sub(r"-{2,}", "-", re.sub(r"\.{2,}", "-", safe)).strip(".-") or "podfit"
    if len(safe) > _NAME_LIMIT - len(".yaml"):
        digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
        safe = safe[: _NAME_LIMIT - len(".yaml") - 13].rstrip(".-") + "-" + digest
    return safe + ".yaml"


def _pointer(path: Sequence[str | int]) -> str:
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in path)


_MISSING = object()


def _get(doc: Any, path: Sequence[str | int]) -> Any:
    cur = doc
    for key in path:
        if isinstance(cur, dict) and isinstance(key, str) and key in cur:
            cur = cur[key]
        elif isinstance(cur, list) and isinstance(key, int) and 0 <= key < len(cur):
            cur = cur[key]
        else:
            return _MISSING
    return cur


def _plain(value: Any) -> Any:
    """Plain dicts, lists and scalars (the loader's mappings are a dict subclass a YAML dumper
    does not know)."""
    return json.loads(json.dumps(value, default=str))


def json6902(edit: ObjectEdit) -> list[dict]:
    """JSON6902 operations that turn ``edit.before`` into ``edit.after``, by index: containers and
    init containers keep their order (a strategic merge moves the patched ones to the front,
    kubernetes-sigs/kustomize#5904). Each named list entry on a path (a container, a node pool)
    is first tested by name, so the patch fails rather than change another entry if the base
    changes. A field that exists is
    replaced; a missing one is added with its new subtree, from its first missing mapping."""
    ops: list[dict] = []
    tested: set[tuple[str | int, ...]] = set()
    added: list[tuple[str | int, ...]] = []
    for ch in edit.changes:
        path = tuple(ch.path)
        for i in range(1, len(path)):
            if isinstance(path[i], int):  # a list entry with a name (a container, a node pool)
                at = path[: i + 1] + ("name",)
                name = _get(edit.before, at)
                if at not in tested and isinstance(name, str):
                    tested.add(at)
                    ops.append({"op": "test", "path": _pointer(at), "value": name})
        k = next((k for k in range(len(path)) if _get(edit.before, path[: k + 1]) in (_MISSING, None)), len(path))
        if k == len(path):
            ops.append({"op": "replace", "path": _pointer(path), "value": _plain(_get(edit.after, path))})
            continue
        target = path[: k + 1]
        if any(target[: len(a)] == a for a in added):
            continue  # already added with its whole subtree
        added.append(target)
        ops.append({"op": "add", "path": _pointer(target), "value": _plain(_get(edit.after, target))})
    return ops


def kustomize_overlay(out_dir: str, resources: Sequence[str], edits: Sequence[ObjectEdit]) -> dict[str, str]:
    """Files of a Kustomize overlay in ``out_dir`` (path → text): one JSON6902 patch per changed
    object, by index (see :func:`json6902`), and a kustomization.yaml that takes ``resources``
    (the original files) and applies the patches, each with its target. Two objects whose patch
    files would have one name are refused (:class:`OverlayError`)."""
    files: dict[str, str] = {}
    owners: dict[str, ObjectEdit] = {}
    patches: list[dict] = []
    for edit in sorted(edits, key=lambda e: (e.file, e.ref.kind, e.ref.namespace, e.ref.name, e.ref.api_version)):
        ref = edit.ref
        fname = patch_name(ref.kind, ref.namespace, ref.name)
        if fname in owners:
            raise OverlayError(
                f"{owners[fname].ref} ({owners[fname].file}) and {ref} ({edit.file}) would both be patched by "
                f"{fname}; run fix --kustomize on each separately"
            )
        owners[fname] = edit
        group = edit.changes
        header = PATCH_MARKER + " " + "; ".join(sorted({f"{c.rule} {c.field} = {c.value}" for c in group})) + "\n"
        files[fname] = header + yaml.safe_dump(json6902(edit), sort_keys=False)
        api = ref.api_version
        target = {
            "group": api.rpartition("/")[0],
            "version": api.rpartition("/")[2],
            "kind": ref.kind,
            "name": ref.name,
        }
        if ref.namespace:
            target["namespace"] = ref.namespace
        patches.append({"path": fname, "target": target})
    rel = [os.path.relpath(r, out_dir) for r in resources]
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": rel,
        "patches": patches,
    }
    note = ""
    if any(r.startswith("..") for r in rel):
        note = (
            "# The resources lie outside this directory: build with\n"
            "#   kustomize build --load-restrictor LoadRestrictionsNone " + out_dir + "\n"
        )
    files["kustomization.yaml"] = KUSTOMIZATION_MARKER + "\n" + note + yaml.safe_dump(kustomization, sort_keys=False)
    return {os.path.join(out_dir, k): v for k, v in files.items()}
