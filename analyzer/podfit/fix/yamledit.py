"""Set scalar values in YAML (or JSON) text by splicing, so every byte outside the edit stays as it was.

A round-trip library (ruamel.yaml) re-emits the whole document and may re-indent sequences, fold
long lines or drop redundant quotes; here the text is parsed only to find *where* a value sits
(PyYAML's composer gives every node its start and end offsets) and the new text is spliced in:
- an existing scalar is replaced in place, in its own quoting style;
- a missing key is added as a new line after the mapping's last entry, at the indentation of its
  keys (block style) or before the closing brace (flow style, and JSON);
- missing intermediate mappings (``resources:``, ``limits:``) are written as nested blocks, one
  block for all the keys added under one mapping.

All edits of a file are made in one pass: one parse finds every place, one sweep splices, one
parse of the result checks it; the time is linear in the file and the number of edits.
The result must equal the expected data (the original with just these values set); any other
difference raises :class:`CannotPreserve`, so a file is never half-edited. Files with aliases of
anchored nodes are refused: an edit there could change other places too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..yamlio import YamlDocument, YamlLimitError, iter_documents

__all__ = [
    "CannotPreserve",
    "DocumentIndex",
    "Edit",
    "apply_edits",
    "edit_documents",
    "find_document",
    "load_documents",
]

PathKey = str | int


class CannotPreserve(Exception):
    """The edit cannot be made without touching more than the value (the file is left alone)."""


@dataclass(frozen=True)
class Edit:
    """Set the scalar at ``path`` (keys and list indexes from the document's root) to ``value``."""

    document: int  # index of the document in the file (0-based)
    path: tuple[PathKey, ...]
    value: str  # a Kubernetes quantity as text (e.g. "2", "1500m", "512Mi")


# libyaml's parser when PyYAML has it (its marks count characters too, as the splicing needs)
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_NULL, _STR, _SEQ, _MAP = (f"tag:yaml.org,2002:{t}" for t in ("null", "str", "seq", "map"))


class _Composer(_Loader):  # type: ignore[misc,valid-type]
    """Composes only (the nodes' places): of the tags, the splicing needs to know the nulls only,
    so the implicit resolution of every other scalar (a dozen regular expressions each) is skipped."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            return _NULL if implicit[0] and value in _NULLS else _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP


def _compose(text: str) -> list[yaml.Node]:
    return list(yaml.compose_all(text, Loader=_Composer))


def _documents(text: str) -> list[YamlDocument]:
    """The documents, read as the loader reads them (the Rust parser where it reads exactly as
    PyYAML would, PyYAML elsewhere), with the default limits."""
    try:
        return list(iter_documents(text, fast=True))
    except YamlLimitError as e:
        raise CannotPreserve(f"cannot parse: {e}") from None


def _load(text: str) -> list[Any]:
    return [d.data for d in _documents(text)]


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
    (``("items", i, "items", j)`` in a List inside it), ``()`` for a whole document. For many
    look-ups in one file, :class:`DocumentIndex`."""
    return DocumentIndex(docs).find(api_version, kind, name, namespace)


class DocumentIndex:
    """The objects of a file's documents by identity, built in one pass over them."""

    def __init__(self, docs: Sequence[Any]) -> None:
        self._by: dict[tuple[str, str, str], list[tuple[int, tuple[PathKey, ...], Any]]] = {}

        def add(doc: Any, i: int, prefix: tuple[PathKey, ...]) -> None:
            if not isinstance(doc, Mapping):
                return
            meta = doc.get("metadata") or {}
            kind = doc.get("kind")
            if not isinstance(meta, Mapping) or not isinstance(kind, str):
                return
            name = str(meta.get("name") or meta.get("generateName") or "")
            key = (str(doc.get("apiVersion") or ""), kind, name)
            self._by.setdefault(key, []).append((i, prefix, meta.get("namespace")))

        from ..loader import flat_items

        for i, doc in enumerate(docs):
            add(doc, i, ())
            if isinstance(doc, Mapping):  # the items of a List (Lists inside it too), as the loader opens them
                for path, item in flat_items(doc) or ():
                    add(item, i, tuple(path))

    def find(
        self, api_version: str, kind: str, name: str, namespace: str = ""
    ) -> list[tuple[int, tuple[PathKey, ...]]]:
        return [
            (i, prefix)
            for i, prefix, ns in self._by.get((api_version, kind, name), [])
            if ns is None or not namespace or str(ns) == namespace
        ]


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


@dataclass(frozen=True)
class _Splice:
    start: int
    end: int
    text: str
    rank: int  # among insertions at one offset: the deeper block first


def _locate(root: yaml.Node, path: tuple[PathKey, ...]) -> tuple[yaml.Node, int]:
    """The deepest node of ``path`` that exists, and how many keys of the path lead to it."""
    node, depth = root, 0
    while depth < len(path):
        child = _child(node, path[depth])
        if child is None:
            break
        node, depth = child, depth + 1
    return node, depth


def _tree_lines(tree: dict[str, Any], indent: int, step: int) -> list[str]:
    lines: list[str] = []
    for key, sub in tree.items():
        pad = " " * indent
        if isinstance(sub, dict):
            lines.append(f"{pad}{key}:")
            lines.extend(_tree_lines(sub, indent + step, step))
        else:
            lines.append(f"{pad}{key}: {sub}")
    return lines


def _tree_flow(tree: dict[str, Any], json_like: bool) -> list[str]:
    out = []
    for key, sub in tree.items():
        k = json.dumps(key) if json_like else key
        out.append(f"{k}: {{{', '.join(_tree_flow(sub, json_like))}}}" if isinstance(sub, dict) else f"{k}: {sub}")
    return out


def _insertion(
    text: str,
    root: yaml.Node,
    node: yaml.Node,
    at_path: tuple[PathKey, ...],
    tree: dict[str, Any],
    json_like: bool,
    newline: str,
    step: int,
) -> _Splice:
    """One splice adding the keys of ``tree`` (nested dicts of key → scalar text) to ``node``."""
    where = ".".join(map(str, at_path))
    if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
        # `resources:` with no value: write the block under it
        if node.start_mark.index != node.end_mark.index or json_like:
            raise CannotPreserve(f"{where}: an explicit null where a mapping is needed")
        lines = _tree_lines(tree, _key_column(root, at_path) + step, step)
        at = node.start_mark.index
        return _Splice(at, at, newline + newline.join(lines), 0)
    if not isinstance(node, yaml.MappingNode):
        raise CannotPreserve(f"{where} is not a mapping")
    if node.flow_style or json_like:
        close = node.end_mark.index - 1
        if text[close] != "}":
            raise CannotPreserve("cannot find the end of a flow mapping")
        entries = _tree_flow(tree, json_like)
        if json_like and node.value:
            last = node.value[-1][1]
            end = _last_end(last)
            if "\n" in text[end:close]:  # one entry a line, at the column of the mapping's keys
                indent = " " * node.value[-1][0].start_mark.column
                return _Splice(end, end, "".join("," + newline + indent + e for e in entries), 0)
        sep = ", " if node.value else ""
        return _Splice(close, close, sep + ", ".join(entries), 0)
    if not node.value:
        raise CannotPreserve(f"{where}: an empty block mapping")
    column = node.value[0][0].start_mark.column
    at = _line_end(text, max(_last_end(node) - 1, node.start_mark.index))
    block = newline.join(_tree_lines(tree, column, step)) + newline
    if at == len(text) and not text.endswith("\n"):
        block = newline + block[: -len(newline)]
    return _Splice(at, at, block, -column)


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


def _with(data: Any, path: tuple[PathKey, ...], value: Any) -> Any:
    """``data`` with the value at ``path`` set (a missing or null mapping on the way made empty),
    copying only the containers on the path: the original is left as it is."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(data, dict) and isinstance(key, str):
        child = data.get(key)
        new = dict(data)
        new[key] = _with({} if child is None and rest else child, rest, value)
        return new
    if isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
        items = list(data)
        items[key] = _with(data[key], rest, value)
        return items
    raise TypeError(f"no {key!r} in {type(data).__name__}")


def _shared_nodes(roots: Sequence[yaml.Node]) -> bool:
    """Whether a node is reached twice (an alias of an anchored node)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.extend((k, v))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return False


def apply_edits(text: str, edits: Sequence[Edit], json_like: bool = False, before: Sequence[Any] | None = None) -> str:
    """The text with every edit made, or :class:`CannotPreserve` (the text is then not to be used)."""
    return edit_documents(text, edits, json_like, before)[0]


def edit_documents(
    text: str, edits: Sequence[Edit], json_like: bool = False, before: Sequence[Any] | None = None
) -> tuple[str, list[Any], list[tuple[int, int, str]], list[YamlDocument] | None]:
    """The text with every edit made, its documents' data as read back, the splices made (start
    and end offsets in ``text``, the new text; in order) and the documents as the loader reads
    them (None when nothing was edited), or :class:`CannotPreserve`.

    One pass: the text is composed once, every edit's place found in that one tree, the splices
    made in one sweep and the result parsed once to check it (``before``: the documents as
    :func:`load_documents` read them, when the caller has them already)."""
    if not edits:
        return text, list(before) if before is not None else load_documents(text), [], None
    try:
        roots = _compose(text)
        if before is None:
            before = _load(text)
    except yaml.YAMLError as e:
        raise CannotPreserve(f"cannot parse: {e}") from None
    if not json_like and "*" in text and _shared_nodes(roots):  # an alias is written with a "*"
        raise CannotPreserve("the file uses YAML anchors or aliases; an edit could change other places")
    newline = "\r\n" if "\r\n" in text else "\n"
    expected = list(before)
    splices: list[_Splice] = []
    groups: dict[tuple[int, int], tuple[yaml.Node, tuple[PathKey, ...], dict[str, Any]]] = {}
    steps: dict[int, int] = {}
    reads: dict[str, Any] = {}
    for edit in edits:
        if edit.document >= len(roots):
            raise CannotPreserve(f"document {edit.document + 1} not found")
        root = roots[edit.document]
        node, depth = _locate(root, edit.path)
        where = ".".join(map(str, edit.path))
        if depth == len(edit.path):  # the scalar exists: replace it in place
            if not isinstance(node, yaml.ScalarNode):
                raise CannotPreserve(f"{where} is not a single value")
            written = _faithful(edit.value, node.style, json_like, reads)
            splices.append(_Splice(node.start_mark.index, node.end_mark.index, written, -(10**9)))
        else:
            rest = edit.path[depth:]
            if not all(isinstance(k, str) for k in rest):
                raise CannotPreserve(f"{where}: the list entry does not exist")
            written = _faithful(edit.value, None, json_like, reads)
            _, _, tree = groups.setdefault((edit.document, id(node)), (node, edit.path[:depth], {}))
            for key in rest[:-1]:
                sub = tree.setdefault(str(key), {})
                if not isinstance(sub, dict):
                    raise CannotPreserve(f"{where}: two edits of one field")
                tree = sub
            tree[str(rest[-1])] = written
        try:
            expected[edit.document] = _with(expected[edit.document], edit.path, reads[written])
        except (TypeError, KeyError, IndexError):
            raise CannotPreserve(f"{where}: no such field in the document") from None
    for (doc, _), (node, at_path, tree) in groups.items():
        if doc not in steps:
            steps[doc] = _indent_step(roots[doc])
        splices.append(_insertion(text, roots[doc], node, at_path, tree, json_like, newline, steps[doc]))
    pieces: list[str] = []
    pos = 0
    splices.sort(key=lambda sp: (sp.start, sp.rank))
    for sp in splices:
        if sp.start < pos:
            raise CannotPreserve("two edits overlap")
        pieces.append(text[pos : sp.start])
        pieces.append(sp.text)
        pos = sp.end
    pieces.append(text[pos:])
    out = "".join(pieces)
    try:
        documents = _documents(out)
        after = [d.data for d in documents]
    except yaml.YAMLError as e:
        raise CannotPreserve(f"the edited text does not parse: {e}") from None
    if after != expected:
        raise CannotPreserve("the edited text would differ from the intended change")
    return out, after, [(sp.start, sp.end, sp.text) for sp in splices], documents


def _faithful(value: str, style: str | None, json_like: bool, reads: dict[str, Any]) -> str:
    """The scalar's text in the given style if it reads back as the value (a string, or a number
    written as the value is: ``2``, ``1500m``), else double-quoted (a plain ``a: b`` or ``&x y``
    would read as something else). ``reads``: what each text reads as, filled here."""
    for written in (_scalar_text(value, style, json_like), json.dumps(value)):
        if written not in reads:
            reads[written] = _reads_as(written)
        back = reads[written]
        if isinstance(back, (str, int, float)) and not isinstance(back, bool) and str(back) == value:
            return written
    raise CannotPreserve(f"{value!r} does not read back as itself")


def _reads_as(value: str) -> Any:
    """What the scalar as written loads as (an int for ``2``, a string for ``1500m`` or ``"2"``),
    as the loader reads a value (a timestamp stays its text)."""
    try:
        data = _load(f"v: {value}\n")
    except (yaml.YAMLError, CannotPreserve):
        return _UNREADABLE
    return data[0]["v"] if len(data) == 1 and isinstance(data[0], dict) and len(data[0]) == 1 else _UNREADABLE


_UNREADABLE = object()  # what a scalar that does not read back as one value is expected to be: nothing equals it
