"""Turn a :class:`~podfit.fix.plan.FixPlan` into new file texts (``--write``/``--diff``) or a
Kustomize overlay (``--kustomize``). Pure: texts in, texts out; the command reads and writes."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from ..model import WORKLOAD_KINDS
from .plan import Change
from .yamledit import CannotPreserve, Edit, apply_edits, find_document, load_documents

__all__ = ["FileResult", "edit_file", "unified_diff", "kustomize_overlay"]


@dataclass(frozen=True)
class FileResult:
    path: str
    new_text: str | None  # None: left alone (see error)
    changes: tuple[Change, ...]
    error: str = ""


def edit_file(path: str, text: str, changes: Sequence[Change]) -> FileResult:
    """The file's text with the changes made, or why it is left alone."""
    json_like = path.lower().endswith(".json")
    try:
        docs = load_documents(text)
    except CannotPreserve as e:
        return FileResult(path, None, tuple(changes), str(e))
    edits: list[Edit] = []
    for ch in changes:
        where = find_document(docs, ch.ref.api_version, ch.ref.kind, ch.ref.name, ch.ref.namespace)
        if len(where) != 1:
            what = "not found" if not where else f"found {len(where)} times"
            return FileResult(path, None, tuple(changes), f"{ch.ref} {what} in the file")
        doc, prefix = where[0]
        edits.append(Edit(doc, prefix + ch.path, ch.value))
    try:
        return FileResult(path, apply_edits(text, edits, json_like), tuple(changes))
    except CannotPreserve as e:
        return FileResult(path, None, tuple(changes), str(e))


def unified_diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        # git's a/ b/ prefixes for relative paths (`git apply`); absolute paths as they are (`patch -p0`)
        fromfile=path if os.path.isabs(path) else f"a/{path}",
        tofile=path if os.path.isabs(path) else f"b/{path}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _patch(changes: Sequence[Change]) -> dict:
    """A strategic-merge patch for one object: its identity and the changed container resources,
    containers matched by name (Kubernetes' merge key)."""
    first = changes[0]
    meta: dict = {"name": first.ref.name}
    if first.ref.namespace:
        meta["namespace"] = first.ref.namespace
    patch: dict = {"apiVersion": first.ref.api_version, "kind": first.ref.kind, "metadata": meta}
    spec_path = WORKLOAD_KINDS[first.ref.kind] + ("spec",)
    for ch in changes:
        rel = ch.path[len(spec_path) :]
        list_key = str(rel[0])
        cur = patch
        for key in spec_path:
            cur = cur.setdefault(key, {})
        items = cur.setdefault(list_key, [])
        name: str = ch.container
        entry = next((e for e in items if e["name"] == name), None)
        if entry is None:
            entry = {"name": name}
            items.append(entry)
        node: dict = entry
        for step in rel[2:-1]:
            node = node.setdefault(str(step), {})
        node[str(rel[-1])] = ch.value
    return patch


def _json6902(changes: Sequence[Change]) -> list[dict]:
    """JSON6902 operations for an object that is no workload (a cluster manifest's node pool): its
    pool entries are in lists without a merge key Kustomize knows, so each value is set by its path.
    ``add`` replaces a member that exists and creates one that does not."""

    def pointer(path: Sequence[str | int]) -> str:
        return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in path)

    return [{"op": "add", "path": pointer(ch.path), "value": _json_value(ch.value)} for ch in changes]


def _json_value(value: str) -> object:
    """A node count as a number, a class name as a string (as the manifest holds them)."""
    return int(value) if value.isdigit() else value


def kustomize_overlay(
    out_dir: str,
    resources: Sequence[str],
    changes: Sequence[Change],
) -> dict[str, str]:
    """Files of a Kustomize overlay in ``out_dir`` (path → text): one patch per changed object (a
    strategic merge for a workload, JSON6902 operations for a cluster manifest) and a kustomization.yaml that takes ``resources`` (the original files) and applies the patches."""
    grouped: dict[tuple[str, str, str, str, str], list[Change]] = {}
    for ch in changes:
        key = (ch.file, ch.ref.api_version, ch.ref.kind, ch.ref.namespace, ch.ref.name)
        grouped.setdefault(key, []).append(ch)
    files: dict[str, str] = {}
    patches: list[dict] = []
    for key, group in sorted(grouped.items()):
        _file, _api, kind, ns, name = key
        base = "-".join(p for p in ("podfit", kind.lower(), ns, name) if p)
        fname = f"{base}.yaml"
        n = 2
        while fname in files:
            fname, n = f"{base}-{n}.yaml", n + 1
        header = "# podfit fix: " + "; ".join(sorted({f"{c.rule} {c.field} = {c.value}" for c in group})) + "\n"
        if kind in WORKLOAD_KINDS:
            files[fname] = header + yaml.safe_dump(_patch(group), sort_keys=False)
            patches.append({"path": fname})
            continue
        api = group[0].ref.api_version
        target = {"group": api.rpartition("/")[0], "version": api.rpartition("/")[2], "kind": kind, "name": name}
        if ns:
            target["namespace"] = ns
        files[fname] = header + yaml.safe_dump(_json6902(group), sort_keys=False)
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
    files["kustomization.yaml"] = "# Written by podfit fix.\n" + note + yaml.safe_dump(kustomization, sort_keys=False)
    return {os.path.join(out_dir, k): v for k, v in files.items()}
