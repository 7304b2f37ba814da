"""Set scalar values in YAML (or JSON) text by splicing, so every byte outside the edit stays as it was.

A round-trip library (ruamel.yaml) re-emits the whole document and may re-indent sequences, fold
long lines or drop redundant quotes; here the text is parsed only to find *where* a value sits
(PyYAML's composer gives every node its start and end offsets) and the new text is spliced in:
- an existing scalar is replaced in place, in its own quoting style;
- a missing key is added as a new line after the mapping's last entry, at the indentation of its
  keys (block style) or before the closing brace (flow style, and JSON);
- missing intermediate mappings (``resources:``, ``limits:``) are written as nested blocks.

The result is parsed again and compared with the expected data (the original with just these
values set); any other difference raises :class:`CannotPreserve`, so a file is never half-edited.
Documents with anchors or aliases are refused: an edit there could change other places too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["CannotPreserve", "Edit", "apply_edits", "find_document", "load_documents"]

PathKey = str | int


class CannotPreserve(Exception):
    """The edit cannot be made without touching more than the value (the file is left alone)."""


@dataclass(frozen=True)
class Edit:
    """Set the scalar at ``path`` (keys and list indexes from the document's root) to ``value``."""

    document: int  # index of the document in the file (0-based)
    path: tuple[PathKey, ...]
    value: str  # a Kubernetes quantity as text (e.g. "2", "1500m", "512Mi")


def _compose(text: str) -> list[yaml.Node]:
    return list(yaml.compose_all(text, Loader=yaml.SafeLoader))


def _has_aliases(text: str) -> bool:
    return any(
        isinstance(e, (yaml.AliasEvent,)) or getattr(e, "anchor", None) for e in yaml.parse(text, yaml.SafeLoader)
    )


def _load(text: str) -> list[Any]:
    return list(yaml.safe_load_all(text))


def load_documents(text: str) -> list[Any]:
    """The file's documents, read once for :func:`find_document` (CannotPreserve if unreadable)."""
    try:
        return _load(text)
    except yaml.YAMLError as e:
        raise CannotPreserve(f"cannot parse: {e}") from None


def find_document(
    docs: Sequence[Any], api_version: str, kind: str, name: str, namespace: str = ""
) -> list[tuple[int, tuple[PathKey, ...]]]:
    """Where objects with this identity sit among the file's documents (:func:`load_documents`):
    (document index, path prefix) pairs; the prefix is ``("items", i)`` for an item of a List
    (``("items", i, "items", j)`` in a List inside it), ``()`` for a whole document."""
    found: list[tuple[int, tuple[PathKey, ...]]] = []

    def matches(doc: Any) -> bool:
        if not isinstance(doc, Mapping):
            return False
        meta = doc.get("metadata") or {}
        if not isinstance(meta, Mapping):
            return False
        ns = meta.get("namespace")
        return (
            doc.get("kind") == kind
            and str(doc.get("apiVersion") or "") == api_version
            and str(meta.get("name") or meta.get("generateName") or "") == name
            and (ns is None or not namespace or str(ns) == namespace)
        )

    from ..loader import flat_items

    for i, doc in enumerate(docs):
        if matches(doc):
            found.append((i, ()))
        elif isinstance(doc, Mapping):
            # the items of a List (Lists inside it too), as the loader opens them
            found.extend((i, tuple(path)) for path, item in flat_items(doc) or () if matches(item))
    return found


def _child(node: yaml.Node, key: PathKey) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int):
        return node.value[key] if 0 <= key < len(node.value) else None
    return None


def _scalar_text(value: str, style: str | None, json_like: bool) -> str:
    if json_like or style == '"':
        return json.dumps(value)
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    # plain: a quantity such as 2, 1500m or 512Mi reads back as itself (an int or a string)
    return value


def _line_end(text: str, index: int) -> int:
    """Offset just past the newline ending the line that holds ``index`` (or the text's end)."""
    nl = text.find("\n", index)
    return len(text) if nl < 0 else nl + 1


def _last_end(node: yaml.Node) -> int:
    """Offset of the end of the node's last character of content (not trailing blank lines)."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.value and not node.flow_style:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    end = node.end_mark.index
    return end


def _nested(keys: Sequence[str], value_text: str, indent: int, step: int, newline: str) -> str:
    lines = []
    for depth, key in enumerate(keys):
        pad = " " * (indent + depth * step)
        lines.append(f"{pad}{key}: {value_text}" if depth == len(keys) - 1 else f"{pad}{key}:")
    return newline.join(lines) + newline


def _flow_nested(keys: Sequence[str], value_text: str, json_like: bool) -> str:
    key = json.dumps(keys[0]) if json_like else keys[0]
    if len(keys) == 1:
        return f"{key}: {value_text}"
    return f"{key}: {{{_flow_nested(keys[1:], value_text, json_like)}}}"


def _indent_step(root: yaml.Node) -> int:
    """The file's indentation step: the first nested block mapping's offset from its parent."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode) and not node.flow_style:
            for k, v in node.value:
                if isinstance(v, yaml.MappingNode) and not v.flow_style and v.value:
                    step = v.value[0][0].start_mark.column - k.start_mark.column
                    if step > 0:
                        return step
                stack.append(v)
    return 2


def _splice_one(text: str, root: yaml.Node, path: tuple[PathKey, ...], value: str, json_like: bool) -> tuple[str, str]:
    """The text with the value set, and the scalar as written (to check what it reads back as)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    node = root
    depth = 0
    while depth < len(path):
        child = _child(node, path[depth])
        if child is None:
            break
        node, depth = child, depth + 1
    if depth == len(path):  # the scalar exists: replace it in place
        if not isinstance(node, yaml.ScalarNode):
            raise CannotPreserve(f"{'.'.join(map(str, path))} is not a single value")
        new = _scalar_text(value, node.style, json_like)
        return text[: node.start_mark.index] + new + text[node.end_mark.index :], new
    rest = path[depth:]
    if not all(isinstance(k, str) for k in rest):
        raise CannotPreserve(f"{'.'.join(map(str, path))}: the list entry does not exist")
    keys = [str(k) for k in rest]
    value_text = _scalar_text(value, None, json_like)
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~") and node.tag.endswith(":null"):
        # `resources:` with no value: write the block under it
        if node.start_mark.index != node.end_mark.index or json_like:
            raise CannotPreserve("an explicit null where a mapping is needed")
        parent_col = _key_column(root, path[:depth])
        step = _indent_step(root)
        block = _nested(keys, value_text, parent_col + step, step, newline)
        at = node.start_mark.index
        return text[:at] + newline + block.rstrip("\r\n") + text[at:], value_text
    if not isinstance(node, yaml.MappingNode):
        raise CannotPreserve(f"{'.'.join(map(str, path[:depth]))} is not a mapping")
    if node.flow_style or json_like:
        close = node.end_mark.index - 1
        if text[close] != "}":
            raise CannotPreserve("cannot find the end of a flow mapping")
        entry = _flow_nested(keys, value_text, json_like)
        sep = ", " if node.value else ""
        if json_like and node.value:
            # keep JSON readable on one line per entry if the mapping spans lines
            last = node.value[-1][1]
            between = text[_last_end(last) : close]
            if "\n" in between:
                indent = " " * node.value[-1][0].start_mark.column
                end = _last_end(last)
                return text[:end] + "," + newline + indent + entry + text[end:], value_text
        return text[:close] + sep + entry + text[close:], value_text
    if not node.value:
        raise CannotPreserve("an empty block mapping")
    column = node.value[0][0].start_mark.column
    at = _line_end(text, max(_last_end(node) - 1, node.start_mark.index))
    block = _nested(keys, value_text, column, _indent_step(root), newline)
    if at == len(text) and not text.endswith("\n"):
        block = newline + block.rstrip("\r\n")
    return text[:at] + block + text[at:], value_text


def _key_column(root: yaml.Node, path: tuple[PathKey, ...]) -> int:
    """Column of the key that holds the node at ``path`` (its parent mapping's key)."""
    node = root
    column = 0
    for key in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    column, node = k.start_mark.column, v
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            node = node.value[key]
    return column


def _set(data: Any, path: tuple[PathKey, ...], value: Any) -> None:
    cur = data
    for key in path[:-1]:
        if isinstance(cur, dict):
            if cur.get(key) is None:
                cur[key] = {}
            cur = cur[key]
        else:
            cur = cur[key]
    cur[path[-1]] = value


def apply_edits(text: str, edits: Sequence[Edit], json_like: bool = False) -> str:
    """The text with every edit made, or :class:`CannotPreserve` (the text is then not to be used)."""
    if not edits:
        return text
    try:
        if not json_like and _has_aliases(text):
            raise CannotPreserve("the file uses YAML anchors or aliases; an edit could change other places")
        before = _load(text)
    except yaml.YAMLError as e:
        raise CannotPreserve(f"cannot parse: {e}") from None
    out = text
    expected = [json.loads(json.dumps(d, default=str)) for d in before]
    for edit in edits:
        docs = _compose(out)
        if edit.document >= len(docs):
            raise CannotPreserve(f"document {edit.document + 1} not found")
        out, written = _splice_one(out, docs[edit.document], edit.path, edit.value, json_like)
        _set(expected[edit.document], edit.path, _reads_as(written))
    try:
        after = [json.loads(json.dumps(d, default=str)) for d in _load(out)]
    except yaml.YAMLError as e:
        raise CannotPreserve(f"the edited text does not parse: {e}") from None
    if after != expected:
        raise CannotPreserve("the edited text would differ from the intended change")
    return out


def _reads_as(value: str) -> Any:
    """What the scalar as written loads as (an int for ``2``, a string for ``1500m`` or ``"2"``)."""
    return json.loads(json.dumps(yaml.safe_load(value), default=str))
